//! Compares this crate with its peers, in one run, on one machine.
//!
//! ```text
//! cargo run --release -p benchmarks --example compare                 # full run (512 MiB big table)
//! cargo run --release -p benchmarks --example compare -- --quick      # a smoke run: 64 MiB, short windows
//! cargo run --release -p benchmarks --example compare -- --big-mib 1024 --sizes big
//! cargo run --release -p benchmarks --example compare -- --sizes layouts  # the layouts section alone
//! cargo run --release -p benchmarks --example compare -- --sizes bulk     # the C++ reference's workload
//! ```
//!
//! Prints its markdown tables to stdout (progress goes to stderr), and writes
//! them to `docs/compare.md`, a chart of the whole peer comparison to
//! `docs/compare.svg`, and the README's chart (one and two threads against
//! the peers) to `docs/throughput.svg`.
//!
//! Options (`--help` lists them): `--quick`, `--big-mib N` (default 512),
//! `--small-items N` (default 65536), `--sizes small,big,layouts,bulk`,
//! `--layouts-mib N` (default 64), `--threads 1,2,4,8`,
//! `--st-ms MS` (window of one single-thread figure, default 300),
//! `--conc-ms MS` (one concurrent run, default 400), `--out DIR` (default
//! `docs`). The criterion benches, which take no flags, read the same settings
//! from `CF_*` environment variables instead (see `src/bench_env.rs`).
//!
//! What is measured (see `benches/src/` for the code every figure
//! comes from, shared with the criterion benches):
//! - keys are `u64`s hashed by every implementation with the same XXH3;
//! - each table is filled once, to 50 %, then 90 %, then 95 % of its slots;
//!   single-thread figures are taken at 50 % and 95 %, concurrent ones at 90 %;
//! - inserts and removes are timed in chunks of 0.5 % of the slots, each
//!   chunk undone untimed, so the load stays put (the Bloom filter, which
//!   cannot delete, re-inserts present keys: the same k atomic ORs);
//! - concurrent lookups are half hits, half misses; writes alternate
//!   insert-new / remove-oldest per thread, so the load stays at 90 %;
//! - the memory limit: two independent random 8-byte reads per query from an
//!   array the size of our big table, plain and in groups of 16 prefetched
//!   three groups ahead;
//! - the sharing limit: the concurrent mixes on the small table's size, run
//!   by the same driver on an array whose operations only read two random
//!   words and, for a write, swap one by CAS: what two cores writing lines
//!   they both read cost the machine itself, whatever the table; the
//!   two-thread lines say what it leaves possible for ours;
//! - the layouts section: every fingerprint width on one thread, on a 256 KiB
//!   and a 64 MiB table each, beside 16-bit (see `layouts.rs`);
//! - the bulk section: the workload of the C++ reference's
//!   `bulk-insert-and-query` benchmark, this crate's side of it (see
//!   `bulk.rs`; `benches/reference/compare.py` runs the C++ beside it);
//! - the memory limit also gets `contains_batch` on `u64` keys (hashing
//!   inside), beside `contains_hash_batch`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::time::{Duration, Instant};

use benchmarks::*;

mod bulk;
mod chart;
mod config;
mod layouts;
#[path = "../shared/plot.rs"]
mod plot;

use config::{Command, Config};

// ----- results ------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Insert,
    Hit,
    Miss,
    Remove,
}

impl Op {
    const ALL: [Op; 4] = [Op::Insert, Op::Hit, Op::Miss, Op::Remove];
    fn name(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::Hit => "contains (hit)",
            Op::Miss => "contains (miss)",
            Op::Remove => "remove",
        }
    }
    fn short(self) -> &'static str {
        match self {
            Op::Insert => "ins",
            Op::Hit => "hit",
            Op::Miss => "miss",
            Op::Remove => "rm",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Single {
        load: u32,
        op: Op,
    },
    /// `mix` indexes [`Mix::ALL`].
    Conc {
        mix: usize,
        threads: usize,
    },
    Limit {
        batched: bool,
    },
}

impl Kind {
    fn label(self, size: Size) -> String {
        match self {
            Kind::Single { load, op } => {
                format!("{} · 1 thread · {} @ {load} %", size.name(), op.name())
            }
            Kind::Conc { mix, threads } => format!(
                "{} · {threads} thread{} · {} lookup/insert/remove @ 90 %",
                size.name(),
                if threads == 1 { "" } else { "s" },
                Mix::ALL[mix].name()
            ),
            Kind::Limit { batched } => format!(
                "{} · 1 thread · lookup by hash vs memory limit, {}",
                size.name(),
                if batched {
                    "batched (contains_hash_batch; limit prefetches 3 groups of 16 ahead)"
                } else {
                    "plain"
                }
            ),
        }
    }
}

const OURS: &str = "lockfree-cuckoo-filter";
const KERNEL: &str = "memory limit (2 random 8-byte reads)";
/// Our batched lookups of `u64` keys (`contains_batch`, hashing inside),
/// beside the batched lookups by hash.
const OURS_ITEMS: &str = "lockfree-cuckoo-filter, contains_batch on keys";

/// Per implementation and size: bits per item and false-positive rate, both
/// at 95 % load, and whether it deletes.
#[derive(Clone, Copy, Default)]
struct Stats {
    bits_per_item: f64,
    fpr: f64,
    fp_queries: u64,
    can_delete: bool,
}

#[derive(Default)]
struct Results {
    ops: BTreeMap<(Size, Kind), Vec<(&'static str, f64)>>,
    stats: BTreeMap<(Size, &'static str), Stats>,
    notes: Vec<String>,
}

impl Results {
    fn add(&mut self, size: Size, kind: Kind, name: &'static str, ops: f64) {
        self.ops.entry((size, kind)).or_default().push((name, ops));
    }
    fn get(&self, size: Size, kind: Kind, name: &str) -> Option<f64> {
        self.ops
            .get(&(size, kind))?
            .iter()
            .find(|r| r.0 == name)
            .map(|r| r.1)
    }
}

// ----- progress -------------------------------------------------------------------

struct Progress {
    start: Instant,
    tty: bool,
}

impl Progress {
    fn say(&self, msg: &str) {
        let t = self.start.elapsed().as_secs_f64();
        if self.tty {
            eprint!("\r\x1b[K[{t:6.1}s] {msg}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("[{t:6.1}s] {msg}");
        }
    }
    fn done(&self) {
        if self.tty {
            eprintln!();
        }
    }
}

// ----- measuring ------------------------------------------------------------------

/// Runs `step` (which does some operations and returns (ops, timed seconds))
/// until `window` of wall time has passed; returns ops per timed second.
fn rate(window: Duration, mut step: impl FnMut() -> (u64, f64)) -> f64 {
    let start = Instant::now();
    let (mut ops, mut secs) = (0u64, 0f64);
    loop {
        let (o, s) = step();
        ops += o;
        secs += s;
        if start.elapsed() >= window {
            break;
        }
    }
    ops as f64 / secs.max(1e-9)
}

/// The best of three windows: other load on the machine only ever slows a
/// window down.
fn best_rate(window: Duration, mut step: impl FnMut() -> (u64, f64)) -> f64 {
    (0..3)
        .map(|_| rate(window / 3, &mut step))
        .fold(0.0, f64::max)
}

struct Ctx<'a> {
    cfg: &'a Config,
    size: Size,
    res: &'a mut Results,
    progress: &'a Progress,
    fresh: u64,
    run: u64,
}

impl Ctx<'_> {
    fn say(&self, name: &str, msg: &str) {
        self.progress
            .say(&format!("{} / {name}: {msg}", self.size.name()));
    }

    /// Single-thread figures at the subject's current load (keys `0..n`).
    /// Returns (false positives, miss queries).
    fn single<S: Subject>(&mut self, s: &S, name: &'static str, n: u64, load: u32) -> (u64, u64) {
        self.say(name, &format!("single thread @ {load} %"));
        let window = self.cfg.st_time;
        let chunk = chunk_for(s.slots());
        let mut fresh = self.fresh;
        let r = best_rate(window, || {
            let d = timed_inserts(s, n, chunk, chunk, &mut fresh);
            (chunk, d.as_secs_f64())
        });
        self.fresh = fresh;
        self.res.add(
            self.size,
            Kind::Single {
                load,
                op: Op::Insert,
            },
            name,
            r,
        );

        let mut cursor = 0;
        let block = 4096;
        let r = best_rate(window, || {
            let t = Instant::now();
            std::hint::black_box(lookup_hits(s, n, &mut cursor, block));
            (block, t.elapsed().as_secs_f64())
        });
        self.res
            .add(self.size, Kind::Single { load, op: Op::Hit }, name, r);

        let (mut cursor, mut fp) = (0, 0);
        let r = best_rate(window, || {
            let t = Instant::now();
            fp += lookup_misses(s, &mut cursor, block);
            (block, t.elapsed().as_secs_f64())
        });
        self.res
            .add(self.size, Kind::Single { load, op: Op::Miss }, name, r);

        if S::CAN_DELETE {
            let mut cursor = 0;
            let r = best_rate(window, || {
                let d = timed_removes(s, n, chunk, chunk, &mut cursor);
                (chunk, d.as_secs_f64())
            });
            self.res.add(
                self.size,
                Kind::Single {
                    load,
                    op: Op::Remove,
                },
                name,
                r,
            );
        }
        (fp, cursor)
    }

    /// Concurrent mixes at the subject's current load (keys `0..n`).
    fn concurrent<S: Subject + Sync>(&mut self, s: &S, name: &'static str, n: u64, mixes: &[Mix]) {
        for &mix in mixes {
            for &t in &self.cfg.threads {
                self.say(name, &format!("{} on {t} thread(s)", mix.name()));
                self.run += 1;
                let (ops, secs) =
                    run_concurrent(s, n, t, mix, self.run, RunLength::Time(self.cfg.conc_time));
                let mix_index = Mix::ALL.iter().position(|&m| m == mix).unwrap();
                let kind = Kind::Conc {
                    mix: mix_index,
                    threads: t,
                };
                self.res.add(self.size, kind, name, ops as f64 / secs);
            }
        }
    }

    fn fill_to<S: Subject + Sync>(&self, s: &S, name: &str, from: u64, load: u32) -> u64 {
        let to = items_at(s.slots(), f64::from(load) / 100.0);
        self.say(name, &format!("filling to {load} % ({to} items)"));
        let failed = fill(s, from, to, self.cfg.fill_threads);
        if failed > 0 {
            self.say(
                name,
                &format!("{failed} inserts failed while filling to {load} %"),
            );
        }
        to
    }

    fn stats(
        &mut self,
        name: &'static str,
        bytes: usize,
        n: u64,
        fp: u64,
        queries: u64,
        can_delete: bool,
    ) {
        self.res.stats.insert(
            (self.size, name),
            Stats {
                bits_per_item: bytes as f64 * 8.0 / n as f64,
                fpr: fp as f64 / queries.max(1) as f64,
                fp_queries: queries,
                can_delete,
            },
        );
    }

    /// The usual life of one concurrent-capable subject: 50 %, 90 %, 95 %.
    fn lifecycle<S: Subject + Sync>(&mut self, s: &S, name: &'static str, mixes: &[Mix]) -> u64 {
        let n50 = self.fill_to(s, name, 0, 50);
        self.single(s, name, n50, 50);
        let n90 = self.fill_to(s, name, n50, 90);
        self.concurrent(s, name, n90, mixes);
        let n95 = self.fill_to(s, name, n90, 95);
        let (fp, q) = self.single(s, name, n95, 95);
        self.stats(name, s.bytes(), n95, fp, q, S::CAN_DELETE);
        n95
    }
}

fn run_size(cfg: &Config, size: Size, res: &mut Results, progress: &Progress, run: &mut u64) {
    let cap = cfg.tables.capacity(size);
    let mut ctx = Ctx {
        cfg,
        size,
        res,
        progress,
        fresh: 0,
        run: *run,
    };

    // This crate, and the memory limit on the same table size.
    let ours = Ours::new(cap);
    let slots = ours.slots();
    ctx.lifecycle(&ours, OURS, &Mix::ALL);
    if size == Size::Big {
        memory_limit(&mut ctx, &ours.0);
    }
    if size == Size::Small {
        // What two cores writing one table of this size cost the machine
        // itself: the bound on our two-thread scaling (see `scaling`).
        let kernel = SharingKernel::new(ours.bytes(), slots);
        ctx.concurrent(
            &kernel,
            SharingKernel::NAME,
            items_at(slots, 0.9),
            &Mix::ALL,
        );
    }
    drop(ours);

    let atomic = Atomic::new(slots);
    ctx.lifecycle(&atomic, Atomic::NAME, &Mix::ALL);
    drop(atomic);

    // cuckoofilter: alone for one thread, then the same table behind a RwLock
    // and a Mutex for the concurrent runs.
    let alone = Alone::new(slots);
    let name = Alone::NAME;
    let n50 = items_at(alone.slots(), 0.5);
    ctx.say(name, &format!("filling to 50 % ({n50} items)"));
    let mut failed = fill_alone(&alone, 0, n50);
    ctx.single(&alone, name, n50, 50);
    let n90 = items_at(alone.slots(), 0.9);
    ctx.say(name, &format!("filling to 90 % ({n90} items)"));
    failed += fill_alone(&alone, n50, n90);
    let rw = Rw::from(alone);
    ctx.concurrent(&rw, Rw::NAME, n90, &Mix::ALL);
    let mx = Mx::from(rw);
    ctx.concurrent(&mx, Mx::NAME, n90, &Mix::ALL);
    let alone = Alone::from(mx);
    let n95 = items_at(alone.slots(), 0.95);
    ctx.say(name, &format!("filling to 95 % ({n95} items)"));
    failed += fill_alone(&alone, n90, n95);
    let (fp, q) = ctx.single(&alone, name, n95, 95);
    ctx.stats(name, alone.bytes(), n95, fp, q, true);
    if let Some(s) = ctx.res.stats.get(&(size, name)).copied() {
        ctx.res.stats.insert((size, Rw::NAME), s);
        ctx.res.stats.insert((size, Mx::NAME), s);
    }
    if failed > 0 {
        ctx.res.notes.push(format!(
            "{}: cuckoofilter failed {failed} of {n95} inserts while filling (each failure \
             evicts a random item).",
            size.name()
        ));
    }
    drop(alone);

    // fastbloom: lookups and inserts only.
    let bloom = Bloom::new(slots);
    ctx.lifecycle(&bloom, Bloom::NAME, &[Mix::READ_ONLY]);
    drop(bloom);
    *run = ctx.run;
}

/// Our lookups by hash on the big table (at 95 %) against two random reads
/// from an array of the same size, plain and batched; the four alternate,
/// and each keeps its best of three windows.
fn memory_limit(ctx: &mut Ctx<'_>, f: &lockfree_cuckoo_filter::CuckooFilter) {
    ctx.say(KERNEL, "allocating");
    let kernel = MemKernel::new(f.memory_usage(), true);
    let window = ctx.cfg.st_time;
    let mut hashes = [0u64; BLOCK];
    let mut out = [false; BLOCK];
    let mut block = 0u64;
    let mut best = [0f64; 5];
    for round in 0..3 {
        ctx.say(KERNEL, &format!("round {}", round + 1));
        for (k, b) in best.iter_mut().enumerate() {
            let r = rate(window / 3, || {
                block += 1;
                hash_block(&mut hashes, block);
                let t = Instant::now();
                let found = match k {
                    0 => kernel.plain(&hashes),
                    1 => ours_plain(f, &hashes),
                    2 => kernel.batched(&hashes),
                    3 => ours_batched(f, &hashes, &mut out),
                    // The block's values as keys: random, mostly absent.
                    _ => ours_batched_items(f, &hashes, &mut out),
                };
                std::hint::black_box(found);
                (BLOCK as u64, t.elapsed().as_secs_f64())
            });
            *b = b.max(r);
        }
    }
    let size = ctx.size;
    ctx.res
        .add(size, Kind::Limit { batched: false }, KERNEL, best[0]);
    ctx.res
        .add(size, Kind::Limit { batched: false }, OURS, best[1]);
    ctx.res
        .add(size, Kind::Limit { batched: true }, KERNEL, best[2]);
    ctx.res
        .add(size, Kind::Limit { batched: true }, OURS, best[3]);
    ctx.res
        .add(size, Kind::Limit { batched: true }, OURS_ITEMS, best[4]);
}

// ----- output ---------------------------------------------------------------------

fn machine_info() -> Vec<String> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("unknown".to_string(), |s| s.trim().to_string());
    let cache = cpuinfo
        .lines()
        .find(|l| l.starts_with("cache size"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("?".to_string(), |s| s.trim().to_string());
    let mem = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal"))
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map_or("?".to_string(), |kb| format!("{:.1} GiB", kb / 1048576.0));
    let thp = read("/sys/kernel/mm/transparent_hugepage/enabled")
        .trim()
        .to_string();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let rustc =
        std::process::Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .arg("--version")
            .output()
            .ok()
            .map_or("?".to_string(), |o| {
                String::from_utf8_lossy(&o.stdout).trim().to_string()
            });
    vec![
        format!("date: {}", today()),
        format!("CPU: {model} (cache {cache}), {cores} cores available"),
        format!("memory: {mem}; transparent huge pages: {thp}"),
        format!(
            "{rustc}; load average at start: {}",
            read("/proc/loadavg").trim()
        ),
    ]
}

/// Today's date (UTC), as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn si(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// The columns of the throughput table, after this crate's.
const PEERS: [&str; 5] = [
    "atomic-cuckoo-filter",
    "cuckoofilter",
    "RwLock<cuckoofilter>",
    "Mutex<cuckoofilter>",
    "fastbloom AtomicBloomFilter",
];

/// One row per workload: our ops/s, then each peer's as a ratio to ours,
/// then the limit that applies to the row (the sharing limit for concurrent
/// rows, the memory limit for lookups by hash).
fn table(res: &Results) -> String {
    let mut s = String::new();
    s.push_str("| workload | this crate, ops/s |");
    for p in PEERS {
        let _ = write!(s, " {p} |");
    }
    s.push_str(" limit |\n|---|--:|--:|--:|--:|--:|--:|--:|\n");
    let mut row =
        |label: String, ours: Option<f64>, rows: &[(&'static str, f64)], limit: Option<f64>| {
            let cell = |v: Option<f64>| match (v, ours) {
                (Some(v), Some(o)) => format!("{:.2}", v / o),
                _ => "–".to_string(),
            };
            let _ = write!(s, "| {label} | {} |", ours.map_or("–".into(), si));
            for p in PEERS {
                let _ = write!(
                    s,
                    " {} |",
                    cell(rows.iter().find(|r| r.0 == p).map(|r| r.1))
                );
            }
            let _ = writeln!(s, " {} |", cell(limit));
        };
    for (&(size, kind), rows) in &res.ops {
        let find = |n: &str| rows.iter().find(|r| r.0 == n).map(|r| r.1);
        let limit = find(KERNEL).or(find(SharingKernel::NAME));
        row(kind.label(size), find(OURS), rows, limit);
        if let Some(items) = find(OURS_ITEMS) {
            row(
                format!(
                    "{} · 1 thread · `contains_batch` on keys vs memory limit",
                    size.name()
                ),
                Some(items),
                &[],
                limit,
            );
        }
    }
    s
}

/// Bits per item, measured false-positive rate and deletion, per table.
fn stats_table(res: &Results) -> String {
    let mut s = String::from("| table | implementation | bits/item | measured FPR | can delete? |\n|---|---|--:|--:|:-:|\n");
    for (&(size, name), st) in &res.stats {
        if name == "RwLock<cuckoofilter>" || name == "Mutex<cuckoofilter>" {
            continue;
        }
        let _ = writeln!(
            s,
            "| {} | {name} | {:.1} | {:.2e} (of {}) | {} |",
            size.name(),
            st.bits_per_item,
            st.fpr,
            si(st.fp_queries as f64),
            if st.can_delete { "yes" } else { "no" }
        );
    }
    s
}

/// What the sharing limit says of our two-thread figure: its own ratio, the
/// time per operation that the second thread adds to each thread's
/// operations, and our ratio if ours added no more than that (each thread's
/// operations as long as our one-thread ones plus the kernel's addition).
fn sharing_bound(one: f64, two: f64, k1: f64, k2: f64) -> String {
    let ns = |ops: f64, threads: f64| 1e9 * threads / ops;
    let added = ns(k2, 2.0) - ns(k1, 1.0);
    format!(
        "; ours {:.1} -> {:.1} ns per operation per thread; the sharing limit {:.2}×, \
         {:.1} -> {:.1} ns (+{:.1}); our one-thread time plus that: {:.2}×",
        ns(one, 1.0),
        ns(two, 2.0),
        k2 / k1,
        ns(k1, 1.0),
        ns(k2, 2.0),
        added,
        2.0 * ns(one, 1.0) / (ns(one, 1.0) + added.max(0.0))
    )
}

/// Two threads over one on the small table, beside the sharing limit; our
/// lookups by hash as a share of the memory limit.
fn scaling(res: &Results, threads: &[usize]) -> Vec<String> {
    let mut v = Vec::new();
    if threads.contains(&1) && threads.contains(&2) {
        for (m, mix) in Mix::ALL.iter().enumerate() {
            let k = |t| Kind::Conc { mix: m, threads: t };
            if let (Some(one), Some(two)) = (
                res.get(Size::Small, k(1), OURS),
                res.get(Size::Small, k(2), OURS),
            ) {
                let mut line = format!(
                    "small, {}: 2 threads / 1 thread = {:.2}×",
                    mix.name(),
                    two / one
                );
                if let (Some(k1), Some(k2)) = (
                    res.get(Size::Small, k(1), SharingKernel::NAME),
                    res.get(Size::Small, k(2), SharingKernel::NAME),
                ) {
                    line.push_str(&sharing_bound(one, two, k1, k2));
                }
                v.push(line);
            }
        }
    }
    for (what, name, batched) in [
        ("plain lookups by hash", OURS, false),
        ("`contains_hash_batch`", OURS, true),
        ("`contains_batch` on keys", OURS_ITEMS, true),
    ] {
        let k = Kind::Limit { batched };
        if let (Some(o), Some(l)) = (res.get(Size::Big, k, name), res.get(Size::Big, k, KERNEL)) {
            v.push(format!(
                "big, {what}: {:.0} % of the {} memory limit",
                100.0 * o / l,
                if batched { "batched" } else { "plain" },
            ));
        }
    }
    v
}

// ----- main -----------------------------------------------------------------------

fn main() {
    let cfg = match Config::parse() {
        Ok(Command::Run(cfg)) => cfg,
        Ok(Command::Help) => {
            eprintln!("{}", config::USAGE);
            return;
        }
        Err(e) => {
            eprintln!("compare: {e} (try --help)");
            std::process::exit(2);
        }
    };
    assert!(
        same_hash(0x1234_5678),
        "peers must hash like our default hasher"
    );
    let progress = Progress {
        start: Instant::now(),
        tty: std::io::stderr().is_terminal(),
    };
    let machine = machine_info();
    let mut res = Results::default();
    let mut run = 0;
    for &size in &cfg.sizes {
        run_size(&cfg, size, &mut res, &progress, &mut run);
    }
    let layout_rows = if cfg.layouts {
        layouts::run(&cfg, &progress)
    } else {
        Vec::new()
    };
    let bulk_rows = if cfg.bulk {
        bulk::run(cfg.quick, &progress)
    } else {
        Vec::new()
    };
    let elapsed = progress.start.elapsed().as_secs_f64();
    progress.say(&format!("done in {elapsed:.0} s"));
    progress.done();

    let mut md = String::new();
    md.push_str("# lockfree-cuckoo-filter compared with its peers\n\n");
    md.push_str("Generated by `cargo run --release -p benchmarks --example compare");
    let flags: Vec<String> = std::env::args().skip(1).collect();
    if !flags.is_empty() {
        let _ = write!(md, " -- {}", flags.join(" "));
    }
    md.push_str("`.\n\n");
    for line in &machine {
        let _ = writeln!(md, "- {line}");
    }
    if !res.ops.is_empty() {
        let big_bytes = Ours::new(cfg.tables.capacity(Size::Big)).bytes();
        let _ = writeln!(
            md,
            "- tables: small = `with_capacity({})` ({} KiB), big = {:.0} MiB (ours; peers get the largest power-of-two slot count not above ours); 16-bit fingerprints, buckets of 4, except `cuckoofilter` (8-bit, fixed)",
            cfg.tables.small_items,
            Ours::new(cfg.tables.small_items).bytes() / 1024,
            big_bytes as f64 / 1048576.0
        );
    }
    let _ = writeln!(
        md,
        "- windows: {} ms per single-thread figure (best of 3), {} ms per concurrent run; run took {elapsed:.0} s; load average at end: {}",
        cfg.st_time.as_millis(),
        cfg.conc_time.as_millis(),
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
    );
    if !res.ops.is_empty() {
        md.push_str("- every implementation hashes the `u64` keys with the same XXH3; a peer's cell is its ops/s ÷ this crate's in the same workload (below 1: slower than this crate); bits/item and FPR at 95 % load (FPR from the miss lookups); the Bloom filter is sized for our FPR bound at 95 % load; concurrent lookups are half hits, half misses\n");
    }
    for n in &res.notes {
        let _ = writeln!(md, "- {n}");
    }
    md.push('\n');
    if !res.ops.is_empty() {
        let tab = table(&res);
        md.push_str(&tab);
        md.push('\n');
        md.push_str(&stats_table(&res));
        md.push('\n');
        for t in scaling(&res, &cfg.threads) {
            let _ = writeln!(md, "- {t}");
        }
        println!("{tab}");
        for t in scaling(&res, &cfg.threads) {
            println!("- {t}");
        }
    }
    if !layout_rows.is_empty() {
        let section = layouts::markdown(&layout_rows, cfg.st_time);
        md.push_str("\n## Layouts\n\n");
        md.push_str(&section);
        println!("\n{section}");
    }
    if !bulk_rows.is_empty() {
        let section = bulk::markdown(&bulk_rows);
        md.push_str("\n## The C++ reference's workload (bulk-insert-and-query)\n\n");
        md.push_str(&section);
        println!("\n{section}");
    }
    if let Err(e) = std::fs::create_dir_all(&cfg.out) {
        eprintln!("compare: cannot create {}: {e}", cfg.out.display());
        return;
    }
    let md_path = cfg.out.join("compare.md");
    match std::fs::write(&md_path, &md) {
        Ok(()) => eprintln!("wrote {}", md_path.display()),
        Err(e) => eprintln!("compare: cannot write {}: {e}", md_path.display()),
    }
    if res.ops.is_empty() {
        return;
    }
    let svg_path = cfg.out.join("compare.svg");
    let short_machine = machine.first().cloned().unwrap_or_default();
    match chart::draw(&svg_path, &res, &cfg, &short_machine) {
        Ok(()) => eprintln!("wrote {}", svg_path.display()),
        Err(e) => eprintln!("compare: cannot draw {}: {e}", svg_path.display()),
    }
    // The README's chart: one and two threads against the peers.
    let svg_path = cfg.out.join("throughput.svg");
    match chart::draw_summary(&svg_path, &res) {
        Ok(()) => eprintln!("wrote {}", svg_path.display()),
        Err(e) => eprintln!("compare: cannot draw {}: {e}", svg_path.display()),
    }
}
