//! Names and ids derived from the run id, and time helpers, as in the C++ SDK.

/// FNV-1a, 32 bits.
pub const fn fnv1a32(s: &[u8]) -> u32 {
    let mut h: u32 = 2166136261;
    let mut i = 0;
    while i < s.len() {
        h = (h ^ s[i] as u32).wrapping_mul(16777619);
        i += 1;
    }
    h
}

pub const FNV64_BASIS: u64 = 14695981039346656037;

/// FNV-1a, 64 bits, from offset basis `basis` (FNV64_BASIS).
pub const fn fnv1a64(s: &[u8], basis: u64) -> u64 {
    let mut h = basis;
    let mut i = 0;
    while i < s.len() {
        h = (h ^ s[i] as u64).wrapping_mul(1099511628211);
        i += 1;
    }
    h
}

/// name itself when it has at most max bytes, else a prefix and "_" + the 16 hex digits of
/// FNV-1a-64(name): a name the middleware limits, shortened without colliding. max >= 17.
pub fn shortened(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_string();
    }
    let mut cut = max - 17;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}_{:016x}",
        &name[..cut],
        fnv1a64(name.as_bytes(), FNV64_BASIS)
    )
}

/// first + FNV-1a-32(key) % count. count must not be 0.
pub const fn id_in_range(key: &str, first: u32, count: u32) -> u32 {
    first + fnv1a32(key.as_bytes()) % count
}

/// first + (FNV-1a-32(run_id) + index) % count: distinct for indexes 0 .. count-1.
pub const fn slot_in_range(run_id: &str, index: u32, first: u32, count: u32) -> u32 {
    first + ((fnv1a32(run_id.as_bytes()) as u64 + index as u64) % count as u64) as u32
}

/// A timeout in whole milliseconds, rounded up and capped at i32::MAX; 0 for 0 and less.
pub const fn ms_rounded_up(ns: i64) -> i32 {
    if ns <= 0 {
        return 0;
    }
    let ms = ns / 1_000_000 + (ns % 1_000_000 != 0) as i64;
    if ms > i32::MAX as i64 {
        i32::MAX
    } else {
        ms as i32
    }
}
