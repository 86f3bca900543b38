//! One zenoh session per context, configured from the run's settings alone: multicast
//! scouting off, endpoints on loopback (or the run's local address), shared memory only
//! on transport shm.
use crate::settings::{Mode, Settings, Tls};
use crate::zenoh_log;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use zenoh::sample::SampleKind;
use zenoh::{Config, Session, Wait};

/// The session, and for a client whether its router went away (set on zenoh's thread,
/// read by write/take: a run whose router is gone fails instead of waiting forever).
pub struct Opened {
    pub session: Session,
    pub router_lost: Arc<AtomicBool>,
    pub transports: Arc<Transports>,
}

/// The transports (sessions with a peer or a router) opened during the context's life,
/// and how many of them negotiated shared memory: what shows that transport shm used it.
#[derive(Default)]
pub struct Transports {
    pub opened: AtomicU64,
    pub shm: AtomicU64,
}

fn insert(config: &mut Config, key: &str, value: &str) -> Result<(), String> {
    config
        .insert_json5(key, value)
        .map_err(|e| format!("zenoh configuration {key}={value}: {e}"))
}

fn endpoints(list: &[String]) -> String {
    let quoted: Vec<String> = list.iter().map(|e| format!("\"{e}\"")).collect();
    format!("[{}]", quoted.join(","))
}

/// What every mode shares: nothing found by multicast, no admin space, shared memory only
/// where asked for, connection retries quick (peers on other hosts may start later).
fn base(s: &Settings, mode: &str) -> Result<Config, String> {
    let mut c = Config::default();
    insert(&mut c, "mode", &format!("\"{mode}\""))?;
    insert(&mut c, "scouting/multicast/enabled", "false")?;
    insert(&mut c, "adminspace/enabled", "false")?;
    let shm = if s.mode == Mode::Shm { "true" } else { "false" };
    insert(&mut c, "transport/shared_memory/enabled", shm)?;
    insert(
        &mut c,
        "connect/retry",
        "{period_init_ms: 100, period_max_ms: 1000, period_increase_factor: 2}",
    )?;
    if let Some(tls) = &s.tls {
        secure(&mut c, tls, s.mode)?;
    }
    Ok(c)
}

/// security=tls: TLS is the only link protocol zenoh may open or accept (no TCP to fall
/// back to), both ends present a certificate of the run's CA (mutual TLS), and the CA is
/// the only one trusted (not the system's web roots). A peer both listens and connects
/// with its own certificate. Server names: a client checks zenohd's certificate against
/// the address it dials (psbench's broker certificate has it as an IP subjectAltName); a
/// peer does not, since a node's certificate names its process (CN=psbench-<process>)
/// and no address: any certificate of the run's own CA, made for this run alone, is a
/// node of this run.
fn secure(c: &mut Config, tls: &Tls, mode: Mode) -> Result<(), String> {
    for name in Tls::FILES {
        let path = tls.file(name);
        std::fs::File::open(&path).map_err(|e| format!("security=tls: cannot read {path}: {e}"))?;
    }
    let path = |name: &str| {
        format!(
            "\"{}\"",
            tls.file(name).replace('\\', "\\\\").replace('"', "\\\"")
        )
    };
    insert(c, "transport/link/protocols", "[\"tls\"]")?;
    insert(c, "transport/link/tls/root_ca_certificate", &path("ca.pem"))?;
    insert(c, "transport/link/tls/enable_mtls", "true")?;
    insert(
        c,
        "transport/link/tls/connect_certificate",
        &path("cert.pem"),
    )?;
    insert(
        c,
        "transport/link/tls/connect_private_key",
        &path("key.pem"),
    )?;
    if mode == Mode::Client {
        insert(c, "transport/link/tls/verify_name_on_connect", "true")?;
    } else {
        insert(
            c,
            "transport/link/tls/listen_certificate",
            &path("cert.pem"),
        )?;
        insert(c, "transport/link/tls/listen_private_key", &path("key.pem"))?;
        insert(c, "transport/link/tls/verify_name_on_connect", "false")?;
    }
    Ok(())
}

/// A peer that binds the run's endpoint (the first process of this host to try), or
/// one that listens on a port of its own and connects to it. Gossip over those sessions
/// (zenoh's default, one hop) then connects every two peers directly.
fn peer_config(s: &Settings, rendezvous: bool) -> Result<Config, String> {
    let mut c = base(s, "peer")?;
    let proto = s.protocol();
    let own = format!("{proto}/{}:{}", s.address, s.port);
    let mut connect: Vec<String> = s
        .peers
        .iter()
        .map(|a| format!("{proto}/{a}:{}", s.port))
        .collect();
    let listen = if rendezvous {
        own
    } else {
        connect.push(own);
        format!("{proto}/{}:0", s.address)
    };
    if s.tls.is_some() && !rendezvous && s.peers.is_empty() {
        // One host: the rendezvous is listening already (its port was taken), so one
        // attempt decides, and a failed handshake fails open() with zenoh's reason
        // instead of being retried in the background until the match timeout.
        insert(&mut c, "connect/timeout_ms", "{peer: 0}")?;
        insert(&mut c, "connect/exit_on_failure", "{peer: true}")?;
    }
    insert(&mut c, "listen/endpoints", &endpoints(&[listen]))?;
    insert(&mut c, "connect/endpoints", &endpoints(&connect))?;
    Ok(c)
}

fn client_config(s: &Settings) -> Result<Config, String> {
    let mut c = base(s, "client")?;
    let broker = s.broker.as_deref().unwrap_or_default();
    insert(
        &mut c,
        "connect/endpoints",
        &endpoints(&[format!("{}/{broker}", s.protocol())]),
    )?;
    insert(&mut c, "listen/endpoints", "[]")?;
    Ok(c)
}

pub fn open(s: &Settings) -> Result<Opened, String> {
    if s.tls.is_some() || s.mode == Mode::Client {
        zenoh_log::watch();
    }
    let session = match s.mode {
        Mode::Client => zenoh::open(client_config(s)?).wait().map_err(|e| {
            format!(
                "cannot connect to zenohd at {}: {}",
                s.broker.as_deref().unwrap_or_default(),
                zenoh_log::explain(&e.to_string())
            )
        })?,
        Mode::Peer | Mode::Shm => match zenoh::open(peer_config(s, true)?).wait() {
            Ok(session) => session,
            // The run's port is bound: by an earlier process of this run (join it).
            Err(_) => zenoh::open(peer_config(s, false)?).wait().map_err(|e| {
                format!(
                    "cannot open a peer session on {}: {}",
                    s.address,
                    zenoh_log::explain(&e.to_string())
                )
            })?,
        },
    };
    let router_lost = Arc::new(AtomicBool::new(false));
    let transports = Arc::new(Transports::default());
    let (lost, seen, client) = (
        router_lost.clone(),
        transports.clone(),
        s.mode == Mode::Client,
    );
    session
        .info()
        .transport_events_listener()
        .history(true)
        .callback(move |event| {
            if event.kind() == SampleKind::Put {
                seen.opened.fetch_add(1, Ordering::Relaxed);
                if event.transport().is_shm() {
                    seen.shm.fetch_add(1, Ordering::Relaxed);
                }
            } else if client {
                lost.store(true, Ordering::Release);
            }
        })
        .background()
        .wait()
        .map_err(|e| format!("cannot watch the session's transports: {e}"))?;
    Ok(Opened {
        session,
        router_lost,
        transports,
    })
}
