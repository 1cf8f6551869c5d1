//! `--collision`: tables whose keys share fingerprints and bucket pairs.
//!
//! Random keys on a large table almost never collide, so the main mode cannot
//! see hazards that need two items with one fingerprint and one bucket pair
//! (IMPLEMENTATION.md, "Unannounced moves"). Here every key is pre-hashed: a few high
//! halves (fingerprints) times one low half per bucket (first buckets). Keys
//! with one high half and first buckets `a` and `alt(a)` are twins: same
//! fingerprint, same pair, opposite first buckets.
//!
//! Tables of 2 to 8 buckets make every operation collide; they have one
//! relocation stripe (a table has one per 64 buckets), so tables of 256 and
//! 1030 buckets (4 and 16 stripes) check as well that every operation on a
//! pair uses that pair's stripe. Their keys are as crowded: each fingerprint
//! at eight first buckets and at their alternates.
//!
//! Each round builds a fresh table of one width and size, and threads run a
//! random mix on it for a short while, of one of three [`Kind`]s: `contains`,
//! `insert` and `remove` only; every call (`contains_hash_batch` on a run of
//! keys, `count` and `insert_if_absent` too); or every call while thread 0 also
//! calls `clear` now and then. Each thread keeps a shadow multiset of the
//! copies *it* inserted; copies are interchangeable, so a key a thread holds is
//! live whatever the other threads do with their own copies. A `clear` takes
//! every thread's copies: each thread forgets its holdings when it sees that a
//! clear has started, and believes an answer about a held copy only if no clear
//! started before the answer came (the clearing thread counts a clear as
//! started before it calls `clear`, so a clear that took the copy is seen). In
//! those rounds each thread has fingerprints of its own (see `one_round`).
//! Checked while running:
//!
//! * `contains` of a held key is true, and so is its answer in a batch; every
//!   held key is re-checked every [`RECHECK`] operations;
//! * `count` of a key is at least the copies of it the thread holds;
//! * `insert_if_absent` of a held key answers `Ok(false)` (a copy was present
//!   throughout);
//! * `remove` of a held key returns true (a thread removes only what it holds).
//!
//! Checked at the end of each round, once the threads are joined:
//!
//! * `len()` equals the number of fingerprints in the table, and, in a round
//!   without clears, the copies held (`Ok(true)` from `insert_if_absent`
//!   counts as a copy held);
//! * removing every held copy succeeds, after which (and after a last `clear`
//!   in a round with clears) `len()` is 0, the table is empty, and every slot
//!   takes a fresh item (so no orphan copy is left taking room).
//!
//! Mutations it catches (each within the CI run's 15 s,
//! at seed 7 and at seed 8):
//!
//! * removes that do not announce themselves (`Snapshot::take` instead of
//!   `announce`): a held key's remove returns false, in the first round;
//! * `insert_if_absent` counting a copy it took back as a duplicate (the
//!   thread then holds a copy that is not there): a held key's remove
//!   returns false, or its `insert_if_absent` adds a copy;
//! * `clear` not counting what its second sweep takes: at the end, `len()`
//!   above the fingerprints in the table;
//! * `clear` taking the fingerprints of stripes with a mover in flight (it
//!   takes a mover's extra copy, and the mover's take then another's): a held
//!   key's `insert_if_absent` adds a copy, or its lookup returns false.
//!
//! Caught only sometimes: batch lookups that believe a miss without its
//! counter (a held key's batch answer false, in two of five runs of 10 to
//! 15 s), and a `count` that believes a look that found something without
//! its counter (a count below the copies held, in one of five runs of 15 s).
//! Not caught: a mover that publishes on another pair's stripe (two runs of
//! 15 s). A lookup's two loads are a nanosecond apart, and a move must fall
//! between them, where a remove's two takes are further apart. The loom
//! models of lookups (loom-tests/tests/lookup.rs) catch the first two every
//! time; the unit test `writers_mark_the_readers_stripe_at_every_width`
//! (src/table/mod.rs) the third, and a remove announced on another stripe.
//!
//! Consecutive rounds take the three kinds in turn, every third round the
//! next width, every 24th the next size (2, 256, 4, 1030, 6 and 8 buckets):
//! 144 rounds, about 15 s, for every combination, repeated until `--seconds`
//! have passed.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use lockfree_cuckoo_filter::test_hooks::{self, TableHooks};
use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder, FingerprintBits};

use super::{Config, Rng};

/// Table sizes, in buckets: one stripe up to 8, 4 stripes at 256 and 16 at
/// 1030.
const SIZES: [u64; 6] = [2, 256, 4, 1030, 6, 8];

/// Fingerprints (high halves) per round: each appears once per bucket of a
/// small table, and at [`first_buckets`] of a larger one.
const FINGERPRINTS: usize = 3;

/// The most first buckets a fingerprint's keys have (see [`first_buckets`]).
const FIRST_BUCKETS: u64 = 8;

/// Operations between two checks of every held key.
const RECHECK: u64 = 256;

/// The longest run of keys one batch lookup asks about: up to three groups of
/// the batch's pipeline, the last one short.
const MAX_BATCH: usize = 48;

/// Length of one round.
const ROUND: Duration = Duration::from_millis(100);

/// What a round's threads do.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `contains`, `insert` and `remove` only: the mix that the hazards of
    /// colliding items need most of (a batch lookup takes as long as dozens
    /// of these, and in a round of batches removes that do not announce
    /// themselves went unseen for 10 s).
    Plain,
    /// Every call, batch lookups and `insert_if_absent` included.
    Every,
    /// Every call, and thread 0 clears now and then.
    Clears,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Plain, Kind::Every, Kind::Clears];

    fn name(self) -> &'static str {
        match self {
            Kind::Plain => "the plain mix",
            Kind::Every => "every call",
            Kind::Clears => "with clears",
        }
    }

    /// The operation for a draw `r` in `0..100`.
    fn op(self, r: u64) -> Op {
        match (self, r) {
            (Kind::Plain, 0..40) => Op::Contains,
            (Kind::Plain, 40..70) => Op::Insert,
            (Kind::Plain, _) => Op::Remove,
            (_, 0..20) => Op::Contains,
            (_, 20..25) => Op::Count,
            (_, 25..35) => Op::Batch,
            (_, 35..55) => Op::Insert,
            (_, 55..70) => Op::InsertIfAbsent,
            (_, _) => Op::Remove,
        }
    }
}

/// One operation of a thread's mix.
enum Op {
    Contains,
    Count,
    Batch,
    Insert,
    InsertIfAbsent,
    Remove,
}

/// Counts over all rounds.
#[derive(Default)]
struct Totals {
    rounds: AtomicU64,
    ops: AtomicU64,
    full: AtomicU64,
    clears: AtomicU64,
}

/// Runs collision rounds for `--seconds`; true if no violation was found.
pub(crate) fn run(cfg: &Config) -> bool {
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(cfg.seconds);
    let totals = Totals::default();
    let widths = FingerprintBits::ALL.len();
    let mut round = 0u64;
    let mut violations = 0u64;
    while Instant::now() < deadline {
        let r = round as usize;
        let kind = Kind::ALL[r % Kind::ALL.len()];
        let bits = FingerprintBits::ALL[(r / Kind::ALL.len()) % widths];
        let buckets = SIZES[(r / Kind::ALL.len() / widths) % SIZES.len()];
        let seed = cfg.seed.wrapping_add(round.wrapping_mul(0x9e37_79b9));
        if let Err(e) = one_round(cfg, bits, buckets, kind, seed, &totals) {
            violations += 1;
            eprintln!(
                "VIOLATION (collision, {}-bit, {buckets} buckets, {}, seed {seed}): {e}\n  \
                 reproduce: cargo run --release -p stress -- --collision --threads {} --seed {}",
                crate::bits_arg(bits),
                kind.name(),
                cfg.threads,
                cfg.seed
            );
            if !cfg.keep_going {
                return false;
            }
        }
        round += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let ops = totals.ops.load(Ordering::Relaxed);
    println!(
        "collision: {} rounds (widths {}, {:?} buckets, the plain mix, every call, with clears), \
         {} threads, {ops} operations and {} clears in {secs:.1} s ({:.1} M/s), \
         {} inserts found the table full, {violations} violations",
        totals.rounds.load(Ordering::Relaxed),
        FingerprintBits::ALL.map(crate::bits_arg).join("/"),
        SIZES,
        cfg.threads,
        totals.clears.load(Ordering::Relaxed),
        ops as f64 / secs / 1e6,
        totals.full.load(Ordering::Relaxed),
    );
    violations == 0
}

/// A hash with high half `high` whose first bucket is `bucket` in a table of
/// `buckets` buckets (the table maps the low half onto buckets by
/// multiply-shift, so the smallest low half that lands in `bucket` does).
fn aimed(high: u32, bucket: u64, buckets: u64) -> u64 {
    let low = (bucket << 32).div_ceil(buckets);
    (u64::from(high) << 32) | low
}

/// The first buckets of a fingerprint's keys (high half `high`): every
/// bucket of a table of up to [`FIRST_BUCKETS`]; in a larger one, that many
/// evenly spaced and their alternates for this fingerprint (so each key has
/// its twin), which keeps the keys as crowded into few pairs as in the small
/// tables, now pairs of several stripes.
fn first_buckets(filter: &CuckooFilter, high: u32, buckets: u64) -> Vec<u64> {
    if buckets <= FIRST_BUCKETS {
        return (0..buckets).collect();
    }
    let step = buckets / FIRST_BUCKETS;
    (0..FIRST_BUCKETS)
        .map(|j| j * step)
        .flat_map(|b| [b, filter.position(aimed(high, b, buckets)).1])
        .collect()
}

/// The clears of a round, counted by the clearing thread around each call.
/// SeqCst, like the threads' reads of `started`: a clear is counted as started
/// before it takes anything, so a thread whose copy it took and that read
/// the taken word (a read that synchronizes with the clear's CAS) then reads
/// the new count.
#[derive(Default)]
struct Clears {
    started: AtomicU64,
    done: AtomicU64,
}

impl Clears {
    fn started(&self) -> u64 {
        self.started.load(Ordering::SeqCst)
    }

    /// True if no clear is in flight and `epoch` clears have started.
    fn quiet_at(&self, epoch: u64) -> bool {
        self.done.load(Ordering::SeqCst) == epoch && self.started() == epoch
    }

    fn clear(&self, filter: &CuckooFilter) {
        self.started.fetch_add(1, Ordering::SeqCst);
        filter.clear();
        self.done.fetch_add(1, Ordering::SeqCst);
    }
}

/// The copies of each key one thread inserted and has not removed, valid
/// while no clear has started since `epoch` clears had.
struct Holdings {
    copies: Vec<u32>,
    epoch: u64,
}

/// One round: a fresh table, threads on colliding keys, then the end checks.
fn one_round(
    cfg: &Config,
    bits: FingerprintBits,
    buckets: u64,
    kind: Kind,
    seed: u64,
    totals: &Totals,
) -> Result<(), String> {
    let filter = test_hooks::with_buckets(buckets, bits, DefaultHashBuilder::default())
        .map_err(|e| format!("cannot build a {buckets}-bucket table: {e}"))?;
    // With clears, each thread has fingerprints of its own (see `view`).
    let clearing = kind == Kind::Clears;
    let sets = if clearing { cfg.threads } else { 1 };
    let mut rng = Rng::new(seed, u64::MAX);
    let mut fingerprints = Vec::new();
    let mut highs = Vec::new();
    while highs.len() < FINGERPRINTS * sets {
        let high = rng.next() as u32;
        // Distinct fingerprints at this width (high halves are not: at 8
        // bits, 24 of them would share some).
        let fp = filter.position(u64::from(high) << 32).2;
        if !clearing || !fingerprints.contains(&fp) {
            fingerprints.push(fp);
            highs.push(high);
        }
    }
    let keys: Vec<u64> = highs
        .into_iter()
        .flat_map(|high| {
            first_buckets(&filter, high, buckets)
                .into_iter()
                .map(move |b| aimed(high, b, buckets))
        })
        .collect();
    // The keys thread `t` uses. In a round with clears, a remove that began
    // before a clear took the remover's copy may end after it, taking a copy
    // of its fingerprint put since: with fingerprints of its own, that is a
    // copy of the remover's (none: it puts nothing meanwhile), never one
    // another thread holds.
    let per_set = keys.len() / sets;
    let view = |t: usize| &keys[(t % sets) * per_set..][..per_set];
    // Thread 0 clears once in `16 · buckets` of its operations on average:
    // meanwhile the threads insert several times the table's slots (4 to 6
    // a bucket), so most clears find a full table, with moves in flight.
    let clear_every = clearing.then_some(16 * buckets);

    let stop = AtomicBool::new(false);
    let clears = Clears::default();
    let first_error = Mutex::new(None::<String>);
    let holdings: Vec<Holdings> = thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|t| {
                let (filter, keys, stop, clears, first_error) =
                    (&filter, view(t), &stop, &clears, &first_error);
                let clear_every = clear_every.filter(|_| t == 0);
                s.spawn(move || {
                    let mut worker = Worker::new(filter, keys, clears, kind, seed, t);
                    let result = worker.run(stop, clear_every);
                    if let Err(e) = result {
                        stop.store(true, Ordering::Relaxed);
                        first_error.lock().unwrap().get_or_insert(e);
                    }
                    totals.ops.fetch_add(worker.ops, Ordering::Relaxed);
                    totals.full.fetch_add(worker.full, Ordering::Relaxed);
                    worker.held
                })
            })
            .collect();
        let end = Instant::now() + ROUND;
        while Instant::now() < end && !stop.load(Ordering::Relaxed) {
            thread::sleep(Duration::from_millis(2));
        }
        stop.store(true, Ordering::Relaxed);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    totals.rounds.fetch_add(1, Ordering::Relaxed);
    totals.clears.fetch_add(clears.started(), Ordering::Relaxed);
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    end_check(&filter, view, &holdings, clears.started(), buckets)
}

/// One thread of a round, with its holdings and counts.
struct Worker<'a> {
    filter: &'a CuckooFilter,
    keys: &'a [u64],
    clears: &'a Clears,
    kind: Kind,
    rng: Rng,
    t: usize,
    held: Holdings,
    ops: u64,
    full: u64,
}

impl<'a> Worker<'a> {
    fn new(
        filter: &'a CuckooFilter,
        keys: &'a [u64],
        clears: &'a Clears,
        kind: Kind,
        seed: u64,
        t: usize,
    ) -> Self {
        Self {
            filter,
            keys,
            clears,
            kind,
            rng: Rng::new(seed, t as u64),
            t,
            held: Holdings {
                copies: vec![0; keys.len()],
                epoch: 0,
            },
            ops: 0,
            full: 0,
        }
    }

    /// The random mix until `stop`, and a clear every `clear_every`
    /// operations on average if given; the first violation seen.
    fn run(&mut self, stop: &AtomicBool, clear_every: Option<u64>) -> Result<(), String> {
        let t = self.t;
        loop {
            if self.ops % 64 == 0 && stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            self.ops += 1;
            // Copies held before a clear started may be gone.
            let epoch = self.clears.started();
            if epoch != self.held.epoch {
                self.held.copies.fill(0);
                self.held.epoch = epoch;
            }
            if clear_every.is_some_and(|n| self.rng.below(n) == 0) {
                self.clears.clear(self.filter);
                continue;
            }
            let k = self.rng.index(self.keys.len());
            let key = self.keys[k];
            let held = self.held.copies[k] > 0;
            let op = self.kind.op(self.rng.below(100));
            match op {
                Op::Contains => {
                    if held && !self.filter.contains_hash(key) && self.still_held() {
                        return Err(format!(
                            "thread {t}: contains({key:#x}) false for a held key"
                        ));
                    }
                }
                Op::Count => {
                    let counted = self.filter.count_hash(key);
                    if counted < self.held.copies[k] as usize && self.still_held() {
                        return Err(format!(
                            "thread {t}: count({key:#x}) {counted}, below the {} copies held",
                            self.held.copies[k]
                        ));
                    }
                }
                Op::Batch => self.batch(k)?,
                Op::Insert => {
                    // Counted only if no clear was in flight when it began,
                    // so that no clear that started before could take it.
                    let quiet = self.clears.quiet_at(epoch);
                    match self.filter.insert_hash(key) {
                        Ok(()) if quiet => self.held.copies[k] += 1,
                        Ok(()) => {}
                        Err(_) => self.full += 1,
                    }
                }
                Op::InsertIfAbsent => {
                    let quiet = self.clears.quiet_at(epoch);
                    match self.filter.insert_hash_if_absent(key) {
                        Ok(true) if held && self.still_held() => {
                            return Err(format!(
                                "thread {t}: insert_if_absent({key:#x}) added a copy of a held key"
                            ));
                        }
                        Ok(true) if quiet => self.held.copies[k] += 1,
                        Ok(_) => {}
                        Err(_) => self.full += 1,
                    }
                }
                Op::Remove => {
                    if held {
                        if self.filter.remove_hash(key) {
                            self.held.copies[k] -= 1;
                        } else if self.still_held() {
                            return Err(format!(
                                "thread {t}: remove({key:#x}) false for a held key"
                            ));
                        }
                    }
                }
            }
            if self.ops % RECHECK == 0 {
                if let Some(k) = (0..self.keys.len())
                    .find(|&k| self.held.copies[k] > 0 && !self.filter.contains_hash(self.keys[k]))
                {
                    if self.still_held() {
                        return Err(format!(
                            "thread {t}: re-check: contains({:#x}) false for a held key",
                            self.keys[k]
                        ));
                    }
                }
            }
        }
    }

    /// Whether no clear has started since the holdings were last valid: an
    /// answer that denied a held copy, read before this is checked, is then
    /// a violation.
    fn still_held(&self) -> bool {
        self.clears.started() == self.held.epoch
    }

    /// A batch lookup of a run of keys from `k`, checked against the held ones.
    fn batch(&mut self, k: usize) -> Result<(), String> {
        let len = (1 + self.rng.index(MAX_BATCH)).min(self.keys.len() - k);
        let run = &self.keys[k..k + len];
        let mut out = [false; MAX_BATCH];
        self.filter.contains_hash_batch(run, &mut out[..len]);
        let missed = (0..len).find(|&j| self.held.copies[k + j] > 0 && !out[j]);
        match missed {
            Some(j) if self.still_held() => Err(format!(
                "thread {}: contains_hash_batch of {len} keys: {:#x} (key {}) false for a held key",
                self.t, run[j], j
            )),
            _ => Ok(()),
        }
    }
}

/// The quiescent checks: exact count, exact contents, and nothing left once
/// every held copy is removed.
fn end_check<'k>(
    filter: &CuckooFilter,
    view: impl Fn(usize) -> &'k [u64],
    holdings: &[Holdings],
    clears: u64,
    buckets: u64,
) -> Result<(), String> {
    // Holdings from before the last clear started are void.
    let valid = |h: &&Holdings| h.epoch == clears;
    let held: usize = holdings
        .iter()
        .filter(valid)
        .flat_map(|h| &h.copies)
        .map(|&n| n as usize)
        .sum();
    let in_table = filter.fingerprints().len();
    // Without clears every copy is held; with them, copies put while a clear
    // was in flight and not taken by it are in the table and held by no one.
    let exact = clears == 0;
    if filter.len() != in_table || (exact && in_table != held) || in_table < held {
        return Err(format!(
            "end: {held} copies held, len() = {}, {in_table} fingerprints in the table",
            filter.len()
        ));
    }
    for (t, h) in holdings.iter().enumerate().filter(|(_, h)| valid(h)) {
        let keys = view(t);
        for (k, &n) in h.copies.iter().enumerate() {
            for _ in 0..n {
                if !filter.remove_hash(keys[k]) {
                    return Err(format!(
                        "end: thread {t}'s copy of {:#x} not removable",
                        keys[k]
                    ));
                }
            }
        }
    }
    if !exact {
        filter.clear();
    }
    let left = filter.fingerprints();
    if !filter.is_empty() || !left.is_empty() {
        return Err(format!(
            "end: everything held removed, yet len() = {} and the table holds {left:?}",
            filter.len()
        ));
    }
    // Every slot takes a fresh item: a bucketful aimed at each bucket, each put
    // into its own bucket (an insert would choose the emptier of the pair
    // and need paths to fill the table to the last slot). A slot still
    // taken sends one item to its other bucket, and some later one finds
    // both full.
    let fresh = DefaultHashBuilder::default();
    for b in 0..buckets {
        for i in 0..u64::from(filter.fingerprint_bits().slots_per_bucket()) {
            let high = (fresh.hash_one((b, i)) >> 32) as u32;
            if !filter.put_hash(aimed(high, b, buckets)) {
                return Err(format!(
                    "end: an emptied table refused a fresh item in bucket {b}"
                ));
            }
        }
    }
    Ok(())
}
