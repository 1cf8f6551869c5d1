//! The public filter: a table of the chosen width, and the hasher.

use std::fmt;
use std::hash::{BuildHasher, Hash};

use crate::builder::Builder;
use crate::error::{BuildError, InsertError};
use crate::fingerprint::FingerprintBits;
use crate::hasher::DefaultHashBuilder;
use crate::table::AnyTable;

/// A concurrent, lock-free cuckoo filter: an approximate set of items.
///
/// `contains` never answers `false` for an item that was inserted and not
/// removed (no false negatives), and answers `true` for an item never inserted
/// with a small probability set by the fingerprint width (false positives).
/// Every method takes `&self`: share one filter among threads with
/// [`Arc`](std::sync::Arc).
///
/// ```
/// use std::sync::Arc;
/// use std::thread;
/// use lockfree_cuckoo_filter::CuckooFilter;
///
/// let filter = Arc::new(CuckooFilter::with_capacity(10_000));
/// let handles: Vec<_> = (0..4u64)
///     .map(|t| {
///         let filter = Arc::clone(&filter);
///         thread::spawn(move || {
///             for i in 0..1000 {
///                 filter.insert(&(t, i)).unwrap();
///             }
///         })
///     })
///     .collect();
/// for h in handles {
///     h.join().unwrap();
/// }
/// assert_eq!(filter.len(), 4000);
/// assert!(filter.contains(&(3u64, 999)));
/// ```
pub struct CuckooFilter<S = DefaultHashBuilder> {
    pub(crate) table: AnyTable,
    pub(crate) hasher: S,
}

impl CuckooFilter {
    /// A filter that accepts `capacity` distinct items, with 16-bit
    /// fingerprints and the default hasher, seeded at random for this filter
    /// (see [`DefaultHashBuilder`]; give a seed with
    /// [`builder().seed(..)`](Builder::seed) to merge filters or to get the
    /// same filter on every run).
    ///
    /// # Panics
    ///
    /// If the table cannot be addressed (more than 2^32 buckets, about 16·10^9
    /// items) or allocated, like [`Vec::with_capacity`]. Use
    /// [`try_with_capacity`](Self::try_with_capacity) or the
    /// [`builder`](Self::builder) to get an error instead.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(1_000_000);
    /// assert!(f.capacity() >= 1_000_000);
    /// let empty = CuckooFilter::with_capacity(0);
    /// assert!(empty.is_empty());
    /// // Each filter has its own seed.
    /// assert_ne!(f.hasher(), empty.hasher());
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        match Self::try_with_capacity(capacity) {
            Ok(f) => f,
            Err(e) => panic!("CuckooFilter::with_capacity({capacity}): {e}"),
        }
    }

    /// Like [`with_capacity`](Self::with_capacity), but returns an error
    /// instead of panicking.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, CuckooFilter};
    /// assert!(CuckooFilter::try_with_capacity(1000).is_ok());
    /// assert!(matches!(
    ///     CuckooFilter::try_with_capacity(usize::MAX),
    ///     Err(BuildError::CapacityTooLarge { .. })
    /// ));
    /// ```
    pub fn try_with_capacity(capacity: usize) -> Result<Self, BuildError> {
        Self::builder().capacity(capacity).build()
    }

    /// A builder for the options: capacity (required), false-positive rate,
    /// fingerprint width, seed or hasher.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::builder()
    ///     .capacity(1_000_000)
    ///     .false_positive_rate(0.001)
    ///     .build()?;
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn builder() -> Builder {
        Builder::default()
    }
}

impl<S> CuckooFilter<S> {
    pub(crate) fn from_parts(
        bits: FingerprintBits,
        buckets: u64,
        hasher: S,
    ) -> Result<Self, BuildError> {
        let table = AnyTable::new(bits, buckets)?;
        Ok(Self { table, hasher })
    }

    /// Inserts an item given by its 64-bit hash. The hash must be well mixed
    /// (the output of a good hasher): its low 32 bits choose the bucket and its
    /// high 32 bits the fingerprint.
    ///
    /// Inserting the same hash k times stores k copies; up to 8 fit (two
    /// buckets of four), and each can be removed once.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert_hash(0x9e37_79b9_7f4a_7c15)?;
    /// assert!(f.contains_hash(0x9e37_79b9_7f4a_7c15));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    #[inline(always)]
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.table.insert_hash(hash).map_err(|_| InsertError::Full)
    }

    /// Whether an item with this 64-bit hash may be in the filter.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// assert!(!f.contains_hash(0x3c6e_f372_fe94_f82b));
    /// ```
    #[inline(always)]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.table.contains_hash(hash)
    }

    /// Removes one copy of an item given by its 64-bit hash; true if one was
    /// there.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert_hash(0xbb67_ae85_84ca_a73b)?;
    /// assert!(f.remove_hash(0xbb67_ae85_84ca_a73b));
    /// assert!(!f.remove_hash(0xbb67_ae85_84ca_a73b));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    #[inline]
    pub fn remove_hash(&self, hash: u64) -> bool {
        self.table.remove_hash(hash)
    }

    /// Answers [`contains_hash`](Self::contains_hash) for each hash, writing
    /// `out[k]` for `hashes[k]`. Faster than one call per hash on tables larger
    /// than the caches: a pipeline over the whole slice issues each lookup's
    /// bucket loads 16 lookups ahead of its comparison, so their cache misses
    /// overlap. Answers `min(hashes.len(), out.len())` lookups and returns that
    /// number.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert_hash(0x9e37_79b9_7f4a_7c15)?;
    /// let mut out = [false; 2];
    /// let hashes = [0x9e37_79b9_7f4a_7c15, 0x6a09_e667_f3bc_c908];
    /// assert_eq!(f.contains_hash_batch(&hashes, &mut out), 2);
    /// assert_eq!(out, [true, false]);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> usize {
        let n = hashes.len().min(out.len());
        self.table
            .contains_batch(&hashes[..n], &mut out[..n], |&h| h);
        n
    }

    /// The number of items: successful inserts minus successful removes. Exact
    /// when no operation is in flight; while others run, a recent value.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert("a")?;
    /// f.insert("a")?;
    /// assert_eq!(f.len(), 2);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether [`len`](Self::len) is 0.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// assert!(CuckooFilter::with_capacity(10).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of distinct items the filter is built to hold: at least the
    /// capacity it was built with, and what
    /// [`with_capacity`](CuckooFilter::with_capacity) would ask for to get a
    /// table of this size. Inserts of that many distinct items succeed (the
    /// table is sized for a load of 94 %, below the 95 % and more its inserts
    /// reach); more usually fit too, up to about [`slots`](Self::slots).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(10_000_000);
    /// assert!(f.capacity() >= 10_000_000 && f.capacity() < 10_001_000);
    /// assert_eq!(f.slots(), 10_644_824);
    /// ```
    pub fn capacity(&self) -> usize {
        self.table.capacity()
    }

    /// The number of slots (four per bucket): an upper bound on
    /// [`len`](Self::len).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(1000);
    /// assert!(f.slots() > f.capacity() && f.slots() < 1200);
    /// assert_eq!(f.slots() as u64, 4 * f.bucket_count());
    /// ```
    pub fn slots(&self) -> usize {
        self.table.slots()
    }

    /// The number of buckets (of four slots each).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(1000);
    /// assert_eq!(f.slots() as u64, 4 * f.bucket_count());
    /// ```
    pub fn bucket_count(&self) -> u64 {
        self.table.buckets()
    }

    /// The fraction of slots in use: `len / slots`. Inserts reliably succeed
    /// up to 0.95.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(1000);
    /// assert_eq!(f.load_factor(), 0.0);
    /// for i in 0..1000 {
    ///     f.insert(&i)?;
    /// }
    /// // 1000 items in 1128 slots.
    /// assert!(f.load_factor() > 0.88 && f.load_factor() < 0.89);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn load_factor(&self) -> f64 {
        self.table.load_factor()
    }

    /// Bytes used by the table and its side structures (relocation counters,
    /// item count), not counting the hasher's heap memory.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(1_000_000);
    /// // 16-bit fingerprints at 95 % load: about 2.1 MB.
    /// assert!(f.memory_usage() < 2_400_000);
    /// ```
    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>() + self.table.memory_usage()
    }

    /// The fingerprint width.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits};
    /// assert_eq!(CuckooFilter::with_capacity(1).fingerprint_bits(), FingerprintBits::Bits16);
    /// ```
    pub fn fingerprint_bits(&self) -> FingerprintBits {
        self.table.bits()
    }

    /// The false-positive rate bound at the current load.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// assert_eq!(f.false_positive_rate(), 0.0);
    /// ```
    pub fn false_positive_rate(&self) -> f64 {
        self.table.false_positive_rate()
    }

    /// The hasher items are hashed with.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder};
    /// let f = CuckooFilter::builder().capacity(1).seed(42).build()?;
    /// assert_eq!(*f.hasher(), DefaultHashBuilder::with_seed(42));
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Removes every item. Takes `&mut self`, so no other operation can be in
    /// flight.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let mut f = CuckooFilter::with_capacity(100);
    /// f.insert("a")?;
    /// f.clear();
    /// assert!(f.is_empty() && !f.contains("a"));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn clear(&mut self) {
        self.table.clear()
    }
}

impl<S: BuildHasher> CuckooFilter<S> {
    /// Inserts an item. `Err(InsertError::Full)` when no room can be made; the
    /// filter is then unchanged: no other item is evicted or lost.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert("apple")?;
    /// f.insert(&42u64)?;
    /// assert!(f.contains("apple") && f.contains(&42u64));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    #[inline(always)]
    pub fn insert<T: Hash + ?Sized>(&self, item: &T) -> Result<(), InsertError> {
        self.insert_hash(self.hasher.hash_one(item))
    }

    /// Whether the item may be in the filter: always true for an item inserted
    /// and not removed; true with small probability for any other.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert("apple")?;
    /// assert!(f.contains("apple"));
    /// assert!(!f.contains("pear"));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    #[inline(always)]
    pub fn contains<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(item))
    }

    /// Answers [`contains`](Self::contains) for each item, writing `out[k]`
    /// for `items[k]`; faster than one call per item on large tables (see
    /// [`contains_hash_batch`](Self::contains_hash_batch)). Answers
    /// `min(items.len(), out.len())` items and returns that number.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert("a")?;
    /// let mut out = [false; 3];
    /// f.contains_batch(&["a", "b", "a"], &mut out);
    /// assert_eq!(out, [true, false, true]);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn contains_batch<T: Hash>(&self, items: &[T], out: &mut [bool]) -> usize {
        let n = items.len().min(out.len());
        let hasher = &self.hasher;
        self.table
            .contains_batch(&items[..n], &mut out[..n], |item| hasher.hash_one(item));
        n
    }

    /// Removes one copy of the item; true if one was there.
    ///
    /// Only remove items you inserted: removing an item never inserted can,
    /// with the false-positive probability, remove another item that shares
    /// its fingerprint and buckets, which then reads as absent.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert("apple")?;
    /// assert!(f.remove("apple"));
    /// assert!(!f.contains("apple"));
    /// assert!(!f.remove("apple"));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    #[inline]
    pub fn remove<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.remove_hash(self.hasher.hash_one(item))
    }
}

/// For tests and the `test-hooks` feature ([`crate::test_hooks`]).
#[cfg(any(test, feature = "test-hooks"))]
impl<S> CuckooFilter<S> {
    /// A filter of exactly `buckets` buckets (even, 2 to 2^32).
    pub(crate) fn with_buckets(
        buckets: u64,
        bits: FingerprintBits,
        hasher: S,
    ) -> Result<Self, BuildError> {
        if !crate::table::valid_bucket_count(buckets) {
            return Err(BuildError::CapacityTooLarge {
                capacity: usize::MAX,
            });
        }
        Self::from_parts(bits, buckets, hasher)
    }
}

impl<S> fmt::Debug for CuckooFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CuckooFilter")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("slots", &self.slots())
            .field("fingerprint_bits", &self.fingerprint_bits().bits())
            .field("load_factor", &self.load_factor())
            .field("memory_usage", &self.memory_usage())
            .finish()
    }
}

// Compile-time check of the promised auto traits.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CuckooFilter>();
};
