//! What a driver can do (psb_capabilities in Rust types), and the refusals of what they
//! leave out: the Rust side of the capability rule of psbench/sdk_refusals.hpp.

use crate::abi::*;
use crate::config::Config;
use crate::refusals::{or_list, Refusals};

/// The node's message header, the first bytes of every message (max_payload includes it).
pub const HEADER_SIZE: usize = 32;

/// What a driver can do (psb_capabilities), in Rust types; the SDK builds the C table.
/// Default: best effort, volatile, no explicit history, notify wait, no transport, no
/// options, 64 KiB, no reader or writer limit, one host.
#[derive(Clone, Debug)]
pub struct Capabilities {
    pub reliability: u32,
    pub durability: u32,
    /// What may be asked for explicitly.
    pub history: u32,
    pub notify: u32,
    /// The first is what "default" means (set at least one).
    pub transports: &'static [&'static str],
    /// Option keys the driver understands; the node refuses any other.
    pub option_keys: &'static [&'static str],
    /// Largest message in bytes, header included.
    pub max_payload: u64,
    /// 0: no limit.
    pub readers_per_topic: u32,
    pub writers_per_topic: u32,
    /// Some transport crosses hosts.
    pub crosses_hosts: bool,
    /// With crosses_hosts: the transports that do (empty: all); the SDK refuses the
    /// others across hosts (setting "hosts").
    pub host_transports: &'static [&'static str],
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            reliability: PSB_BEST_EFFORT,
            durability: PSB_VOLATILE,
            history: 0,
            notify: PSB_NOTIFY_WAIT,
            transports: &[],
            option_keys: &[],
            max_payload: 64 * 1024,
            readers_per_topic: 0,
            writers_per_topic: 0,
            crosses_hosts: false,
            host_transports: &[],
        }
    }
}

/// Whether cfg.max_payload is in [min, max]; if not, the refusal (setting "size")
/// "max_payload N is not supported; supported: MIN to MAX bytes (header included)".
pub fn payload_in_range(cfg: &Config, refusals: &Refusals, min: u64, max: u64) -> bool {
    if (min..=max).contains(&cfg.max_payload) {
        return true;
    }
    refusals.add(
        "size",
        format!(
            "max_payload {} is not supported; supported: {min} to {max} bytes (header included)",
            cfg.max_payload
        ),
    );
    false
}

/// Refuses what caps leave out, each setting only when nothing refused it yet (the SDK runs
/// it after every check(), whose reasons say why): a QoS or notify outside its set,
/// keep_last with a depth of 0, a transport not in caps.transports ("default" passes), a
/// run across hosts without crosses_hosts or on a transport not in host_transports.
pub fn refuse_outside_caps(caps: &Capabilities, cfg: &Config, refusals: &Refusals) {
    let in_set = |setting: &str, wanted: u32, allowed: u32, names: &[(u32, &str)]| {
        let mut name = wanted.to_string();
        let mut known = false;
        let mut supported = Vec::new();
        for (bit, n) in names {
            if *bit == wanted {
                name = n.to_string();
                known = true;
            }
            if allowed & bit != 0 {
                supported.push(*n);
            }
        }
        if (known && allowed & wanted != 0) || refusals.has(setting) {
            return;
        }
        let supported = if supported.is_empty() {
            "(none)".to_string()
        } else {
            supported.join("|")
        };
        refusals.add(
            setting,
            format!("{setting} '{name}' is not supported; this driver supports {supported}"),
        );
    };
    let q = &cfg.qos;
    in_set(
        "reliability",
        q.reliability,
        caps.reliability,
        &[(PSB_BEST_EFFORT, "best_effort"), (PSB_RELIABLE, "reliable")],
    );
    in_set(
        "durability",
        q.durability,
        caps.durability,
        &[
            (PSB_VOLATILE, "volatile"),
            (PSB_TRANSIENT_LOCAL, "transient_local"),
            (PSB_PERSISTENT, "persistent"),
        ],
    );
    if q.history != 0 {
        in_set(
            "history",
            q.history,
            caps.history,
            &[(PSB_KEEP_LAST, "keep_last"), (PSB_KEEP_ALL, "keep_all")],
        );
    }
    if q.history == PSB_KEEP_LAST && q.history_depth == 0 && !refusals.has("history") {
        refusals.add(
            "history",
            "history keep_last needs a depth of at least 1 (keep_last:N)",
        );
    }
    in_set(
        "notify",
        cfg.notify,
        caps.notify,
        &[
            (PSB_NOTIFY_LISTENER, "listener"),
            (PSB_NOTIFY_WAIT, "wait"),
            (PSB_NOTIFY_POLL, "poll"),
        ],
    );
    let default = cfg.transport == "default";
    if !default && !caps.transports.contains(&cfg.transport.as_str()) && !refusals.has("transport")
    {
        let supported = if caps.transports.is_empty() {
            "(none)".to_string()
        } else {
            caps.transports.join("|")
        };
        refusals.add(
            "transport",
            format!(
                "transport '{}' is not supported; this driver supports {supported}",
                cfg.transport
            ),
        );
    }
    if cfg.local_address.is_some() && !caps.crosses_hosts && !refusals.has("hosts") {
        refusals.add(
            "hosts",
            "a run across hosts is not supported; this driver runs on one host",
        );
    }
    if cfg.local_address.is_some()
        && caps.crosses_hosts
        && !caps.host_transports.is_empty()
        && !refusals.has("hosts")
    {
        let chosen = if default {
            caps.transports.first().copied().unwrap_or("")
        } else {
            cfg.transport.as_str()
        };
        if caps.transports.contains(&chosen) && !caps.host_transports.contains(&chosen) {
            refusals.add(
                "hosts",
                format!(
                    "transport {chosen} does not cross hosts; across hosts use --transport {}",
                    or_list(caps.host_transports)
                ),
            );
        }
    }
}
