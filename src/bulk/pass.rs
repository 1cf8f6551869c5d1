//! A load's passes: each task's scratch buffer, sized from the load's budget,
//! filled with hashes, sorted into table order in place and inserted, and
//! the budget and meter they share (see the parent module).

use super::*;

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
pub(super) struct Meter {
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

    pub(super) fn stats(&self) -> ScratchStats {
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

/// Items a task's scratch first holds; it doubles from there as items come,
/// up to the task's share of the budget (32 KiB of hashes).
const FIRST_SCRATCH: usize = 1 << 12;

/// The items of scratch not yet reserved by a task.
pub(super) struct Budget {
    free: AtomicUsize,
    /// What one task reserves: the budget over rayon's threads.
    share: usize,
}

impl Budget {
    pub(super) fn new(items: usize) -> Self {
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
    pub(super) fn take(&self) -> usize {
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

    pub(super) fn give_back(&self, n: usize) {
        self.free.fetch_add(n, Ordering::Relaxed);
    }
}

/// The partition of a hash.
#[inline(always)]
pub(super) fn first_key(hash: u64) -> usize {
    (hash as u32 >> (32 - FIRST_BITS)) as usize
}

/// The order of a hash within its partition.
#[inline(always)]
pub(super) fn second_key(hash: u64) -> usize {
    ((hash as u32 >> (32 - FIRST_BITS - SECOND_BITS)) & ((1 << SECOND_BITS) - 1)) as usize
}

/// Orders `v` by `key` (`0..keys`) in place, and leaves in `starts` where each
/// key's run begins (`starts[keys]` is `v.len()`): an American flag sort, one
/// counting pass, then every hash swapped straight into its key's run.
///
/// `far`: `v` may be larger than the caches (a whole pass; a partition fits
/// in L2). Each swap writes at one of the runs' fronts, which move forward
/// one hash at a time, too many streams for the hardware prefetcher; so each
/// write asks for the line [`FRONT_AHEAD`] hashes past its front (on a load
/// of 10^9 items, the first sort took 25 CPU-seconds without, 11 with).
pub(super) fn sort_by_key_in_place(
    v: &mut [u64],
    keys: usize,
    key: impl Fn(u64) -> usize,
    starts: &mut Vec<usize>,
    next: &mut Vec<usize>,
    far: bool,
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
                let at = next[kh];
                std::mem::swap(&mut h, &mut v[at]);
                next[kh] = at + 1;
                if far {
                    prefetch_line(v.as_ptr().wrapping_add(at + FRONT_AHEAD), Reach::Later);
                }
                kh = key(h);
            }
            v[next[k]] = h;
            next[k] += 1;
        }
    }
}

/// Orders a pass by partition ([`first_key`]), and leaves the partitions'
/// bounds in `starts`.
pub(super) fn sort_into_partitions(v: &mut [u64], starts: &mut Vec<usize>, next: &mut Vec<usize>) {
    sort_by_key_in_place(v, 1 << FIRST_BITS, first_key, starts, next, true);
}

/// Orders a partition by [`second_key`].
pub(super) fn sort_partition(v: &mut [u64], starts: &mut Vec<usize>, next: &mut Vec<usize>) {
    sort_by_key_in_place(v, 1 << SECOND_BITS, second_key, starts, next, false);
}

/// How far ahead of a run's write front [`sort_by_key_in_place`] asks for
/// the buffer's line: two lines, reached some thousand swaps later.
const FRONT_AHEAD: usize = 16;

/// Inserted count and the items that did not fit.
pub(super) type Loaded<T> = (usize, Vec<T>);

pub(super) fn merge<T>(a: Loaded<T>, b: Loaded<T>) -> Loaded<T> {
    (a.0 + b.0, concat(a.1, b.1))
}

/// Both parts' failures in one vector: the shorter appended to the longer, so
/// that a parallel reduce copies as little as it can.
pub(super) fn concat<T>(mut a: Vec<T>, mut b: Vec<T>) -> Vec<T> {
    if a.len() < b.len() {
        std::mem::swap(&mut a, &mut b);
    }
    a.append(&mut b);
    a
}

/// Inserts `hashes` in the order given, without counting them; pushes the
/// ones that do not fit onto `failed` and returns how many went in.
pub(super) fn insert_run<W: Width>(
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

/// How many items ahead [`insert_sorted`] asks for an item's buckets.
pub(super) const AHEAD: usize = 16;

/// [`insert_run`] for hashes in table order. Their first buckets come in
/// order but sparse (a pass holds an item per few lines of the table), and
/// their second buckets, where an insert goes when the first has little
/// room (most of them, towards the end of a load), are anywhere in the
/// table. An insert's compare-and-swap is a full barrier on x86-64, so a
/// miss the insert meets itself is overlapped with nothing: both buckets of
/// the item [`AHEAD`] places on are asked for now.
pub(super) fn insert_sorted<W: Width>(
    table: &Table<W>,
    hashes: &[u64],
    failed: &mut Vec<u64>,
) -> usize {
    let ask = |h: u64| {
        let p = table.position(h);
        table.prefetch_bucket(p.i1, Reach::Later);
        table.prefetch_bucket(p.i2, Reach::Later);
    };
    hashes.iter().take(AHEAD).for_each(|&h| ask(h));
    let mut inserted = 0;
    for (k, &h) in hashes.iter().enumerate() {
        if let Some(&ahead) = hashes.get(k + AHEAD) {
            ask(ahead);
        }
        if table.insert_uncounted(table.position(h)).is_ok() {
            inserted += 1;
        } else {
            failed.push(h);
        }
    }
    inserted
}

/// Partitions of a pass that [`insert_partitions`] leaves to one rayon job:
/// 16 jobs a pass, each of a sixteenth of the pass.
const PARTITIONS_PER_JOB: usize = (1 << FIRST_BITS) / 16;

/// Orders each partition of `hashes` by [`second_key`] and inserts it with
/// [`insert_sorted`]; `bounds` are the partitions' bounds in the pass, of
/// which `hashes` starts at `bounds[0]`. The partitions are split between
/// rayon's threads by `join`, so that a thread whose items have run out
/// helps insert the pass of one whose items have not: rayon splits a load's
/// items into a few long runs, one thread's each, and without this the last
/// run's passes are one thread's alone (a 10^9-item load on two threads ran
/// its last 20 of 68 seconds on one). A `join` nobody steals runs both
/// halves in turn, at the cost of a push and a pop.
pub(super) fn insert_partitions<W: Width>(
    table: &Table<W>,
    hashes: &mut [u64],
    bounds: &[usize],
    failed: &mut Vec<u64>,
) -> usize {
    let partitions = bounds.len() - 1;
    if partitions <= PARTITIONS_PER_JOB {
        let (mut starts, mut next) = (Vec::new(), Vec::new());
        let mut inserted = 0;
        for p in 0..partitions {
            let part = &mut hashes[bounds[p] - bounds[0]..bounds[p + 1] - bounds[0]];
            sort_partition(part, &mut starts, &mut next);
            inserted += insert_sorted(table, part, failed);
        }
        return inserted;
    }
    let mid = partitions / 2;
    let (left, right) = hashes.split_at_mut(bounds[mid] - bounds[0]);
    let mut failed_right = Vec::new();
    let (a, b) = rayon::join(
        || insert_partitions(table, left, &bounds[..=mid], failed),
        || insert_partitions(table, right, &bounds[mid..], &mut failed_right),
    );
    failed.append(&mut failed_right);
    a + b
}

/// Moves out of a pass's `items` those to give back for the `failed` hashes
/// (one per hash), into `out`; drops the rest.
pub(super) trait GiveBack<T>: Fn(&mut Vec<T>, &[u64], &mut Vec<T>) + Sync {}

impl<T, F: Fn(&mut Vec<T>, &[u64], &mut Vec<T>) + Sync> GiveBack<T> for F {}

/// One task's share of a load: its scratch buffer, the pass in it, and what
/// it has loaded so far.
pub(super) struct Pass<'a, W: Width, T, G> {
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
    /// The first sort's counters (then the partitions' bounds), and the
    /// failed hashes of a pass.
    starts: Vec<usize>,
    next: Vec<usize>,
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
        }
        if self.room > 0 && self.hashes.len() == self.hashes.capacity().min(self.items.capacity()) {
            self.grow();
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

    /// Makes room in the full scratch for one more item: doubles it (from
    /// [`FIRST_SCRATCH`] items), never past the task's share. The share is
    /// what the task may hold, not what it allocates: a load of ten items
    /// holds ten, whatever the budget. Where the allocator refuses, the task
    /// keeps the scratch it has as its share, flushing it now, and returns
    /// the rest to the budget (with none, it inserts one at a time).
    #[cold]
    fn grow(&mut self) {
        let len = self.hashes.len();
        debug_assert!(len < self.room);
        let more = len.max(FIRST_SCRATCH).min(self.room - len);
        if self.hashes.try_reserve_exact(more).is_ok() && self.items.try_reserve_exact(more).is_ok()
        {
            return;
        }
        self.budget.give_back(self.room - len);
        self.room = len;
        self.flush();
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
            sort_into_partitions(&mut self.hashes, starts, next);
            insert_partitions(table, &mut self.hashes, starts, failed)
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
pub(super) fn load<W: Width, T: Send>(
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
