//! `--collision`: tiny tables whose keys share fingerprints.
//!
//! Random keys on a large table almost never collide, so the main mode cannot
//! see hazards that need two items with one fingerprint and one bucket pair
//! (IMPLEMENTATION.md, "Unannounced moves"). Here every key is pre-hashed: a few high
//! halves (fingerprints) times one low half per bucket (first buckets), on
//! tables of 2 to 8 buckets. Keys with one high half and first buckets `a` and
//! `alt(a)` are twins: same fingerprint, same pair, opposite first buckets.
//!
//! Mutation it catches (rechecked 2026-11-23): removes that do not announce
//! themselves (`Snapshot::take` instead of `announce`): a held key's remove
//! returned false within 0.1 s, at seeds 7, 8 and 9.
//!
//! Each round builds a fresh table of one width and size, and threads run a
//! random mix on it for a short while. Each thread keeps a shadow multiset of
//! the copies *it* inserted; copies are interchangeable, so a key a thread
//! holds is live whatever the other threads do with their own copies. Checked
//! while running:
//!
//! * `contains` of a held key is true, and every held key is re-checked every
//!   [`RECHECK`] operations;
//! * `remove` of a held key returns true (a thread removes only what it holds).
//!
//! Checked at the end of each round, once the threads are joined:
//!
//! * `len()` equals the copies held, and the table holds exactly that many
//!   fingerprints;
//! * removing every held copy succeeds, after which `len()` is 0, the table is
//!   empty, and every slot takes a fresh item (so no orphan copy is left
//!   taking room).
//!
//! Rounds cycle through every width and the sizes 2, 4, 6 and 8 buckets until
//! `--seconds` have passed.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use lockfree_cuckoo_filter::test_hooks::{self, TableHooks};
use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder, FingerprintBits};

use super::{Config, Rng};

/// Table sizes, in buckets.
const SIZES: [u64; 4] = [2, 4, 6, 8];

/// Fingerprints (high halves) per round: each appears once per bucket.
const FINGERPRINTS: usize = 3;

/// Operations between two checks of every held key.
const RECHECK: u64 = 256;

/// Length of one round.
const ROUND: Duration = Duration::from_millis(100);

/// Counts over all rounds.
#[derive(Default)]
struct Totals {
    rounds: AtomicU64,
    ops: AtomicU64,
    full: AtomicU64,
}

/// Runs collision rounds for `--seconds`; true if no violation was found.
pub(crate) fn run(cfg: &Config) -> bool {
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(cfg.seconds);
    let totals = Totals::default();
    let mut round = 0u64;
    let mut violations = 0u64;
    while Instant::now() < deadline {
        let bits = FingerprintBits::ALL[round as usize % FingerprintBits::ALL.len()];
        let buckets = SIZES[(round as usize / FingerprintBits::ALL.len()) % SIZES.len()];
        let seed = cfg.seed.wrapping_add(round.wrapping_mul(0x9e37_79b9));
        if let Err(e) = one_round(cfg, bits, buckets, seed, &totals) {
            violations += 1;
            eprintln!(
                "VIOLATION (collision, {}-bit, {buckets} buckets, seed {seed}): {e}\n  \
                 reproduce: cargo run --release -p stress -- --collision --threads {} --seed {}",
                bits.bits(),
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
        "collision: {} rounds (widths {}, {:?} buckets), {} threads, {ops} operations \
         in {secs:.1} s ({:.1} M/s), {} inserts found the table full, {violations} violations",
        totals.rounds.load(Ordering::Relaxed),
        FingerprintBits::ALL.map(|b| b.bits().to_string()).join("/"),
        SIZES,
        cfg.threads,
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

/// One round: a fresh table, threads on colliding keys, then the end checks.
fn one_round(
    cfg: &Config,
    bits: FingerprintBits,
    buckets: u64,
    seed: u64,
    totals: &Totals,
) -> Result<(), String> {
    let filter = test_hooks::with_buckets(buckets, bits, DefaultHashBuilder::default())
        .map_err(|e| format!("cannot build a {buckets}-bucket table: {e}"))?;
    let mut rng = Rng::new(seed, u64::MAX);
    let keys: Vec<u64> = (0..FINGERPRINTS)
        .flat_map(|_| {
            let high = rng.next() as u32;
            (0..buckets).map(move |b| aimed(high, b, buckets))
        })
        .collect();

    let stop = AtomicBool::new(false);
    let first_error = Mutex::new(None::<String>);
    let holdings: Vec<Vec<u32>> = thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|t| {
                let (filter, keys, stop, first_error) = (&filter, &keys, &stop, &first_error);
                s.spawn(move || {
                    let result = worker(filter, keys, seed, t, stop, totals);
                    let (held, error) = match result {
                        Ok(held) => (held, None),
                        Err((held, e)) => (held, Some(e)),
                    };
                    if let Some(e) = error {
                        stop.store(true, Ordering::Relaxed);
                        first_error.lock().unwrap().get_or_insert(e);
                    }
                    held
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
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    end_check(&filter, &keys, &holdings, buckets)
}

/// One thread's random mix until `stop`; returns its holdings (copies of each
/// key it inserted and did not remove), with the first violation it saw.
#[allow(clippy::type_complexity)]
fn worker(
    filter: &CuckooFilter,
    keys: &[u64],
    seed: u64,
    t: usize,
    stop: &AtomicBool,
    totals: &Totals,
) -> Result<Vec<u32>, (Vec<u32>, String)> {
    let mut rng = Rng::new(seed, t as u64);
    let mut held = vec![0u32; keys.len()];
    let (mut ops, mut full) = (0u64, 0u64);
    let result = loop {
        if ops % 64 == 0 && stop.load(Ordering::Relaxed) {
            break Ok(());
        }
        ops += 1;
        let k = rng.index(keys.len());
        let key = keys[k];
        match rng.below(100) {
            0..40 => {
                if held[k] > 0 && !filter.contains_hash(key) {
                    break Err(format!(
                        "thread {t}: contains({key:#x}) false for a held key"
                    ));
                }
            }
            40..70 => match filter.insert_hash(key) {
                Ok(()) => held[k] += 1,
                Err(_) => full += 1,
            },
            _ => {
                if held[k] > 0 {
                    if !filter.remove_hash(key) {
                        break Err(format!("thread {t}: remove({key:#x}) false for a held key"));
                    }
                    held[k] -= 1;
                }
            }
        }
        if ops % RECHECK == 0 {
            if let Some(k) =
                (0..keys.len()).find(|&k| held[k] > 0 && !filter.contains_hash(keys[k]))
            {
                break Err(format!(
                    "thread {t}: re-check: contains({:#x}) false for a held key",
                    keys[k]
                ));
            }
        }
    };
    totals.ops.fetch_add(ops, Ordering::Relaxed);
    totals.full.fetch_add(full, Ordering::Relaxed);
    result.map(|()| held.clone()).map_err(|e| (held, e))
}

/// The quiescent checks: exact count, exact contents, and nothing left once
/// every held copy is removed.
fn end_check(
    filter: &CuckooFilter,
    keys: &[u64],
    holdings: &[Vec<u32>],
    buckets: u64,
) -> Result<(), String> {
    let held: usize = holdings.iter().flatten().map(|&n| n as usize).sum();
    let in_table = filter.fingerprints().len();
    if filter.len() != held || in_table != held {
        return Err(format!(
            "end: {held} copies held, len() = {}, {in_table} fingerprints in the table",
            filter.len()
        ));
    }
    for (t, h) in holdings.iter().enumerate() {
        for (k, &n) in h.iter().enumerate() {
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
    let left = filter.fingerprints();
    if !filter.is_empty() || !left.is_empty() {
        return Err(format!(
            "end: everything held removed, yet len() = {} and the table holds {left:?}",
            filter.len()
        ));
    }
    // Every slot takes a fresh item: four aimed at each bucket.
    let fresh = DefaultHashBuilder::default();
    for b in 0..buckets {
        for i in 0..4u64 {
            let high = (fresh.hash_one((b, i)) >> 32) as u32;
            if filter.insert_hash(aimed(high, b, buckets)).is_err() {
                return Err(format!(
                    "end: an emptied table refused a fresh item in bucket {b}"
                ));
            }
        }
    }
    Ok(())
}
