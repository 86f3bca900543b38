//! Unit tests of zenoh_log.rs (a file of their own: test code, not the driver's).
use super::*;

#[test]
fn tls_warnings_are_kept_and_others_not() {
    assert!(about_tls("invalid peer certificate: UnknownIssuer"));
    assert!(about_tls("received fatal alert: BadCertificate"));
    assert!(!about_tls("Unable to connect to peer: Connection refused"));
    assert!(!about_tls(
        "Unable to connect to any of [tls/127.0.0.1:7447]! "
    ));
}

#[test]
fn why_a_transport_closed_is_kept_and_other_debug_lines_not() {
    watch();
    tracing::debug!(target: "zenoh_transport::unicast::manager", "New transport opened");
    tracing::debug!(
        target: "zenoh_transport::unicast::universal::link",
        "RX task failed: Read error on TLS link: early eof at /x/zenoh-link-tls/src/unicast.rs:9."
    );
    tracing::debug!(
        target: "zenoh_transport::unicast::universal::transport",
        "[a] Closing transport with peer: b"
    );
    assert_eq!(
        closing().as_deref(),
        Some(
            "RX task failed: Read error on TLS link: early eof; [a] Closing transport with peer: b"
        )
    );
}

#[test]
fn source_locations_are_left_out() {
    let e = "Can not create a new TLS link bound to 127.0.0.1: invalid peer certificate: \
             UnknownIssuer at /root/.cargo/registry/src/x/zenoh-link-tls-1.10.2/src/unicast.rs:378.";
    assert_eq!(
        without_locations(e),
        "Can not create a new TLS link bound to 127.0.0.1: invalid peer certificate: UnknownIssuer"
    );
    assert_eq!(without_locations("a at /b.rs:1. c at /d.rs:22"), "a c");
    assert_eq!(without_locations("no location"), "no location");
}

#[test]
fn the_cause_is_added_once() {
    let cause = Some("Unable to connect to tls/127.0.0.1:7! received fatal alert: X".into());
    assert_eq!(
        with_cause("Unable to connect to any of [tls/127.0.0.1:7]!", cause.clone()),
        "Unable to connect to any of [tls/127.0.0.1:7]! (TLS: Unable to connect to tls/127.0.0.1:7! received fatal alert: X)"
    );
    assert_eq!(
        with_cause("received fatal alert: X", cause),
        "received fatal alert: X"
    );
    assert_eq!(with_cause("e", None), "e");
}
