//! Hooks for this crate's own loom models (`loom-tests/`), stress binary
//! (`stress/`) and tests: build a table of an exact size, aim items at chosen
//! buckets, and read the table's slots.
//!
//! Compiled only with the `test-hooks` feature, which only those crates enable.
//! **Not part of the API and not covered by semver**: anything here may change
//! or go in any release.
//!
//! ```
//! use lockfree_cuckoo_filter::test_hooks::{self, TableHooks};
//! use lockfree_cuckoo_filter::{DefaultHashBuilder, FingerprintBits};
//!
//! let f = test_hooks::with_buckets(4, FingerprintBits::Bits16, DefaultHashBuilder::default())?;
//! let hash = f.hash_for(2, 0x5a);
//! assert_eq!(f.position(hash).0, 2);
//! f.insert_hash(hash)?;
//! assert_eq!(f.copies(hash), 1);
//! assert_eq!(f.fingerprints().len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "rayon")]
pub use crate::bulk::ScratchStats;
use crate::error::{BuildError, InsertError};
use crate::fingerprint::FingerprintBits;
use crate::{CuckooFilter, GrowableCuckooFilter};

/// A filter of exactly `buckets` buckets (even, 2 to 2^32), of `bits`-bit
/// fingerprints, hashing with `hasher`. Any other bucket count is refused
/// with [`BuildError::CapacityTooLarge`].
pub fn with_buckets<S>(
    buckets: u64,
    bits: FingerprintBits,
    hasher: S,
) -> Result<CuckooFilter<S>, BuildError> {
    CuckooFilter::with_buckets(buckets, bits, hasher)
}

/// The loads, as fractions of the slots, a table of `bits`' layout is
/// sized for: without a rate (its full load), and at most when the builder
/// is asked for one (its max load).
pub fn sizing_loads(bits: FingerprintBits) -> (f64, f64) {
    let fraction = |thousandths: u32| f64::from(thousandths) / 1000.0;
    (fraction(bits.full_load()), fraction(bits.max_load()))
}

/// A look inside a filter's table.
pub trait TableHooks {
    /// A hash whose first bucket is `bucket` and whose fingerprint is `fp`
    /// (`fp` in `1..=2^bits - 1`).
    fn hash_for(&self, bucket: u64, fp: u32) -> u64;

    /// `(first bucket, second bucket, fingerprint)` of a hash.
    fn position(&self, hash: u64) -> (u64, u64, u32);

    /// Every occupied slot as `(bucket, fingerprint)`, and every entry of
    /// the table's stash at its pair's lower bucket, in bucket order; exact
    /// when no operation is in flight.
    fn fingerprints(&self) -> Vec<(u64, u32)>;

    /// Copies of the fingerprint of `hash` in its bucket pair; exact when no
    /// operation is in flight.
    fn copies(&self, hash: u64) -> usize;

    /// Puts the item of `hash` into its first bucket, else its second, and
    /// counts it; false (and nothing changed) if both are full. Unlike an
    /// insert it takes no path and does not choose the emptier bucket, so a
    /// model's set-up knows where each item lies.
    fn put_hash(&self, hash: u64) -> bool;

    /// Puts the item of `hash` into the table's stash, where an insert puts
    /// an item no path could place while a snapshot ran, and counts it.
    fn stash_hash(&self, hash: u64);

    /// Moves the stash's entries into the table where room can be made, as
    /// a snapshot does when it ends.
    fn drain_stash(&self);

    /// [`insert_hash_if_absent`](CuckooFilter::insert_hash_if_absent), calling
    /// `between` once it has put its copy, before it decides whether to keep
    /// it (only if it put one): a model can pause it there.
    fn insert_hash_if_absent_pausing(
        &self,
        hash: u64,
        between: impl FnOnce(),
    ) -> Result<bool, InsertError>;
}

impl<S> TableHooks for CuckooFilter<S> {
    fn hash_for(&self, bucket: u64, fp: u32) -> u64 {
        self.table.hash_for(bucket, fp)
    }

    fn position(&self, hash: u64) -> (u64, u64, u32) {
        let p = self.table.position(hash);
        (p.i1, p.i2, p.fp)
    }

    fn fingerprints(&self) -> Vec<(u64, u32)> {
        self.table.fingerprints()
    }

    fn put_hash(&self, hash: u64) -> bool {
        self.table.put_hash(hash)
    }

    fn stash_hash(&self, hash: u64) {
        self.table.stash_hash(hash)
    }

    fn drain_stash(&self) {
        self.table.drain_stash()
    }

    fn copies(&self, hash: u64) -> usize {
        let (i1, i2, fp) = self.position(hash);
        self.fingerprints()
            .into_iter()
            .filter(|&(b, f)| f == fp && (b == i1 || b == i2))
            .count()
    }

    fn insert_hash_if_absent_pausing(
        &self,
        hash: u64,
        between: impl FnOnce(),
    ) -> Result<bool, InsertError> {
        self.table
            .insert_hash_if_absent_pausing(hash, between)
            .map_err(|_| InsertError::Full)
    }
}

/// Steps of a growable filter's growth and covering, one at a time, for the
/// loom models of covering (`loom-tests/tests/cover.rs`).
///
/// ```
/// use lockfree_cuckoo_filter::test_hooks::GrowableHooks;
/// use lockfree_cuckoo_filter::GrowableCuckooFilter;
///
/// let f = GrowableCuckooFilter::builder().initial_capacity(0).build()?;
/// let hash = f.hash_into(0, 1, 0x5a);
/// assert!(f.insert_hash_into(0, hash));
/// f.grow_now();
/// f.grow_now();
/// assert_eq!(f.covered_tables(), 0);
/// f.cover_now();
/// assert_eq!(f.covered_tables(), 1);
/// assert!(f.contains_hash(hash));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait GrowableHooks {
    /// Publishes one more table, as a growth does, but without covering.
    fn grow_now(&self);

    /// Puts the older tables behind the summary, as a growth does after
    /// publishing its table.
    fn cover_now(&self);

    /// How many of the oldest tables are behind the summary.
    fn covered_tables(&self) -> usize;

    /// Inserts the item of `hash` into table `table` of the chain (0 the
    /// oldest), as an insert that reaches an older table does (through a
    /// chain loaded before a growth, or past a crowded bucket pair), and
    /// records it; whether it went in.
    fn insert_hash_into(&self, table: usize, hash: u64) -> bool;

    /// Puts the item of `hash` into the stash of table `table` of the
    /// chain, counts it and records it, as an insert does that reaches an
    /// older table while a snapshot reads it and finds no path there.
    fn stash_hash_into(&self, table: usize, hash: u64);

    /// A hash whose first bucket in table `table` is `bucket` and whose
    /// fingerprint there is `fp`.
    fn hash_into(&self, table: usize, bucket: u64, fp: u32) -> u64;

    /// `(first bucket, second bucket, fingerprint)` of a hash in table
    /// `table`.
    fn position_in(&self, table: usize, hash: u64) -> (u64, u64, u32);
}

impl<S> GrowableHooks for GrowableCuckooFilter<S> {
    fn grow_now(&self) {
        self.grow_without_covering();
    }

    fn cover_now(&self) {
        self.cover();
    }

    fn covered_tables(&self) -> usize {
        self.covered_tables()
    }

    fn insert_hash_into(&self, table: usize, hash: u64) -> bool {
        self.insert_hash_into_table(table, hash)
    }

    fn stash_hash_into(&self, table: usize, hash: u64) {
        self.stash_hash_into_table(table, hash);
    }

    fn hash_into(&self, table: usize, bucket: u64, fp: u32) -> u64 {
        self.with_tables(|tables| tables[table].hash_for(bucket, fp))
    }

    fn position_in(&self, table: usize, hash: u64) -> (u64, u64, u32) {
        let p = self.with_tables(|tables| tables[table].position(hash));
        (p.i1, p.i2, p.fp)
    }
}

/// The item count's owned-shard indices (the crate keeps one set per
/// process), as a value of its own, for the loom model of how an index, and
/// the count in its shard, passes from one thread to the next.
///
/// ```
/// use lockfree_cuckoo_filter::test_hooks::ShardSlots;
///
/// let slots = ShardSlots::new(1);
/// assert_eq!(slots.take(), Some(0));
/// assert_eq!(slots.take(), None);
/// slots.give_back(0);
/// assert_eq!(slots.take(), Some(0));
/// ```
pub struct ShardSlots(crate::table::count::ShardSlots);

impl ShardSlots {
    /// `n` free indices, `0..n` (`n` at most the bits of a `usize`).
    pub fn new(n: usize) -> Self {
        Self(crate::table::count::ShardSlots::new(n))
    }

    /// A free index, now held by the caller (Acquire), or `None` if all are
    /// held.
    pub fn take(&self) -> Option<usize> {
        self.0.take()
    }

    /// Hands back index `k`, held by the caller (Release).
    pub fn give_back(&self, k: usize) {
        self.0.give_back(k)
    }
}

/// [`par_insert_all_with`](CuckooFilter::par_insert_all_with), also giving
/// what its scratch held, for the tests of the budget.
///
/// ```
/// use lockfree_cuckoo_filter::{test_hooks, BulkOptions, CuckooFilter};
///
/// let f = CuckooFilter::with_capacity(2_000_000);
/// let options = BulkOptions::new().scratch_bytes(16 * 50_000);
/// let (loaded, scratch) = test_hooks::par_insert_all_scratch(&f, 0..1_000_000u64, options);
/// assert_eq!(loaded, Ok(1_000_000));
/// assert!(scratch.peak_items <= 50_000 && scratch.passes >= 20);
/// ```
#[cfg(feature = "rayon")]
pub fn par_insert_all_scratch<S, T, I>(
    filter: &CuckooFilter<S>,
    items: I,
    options: crate::BulkOptions,
) -> (Result<usize, crate::BulkInsertError<T>>, ScratchStats)
where
    S: std::hash::BuildHasher + Sync,
    T: std::hash::Hash + Send,
    I: rayon::iter::IntoParallelIterator<Item = T>,
{
    filter.par_insert_all_metered(items, options)
}

/// `par_extend`'s load with `options` (`par_extend` itself uses the
/// defaults): `(inserted, did not fit, what its scratch held)`.
///
/// ```
/// use lockfree_cuckoo_filter::{test_hooks, BulkOptions, CuckooFilter};
///
/// let f = CuckooFilter::with_capacity(2_000_000);
/// let options = BulkOptions::new().scratch_bytes(8 * 50_000);
/// let (inserted, failed, scratch) = test_hooks::par_extend_scratch(&f, 0..1_000_000u64, options);
/// assert_eq!((inserted, failed), (1_000_000, 0));
/// assert!(scratch.peak_items <= 50_000);
/// ```
#[cfg(feature = "rayon")]
pub fn par_extend_scratch<S, T, I>(
    filter: &CuckooFilter<S>,
    items: I,
    options: crate::BulkOptions,
) -> (usize, usize, ScratchStats)
where
    S: std::hash::BuildHasher + Sync,
    T: std::hash::Hash + Send,
    I: rayon::iter::IntoParallelIterator<Item = T>,
{
    filter.par_extend_metered(items, options)
}
