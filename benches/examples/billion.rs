//! A billion items on one machine: bulk-loads N distinct `u64` keys (default
//! 10⁹), made on the fly from a counter, into a `CuckooFilter` sized for
//! them, then looks every one up in batches and measures the false-positive
//! rate on keys never inserted.
//!
//! ```text
//! cargo run --release -p benchmarks --example billion                        # 10⁹ keys
//! cargo run --release -p benchmarks --example billion -- --items 1000000    # a quick run
//! cargo run --release -p benchmarks --example billion -- --growable         # grown from 10⁶
//! cargo run --release -p benchmarks --example billion -- --scratch-mib 64
//! ```
//!
//! The keys are `splitmix(i)` for `i` in `0..N`: SplitMix64's finaliser is a
//! bijection of `u64`, so they are distinct, and the keys `splitmix(N + i)`
//! are certainly not among them (the false-positive probes). Nothing is
//! collected: the load takes `(0..N).into_par_iter().map(splitmix)` through
//! `par_insert_all_with`, the lookups make their keys 1024 at a time for
//! `contains_batch`. Peak RSS is the process's `VmHWM` (`/proc/self/status`)
//! after the load, which includes the table.
//!
//! `--growable` loads a `GrowableCuckooFilter` started at 10⁶ items (same
//! false-positive rate as the sized filter's bound) with its
//! `par_insert_all`, and prints its tables and memory beside the figures.

use std::time::Instant;

use benchmarks::{cpu_seconds as cpu_s, splitmix};
use lockfree_cuckoo_filter::{BulkOptions, CuckooFilter, GrowableCuckooFilter};
use rayon::prelude::*;

const USAGE: &str = "\
usage: billion [--items N] [--growable] [--initial N] [--scratch-mib M] [--probes N] [--insert-loop]

  --items N        keys loaded (default 1000000000)
  --growable       load a GrowableCuckooFilter started at --initial items
  --initial N      the growable filter's first capacity (default 1000000)
  --scratch-mib M  the bulk load's scratch budget (default 256)
  --probes N       absent keys looked up for the false-positive rate (default 100000000)
  --insert-loop    load with one `insert` per key on this thread instead (the baseline)";

struct Args {
    items: u64,
    growable: bool,
    initial: usize,
    scratch_mib: usize,
    probes: u64,
    insert_loop: bool,
}

fn parse_args() -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;
    let mut args = Args {
        items: 1_000_000_000,
        growable: false,
        initial: 1_000_000,
        scratch_mib: BulkOptions::DEFAULT_SCRATCH_BYTES >> 20,
        probes: 100_000_000,
        insert_loop: false,
    };
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("items") => args.items = parser.value()?.parse()?,
            Long("growable") => args.growable = true,
            Long("initial") => args.initial = parser.value()?.parse()?,
            Long("scratch-mib") => args.scratch_mib = parser.value()?.parse()?,
            Long("probes") => args.probes = parser.value()?.parse()?,
            Long("insert-loop") => args.insert_loop = true,
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if args.items == 0 {
        return Err("--items must be at least 1".into());
    }
    Ok(args)
}

/// A field of `/proc/self/status` in KiB (`VmHWM`, `VmRSS`); 0 elsewhere.
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn gib(bytes: f64) -> f64 {
    bytes / f64::from(1u32 << 30)
}

/// Keys per `contains_batch` call.
const BATCH: u64 = 1024;

/// Looks up `splitmix(i)` for `i` in `range`, in batches, on all threads:
/// the number found.
/// Every inserted key (`0..n`) and `probes` never inserted looked up with
/// `batch`: seconds and keys found, for each.
fn lookups(
    n: u64,
    probes: u64,
    batch: impl Fn(&[u64], &mut [bool]) + Sync,
) -> (f64, u64, f64, u64) {
    let t = Instant::now();
    let found = found_in(0..n, &batch);
    let look_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let fps = found_in(n..n + probes, &batch);
    (look_s, found, t.elapsed().as_secs_f64(), fps)
}

fn found_in(range: std::ops::Range<u64>, batch: impl Fn(&[u64], &mut [bool]) + Sync) -> u64 {
    let (start, end) = (range.start, range.end);
    (0..(end - start).div_ceil(BATCH))
        .into_par_iter()
        .map_init(
            || {
                (
                    Vec::with_capacity(BATCH as usize),
                    vec![false; BATCH as usize],
                )
            },
            |(keys, out), b| {
                let lo = start + b * BATCH;
                keys.clear();
                keys.extend((lo..(lo + BATCH).min(end)).map(splitmix));
                let out = &mut out[..keys.len()];
                batch(keys, out);
                out.iter().filter(|&&x| x).count() as u64
            },
        )
        .sum()
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("billion: {e}\n{USAGE}");
        std::process::exit(2);
    });
    let n = args.items;
    let options = BulkOptions::new().scratch_bytes(args.scratch_mib << 20);
    println!(
        "{n} keys, {} threads, scratch {} MiB, VmHWM at start {:.2} GiB",
        rayon::current_num_threads(),
        args.scratch_mib,
        gib(status_kib("VmHWM:") as f64 * 1024.0)
    );
    let keys = || (0..n).into_par_iter().map(splitmix);
    let (load_s, table_bytes, hwm, bound, look_s, found, fp_s, fps, failed) = if args.growable {
        let f = GrowableCuckooFilter::with_capacity(args.initial);
        let (t, cpu) = (Instant::now(), cpu_s());
        let r = f.par_insert_all(keys());
        let load_s = t.elapsed().as_secs_f64();
        println!("load CPU time: {:.1} s, all threads", cpu_s() - cpu);
        let failed = r.err().map_or(0, |e| e.failed().len());
        let hwm = status_kib("VmHWM:") as f64 * 1024.0;
        println!(
            "growable from {}: {} tables, fingerprint bits {:?}, len {}",
            args.initial,
            f.table_count(),
            f.fingerprint_bits()
                .iter()
                .map(|b| b.bits())
                .collect::<Vec<_>>(),
            f.len()
        );
        let (look_s, found, fp_s, fps) = lookups(n, args.probes, |k, o| {
            f.contains_batch(k, o);
        });
        let bound = f.max_false_positive_rate();
        let bytes = f.memory_usage();
        (load_s, bytes, hwm, bound, look_s, found, fp_s, fps, failed)
    } else {
        let f = CuckooFilter::with_capacity(n as usize);
        println!(
            "table {:.3} GiB ({} buckets, {}-bit fingerprints)",
            gib(f.memory_usage() as f64),
            f.bucket_count(),
            f.fingerprint_bits().bits()
        );
        let (t, cpu) = (Instant::now(), cpu_s());
        let failed = if args.insert_loop {
            (0..n).filter(|&i| f.insert(&splitmix(i)).is_err()).count()
        } else {
            let r = f.par_insert_all_with(keys(), options);
            r.err().map_or(0, |e| e.failed().len())
        };
        let load_s = t.elapsed().as_secs_f64();
        println!("load CPU time: {:.1} s, all threads", cpu_s() - cpu);
        let hwm = status_kib("VmHWM:") as f64 * 1024.0;
        println!("len {}, load factor {:.4}", f.len(), f.load_factor());
        let (look_s, found, fp_s, fps) = lookups(n, args.probes, |k, o| {
            f.contains_batch(k, o);
        });
        let bound = f.false_positive_rate();
        let bytes = f.memory_usage();
        (load_s, bytes, hwm, bound, look_s, found, fp_s, fps, failed)
    };
    let fpr = fps as f64 / args.probes.max(1) as f64;
    let how = if args.insert_loop {
        "insert loop, one thread"
    } else {
        "par_insert_all"
    };
    println!(
        "load ({how}): {load_s:.1} s ({:.1} M keys/s), {failed} did not fit",
        n as f64 / load_s / 1e6
    );
    println!(
        "peak RSS (VmHWM) after the load: {:.2} GiB; filter {:.3} GiB ({:.1} bits/key); peak - filter {:.2} GiB",
        gib(hwm),
        gib(table_bytes as f64),
        table_bytes as f64 * 8.0 / n as f64,
        gib(hwm - table_bytes as f64)
    );
    println!(
        "lookups of all keys (contains_batch of {BATCH}): {look_s:.1} s ({:.1} M/s), {} missed",
        n as f64 / look_s / 1e6,
        n - found
    );
    // The measured rate estimates the expected one, to within a binomial
    // standard deviation; the bound is on the expectation.
    let sd = (fpr * (1.0 - fpr) / args.probes.max(1) as f64).sqrt();
    println!(
        "false positives: {fps} of {} absent keys = {:.5} % ± {:.5} % (bound on its expectation {:.5} %), {:.1} M lookups/s",
        args.probes,
        100.0 * fpr,
        100.0 * sd,
        100.0 * bound,
        args.probes as f64 / fp_s / 1e6
    );
    // The measured rate is an estimate: over 10^8 probes, within a few
    // percent of the true rate; the check allows a tenth.
    if found != n || failed != 0 || fpr > 1.1 * bound {
        eprintln!(
            "billion: FAILED: {} keys missed, {failed} did not fit, FPR {fpr} over {bound}?",
            n - found
        );
        std::process::exit(1);
    }
}
