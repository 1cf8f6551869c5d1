//! The default hasher: XXH3, fed little-endian bytes, with a seed that is
//! random per filter unless given.
//!
//! Filters are saved as bytes and loaded on other machines, so the default must
//! give the same 64 bits for the same item and seed everywhere (the seed is
//! saved with the filter). `std`'s `RandomState` is randomly keyed, and the
//! algorithm of its hashers (and of `DefaultHasher`) may change between
//! releases; the in-memory hashers of
//! `foldhash`, `ahash` and `rapidhash` reserve the right to change too. XXH3 is a
//! frozen specification (since xxHash 0.8), fast on short keys, and passes
//! SMHasher; `xxhash-rust` implements it.
//!
//! [`Hash`](std::hash::Hash) implementations feed integers through
//! `write_u32` and friends, whose default forwards native-endian bytes, and
//! `usize` is 4 or 8 bytes depending on the target. [`StableHasher`] overrides
//! every integer write to use little-endian bytes and widens `usize`/`isize` to
//! 64 bits, so that the bytes hashed, and therefore the hash, are the same on
//! every platform.
//!
//! Strings are the one key whose bytes this hasher cannot fix: `str` hashes
//! through `Hasher::write_str`, which stable Rust does not let a hasher
//! override, and whose default (the bytes, then `write_u8(0xff)`) `std` does
//! not promise to keep. It has not changed since Rust 1.0; the pinned hash of
//! `"apple"` in this module's tests fails on any toolchain that changes it
//! (and so would give saved string-keyed filters other hashes).

use std::hash::{BuildHasher, Hasher};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// A fixed, public seed, for filters that must be the same on every run: tests,
/// pinned encodings, examples whose output should not change. Pass it to
/// [`Builder::seed`](crate::Builder::seed) or
/// [`DefaultHashBuilder::with_seed`]. Being public, it is no secret: do not
/// use it for a filter that stores keys others choose (see
/// [`DefaultHashBuilder`]).
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, DEFAULT_SEED};
///
/// let build = || CuckooFilter::builder().capacity(100).seed(DEFAULT_SEED).build();
/// let (a, b) = (build()?, build()?);
/// a.insert("x")?;
/// b.insert("x")?;
/// // Same seed, same items: the same filter, byte for byte, on every run.
/// assert_eq!(a.to_bytes(), b.to_bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_SEED: u64 = 0x5851_f42d_4c95_7f2d;

/// Builds [`StableHasher`]s with one seed: the default hasher of
/// [`CuckooFilter`](crate::CuckooFilter).
///
/// [`new`](Self::new) and [`Default`] draw a random seed, one per call, like
/// `std`'s `RandomState`; filters get one by default. [`with_seed`](Self::with_seed)
/// fixes it, for filters that must agree (merging, comparing their bytes) or be
/// reproducible. The same seed gives the same hash on every platform, and the
/// byte format records the seed, so a saved filter loads anywhere.
///
/// # Keys chosen by others
///
/// A filter that stores or looks up keys an adversary chooses (clients of a
/// server) must keep its seed secret. With the seed, anyone can compute which
/// bucket pair and fingerprint a key gets, and so (a) aim nine keys at one
/// bucket pair, making the ninth insert fail with
/// [`InsertError::Full`](crate::InsertError::Full) long before the filter is
/// full (in a growable filter with
/// [`TooManyCopies`](crate::InsertError::TooManyCopies), or, while its newest
/// table is small, by growing it for nothing), and (b) forge false
/// positives: find keys never inserted that `contains` reports present,
/// for example to get a request past a filter that guards a cache or a block
/// list. A random seed makes both a matter of luck for someone who cannot see
/// it. Do not expose it: [`to_bytes`](crate::CuckooFilter::to_bytes) writes it
/// in the clear. XXH3 is fast, not a cryptographic function; where an attacker
/// can probe the filter adaptively and many times, a keyed pseudo-random
/// function such as SipHash (`std`'s `RandomState`, through
/// [`Builder::hasher`](crate::Builder::hasher)) is the stronger choice.
///
/// # Examples
///
/// ```
/// use std::hash::BuildHasher;
/// use lockfree_cuckoo_filter::{DefaultHashBuilder, DEFAULT_SEED};
///
/// let a = DefaultHashBuilder::with_seed(DEFAULT_SEED);
/// let b = DefaultHashBuilder::with_seed(DEFAULT_SEED);
/// // The same item and seed hash the same way on every run and every machine.
/// assert_eq!(a.hash_one("apple"), b.hash_one("apple"));
/// assert_ne!(a.hash_one("apple"), DefaultHashBuilder::with_seed(7).hash_one("apple"));
/// // Random seeds differ.
/// assert_ne!(DefaultHashBuilder::new(), DefaultHashBuilder::new());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DefaultHashBuilder {
    seed: u64,
}

impl DefaultHashBuilder {
    /// A builder with a seed drawn at random: unpredictable, and different on
    /// every call (as `std`'s `RandomState::new`).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder};
    ///
    /// let f = CuckooFilter::builder()
    ///     .capacity(100)
    ///     .hasher(DefaultHashBuilder::new())
    ///     .build()?;
    /// f.insert("x")?;
    /// assert!(f.contains("x"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new() -> Self {
        Self::with_seed(random_seed())
    }

    /// A builder whose hashers start from `seed`.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder};
    ///
    /// let f = CuckooFilter::builder()
    ///     .capacity(100)
    ///     .hasher(DefaultHashBuilder::with_seed(42))
    ///     .build()?;
    /// f.insert("x")?;
    /// assert!(f.contains("x"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn with_seed(seed: u64) -> Self {
        Self { seed }
    }

    /// The seed this builder's hashers start from.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{DefaultHashBuilder, DEFAULT_SEED};
    /// assert_eq!(DefaultHashBuilder::with_seed(DEFAULT_SEED).seed(), DEFAULT_SEED);
    /// ```
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

/// A random seed, as [`DefaultHashBuilder::new`].
impl Default for DefaultHashBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// 64 bits that no one can predict without the process's `RandomState` keys.
///
/// `std`'s `RandomState::new` keys SipHash-1-3 with 128 bits the operating
/// system's random source gave the thread, incremented on every call, so each
/// call hashes the counter below under a fresh secret key. The counter makes
/// the input differ too, across threads and calls. No dependency, no system
/// call after the first per thread.
fn random_seed() -> u64 {
    use std::collections::hash_map::RandomState;
    // A plain std atomic: a source of distinct values, not part of the
    // table's protocol (so not one of `crate::sync`'s loom atomics).
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    RandomState::new().hash_one(call)
}

impl BuildHasher for DefaultHashBuilder {
    type Hasher = StableHasher;

    #[inline]
    fn build_hasher(&self) -> StableHasher {
        StableHasher { state: self.seed }
    }
}

/// A platform-independent streaming hasher: each write is hashed with XXH3,
/// seeded by the state so far.
///
/// Most keys are hashed in one or two writes (an integer; a string and its
/// terminator), so chaining whole XXH3 calls costs no more than a buffering
/// streaming state, and every write is fully mixed before the next.
///
/// ```
/// use std::hash::{BuildHasher, Hash, Hasher};
/// use lockfree_cuckoo_filter::DefaultHashBuilder;
///
/// let builder = DefaultHashBuilder::with_seed(7);
/// let mut h = builder.build_hasher();
/// 42usize.hash(&mut h);
/// // `usize` is hashed as 8 little-endian bytes on every target...
/// assert_eq!(h.finish(), builder.hash_one(42u64));
/// // ...and each integer type as its own width.
/// assert_ne!(builder.hash_one(42u32), builder.hash_one(42u64));
/// ```
#[derive(Clone, Debug)]
pub struct StableHasher {
    state: u64,
}

impl Hasher for StableHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.state
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.state = xxh3_64_with_seed(bytes, self.state);
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write(&[i]);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_i8(&mut self, i: i8) {
        self.write_u8(i as u8);
    }
    #[inline]
    fn write_i16(&mut self, i: i16) {
        self.write_u16(i as u16);
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.write_u32(i as u32);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pinned outputs: if these change, every saved filter breaks.
    #[test]
    fn output_is_pinned() {
        let b = DefaultHashBuilder::with_seed(DEFAULT_SEED);
        let pinned = [
            b.hash_one(0u64),
            b.hash_one(1u64),
            b.hash_one("apple"),
            b.hash_one(usize::MAX),
        ];
        assert_eq!(pinned, PINNED);
        assert_eq!(b.hash_one(usize::MAX), b.hash_one(u64::MAX));
        assert_eq!(b.hash_one(-1isize), b.hash_one(u64::MAX));
    }

    #[test]
    fn random_seeds_differ() {
        let seeds: std::collections::HashSet<u64> = (0..1000)
            .map(|_| DefaultHashBuilder::new().seed())
            .collect();
        assert_eq!(seeds.len(), 1000);
        assert_ne!(DefaultHashBuilder::default(), DefaultHashBuilder::default());
    }

    const PINNED: [u64; 4] = [
        5_120_643_608_292_178_967,
        10_093_987_806_283_797_161,
        14_023_151_423_803_966_537,
        5_971_475_951_447_125_908,
    ];
}
