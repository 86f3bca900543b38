//! Bare zenoh ping-pong (the zenoh crate only, no psbench code), with the zenoh driver's
//! defaults as psbench ping runs it: peer mode, multicast scouting off, TCP on 127.0.0.1,
//! shared memory off, best effort (psbench's default reliability) with congestion control
//! Drop, and the driver's wait (a FIFO channel's recv_timeout). pong listens on ENDPOINT
//! and echoes TAG/ping on TAG/pong until an empty message; ping connects to ENDPOINT,
//! repeats its first message until pong answers, then sends SIZE-byte messages
//! closed-loop for SECONDS and prints "p50_us p99_us n" (nearest rank).
//! Usage: zenoh_probe ping|pong TAG SIZE SECONDS [ENDPOINT] (default tcp/127.0.0.1:7447).
use std::process::exit;
use std::time::{Duration, Instant};
use zenoh::handlers::FifoChannel;
use zenoh::qos::{CongestionControl, Reliability};
use zenoh::{Config, Wait};

#[path = "../../common/rtt.rs"] // the probes' shared result line
mod rtt;

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("zenoh_probe: {what}: {e}");
    exit(1)
}

fn config(ping: bool, endpoint: &str) -> Config {
    let mut c = Config::default();
    let side = if ping { "connect" } else { "listen" };
    for (key, value) in [
        ("mode", "\"peer\"".to_string()),
        ("scouting/multicast/enabled", "false".into()),
        ("transport/shared_memory/enabled", "false".into()),
        (&format!("{side}/endpoints"), format!("[\"{endpoint}\"]")),
    ] {
        c.insert_json5(key, &value).unwrap_or_else(|e| fail(key, e));
    }
    c
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(5..=6).contains(&args.len()) || (args[1] != "ping" && args[1] != "pong") {
        eprintln!("usage: zenoh_probe ping|pong TAG SIZE SECONDS [ENDPOINT]");
        exit(2);
    }
    let ping = args[1] == "ping";
    let size: usize = args[3].parse().unwrap_or_else(|e| fail("SIZE", e));
    let seconds: f64 = args[4].parse().unwrap_or_else(|e| fail("SECONDS", e));
    let endpoint = args.get(5).map_or("tcp/127.0.0.1:7447", |s| s.as_str());
    let (out, inp) = if ping {
        ("ping", "pong")
    } else {
        ("pong", "ping")
    };
    let session = zenoh::open(config(ping, endpoint))
        .wait()
        .unwrap_or_else(|e| fail("open", e));
    let publisher = session
        .declare_publisher(format!("{}/{out}", args[2]))
        .reliability(Reliability::BestEffort)
        .congestion_control(CongestionControl::Drop)
        .wait()
        .unwrap_or_else(|e| fail("publisher", e));
    let sub = session
        .declare_subscriber(format!("{}/{inp}", args[2]))
        .with(FifoChannel::new(256))
        .wait()
        .unwrap_or_else(|e| fail("subscriber", e));
    let msg = vec![b'x'; size];
    let put = |data: &[u8]| {
        publisher
            .put(data)
            .wait()
            .unwrap_or_else(|e| fail("put", e))
    };
    if !ping {
        loop {
            let s = sub.recv().unwrap_or_else(|e| fail("recv", e));
            if s.payload().is_empty() {
                break;
            }
            put(&msg);
        }
        return;
    }
    let short = Duration::from_millis(200);
    for tries in 0.. {
        if tries == 100 {
            fail("ping", "no answer within 20 s");
        }
        put(&msg);
        if sub
            .recv_timeout(short)
            .unwrap_or_else(|e| fail("recv", e))
            .is_some()
        {
            break;
        }
    }
    // Late echoes of the repeated first message would pair with the wrong round.
    while sub
        .recv_timeout(short)
        .unwrap_or_else(|e| fail("recv", e))
        .is_some()
    {}
    let mut rtt = Vec::with_capacity(1 << 20);
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < end {
        let t0 = Instant::now();
        put(&msg);
        match sub.recv_timeout(Duration::from_secs(10)) {
            Ok(Some(_)) => rtt.push(t0.elapsed().as_nanos() as u64),
            Ok(None) => fail("recv", "no echo within 10 s"),
            Err(e) => fail("recv", e),
        }
    }
    put(&[]);
    std::thread::sleep(Duration::from_millis(100)); // the end marker leaves before close
    rtt::print_rtt_line(&mut rtt);
}
