//! Bare iceoryx2 ping-pong: ping publishes on service "iceoryx2_probe_TAG_ping" and takes the
//! echo on "..._pong"; pong the reverse. As the iceoryx2 driver's defaults (best_effort,
//! volatile, history unset, notify wait): a [u8] publish-subscribe service with safe
//! overflow, subscriber buffer 2 (iceoryx2's default), no history, one publisher and one
//! subscriber; a publisher with a static slice of SIZE bytes; a write loans a slice of
//! exactly SIZE bytes, copies the message in, sends it and notifies the topic's event
//! service; a take tries the subscriber and, when it is empty, waits on the event
//! listener (timed_wait), then tries again, holding the sample until the next round
//! (pong echoes by copying it into a new loan). Ping repeats its first message until pong
//! answers, then sends SIZE-byte messages closed-loop for SECONDS and prints "p50_us p99_us
//! count" (nearest rank). Files live under <tmp>/iceoryx2_probe_TAG and
//! /dev/shm/iceoryx2_probe_TAG_*, removed at the end; SIGTERM ends an idle pong cleanly.
//! Usage: iceoryx2_probe ping|pong TAG SIZE SECONDS
use std::time::{Duration, Instant};

use iceoryx2::port::listener::Listener;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use iceoryx2::sample::Sample;

#[path = "../../common/rtt.rs"] // the probes' shared result line
mod rtt;

type Svc = ipc::Service;

fn die(what: impl std::fmt::Display) -> ! {
    eprintln!("iceoryx2_probe: {what}");
    std::process::exit(1)
}

struct Side {
    publisher: Publisher<Svc, [u8], ()>,
    notifier: Notifier<Svc>,
    subscriber: Subscriber<Svc, [u8], ()>,
    listener: Listener<Svc>,
}

impl Side {
    fn write(&self, data: &[u8]) {
        let sample = self
            .publisher
            .loan_slice_uninit(data.len())
            .unwrap_or_else(|e| die(format!("loan: {e:?}")));
        sample
            .write_from_slice(data)
            .send()
            .unwrap_or_else(|e| die(format!("send: {e:?}")));
        self.notifier
            .notify()
            .unwrap_or_else(|e| die(format!("notify: {e:?}")));
    }

    /// The next sample within timeout, or None.
    fn take(&self, timeout: Duration) -> Option<Sample<Svc, [u8], ()>> {
        let end = Instant::now() + timeout;
        loop {
            match self.subscriber.receive() {
                Ok(Some(s)) => return Some(s),
                Ok(None) => {}
                Err(e) => die(format!("receive: {e:?}")),
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            let _ = self.listener.timed_wait(|_| {}, left);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 || (args[1] != "ping" && args[1] != "pong") {
        eprintln!("usage: iceoryx2_probe ping|pong TAG SIZE SECONDS");
        std::process::exit(2);
    }
    let ping = args[1] == "ping";
    let tag = &args[2];
    let size: usize = args[3]
        .parse()
        .unwrap_or_else(|_| die("SIZE: a number of bytes"));
    let seconds: f64 = args[4].parse().unwrap_or_else(|_| die("SECONDS: a number"));
    if size < 2 {
        die("SIZE must be at least 2 bytes (1 byte is the end marker)");
    }
    set_log_level(LogLevel::Warn);
    let stem = format!("iceoryx2_probe_{tag}");
    let root = std::env::temp_dir().join(&stem);
    let mut config = Config::default();
    config.global.prefix =
        FileName::new(format!("{stem}_").as_bytes()).unwrap_or_else(|e| die(format!("{e:?}")));
    config.global.set_root_path(
        &Path::new(format!("{}/", root.display()).as_bytes())
            .unwrap_or_else(|e| die(format!("{e:?}"))),
    );
    {
        let node = NodeBuilder::new()
            .config(&config)
            .create::<Svc>() // iceoryx2 catches SIGTERM: an idle pong then ends cleanly
            .unwrap_or_else(|e| die(format!("node: {e:?}")));
        let service = |dir: &str| {
            ServiceName::new(&format!("{stem}_{dir}")).unwrap_or_else(|e| die(format!("{e:?}")))
        };
        let topic = |dir: &str| {
            node.service_builder(&service(dir))
                .publish_subscribe::<[u8]>()
                .enable_safe_overflow(true)
                .subscriber_max_buffer_size(2)
                .history_size(0)
                .max_subscribers(1)
                .max_publishers(1)
                .open_or_create()
                .unwrap_or_else(|e| die(format!("service: {e:?}")))
        };
        let wake = |dir: &str| {
            node.service_builder(&service(dir))
                .event()
                .max_listeners(1)
                .max_notifiers(1)
                .open_or_create()
                .unwrap_or_else(|e| die(format!("event service: {e:?}")))
        };
        let (out, inn) = if ping {
            ("ping", "pong")
        } else {
            ("pong", "ping")
        };
        let (out_topic, in_topic, out_wake, in_wake) =
            (topic(out), topic(inn), wake(out), wake(inn));
        let listener = in_wake
            .listener_builder()
            .create()
            .unwrap_or_else(|e| die(format!("listener: {e:?}")));
        let side = Side {
            publisher: out_topic
                .publisher_builder()
                .initial_max_slice_len(size)
                .allocation_strategy(AllocationStrategy::Static)
                .backpressure_strategy(BackpressureStrategy::DiscardData)
                .create()
                .unwrap_or_else(|e| die(format!("publisher: {e:?}"))),
            notifier: out_wake
                .notifier_builder()
                .create()
                .unwrap_or_else(|e| die(format!("notifier: {e:?}"))),
            subscriber: in_topic
                .subscriber_builder()
                .buffer_size(2)
                .create()
                .unwrap_or_else(|e| die(format!("subscriber: {e:?}"))),
            listener,
        };
        let msg = vec![b'x'; size];
        if !ping {
            let _ = node.wait(Duration::ZERO); // installs iceoryx2's SIGTERM handler
            let mut idle = 0;
            loop {
                let Some(sample) = side.take(Duration::from_secs(1)) else {
                    if node.wait(Duration::ZERO).is_err() {
                        break; // SIGTERM or SIGINT (bench/truth.py stops pong so)
                    }
                    idle += 1;
                    if idle == 600 {
                        die("no message from ping for 10 minutes");
                    }
                    continue;
                };
                idle = 0;
                if sample.payload().len() == 1 {
                    break;
                }
                side.write(sample.payload());
            }
        } else {
            let mut tries = 0;
            loop {
                tries += 1;
                if tries == 50 {
                    die("no echo from pong within 10 s");
                }
                side.write(&msg);
                if side.take(Duration::from_millis(200)).is_some() {
                    break;
                }
            }
            // Late echoes of the repeated first message would pair with the wrong round.
            while side.take(Duration::from_millis(200)).is_some() {}
            let mut rtt: Vec<u64> = Vec::with_capacity(1 << 20);
            let end = Instant::now() + Duration::from_secs_f64(seconds);
            while Instant::now() < end {
                let t0 = Instant::now();
                side.write(&msg);
                let echo = side
                    .take(Duration::from_secs(10))
                    .unwrap_or_else(|| die("no echo within 10 s"));
                rtt.push(t0.elapsed().as_nanos() as u64);
                drop(echo);
            }
            side.write(b"e");
            rtt::print_rtt_line(&mut rtt);
        }
    }
    // iceoryx2 removes its files with the last node, but not its global management segment
    // (kept for later nodes) nor its directories: remove those once no node is left.
    let nodes = std::fs::read_dir(root.join("nodes"))
        .map(|d| d.count())
        .unwrap_or(0);
    if nodes == 0 {
        if let Ok(shm) = std::fs::read_dir("/dev/shm") {
            for e in shm.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(&format!("{stem}_")) && name.ends_with(".global_mgmt") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                let _ = std::fs::remove_dir(e.path());
            }
        }
        let _ = std::fs::remove_dir(&root);
    }
}
