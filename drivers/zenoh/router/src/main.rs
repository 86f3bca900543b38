//! The zenoh router psbench starts for transport client: what zenohd 1.10.2's main does
//! with psbench's arguments (`--config FILE --no-multicast-scouting`, and `--version`),
//! on the zenoh crate the driver links. Routing, timestamping and the admin space are
//! zenoh's own code, configured as zenohd configures them: router mode unless the file
//! says otherwise, the admin space on, plugin loading on (the file names none), multicast
//! scouting off. zenohd's REST and plugin options are not offered: psbench uses none.
use zenoh::{config::WhatAmI, Config, Wait};

fn usage() -> ! {
    eprintln!("usage: zenohd --config FILE [--no-multicast-scouting] | --version");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--version") {
        // zenoh's own version string, as zenohd prints it (v<crate version>-<commit>).
        println!(
            "zenohd {} (psbench's router on the zenoh crate)",
            zenoh::GIT_VERSION
        );
        return;
    }
    let (mut file, mut no_multicast) = (None, false);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--config" | "-c" => file = Some(it.next().unwrap_or_else(|| usage()).clone()),
            "--no-multicast-scouting" => no_multicast = true,
            _ => usage(),
        }
    }
    zenoh::init_log_from_env_or("error");
    let fail = |what: String| -> ! {
        eprintln!("{what}. Exiting...");
        std::process::exit(1);
    };
    let path = file.unwrap_or_else(|| usage());
    let mut config = Config::from_file(&path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    if config.mode().is_none() {
        config
            .set_mode(Some(WhatAmI::Router))
            .unwrap_or_else(|e| fail(format!("{e:?}")));
    }
    config
        .adminspace
        .set_enabled(true)
        .unwrap_or_else(|e| fail(format!("{e:?}")));
    config
        .plugins_loading
        .set_enabled(true)
        .unwrap_or_else(|e| fail(format!("{e:?}")));
    if no_multicast {
        config
            .scouting
            .multicast
            .set_enabled(Some(false))
            .unwrap_or_else(|e| fail(format!("{e:?}")));
    }
    let _session = zenoh::open(config)
        .wait()
        .unwrap_or_else(|e| fail(e.to_string()));
    loop {
        std::thread::park(); // until psbench stops it (SIGTERM)
    }
}
