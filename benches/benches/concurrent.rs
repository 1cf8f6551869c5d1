//! Total throughput of 1, 2, 4 and 8 threads (`CF_THREADS`) on a table at
//! 90 % load, for 100 % lookups, 90/5/5 and 50/25/25 lookup/insert/remove:
//! this crate, `atomic-cuckoo-filter`, `cuckoofilter` in a `RwLock` and in a
//! `Mutex`, and `fastbloom`'s `AtomicBloomFilter` (lookups only: it cannot
//! delete). Small (L2) and big (`CF_BIG_MIB`, default 512 MiB) tables.
//!
//! Lookups are half hits, half misses. Each thread's writes alternate
//! insert-new and remove-oldest over its own keys, so the load stays at 90 %;
//! after each sample the threads restore the initial key set, untimed. One
//! criterion iteration is one operation of any thread: the figure is the total
//! throughput. Thread start-up is a constant per sample, which criterion's
//! linear fit removes. The `CF_*` settings are listed in `src/bench_env.rs`.
//!
//! ```text
//! cargo bench -p benchmarks --bench concurrent
//! CF_SIZES=small CF_THREADS=1,2 cargo bench -p benchmarks --bench concurrent -- 90/5/5
//! ```

use std::time::Duration;

use benchmarks::*;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn fill_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

fn bench_mixes<S: Subject + Sync>(
    c: &mut Criterion,
    size: Size,
    s: &S,
    n: u64,
    mixes: &[Mix],
    run: &mut u64,
) {
    for &mix in mixes {
        let mix_name = mix.name().replace('/', "-");
        let mut g = c.benchmark_group(format!("concurrent/{}/{mix_name}", size.name()));
        g.throughput(Throughput::Elements(1));
        g.sample_size(10).warm_up_time(Duration::from_millis(300));
        g.measurement_time(Duration::from_secs(match size {
            Size::Small => 1,
            Size::Big => 2,
        }));
        for t in bench_env::thread_counts() {
            g.bench_function(BenchmarkId::new(S::NAME, format!("{t}t")), |b| {
                b.iter_custom(|iters| {
                    *run += 1;
                    let (_, secs) = run_concurrent(s, n, t, mix, *run, RunLength::Ops(iters));
                    Duration::from_secs_f64(secs)
                })
            });
        }
        g.finish();
    }
}

fn concurrent(c: &mut Criterion) {
    let mut run = 0;
    for size in bench_env::sizes() {
        let cap = bench_env::tables().capacity(size);
        let ours = Ours::new(cap);
        let slots = ours.slots();
        let n = items_at(slots, 0.9);
        fill(&ours, 0, n, fill_threads());
        bench_mixes(c, size, &ours, n, &Mix::ALL, &mut run);
        drop(ours);

        let atomic = Atomic::new(slots);
        let n = items_at(atomic.slots(), 0.9);
        fill(&atomic, 0, n, fill_threads());
        bench_mixes(c, size, &atomic, n, &Mix::ALL, &mut run);
        drop(atomic);

        let alone = Alone::new(slots);
        let n = items_at(alone.slots(), 0.9);
        fill_alone(&alone, 0, n);
        let rw = Rw::from(alone);
        bench_mixes(c, size, &rw, n, &Mix::ALL, &mut run);
        let mx = Mx::from(rw);
        bench_mixes(c, size, &mx, n, &Mix::ALL, &mut run);
        drop(mx);

        let bloom = Bloom::new(slots);
        let n = items_at(bloom.slots(), 0.9);
        fill(&bloom, 0, n, fill_threads());
        bench_mixes(c, size, &bloom, n, &[Mix::READ_ONLY], &mut run);
    }
}

criterion_group!(benches, concurrent);
criterion_main!(benches);
