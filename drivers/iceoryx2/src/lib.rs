//! psbench driver for Eclipse iceoryx2: publish-subscribe over shared memory, no daemon.
//! README.md says what maps to what.
mod endpoints;
mod ports;
mod settings;

use psbench_driver::abi::*;
use psbench_driver::{
    export_driver, parse_or_error, Capabilities, Config, Context, Driver, Error, Listener, Refusals,
};

use endpoints::{Rd, Wr};
use ports::Svc;
use settings::{parse, Settings, MAX_PAYLOAD};

pub struct Iceoryx2;

impl Driver for Iceoryx2 {
    const NAME: &'static str = "iceoryx2";
    const DESCRIPTION: &'static str =
        "Eclipse iceoryx2: zero-copy publish-subscribe in shared memory, no daemon";
    type Context = Ctx;
    fn version() -> String {
        // iceoryx2 stamps it into its shared memory; the crate itself exports none.
        iceoryx2_bb_elementary::package_version::PackageVersion::get().to_string()
    }
    fn capabilities() -> Capabilities {
        Capabilities {
            reliability: PSB_BEST_EFFORT | PSB_RELIABLE,
            durability: PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
            history: PSB_KEEP_LAST | PSB_KEEP_ALL,
            notify: PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
            transports: &["shm"],
            option_keys: &settings::OPTION_KEYS,
            max_payload: MAX_PAYLOAD,
            ..Default::default()
        }
    }
    fn check(cfg: &Config, refusals: &mut Refusals) {
        parse(cfg, refusals);
    }
}

/// One iceoryx2 node per context; its run's files go after it (fields drop in order).
pub struct Ctx {
    settings: Settings,
    node: iceoryx2::prelude::Node<Svc>,
    _files: ports::RunFiles,
}

impl Context for Ctx {
    type Writer = Wr;
    type Reader = Rd;
    fn open(cfg: &Config) -> Result<Self, Error> {
        let settings = parse_or_error(cfg, parse)?;
        Ok(Ctx {
            node: ports::node(&settings.namespace)?,
            _files: ports::RunFiles(settings.namespace.clone()),
            settings,
        })
    }
    fn create_writer(&mut self, topic: &str) -> Result<Wr, Error> {
        Wr::new(&self.node, &self.settings, topic)
    }
    fn create_reader(&mut self, topic: &str, listener: Option<Listener>) -> Result<Rd, Error> {
        Rd::new(&self.node, &self.settings, topic, listener)
    }
}

export_driver!(Iceoryx2);
