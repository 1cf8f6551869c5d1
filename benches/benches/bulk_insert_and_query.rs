//! The workload of the C++ reference's `benchmarks/bulk-insert-and-query.cc`
//! (see `src/bulk_insert_and_query.rs`), scaled down so that it runs quickly:
//! 100 000 keys inserted in order into a filter built for them, then lookups
//! over shuffled lists of 100 000 queries with 0, 25, 50, 75 and 100 % of them
//! present, by `contains` one at a time and by one `contains_batch` call, for
//! 16- and 8-bit fingerprints. `examples/bulk_insert_and_query.rs` runs the
//! full-size workload (1 M queries per pass, any number of keys).
//!
//! ```text
//! cargo bench -p benchmarks --bench bulk_insert_and_query
//! ```

use std::hint::black_box;
use std::time::Duration;

use benchmarks::bulk_insert_and_query::{
    added_keys, contains_batch, contains_each, filter_for, insert_all, query_list, FOUND_PERCENTS,
};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lockfree_cuckoo_filter::FingerprintBits;

const ITEMS: usize = 100_000;
const QUERIES: usize = 100_000;

fn bulk_insert_and_query(c: &mut Criterion) {
    let keys = added_keys(ITEMS);
    for bits in [FingerprintBits::Bits16, FingerprintBits::Bits8] {
        let mut g = c.benchmark_group(format!("bulk_insert_and_query/{}bit", bits.bits()));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_secs(1));

        g.throughput(Throughput::Elements(ITEMS as u64));
        g.bench_function("insert", |b| {
            b.iter_batched(
                || filter_for(ITEMS, bits).unwrap(),
                |f| {
                    black_box(insert_all(&f, &keys));
                    f // dropped outside the timing
                },
                BatchSize::PerIteration,
            )
        });

        let f = filter_for(ITEMS, bits).unwrap();
        insert_all(&f, &keys);
        let mut out = vec![false; QUERIES];
        g.throughput(Throughput::Elements(QUERIES as u64));
        for (round, percent) in FOUND_PERCENTS.into_iter().enumerate() {
            let queries = query_list(&keys, percent, QUERIES, round as u64);
            g.bench_function(format!("contains/{percent}%"), |b| {
                b.iter(|| contains_each(&f, &queries))
            });
            g.bench_function(format!("contains_batch/{percent}%"), |b| {
                b.iter(|| contains_batch(&f, &queries, &mut out))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bulk_insert_and_query);
criterion_main!(benches);
