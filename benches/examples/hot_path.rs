//! A driver for profilers: fills this crate's filter, then runs one operation
//! in a loop, so that `perf record -p`, `valgrind --tool=callgrind` or a
//! sampling profiler sees only the hot path.
//!
//! ```text
//! cargo run --release -p benchmarks --example hot_path -- contains 95 20   # op, load %, seconds
//! cargo run --release -p benchmarks --example hot_path -- insert 95 20     # insert + remove, timed inserts
//! cargo run --release -p benchmarks --example hot_path -- batch 95 20      # contains_hash_batch
//! cargo run --release -p benchmarks --example hot_path -- --big-mib 64 contains
//! ```
//!
//! The arguments default to `contains 95 10`. The table is `--big-mib` MiB
//! (default 512). "ready" is printed on stderr when the fill is done (attach a
//! profiler then: `perf record -p PID`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use benchmarks::*;

const USAGE: &str = "usage: hot_path [--big-mib N] [contains|insert|batch [LOAD% [SECONDS]]]";

struct Args {
    op: String,
    load: f64,
    secs: f64,
    big_mib: f64,
}

fn parse_args() -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;

    let mut args = Args {
        op: "contains".into(),
        load: 95.0,
        secs: 10.0,
        big_mib: Tables::DEFAULT.big_mib,
    };
    let mut positional = 0;
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("big-mib") => args.big_mib = parser.value()?.parse()?,
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            Value(v) => {
                match positional {
                    0 => args.op = v.string()?,
                    1 => args.load = v.parse()?,
                    2 => args.secs = v.parse()?,
                    _ => return Err(Value(v).unexpected()),
                }
                positional += 1;
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if !["contains", "insert", "batch"].contains(&args.op.as_str()) {
        return Err(format!("unknown op {:?}: contains, insert or batch", args.op).into());
    }
    Ok(args)
}

fn main() {
    let Args {
        op,
        load,
        secs,
        big_mib,
    } = parse_args().unwrap_or_else(|e| {
        eprintln!("hot_path: {e}\n{USAGE}");
        std::process::exit(2);
    });
    let ours = Ours::new(capacity_for_mib(big_mib));
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
            other => unreachable!("op {other:?} was checked by parse_args"),
        }
    }
    eprintln!(
        "{op}: {:.2} M ops/s ({ops} ops in {:.2} s timed)",
        ops as f64 / timed.as_secs_f64() / 1e6,
        timed.as_secs_f64()
    );
}
