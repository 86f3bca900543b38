//! One parse of the configuration for check() and open(): psbench's QoS on iceoryx2's
//! publish-subscribe settings (README.md, "QoS"), every refusal recorded.
use psbench_driver::abi::*;
use psbench_driver::{payload_in_range, Config, Options, Refusals};

/// How long a reliable writer waits for room in a reader's buffer before its write fails.
pub const RELIABLE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// Longest run id: it is in every event socket's path (README.md, "Names").
pub const MAX_RUN_ID: usize = 40;
/// The driver's one option: names the run's files instead of its run id (README.md,
/// "Monitoring (psbench criteria)").
pub const OPTION_KEYS: [&str; 1] = ["namespace"];
/// Largest message: 4 MiB (header included). The publisher's data segment holds
/// (readers x (buffer + 2) + history + 2) samples of this size.
pub const MAX_PAYLOAD: u64 = 4 << 20;
/// Deepest keep_last: a subscriber buffer of this many samples.
pub const MAX_DEPTH: u32 = 1024;
/// iceoryx2's own default subscriber buffer (config.defaults.publish-subscribe
/// .subscriber-max-buffer-size), used when the run sets no depth.
pub const DEFAULT_BUFFER: usize = 2;

#[derive(Clone, Debug)]
pub struct Settings {
    /// true: a full buffer drops its oldest sample (best effort, keep_last:N); false: the
    /// writer waits for room (reliable keep_all or history unset), up to RELIABLE_WAIT.
    pub safe_overflow: bool,
    /// What names the run's shared memory and files (psbench_iox2_<namespace>_...): the
    /// run id, or option namespace=NAME, which a tool can know before the run starts.
    pub namespace: String,
    /// Notify wait and listener: readers sleep on an iceoryx2 event that writers notify.
    pub events: bool,
    /// Subscriber buffer (keep_last N: N).
    pub buffer: usize,
    /// Samples a publisher keeps for late readers (transient_local keep_last N: N).
    pub history: usize,
    pub max_payload: usize,
    pub max_subscribers: usize,
    pub max_publishers: usize,
}

pub fn parse(cfg: &Config, refusals: &Refusals) -> Settings {
    let run_id = cfg
        .need_run_id(refusals, "it names the run's shared memory and files", true)
        .to_string();
    if run_id.len() > MAX_RUN_ID {
        refusals.add(
            "driver",
            format!(
                "run id '{run_id}' is longer than {MAX_RUN_ID} characters: it names iceoryx2's event \
                 sockets, whose paths must fit in 108 bytes"
            ),
        );
    }
    let options = Options::new(cfg, refusals);
    let namespace = options.text("namespace", &run_id);
    if options.has("namespace")
        && (namespace.is_empty()
            || namespace.len() > MAX_RUN_ID
            || !namespace.bytes().all(|b| b.is_ascii_alphanumeric()))
    {
        refusals.add(
            "option:namespace",
            format!(
                "option namespace='{namespace}': use 1 to {MAX_RUN_ID} letters and digits (it names \
                 iceoryx2's shared memory and event sockets)"
            ),
        );
    }
    payload_in_range(cfg, refusals, 0, MAX_PAYLOAD);
    let q = &cfg.qos;
    let reliable = q.reliability == PSB_RELIABLE;
    let depth = (q.history == PSB_KEEP_LAST).then_some(q.history_depth);
    if let Some(n) = depth.filter(|n| *n > MAX_DEPTH) {
        refusals.add(
            "history",
            format!("history keep_last:{n} is deeper than supported: keep_last:1 to keep_last:{MAX_DEPTH}"),
        );
    }
    if q.history == PSB_KEEP_ALL && !reliable {
        refusals.add(
            "history",
            "history keep_all needs reliability reliable: a best-effort subscriber buffer drops its \
             oldest sample when full",
        );
    }
    let transient = q.durability == PSB_TRANSIENT_LOCAL;
    if transient && depth.is_none() {
        refusals.add(
            "durability",
            "durability transient_local keeps the newest N samples for a late reader: give --history keep_last:N",
        );
    }
    if cfg.local_address.is_some() {
        refusals.add(
            "hosts",
            "iceoryx2 is shared memory on one host; a run across hosts is not possible (no network transport)",
        );
    }
    let buffer = depth.map_or(DEFAULT_BUFFER, |n| n.clamp(1, MAX_DEPTH) as usize);
    Settings {
        safe_overflow: !reliable || depth.is_some(),
        namespace,
        events: cfg.notify != PSB_NOTIFY_POLL,
        buffer,
        history: if transient { buffer } else { 0 },
        max_payload: cfg.max_payload.clamp(1, MAX_PAYLOAD) as usize,
        // One more than the run's readers: a late joiner (psbench's --late-join) opens
        // the service while it runs and is not counted in cfg.readers.
        max_subscribers: cfg.readers.max(1) as usize + 1,
        max_publishers: cfg.writers.max(1) as usize,
    }
}
