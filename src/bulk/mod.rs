//! Parallel bulk loading with rayon: [`CuckooFilter::par_insert_all`],
//! [`CuckooFilter::par_insert_all_with`] and [`ParallelExtend`].
//!
//! On a table larger than the caches, an insert loop pays a cache miss (and a
//! TLB miss) per item, and cannot overlap them: an insert's compare-and-swap is
//! a locked instruction, a full barrier on x86-64, so the next item's load
//! waits for it. A bulk load sees many items before it inserts them, so it
//! inserts them in table order instead, in passes through a scratch buffer of
//! bounded size:
//!
//! 1. each rayon task hashes its items as they come into a buffer of its own
//!    (the items are never collected first);
//! 2. when the buffer holds its share of the budget, the task sorts the
//!    hashes into table order in place: by the top [`FIRST_BITS`] bits of the
//!    bucket-choosing half of the hash (the first bucket, `(low32 · n) >> 32`,
//!    grows with `low32`), then each of those partitions, small enough to stay
//!    in cache, by the next [`SECOND_BITS`] bits; both are in-place counting
//!    sorts (American flag sorts), so the hashes are the only scratch;
//! 3. it inserts the pass in that order, asking for each item's two buckets
//!    [`AHEAD`] items early, counts the pass in once, and empties the buffer
//!    for the next pass; the last, partial pass is flushed when the task runs
//!    out of items. The second sort and the inserts of a pass's partitions
//!    are split between rayon's threads ([`rayon::join`]), so that a thread
//!    whose items have run out helps with the passes of one whose have not.
//!
//! Each pass sweeps the table front to back: the lines it touches are near
//! one another, each fetched once per pass, their pages in the TLB. What is
//! left is the same for a loop of [`CuckooFilter::insert`]: the second
//! buckets, and the path searches of a nearly full table, which read buckets
//! all over it, but the load asks for an item's second bucket ahead too.
//! On the 2-core CI machine (300 MiB of L3), a load of 3·10⁸ keys on one
//! thread took 28 s against 45 for the insert loop, and 31 s with a budget of
//! 64 MiB, 30 with 1 GiB: the default is as dense as helps.
//!
//! The inserts are the same lock-free protocol as [`CuckooFilter::insert`]:
//! other threads may use the filter meanwhile, and an item that does not fit
//! changes nothing.
//!
//! # The budget
//!
//! [`BulkOptions::scratch_bytes`] bounds the items held at once, over all
//! tasks of one load: each held item costs a `u64` hash plus, for
//! `par_insert_all`, the item itself (`size_of::<T>()`; whatever the item owns
//! on the heap it owned before the load too). A task reserves its share of the
//! budget (the budget divided by rayon's threads) from a counter when it first
//! needs room and returns it when it finishes. It allocates its scratch as
//! its items come, doubling up to that share, so a budget is a bound, not an
//! allocation (ten items under a budget of 1 TiB take a few KiB), and an
//! allocation the system refuses ends the task's pass early rather than the
//! process. A task that finds the budget spent inserts its items one at a
//! time as they come, with no scratch at all. That happens only when a
//! thread that waits for parallel work (the other half of a pass's
//! inserts, or a `map` whose closure uses rayon) runs other tasks
//! meanwhile, so that more tasks than threads are live. So the held items
//! never exceed the budget, whatever rayon's scheduling. Besides the
//! budget, the sorts' counters: a few KiB per task and per job.
//!
//! Tables smaller than [`SORT_MIN_TABLE_BYTES`] are loaded in the order the
//! items come (they stay in the caches; sorting would only cost time), and so
//! are passes of fewer than [`SORT_MIN_ITEMS`] items.
//!
//! # Items that do not fit
//!
//! A pass remembers the hashes that did not fit. When there are some, it finds
//! their items by hashing the pass's items again, and moves them into the
//! result: [`BulkInsertError::into_failed`] gives them back. They are held
//! outside the budget, in one `Vec<T>` per task, joined at the end, since the
//! caller asked for every one of them; on a filter much smaller than the
//! load most items come back, so their memory is that of the items.
//! `par_extend`, which cannot give items back, holds none: it counts them and
//! panics at the end.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

use rayon::prelude::*;

use crate::error::{BulkInsertError, InsertError};
use crate::fingerprint::Width;
use crate::sync::{AtomicUsize, Ordering};
use crate::table::dispatch;
use crate::table::Table;
use crate::table::{prefetch_line, Reach};
use crate::{CuckooFilter, GrowableCuckooFilter};

/// Bits of the bucket-choosing half of the hash that pick the partition:
/// 256 partitions, whose write fronts the in-place sort keeps in as many
/// pages, few enough for the TLB (with 2048, a pass of 10^8 items sorted
/// about a tenth slower on one thread). A pass of a few million hashes has
/// partitions of some ten thousand, which the second sort orders in L2.
const FIRST_BITS: u32 = 8;

/// Bits that order the hashes within a partition: the order is then exact to
/// 2^-18 of the table (8 KiB of a 2 GiB table), and the sort's 1024 counters
/// stay in L1. Finer order buys nothing once the buckets are asked for
/// ahead: on a load of 10^9 items, 14 bits cost this sort 17 CPU-seconds
/// and 10 bits 10, the inserts the same.
const SECOND_BITS: u32 = 10;

/// Tables smaller than this are loaded in the order the items come: they stay
/// in the caches, and sorting would only cost time. (Under Miri, this and the
/// next two are small, so that its runs of the tests, a hundred times
/// smaller than the usual ones, take the sorted path and run several tasks.)
const SORT_MIN_TABLE_BYTES: usize = if cfg!(miri) { 16 << 10 } else { 4 << 20 };

/// Passes of fewer items than this are loaded in the order they come.
const SORT_MIN_ITEMS: usize = if cfg!(miri) { 1 << 10 } else { 1 << 15 };

/// Items inserted one at a time between two updates of the count, when a
/// task loads in arrival order.
const CHUNK: usize = if cfg!(miri) { 64 } else { 4096 };

/// How a bulk load may use memory: the setting of
/// [`CuckooFilter::par_insert_all_with`]. [`Default`] is
/// [`BulkOptions::new`].
///
/// ```
/// use lockfree_cuckoo_filter::{BulkOptions, CuckooFilter};
///
/// let f = CuckooFilter::with_capacity(1_000_000);
/// // At most 16 MiB of hashes and items held at once, however many items come.
/// let options = BulkOptions::new().scratch_bytes(16 << 20);
/// assert_eq!(f.par_insert_all_with(0..1_000_000u64, options), Ok(1_000_000));
/// assert_eq!(BulkOptions::default(), BulkOptions::new());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BulkOptions {
    scratch_bytes: usize,
}

impl BulkOptions {
    /// The scratch budget of [`BulkOptions::new`] (and of
    /// [`par_insert_all`](CuckooFilter::par_insert_all) and `par_extend`):
    /// 256 MiB, 32 Mi hashes. On a table of a few GiB that is a pass of one
    /// item per 8 to 16 buckets, dense enough that the sweep streams; and it
    /// is small beside the table whenever the table is large enough for
    /// sorting to matter.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::BulkOptions;
    /// assert_eq!(BulkOptions::DEFAULT_SCRATCH_BYTES, 256 << 20);
    /// ```
    pub const DEFAULT_SCRATCH_BYTES: usize = 256 << 20;

    /// The default options: a scratch budget of
    /// [`DEFAULT_SCRATCH_BYTES`](Self::DEFAULT_SCRATCH_BYTES).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::BulkOptions;
    /// let options = BulkOptions::new();
    /// assert_eq!(options.scratch_limit(), BulkOptions::DEFAULT_SCRATCH_BYTES);
    /// ```
    pub const fn new() -> Self {
        Self {
            scratch_bytes: Self::DEFAULT_SCRATCH_BYTES,
        }
    }

    /// The most memory the load holds at once for the items it has taken but
    /// not yet inserted, over all its tasks: a `u64` hash per item, plus the
    /// item (`size_of::<T>()`) where the load must be able to give it back.
    /// It is a bound, not an allocation: the scratch grows with the items
    /// held, so a budget larger than the load needs costs nothing
    /// (`usize::MAX` sets no limit). A budget smaller than one item loads
    /// the items one at a time as they come (no sorting, no scratch).
    /// Besides it: the sorts' counters (a few KiB per task), and the items
    /// that did not fit, which are the result.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BulkOptions, CuckooFilter};
    ///
    /// let f = CuckooFilter::with_capacity(100_000);
    /// let tight = BulkOptions::new().scratch_bytes(64 << 10);
    /// assert_eq!(f.par_insert_all_with(0..100_000u32, tight), Ok(100_000));
    /// assert_eq!(tight.scratch_limit(), 64 << 10);
    /// ```
    pub const fn scratch_bytes(mut self, bytes: usize) -> Self {
        self.scratch_bytes = bytes;
        self
    }

    /// The scratch budget in bytes, as set by
    /// [`scratch_bytes`](Self::scratch_bytes).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::BulkOptions;
    /// assert_eq!(BulkOptions::new().scratch_bytes(1 << 20).scratch_limit(), 1 << 20);
    /// ```
    pub const fn scratch_limit(&self) -> usize {
        self.scratch_bytes
    }

    /// The budget in items of `bytes_each` bytes.
    fn items(&self, bytes_each: usize) -> usize {
        self.scratch_bytes / bytes_each.max(1)
    }
}

impl Default for BulkOptions {
    fn default() -> Self {
        Self::new()
    }
}

mod pass;
#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests;

pub use pass::ScratchStats;
use pass::*;

impl<S: BuildHasher + Sync> CuckooFilter<S> {
    /// [`par_insert_all_with`](Self::par_insert_all_with), also giving what
    /// its scratch did.
    pub(crate) fn par_insert_all_metered<T, I>(
        &self,
        items: I,
        options: BulkOptions,
    ) -> (Result<usize, BulkInsertError<T>>, ScratchStats)
    where
        T: Hash + Send,
        I: IntoParallelIterator<Item = T>,
    {
        let meter = Meter::default();
        let budget = options.items(8 + std::mem::size_of::<T>());
        // Give back one item per hash that did not fit. Items with equal
        // hashes are the same item to the filter, so any of them will do.
        let give_back = |items: &mut Vec<T>, failed: &[u64], out: &mut Vec<T>| {
            let mut owed: HashMap<u64, usize> = HashMap::with_capacity(failed.len());
            for &h in failed {
                *owed.entry(h).or_default() += 1;
            }
            out.extend(items.drain(..).filter(
                |item| match owed.get_mut(&self.hasher.hash_one(item)) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ => false,
                },
            ));
        };
        let pairs = items
            .into_par_iter()
            .map(|item| (self.hasher.hash_one(&item), item));
        let (inserted, failed) =
            dispatch!(&self.table, t => load(t, pairs, budget, &give_back, &meter));
        let result = if failed.is_empty() {
            Ok(inserted)
        } else {
            Err(BulkInsertError {
                inserted,
                failed,
                reason: InsertError::Full,
            })
        };
        (result, meter.stats())
    }

    /// [`ParallelExtend::par_extend`]'s load with `options`, also giving
    /// what its scratch did: the number inserted and the number that did not
    /// fit.
    pub(crate) fn par_extend_metered<T, I>(
        &self,
        items: I,
        options: BulkOptions,
    ) -> (usize, usize, ScratchStats)
    where
        T: Hash + Send,
        I: IntoParallelIterator<Item = T>,
    {
        let meter = Meter::default();
        let budget = options.items(8);
        // Nothing to give back: `()` stands for each item that did not fit,
        // and a `Vec<()>` is only a count.
        let give_back = |items: &mut Vec<()>, failed: &[u64], out: &mut Vec<()>| {
            items.clear();
            out.resize(out.len() + failed.len(), ());
        };
        let pairs = items
            .into_par_iter()
            .map(|item| (self.hasher.hash_one(item), ()));
        let (inserted, failed) =
            dispatch!(&self.table, t => load(t, pairs, budget, &give_back, &meter));
        (inserted, failed.len(), meter.stats())
    }

    /// Inserts every item, in parallel on the current rayon thread pool,
    /// with the default [`BulkOptions`]. `Ok(n)` when all `n` items went in.
    /// When the filter fills up, the items that fit are inserted and stay,
    /// and the error gives back the others ([`BulkInsertError::into_failed`])
    /// with the number inserted: nothing is lost, and as with
    /// [`insert`](Self::insert) no item already in the filter is evicted.
    ///
    /// Faster than one [`insert`](Self::insert) per item even on one thread
    /// when the table is larger than the caches: the items are inserted in
    /// passes in table order, so the table is swept front to back instead of
    /// missing the cache once per item. The items are streamed, never
    /// collected: scratch memory is bounded by
    /// [`BulkOptions::DEFAULT_SCRATCH_BYTES`] however many items come (see
    /// [`par_insert_all_with`](Self::par_insert_all_with) to set it). Other
    /// threads may use the filter meanwhile.
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
        self.par_insert_all_with(items, BulkOptions::new())
    }

    /// [`par_insert_all`](Self::par_insert_all) with a scratch budget of
    /// one's own: at most [`BulkOptions::scratch_bytes`] of hashes and items
    /// held at once (`8 + size_of::<T>()` bytes each), over all threads,
    /// however many items come. The items that do not fit are given back
    /// outside the budget, since they are the result: a pass that had some
    /// hashes its own items again to find them, and moves them into the
    /// error.
    ///
    /// A pass of `k` items into a table of `n` buckets touches about
    /// `min(k, n)` bucket lines in table order; a budget of a few hundred MiB
    /// keeps passes dense on tables of a few GiB. A smaller budget costs
    /// speed, never correctness.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// use lockfree_cuckoo_filter::{BulkOptions, CuckooFilter};
    ///
    /// let f = CuckooFilter::with_capacity(2_000_000);
    /// // 10⁶ keys made on the fly, through 1 MiB of scratch (65 536 keys at a time).
    /// let keys = (0..1_000_000u64).into_par_iter().map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    /// let options = BulkOptions::new().scratch_bytes(1 << 20);
    /// assert_eq!(f.par_insert_all_with(keys, options), Ok(1_000_000));
    /// assert!(f.contains(&0x9e37_79b9_7f4a_7c15u64));
    /// ```
    pub fn par_insert_all_with<T, I>(
        &self,
        items: I,
        options: BulkOptions,
    ) -> Result<usize, BulkInsertError<T>>
    where
        T: Hash + Send,
        I: IntoParallelIterator<Item = T>,
    {
        self.par_insert_all_metered(items, options).0
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
    /// rayon's threads as it comes: no scratch, and the items are never
    /// collected (the table-order loading of
    /// [`CuckooFilter::par_insert_all`] needs a table that does not change
    /// under it, and this one grows). Only the items that do not fit are held,
    /// to give back. Start from a capacity near the item count to save
    /// growths. Other threads may use the filter meanwhile.
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

/// Inserts the items in parallel, like [`CuckooFilter::par_insert_all`], in
/// passes through the default scratch budget ([`BulkOptions`]: a `u64` per
/// item held; the items themselves are not kept).
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
        let (inserted, failed, _) = self.par_extend_metered(par_iter, BulkOptions::new());
        if failed > 0 {
            panic!(
                "CuckooFilter::par_extend: the filter is full: {inserted} items inserted, {failed} did not fit \
                 (use par_insert_all to get them back)"
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
