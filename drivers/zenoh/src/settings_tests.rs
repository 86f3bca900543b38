//! Unit tests of settings.rs (a file of their own: test code, not the driver's).
use super::*;

fn input(transport: &str, options: &[(&str, &str)]) -> Input {
    Input {
        run_id: "r1".into(),
        transport: Some(transport.into()),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Input::default()
    }
}

#[test]
fn client_needs_a_broker_and_peers_take_none() {
    let (_, r) = parse(&input("client", &[]));
    assert_eq!(r.len(), 1);
    assert!(r[0].1.contains("option broker=ADDRESS:PORT is missing"));
    let (s, r) = parse(&input("client", &[("broker", "127.0.0.1:7447")]));
    assert!(r.is_empty() && s.broker.as_deref() == Some("127.0.0.1:7447"));
    let (_, r) = parse(&input("peer", &[("broker", "127.0.0.1:7447")]));
    assert!(r[0].1.contains("applies to transport client only"));
    let (_, r) = parse(&input("client", &[("broker", "nowhere")]));
    assert!(r[0].1.contains("is not ADDRESS:PORT"));
}

#[test]
fn independent_problems_are_all_reported() {
    let mut i = input("shm", &[("colour", "red")]);
    i.transient_local = true;
    i.keep_last = Some(0);
    i.local_address = Some("10.0.0.1".into());
    let (_, r) = parse(&i);
    let settings: Vec<_> = r.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        settings,
        ["option:colour", "durability", "history", "hosts"]
    );
}

#[test]
fn security_is_tls_with_a_folder_on_peer_or_client() {
    let secured = [("security", "tls"), ("security_dir", "/nonexistent/x")];
    for transport in ["peer", "client"] {
        let mut options = secured.to_vec();
        if transport == "client" {
            options.push(("broker", "127.0.0.1:7447"));
        }
        let (s, r) = parse(&input(transport, &options));
        assert!(r.is_empty(), "{r:?}");
        assert_eq!(
            s.tls.as_ref().unwrap().file("ca.pem"),
            "/nonexistent/x/ca.pem"
        );
        assert_eq!(s.protocol(), "tls");
    }
    let (_, r) = parse(&input("shm", &secured));
    assert!(r[0]
        .1
        .contains("shared-memory segments, which TLS does not protect"));
    let (_, r) = parse(&input("peer", &[("security", "tls")]));
    assert!(r[0].1.contains("needs security_dir=DIR"));
    let (_, r) = parse(&input(
        "peer",
        &[("security", "encrypt"), ("security_dir", "/d")],
    ));
    assert!(r[0]
        .1
        .starts_with("security=encrypt: this driver supports security tls"));
    let (_, r) = parse(&input("peer", &[("security_dir", "/d")]));
    assert!(r[0].1.contains("without security=tls"));
    let (s, r) = parse(&input("peer", &[("security", "none")]));
    assert!(r.is_empty() && s.tls.is_none() && s.protocol() == "tcp");
}

#[test]
fn the_port_is_the_run_ids() {
    let (a, _) = parse(&input("peer", &[]));
    assert_eq!(a.port as u32, PORT_FIRST + fnv1a32("r1") % PORT_COUNT);
    assert_eq!(fnv1a32("a"), 0xe40c292c);
}
