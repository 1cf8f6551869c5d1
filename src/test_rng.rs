//! Reproducible pseudo-random numbers for the unit tests: a xorshift64
//! generator (Marsaglia's 13/7/17), enough to spread test inputs, with no
//! dependency.

/// The generator from `seed` (not 0): each call gives the next 64 bits.
pub(crate) fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    debug_assert_ne!(seed, 0, "xorshift never leaves 0");
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
