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
//! 3. it inserts the pass in that order, asking for each item's second bucket
//!    (anywhere in the table) [`AHEAD`] items early, counts the pass in once,
//!    and empties the buffer for the next pass; the last, partial pass is
//!    flushed when the task runs out of items.
//!
//! Each pass sweeps the table front to back: the hardware prefetcher streams
//! the first buckets in, and each insert finds its bucket in cache. What is
//! left is the same for a loop of [`CuckooFilter::insert`]: the second
//! buckets, and the path searches of a nearly full table, which read buckets
//! all over it. On the 2-core CI machine (300 MiB of L3) a load of 3·10⁸
//! keys on one thread took 36 CPU-seconds against 40 for the insert loop,
//! and a budget of 64 MiB 39, of 1 GiB 37: the default is as dense as helps.
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
//! needs room and returns it when it finishes; a task that finds the budget
//! spent inserts its items one at a time as they come, with no scratch at
//! all. That happens only when making an item is parallel work of its own (a
//! `map` whose closure uses rayon): a thread that waits for that work runs
//! other tasks meanwhile, so more tasks than threads can be live. So
//! the held items never exceed the budget, whatever rayon's scheduling. Besides
//! the budget, each task keeps the sorts' counters (about 260 KiB).
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
use crate::table::Reach;
use crate::table::Table;
use crate::{CuckooFilter, GrowableCuckooFilter};

/// Bits of the bucket-choosing half of the hash that pick the partition:
/// 256 partitions, whose write fronts the in-place sort keeps in as many
/// pages, few enough for the TLB (with 2048, a pass of 10^8 items sorted
/// about a tenth slower on one thread). A pass of a few million hashes has
/// partitions of some ten thousand, which the second sort orders in L2.
const FIRST_BITS: u32 = 8;

/// Bits that order the hashes within a partition: the order is then exact to
/// 2^-22 of the table, a cache line or two on tables of a few GiB.
const SECOND_BITS: u32 = 14;

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
    /// A budget smaller than one item loads the items one at a time as they
    /// come (no sorting, no scratch). Besides it: the sorts' counters (about
    /// 260 KiB per task), and the items that did not fit, which are the
    /// result.
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

/// What a load's scratch did, for the tests of its budget
/// ([`test_hooks`](crate::test_hooks)): measured only with the `test-hooks`
/// feature (without it, every figure is zero and measuring costs nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(not(feature = "test-hooks"), allow(dead_code, unreachable_pub))]
pub struct ScratchStats {
    /// The most items held in scratch buffers at once, over all tasks.
    pub peak_items: usize,
    /// Passes flushed (sorted or not).
    pub passes: usize,
    /// Items in the largest pass.
    pub largest_pass: usize,
}

/// The counters behind [`ScratchStats`]: one atomic update per item held,
/// so only under `test-hooks`.
#[derive(Default)]
struct Meter {
    #[cfg(feature = "test-hooks")]
    held: AtomicUsize,
    #[cfg(feature = "test-hooks")]
    peak: AtomicUsize,
    #[cfg(feature = "test-hooks")]
    passes: AtomicUsize,
    #[cfg(feature = "test-hooks")]
    largest: AtomicUsize,
}

// Relaxed throughout: the meter orders nothing, and its figures are read
// after the load's tasks have joined.
impl Meter {
    #[inline(always)]
    fn hold(&self) {
        #[cfg(feature = "test-hooks")]
        {
            let now = self.held.fetch_add(1, Ordering::Relaxed) + 1;
            self.peak.fetch_max(now, Ordering::Relaxed);
        }
    }

    fn pass(&self, _items: usize) {
        #[cfg(feature = "test-hooks")]
        {
            self.held.fetch_sub(_items, Ordering::Relaxed);
            self.passes.fetch_add(1, Ordering::Relaxed);
            self.largest.fetch_max(_items, Ordering::Relaxed);
        }
    }

    fn stats(&self) -> ScratchStats {
        #[cfg(feature = "test-hooks")]
        {
            ScratchStats {
                peak_items: self.peak.load(Ordering::Relaxed),
                passes: self.passes.load(Ordering::Relaxed),
                largest_pass: self.largest.load(Ordering::Relaxed),
            }
        }
        #[cfg(not(feature = "test-hooks"))]
        ScratchStats::default()
    }
}

/// The items of scratch not yet reserved by a task.
struct Budget {
    free: AtomicUsize,
    /// What one task reserves: the budget over rayon's threads.
    share: usize,
}

impl Budget {
    fn new(items: usize) -> Self {
        let threads = rayon::current_num_threads().max(1);
        Self {
            free: AtomicUsize::new(items),
            share: (items / threads).max(1),
        }
    }

    /// Reserves up to a share; 0 when the budget is spent. Relaxed: the
    /// counter guards no data, only how much memory tasks may hold, and a
    /// compare-and-swap fails only because another task reserved or returned
    /// room meanwhile.
    fn take(&self) -> usize {
        let mut free = self.free.load(Ordering::Relaxed);
        loop {
            let n = free.min(self.share);
            if n == 0 {
                return 0;
            }
            match self.free.compare_exchange_weak(
                free,
                free - n,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return n,
                Err(now) => free = now,
            }
        }
    }

    fn give_back(&self, n: usize) {
        self.free.fetch_add(n, Ordering::Relaxed);
    }
}

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

/// Orders `v` by `key` (`0..keys`) in place, and leaves in `starts` where each
/// key's run begins (`starts[keys]` is `v.len()`): an American flag sort, one
/// counting pass, then every hash swapped straight into its key's run.
fn sort_by_key_in_place(
    v: &mut [u64],
    keys: usize,
    key: impl Fn(u64) -> usize,
    starts: &mut Vec<usize>,
    next: &mut Vec<usize>,
) {
    starts.clear();
    starts.resize(keys + 1, 0);
    for &h in v.iter() {
        starts[key(h) + 1] += 1;
    }
    for k in 0..keys {
        starts[k + 1] += starts[k];
    }
    next.clear();
    next.extend_from_slice(&starts[..keys]);
    for k in 0..keys {
        let end = starts[k + 1];
        while next[k] < end {
            // Carry the hash out of the next unsorted slot of run `k` to its
            // own run, taking the hash found there along, until one belongs
            // to `k`: each swap puts one hash in its run for good.
            let mut h = v[next[k]];
            let mut kh = key(h);
            while kh != k {
                std::mem::swap(&mut h, &mut v[next[kh]]);
                next[kh] += 1;
                kh = key(h);
            }
            v[next[k]] = h;
            next[k] += 1;
        }
    }
}

/// Inserted count and the items that did not fit.
type Loaded<T> = (usize, Vec<T>);

fn merge<T>(a: Loaded<T>, b: Loaded<T>) -> Loaded<T> {
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

/// Inserts `hashes` in the order given, without counting them; pushes the
/// ones that do not fit onto `failed` and returns how many went in.
fn insert_run<W: Width>(
    table: &Table<W>,
    hashes: impl Iterator<Item = u64>,
    failed: &mut Vec<u64>,
) -> usize {
    let mut inserted = 0;
    for h in hashes {
        if table.insert_uncounted(table.position(h)).is_ok() {
            inserted += 1;
        } else {
            failed.push(h);
        }
    }
    inserted
}

/// How many items ahead [`insert_sorted`] asks for a second bucket.
const AHEAD: usize = 16;

/// [`insert_run`] for hashes in table order. Their first buckets come in
/// order, so the hardware prefetcher streams them in; their second buckets,
/// where an insert goes when the first is full (most of them, towards the
/// end of a load), are anywhere in the table. So the second bucket of the
/// item [`AHEAD`] places on is requested now, to overlap its miss with the
/// inserts between.
fn insert_sorted<W: Width>(table: &Table<W>, hashes: &[u64], failed: &mut Vec<u64>) -> usize {
    for &h in hashes.iter().take(AHEAD) {
        table.prefetch_bucket(table.position(h).i2, Reach::Later);
    }
    let mut inserted = 0;
    for (k, &h) in hashes.iter().enumerate() {
        if let Some(&ahead) = hashes.get(k + AHEAD) {
            table.prefetch_bucket(table.position(ahead).i2, Reach::Later);
        }
        if table.insert_uncounted(table.position(h)).is_ok() {
            inserted += 1;
        } else {
            failed.push(h);
        }
    }
    inserted
}

/// Moves out of a pass's `items` those to give back for the `failed` hashes
/// (one per hash), into `out`; drops the rest.
trait GiveBack<T>: Fn(&mut Vec<T>, &[u64], &mut Vec<T>) + Sync {}

impl<T, F: Fn(&mut Vec<T>, &[u64], &mut Vec<T>) + Sync> GiveBack<T> for F {}

/// One task's share of a load: its scratch buffer, the pass in it, and what
/// it has loaded so far.
struct Pass<'a, W: Width, T, G> {
    table: &'a Table<W>,
    budget: &'a Budget,
    meter: &'a Meter,
    give_back: &'a G,
    /// Whether passes are sorted (the table is large enough).
    sort: bool,
    /// Items of the budget this task holds (0: none yet, or none left).
    room: usize,
    /// Whether the task has asked the budget for room.
    asked: bool,
    hashes: Vec<u64>,
    items: Vec<T>,
    /// Inserted one at a time with no scratch, not yet counted in.
    uncounted: usize,
    inserted: usize,
    failed: Vec<T>,
    /// The sorts' counters, the partitions' bounds, and the failed hashes
    /// of a pass.
    starts: Vec<usize>,
    next: Vec<usize>,
    parts: Vec<usize>,
    failed_hashes: Vec<u64>,
}

impl<'a, W: Width, T, G: GiveBack<T>> Pass<'a, W, T, G> {
    fn new(
        table: &'a Table<W>,
        budget: &'a Budget,
        meter: &'a Meter,
        give_back: &'a G,
        sort: bool,
    ) -> Self {
        Self {
            table,
            budget,
            meter,
            give_back,
            sort,
            room: 0,
            asked: false,
            hashes: Vec::new(),
            items: Vec::new(),
            uncounted: 0,
            inserted: 0,
            failed: Vec::new(),
            starts: Vec::new(),
            next: Vec::new(),
            parts: Vec::new(),
            failed_hashes: Vec::new(),
        }
    }

    /// Takes and returns the task's state boxed: rayon's `fold` moves its
    /// accumulator through every call, and a pointer is cheaper to move than
    /// the state (the move was a sixth of a load's time).
    #[inline]
    fn push(mut self: Box<Self>, (hash, item): (u64, T)) -> Box<Self> {
        if !self.asked {
            self.asked = true;
            self.room = self.budget.take();
            self.hashes.reserve_exact(self.room);
            if std::mem::size_of::<T>() > 0 {
                self.items.reserve_exact(self.room);
            }
        }
        if self.room == 0 {
            // No scratch: insert it now.
            if self
                .table
                .insert_uncounted(self.table.position(hash))
                .is_ok()
            {
                self.uncounted += 1;
                if self.uncounted == CHUNK {
                    self.table.count_in(hash, self.uncounted);
                    self.inserted += self.uncounted;
                    self.uncounted = 0;
                }
            } else {
                self.failed.push(item);
            }
            return self;
        }
        self.hashes.push(hash);
        self.items.push(item);
        self.meter.hold();
        if self.hashes.len() >= self.room {
            self.flush();
        }
        self
    }

    /// Inserts the pass held, in table order if it is large enough, and
    /// empties the buffer.
    fn flush(&mut self) {
        let n = self.hashes.len();
        if n == 0 {
            return;
        }
        let table = self.table;
        let failed = &mut self.failed_hashes;
        let inserted = if self.sort && n >= SORT_MIN_ITEMS {
            let (starts, next) = (&mut self.starts, &mut self.next);
            sort_by_key_in_place(&mut self.hashes, 1 << FIRST_BITS, first_key, starts, next);
            // The partitions' bounds move to `parts`, freeing `starts` for
            // the second sort.
            std::mem::swap(starts, &mut self.parts);
            let mut inserted = 0;
            for p in 0..1 << FIRST_BITS {
                let part = &mut self.hashes[self.parts[p]..self.parts[p + 1]];
                sort_by_key_in_place(part, 1 << SECOND_BITS, second_key, starts, next);
                inserted += insert_sorted(table, part, failed);
            }
            inserted
        } else {
            insert_run(table, self.hashes.iter().copied(), failed)
        };
        table.count_in(self.hashes[0], inserted);
        self.inserted += inserted;
        if self.failed_hashes.is_empty() {
            self.items.clear();
        } else {
            (self.give_back)(&mut self.items, &self.failed_hashes, &mut self.failed);
            self.items.clear();
            self.failed_hashes.clear();
        }
        self.hashes.clear();
        self.meter.pass(n);
    }

    /// Flushes the last pass, returns the room to the budget, and gives the
    /// task's result.
    fn finish(mut self: Box<Self>) -> Loaded<T> {
        self.flush();
        self.budget.give_back(self.room);
        if self.uncounted > 0 {
            self.table.count_in(self.inserted as u64, self.uncounted);
            self.inserted += self.uncounted;
        }
        (self.inserted, self.failed)
    }
}

/// Loads `(hash, item)` pairs into `table` through at most `budget_items`
/// of scratch (see the module documentation).
fn load<W: Width, T: Send>(
    table: &Table<W>,
    items: impl ParallelIterator<Item = (u64, T)>,
    budget_items: usize,
    give_back: &impl GiveBack<T>,
    meter: &Meter,
) -> Loaded<T> {
    let sort = table.memory_usage() >= SORT_MIN_TABLE_BYTES;
    let budget = Budget::new(if sort { budget_items } else { 0 });
    items
        .fold(
            || Box::new(Pass::new(table, &budget, meter, give_back, sort)),
            Pass::push,
        )
        .map(Pass::finish)
        .reduce(|| (0, Vec::new()), merge)
}

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

    /// More tasks than threads asking for room: the shares handed out never
    /// add up to more than the budget, and what is given back is handed out
    /// again.
    #[test]
    fn budget_hands_out_no_more_than_it_has() {
        let threads = rayon::current_num_threads();
        let budget = Budget::new(1000 * threads + 7);
        let taken: Vec<usize> = (0..threads + 3).map(|_| budget.take()).collect();
        assert_eq!(taken.iter().sum::<usize>(), 1000 * threads + 7);
        assert!(taken.iter().all(|&t| t <= 1000 + 7 / threads));
        assert_eq!(budget.take(), 0);
        budget.give_back(taken[0]);
        assert_eq!(budget.take(), taken[0]);
        assert_eq!(budget.take(), 0);
    }

    #[test]
    fn passes_sort_into_bucket_order_in_place() {
        let mut rng = crate::test_rng::xorshift(7);
        let mut hashes: Vec<u64> = (0..scaled(100_000)).map(|_| rng()).collect();
        hashes.extend([u64::MAX, 0, 1 << 31, 5 << 20, u64::from(u32::MAX) << 32]);
        let mut expected = hashes.clone();
        let (mut starts, mut next) = (Vec::new(), Vec::new());
        sort_by_key_in_place(
            &mut hashes,
            1 << FIRST_BITS,
            first_key,
            &mut starts,
            &mut next,
        );
        let parts = starts.clone();
        for p in 0..1 << FIRST_BITS {
            let part = &mut hashes[parts[p]..parts[p + 1]];
            assert!(part.iter().all(|&h| first_key(h) == p));
            sort_by_key_in_place(part, 1 << SECOND_BITS, second_key, &mut starts, &mut next);
        }
        // Ordered by the top 22 bits of the low half, which order the first
        // buckets; nothing lost or duplicated.
        let top = |h: u64| (h as u32) >> (32 - FIRST_BITS - SECOND_BITS);
        assert!(hashes.windows(2).all(|w| top(w[0]) <= top(w[1])));
        hashes.sort_unstable();
        expected.sort_unstable();
        assert_eq!(hashes, expected);
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
