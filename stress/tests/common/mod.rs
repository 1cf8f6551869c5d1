//! Helpers shared by the integration tests (the same as the root package's
//! `tests/common/mod.rs`: integration tests of two packages cannot share a
//! module without a crate of their own, and this is one function).

/// splitmix64's finaliser: distinct, well-mixed 64-bit hashes from a counter,
/// the same on every run, so failures reproduce.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
