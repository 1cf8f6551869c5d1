//! How the crate's costs grow with size: for filters of 10⁶, 10⁷, 10⁸ (and,
//! with `--sizes 6,7,8,9`, 10⁹) items, on one thread and two, the rates of
//! filling by `insert`, bulk loading by `par_insert_all`, lookups one at a
//! time and batched (hits and misses), and removes; the bytes per item; and
//! the memory limit (`MemKernel`: two independent random reads per query
//! from an array of the table's size) at each size.
//!
//! ```text
//! cargo run --release -p benchmarks --example scaling                          # 10⁶ to 10⁸
//! cargo run --release -p benchmarks --example scaling -- --sizes 6,7,8,9       # and 10⁹ (about 15 min)
//! cargo run --release -p benchmarks --example scaling -- --sizes 6 --doc /tmp/s.md --chart /tmp/s.svg  # a smoke run
//! ```
//!
//! Prints markdown tables (progress goes to stderr) and writes them, with
//! the command, the machine and the date, into `BENCHMARKS.md` between the
//! lines `<!-- scaling:begin -->` and `<!-- scaling:end -->` (the prose
//! around them stays; a file without them is created or appended to;
//! `--doc FILE` elsewhere), and a chart to `docs/scaling.svg` (`--chart
//! FILE`).
//!
//! What is measured, per size N (keys `splitmix(i)`, distinct, made on the
//! fly; filters `with_capacity(N)`, about 94 % full once loaded):
//! - insert: a fresh filter filled with all N keys by `insert`, the threads
//!   taking alternate blocks of 4096 keys;
//! - bulk: a fresh filter loaded with all N keys by `par_insert_all` (default
//!   scratch budget) on a rayon pool of that many threads; that filter is the
//!   one the lookups and removes below use;
//! - lookups: `contains` and `contains_batch` (1024 keys a call) of L =
//!   min(N, 2·10⁷) present keys, and of L absent ones (`splitmix(N + i)`);
//! - remove: L present keys removed (the one-thread and two-thread runs take
//!   different keys);
//! - limit: the memory-limit kernel's plain and batched queries over L
//!   synthetic hashes, on an array of the table's size;
//! - every rate is the whole run's: operations over wall time, all threads;
//!   below 10⁷ items, the best of 10⁷/N runs (at most 10).

#[path = "shared/plot.rs"]
mod plot;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use benchmarks::{cpu_seconds, hash_block, splitmix, MemKernel, BLOCK};
use lockfree_cuckoo_filter::CuckooFilter;
use plotters::prelude::*;
use rayon::prelude::*;

const USAGE: &str = "\
usage: scaling [--sizes 6,7,8] [--threads 1,2] [--doc FILE] [--chart FILE]

  --sizes E,..    powers of ten of the item counts (default 6,7,8; 9 takes about 15 min)
  --threads T,..  thread counts (default 1,2)
  --doc FILE      the markdown file whose marked part the tables replace (default BENCHMARKS.md)
  --chart FILE    the chart written (default docs/scaling.svg)";

struct Args {
    sizes: Vec<u32>,
    threads: Vec<usize>,
    doc: std::path::PathBuf,
    chart: std::path::PathBuf,
}

fn list<T: std::str::FromStr>(s: &str) -> Result<Vec<T>, String> {
    s.split(',')
        .map(|x| x.trim().parse().map_err(|_| format!("not a number: {x:?}")))
        .collect()
}

fn parse_args() -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;
    let mut args = Args {
        sizes: vec![6, 7, 8],
        threads: vec![1, 2],
        doc: "BENCHMARKS.md".into(),
        chart: "docs/scaling.svg".into(),
    };
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("sizes") => args.sizes = parser.value()?.parse_with(list)?,
            Long("threads") => args.threads = parser.value()?.parse_with(list)?,
            Long("doc") => args.doc = parser.value()?.into(),
            Long("chart") => args.chart = parser.value()?.into(),
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if args.sizes.iter().any(|&e| !(3..=9).contains(&e)) {
        return Err("--sizes: powers from 3 to 9".into());
    }
    if args.threads.contains(&0) {
        return Err("--threads: at least 1".into());
    }
    Ok(args)
}

/// The operations measured, in the table's column order.
const OPS: [&str; 9] = [
    "insert",
    "bulk",
    "hits",
    "misses",
    "batch hits",
    "batch misses",
    "remove",
    "limit",
    "limit batch",
];

/// Keys per block that a thread takes at a time.
const STRIDE: u64 = 4096;

/// Runs `work(lo, hi)` over `0..n` on `threads` threads, in alternate blocks
/// of [`STRIDE`]; the rate in operations per second of wall time. The CPU
/// time per operation, all threads, goes to [`LAST_CPU_NS`].
fn rate(threads: usize, n: u64, work: impl Fn(u64, u64) + Sync) -> f64 {
    let next = AtomicU64::new(0);
    let cpu = cpu_seconds();
    let _cpu = CpuPerOp(cpu, n);
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let lo = next.fetch_add(STRIDE, Ordering::Relaxed);
                if lo >= n {
                    break;
                }
                work(lo, (lo + STRIDE).min(n));
            });
        }
    });
    n as f64 / t.elapsed().as_secs_f64()
}

thread_local! {
    /// The CPU nanoseconds per operation of the last [`rate`] or bulk load.
    static LAST_CPU_NS: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

/// Records in [`LAST_CPU_NS`], when dropped, the CPU time since `.0` over
/// `.1` operations.
struct CpuPerOp(f64, u64);

impl Drop for CpuPerOp {
    fn drop(&mut self) {
        let ns = (cpu_seconds() - self.0) * 1e9 / self.1 as f64;
        LAST_CPU_NS.with(|c| c.set(ns));
    }
}

/// Looks up `splitmix(base + i)` for `i` in `lo..hi` in batches of [`BLOCK`];
/// the number found.
fn batch_found(f: &CuckooFilter, base: u64, lo: u64, hi: u64) -> usize {
    let mut keys = [0u64; BLOCK];
    let mut out = [false; BLOCK];
    let mut found = 0;
    let mut i = lo;
    while i < hi {
        let k = ((hi - i) as usize).min(BLOCK);
        for (j, key) in keys[..k].iter_mut().enumerate() {
            *key = splitmix(base + i + j as u64);
        }
        found += f.contains_batch(&keys[..k], &mut out[..k]);
        i += k as u64;
    }
    found
}

/// One size's figures: rates and CPU nanoseconds per op, per thread count,
/// and bytes per item.
struct Row {
    exp: u32,
    rates: Vec<Vec<f64>>,
    cpu: Vec<Vec<f64>>,
    bytes_per_item: f64,
}

fn measure(exp: u32, threads: &[usize]) -> Row {
    let n = 10u64.pow(exp);
    let l = n.min(20_000_000);
    // Small sizes run in a few milliseconds: each figure is the best of
    // several runs, so that a run is at least about a second in all.
    let reps = (10_000_000 / n).clamp(1, 10) as usize;
    // The best run's rate, and its CPU time per operation.
    let best = |f: &mut dyn FnMut() -> f64| {
        let mut top = (0f64, 0f64);
        for _ in 0..reps {
            let r = f();
            if r > top.0 {
                top = (r, LAST_CPU_NS.with(|c| c.get()));
            }
        }
        top
    };
    let say = |what: &str, t: usize| eprintln!("10^{exp}: {what}, {t} thread(s)");
    let mut rates = vec![vec![0f64; threads.len()]; OPS.len()];
    let mut cpu = rates.clone();
    for (ti, &t) in threads.iter().enumerate() {
        say("insert", t);
        (rates[0][ti], cpu[0][ti]) = best(&mut || {
            let f = CuckooFilter::with_capacity(n as usize);
            let failed = AtomicU64::new(0);
            let r = rate(t, n, |lo, hi| {
                let bad = (lo..hi)
                    .filter(|&i| f.insert(&splitmix(i)).is_err())
                    .count();
                failed.fetch_add(bad as u64, Ordering::Relaxed);
            });
            assert_eq!(failed.load(Ordering::Relaxed), 0, "inserts failed");
            r
        });
    }
    let mut bytes_per_item = 0.0;
    let mut removed = 0u64;
    for (ti, &t) in threads.iter().enumerate() {
        say("bulk", t);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap();
        let mut f = CuckooFilter::with_capacity(0);
        (rates[1][ti], cpu[1][ti]) = best(&mut || {
            f = CuckooFilter::with_capacity(n as usize);
            let _cpu = CpuPerOp(cpu_seconds(), n);
            let start = Instant::now();
            let loaded = pool.install(|| f.par_insert_all((0..n).into_par_iter().map(splitmix)));
            let r = n as f64 / start.elapsed().as_secs_f64();
            assert_eq!(loaded, Ok(n as usize));
            r
        });
        bytes_per_item = f.memory_usage() as f64 / n as f64;
        say("lookups", t);
        (rates[2][ti], cpu[2][ti]) = best(&mut || {
            rate(t, l, |lo, hi| {
                assert!((lo..hi).all(|i| f.contains(&splitmix(i))));
            })
        });
        (rates[3][ti], cpu[3][ti]) = best(&mut || {
            rate(t, l, |lo, hi| {
                std::hint::black_box((lo..hi).filter(|&i| f.contains(&splitmix(n + i))).count());
            })
        });
        (rates[4][ti], cpu[4][ti]) = best(&mut || {
            rate(t, l, |lo, hi| {
                assert_eq!(batch_found(&f, 0, lo, hi), (hi - lo) as usize);
            })
        });
        (rates[5][ti], cpu[5][ti]) = best(&mut || {
            rate(t, l, |lo, hi| {
                std::hint::black_box(batch_found(&f, n, lo, hi));
            })
        });
        say("remove", t);
        // Different keys on each thread count's filter; the removes of this
        // filter are its last use.
        let base = removed;
        removed += l / 2;
        rates[6][ti] = rate(t, l / 2, |lo, hi| {
            assert!((lo..hi).all(|i| f.remove(&splitmix(base + i))));
        });
        cpu[6][ti] = LAST_CPU_NS.with(|c| c.get());
        drop(f);
        say("memory limit", t);
        let kernel = MemKernel::new((bytes_per_item * n as f64) as usize, true);
        for (op, batched) in [(7, false), (8, true)] {
            (rates[op][ti], cpu[op][ti]) = best(&mut || {
                rate(t, l.next_multiple_of(BLOCK as u64), |lo, hi| {
                    let mut hashes = [0u64; BLOCK];
                    for b in (lo..hi).step_by(BLOCK) {
                        hash_block(&mut hashes, b / BLOCK as u64);
                        let found = if batched {
                            kernel.batched(&hashes)
                        } else {
                            kernel.plain(&hashes)
                        };
                        std::hint::black_box(found);
                    }
                })
            });
        }
    }
    Row {
        exp,
        rates,
        cpu,
        bytes_per_item,
    }
}

/// The rates (millions per second), or with `cpu` the CPU nanoseconds per
/// operation, all threads.
fn markdown(rows: &[Row], threads: &[usize], cpu: bool) -> String {
    let mut s = String::from("| items | threads |");
    for op in OPS {
        let _ = write!(s, " {op} |");
    }
    s.push_str(" bytes/item |\n|---|---|");
    s.push_str(&"---:|".repeat(OPS.len() + 1));
    s.push('\n');
    for r in rows {
        for (ti, t) in threads.iter().enumerate() {
            let _ = write!(s, "| 10^{} | {t} |", r.exp);
            for (rate, ns) in r.rates.iter().zip(&r.cpu) {
                let _ = if cpu {
                    write!(s, " {:.0} |", ns[ti])
                } else {
                    write!(s, " {:.1} |", rate[ti] / 1e6)
                };
            }
            let _ = writeln!(s, " {:.2} |", r.bytes_per_item);
        }
    }
    s
}

/// Ratios that say how each cost scales with threads: two threads' rate over
/// one's for bulk, insert and the memory limit, and bulk on two threads over
/// the one-thread insert loop.
fn ratios(rows: &[Row], threads: &[usize]) -> String {
    let (Some(one), Some(two)) = (
        threads.iter().position(|&t| t == 1),
        threads.iter().position(|&t| t == 2),
    ) else {
        return String::new();
    };
    let mut s = String::from(
        "| items | bulk 2 thr / insert 1 thr | bulk 2 / 1 thr | insert 2 / 1 thr | limit 2 / 1 thr | \
         limit batch 2 / 1 thr | by CPU time: bulk 2 thr / insert 1 thr | bulk 2 / 1 thr |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let x = |op: usize, a: usize, b: usize| r.rates[op][a] / r.rates[op][b];
        // With two whole cores, two threads of a given CPU time per item
        // would run at twice the rate its reciprocal gives.
        let by_cpu = |op: usize, t: usize| threads[t] as f64 / r.cpu[op][t];
        let _ = writeln!(
            s,
            "| 10^{} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            r.exp,
            r.rates[1][two] / r.rates[0][one],
            x(1, two, one),
            x(0, two, one),
            x(7, two, one),
            x(8, two, one),
            by_cpu(1, two) / by_cpu(0, one),
            by_cpu(1, two) / by_cpu(1, one),
        );
    }
    s
}

const COLORS: [RGBColor; 9] = [
    RGBColor(214, 39, 40),
    RGBColor(140, 20, 20),
    RGBColor(31, 119, 180),
    RGBColor(120, 170, 220),
    RGBColor(44, 160, 44),
    RGBColor(150, 210, 140),
    RGBColor(148, 103, 189),
    RGBColor(90, 90, 90),
    RGBColor(170, 170, 170),
];

fn chart(path: &std::path::Path, rows: &[Row], threads: &[usize], machine: &str) -> plot::Res<()> {
    let root = SVGBackend::new(path, (760 * threads.len() as u32, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        &format!("lockfree-cuckoo-filter: rates by size — {machine}"),
        ("sans-serif", 20),
    )?;
    let xs: Vec<String> = rows.iter().map(|r| format!("10^{}", r.exp)).collect();
    for (ti, area) in root.split_evenly((1, threads.len())).iter().enumerate() {
        let series: Vec<_> = OPS
            .iter()
            .enumerate()
            .map(|(op, name)| {
                let ys = rows.iter().map(|r| r.rates[op][ti]).collect();
                (name.to_string(), COLORS[op], ys)
            })
            .collect();
        let t = threads[ti];
        let title = format!("{t} thread{}", if t == 1 { "" } else { "s" });
        plot::lines(
            area,
            &title,
            &xs,
            "million ops/s, all threads (log)",
            &series,
            // Rates fall as the table grows: the top right is empty.
            SeriesLabelPosition::UpperRight,
        )?;
    }
    root.present()?;
    Ok(())
}

fn machine() -> String {
    let lscpu = std::process::Command::new("lscpu")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let field = |k: &str| {
        lscpu
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "?".into())
    };
    format!(
        "{}, {} CPUs, L2 {}, L3 {}",
        field("Model name"),
        field("CPU(s)"),
        field("L2 cache"),
        field("L3 cache")
    )
}

const BEGIN: &str = "<!-- scaling:begin -->";
const END: &str = "<!-- scaling:end -->";

/// `doc` with what lies between [`BEGIN`] and [`END`] replaced by `figures`;
/// `doc` with both and the figures appended if it has no such lines.
fn splice(doc: &str, figures: &str) -> String {
    let block = format!("{BEGIN}\n{figures}{END}\n");
    match (doc.find(BEGIN), doc.find(END)) {
        (Some(a), Some(b)) if a < b => {
            let tail = doc[b + END.len()..].trim_start_matches('\n');
            format!("{}{block}{tail}", &doc[..a])
        }
        _ if doc.is_empty() => format!("# Scaling\n\n{block}"),
        _ => format!("{doc}\n{block}"),
    }
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("scaling: {e}\n{USAGE}");
        std::process::exit(2);
    });
    let rows: Vec<Row> = args
        .sizes
        .iter()
        .map(|&e| measure(e, &args.threads))
        .collect();
    let table = markdown(&rows, &args.threads, false);
    let cpu_table = markdown(&rows, &args.threads, true);
    let ratios = ratios(&rows, &args.threads);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let machine = machine();
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let command = format!(
        "cargo run --release -p benchmarks --example scaling -- {}",
        std::env::args().skip(1).collect::<Vec<_>>().join(" ")
    );
    println!("{table}\n{cpu_table}\n{ratios}");
    let md = format!(
        "Command: `{}`  \nMachine: {machine}  \nDate: {date}; load average at the end \
         (1, 5, 15 min): {}\n\n\
         Millions of operations per second, all threads together; `bytes/item` is \
         the table's memory over the items it was sized for.\n\n{table}\n\
         CPU time per operation in nanoseconds, all threads together:\n\n{cpu_table}\n\
         Ratios (the last two from CPU time: what two threads would reach with two \
         whole cores):\n\n{ratios}",
        command.trim_end(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let old = std::fs::read_to_string(&args.doc).unwrap_or_default();
    if let Err(e) = std::fs::write(&args.doc, splice(&old, &md)) {
        eprintln!("scaling: cannot write {}: {e}", args.doc.display());
    }
    if let Err(e) = chart(&args.chart, &rows, &args.threads, &machine) {
        eprintln!("scaling: chart: {e}");
    }
}
