//! iceoryx2's node, services and ports for one run: every name carries the run id, so
//! runs never cross-talk and psbench can remove what a killed node leaves.
use iceoryx2::port::listener::Listener as EventListener;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::port::{BackpressureAction, BackpressureInfo};
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::event::PortFactory as EventService;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory as PubSubService;
use psbench_driver::{err, Error};

use crate::settings::{Settings, RELIABLE_WAIT};

pub type Svc = ipc::Service;
pub type Topic = PubSubService<Svc, [u8], ()>;
pub type Wake = EventService<Svc>;
pub type Pub = Publisher<Svc, [u8], ()>;
pub type Sub = Subscriber<Svc, [u8], ()>;
pub type Waker = Notifier<Svc>;
pub type Sleeper = EventListener<Svc>;

/// Everything of a run is named "psbench_iox2_<run id>_..." (or the run's option
/// namespace instead of its run id): its shared memory in /dev/shm
/// (iceoryx2's prefix), and in the temporary directory (iceoryx2's root path) its event
/// sockets and its node and service directories. No directory of its own for the run: a
/// socket's path (root, prefix, a 39-digit id, ".event") must fit in 108 bytes.
pub fn run_stem(run_id: &str) -> String {
    format!("psbench_iox2_{run_id}")
}

fn semantic<T: SemanticString<N>, const N: usize>(what: &str, text: &str) -> Result<T, Error> {
    T::new(text.as_bytes()).map_err(|e| err!("{what} '{text}' is not valid for iceoryx2 ({e:?})"))
}

/// A node of its own configuration: this run's root directory and shm prefix, no signal
/// handlers (the node's own handle SIGINT and SIGTERM), iceoryx2's log at warnings.
pub fn node(run_id: &str) -> Result<Node<Svc>, Error> {
    set_log_level(LogLevel::Warn);
    let (mut config, stem) = (Config::default(), run_stem(run_id));
    config.global.prefix = semantic("shm prefix", &format!("{stem}_"))?;
    let root = format!("{}/", std::env::temp_dir().display());
    config.global.set_root_path(&semantic("root path", &root)?);
    config.global.node.directory = semantic("node directory", &format!("{stem}_nodes"))?;
    config.global.service.directory = semantic("service directory", &format!("{stem}_services"))?;
    NodeBuilder::new()
        .config(&config)
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<Svc>()
        .map_err(|e| err!("cannot create an iceoryx2 node under {root}: {e:?}"))
}

fn service_name(topic: &str) -> Result<ServiceName, Error> {
    ServiceName::new(topic).map_err(|e| err!("topic '{topic}' is no iceoryx2 service name ({e:?})"))
}

/// The topic's publish-subscribe service, created by whichever endpoint comes first with
/// the run's settings (every process of the run has the same, so each opens it alike).
pub fn topic(node: &Node<Svc>, s: &Settings, topic: &str) -> Result<Topic, Error> {
    node.service_builder(&service_name(topic)?)
        .publish_subscribe::<[u8]>()
        .enable_safe_overflow(s.safe_overflow)
        .subscriber_max_buffer_size(s.buffer)
        .history_size(s.history)
        .max_subscribers(s.max_subscribers)
        .max_publishers(s.max_publishers)
        // A node per process: iceoryx2's default (20) stops a fan-out of 50 subscribers.
        .max_nodes(s.max_subscribers + s.max_publishers)
        .open_or_create()
        .map_err(|e| err!("cannot open or create service '{topic}': {e:?}"))
}

/// The topic's event service: writers notify it after each sample, wait and listener
/// readers sleep on it.
pub fn wake(node: &Node<Svc>, s: &Settings, topic: &str) -> Result<Wake, Error> {
    node.service_builder(&service_name(topic)?)
        .event()
        .max_listeners(s.max_subscribers)
        .max_notifiers(s.max_publishers)
        .max_nodes(s.max_subscribers + s.max_publishers)
        .open_or_create()
        .map_err(|e| err!("cannot open or create event service '{topic}': {e:?}"))
}

/// A publisher of slices up to the run's largest message. Safe overflow: a full subscriber
/// buffer drops its oldest sample, the publisher never waits. Otherwise it waits for room
/// (RetryUntilDelivered), but not for ever: after RELIABLE_WAIT the write fails.
pub fn publisher(service: &Topic, s: &Settings) -> Result<Pub, Error> {
    let builder = service
        .publisher_builder()
        .initial_max_slice_len(s.max_payload)
        .allocation_strategy(AllocationStrategy::Static);
    let builder = if s.safe_overflow {
        builder.backpressure_strategy(BackpressureStrategy::DiscardData)
    } else {
        builder
            .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
            .set_backpressure_handler(|info: &BackpressureInfo| {
                if info.elapsed_time < RELIABLE_WAIT {
                    BackpressureAction::Retry
                } else {
                    BackpressureAction::DiscardDataAndFail
                }
            })
    };
    made("a publisher", builder.create())
}

pub fn subscriber(service: &Topic, s: &Settings) -> Result<Sub, Error> {
    let builder = service.subscriber_builder().buffer_size(s.buffer);
    made("a subscriber", builder.history_request(s.history).create())
}

pub fn notifier(service: &Wake) -> Result<Waker, Error> {
    made("a notifier", service.notifier_builder().create())
}

pub fn listener(service: &Wake) -> Result<Sleeper, Error> {
    made("a listener", service.listener_builder().create())
}

/// A port iceoryx2 made, or why not: "cannot create WHAT: ...".
fn made<T>(what: &str, port: Result<T, impl std::fmt::Debug>) -> Result<T, Error> {
    port.map_err(|e| err!("cannot create {what}: {e:?}"))
}

/// The run's files of a context (run id or namespace): dropped after its node, once no
/// node of the run is left on this host (its node directory empty), it removes the run's
/// global management segment, which iceoryx2 keeps for later nodes, and its empty
/// directories (iceoryx2 removes its files, not its directories).
pub struct RunFiles(pub String);

impl Drop for RunFiles {
    fn drop(&mut self) {
        let stem = run_stem(&self.0);
        let run_dir = |what| std::env::temp_dir().join(format!("{stem}_{what}"));
        let nodes = std::fs::read_dir(run_dir("nodes")).map_or(0, |d| d.count());
        if nodes > 0 {
            return;
        }
        let prefix = format!("{stem}_");
        for e in std::fs::read_dir("/dev/shm")
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(&prefix) && name.ends_with(".global_mgmt") {
                let _ = std::fs::remove_file(e.path());
            }
        }
        for what in ["nodes", "services"] {
            let _ = std::fs::remove_dir(run_dir(what)); // only an empty one goes
        }
    }
}
