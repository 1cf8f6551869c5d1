//! A driver for profilers: fills this crate's filter, then runs one operation
//! in a loop, so that `perf record -p`, `valgrind --tool=callgrind` or a
//! sampling profiler sees only the hot path.
//!
//! ```text
//! cargo run --release -p benchmarks --example hot_path -- contains 95 20   # op, load %, seconds
//! cargo run --release -p benchmarks --example hot_path -- insert 95 20     # insert + remove, timed inserts
//! cargo run --release -p benchmarks --example hot_path -- batch 95 20      # contains_hash_batch
//! ```
//!
//! The table is `CF_BIG_MIB` MiB (default 512). "ready" is printed on stderr
//! when the fill is done (attach a profiler then: `perf record -p PID`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use benchmarks::*;

fn main() {
    let mut args = std::env::args().skip(1);
    let op = args.next().unwrap_or_else(|| "contains".into());
    let load: f64 = args.next().and_then(|v| v.parse().ok()).unwrap_or(95.0);
    let secs: f64 = args.next().and_then(|v| v.parse().ok()).unwrap_or(10.0);
    let ours = Ours::new(Size::Big.capacity(env_num("CF_BIG_MIB", 512.0)));
    let n = items_at(ours.slots(), load / 100.0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let t = Instant::now();
    fill(&ours, 0, n, threads);
    eprintln!(
        "filled {} MiB to {load} % in {:.1} s; pid {}; ready",
        ours.bytes() >> 20,
        t.elapsed().as_secs_f64(),
        std::process::id()
    );
    let run = Duration::from_secs_f64(secs);
    let start = Instant::now();
    let (mut ops, mut timed) = (0u64, Duration::ZERO);
    let mut cursor = 0;
    let mut fresh = 0;
    let mut hashes = [0u64; BLOCK];
    let mut out = [false; BLOCK];
    while start.elapsed() < run {
        match op.as_str() {
            "contains" => {
                let t = Instant::now();
                black_box(lookup_misses(&ours, &mut cursor, 1 << 16));
                timed += t.elapsed();
                ops += 1 << 16;
            }
            "insert" => {
                let chunk = chunk_for(ours.slots()).min(1 << 16);
                timed += timed_inserts(&ours, n, chunk, chunk, &mut fresh);
                ops += chunk;
            }
            "batch" => {
                for _ in 0..64 {
                    cursor += 1;
                    hash_block(&mut hashes, cursor);
                    let t = Instant::now();
                    black_box(ours_batched(&ours.0, &hashes, &mut out));
                    timed += t.elapsed();
                    ops += BLOCK as u64;
                }
            }
            other => panic!("unknown op {other:?}: contains, insert or batch"),
        }
    }
    eprintln!(
        "{op}: {:.2} M ops/s ({ops} ops in {:.2} s timed)",
        ops as f64 / timed.as_secs_f64() / 1e6,
        timed.as_secs_f64()
    );
}
