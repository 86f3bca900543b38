//! What zenoh says only in its log. Why a TLS link failed: zenoh reports a failed
//! handshake only as a warning (a connect error says "Unable to connect to any of
//! [...]", a listener just keeps accepting). Why a transport closed: a link's read or
//! write error is a debug line of zenoh's transport, and the transport events a client
//! watches its router with carry no reason. A secured node, and every client, installs
//! once per process a tracing subscriber that keeps the last TLS warning and the first
//! lines about a closing transport: the driver's error then names the cause (unknown
//! issuer, expired certificate, a read error on the link, ...). Other processes install
//! nothing. Only warnings and errors of zenoh's crates, and the debug lines of the three
//! modules that close a transport (none of which is on a message's path), are enabled:
//! every other callsite stays disabled, as with no subscriber, so the timed path is
//! unchanged.
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

static LAST: Mutex<Option<String>> = Mutex::new(None);
static CLOSING: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The lines about a closing transport that are kept: the cause comes first ("RX task
/// failed: ..."), then "Closing transport with peer ...".
const CLOSING_KEPT: usize = 3;
/// zenoh's modules whose debug lines (and errors) say why a transport closed: a link's
/// read or write failed, the transport is closing, a message waited for room in a full
/// queue longer than zenoh allows (block/wait_before_close, 5 s) and it closed the
/// transport.
const CLOSING_TARGETS: [&str; 3] = [
    "zenoh_transport::unicast::universal::link",
    "zenoh_transport::unicast::universal::transport",
    "zenoh_transport::unicast::universal::tx",
];
static FAILED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Starts keeping zenoh's TLS warnings and why its transports closed (once per process;
/// a no-op if the process has a subscriber of its own already).
pub fn watch() {
    INSTALL.call_once(|| {
        let _ = tracing::subscriber::set_global_default(Keeper);
    });
}

/// Whether zenoh reported a failed TLS handshake in this process (one atomic load: a
/// reader asks it when a take finds nothing).
pub fn failed() -> bool {
    FAILED.load(Ordering::Relaxed)
}

/// The last TLS failure zenoh reported in this process, if any.
pub fn last() -> Option<String> {
    LAST.lock().ok().and_then(|l| l.clone())
}

/// What zenoh logged about the transports of this process that closed, if anything
/// ("RX task failed: Read error on TLS link ...; Closing transport with peer: ...").
pub fn closing() -> Option<String> {
    let lines = CLOSING.lock().ok()?;
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// A zenoh error for the driver's message: without the source locations zenoh appends
/// (" at /root/.cargo/registry/.../unicast.rs:378."), and followed by " (TLS: <cause>)"
/// when zenoh logged a TLS failure that the error itself does not give.
pub fn explain(error: &str) -> String {
    with_cause(
        &without_locations(error),
        last().map(|m| without_locations(&m)),
    )
}

fn with_cause(error: &str, cause: Option<String>) -> String {
    match cause {
        // zenoh's warning: "Unable to connect to <endpoint>! <reason>"
        Some(cause) if !error.contains(cause.rsplit_once("! ").map_or(&*cause, |(_, r)| r)) => {
            format!("{error} (TLS: {cause})")
        }
        _ => error.to_string(),
    }
}

fn without_locations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" at /") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        // up to the end of ".rs:LINE" (and a full stop after it)
        match tail.find(".rs:") {
            Some(rs) => {
                let digits = tail[rs + 4..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .count();
                let mut end = rs + 4 + digits;
                if tail[end..].starts_with('.') {
                    end += 1;
                }
                rest = &tail[end..];
            }
            None => {
                rest = tail;
                break;
            }
        }
    }
    out.push_str(rest);
    out.trim_end().to_string()
}

struct Keeper;

fn wanted(meta: &Metadata<'_>) -> bool {
    (*meta.level() <= Level::WARN && meta.target().starts_with("zenoh")) || about_closing(meta)
}

fn about_closing(meta: &Metadata<'_>) -> bool {
    *meta.level() <= Level::DEBUG && CLOSING_TARGETS.contains(&meta.target())
}

/// A warning is about a failed handshake when it names a certificate, an alert or the
/// handshake (not the summary "Unable to connect to any of [...]" that follows the one
/// with the reason).
fn about_tls(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    !m.starts_with("unable to connect to any of")
        && ["certificate", "alert", "handshake"]
            .iter()
            .any(|w| m.contains(w))
}

#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        }
    }
}

impl Subscriber for Keeper {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        if wanted(meta) {
            tracing::subscriber::Interest::always()
        } else {
            tracing::subscriber::Interest::never()
        }
    }
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        wanted(meta)
    }
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::DEBUG)
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = Message::default();
        event.record(&mut message);
        // zenoh's listener adds a hint meant for accept() failures of the socket.
        let text = message
            .0
            .replace(". Hint: increase the system open file limit.", "");
        if about_closing(event.metadata()) {
            if let Ok(mut lines) = CLOSING.lock() {
                if lines.len() < CLOSING_KEPT {
                    lines.push(without_locations(&text));
                }
            }
        } else if about_tls(&text) {
            if let Ok(mut last) = LAST.lock() {
                *last = Some(without_locations(&text));
            }
            FAILED.store(true, Ordering::Relaxed);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[cfg(test)]
#[path = "zenoh_log_tests.rs"]
mod tests;
