//! Bulk load: 10 M items into a 512 MiB table (16-bit fingerprints, 64 M
//! buckets), by a single-thread `insert` loop and by `par_insert_all` on rayon
//! pools of 1 and 2 threads.
//!
//! The table is allocated and its pages faulted in (`clear` writes every word)
//! before each measured load, so all variants measure inserting, not the
//! kernel zeroing pages. `BULK_ITEMS` overrides the item count.
//!
//! ```text
//! cargo bench -p benchmarks --bench bulk_load
//! ```

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use lockfree_cuckoo_filter::CuckooFilter;
use rayon::prelude::*;

/// 240 M items at 16 bits: 64 M buckets of 8 bytes, 512 MiB.
const TABLE_CAPACITY: usize = 240_000_000;

fn items() -> u64 {
    std::env::var("BULK_ITEMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000)
}

fn fresh_table() -> CuckooFilter {
    let f = CuckooFilter::with_capacity(TABLE_CAPACITY);
    f.clear();
    f
}

fn bulk_load(c: &mut Criterion) {
    let n = items();
    let probe = fresh_table();
    eprintln!(
        "table: {} MiB, {} buckets; loading {n} items",
        probe.memory_usage() >> 20,
        probe.bucket_count()
    );
    drop(probe);

    let mut g = c.benchmark_group("bulk_load");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Elements(n));

    g.bench_function("insert_loop", |b| {
        b.iter_batched_ref(
            fresh_table,
            |f| {
                for i in 0..n {
                    f.insert(&i).unwrap();
                }
            },
            BatchSize::PerIteration,
        )
    });

    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        g.bench_function(format!("par_insert_all/{threads}"), |b| {
            b.iter_batched_ref(
                fresh_table,
                |f| {
                    let inserted = pool.install(|| f.par_insert_all((0..n).into_par_iter()));
                    assert_eq!(inserted, Ok(n as usize));
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bulk_load);
criterion_main!(benches);
