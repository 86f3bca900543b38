//! What a run asks of the driver, judged once: check() reports every refusal from it and
//! open() refuses the same (parse, then refuse if anything was refused).

/// How the node's session reaches the others (the run's transport, recorded per run).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Peer to peer over TCP on explicit endpoints derived from the run id.
    Peer,
    /// Peer mode with zenoh's shared-memory transport between the processes of one host.
    Shm,
    /// A client of the zenohd router given as option broker=ADDRESS:PORT.
    Client,
}

pub const TRANSPORTS: [&str; 3] = ["peer", "shm", "client"];
pub const OPTION_KEYS: [&str; 3] = ["broker", "security", "security_dir"];

/// security=tls: every link is TLS with mutual authentication; the folder holds ca.pem
/// (the CA to trust), cert.pem and key.pem (this node's certificate and PKCS#8 key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tls {
    pub dir: String,
}

impl Tls {
    pub const FILES: [&'static str; 3] = ["ca.pem", "cert.pem", "key.pem"];
    pub fn file(&self, name: &str) -> String {
        format!("{}/{name}", self.dir.trim_end_matches('/'))
    }
}

/// The reader's queue: what zenoh calls a handler.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Queue {
    /// keep_all (and no history given): a FIFO channel; a full one blocks zenoh's receive
    /// path, so a stalled reader holds its writer back (under congestion control Block).
    Fifo(usize),
    /// keep_last N: a ring channel of N; a full one drops its oldest sample.
    Ring(usize),
}

/// zenoh's own default capacity of a FIFO channel (API_DATA_RECEPTION_CHANNEL_SIZE).
pub const FIFO_CAPACITY: usize = 256;
/// The largest keep_last depth taken (a ring channel is allocated whole).
pub const MAX_DEPTH: u32 = 1 << 20;
/// First TCP port of the peers' rendezvous endpoints, and how many there are (below
/// Linux's ephemeral ports, 32768 and up).
pub const PORT_FIRST: u32 = 20000;
pub const PORT_COUNT: u32 = 12768;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Notify {
    Listener,
    Wait,
    Poll,
}

/// The run's settings in plain values (the SDK's Config read once by lib.rs).
#[derive(Clone, Debug, Default)]
pub struct Input {
    pub run_id: String,
    pub transport: Option<String>,
    pub notify: Option<Notify>,
    pub reliable: bool,
    pub transient_local: bool,
    pub keep_last: Option<u32>, // Some(depth) for keep_last
    pub options: Vec<(String, String)>,
    pub local_address: Option<String>,
    pub peer_addresses: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Settings {
    pub mode: Mode,
    pub reliable: bool,
    pub queue: Queue,
    pub notify: Notify,
    /// client: the router's ADDRESS:PORT
    pub broker: Option<String>,
    /// peer and shm: where this host's peers listen (local_address or 127.0.0.1)
    pub address: String,
    /// peer and shm: the TCP port of the run's rendezvous endpoint
    pub port: u16,
    /// across hosts: the other hosts' addresses, each reached at the same port
    pub peers: Vec<String>,
    /// security=tls: TLS links only, both sides authenticated by the run's CA
    pub tls: Option<Tls>,
}

impl Settings {
    /// The link protocol of every endpoint: "tls" when secured, else "tcp".
    pub fn protocol(&self) -> &'static str {
        if self.tls.is_some() {
            "tls"
        } else {
            "tcp"
        }
    }
}

pub fn fnv1a32(text: &str) -> u32 {
    text.bytes().fold(0x811c9dc5u32, |h, b| {
        (h ^ b as u32).wrapping_mul(0x01000193)
    })
}

fn valid_broker(value: &str) -> bool {
    let Some((host, port)) = value.rsplit_once(':') else {
        return false;
    };
    !host.is_empty()
        && host.parse::<std::net::Ipv4Addr>().is_ok()
        && port.parse::<u16>().is_ok_and(|p| p > 0)
}

/// Every refusal as (setting, message without the driver's name), and the settings with
/// fallbacks where refused.
pub fn parse(input: &Input) -> (Settings, Vec<(String, String)>) {
    let mut refused: Vec<(String, String)> = Vec::new();
    let mut refuse = |setting: &str, message: String| refused.push((setting.into(), message));
    if input.run_id.is_empty() {
        refuse(
            "driver",
            "the run id is empty; it names the peers' endpoint and the key expressions".into(),
        );
    }
    let mode = match input.transport.as_deref() {
        None | Some("default") | Some("peer") => Mode::Peer,
        Some("shm") => Mode::Shm,
        Some("client") => Mode::Client,
        Some(other) => {
            refuse(
                "transport",
                format!("transport '{other}' is not supported; this driver supports peer (default), shm or client"),
            );
            Mode::Peer
        }
    };
    let mut broker = None;
    let (mut security, mut security_dir) = (None, None);
    for (key, value) in &input.options {
        match key.as_str() {
            "security" => security = Some(value.clone()),
            "security_dir" => security_dir = Some(value.clone()),
            "broker" if mode != Mode::Client => refuse(
                "option:broker",
                "option broker applies to transport client only (peers find each other on the run's own endpoints)".into(),
            ),
            "broker" if !valid_broker(value) => refuse(
                "option:broker",
                format!("option broker='{value}' is not ADDRESS:PORT (an IPv4 address and a port of zenohd)"),
            ),
            "broker" => broker = Some(value.clone()),
            _ => refuse(
                &format!("option:{key}"),
                format!("unknown option '{key}'; valid options: broker, security, security_dir"),
            ),
        }
    }
    if mode == Mode::Client && broker.is_none() && !input.options.iter().any(|(k, _)| k == "broker")
    {
        refuse(
            "option:broker",
            "option broker=ADDRESS:PORT is missing; transport client connects to a zenohd router (psbench starts one from the manifest)".into(),
        );
    }
    let tls = match (security.as_deref(), security_dir) {
        (None | Some("none"), None) => None,
        (Some("tls"), Some(dir)) if !dir.is_empty() => Some(Tls { dir }),
        (Some("tls"), _) => {
            refuse(
                "option:security_dir",
                "security=tls needs security_dir=DIR (ca.pem, cert.pem, key.pem); psbench gives both with --security tls".into(),
            );
            None
        }
        (None | Some("none"), Some(_)) => {
            refuse(
                "option:security_dir",
                "option security_dir is given without security=tls".into(),
            );
            None
        }
        (Some(other), _) => {
            refuse(
                "option:security",
                format!("security={other}: this driver supports security tls (TLS links with mutual authentication) or none"),
            );
            None
        }
    };
    if tls.is_some() && mode == Mode::Shm {
        refuse(
            "option:security",
            "security=tls: transport shm hands messages of 3072 bytes or more over in shared-memory segments, which TLS does not protect (only the TCP link carrying their references would be encrypted); secured runs use --transport peer or client".into(),
        );
    }
    if input.transient_local {
        refuse(
            "durability",
            "durability 'transient_local' is not supported; this driver supports volatile (a cache for late joiners is zenoh-ext's AdvancedPublisher, which this driver does not use)".into(),
        );
    }
    let queue = match input.keep_last {
        Some(0) => {
            refuse(
                "history",
                "history keep_last needs a depth of 1 or more".into(),
            );
            Queue::Fifo(FIFO_CAPACITY)
        }
        Some(depth) if depth > MAX_DEPTH => {
            refuse(
                "history",
                format!("history keep_last {depth} is too deep; use 1 to {MAX_DEPTH} or keep_all"),
            );
            Queue::Fifo(FIFO_CAPACITY)
        }
        Some(depth) => Queue::Ring(depth as usize),
        None => Queue::Fifo(FIFO_CAPACITY),
    };
    let across_hosts = input.local_address.is_some();
    if across_hosts && mode == Mode::Shm {
        refuse(
            "hosts",
            "transport shm does not cross hosts; across hosts use --transport peer or client"
                .into(),
        );
    }
    let address = input
        .local_address
        .clone()
        .unwrap_or_else(|| "127.0.0.1".into());
    let peers = input
        .peer_addresses
        .iter()
        .filter(|a| Some(*a) != input.local_address.as_ref())
        .cloned()
        .collect::<Vec<_>>();
    let port = (PORT_FIRST + fnv1a32(&input.run_id) % PORT_COUNT) as u16;
    let settings = Settings {
        mode,
        reliable: input.reliable,
        queue,
        notify: input.notify.unwrap_or(Notify::Wait),
        broker,
        address,
        port,
        peers,
        tls,
    };
    (settings, refused)
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
