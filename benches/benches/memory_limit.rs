//! Lookups on the big table (`CF_BIG_MIB`, default 512 MiB, at 95 % load)
//! against the memory limit: two independent random 8-byte reads per query
//! from an array of the same size (huge pages, like our table).
//!
//! - `limit/plain`: one query after another;
//! - `limit/batched`: queries in groups of 16, the lines of the group three
//!   ahead prefetched before the current group is read (this machine's best
//!   depth, see `MemKernel::batched`);
//! - `ours/contains_hash`: one `contains_hash` after another;
//! - `ours/contains_hash_batch`: `contains_hash_batch` over the block.
//!
//! All four read the same synthetic hashes, 1024 per iteration. The `CF_*`
//! settings are listed in `src/bench_env.rs`.
//!
//! ```text
//! cargo bench -p benchmarks --bench memory_limit
//! ```

use std::hint::black_box;
use std::time::Duration;

use benchmarks::*;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn memory_limit(c: &mut Criterion) {
    let ours = Ours::new(bench_env::tables().capacity(Size::Big));
    let n = items_at(ours.slots(), 0.95);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    fill(&ours, 0, n, threads);
    let kernel = MemKernel::new(ours.0.memory_usage(), true);

    let mut g = c.benchmark_group(format!("memory_limit/{}MiB", ours.bytes() >> 20));
    g.throughput(Throughput::Elements(BLOCK as u64));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let mut hashes = [0u64; BLOCK];
    let mut out = [false; BLOCK];
    let mut block = 0u64;
    let mut next = |hashes: &mut [u64; BLOCK]| {
        block += 1;
        hash_block(hashes, block);
    };
    g.bench_function("limit/plain", |b| {
        b.iter(|| {
            next(&mut hashes);
            black_box(kernel.plain(&hashes))
        })
    });
    g.bench_function("limit/batched", |b| {
        b.iter(|| {
            next(&mut hashes);
            black_box(kernel.batched(&hashes))
        })
    });
    g.bench_function("ours/contains_hash", |b| {
        b.iter(|| {
            next(&mut hashes);
            black_box(ours_plain(&ours.0, &hashes))
        })
    });
    g.bench_function("ours/contains_hash_batch", |b| {
        b.iter(|| {
            next(&mut hashes);
            black_box(ours_batched(&ours.0, &hashes, &mut out))
        })
    });
    g.finish();
}

criterion_group!(benches, memory_limit);
criterion_main!(benches);
