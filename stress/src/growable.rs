//! `--growable`: the same kind of run against a `GrowableCuckooFilter` that
//! starts small, so that threads insert while the chain grows under them.
//!
//! Threads insert their own keys (every insert must succeed: a growable filter
//! never reports lack of room) and look up their live keys (every one must be
//! found, in whichever table it landed; one lookup in four by `count`) and keys
//! never inserted. There are no removes: in a chain, a remove may take the copy
//! of a *different* item that a newer table holds under the same fingerprint (a
//! documented limit, with probability below the false-positive rate), which
//! this checker could not tell from a bug. At the end: `len` exact, every key
//! present, the measured false-positive rate within the chain's bound.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use lockfree_cuckoo_filter::test_hooks::GrowableHooks;
use lockfree_cuckoo_filter::GrowableCuckooFilter;

use super::{absent_key, own_key, Config, Rng};

/// Runs the growable stress test; true if no violation was found.
pub(crate) fn run(cfg: &Config) -> bool {
    let initial = (cfg.capacity / 1024).max(64);
    let filter = match GrowableCuckooFilter::builder()
        .initial_capacity(initial)
        .false_positive_rate(1e-3)
        .seed(cfg.seed)
        .build()
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("stress: cannot build the growable filter: {e}");
            return false;
        }
    };
    // Each thread inserts up to its share of `capacity · load` keys, so the
    // chain grows about log2(1024) times from its first table.
    let quota = (cfg.capacity as f64 * cfg.load / cfg.threads as f64) as u64;
    let insert_pct = u64::from(cfg.mix[1] + cfg.mix[2]).max(1);
    let stop = AtomicBool::new(false);
    let ops = AtomicU64::new(0);
    let first_violation = Mutex::new(None::<String>);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(cfg.seconds);

    let inserted: Vec<u64> = thread::scope(|s| {
        let workers: Vec<_> = (0..cfg.threads)
            .map(|t| {
                let (filter, stop, ops, first_violation) = (&filter, &stop, &ops, &first_violation);
                s.spawn(move || {
                    let mut rng = Rng::new(cfg.seed, t as u64);
                    let mut live = 0u64;
                    let mut local_ops = 0u64;
                    let violation = |what: String| {
                        let mut first = first_violation.lock().unwrap();
                        if first.is_none() {
                            *first = Some(format!("thread {t}, seed {}: {what}", cfg.seed));
                        }
                        if !cfg.keep_going {
                            stop.store(true, Ordering::Relaxed);
                        }
                    };
                    while !stop.load(Ordering::Relaxed) {
                        if live < quota && rng.below(100) < insert_pct {
                            if let Err(e) = filter.insert(&own_key(t, live)) {
                                violation(format!("insert of key {live} failed: {e}"));
                            }
                            live += 1;
                        } else if live > 0 && rng.below(2) == 0 {
                            let id = rng.below(live);
                            // One lookup in four counts instead: at least
                            // the one copy, in whichever table it landed.
                            let key = own_key(t, id);
                            let found = if rng.below(4) == 0 {
                                filter.count(&key) >= 1
                            } else {
                                filter.contains(&key)
                            };
                            if !found {
                                violation(format!("live key {id} not found"));
                            }
                        } else {
                            filter.contains(&absent_key(&mut rng));
                        }
                        local_ops += 1;
                        if local_ops % 4096 == 0 {
                            ops.fetch_add(4096, Ordering::Relaxed);
                            if Instant::now() >= deadline || cfg.ops.is_some_and(|n| local_ops >= n)
                            {
                                break;
                            }
                        }
                    }
                    live
                })
            })
            .collect();
        while !workers.iter().all(|w| w.is_finished()) {
            thread::sleep(Duration::from_millis(200));
            if !cfg.quiet {
                let secs = start.elapsed().as_secs_f64();
                eprint!(
                    "\r[{secs:5.1}s] growable: {:.2} M ops/s, {} items in {} tables",
                    ops.load(Ordering::Relaxed) as f64 / secs / 1e6,
                    filter.len(),
                    filter.table_count()
                );
            }
        }
        workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    if !cfg.quiet {
        eprintln!();
    }

    let mut ok = first_violation.lock().unwrap().is_none();
    let total: u64 = inserted.iter().sum();
    println!(
        "growable: {:.2} M ops/s over {elapsed:.1} s; {total} items inserted into {} tables, \
         {} behind the summary ({:.1} MiB)",
        ops.load(Ordering::Relaxed) as f64 / elapsed / 1e6,
        filter.table_count(),
        filter.covered_tables(),
        filter.memory_usage() as f64 / (1 << 20) as f64
    );
    if filter.len() as u64 != total {
        println!(
            "VIOLATION: len() = {}, but {total} items were inserted",
            filter.len()
        );
        ok = false;
    }
    let missing = inserted
        .iter()
        .enumerate()
        .map(|(t, &n)| {
            (0..n)
                .filter(|&id| !filter.contains(&own_key(t, id)))
                .count()
        })
        .sum::<usize>();
    if missing > 0 {
        println!("VIOLATION: {missing} inserted keys not found at the end");
        ok = false;
    }
    let mut rng = Rng::new(cfg.seed, u64::MAX);
    let hits = (0..cfg.fpr_probes)
        .filter(|_| filter.contains(&absent_key(&mut rng)))
        .count();
    let measured = hits as f64 / cfg.fpr_probes.max(1) as f64;
    let bound = filter.false_positive_rate();
    let sigma = (bound / cfg.fpr_probes.max(1) as f64).sqrt();
    println!(
        "false-positive rate {measured:.3e} (bound at this load {bound:.3e}, at most {:.0e})",
        filter.max_false_positive_rate()
    );
    if measured > 1.3 * bound + 4.0 * sigma {
        println!("VIOLATION: false-positive rate {measured:.3e} over the bound {bound:.3e}");
        ok = false;
    }
    if let Some(first) = first_violation.lock().unwrap().as_ref() {
        println!("VIOLATION (first): {first}");
    }
    println!("{}", if ok { "OK" } else { "FAILED" });
    ok
}
