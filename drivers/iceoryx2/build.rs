//! The iceoryx2 version this driver is built against, read from Cargo.lock (the crate
//! itself exports no version): version() reports it.
fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let mut version = "unknown".to_string();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"iceoryx2\"" {
            if let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
            {
                version = v.trim_matches('"').to_string();
            }
            break;
        }
    }
    println!("cargo:rustc-env=ICEORYX2_VERSION={version}");
}
