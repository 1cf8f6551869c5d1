//! The default hasher: XXH3, fed little-endian bytes, with a fixed seed.
//!
//! Filters are saved as bytes and loaded on other machines, so the default must
//! give the same 64 bits for the same item everywhere. `std`'s `DefaultHasher`
//! is randomly seeded and may change between releases; the in-memory hashers of
//! `foldhash`, `ahash` and `rapidhash` reserve the right to change too. XXH3 is a
//! frozen specification (since xxHash 0.8), fast on short keys, and passes
//! SMHasher; `xxhash-rust` implements it without unsafe platform code.
//!
//! [`Hash`](std::hash::Hash) implementations feed integers through
//! `write_u32` and friends, whose default forwards native-endian bytes, and
//! `usize` is 4 or 8 bytes depending on the target. [`StableHasher`] overrides
//! every integer write to use little-endian bytes and widens `usize`/`isize` to
//! 64 bits, so that the bytes hashed, and therefore the hash, are the same on
//! every platform.

use std::hash::{BuildHasher, Hasher};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The seed of [`DefaultHashBuilder::default`]: fixed, so that filters built
/// anywhere agree.
pub const DEFAULT_SEED: u64 = 0x5851_f42d_4c95_7f2d;

/// Builds [`StableHasher`]s with one seed: the default hasher of
/// [`CuckooFilter`](crate::CuckooFilter).
///
/// # Examples
///
/// ```
/// use std::hash::BuildHasher;
/// use lockfree_cuckoo_filter::DefaultHashBuilder;
///
/// let a = DefaultHashBuilder::default();
/// let b = DefaultHashBuilder::with_seed(lockfree_cuckoo_filter::DEFAULT_SEED);
/// // The same item hashes the same way on every run and every machine.
/// assert_eq!(a.hash_one("apple"), b.hash_one("apple"));
/// assert_ne!(a.hash_one("apple"), DefaultHashBuilder::with_seed(7).hash_one("apple"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DefaultHashBuilder {
    seed: u64,
}

impl DefaultHashBuilder {
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
    /// assert_eq!(DefaultHashBuilder::default().seed(), DEFAULT_SEED);
    /// ```
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

impl Default for DefaultHashBuilder {
    fn default() -> Self {
        Self::with_seed(DEFAULT_SEED)
    }
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
/// let mut h = DefaultHashBuilder::default().build_hasher();
/// 42u32.hash(&mut h);
/// let a = h.finish();
/// // `usize` is hashed as 8 little-endian bytes on every target.
/// let mut h = DefaultHashBuilder::default().build_hasher();
/// 42u64.hash(&mut h);
/// assert_ne!(a, h.finish());
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
        let b = DefaultHashBuilder::default();
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

    const PINNED: [u64; 4] = [
        5_120_643_608_292_178_967,
        10_093_987_806_283_797_161,
        14_023_151_423_803_966_537,
        5_971_475_951_447_125_908,
    ];
}
