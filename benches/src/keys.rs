//! The key streams every workload draws from, and the cheap mixing they use.

/// Key of the `i`-th item of the initial fill.
#[inline(always)]
pub fn key(i: u64) -> u64 {
    i
}

/// A key that was never inserted (disjoint from every other stream).
#[inline(always)]
pub fn miss_key(i: u64) -> u64 {
    (1 << 63) | i
}

/// Fresh keys for insert measurements; `i` grows forever within a process.
#[inline(always)]
pub fn fresh_key(i: u64) -> u64 {
    (1 << 62) | i
}

/// SplitMix64: a cheap, well-mixed stream (random indices, synthetic hashes).
#[inline(always)]
pub fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `x` (32 random bits) scaled onto `0..n`.
#[inline(always)]
pub fn scale(x: u64, n: u64) -> u64 {
    ((x & 0xffff_ffff) * n) >> 32
}
