//! psbench driver for Eclipse Zenoh (crates.io zenoh), on psbench's Rust SDK
//! (core/rust/psbench-driver): settings.rs judges a run, session.rs opens the session,
//! endpoints.rs holds the publisher and the subscriber.
mod endpoints;
mod session;
mod settings;
mod zenoh_log;

use psbench_driver::abi::{
    PSB_BEST_EFFORT, PSB_KEEP_ALL, PSB_KEEP_LAST, PSB_NOTIFY_LISTENER, PSB_NOTIFY_POLL,
    PSB_NOTIFY_WAIT, PSB_RELIABLE, PSB_TRANSIENT_LOCAL, PSB_VOLATILE,
};
use psbench_driver::{parse_or_error, Capabilities, Config, Error, Listener, Refusals};
use settings::{Input, Notify, Settings};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use zenoh::Wait;

/// Largest message: zenoh fragments what exceeds a batch; 16 MiB keeps a full FIFO of a
/// stalled reader (256 samples) within a few GiB.
const MAX_PAYLOAD: u64 = 16 << 20;

fn input(cfg: &Config) -> Input {
    Input {
        run_id: cfg.run_id.clone(),
        transport: Some(cfg.transport.clone()),
        notify: match cfg.notify {
            PSB_NOTIFY_LISTENER => Some(Notify::Listener),
            PSB_NOTIFY_POLL => Some(Notify::Poll),
            _ => Some(Notify::Wait),
        },
        reliable: cfg.qos.reliability == PSB_RELIABLE,
        transient_local: cfg.qos.durability == PSB_TRANSIENT_LOCAL,
        keep_last: (cfg.qos.history == PSB_KEEP_LAST).then_some(cfg.qos.history_depth),
        options: cfg.options.clone(),
        local_address: cfg.local_address.clone(),
        peer_addresses: cfg.peer_addresses.clone(),
    }
}

fn parse(cfg: &Config, refusals: &Refusals) -> Settings {
    let (s, refused) = settings::parse(&input(cfg));
    for (setting, message) in refused {
        refusals.add(setting, message);
    }
    s
}

pub struct Zenoh;

impl psbench_driver::Driver for Zenoh {
    const NAME: &'static str = "zenoh";
    const DESCRIPTION: &'static str = "Eclipse Zenoh (crates.io zenoh): peers over TCP on the run's own \
        endpoints (peer, default), the same with zenoh's shared-memory transport (shm), or clients of a \
        zenohd router (client)";
    type Context = Context;

    fn version() -> String {
        // "v1.10.2-<commit>"
        let v = zenoh::GIT_VERSION.trim_start_matches('v');
        format!("zenoh {}", v.split('-').next().unwrap_or(v))
    }

    fn capabilities() -> Capabilities {
        Capabilities {
            reliability: PSB_BEST_EFFORT | PSB_RELIABLE,
            durability: PSB_VOLATILE,
            history: PSB_KEEP_LAST | PSB_KEEP_ALL,
            notify: PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
            transports: &settings::TRANSPORTS,
            option_keys: &settings::OPTION_KEYS,
            max_payload: MAX_PAYLOAD,
            readers_per_topic: 0,
            writers_per_topic: 0,
            crosses_hosts: true,
            host_transports: &["peer", "client"],
        }
    }

    fn check(cfg: &Config, refusals: &mut Refusals) {
        parse(cfg, refusals);
    }
}

pub struct Context {
    settings: Settings,
    session: zenoh::Session,
    router_lost: Arc<AtomicBool>,
    transports: Arc<session::Transports>,
}

impl Drop for Context {
    fn drop(&mut self) {
        let _ = self.session.close().wait();
    }
}

impl psbench_driver::Context for Context {
    type Writer = Writer;
    type Reader = Reader;

    fn open(cfg: &Config) -> Result<Self, Error> {
        let settings = parse_or_error(cfg, parse)?;
        let opened = session::open(&settings).map_err(Error::new)?;
        Ok(Context {
            settings,
            session: opened.session,
            router_lost: opened.router_lost,
            transports: opened.transports,
        })
    }

    fn create_writer(&mut self, topic: &str) -> Result<Writer, Error> {
        endpoints::Writer::new(
            &self.session,
            &self.settings,
            topic,
            self.router_lost.clone(),
        )
        .map(|w| Writer(w, self.transports.clone()))
        .map_err(Error::new)
    }

    fn create_reader(&mut self, topic: &str, listener: Option<Listener>) -> Result<Reader, Error> {
        let on_data =
            listener.map(|l| Box::new(move |data: &[u8]| l.deliver(data)) as endpoints::OnData);
        endpoints::Reader::new(
            &self.session,
            &self.settings,
            topic,
            self.router_lost.clone(),
            on_data,
        )
        .map(Reader)
        .map_err(Error::new)
    }
}

/// The publisher, and the context's transport counts (reported as the writer's counters).
pub struct Writer(endpoints::Writer, Arc<session::Transports>);

impl psbench_driver::Writer for Writer {
    fn write(&mut self, data: &[u8]) -> Result<(), Error> {
        self.0.write(data).map_err(Error::new)
    }

    fn matched(&self) -> Option<u32> {
        Some(self.0.matched())
    }

    fn counters(&self, put: &mut dyn FnMut(&str, u64)) {
        put("transports_opened", self.1.opened.load(Ordering::Relaxed));
        put("shm_transports_opened", self.1.shm.load(Ordering::Relaxed));
    }
}

pub struct Reader(endpoints::Reader);

impl psbench_driver::Reader for Reader {
    fn take(&mut self, timeout_ns: i64) -> Result<Option<&[u8]>, Error> {
        self.0.take(timeout_ns).map_err(Error::new)
    }

    fn matched(&self) -> Option<u32> {
        Some(self.0.matched())
    }
}

impl psbench_driver::Release for Reader {
    fn release(&mut self) {
        self.0.release();
    }
}

psbench_driver::export_driver!(Zenoh);
