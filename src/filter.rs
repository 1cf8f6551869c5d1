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
    /// The load, in thousandths, the table was sized for: its layout's
    /// [`full_load`](FingerprintBits::full_load), or where the builder sized
    /// it for a rate, a load from `MIN_LOAD` to its
    /// [`max_load`](FingerprintBits::max_load). The capacity follows from it.
    pub(crate) sized_for: u32,
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
    /// A filter of `buckets` buckets of `bits`' layout, sized for `sized_for`
    /// thousandths of load.
    pub(crate) fn from_parts(
        bits: FingerprintBits,
        buckets: u64,
        sized_for: u32,
        hasher: S,
    ) -> Result<Self, BuildError> {
        let table = AnyTable::new(bits, buckets)?;
        Ok(Self {
            table,
            hasher,
            sized_for,
        })
    }

    /// The load the table was sized for, as the byte format records it: 0
    /// for the layout's full load, else the load in thousandths.
    pub(crate) fn sizing_field(&self) -> u64 {
        if self.sized_for == self.table.bits().full_load() {
            0
        } else {
            u64::from(self.sized_for)
        }
    }

    /// Inserts an item given by its 64-bit hash. The hash must be well mixed
    /// (the output of a good hasher): its low 32 bits choose the bucket and its
    /// high 32 bits the fingerprint.
    ///
    /// Inserting the same hash k times stores k copies; up to
    /// `2 · slots_per_bucket()` fit (two buckets: 8 at the default width, see
    /// [`FingerprintBits::slots_per_bucket`]), and each can be removed once.
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

    /// Inserts an item given by its 64-bit hash unless it is present: see
    /// [`insert_if_absent`](Self::insert_if_absent), which this is after
    /// hashing.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// assert_eq!(f.insert_hash_if_absent(0x9e37_79b9_7f4a_7c15), Ok(true));
    /// assert_eq!(f.insert_hash_if_absent(0x9e37_79b9_7f4a_7c15), Ok(false));
    /// assert_eq!(f.len(), 1);
    /// ```
    #[inline]
    pub fn insert_hash_if_absent(&self, hash: u64) -> Result<bool, InsertError> {
        self.table
            .insert_hash_if_absent(hash)
            .map_err(|_| InsertError::Full)
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

    /// How many copies of an item with this 64-bit hash the filter holds: see
    /// [`count`](Self::count), which this is after hashing.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert_hash(0xa54f_f53a_5f1d_36f1)?;
    /// f.insert_hash(0xa54f_f53a_5f1d_36f1)?;
    /// assert_eq!(f.count_hash(0xa54f_f53a_5f1d_36f1), 2);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    #[inline]
    pub fn count_hash(&self, hash: u64) -> usize {
        self.table.count_hash(hash)
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
    /// than the caches, and on small ones too: a pipeline over the whole
    /// slice, in groups of 16, requests the buckets of the group two ahead
    /// while it compares the current one, so their cache misses overlap.
    /// Answers `min(hashes.len(), out.len())` lookups and returns that number.
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
    /// Exactly, it is the number of fingerprints in the table. The two differ
    /// only if an item that was never inserted (or was removed as often as it
    /// was inserted) is removed: a filter cannot tell it from a colliding
    /// item, and its remove may succeed. If it takes the extra copy of an
    /// insert's relocation in flight, the relocation counts that copy back
    /// in, and `len` stays the number of fingerprints.
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
    /// capacity it was built with, and what the same builder options would
    /// ask for to get a table of this size. Inserts of that many distinct
    /// items succeed (the table is sized for a load of 94 %, 97 % for the
    /// ranked layouts, 91 % for the ranked three-slot one, below the load
    /// their inserts reach; or for less,
    /// where the builder sized it down for a
    /// [false-positive rate](crate::Builder::false_positive_rate), which
    /// then holds with this many items in the filter); more usually fit
    /// too, up to about [`slots`](Self::slots).
    ///
    /// Not for every seed: nine items whose bucket pairs coincide overfill
    /// their pair, in any table of more than two buckets, so an insert can
    /// fail before the capacity, with a small probability that falls with the
    /// table's size. The sizing leaves small tables room for that: over 4000
    /// seeds of every width, tables of 6 to 12 buckets refused no insert
    /// before their capacity (`tests/capacity.rs`), and in 400 000 tables of
    /// each such size, at most one did.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(10_000_000);
    /// assert!(f.capacity() >= 10_000_000 && f.capacity() < 10_001_000);
    /// assert_eq!(f.slots(), 10_644_832);
    /// ```
    pub fn capacity(&self) -> usize {
        crate::builder::capacity_at(self.table.buckets(), self.table.bits(), self.sized_for)
    }

    /// The number of slots (`bucket_count` times the layout's
    /// [`slots_per_bucket`](FingerprintBits::slots_per_bucket), four at the
    /// default width): an upper bound on [`len`](Self::len).
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

    /// The number of buckets, of
    /// [`slots_per_bucket`](FingerprintBits::slots_per_bucket) slots each
    /// (four at the default width).
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
    /// up to 0.93 to 0.99, by layout (0.95 at the default width; see
    /// [Limits](crate#limits)).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(1000);
    /// assert_eq!(f.load_factor(), 0.0);
    /// for i in 0..1000 {
    ///     f.insert(&i)?;
    /// }
    /// // 1000 items in 1136 slots.
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
    /// // 16-bit fingerprints, sized for a load of 94 %: about 2.1 MB.
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

    /// Removes every item, while other threads may go on using the filter
    /// (`&self`).
    ///
    /// What the others see:
    ///
    /// * **After `clear` returns**, the filter behaves as a fresh one that
    ///   then received the operations that overlapped the clear: an item
    ///   inserted after `clear` returned is present (no false negatives), and
    ///   once no operation is in flight, [`len`](Self::len) is exact: it
    ///   equals the number of fingerprints in the table.
    /// * **Items inserted before `clear` was called** are removed, with one
    ///   exception: a fingerprint whose bucket pair shares a lock-free
    ///   relocation stripe (one of up to 256 groups of buckets) with an insert
    ///   that is moving a fingerprint, or with an
    ///   [`insert_if_absent`](Self::insert_if_absent) that has not yet
    ///   answered, at the moment the sweep reaches it (and again when the
    ///   sweep retries it at the end) is kept. Such survivors stay counted by
    ///   `len`, as if inserted during the clear. A clear with no insert
    ///   running alongside removes everything.
    /// * **Operations that overlap the clear** may or may not see its effect:
    ///   a lookup may find an item the clear is about to remove; an insert
    ///   that overlaps it may survive it or not; a remove may find its item or
    ///   not, and answers accordingly. No operation waits for the clear, and
    ///   the clear waits for none.
    ///
    /// The sweep visits every word of the table once (twice for words that
    /// kept something): about as long as writing the table's memory.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::thread;
    /// use lockfree_cuckoo_filter::CuckooFilter;
    ///
    /// let f = Arc::new(CuckooFilter::with_capacity(10_000));
    /// for i in 0..5000u32 {
    ///     f.insert(&i)?;
    /// }
    /// let reader = {
    ///     let f = Arc::clone(&f);
    ///     thread::spawn(move || (0..5000u32).filter(|i| f.contains(i)).count())
    /// };
    /// f.clear(); // the reader keeps going, and sees some items or none
    /// let _seen = reader.join().unwrap(); // 0 to 5000, as the threads ran
    /// assert!(f.is_empty() && !f.contains(&1u32));
    /// f.insert("after")?;
    /// assert!(f.contains("after"));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    ///
    /// # A time window with two generations
    ///
    /// To remember what was seen in the last one to two periods (say, request
    /// ids for deduplication), keep two filters and rotate: insert into the
    /// current one, look up in both, and at the end of a period clear the
    /// older one and make it current. Items then live between one and two
    /// periods, and memory stays fixed.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use lockfree_cuckoo_filter::{CuckooFilter, InsertError};
    ///
    /// struct Window {
    ///     generations: [CuckooFilter; 2],
    ///     current: AtomicUsize,
    /// }
    ///
    /// impl Window {
    ///     fn new(per_period: usize) -> Self {
    ///         Self {
    ///             generations: [0, 1].map(|_| CuckooFilter::with_capacity(per_period)),
    ///             current: AtomicUsize::new(0),
    ///         }
    ///     }
    ///     /// True the first time an id is seen in the window.
    ///     fn first_sighting(&self, id: &str) -> Result<bool, InsertError> {
    ///         let current = self.current.load(Ordering::Acquire);
    ///         if self.generations[1 - current].contains(id) {
    ///             return Ok(false);
    ///         }
    ///         self.generations[current].insert_if_absent(id)
    ///     }
    ///     /// At the end of each period (one thread, say a timer).
    ///     fn rotate(&self) {
    ///         let older = 1 - self.current.load(Ordering::Acquire);
    ///         self.generations[older].clear();
    ///         self.current.store(older, Ordering::Release);
    ///     }
    /// }
    ///
    /// let w = Window::new(1000);
    /// assert_eq!(w.first_sighting("req-1"), Ok(true));
    /// assert_eq!(w.first_sighting("req-1"), Ok(false));
    /// w.rotate(); // req-1 is one period old: still remembered
    /// assert_eq!(w.first_sighting("req-1"), Ok(false));
    /// w.rotate(); // two periods: forgotten
    /// assert_eq!(w.first_sighting("req-1"), Ok(true));
    /// ```
    ///
    /// An insert that loaded `current` just before a rotation lands in the
    /// generation that just became the older one, and lives one period
    /// instead of two; a filter sized for one period's items never needs to
    /// grow.
    pub fn clear(&self) {
        self.table.clear()
    }
}

impl<S: BuildHasher> CuckooFilter<S> {
    /// Inserts an item. `Err(InsertError::Full)` when no room can be made; the
    /// filter is then unchanged: no other item is evicted or lost. While a
    /// snapshot ([`to_bytes`](Self::to_bytes), [`write_to`](Self::write_to))
    /// of the filter runs, an insert near full has fewer ways to make room
    /// (no relocation may carry an item backward across the snapshot's
    /// front), and may find none where it otherwise would.
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

    /// Inserts the item unless it is present: `Ok(true)` when a copy was added
    /// because none was found, `Ok(false)` when the item was found (possibly
    /// falsely: a false positive, or a copy of another item with the same
    /// fingerprint and buckets) and nothing was added. `Err(InsertError::Full)`
    /// when no room could be made; nothing was added then either.
    ///
    /// On one thread this is exactly `if contains { false } else { insert;
    /// true }`, and each item holds at most one copy. With other threads:
    ///
    /// * **Nothing is lost.** `Ok(false)` means a copy was in the filter at
    ///   some moment during the call. Calls racing each other for one item,
    ///   with no remove of it, leave the item present: at least one of them
    ///   answers `Ok(true)`.
    /// * **Every `Ok(true)` adds exactly one copy**, every `Ok(false)` none.
    ///   So for items only ever inserted with `insert_if_absent`,
    ///   [`len`](Self::len) equals the number of `Ok(true)` answers (once no
    ///   operation is in flight), and each item holds as many copies as it got
    ///   `Ok(true)`s, and needs that many removes.
    /// * **Usually one `Ok(true)` per item**, not always. Racers that aim at
    ///   the same bucket word resolve to one `Ok(true)`: the put expects a word
    ///   without the fingerprint, and a racer whose copy nonetheless doubled
    ///   one already in its word takes it back. Racers whose copies land in
    ///   different words (the item's first bucket filled up between them, or
    ///   a relocation moved one away) may each answer `Ok(true)`. Measured
    ///   (`tests/if_absent.rs`, 2 cores): 0 to 0.004 % extra `Ok(true)`s with
    ///   4 threads inserting the same 200 000 keys in the same order into a
    ///   filter of capacity 200 000, none at capacity 400 000.
    ///
    /// Use it to deduplicate (first sighting of a request id, of a URL to
    /// crawl) when an occasional second "first" is acceptable; where it is
    /// not, decide first sightings elsewhere (a lock, or one owner per key).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use lockfree_cuckoo_filter::CuckooFilter;
    ///
    /// let f = CuckooFilter::with_capacity(10_000);
    /// assert_eq!(f.insert_if_absent("apple"), Ok(true));
    /// assert_eq!(f.insert_if_absent("apple"), Ok(false));
    /// assert_eq!(f.len(), 1);
    ///
    /// // Four threads offer the same keys: every key is in, and `len` counts
    /// // the `Ok(true)`s.
    /// let firsts = AtomicUsize::new(0);
    /// std::thread::scope(|s| {
    ///     for _ in 0..4 {
    ///         s.spawn(|| {
    ///             for i in 0..1000u32 {
    ///                 if f.insert_if_absent(&i).unwrap() {
    ///                     firsts.fetch_add(1, Ordering::Relaxed);
    ///                 }
    ///             }
    ///         });
    ///     }
    /// });
    /// let firsts = firsts.load(Ordering::Relaxed);
    /// assert!((0..1000u32).all(|i| f.contains(&i)));
    /// assert_eq!(f.len(), 1 + firsts);
    /// // About 1000: fewer for keys that are false positives of earlier ones,
    /// // more for the rare racers that both answer `Ok(true)`.
    /// assert!(firsts > 990 && firsts < 1010, "{firsts}");
    /// ```
    #[inline]
    pub fn insert_if_absent<T: Hash + ?Sized>(&self, item: &T) -> Result<bool, InsertError> {
        self.insert_hash_if_absent(self.hasher.hash_one(item))
    }

    /// Whether the item may be in the filter: always true for an item inserted
    /// and not removed; true with small probability for any other.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DEFAULT_SEED};
    /// // A fixed seed, so that "pear" is not one of the rare false positives
    /// // (about one filter in 10^5 would have it so, with random seeds).
    /// let f = CuckooFilter::builder().capacity(100).seed(DEFAULT_SEED).build()?;
    /// f.insert("apple")?;
    /// assert!(f.contains("apple"));
    /// assert!(!f.contains("pear"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline(always)]
    pub fn contains<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(item))
    }

    /// How many copies of the item the filter holds: every insert of it
    /// adds one, every remove takes one. At least the number of copies
    /// inserted before the call began and not removed before it returned;
    /// more by the copies of other items that share its fingerprint and
    /// buckets (each with the false-positive probability), and, while one
    /// of its copies moves (an insert's relocation, or out of the stash
    /// after a snapshot), by that copy, which the filter holds twice for a
    /// moment.
    ///
    /// Slower than [`contains`](Self::contains), which may believe a hit
    /// without validating it: a count validates every look against
    /// concurrent relocations (see [`implementation`](crate::implementation)).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DEFAULT_SEED};
    /// let f = CuckooFilter::builder().capacity(100).seed(DEFAULT_SEED).build()?;
    /// f.insert("apple")?;
    /// f.insert("apple")?;
    /// assert_eq!(f.count("apple"), 2);
    /// f.remove("apple");
    /// assert_eq!(f.count("apple"), 1);
    /// assert_eq!(f.count("pear"), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, item: &T) -> usize {
        self.count_hash(self.hasher.hash_one(item))
    }

    /// Answers [`contains`](Self::contains) for each item, writing `out[k]`
    /// for `items[k]`; faster than one call per item on large tables (see
    /// [`contains_hash_batch`](Self::contains_hash_batch)). Answers
    /// `min(items.len(), out.len())` items and returns that number.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DEFAULT_SEED};
    /// let f = CuckooFilter::builder().capacity(100).seed(DEFAULT_SEED).build()?;
    /// f.insert("a")?;
    /// let mut out = [false; 3];
    /// f.contains_batch(&["a", "b", "a"], &mut out);
    /// assert_eq!(out, [true, false, true]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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
        Self::from_parts(bits, buckets, bits.full_load(), hasher)
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
