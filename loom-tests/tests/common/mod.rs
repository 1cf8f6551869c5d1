//! Shared set-up for the loom models: tiny tables, fingerprints aimed at
//! chosen buckets, and the quiescent checks every model ends with.
//!
//! Everything here runs inside `loom::model` (the filter's atomics are loom's,
//! so a filter can only be built inside a model). Choosing fingerprints is pure
//! arithmetic on the table's addressing (`hash_for` / `position`, from the crate's test hooks) and costs
//! the model checker nothing.

#![allow(dead_code)] // each test binary uses a different part of this module

use lockfree_cuckoo_filter::test_hooks::{self, TableHooks};
use lockfree_cuckoo_filter::{
    CuckooFilter, DefaultHashBuilder, FingerprintBits, InsertError, DEFAULT_SEED,
};
use loom::sync::Arc;
use loom::thread::{self, JoinHandle};

pub type Filter = CuckooFilter<DefaultHashBuilder>;

/// Inserts `hash` into `f` on a new loom thread; join the handle for the result.
pub fn spawn_insert(f: &Arc<Filter>, hash: u64) -> JoinHandle<Result<(), InsertError>> {
    let f = Arc::clone(f);
    thread::spawn(move || f.insert_hash(hash))
}

/// Which of a model's two sides is spawned first, for models that spawn both
/// (the main thread only spawns and joins, so that neither side starts ahead
/// of the other). loom lets either side run first whatever the order, but
/// under a preemption bound the order (and so the threads' ids) can change which
/// schedules its search reaches, so such a model runs with both orders.
#[derive(Clone, Copy, Debug)]
pub enum SpawnOrder {
    /// `a` spawned (and joined) first, then `b`.
    AFirst,
    /// `b` spawned (and joined) first, then `a`.
    BFirst,
}

/// Runs `a` and `b` on two spawned threads, spawned and joined in the order
/// `order` says, and returns both results once both are done.
pub fn spawn_both<A, B, RA, RB>(order: SpawnOrder, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send + 'static,
    B: FnOnce() -> RB + Send + 'static,
    RA: Send + 'static,
    RB: Send + 'static,
{
    match order {
        SpawnOrder::AFirst => {
            let ha = thread::spawn(a);
            let hb = thread::spawn(b);
            let ra = ha.join().unwrap();
            (ra, hb.join().unwrap())
        }
        SpawnOrder::BFirst => {
            let hb = thread::spawn(b);
            let ha = thread::spawn(a);
            let rb = hb.join().unwrap();
            (ha.join().unwrap(), rb)
        }
    }
}

/// Runs `f` under loom. `LOOM_MAX_PREEMPTIONS` (and the other `LOOM_*`
/// variables) are honoured; without it the preemption bound defaults to 2, the
/// CI setting, since an unbounded search of these models would not finish.
/// Prints the number of executions explored (shown with `--nocapture`).
pub fn check<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    check_with(Limits::default(), f);
}

/// Per-model departures from loom's defaults.
#[derive(Clone, Copy, Default)]
pub struct Limits {
    /// At most this preemption bound, whatever `LOOM_MAX_PREEMPTIONS` says,
    /// for a model whose search explodes above it (say why where it is used).
    pub max_preemptions: Option<usize>,
}

/// [`check`] with [`Limits`].
pub fn check_with<F>(limits: Limits, f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let mut builder = loom::model::Builder::new();
    let bound = builder.preemption_bound.unwrap_or(2);
    builder.preemption_bound = Some(limits.max_preemptions.map_or(bound, |cap| bound.min(cap)));
    // A plain std counter, outside the model: it only counts executions.
    let executions = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&executions);
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        f();
    });
    println!(
        "{}: {} executions (preemption bound {:?})",
        std::thread::current().name().unwrap_or("model"),
        executions.load(Ordering::Relaxed),
        builder.preemption_bound,
    );
}

/// A filter of exactly `buckets` buckets of four 16-bit fingerprints (one
/// bucket per `AtomicU64`).
pub fn filter(buckets: u64) -> Filter {
    filter_of(FingerprintBits::Bits16, buckets)
}

/// A filter of exactly `buckets` buckets of `bits`-bit fingerprints. At 21
/// bits (three slots to a word, six to a bucket) a bucket is two words:
/// bucket `b` is words `2b` and `2b + 1`.
pub fn filter_of(bits: FingerprintBits, buckets: u64) -> Filter {
    test_hooks::with_buckets(buckets, bits, DefaultHashBuilder::with_seed(DEFAULT_SEED))
        .expect("tiny table")
}

/// The largest fingerprint searched for: the width's largest, at most 2^16 - 1
/// (703 and 1535 for the ranked buckets of eight and seven, whose
/// fingerprints are not a whole number of bits).
fn max_fp(f: &Filter) -> u32 {
    match f.fingerprint_bits() {
        FingerprintBits::Ranked8 => return 703,
        FingerprintBits::Ranked7 => return 1535,
        _ => {}
    }
    ((1u64 << f.fingerprint_bits().bits()) - 1).min(u64::from(u16::MAX)) as u32
}

/// The first `count` fingerprints (in increasing order, none in `skip`) whose
/// alternate bucket, seen from `bucket`, is `alt`. (The alternate is never the
/// bucket itself: every fingerprint has two distinct buckets.)
pub fn fps(f: &Filter, bucket: u64, alt: u64, count: usize, skip: &[u32]) -> Vec<u32> {
    let found: Vec<u32> = (1..=max_fp(f))
        .filter(|fp| !skip.contains(fp))
        .filter(|&fp| f.position(f.hash_for(bucket, fp)) == (bucket, alt, fp))
        .take(count)
        .collect();
    assert_eq!(
        found.len(),
        count,
        "not enough fingerprints pairing {bucket} with {alt}"
    );
    found
}

/// The bucket other than `not` that a fingerprint in `bucket` can pair it with
/// (in a table of 4 buckets each bucket has exactly two partners).
pub fn partner(f: &Filter, bucket: u64, not: u64) -> u64 {
    (1..=max_fp(f))
        .map(|fp| f.position(f.hash_for(bucket, fp)).1)
        .find(|&alt| alt != not)
        .expect("a second partner")
}

/// One fingerprint pairing `bucket` with `alt`, not in `skip`.
pub fn fp(f: &Filter, bucket: u64, alt: u64, skip: &[u32]) -> u32 {
    fps(f, bucket, alt, 1, skip)[0]
}

/// Inserts the item with first bucket `bucket` and fingerprint `fp`, in the
/// set-up (before any thread is spawned); it must fit without a path.
pub fn prefill(f: &Filter, bucket: u64, fp: u32) -> u64 {
    let hash = f.hash_for(bucket, fp);
    assert!(f.put_hash(hash), "prefill fits");
    hash
}

/// The identity of an item in the table: its unordered bucket pair and its
/// fingerprint. Relocation changes the bucket, never this.
pub fn key(f: &Filter, hash: u64) -> ((u64, u64), u32) {
    let (i1, i2, fp) = f.position(hash);
    ((i1.min(i2), i1.max(i2)), fp)
}

/// Once every thread is joined: the table holds exactly the items `live` (a
/// multiset of hashes) and nothing else, each in one of its own two buckets;
/// every one of them is found; and `len()` is exact and agrees with the table
/// (model 6 of the suite: exact accounting, checked at the end of every model).
pub fn assert_holds_exactly(f: &Filter, live: &[u64]) {
    let mut want: Vec<_> = live.iter().map(|&h| key(f, h)).collect();
    want.sort_unstable();
    let mut have: Vec<_> = f
        .fingerprints()
        .into_iter()
        .map(|(b, fp)| key(f, f.hash_for(b, fp)))
        .collect();
    have.sort_unstable();
    assert_eq!(
        have, want,
        "table contents ((pair), fp) differ from the live items"
    );
    for &h in live {
        assert!(
            f.contains_hash(h),
            "live item {h:#x} not found when quiescent"
        );
    }
    assert_eq!(
        f.len(),
        live.len(),
        "len() is not successful inserts minus removes"
    );
    assert_eq!(
        f.len(),
        f.fingerprints().len(),
        "len() disagrees with the table"
    );
}

/// A 4-bucket table in which inserting `x` must move one fingerprint, the one
/// in slot 0 of bucket `from`, to bucket `to`: a cuckoo path of one step.
pub struct OneStep {
    /// Fingerprints pairing `from` with `to`; bucket `from` holds exactly these.
    pub movers: Vec<u32>,
    /// Hash of the new item: first bucket `from`, second bucket the other
    /// partner of `from`, which is full too.
    pub x: u64,
    /// Hashes of the items put in by the set-up.
    pub live: Vec<u64>,
}

/// Fills `f` (4 buckets) for a [`OneStep`] move `from -> to`: bucket `from`
/// full of fingerprints that pair it with `to`, bucket `other` (the new
/// item's second bucket) full of fingerprints that pair it with the fourth
/// bucket, `to` and the fourth bucket empty. The breadth-first search visits
/// the children of `from` first, so its path is `movers[0]: from -> to`.
pub fn one_step(f: &Filter, from: u64, to: u64) -> OneStep {
    let other = partner(f, from, to);
    let beyond = partner(f, other, from);
    let slots = f.fingerprint_bits().slots_per_bucket() as usize;
    let movers = fps(f, from, to, slots, &[]);
    let x = f.hash_for(from, fp(f, from, other, &[]));
    let mut live: Vec<u64> = movers.iter().map(|&m| prefill(f, from, m)).collect();
    live.extend(
        fps(f, other, beyond, slots, &[])
            .into_iter()
            .map(|o| prefill(f, other, o)),
    );
    OneStep { movers, x, live }
}

/// Which thread runs which side of a model. Every model runs with both: loom
/// explores different interleavings (and far more of them) depending on which
/// side is the main thread.
#[derive(Clone, Copy, Debug)]
pub enum Roles {
    /// The racing work `a` on a spawned thread, the checked operation `b` on
    /// the model's main thread.
    RacerSpawned,
    /// `a` on the main thread, `b` on a spawned one.
    RacerOnMain,
}

/// Runs `a` and `b` concurrently, placed on threads as `roles` says, and
/// returns both results once both are done.
pub fn race<A, B, RA, RB>(roles: Roles, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send + 'static,
    B: FnOnce() -> RB + Send + 'static,
    RA: Send + 'static,
    RB: Send + 'static,
{
    match roles {
        Roles::RacerSpawned => {
            let h = thread::spawn(a);
            let rb = b();
            (h.join().unwrap(), rb)
        }
        Roles::RacerOnMain => {
            let h = thread::spawn(b);
            let ra = a();
            (ra, h.join().unwrap())
        }
    }
}
