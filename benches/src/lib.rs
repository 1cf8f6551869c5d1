//! The code every benchmark figure comes from, shared by the criterion benches
//! (`benches/`) and the examples (`examples/`): the filters under test behind
//! one trait, the key streams, table filling, the single-thread kernels, the
//! concurrent workload driver, the memory-limit and sharing-limit kernels; and
//! [`bulk_insert_and_query`], the workload of the C++ reference's benchmark.
//!
//! Every implementation hashes keys with the same XXH3 (our default hasher),
//! so that hashing costs the same everywhere and only the tables differ.
//!
//! Nothing here reads the environment except [`bench_env`], the settings of
//! the criterion benches; the examples pass their flags in as values.

pub mod bench_env;
pub mod bulk_insert_and_query;
mod concurrent;
mod cpu;
mod fill;
mod hasher;
mod keys;
mod layouts;
mod memory_limit;
mod sharing_limit;
mod single;
mod subjects;
mod tables;

pub use concurrent::{parse_threads, run_concurrent, Mix, RunLength, DEFAULT_THREADS};
pub use cpu::cpu_seconds;
pub use fill::{fill, fill_alone, items_at};
pub use hasher::{same_hash, Xxh3};
pub use keys::{fresh_key, key, miss_key, scale, splitmix};
pub use layouts::{long_name, parse_layout, short_name};
pub use memory_limit::{
    hash_block, ours_batched, ours_batched_items, ours_plain, MemKernel, BLOCK, GROUP,
};
pub use sharing_limit::SharingKernel;
pub use single::{chunk_for, lookup_hits, lookup_misses, timed_inserts, timed_removes};
pub use subjects::{prev_pow2, Alone, Atomic, Bloom, Mx, Ours, Rw, Subject};
pub use tables::{
    capacity_for_bytes, capacity_for_mib, filter_with, largest_capacity, Size, Tables,
};
