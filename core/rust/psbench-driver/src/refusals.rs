//! Refusing and reading options: the Rust side of psbench/sdk_refusals.hpp. A driver parses
//! its configuration once, in one function both check() and open() call, recording every
//! refusal instead of stopping at the first:
//!
//! ```ignore
//! fn parse(cfg: &Config, refusals: &Refusals) -> Settings {
//!     let options = Options::new(cfg, refusals);
//!     let depth = options.number("depth", 16, 1, 1024, None); // malformed: "option:depth"
//!     if cfg.qos.durability != PSB_VOLATILE {
//!         refusals.add("durability", "durability must be volatile: nothing is kept");
//!     }
//!     Settings { depth }                                        // complete, with fallbacks
//! }
//! fn check(cfg: &Config, refusals: &mut Refusals) { parse(cfg, refusals); }
//! fn open(cfg: &Config) -> Result<Self, Error> { let s = parse_or_error(cfg, parse)?; ... }
//! ```

use std::cell::{Ref, RefCell};

use crate::abi::*;
use crate::config::Config;
use crate::error::Error;

/// The node's message header, the first bytes of every message (max_payload includes it).
pub const HEADER_SIZE: usize = 32;

/// One refused setting, in the node's vocabulary ("reliability", "transport",
/// "option:KEY", "driver", ...; psb_refuse in driver.h) and why, without the driver's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub setting: String,
    pub reason: String,
}

/// Every refusal of one configuration, in the order found. add() takes &self, so that an
/// Options view and the driver's own rules can record into one.
#[derive(Default, Debug)]
pub struct Refusals {
    found: RefCell<Vec<Refusal>>,
}

impl Refusals {
    pub fn new() -> Self {
        Self::default()
    }
    /// Records that `setting` is refused, and why.
    pub fn add(&self, setting: impl Into<String>, reason: impl Into<String>) {
        self.found.borrow_mut().push(Refusal {
            setting: setting.into(),
            reason: reason.into(),
        });
    }
    pub fn is_empty(&self) -> bool {
        self.found.borrow().is_empty()
    }
    pub fn len(&self) -> usize {
        self.found.borrow().len()
    }
    /// Whether `setting` is refused already.
    pub fn has(&self, setting: &str) -> bool {
        self.found.borrow().iter().any(|r| r.setting == setting)
    }
    pub fn all(&self) -> Ref<'_, Vec<Refusal>> {
        self.found.borrow()
    }
    /// For open(): an Error with every reason, "; " between them, when any was found.
    pub fn raise(&self) -> Result<(), Error> {
        let found = self.found.borrow();
        if found.is_empty() {
            return Ok(());
        }
        let all: Vec<&str> = found.iter().map(|r| r.reason.as_str()).collect();
        Err(Error::new(all.join("; ")))
    }
}

/// Runs parse(cfg, refusals) and returns what it returns, or an Error naming every refusal
/// it recorded: the open() side of a parse that check() runs to collect them.
pub fn parse_or_error<T>(
    cfg: &Config,
    parse: impl FnOnce(&Config, &Refusals) -> T,
) -> Result<T, Error> {
    let refusals = Refusals::new();
    let result = parse(cfg, &refusals);
    refusals.raise()?;
    Ok(result)
}

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

fn or_list(names: &[&str]) -> String {
    let mut text = String::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            text += if i + 1 == names.len() { " or " } else { ", " };
        }
        text += n;
    }
    text
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
    if cfg.local_address.is_some() && !caps.crosses_hosts && !refusals.has("hosts") {
        refusals.add(
            "hosts",
            "a run across hosts is not supported; this driver runs on one host",
        );
    }
    let default = cfg.transport == "default";
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
    if default || caps.transports.contains(&cfg.transport.as_str()) || refusals.has("transport") {
        return;
    }
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

/// A view over cfg.options. A malformed or missing value is recorded in the Refusals given,
/// as setting "option:KEY", and the lookup returns its fallback, so parsing goes on and
/// finds every other problem too.
pub struct Options<'a> {
    cfg: &'a Config,
    refusals: &'a Refusals,
}

impl<'a> Options<'a> {
    pub fn new(cfg: &'a Config, refusals: &'a Refusals) -> Self {
        Options { cfg, refusals }
    }

    fn refuse(&self, key: &str, reason: String) {
        self.refusals.add(format!("option:{key}"), reason);
    }

    /// The value given for key (the first, if repeated), or None.
    pub fn find(&self, key: &str) -> Option<&'a str> {
        self.cfg
            .options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    pub fn has(&self, key: &str) -> bool {
        self.find(key).is_some()
    }
    pub fn text(&self, key: &str, fallback: &str) -> String {
        self.find(key).unwrap_or(fallback).to_string()
    }

    /// Refuses each option whose key is not in keys: "unknown option 'KEY'; valid options:
    /// A, B", or "...; this driver takes no options".
    pub fn refuse_unknown(&self, keys: &[&str]) {
        let valid = if keys.is_empty() {
            "this driver takes no options".to_string()
        } else {
            format!("valid options: {}", keys.join(", "))
        };
        for (key, _) in &self.cfg.options {
            if !keys.contains(&key.as_str()) {
                self.refuse(key, format!("unknown option '{key}'; {valid}"));
            }
        }
    }

    /// Whether key was given where it does not apply (not_here): then also the refusal
    /// "option KEY REASON", e.g. reason "applies to transport tcp only".
    pub fn given_but(&self, key: &str, not_here: bool, reason: &str) -> bool {
        if !not_here || !self.has(key) {
            return false;
        }
        self.refuse(key, format!("option {key} {reason}"));
        true
    }

    /// The value, or None with the refusal "option KEY[=FORM] is missing[; ADVICE]".
    pub fn required(&self, key: &str, form: &str, advice: &str) -> Option<&'a str> {
        if let Some(v) = self.find(key) {
            return Some(v);
        }
        let mut m = format!("option {key}");
        if !form.is_empty() {
            m += &format!("={form}");
        }
        m += " is missing";
        if !advice.is_empty() {
            m += &format!("; {advice}");
        }
        self.refuse(key, m);
        None
    }

    /// true/1 or false/0 (strict: true or false only); anything else refused,
    /// "option KEY='VALUE': use true or false" (strict: "use KEY=true or KEY=false").
    pub fn flag(&self, key: &str, fallback: bool, strict: bool) -> bool {
        let Some(v) = self.find(key) else {
            return fallback;
        };
        match v {
            "true" => return true,
            "false" => return false,
            "1" if !strict => return true,
            "0" if !strict => return false,
            _ => {}
        }
        let use_ = if strict {
            format!("{key}=true or {key}=false")
        } else {
            "true or false".into()
        };
        self.refuse(key, format!("option {key}='{v}': use {use_}"));
        fallback
    }

    /// A decimal whole number in [min, max]; anything else refused, "option KEY='VALUE':
    /// use a whole number from MIN to MAX", or "...: use HINT" with a hint.
    pub fn number(&self, key: &str, fallback: i64, min: i64, max: i64, hint: Option<&str>) -> i64 {
        let Some(v) = self.find(key) else {
            return fallback;
        };
        let b = v.as_bytes();
        let starts_well = b.first().is_some_and(u8::is_ascii_digit)
            || (b.first() == Some(&b'-') && b.get(1).is_some_and(u8::is_ascii_digit));
        if starts_well {
            if let Ok(n) = v.parse::<i64>() {
                if (min..=max).contains(&n) {
                    return n;
                }
            }
        }
        let use_ = hint
            .map(str::to_string)
            .unwrap_or_else(|| format!("a whole number from {min} to {max}"));
        self.refuse(key, format!("option {key}='{v}': use {use_}"));
        fallback
    }

    /// Which of names the value is (its index), or fallback when the key was not given;
    /// anything else refused, "option KEY='VALUE' is not known; use KEY=A (default), KEY=B
    /// or KEY=C".
    pub fn choice(&self, key: &str, names: &[&str], fallback: usize) -> usize {
        let Some(v) = self.find(key) else {
            return fallback;
        };
        if let Some(i) = names.iter().position(|n| *n == v) {
            return i;
        }
        let listed: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{key}={n}{}", if i == fallback { " (default)" } else { "" }))
            .collect();
        let refs: Vec<&str> = listed.iter().map(String::as_str).collect();
        self.refuse(
            key,
            format!("option {key}='{v}' is not known; use {}", or_list(&refs)),
        );
        fallback
    }
}
