//! Parallel bulk loading with rayon: [`CuckooFilter::par_insert_all`] and
//! [`ParallelExtend`].
//!
//! On a table larger than the caches, an insert loop pays a cache miss (and a
//! TLB miss) per item, and cannot overlap them: an insert's compare-and-swap is
//! a locked instruction, a full barrier on x86-64, so the next item's load
//! waits for it. A bulk load knows all its items in advance, so it inserts
//! them in table order instead:
//!
//! 1. hash the items (in parallel);
//! 2. split the hashes into one chunk per thread, and partition each chunk by
//!    the top [`FIRST_BITS`] bits of the bucket-choosing half of the hash
//!    (a counting sort; the first bucket, `(low32 · n) >> 32`, grows with
//!    `low32`, so partition `p` covers a contiguous range of buckets);
//! 3. for each partition (in parallel: partitions cover disjoint ranges of the
//!    table), order its hashes by the next [`SECOND_BITS`] bits, in a buffer
//!    that stays in cache, and insert them in that order.
//!
//! The inserts then sweep the table front to back: the hardware prefetcher
//! streams the bucket lines in, and each insert finds its bucket in cache. Items
//! are counted once per partition rather than once each, so loading cores do
//! not take turns at the count's cache lines. The inserts are the same
//! lock-free protocol as [`CuckooFilter::insert`]: other threads may use the
//! filter meanwhile, and an item that does not fit changes nothing.
//!
//! Scratch memory: two `u64` per item (the hashes and their partitioned copy),
//! plus the items themselves when [`CuckooFilter::par_insert_all`] must be able
//! to give back the ones that do not fit.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

use rayon::prelude::*;

use crate::error::{BulkInsertError, InsertError};
use crate::fingerprint::Width;
use crate::table::dispatch;
use crate::table::Table;
use crate::{CuckooFilter, GrowableCuckooFilter};

/// Bits of the bucket-choosing half of the hash that pick the partition:
/// 2048 partitions, each a 1/2048 of the table (256 KiB of a 512 MiB table).
const FIRST_BITS: u32 = 11;

/// Bits that order the hashes within a partition: the order is then exact to
/// 2^-22 of the table, a cache line or two on tables of a few GiB.
const SECOND_BITS: u32 = 11;

/// Tables smaller than this are loaded in the order the items come: they stay
/// in the caches, and sorting would only cost time. (Under Miri, this and the
/// next two are small, so that its runs of the tests, a hundred times
/// smaller than the usual ones, take the sorted path and run several tasks.)
const SORT_MIN_TABLE_BYTES: usize = if cfg!(miri) { 16 << 10 } else { 4 << 20 };

/// Fewer items than this are loaded in the order they come.
const SORT_MIN_ITEMS: usize = if cfg!(miri) { 1 << 10 } else { 1 << 15 };

/// Items per task when loading in arrival order.
const CHUNK: usize = if cfg!(miri) { 64 } else { 4096 };

/// The partition of a hash.
#[inline(always)]
fn first_key(hash: u64) -> usize {
    (hash as u32 >> (32 - FIRST_BITS)) as usize
}

/// The order of a hash within its partition.
#[inline(always)]
fn second_key(hash: u64) -> usize {
    ((hash as u32 >> (32 - FIRST_BITS - SECOND_BITS)) & ((1 << SECOND_BITS) - 1)) as usize
}

/// Inserted count and the hashes that did not fit.
type Loaded = (usize, Vec<u64>);

fn merge(a: Loaded, b: Loaded) -> Loaded {
    (a.0 + b.0, concat(a.1, b.1))
}

/// Both parts' failures in one vector: the shorter appended to the longer, so
/// that a parallel reduce copies as little as it can.
fn concat<T>(mut a: Vec<T>, mut b: Vec<T>) -> Vec<T> {
    if a.len() < b.len() {
        std::mem::swap(&mut a, &mut b);
    }
    a.append(&mut b);
    a
}

/// Inserts `hashes` in the order given; counts them in once.
fn insert_run<W: Width>(table: &Table<W>, hashes: impl Iterator<Item = u64>, key: u64) -> Loaded {
    let mut inserted = 0;
    let mut failed = Vec::new();
    for h in hashes {
        if table.insert_uncounted(table.position(h)).is_ok() {
            inserted += 1;
        } else {
            failed.push(h);
        }
    }
    table.count_in(key, inserted);
    (inserted, failed)
}

/// A chunk of hashes, counting-sorted by partition: partition `p` is
/// `sorted[starts[p]..starts[p + 1]]`.
struct Partitioned {
    sorted: Vec<u64>,
    starts: Vec<usize>,
}

impl Partitioned {
    fn new(hashes: &[u64]) -> Self {
        let parts = 1 << FIRST_BITS;
        let mut starts = vec![0usize; parts + 1];
        for &h in hashes {
            starts[first_key(h) + 1] += 1;
        }
        for p in 0..parts {
            starts[p + 1] += starts[p];
        }
        let mut next = starts.clone();
        let mut sorted = vec![0u64; hashes.len()];
        for &h in hashes {
            let slot = &mut next[first_key(h)];
            sorted[*slot] = h;
            *slot += 1;
        }
        Self { sorted, starts }
    }

    fn part(&self, p: usize) -> &[u64] {
        &self.sorted[self.starts[p]..self.starts[p + 1]]
    }
}

/// Loads `hashes` into `table` (see the module documentation).
fn load<W: Width>(table: &Table<W>, hashes: Vec<u64>) -> Loaded {
    if hashes.len() < SORT_MIN_ITEMS || table.memory_usage() < SORT_MIN_TABLE_BYTES {
        return hashes
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(k, c)| insert_run(table, c.iter().copied(), k as u64))
            .reduce(|| (0, Vec::new()), merge);
    }
    let chunk = hashes.len().div_ceil(rayon::current_num_threads().max(1));
    let chunks: Vec<Partitioned> = hashes.par_chunks(chunk).map(Partitioned::new).collect();
    drop(hashes);
    (0..1usize << FIRST_BITS)
        .into_par_iter()
        .map_init(
            || (vec![0usize; (1 << SECOND_BITS) + 1], Vec::new()),
            |(starts, ordered), p| {
                // Counting sort of the partition's hashes, from every chunk.
                starts.fill(0);
                let parts = || chunks.iter().flat_map(|c| c.part(p).iter().copied());
                for h in parts() {
                    starts[second_key(h) + 1] += 1;
                }
                for k in 0..1 << SECOND_BITS {
                    starts[k + 1] += starts[k];
                }
                ordered.clear();
                ordered.resize(starts[1 << SECOND_BITS], 0);
                for h in parts() {
                    let slot = &mut starts[second_key(h)];
                    ordered[*slot] = h;
                    *slot += 1;
                }
                insert_run(table, ordered.iter().copied(), p as u64)
            },
        )
        .reduce(|| (0, Vec::new()), merge)
}

impl<S: BuildHasher + Sync> CuckooFilter<S> {
    /// Loads hashes; returns the number inserted and the hashes that did not
    /// fit.
    fn par_load_hashes(&self, hashes: Vec<u64>) -> Loaded {
        dispatch!(&self.table, t => load(t, hashes))
    }

    /// Inserts every item, in parallel on the current rayon thread pool.
    /// `Ok(n)` when all `n` items went in. When the filter fills up, the items
    /// that fit are inserted and stay, and the error gives back the others
    /// ([`BulkInsertError::into_failed`]) with the number inserted: nothing is
    /// lost, and as with [`insert`](Self::insert) no item already in the filter
    /// is evicted.
    ///
    /// Faster than one [`insert`](Self::insert) per item even on one thread
    /// when the table is larger than the caches: the items are inserted in
    /// table order, so the table is swept front to back instead of missing the
    /// cache once per item. Scratch memory: 16 bytes per item, besides the
    /// items, which are collected. Other threads may use the filter meanwhile.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// use lockfree_cuckoo_filter::CuckooFilter;
    ///
    /// let f = CuckooFilter::with_capacity(100_000);
    /// assert_eq!(f.par_insert_all(0..100_000u64), Ok(100_000));
    /// let words = vec!["apple", "pear"];
    /// assert_eq!(f.par_insert_all(words.par_iter()), Ok(2));
    /// assert!(f.contains(&99_999u64) && f.contains(&"pear"));
    /// ```
    pub fn par_insert_all<T, I>(&self, items: I) -> Result<usize, BulkInsertError<T>>
    where
        T: Hash + Send,
        I: IntoParallelIterator<Item = T>,
    {
        let (hashes, items): (Vec<u64>, Vec<T>) = items
            .into_par_iter()
            .map(|item| (self.hasher.hash_one(&item), item))
            .unzip();
        let (inserted, failed) = self.par_load_hashes(hashes);
        if failed.is_empty() {
            return Ok(inserted);
        }
        // Give back one item per hash that did not fit. Items with equal
        // hashes are the same item to the filter, so any of them will do.
        let mut owed: HashMap<u64, usize> = HashMap::with_capacity(failed.len());
        for h in failed {
            *owed.entry(h).or_default() += 1;
        }
        let failed = items
            .into_iter()
            .filter(|item| match owed.get_mut(&self.hasher.hash_one(item)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            })
            .collect();
        Err(BulkInsertError {
            inserted,
            failed,
            reason: InsertError::Full,
        })
    }
}

impl<S: BuildHasher + Sync> GrowableCuckooFilter<S> {
    /// Inserts every item, in parallel on the current rayon thread pool,
    /// growing the filter as needed. `Ok(n)` when all `n` items went in. If
    /// the filter cannot grow (see [`InsertError`]), the items that fit are
    /// inserted and stay, and the error gives back the others with the number
    /// inserted and the first reason met ([`BulkInsertError::reason`]).
    ///
    /// Each item is one [`insert`](GrowableCuckooFilter::insert), run on
    /// rayon's threads (the table-order loading of
    /// [`CuckooFilter::par_insert_all`] needs a table that does not change
    /// under it, and this one grows). Start from a capacity near the item
    /// count to save growths. Other threads may use the filter meanwhile.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let f = GrowableCuckooFilter::with_capacity(1000);
    /// assert_eq!(f.par_insert_all(0..100_000u64), Ok(100_000));
    /// assert_eq!(f.len(), 100_000);
    /// assert!(f.contains(&99_999u64));
    /// ```
    pub fn par_insert_all<T, I>(&self, items: I) -> Result<usize, BulkInsertError<T>>
    where
        T: Hash + Send,
        I: IntoParallelIterator<Item = T>,
    {
        type Part<T> = (usize, Vec<T>, Option<InsertError>);
        let (inserted, failed, reason) = items
            .into_par_iter()
            .fold(
                || (0, Vec::new(), None),
                |(n, mut failed, reason): Part<T>, item| match self.insert(&item) {
                    Ok(()) => (n + 1, failed, reason),
                    Err(e) => {
                        failed.push(item);
                        (n, failed, reason.or(Some(e)))
                    }
                },
            )
            .reduce(
                || (0, Vec::new(), None),
                |(n, a, ra): Part<T>, (m, b, rb)| (n + m, concat(a, b), ra.or(rb)),
            );
        match reason {
            None => Ok(inserted),
            Some(reason) => Err(BulkInsertError {
                inserted,
                failed,
                reason,
            }),
        }
    }
}

/// Inserts the items in parallel, like [`CuckooFilter::par_insert_all`].
///
/// # Panics
///
/// If some items do not fit (the filter is full), after inserting every item
/// that fits. `ParallelExtend` cannot report an error, and its contract is that
/// the collection holds the items afterwards; a filter that silently dropped
/// some would answer `false` for them, breaking the promise of no false
/// negatives, which is worse than failing loudly. Fixed-capacity collections
/// do the same: `arrayvec::ArrayVec` and `heapless::Vec` panic in `extend` when
/// full, as rayon's `Vec::par_extend` does on capacity overflow. The filter is
/// still consistent after the panic (the items that went in are in, nothing
/// was evicted). To handle a full filter, use
/// [`par_insert_all`](CuckooFilter::par_insert_all), which gives back the items
/// that did not fit, or a [`GrowableCuckooFilter`].
///
/// ```
/// use rayon::prelude::*;
/// use lockfree_cuckoo_filter::CuckooFilter;
///
/// let f = CuckooFilter::with_capacity(10_000);
/// (&f).par_extend((0..10_000u32).into_par_iter());
/// assert_eq!(f.len(), 10_000);
/// ```
impl<T, S> ParallelExtend<T> for &CuckooFilter<S>
where
    T: Hash + Send,
    S: BuildHasher + Sync,
{
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        let hashes = par_iter
            .into_par_iter()
            .map(|item| self.hasher.hash_one(item))
            .collect();
        let (inserted, failed) = self.par_load_hashes(hashes);
        if !failed.is_empty() {
            panic!(
                "CuckooFilter::par_extend: the filter is full: {inserted} items inserted, {} did not fit \
                 (use par_insert_all to get them back)",
                failed.len()
            );
        }
    }
}

/// Inserts the items in parallel; see the implementation for
/// [`&CuckooFilter`](CuckooFilter), which this forwards to (and whose panic it
/// shares).
///
/// ```
/// use rayon::prelude::*;
/// use lockfree_cuckoo_filter::CuckooFilter;
///
/// let mut f = CuckooFilter::with_capacity(1000);
/// f.par_extend(vec!["a", "b", "c"]);
/// assert!(f.contains("b"));
/// ```
impl<T, S> ParallelExtend<T> for CuckooFilter<S>
where
    T: Hash + Send,
    S: BuildHasher + Sync,
{
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        (&*self).par_extend(par_iter);
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;

    /// The item of `hash` as `(bucket pair, fingerprint)`: what a table holds
    /// for it, whichever bucket of the pair its copy is in.
    fn pair_of(f: &CuckooFilter, hash: u64) -> (u64, u64, u32) {
        let p = f.table.position(hash);
        (p.i1.min(p.i2), p.i1.max(p.i2), p.fp)
    }

    /// `n`, or a hundredth of it under Miri (whose bulk loading runs through
    /// rayon take a few minutes at that size).
    fn scaled(n: u64) -> u64 {
        if cfg!(miri) {
            n / 100
        } else {
            n
        }
    }

    /// The table's contents as a sorted multiset of [`pair_of`]s.
    fn held(f: &CuckooFilter) -> Vec<(u64, u64, u32)> {
        let mut held: Vec<_> = f
            .table
            .fingerprints()
            .into_iter()
            .map(|(bucket, fp)| pair_of(f, f.table.hash_for(bucket, fp)))
            .collect();
        held.sort_unstable();
        held
    }

    #[test]
    fn bulk_matches_one_by_one() {
        // One seed for both, so that an item has the same place in each.
        let n = scaled(200_000);
        let seeded = || {
            CuckooFilter::builder()
                .capacity(n as usize)
                .seed(crate::DEFAULT_SEED)
                .build()
                .unwrap()
        };
        let (a, b) = (seeded(), seeded());
        assert_eq!(a.par_insert_all((0..n).into_par_iter()), Ok(n as usize));
        for i in 0..n {
            b.insert(&i).unwrap();
        }
        assert_eq!(a.len(), b.len());
        assert!((0..n).all(|i| a.contains(&i)));
        // Same multiset of fingerprints, read as (bucket pair, fingerprint).
        assert_eq!(held(&a), held(&b));
    }

    #[test]
    fn full_filter_gives_back_exactly_the_rest() {
        let f = CuckooFilter::builder()
            .capacity(scaled(10_000) as usize)
            .seed(crate::DEFAULT_SEED)
            .build()
            .unwrap();
        let n = scaled(20_000);
        let err = f.par_insert_all((0..n).into_par_iter()).unwrap_err();
        assert_eq!(err.inserted(), f.len());
        let all = err.failed();
        assert_eq!(err.inserted() + all.len(), n as usize);
        // Every item is either in the table or given back, none is both, none
        // is lost: the table holds exactly the items not given back, read as
        // (bucket pair, fingerprint).
        let back: std::collections::HashSet<u64> = all.iter().copied().collect();
        assert_eq!(back.len(), all.len());
        let mut rest: Vec<_> = (0..n)
            .filter(|i| !back.contains(i))
            .map(|i| pair_of(&f, f.hasher.hash_one(i)))
            .collect();
        rest.sort_unstable();
        assert_eq!(held(&f), rest);
    }

    #[test]
    fn sorted_path_on_a_table_larger_than_the_caches() {
        // A 4 MiB table (40 KiB under Miri) is loaded in table order.
        let f = CuckooFilter::with_capacity(scaled(2_000_000) as usize);
        assert!(f.memory_usage() >= SORT_MIN_TABLE_BYTES);
        let n = scaled(1_000_000);
        assert!(n as usize >= SORT_MIN_ITEMS);
        assert_eq!(f.par_insert_all((0..n).into_par_iter()), Ok(n as usize));
        assert_eq!(f.len(), n as usize);
        assert!((0..n).all(|i| f.contains(&i)));
        // Filling it up: everything is inserted or given back, exactly once.
        let m = scaled(2_080_000);
        let err = f.par_insert_all((n..m).into_par_iter()).unwrap_err();
        assert_eq!(f.len(), n as usize + err.inserted());
        assert!(f.load_factor() > 0.95, "{}", f.load_factor());
        let back: std::collections::HashSet<u64> = err.failed().iter().copied().collect();
        assert_eq!(back.len() + err.inserted(), (m - n) as usize);
        assert!((0..m).all(|i| back.contains(&i) || f.contains(&i)));
        // par_extend takes the same path.
        let g = CuckooFilter::with_capacity(scaled(2_000_000) as usize);
        (&g).par_extend((0..n).into_par_iter());
        assert_eq!(g.len(), n as usize);
    }

    #[test]
    fn keys_order_by_bucket() {
        let hashes = [u64::MAX, 0, 1 << 31, 5 << 20, u64::from(u32::MAX) << 32];
        let p = Partitioned::new(&hashes);
        let flat: Vec<u64> = (0..1 << FIRST_BITS)
            .flat_map(|k| p.part(k).to_vec())
            .collect();
        let low: Vec<u32> = flat.iter().map(|&h| h as u32).collect();
        assert!(low
            .windows(2)
            .all(|w| first_key(u64::from(w[0])) <= first_key(u64::from(w[1]))));
        assert_eq!(flat.len(), hashes.len());
        assert_eq!(
            second_key(5 << 20),
            5 << (20 - 10) & ((1 << SECOND_BITS) - 1)
        );
    }

    #[test]
    fn par_extend_panics_when_full_keeping_what_fit() {
        let f = CuckooFilter::with_capacity(1000);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (&f).par_extend((0..5000u64).into_par_iter());
        }));
        assert!(r.is_err());
        assert!(f.len() >= 950);
        let present = (0..5000u64).filter(|i| f.contains(i)).count();
        assert!(present >= f.len());
    }

    #[test]
    fn growable_bulk_load_grows_and_gives_back_what_cannot_go_in() {
        let n = scaled(50_000);
        let f = GrowableCuckooFilter::with_capacity(100);
        assert_eq!(f.par_insert_all((0..n).into_par_iter()), Ok(n as usize));
        assert_eq!(f.len(), n as usize);
        assert!(f.table_count() > 1);
        assert!((0..n).all(|i| f.contains(&i)));
        // Copies of one item beyond what its buckets hold in a large table.
        let g = GrowableCuckooFilter::with_capacity(100_000);
        let err = g.par_insert_all(vec![7u32; 20]).unwrap_err();
        assert_eq!(err.reason(), InsertError::TooManyCopies);
        assert_eq!(err.inserted(), 8);
        assert_eq!(err.failed(), &[7u32; 12][..]);
        assert_eq!(g.len(), 8);
    }

    /// Guarantee 1 while a bulk load runs: the items in the filter before it
    /// are found by every lookup during it, although its inserts relocate
    /// them (it fills the table to its capacity, where most inserts move
    /// items). A lookup misses only if a move it races is unannounced, a
    /// window of nanoseconds, so a small set of held items is looked up over
    /// and over, in rounds of fresh filters.
    #[test]
    fn lookups_during_a_bulk_load_find_the_items_already_in() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let capacity = scaled(200_000);
        let held: Vec<u64> = (0..scaled(2_000)).map(|i| i | 1 << 40).collect();
        let bulk = capacity - held.len() as u64;
        for round in 0..4 {
            let f = CuckooFilter::with_capacity(capacity as usize);
            for k in &held {
                f.insert(k).unwrap();
            }
            let done = AtomicBool::new(false);
            let (misses, lookups) = std::thread::scope(|s| {
                let reader = s.spawn(|| {
                    let (mut misses, mut lookups) = (0, 0);
                    while !done.load(Ordering::Relaxed) {
                        misses += held.iter().filter(|k| !f.contains(k)).count();
                        lookups += held.len();
                    }
                    (misses, lookups)
                });
                let loaded = f.par_insert_all((0..bulk).into_par_iter());
                done.store(true, Ordering::Relaxed);
                assert_eq!(loaded, Ok(bulk as usize));
                reader.join().unwrap()
            });
            assert_eq!(
                misses, 0,
                "round {round}: {misses} of {lookups} lookups missed a held item"
            );
            assert!(held.iter().all(|k| f.contains(k)));
        }
    }

    #[test]
    fn concurrent_with_other_threads() {
        let (bulk, one_by_one) = (scaled(300_000), scaled(100_000));
        let f = CuckooFilter::with_capacity((bulk + one_by_one) as usize);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..one_by_one {
                    f.insert(&(i + (1 << 40))).unwrap();
                }
            });
            assert_eq!(
                f.par_insert_all((0..bulk).into_par_iter()),
                Ok(bulk as usize)
            );
        });
        assert_eq!(f.len(), (bulk + one_by_one) as usize);
        assert!((0..bulk).all(|i| f.contains(&i)));
        assert!((0..one_by_one).all(|i| f.contains(&(i + (1 << 40)))));
    }
}
