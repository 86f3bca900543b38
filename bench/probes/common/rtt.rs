// The result line bench/truth reads of a Rust probe's ping, as rtt.hpp prints a C++
// probe's: "p50_us p99_us count" of the round trips (ns), nearest rank. A probe takes it
// with `#[path = "../../common/rtt.rs"] mod rtt;` (the probes' own code, no psbench code).

/// Sorts the round trips and prints the line; nothing when there is none.
pub fn print_rtt_line(rtt: &mut [u64]) {
    if rtt.is_empty() {
        return;
    }
    rtt.sort_unstable();
    let n = rtt.len();
    let rank = |pct: usize| ((pct * n).div_ceil(100)).max(1) - 1;
    println!(
        "{:.3} {:.3} {n}",
        rtt[rank(50)] as f64 / 1000.0,
        rtt[rank(99)] as f64 / 1000.0
    );
}
