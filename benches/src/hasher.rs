//! The hasher every peer is given: XXH3 with our default seed, so that hashing
//! costs the same everywhere and only the tables differ.

use std::hash::{BuildHasher, Hasher};

use lockfree_cuckoo_filter::{DefaultHashBuilder, DEFAULT_SEED};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// XXH3 with our default seed, as a `Hasher + Default` (what the peers'
/// generic parameter wants). For a `u64` key it computes exactly what our
/// [`DefaultHashBuilder`] computes.
#[derive(Clone, Debug)]
pub struct Xxh3(u64);

impl Default for Xxh3 {
    fn default() -> Self {
        Self(DEFAULT_SEED)
    }
}

impl Hasher for Xxh3 {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxh3_64_with_seed(bytes, self.0);
    }
}

/// A hash builder check: our filter hashes a `u64` key exactly as [`Xxh3`].
pub fn same_hash(k: u64) -> bool {
    let mut h = Xxh3::default();
    h.write_u64(k);
    h.finish() == DefaultHashBuilder::with_seed(DEFAULT_SEED).hash_one(k)
}
