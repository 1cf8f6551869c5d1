//! Single-thread insert, contains (hit and miss) and remove, for this crate
//! and its peers, on a table that fits in L2 and on one of `CF_BIG_MIB` MiB
//! (default 512), at 50 % and 95 % load.
//!
//! Each table is filled once (to 50 %, benched, then to 95 %, benched) and
//! dropped before the next implementation's is built. Inserts and removes are
//! timed in chunks of 0.5 % of the slots and undone untimed, so the load stays
//! put. `CF_SIZES=small` or `CF_SIZES=big` runs one size only (the `CF_*`
//! settings are listed in `src/bench_env.rs`).
//!
//! ```text
//! cargo bench -p benchmarks --bench single_thread
//! CF_SIZES=big CF_BIG_MIB=1024 cargo bench -p benchmarks --bench single_thread -- contains
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use benchmarks::*;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// Threads used to fill (not to measure).
fn fill_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

fn bench_at<S: Subject>(c: &mut Criterion, size: Size, s: &S, n: u64, load: u32, fresh: &mut u64) {
    let mut g = c.benchmark_group(format!("single/{}/{load}%", size.name()));
    g.throughput(Throughput::Elements(1));
    match size {
        Size::Small => {
            g.sample_size(20)
                .warm_up_time(Duration::from_millis(300))
                .measurement_time(Duration::from_secs(1));
        }
        Size::Big => {
            g.sample_size(10)
                .warm_up_time(Duration::from_millis(500))
                .measurement_time(Duration::from_secs(2));
        }
    }
    let chunk = chunk_for(s.slots());
    g.bench_function(BenchmarkId::new(S::NAME, "insert"), |b| {
        b.iter_custom(|iters| timed_inserts(s, n, iters, chunk, fresh))
    });
    let mut cursor = 0;
    g.bench_function(BenchmarkId::new(S::NAME, "contains_hit"), |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            black_box(lookup_hits(s, n, &mut cursor, iters));
            t.elapsed()
        })
    });
    let mut cursor = 0;
    g.bench_function(BenchmarkId::new(S::NAME, "contains_miss"), |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            black_box(lookup_misses(s, &mut cursor, iters));
            t.elapsed()
        })
    });
    if S::CAN_DELETE {
        let mut cursor = 0;
        g.bench_function(BenchmarkId::new(S::NAME, "remove"), |b| {
            b.iter_custom(|iters| timed_removes(s, n, iters, chunk, &mut cursor))
        });
    }
    g.finish();
}

/// Fills `s` to 50 %, benches, fills to 95 %, benches.
fn life<S: Subject>(c: &mut Criterion, size: Size, s: &S, fill_to: impl Fn(&S, u64, u64) -> u64) {
    let mut fresh = 0;
    let n50 = items_at(s.slots(), 0.50);
    fill_to(s, 0, n50);
    bench_at(c, size, s, n50, 50, &mut fresh);
    let n95 = items_at(s.slots(), 0.95);
    let failed = fill_to(s, n50, n95);
    if failed > 0 {
        eprintln!("{}: {failed} inserts failed filling to 95 %", S::NAME);
    }
    bench_at(c, size, s, n95, 95, &mut fresh);
}

fn single_thread(c: &mut Criterion) {
    let par = |s: &_, a, b| fill(s, a, b, fill_threads());
    for size in bench_env::sizes() {
        let cap = bench_env::tables().capacity(size);
        let ours = Ours::new(cap);
        let slots = ours.slots();
        life(c, size, &ours, |s: &Ours, a, b| par(s, a, b));
        drop(ours);
        life(c, size, &Atomic::new(slots), |s: &Atomic, a, b| {
            fill(s, a, b, fill_threads())
        });
        life(c, size, &Alone::new(slots), |s: &Alone, a, b| {
            fill_alone(s, a, b)
        });
        life(c, size, &Bloom::new(slots), |s: &Bloom, a, b| {
            fill(s, a, b, fill_threads())
        });
    }
}

criterion_group!(benches, single_thread);
criterion_main!(benches);
