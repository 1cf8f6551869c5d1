//! Concurrent workloads: threads running a lookup/insert/remove mix on one
//! subject, the load held steady.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::keys::{key, miss_key, scale, splitmix};
use crate::subjects::Subject;

/// An operation mix, in percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    pub lookup: u32,
    pub insert: u32,
    pub remove: u32,
}

impl Mix {
    pub const READ_ONLY: Mix = Mix {
        lookup: 100,
        insert: 0,
        remove: 0,
    };
    pub const READ_MOSTLY: Mix = Mix {
        lookup: 90,
        insert: 5,
        remove: 5,
    };
    pub const WRITE_HEAVY: Mix = Mix {
        lookup: 50,
        insert: 25,
        remove: 25,
    };
    pub const ALL: [Mix; 3] = [Self::READ_ONLY, Self::READ_MOSTLY, Self::WRITE_HEAVY];

    pub fn name(self) -> String {
        format!("{}/{}/{}", self.lookup, self.insert, self.remove)
    }
}

/// The thread counts of the concurrent runs unless told otherwise.
pub const DEFAULT_THREADS: &[usize] = &[1, 2, 4, 8];

/// Parses a comma-separated list of thread counts, e.g. `1,2,4,8`.
pub fn parse_threads(spec: &str) -> Result<Vec<usize>, String> {
    spec.split(',')
        .map(|t| match t.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("not a thread count: {t:?} (in {spec:?})")),
        })
        .collect()
}

/// How long a concurrent run lasts: a fixed number of operations in all, or
/// until a flag is raised.
#[derive(Clone, Copy)]
enum Budget<'a> {
    Ops(u64),
    Until(&'a AtomicBool),
}

/// The keys thread `t` of `threads` works on, as a FIFO stream: first its
/// share of the initial keys `0..n` (those equal to `t` mod `threads`), then
/// fresh keys unique to this run and thread.
struct Stream {
    t: u64,
    threads: u64,
    share: u64,
    tag: u64,
}

impl Stream {
    fn new(t: u64, threads: u64, n: u64, run: u64) -> Self {
        let share = if n > t { (n - t).div_ceil(threads) } else { 0 };
        Self {
            t,
            threads,
            share,
            tag: (1 << 61) | (run << 40) | (t << 34),
        }
    }
    #[inline(always)]
    fn at(&self, k: u64) -> u64 {
        if k < self.share {
            key(self.t + k * self.threads)
        } else {
            self.tag | k
        }
    }
}

/// One worker: draws operations from `mix` until the budget is spent.
/// Lookups are half hits (a key of its live window), half misses. Writes
/// alternate insert (push a fresh key) and remove (pop the oldest key), so the
/// load stays where it was. Returns (operations, time the timed loop began,
/// time it ended);
/// after `done` (all workers stopped) it restores the initial key set, untimed.
#[allow(clippy::too_many_arguments)]
fn worker<S: Subject + Sync>(
    s: &S,
    t: u64,
    threads: u64,
    n: u64,
    mix: Mix,
    run: u64,
    budget: Budget<'_>,
    done: &Barrier,
) -> (u64, Instant, Instant) {
    let begin = Instant::now();
    let stream = Stream::new(t, threads, n, run);
    let (mut rc, mut ic) = (0u64, stream.share);
    let mut rng = mix_seed(run, t);
    let mut insert_next = true;
    let limit = match budget {
        Budget::Ops(total) => total / threads + u64::from(t < total % threads),
        Budget::Until(_) => u64::MAX,
    };
    let mut ops = 0u64;
    'outer: while ops < limit {
        if let Budget::Until(flag) = budget {
            if flag.load(Ordering::Relaxed) {
                break 'outer;
            }
        }
        let block = (limit - ops).min(64);
        for _ in 0..block {
            rng = splitmix(rng);
            let pick = ((rng >> 32) * 100) >> 32;
            if pick < u64::from(mix.lookup) {
                let q = if rng & 1 == 0 && ic > rc {
                    stream.at(rc + scale(rng >> 1, ic - rc))
                } else {
                    miss_key(rng >> 8)
                };
                std::hint::black_box(s.contains(q));
            } else if insert_next {
                std::hint::black_box(s.insert(stream.at(ic)));
                ic += 1;
                insert_next = false;
            } else {
                std::hint::black_box(s.remove(stream.at(rc)));
                rc += 1;
                insert_next = true;
            }
        }
        ops += block;
    }
    let end = Instant::now();
    done.wait();
    // Back to the initial set: drop the fresh keys still present, put back the
    // initial keys taken out.
    for k in rc.max(stream.share)..ic {
        s.remove(stream.at(k));
    }
    for k in 0..rc.min(stream.share) {
        s.insert(stream.at(k));
    }
    (ops, begin, end)
}

fn mix_seed(run: u64, t: u64) -> u64 {
    splitmix(run.wrapping_mul(0x1000_0000_01b3) ^ t)
}

/// Runs `mix` on `threads` threads over a subject holding keys `0..n`.
/// Returns (operations, seconds from the first worker's start to the last
/// worker's stop). The key set is restored before returning.
pub fn run_concurrent<S: Subject + Sync>(
    s: &S,
    n: u64,
    threads: usize,
    mix: Mix,
    run: u64,
    length: RunLength,
) -> (u64, f64) {
    let start = Barrier::new(threads + 1);
    let done = Barrier::new(threads);
    let stop = AtomicBool::new(false);
    let budget = match length {
        RunLength::Ops(k) => Budget::Ops(k),
        RunLength::Time(_) => Budget::Until(&stop),
    };
    let tt = threads as u64;
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..tt)
            .map(|t| {
                let (start, done) = (&start, &done);
                sc.spawn(move || {
                    start.wait();
                    worker(s, t, tt, n, mix, run, budget, done)
                })
            })
            .collect();
        start.wait();
        if let RunLength::Time(d) = length {
            std::thread::sleep(d);
            stop.store(true, Ordering::Relaxed);
        }
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let ops = results.iter().map(|r| r.0).sum();
        let begin = results.iter().map(|r| r.1).min().unwrap();
        let end = results.iter().map(|r| r.2).max().unwrap();
        (ops, end.duration_since(begin).as_secs_f64())
    })
}

/// How long a concurrent run lasts.
#[derive(Clone, Copy, Debug)]
pub enum RunLength {
    Ops(u64),
    Time(Duration),
}
