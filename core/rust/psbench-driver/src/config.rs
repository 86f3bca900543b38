//! Config: an owned, safe copy of a psb_config, made by the SDK for check() and open()
//! (never on the timed path), so a Context may keep it.

use std::ffi::{c_char, CStr};
use std::net::Ipv4Addr;

use crate::abi::{psb_config, psb_qos, PSB_NOTIFY_WAIT};
use crate::refusals::{Refusal, Refusals};

/// psb_qos: one bit of each family (abi::PSB_*); history 0 = not set (the driver's default).
pub type Qos = psb_qos;

#[derive(Clone, Debug)]
pub struct Config {
    /// [A-Za-z0-9]+, unique per run: derive shared-memory names, ports and ids from it.
    pub run_id: String,
    /// One of the capabilities' transports, or "default" (the first) from a direct caller.
    pub transport: String,
    /// One PSB_NOTIFY_* bit.
    pub notify: u32,
    pub qos: Qos,
    /// The run's largest message, header included.
    pub max_payload: u64,
    /// The user's --option KEY=VALUE pairs, as given (read them with Options).
    pub options: Vec<(String, String)>,
    /// The node will use loan()/write_loan() (--loan).
    pub use_loan: bool,
    /// Every endpoint of the run lives in this process (roles as threads).
    pub intra_process: bool,
    /// This node's IPv4 address on the run's network; None: every role on this host.
    pub local_address: Option<String>,
    /// The hosts of the processes this one exchanges messages with (empty on one host).
    pub peer_addresses: Vec<String>,
    /// Readers and writers per topic in all (--subscribers, --publishers).
    pub readers: u32,
    pub writers: u32,
    /// Every topic of the run in one order every process is given alike; empty when the
    /// run did not list them.
    pub run_topics: Vec<String>,
    /// What the SDK itself refuses in the config (a malformed run_topics or address),
    /// added to every check() and open().
    pub(crate) problems: Vec<Refusal>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            run_id: String::new(),
            transport: "default".into(),
            notify: PSB_NOTIFY_WAIT,
            qos: Qos::default(),
            max_payload: 0,
            options: Vec::new(),
            use_loan: false,
            intra_process: false,
            local_address: None,
            peer_addresses: Vec::new(),
            readers: 1,
            writers: 1,
            run_topics: Vec::new(),
            problems: Vec::new(),
        }
    }
}

unsafe fn text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        Some(CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

unsafe fn texts(list: *const *const c_char) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while !list.is_null() && !(*list.add(i)).is_null() && i < 1 << 16 {
        out.push(text(*list.add(i)).unwrap_or_default());
        i += 1;
    }
    out
}

impl Config {
    /// Copies a psb_config.
    ///
    /// # Safety
    /// `raw` must be a valid psb_config as driver.h describes it.
    pub unsafe fn from_raw(raw: &psb_config) -> Config {
        let mut cfg = Config {
            run_id: text(raw.run_id).unwrap_or_default(),
            transport: text(raw.transport).unwrap_or_else(|| "default".into()),
            notify: raw.notify,
            qos: raw.qos,
            max_payload: raw.max_payload,
            options: Vec::new(),
            use_loan: raw.use_loan != 0,
            intra_process: raw.intra_process != 0,
            local_address: text(raw.local_address),
            peer_addresses: texts(raw.peer_addresses),
            readers: raw.readers,
            writers: raw.writers,
            run_topics: Vec::new(),
            problems: Vec::new(),
        };
        for i in 0..if raw.options.is_null() {
            0
        } else {
            raw.option_count
        } {
            let o = &*raw.options.add(i);
            cfg.options.push((
                text(o.key).unwrap_or_else(|| "(null)".into()),
                text(o.value).unwrap_or_default(),
            ));
        }
        // A hole or a topic twice would give two topics one index (the node lets neither
        // through; a direct caller is told).
        let count = if raw.run_topics.is_null() {
            0
        } else {
            raw.run_topic_count as usize
        };
        for i in 0..count {
            let topic = text(*raw.run_topics.add(i));
            let bad = match &topic {
                None => Some("NULL"),
                Some(t) if t.is_empty() => Some("empty"),
                Some(t) if cfg.run_topics.contains(t) => Some("listed twice"),
                _ => None,
            };
            if let Some(bad) = bad {
                cfg.problems.push(Refusal {
                    setting: "driver".into(),
                    reason: format!(
                        "run_topics[{i}] is {bad}: every topic of the run once, by name"
                    ),
                });
                cfg.run_topics.clear();
                break;
            }
            cfg.run_topics.push(topic.unwrap_or_default());
        }
        // They go into sockets and configuration files: only dotted IPv4.
        if let Some(local) = &cfg.local_address {
            let bad = std::iter::once(local)
                .chain(cfg.peer_addresses.iter())
                .find(|a| a.parse::<Ipv4Addr>().is_err());
            if let Some(bad) = bad {
                cfg.problems.push(Refusal {
                    setting: "hosts".into(),
                    reason: format!(
                        "local_address and peer_addresses must be IPv4 addresses, e.g. 198.18.0.2 ('{bad}' is not)"
                    ),
                });
            }
        }
        cfg
    }

    /// topic's place in run_topics: the same in every process of the run and no other
    /// topic's; None when the run did not list its topics (derive from the name then).
    pub fn topic_index(&self, topic: &str) -> Option<usize> {
        self.run_topics.iter().position(|t| t == topic)
    }

    /// The run id; when it is empty, also the refusal (setting "driver") "the run id is
    /// empty; WHY". alnum: one outside [A-Za-z0-9]+ is refused too.
    pub fn need_run_id(&self, refusals: &Refusals, why: &str, alnum: bool) -> &str {
        if self.run_id.is_empty() {
            refusals.add("driver", format!("the run id is empty; {why}"));
        } else if alnum && !self.run_id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            refusals.add(
                "driver",
                format!("run_id '{}' must match [A-Za-z0-9]+", self.run_id),
            );
        }
        &self.run_id
    }

    /// This host's address for the run's sockets: local_address, or 127.0.0.1 on one host.
    pub fn address(&self) -> &str {
        self.local_address.as_deref().unwrap_or("127.0.0.1")
    }

    /// The index of self.transport in names (the capabilities' transports): 0 for
    /// "default" and for one not there (which refuse_outside_caps refuses).
    pub fn transport_index(&self, names: &[&str]) -> usize {
        names.iter().position(|n| *n == self.transport).unwrap_or(0)
    }
}
