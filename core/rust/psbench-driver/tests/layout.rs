//! Fails when a mirror in src/abi.rs drifts from core/include/psbench/driver.h: compiles
//! tests/layout.c against the header with the C compiler cc finds, runs it, and compares
//! every struct's alignment and size and every field's offset and size with Rust's. A field
//! added to driver.h changes its struct's size or fails the C program's build; add it to
//! both lists then.
use std::mem::{align_of, offset_of, size_of};
use std::path::Path;
use std::process::Command;

use psbench_driver::abi::*;

fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

macro_rules! s {
    ($out:ident, $s:ident) => {
        $out.push(format!(
            "{} {} {}",
            stringify!($s),
            align_of::<$s>(),
            size_of::<$s>()
        ));
    };
}
macro_rules! f {
    ($out:ident, $s:ident, $f:ident) => {
        $out.push(format!(
            "{}.{} {} {}",
            stringify!($s),
            stringify!($f),
            offset_of!($s, $f),
            field_size(|x: &$s| &x.$f)
        ));
    };
}

fn rust_layout() -> Vec<String> {
    let mut o = vec![
        format!("PSB_ABI_VERSION {PSB_ABI_VERSION} 0"),
        format!(
            "bits {PSB_BEST_EFFORT} {PSB_RELIABLE} {PSB_VOLATILE} {PSB_TRANSIENT_LOCAL} {PSB_KEEP_LAST} \
             {PSB_KEEP_ALL} {PSB_NOTIFY_LISTENER} {PSB_NOTIFY_WAIT} {PSB_NOTIFY_POLL}"
        ),
        format!("{PSB_COUNTER_LISTENER_ERRORS} 0 0"),
    ];
    s!(o, psb_error);
    f!(o, psb_error, message);
    s!(o, psb_option);
    f!(o, psb_option, key);
    f!(o, psb_option, value);
    s!(o, psb_capabilities);
    f!(o, psb_capabilities, reliability);
    f!(o, psb_capabilities, durability);
    f!(o, psb_capabilities, history);
    f!(o, psb_capabilities, notify);
    f!(o, psb_capabilities, transports);
    f!(o, psb_capabilities, option_keys);
    f!(o, psb_capabilities, max_payload);
    f!(o, psb_capabilities, readers_per_topic);
    f!(o, psb_capabilities, writers_per_topic);
    f!(o, psb_capabilities, crosses_hosts);
    s!(o, psb_qos);
    f!(o, psb_qos, reliability);
    f!(o, psb_qos, durability);
    f!(o, psb_qos, history);
    f!(o, psb_qos, history_depth);
    s!(o, psb_config);
    f!(o, psb_config, run_id);
    f!(o, psb_config, transport);
    f!(o, psb_config, notify);
    f!(o, psb_config, qos);
    f!(o, psb_config, max_payload);
    f!(o, psb_config, options);
    f!(o, psb_config, option_count);
    f!(o, psb_config, use_loan);
    f!(o, psb_config, intra_process);
    f!(o, psb_config, local_address);
    f!(o, psb_config, peer_addresses);
    f!(o, psb_config, readers);
    f!(o, psb_config, writers);
    f!(o, psb_config, run_topics);
    f!(o, psb_config, run_topic_count);
    s!(o, psb_driver);
    f!(o, psb_driver, abi_version);
    f!(o, psb_driver, name);
    f!(o, psb_driver, description);
    f!(o, psb_driver, version);
    f!(o, psb_driver, caps);
    f!(o, psb_driver, check);
    f!(o, psb_driver, open);
    f!(o, psb_driver, close);
    f!(o, psb_driver, create_writer);
    f!(o, psb_driver, destroy_writer);
    f!(o, psb_driver, create_reader);
    f!(o, psb_driver, destroy_reader);
    f!(o, psb_driver, matched_readers);
    f!(o, psb_driver, matched_writers);
    f!(o, psb_driver, write);
    f!(o, psb_driver, loan);
    f!(o, psb_driver, write_loan);
    f!(o, psb_driver, take);
    f!(o, psb_driver, release);
    f!(o, psb_driver, flush);
    f!(o, psb_driver, drain);
    f!(o, psb_driver, writer_counters);
    f!(o, psb_driver, reader_counters);
    o
}

fn c_layout() -> Vec<String> {
    // Where cargo runs the test from, not where it was compiled: the target directory is
    // shared by every checkout (~/.cache/psbench), and a binary built in another one is
    // reused as fresh, with that checkout's path compiled in.
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or(env!("CARGO_MANIFEST_DIR").into());
    let here = Path::new(&dir);
    let include = here.join("../../include");
    let out = std::env::temp_dir().join(format!("psbench-driver-layout-{}", std::process::id()));
    let target = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .target(&target)
        .host(&target)
        .opt_level(0)
        .get_compiler();
    let status = compiler
        .to_command()
        .arg("-std=c11")
        .arg("-I")
        .arg(&include)
        .arg(here.join("tests/layout.c"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run the C compiler");
    assert!(
        status.success(),
        "tests/layout.c does not compile against driver.h"
    );
    let run = Command::new(&out).output().expect("run the layout program");
    let _ = std::fs::remove_file(&out);
    assert!(run.status.success());
    String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn mirrors_match_driver_h() {
    let (c, rust) = (c_layout(), rust_layout());
    for (c_line, r_line) in c.iter().zip(rust.iter()) {
        assert_eq!(
            c_line, r_line,
            "src/abi.rs differs from driver.h (C, then Rust)"
        );
    }
    assert_eq!(
        c.len(),
        rust.len(),
        "the lists of structs and fields differ"
    );
}
