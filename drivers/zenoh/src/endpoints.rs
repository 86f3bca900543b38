//! A topic's writer (a zenoh publisher) and reader (a zenoh subscriber with the queue the
//! history asks for), and how many of the other side each sees: every endpoint holds a
//! liveliness token under its topic, and the other side counts the tokens (zenoh's own
//! matching status only tells whether there is one).
use crate::settings::{Notify, Queue, Settings};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use zenoh::handlers::{FifoChannel, FifoChannelHandler, RingChannel, RingChannelHandler};
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::qos::{CongestionControl, Reliability};
use zenoh::sample::{Sample, SampleKind};
use zenoh::{Session, Wait};

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// A client's router went away: with what zenoh logged about it (a read error on the
/// link, or none: the router closed the session).
fn router_lost() -> String {
    let said = crate::zenoh_log::closing()
        .map(|lines| format!(" (zenoh: {lines})"))
        .unwrap_or_default();
    format!("the connection to zenohd closed during the run (was the router stopped?){said}")
}

/// Keeps `psbench/<topic>/<side>/<unique>` alive while the endpoint lives.
fn announce(session: &Session, topic: &str, side: &str) -> Result<LivelinessToken, String> {
    let unique = format!(
        "{}_{}",
        session.zid(),
        NEXT_ID.fetch_add(1, Ordering::Relaxed)
    );
    session
        .liveliness()
        .declare_token(format!("psbench/{topic}/{side}/{unique}"))
        .wait()
        .map_err(|e| format!("cannot announce a {side} of {topic}: {e}"))
}

/// Counts the live tokens of the other side of the topic (history: those declared
/// before too).
fn count(
    session: &Session,
    topic: &str,
    side: &str,
) -> Result<(Subscriber<()>, Arc<AtomicU32>), String> {
    let n = Arc::new(AtomicU32::new(0));
    let seen = n.clone();
    let watch = session
        .liveliness()
        .declare_subscriber(format!("psbench/{topic}/{side}/*"))
        .history(true)
        .callback(move |s: Sample| {
            if s.kind() == SampleKind::Put {
                seen.fetch_add(1, Ordering::AcqRel);
            } else {
                // never below 0: a token gone that was never seen as put
                let _ =
                    seen.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| v.checked_sub(1));
            }
        })
        .wait()
        .map_err(|e| format!("cannot watch the {side} of {topic}: {e}"))?;
    Ok((watch, n))
}

pub struct Writer {
    publisher: Publisher<'static>,
    readers: Arc<AtomicU32>,
    router_lost: Arc<AtomicBool>,
    _watch: Subscriber<()>,
    _token: LivelinessToken,
}

impl Writer {
    pub fn new(
        session: &Session,
        s: &Settings,
        topic: &str,
        router_lost: Arc<AtomicBool>,
    ) -> Result<Self, String> {
        // reliable: nothing dropped on the way, a writer whose queue is full waits (Block);
        // best effort: what does not fit in the queue is dropped (Drop).
        let (reliability, congestion) = if s.reliable {
            (Reliability::Reliable, CongestionControl::Block)
        } else {
            (Reliability::BestEffort, CongestionControl::Drop)
        };
        let publisher = session
            .declare_publisher(topic.to_string())
            .reliability(reliability)
            .congestion_control(congestion)
            .wait()
            .map_err(|e| format!("cannot declare a publisher on {topic}: {e}"))?;
        let (watch, readers) = count(session, topic, "reader")?;
        let token = announce(session, topic, "writer")?;
        Ok(Self {
            publisher,
            readers,
            router_lost,
            _watch: watch,
            _token: token,
        })
    }

    /// Timed path: zenoh copies the bytes into a buffer of its own (an allocation).
    pub fn write(&self, data: &[u8]) -> Result<(), String> {
        if self.router_lost.load(Ordering::Acquire) {
            return Err(router_lost());
        }
        self.publisher
            .put(data)
            .wait()
            .map_err(|e| format!("put failed: {e}"))
    }

    pub fn matched(&self) -> u32 {
        self.readers.load(Ordering::Acquire)
    }
}

enum Queued {
    Fifo(Subscriber<FifoChannelHandler<Sample>>),
    Ring(Subscriber<RingChannelHandler<Sample>>),
    Listener(#[allow(dead_code)] Subscriber<()>),
}

pub struct Reader {
    queued: Queued,
    current: Option<Sample>,
    scratch: Vec<u8>, // a payload in several slices, made contiguous
    writers: Arc<AtomicU32>,
    router_lost: Arc<AtomicBool>,
    _watch: Subscriber<()>,
    _token: LivelinessToken,
}

/// The payload as one slice: zenoh's own when it is one (always, but for a message zenoh
/// received in fragments it did not join), else copied into scratch.
pub fn contiguous<'a>(sample: &'a Sample, scratch: &'a mut Vec<u8>) -> &'a [u8] {
    match sample.payload().to_bytes() {
        Cow::Borrowed(b) => b,
        Cow::Owned(v) => {
            *scratch = v;
            scratch
        }
    }
}

/// What a listener reader calls with each sample's bytes, on zenoh's receiving thread.
pub type OnData = Box<dyn Fn(&[u8]) + Send + Sync>;

impl Reader {
    /// listener: called on zenoh's receiving thread with each sample's bytes (notify
    /// listener only).
    pub fn new(
        session: &Session,
        s: &Settings,
        topic: &str,
        router_lost: Arc<AtomicBool>,
        listener: Option<OnData>,
    ) -> Result<Self, String> {
        let declare = || session.declare_subscriber(topic.to_string());
        let fail = |e| format!("cannot declare a subscriber on {topic}: {e}");
        let queued = match (s.notify, listener) {
            (Notify::Listener, Some(on_data)) => {
                // The bytes as zenoh holds them (one slice: no copy), valid during the call.
                let sub = declare()
                    .callback(move |sample: Sample| on_data(&sample.payload().to_bytes()))
                    .wait()
                    .map_err(fail)?;
                Queued::Listener(sub)
            }
            (Notify::Listener, None) => return Err("notify listener needs a listener".into()),
            (_, _) => match s.queue {
                Queue::Fifo(n) => {
                    Queued::Fifo(declare().with(FifoChannel::new(n)).wait().map_err(fail)?)
                }
                Queue::Ring(n) => {
                    Queued::Ring(declare().with(RingChannel::new(n)).wait().map_err(fail)?)
                }
            },
        };
        let (watch, writers) = count(session, topic, "writer")?;
        let token = announce(session, topic, "reader")?;
        Ok(Self {
            queued,
            current: None,
            scratch: Vec::new(),
            writers,
            router_lost,
            _watch: watch,
            _token: token,
        })
    }

    /// Timed path: the next sample, waiting up to timeout_ns (0: not at all) in the
    /// channel's own blocking receive.
    pub fn take(&mut self, timeout_ns: i64) -> Result<Option<&[u8]>, String> {
        if self.router_lost.load(Ordering::Acquire) {
            return Err(router_lost());
        }
        let wait = Duration::from_nanos(timeout_ns.max(0) as u64);
        let got = match &self.queued {
            Queued::Fifo(h) if timeout_ns <= 0 => h.try_recv(),
            Queued::Fifo(h) => h.recv_timeout(wait),
            Queued::Ring(h) if timeout_ns <= 0 => h.try_recv(),
            Queued::Ring(h) => h.recv_timeout(wait),
            Queued::Listener(_) => return Err("take() on a listener-mode reader".into()),
        }
        .map_err(|e| format!("receive failed: {e}"))?;
        if got.is_none() && crate::zenoh_log::failed() && self.writers.load(Ordering::Relaxed) == 0
        {
            // security=tls: nothing came, no writer was ever seen, and a handshake failed:
            // the run cannot start (e.g. across hosts, where peers keep retrying).
            return Err(format!(
                "no writer reached this reader and a TLS handshake failed: {}",
                crate::zenoh_log::last().unwrap_or_default()
            ));
        }
        self.current = got;
        Ok(self
            .current
            .as_ref()
            .map(|s| contiguous(s, &mut self.scratch)))
    }

    pub fn release(&mut self) {
        self.current = None;
    }

    pub fn matched(&self) -> u32 {
        self.writers.load(Ordering::Acquire)
    }
}
