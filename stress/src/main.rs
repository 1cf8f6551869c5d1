//! Stress test for `lockfree-cuckoo-filter`: many threads share one filter and
//! run a seeded random mix of `contains` / `insert` / `remove`, on keys each
//! thread owns and on a few keys several threads insert and remove as
//! duplicates, with the table held near a chosen load so that inserts keep
//! relocating fingerprints. Every answer that the filter's guarantees fix is
//! checked while running, and again after the threads are joined:
//!
//! * no false negatives: a key whose insert returned `Ok` and that its owner has
//!   not removed is found by `contains`, during the run and at the end;
//! * `remove` of such a key returns `true`;
//! * exact accounting: at the end `len()` equals the live copies the threads
//!   hold, and the table holds exactly that many fingerprints;
//! * the false-positive rate on never-inserted keys is within its bound;
//! * draining every live key empties the table.
//!
//! `Err(Full)` from an insert is allowed (the table is kept near full) and
//! counted; that it loses nothing is what the checks above verify.
//!
//! Mutations it catches (4 threads, capacity 100 000,
//! load 0.95, seed 7): lookups without validation (a false negative after
//! 3.7 s); a move that clears its source before it copies (a remove of a
//! live key failed after 0.003 s); a mover that keeps its extra copy (the end
//! check: 107 044 fingerprints held, `len()` 59 689).
//!
//! Arguments are parsed by `lexopt`: a small, dependency-free parser that
//! handles `--flag value`, `--flag=value` and bad input the way users expect,
//! which fifteen hand-written flags did not all do.

use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use lockfree_cuckoo_filter::test_hooks::TableHooks;
use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits, InsertError};

mod collision;
mod growable;
mod snapshot;

const HELP: &str = "\
stress: many threads run a seeded random mix of contains/insert/remove on one
shared lockfree-cuckoo-filter, held near a given load, checking every guarantee
while running and at the end. Exits 1 on any violation (printing the first one,
with its seed and thread), 2 on bad arguments.

USAGE:
    cargo run --release -p stress -- [OPTIONS]

OPTIONS:
    --threads N        worker threads [default: 4]
    --seconds S        length of the mixed phase, seconds (fractions allowed)
                       [default: 10]
    --ops N            stop each thread after N mixed operations (the run ends
                       at whichever of --seconds / --ops comes first)
    --capacity N       filter capacity, as in CuckooFilter::with_capacity
                       [default: 1000000]
    --load F           fraction of the table's slots kept filled (0 < F < 1)
                       [default: 0.95]
    --mix C/I/R        percentages of contains/insert/remove [default: 80/10/10]
    --seed N           seed of every random choice, and of the filter's hasher
                       [default: 7]
    --bits B           fingerprint width: 8, 9, 10, 12, 16, 17, 21 or 32, or a
                       ranked layout by its slots a word: r8, r7, r6, r5 or r3
                       [default: 16]
    --shared-keys N    keys that several threads insert and remove as
                       duplicates; each is used by at most 8 threads, each
                       holding at most one copy [default: 64]
    --shared-pct P     percentage of operations on shared keys [default: 5]
    --fpr-probes N     never-inserted keys probed at the end to measure the
                       false-positive rate [default: 1000000]
    --growable         run against a GrowableCuckooFilter that starts at
                       capacity/1024 and grows to hold capacity*load items,
                       with inserts and lookups (no removes: see
                       stress/src/growable.rs)
    --collision        tables of 2 to 8 buckets (one stripe) and of 256 and
                       1030 (several), every width, keys that share
                       fingerprints (twins with opposite first buckets), in
                       rounds of 0.1 s until --seconds have passed: the plain
                       mix, every call (batch lookups, insert_if_absent), and
                       with clears; checks held keys while running, and at the
                       end of each round that len() is the table's contents
                       and, without clears, exactly the held copies (see
                       stress/src/collision.rs)
    --snapshot         threads - 1 writers churn inserts and removes at --load
                       while one thread takes snapshots again and again
                       (to_bytes, every fourth write_to), decodes each and
                       checks that every key held throughout it is there and
                       that its len() is between the keys held throughout and
                       those present at some moment; with --growable, on a
                       growable filter that grows during the run, inserts
                       only (see stress/src/snapshot.rs)
    --keep-going       do not stop at the first violation
    --quiet            no progress line
    -h, --help         this text

The run is reproducible in its choices (which key, which operation) for a given
seed and thread count; the interleaving of threads, and so which inserts find
the table full, is not.
";

/// At most this many threads share one shared key (so at most 8 copies of it,
/// which is what two buckets of four hold).
const MAX_SHARERS: usize = 8;

/// Key layout: bit 63 set marks a key never inserted; bits 40..63 hold the
/// owning thread + 1 (0 for shared keys); bits 0..40 the key's id.
const ABSENT_BIT: u64 = 1 << 63;
const OWNER_SHIFT: u32 = 40;

/// Samples one operation in this many for latency.
const LATENCY_SAMPLE: u64 = 64;

// ----- configuration ---------------------------------------------------------

#[derive(Clone, Debug)]
struct Config {
    threads: usize,
    seconds: f64,
    ops: Option<u64>,
    capacity: usize,
    load: f64,
    mix: [u32; 3],
    seed: u64,
    bits: FingerprintBits,
    shared_keys: usize,
    shared_pct: u32,
    fpr_probes: u64,
    keep_going: bool,
    quiet: bool,
    growable: bool,
    collision: bool,
    snapshot: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            threads: 4,
            seconds: 10.0,
            ops: None,
            capacity: 1_000_000,
            load: 0.95,
            mix: [80, 10, 10],
            seed: 7,
            bits: FingerprintBits::Bits16,
            shared_keys: 64,
            shared_pct: 5,
            fpr_probes: 1_000_000,
            keep_going: false,
            quiet: false,
            growable: false,
            collision: false,
            snapshot: false,
        }
    }
}

/// `--bits`' value for `bits`: the width, or r8, r7, r6, r5, r3 for a
/// ranked layout.
pub(crate) fn bits_arg(bits: FingerprintBits) -> String {
    match bits {
        FingerprintBits::Ranked8 => "r8".into(),
        FingerprintBits::Ranked7 => "r7".into(),
        FingerprintBits::Ranked6 => "r6".into(),
        FingerprintBits::Ranked5 => "r5".into(),
        FingerprintBits::Ranked3 => "r3".into(),
        b => b.bits().to_string(),
    }
}

impl Config {
    /// The arguments as given, for the line that reproduces a run.
    fn command_line(&self) -> String {
        let mut s = format!(
            "cargo run --release -p stress -- --threads {} --seconds {} --capacity {} --load {} \
             --mix {}/{}/{} --seed {} --bits {} --shared-keys {} --shared-pct {} --fpr-probes {}",
            self.threads,
            self.seconds,
            self.capacity,
            self.load,
            self.mix[0],
            self.mix[1],
            self.mix[2],
            self.seed,
            bits_arg(self.bits),
            self.shared_keys,
            self.shared_pct,
            self.fpr_probes
        );
        if let Some(n) = self.ops {
            let _ = write!(s, " --ops {n}");
        }
        if self.growable {
            s.push_str(" --growable");
        }
        if self.collision {
            s.push_str(" --collision");
        }
        if self.snapshot {
            s.push_str(" --snapshot");
        }
        s
    }
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Config>, String> {
    use lexopt::prelude::*;

    fn num<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
        v.parse().map_err(|_| format!("{flag}: cannot parse {v:?}"))
    }
    let mut cfg = Config::default();
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        let flag = match arg {
            Long(name) => format!("--{name}"),
            Short(c) => format!("-{c}"),
            Value(v) => return Err(format!("unexpected argument {v:?}")),
        };
        let mut value = || -> Result<String, String> {
            let v = parser.value().map_err(|e| e.to_string())?;
            v.into_string()
                .map_err(|v| format!("{flag}: {v:?} is not UTF-8"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--keep-going" => cfg.keep_going = true,
            "--quiet" => cfg.quiet = true,
            "--growable" => cfg.growable = true,
            "--collision" => cfg.collision = true,
            "--snapshot" => cfg.snapshot = true,
            "--threads" => cfg.threads = num(&flag, &value()?)?,
            "--seconds" => cfg.seconds = num(&flag, &value()?)?,
            "--ops" => cfg.ops = Some(num(&flag, &value()?)?),
            "--capacity" => cfg.capacity = num(&flag, &value()?)?,
            "--load" => cfg.load = num(&flag, &value()?)?,
            "--seed" => cfg.seed = num(&flag, &value()?)?,
            "--shared-keys" => cfg.shared_keys = num(&flag, &value()?)?,
            "--shared-pct" => cfg.shared_pct = num(&flag, &value()?)?,
            "--fpr-probes" => cfg.fpr_probes = num(&flag, &value()?)?,
            "--bits" => {
                let v = value()?;
                // The ranked layouts by their slots per word: r8, r7, r6,
                // r5, r3.
                let ranked = match v.as_str() {
                    "r8" => Some(FingerprintBits::Ranked8),
                    "r7" => Some(FingerprintBits::Ranked7),
                    "r6" => Some(FingerprintBits::Ranked6),
                    "r5" => Some(FingerprintBits::Ranked5),
                    "r3" => Some(FingerprintBits::Ranked3),
                    _ => None,
                };
                cfg.bits = ranked
                    .or_else(|| {
                        num::<u32>(&flag, &v)
                            .ok()
                            .and_then(FingerprintBits::from_bits)
                    })
                    .ok_or_else(|| {
                        format!(
                            "--bits: {v:?} is not 8, 9, 10, 12, 16, 17, 21, 32, r8, r7, r6, r5 \
                             or r3"
                        )
                    })?;
            }
            "--mix" => {
                let v = value()?;
                let parts: Vec<&str> = v.split('/').collect();
                if parts.len() != 3 {
                    return Err(format!("--mix: {v:?} is not C/I/R"));
                }
                for (m, p) in cfg.mix.iter_mut().zip(&parts) {
                    *m = num(&flag, p)?;
                }
                if cfg.mix.iter().sum::<u32>() != 100 {
                    return Err(format!("--mix: {v:?} does not add up to 100"));
                }
            }
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if cfg.threads == 0 || cfg.threads >= 1 << 20 {
        return Err("--threads must be between 1 and 2^20".into());
    }
    if !(cfg.seconds > 0.0 && cfg.seconds.is_finite()) {
        return Err("--seconds must be positive".into());
    }
    if !(cfg.load > 0.0 && cfg.load < 1.0) {
        return Err("--load must be in (0, 1)".into());
    }
    if cfg.shared_pct > 100 {
        return Err("--shared-pct must be at most 100".into());
    }
    if cfg.shared_keys as u64 >= 1 << OWNER_SHIFT {
        return Err("--shared-keys too large".into());
    }
    Ok(Some(cfg))
}

// ----- randomness ------------------------------------------------------------

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and every seed is good.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Self {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03));
        r.next();
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift.
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

fn own_key(thread: usize, id: u64) -> u64 {
    ((thread as u64 + 1) << OWNER_SHIFT) | id
}

fn shared_key(j: usize) -> u64 {
    j as u64
}

fn absent_key(rng: &mut Rng) -> u64 {
    rng.next() | ABSENT_BIT
}

/// Whether thread `t` (of `threads`) uses shared key `j`: the `MAX_SHARERS`
/// threads starting at `j mod threads`, cyclically.
fn shares(t: usize, j: usize, threads: usize) -> bool {
    (t + threads - j % threads) % threads < threads.min(MAX_SHARERS)
}

// ----- shared state ----------------------------------------------------------

#[derive(Default)]
#[repr(align(128))]
struct Progress {
    ops: AtomicU64,
    full: AtomicU64,
}

struct Run<'a> {
    cfg: &'a Config,
    filter: &'a CuckooFilter,
    stop: AtomicBool,
    finished: AtomicUsize,
    violations: AtomicU64,
    first_violation: Mutex<Option<String>>,
    progress: Vec<Progress>,
    start: Mutex<Option<Instant>>,
}

impl Run<'_> {
    fn violation(&self, who: &str, what: String) {
        let n = self.violations.fetch_add(1, Ordering::Relaxed);
        if n == 0 {
            let at = self
                .start
                .lock()
                .unwrap()
                .map_or(0.0, |s| s.elapsed().as_secs_f64());
            let msg = format!("{who}, seed {}, at {at:.3} s: {what}", self.cfg.seed);
            *self.first_violation.lock().unwrap() = Some(msg);
        }
        if !self.cfg.keep_going {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

// ----- one thread ------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Contains = 0,
    Insert = 1,
    Remove = 2,
}

#[derive(Default, Clone, Debug)]
struct Stats {
    prefill_ok: u64,
    prefill_full: u64,
    ops: [u64; 3],
    latency_ns: [u64; 3],
    latency_samples: [u64; 3],
    contains_live_checked: u64,
    contains_shared_checked: u64,
    contains_shared_unheld: u64,
    contains_absent: u64,
    absent_hits: u64,
    remove_live_checked: u64,
    remove_shared_checked: u64,
    insert_ok: u64,
    insert_full: u64,
    shared_insert_ok: u64,
    shared_insert_full: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.prefill_ok += o.prefill_ok;
        self.prefill_full += o.prefill_full;
        for k in 0..3 {
            self.ops[k] += o.ops[k];
            self.latency_ns[k] += o.latency_ns[k];
            self.latency_samples[k] += o.latency_samples[k];
        }
        self.contains_live_checked += o.contains_live_checked;
        self.contains_shared_checked += o.contains_shared_checked;
        self.contains_shared_unheld += o.contains_shared_unheld;
        self.contains_absent += o.contains_absent;
        self.absent_hits += o.absent_hits;
        self.remove_live_checked += o.remove_live_checked;
        self.remove_shared_checked += o.remove_shared_checked;
        self.insert_ok += o.insert_ok;
        self.insert_full += o.insert_full;
        self.shared_insert_ok += o.shared_insert_ok;
        self.shared_insert_full += o.shared_insert_full;
    }
}

const DEAD: u32 = u32::MAX;

/// A thread's keys: ids `0..universe`, the live ones listed densely in `live`
/// (so a random live key is one index away), `slot[id]` its place there.
struct OwnKeys {
    live: Vec<u32>,
    slot: Vec<u32>,
}

impl OwnKeys {
    fn new(universe: usize) -> Self {
        Self {
            live: Vec::with_capacity(universe),
            slot: vec![DEAD; universe],
        }
    }

    /// A random id that is not live (at least half the universe is not).
    fn pick_dead(&self, rng: &mut Rng) -> u32 {
        loop {
            let id = rng.index(self.slot.len()) as u32;
            if self.slot[id as usize] == DEAD {
                return id;
            }
        }
    }

    fn add(&mut self, id: u32) {
        self.slot[id as usize] = self.live.len() as u32;
        self.live.push(id);
    }

    /// Removes the live id at `index` from the list.
    fn drop_at(&mut self, index: usize) -> u32 {
        let id = self.live.swap_remove(index);
        self.slot[id as usize] = DEAD;
        if let Some(&moved) = self.live.get(index) {
            self.slot[moved as usize] = index as u32;
        }
        id
    }
}

/// What a thread holds when it is done.
struct Holdings {
    own: Vec<u32>,
    /// `(shared key index, held)` for each shared key the thread uses.
    shared: Vec<(usize, bool)>,
    stats: Stats,
}

struct Quota {
    target: usize,
    lo: usize,
    hi: usize,
}

fn worker(t: usize, run: &Run<'_>, quota: &Quota, barrier: &Barrier) -> Holdings {
    let cfg = run.cfg;
    let filter = run.filter;
    let who = format!("thread {t}");
    let mut rng = Rng::new(cfg.seed, t as u64 + 1);
    let mut stats = Stats::default();
    let mut keys = OwnKeys::new(2 * quota.hi + 64);
    let mut shared: Vec<(usize, bool)> = (0..cfg.shared_keys)
        .filter(|&j| shares(t, j, cfg.threads))
        .map(|j| (j, false))
        .collect();

    // Prefill to the quota. Near full load a few inserts may find no room;
    // give up on the quota after many failures in a row.
    let mut fails_in_a_row = 0;
    while keys.live.len() < quota.target
        && fails_in_a_row < 1000
        && !run.stop.load(Ordering::Relaxed)
    {
        let id = keys.pick_dead(&mut rng);
        match filter.insert(&own_key(t, u64::from(id))) {
            Ok(()) => {
                keys.add(id);
                stats.prefill_ok += 1;
                fails_in_a_row = 0;
            }
            Err(InsertError::Full) => {
                stats.prefill_full += 1;
                fails_in_a_row += 1;
            }
            Err(e) => panic!("unexpected insert error {e:?}"),
        }
    }
    barrier.wait();

    let progress = &run.progress[t];
    let [c_pct, i_pct, _] = cfg.mix;
    let mut n: u64 = 0;
    loop {
        if n % 64 == 0 {
            if run.stop.load(Ordering::Relaxed) || cfg.ops.is_some_and(|max| n >= max) {
                break;
            }
            if n % 1024 == 0 {
                progress.ops.store(n, Ordering::Relaxed);
                progress.full.store(
                    stats.insert_full + stats.shared_insert_full,
                    Ordering::Relaxed,
                );
            }
        }
        n += 1;
        let roll = rng.below(100) as u32;
        let mut op = if roll < c_pct {
            Op::Contains
        } else if roll < c_pct + i_pct {
            Op::Insert
        } else {
            Op::Remove
        };
        let on_shared = !shared.is_empty() && (rng.below(100) as u32) < cfg.shared_pct;
        let timed = n % LATENCY_SAMPLE == 0;
        let t0 = if timed { Some(Instant::now()) } else { None };

        if on_shared {
            let k = rng.index(shared.len());
            let (j, held) = shared[k];
            let key = shared_key(j);
            match op {
                Op::Contains => {
                    let found = filter.contains(&key);
                    if held {
                        stats.contains_shared_checked += 1;
                        if !found {
                            run.violation(
                                &who,
                                format!("contains(shared key {j}) = false while this thread holds a copy"),
                            );
                        }
                    } else {
                        stats.contains_shared_unheld += 1;
                    }
                }
                // Insert and remove toggle the thread's copy: at most one each.
                Op::Insert | Op::Remove => {
                    if held {
                        op = Op::Remove;
                        stats.remove_shared_checked += 1;
                        if !filter.remove(&key) {
                            run.violation(
                                &who,
                                format!(
                                    "remove(shared key {j}) = false while this thread holds a copy"
                                ),
                            );
                        }
                        shared[k].1 = false;
                    } else {
                        op = Op::Insert;
                        match filter.insert(&key) {
                            Ok(()) => {
                                stats.shared_insert_ok += 1;
                                shared[k].1 = true;
                            }
                            Err(_) => stats.shared_insert_full += 1,
                        }
                    }
                }
            }
        } else {
            match op {
                Op::Contains => {
                    if !keys.live.is_empty() && rng.next() & 1 == 0 {
                        let id = keys.live[rng.index(keys.live.len())];
                        stats.contains_live_checked += 1;
                        if !filter.contains(&own_key(t, u64::from(id))) {
                            run.violation(
                                &who,
                                format!(
                                    "contains(key {:#x}) = false for a live key (inserted Ok, not removed)",
                                    own_key(t, u64::from(id))
                                ),
                            );
                        }
                    } else {
                        stats.contains_absent += 1;
                        if filter.contains(&absent_key(&mut rng)) {
                            stats.absent_hits += 1;
                        }
                    }
                }
                Op::Insert | Op::Remove => {
                    // Hold the live count within [lo, hi]: an insert above it
                    // becomes a remove, a remove below it an insert.
                    let len = keys.live.len();
                    let insert = if op == Op::Insert {
                        len < quota.hi
                    } else {
                        len < quota.lo || len == 0
                    };
                    if insert {
                        op = Op::Insert;
                        let id = keys.pick_dead(&mut rng);
                        match filter.insert(&own_key(t, u64::from(id))) {
                            Ok(()) => {
                                keys.add(id);
                                stats.insert_ok += 1;
                            }
                            Err(_) => stats.insert_full += 1,
                        }
                    } else {
                        op = Op::Remove;
                        let id = keys.drop_at(rng.index(len));
                        stats.remove_live_checked += 1;
                        if !filter.remove(&own_key(t, u64::from(id))) {
                            run.violation(
                                &who,
                                format!(
                                    "remove(key {:#x}) = false for a live key (inserted Ok, not removed)",
                                    own_key(t, u64::from(id))
                                ),
                            );
                        }
                    }
                }
            }
        }
        stats.ops[op as usize] += 1;
        if let Some(t0) = t0 {
            stats.latency_ns[op as usize] += t0.elapsed().as_nanos() as u64;
            stats.latency_samples[op as usize] += 1;
        }
    }
    progress.ops.store(n, Ordering::Relaxed);
    run.finished.fetch_add(1, Ordering::Relaxed);
    Holdings {
        own: keys.live,
        shared,
        stats,
    }
}

// ----- the run ---------------------------------------------------------------

fn main() -> ExitCode {
    let cfg = match parse_args(std::env::args().skip(1)) {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("stress: {e}\n(try --help)");
            return ExitCode::from(2);
        }
    };
    if cfg.snapshot {
        return if snapshot::run(&cfg) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    if cfg.collision {
        return if collision::run(&cfg) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    if cfg.growable {
        return if growable::run(&cfg) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    // Seeded from --seed, so that a run's key placement reproduces too.
    let filter = match CuckooFilter::builder()
        .capacity(cfg.capacity)
        .fingerprint_bits(cfg.bits)
        .seed(cfg.seed)
        .build()
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("stress: cannot build the filter: {e}");
            return ExitCode::from(2);
        }
    };
    if run(&cfg, &filter) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Runs the stress test; true if no violation was found.
fn run(cfg: &Config, filter: &CuckooFilter) -> bool {
    let slots = filter.slots();
    // Shared keys may hold up to `sharers` copies each; keep that at most 1/16
    // of the slots, so that on small tables they do not crowd out the keys
    // whose count holds the load.
    let sharers = cfg.threads.min(MAX_SHARERS);
    let shared_cap = (slots / (16 * sharers)).max(1);
    let cfg = &Config {
        shared_keys: cfg.shared_keys.min(shared_cap),
        ..cfg.clone()
    };
    // Each thread holds each of its shared keys about half the time.
    let shared_expected = cfg.shared_keys * sharers / 2;
    let target_total = (cfg.load * slots as f64) as usize;
    let target = target_total.saturating_sub(shared_expected) / cfg.threads;
    let slack = (target / 2000).max(1);
    let quota = Quota {
        target,
        lo: target.saturating_sub(slack),
        hi: target + slack,
    };
    println!(
        "stress: {} threads, {} s, capacity {} ({} slots, {}-bit fingerprints), load {}, \
         mix {}/{}/{} (contains/insert/remove), seed {}, {} shared keys ({} % of ops)",
        cfg.threads,
        cfg.seconds,
        cfg.capacity,
        slots,
        bits_arg(cfg.bits),
        cfg.load,
        cfg.mix[0],
        cfg.mix[1],
        cfg.mix[2],
        cfg.seed,
        cfg.shared_keys,
        cfg.shared_pct,
    );
    println!(
        "        each thread holds {}..{} keys of its own, about {} shared copies in all \
         (target {} live items)",
        quota.lo, quota.hi, shared_expected, target_total
    );

    let run = Run {
        cfg,
        filter,
        stop: AtomicBool::new(false),
        finished: AtomicUsize::new(0),
        violations: AtomicU64::new(0),
        first_violation: Mutex::new(None),
        progress: (0..cfg.threads).map(|_| Progress::default()).collect(),
        start: Mutex::new(None),
    };
    let barrier = Barrier::new(cfg.threads + 1);
    let prefill_start = Instant::now();
    let (holdings, elapsed, prefill) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|t| {
                let (run, quota, barrier) = (&run, &quota, &barrier);
                std::thread::Builder::new()
                    .name(format!("stress-{t}"))
                    .spawn_scoped(s, move || worker(t, run, quota, barrier))
                    .expect("spawn a worker thread")
            })
            .collect();
        barrier.wait();
        let prefill = prefill_start.elapsed();
        let start = Instant::now();
        *run.start.lock().unwrap() = Some(start);
        monitor(&run, start);
        let holdings: Vec<Holdings> = handles
            .into_iter()
            .map(|h| h.join().expect("a worker thread panicked"))
            .collect();
        (holdings, start.elapsed(), prefill)
    });
    if !cfg.quiet {
        eprintln!();
    }
    report(&run, &holdings, elapsed, prefill)
}

/// Prints the progress line about once a second and stops the workers at the
/// deadline (or returns when all finished their --ops).
fn monitor(run: &Run<'_>, start: Instant) {
    let deadline = Duration::from_secs_f64(run.cfg.seconds);
    let mut last_print = Duration::ZERO;
    let mut last_ops = 0u64;
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = start.elapsed();
        let done = run.finished.load(Ordering::Relaxed) == run.cfg.threads;
        if now >= deadline || done || run.stop.load(Ordering::Relaxed) {
            run.stop.store(true, Ordering::Relaxed);
            return;
        }
        if !run.cfg.quiet && now - last_print >= Duration::from_secs(1) {
            let ops: u64 = run
                .progress
                .iter()
                .map(|p| p.ops.load(Ordering::Relaxed))
                .sum();
            let full: u64 = run
                .progress
                .iter()
                .map(|p| p.full.load(Ordering::Relaxed))
                .sum();
            let rate = (ops - last_ops) as f64 / (now - last_print).as_secs_f64();
            eprint!(
                "\r[{:6.1} s / {} s] {:8.3} Mops/s  load {:.4}  full inserts {:>8}  violations {}   ",
                now.as_secs_f64(),
                run.cfg.seconds,
                rate / 1e6,
                run.filter.load_factor(),
                full,
                run.violations.load(Ordering::Relaxed),
            );
            let _ = std::io::stderr().flush();
            last_print = now;
            last_ops = ops;
        }
    }
}

/// The final checks, after every worker is joined, and the report.
fn report(run: &Run<'_>, holdings: &[Holdings], elapsed: Duration, prefill: Duration) -> bool {
    let cfg = run.cfg;
    let filter = run.filter;
    let mut stats = Stats::default();
    for h in holdings {
        stats.add(&h.stats);
    }
    let secs = elapsed.as_secs_f64();
    let total_ops: u64 = stats.ops.iter().sum();
    let who = "final check (main thread)";

    // Exact accounting: len() against the copies the threads hold, and the
    // fingerprints actually in the table against len().
    let mut held_copies = vec![0usize; cfg.shared_keys];
    for h in holdings {
        for &(j, held) in &h.shared {
            held_copies[j] += usize::from(held);
        }
    }
    let own_live: usize = holdings.iter().map(|h| h.own.len()).sum();
    let shared_live: usize = held_copies.iter().sum();
    let expected = own_live + shared_live;
    let len = filter.len();
    if len != expected {
        run.violation(
            who,
            format!("len() = {len}, but the threads hold {expected} live copies"),
        );
    }
    let slots_used = filter.fingerprints().len();
    if slots_used != len {
        run.violation(
            who,
            format!("the table holds {slots_used} fingerprints, but len() = {len}"),
        );
    }
    let load = filter.load_factor();

    // No false negatives after the dust settles; shared keys keep their copies.
    let mut final_contains = 0u64;
    for (t, h) in holdings.iter().enumerate() {
        for &id in &h.own {
            final_contains += 1;
            let key = own_key(t, u64::from(id));
            if !filter.contains(&key) {
                run.violation(
                    who,
                    format!("contains(key {key:#x}) of thread {t} = false at the end"),
                );
            }
        }
    }
    let mut final_copies = 0u64;
    for (j, &held) in held_copies.iter().enumerate() {
        if held > 0 {
            final_contains += 1;
            final_copies += 1;
            if !filter.contains(&shared_key(j)) {
                run.violation(
                    who,
                    format!("contains(shared key {j}) = false with {held} copies held"),
                );
            }
            // More copies may be there if another key shares the fingerprint
            // and buckets; never fewer.
            let copies = filter.copies(filter.hasher().hash_one(shared_key(j)));
            if copies < held {
                run.violation(
                    who,
                    format!("shared key {j}: {copies} copies in the table, {held} held"),
                );
            }
        }
    }

    // False-positive rate on keys never inserted, at the final load.
    let mut rng = Rng::new(cfg.seed, u64::MAX);
    let probes = cfg.fpr_probes;
    let hits = (0..probes)
        .filter(|_| filter.contains(&absent_key(&mut rng)))
        .count() as u64;
    let bound = cfg.bits.false_positive_rate(load);
    let expected_hits = 1.3 * bound * probes as f64;
    // Small-sample allowance: four standard deviations of a binomial count.
    let allowance = 4.0 * expected_hits.sqrt() + 4.0;
    let fpr_limit = expected_hits + allowance;
    let fpr = if probes == 0 {
        0.0
    } else {
        hits as f64 / probes as f64
    };
    if hits as f64 > fpr_limit {
        run.violation(
            who,
            format!(
                "false-positive rate {fpr:.3e} ({hits} of {probes}) above 1.3 x bound {bound:.3e} \
                 + allowance (limit {fpr_limit:.0} hits)"
            ),
        );
    }

    // Drain: every live copy removes once, and then the table is empty.
    let mut drain_removes = 0u64;
    for (t, h) in holdings.iter().enumerate() {
        for &id in &h.own {
            drain_removes += 1;
            let key = own_key(t, u64::from(id));
            if !filter.remove(&key) {
                run.violation(
                    who,
                    format!("drain: remove(key {key:#x}) of thread {t} = false"),
                );
            }
        }
    }
    for (j, &held) in held_copies.iter().enumerate() {
        for _ in 0..held {
            drain_removes += 1;
            if !filter.remove(&shared_key(j)) {
                run.violation(who, format!("drain: remove(shared key {j}) = false"));
            }
        }
    }
    let left = filter.fingerprints().len();
    let len_after = filter.len();
    if len_after != 0 || left != 0 {
        run.violation(
            who,
            format!(
                "after draining every live copy: len() = {len_after}, {left} fingerprints left"
            ),
        );
    }

    // ----- the report -----
    let per_s = |n: u64| n as f64 / secs;
    println!(
        "prefill: {} inserts ({} full) in {:.2} s",
        stats.prefill_ok,
        stats.prefill_full,
        prefill.as_secs_f64()
    );
    println!(
        "mixed phase: {:.2} s, {} ops, {:.3} Mops/s total ({:.3} Mops/s per thread)",
        secs,
        total_ops,
        per_s(total_ops) / 1e6,
        per_s(total_ops) / 1e6 / cfg.threads as f64
    );
    for (name, k) in [("contains", 0), ("insert", 1), ("remove", 2)] {
        let lat = if stats.latency_samples[k] == 0 {
            0.0
        } else {
            stats.latency_ns[k] as f64 / stats.latency_samples[k] as f64
        };
        println!(
            "  {name:<9} {:>12} ops  {:8.3} Mops/s  ~{:6.0} ns/op (1 in {LATENCY_SAMPLE} timed)",
            stats.ops[k],
            per_s(stats.ops[k]) / 1e6,
            lat
        );
    }
    println!(
        "inserts: {} ok, {} full ({:.4} %); shared-key inserts: {} ok, {} full",
        stats.insert_ok,
        stats.insert_full,
        100.0 * stats.insert_full as f64 / (stats.insert_ok + stats.insert_full).max(1) as f64,
        stats.shared_insert_ok,
        stats.shared_insert_full
    );
    println!("checks while running:");
    println!(
        "  contains(live own key) = true       {:>12}",
        stats.contains_live_checked
    );
    println!(
        "  contains(held shared key) = true    {:>12}",
        stats.contains_shared_checked
    );
    println!(
        "  remove(live own key) = true         {:>12}",
        stats.remove_live_checked
    );
    println!(
        "  remove(held shared key) = true      {:>12}",
        stats.remove_shared_checked
    );
    println!(
        "  (unchecked: {} contains of never-inserted keys, {} hits = {:.3e}; {} of unheld shared keys)",
        stats.contains_absent,
        stats.absent_hits,
        stats.absent_hits as f64 / stats.contains_absent.max(1) as f64,
        stats.contains_shared_unheld
    );
    println!("checks at the end:");
    println!(
        "  len() = live copies held             {len} = {expected} ({own_live} own + {shared_live} shared)"
    );
    println!("  fingerprints in table = len()       {slots_used} = {len}  (load {load:.4})");
    println!("  contains(live key) = true           {final_contains:>12}");
    println!("  shared copies in table >= held      {final_copies:>12}");
    println!(
        "  false-positive rate                 {fpr:.3e} ({hits} of {probes}); bound {bound:.3e}, \
         limit 1.3 x bound + allowance = {:.3e}",
        fpr_limit / probes.max(1) as f64
    );
    println!(
        "  drain: remove(live copy) = true     {drain_removes:>12}; then len() = {len_after}, \
         fingerprints left = {left} (both must be 0)"
    );

    let violations = run.violations.load(Ordering::Relaxed);
    if violations == 0 {
        println!("OK: no violations");
        true
    } else {
        let first = run
            .first_violation
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_default();
        println!("FAILED: {violations} violation(s); first: {first}");
        println!("reproduce: {}", cfg.command_line());
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_the_documented_command() {
        let cfg = parse_args(args(
            "--threads 8 --seconds 30 --capacity 1000000 --load 0.95 --mix 80/10/10 --seed 7",
        ))
        .unwrap()
        .unwrap();
        assert_eq!((cfg.threads, cfg.capacity, cfg.seed), (8, 1_000_000, 7));
        assert_eq!(cfg.mix, [80, 10, 10]);
        assert!(parse_args(args("--help")).unwrap().is_none());
        assert!(parse_args(args("--mix 50/50/1")).is_err());
        assert!(parse_args(args("--threads")).is_err());
        assert!(parse_args(args("--bogus 1")).is_err());
        assert!(parse_args(args("--snapshot")).unwrap().unwrap().snapshot);
        assert_eq!(
            parse_args(args("--bits=8")).unwrap().unwrap().bits,
            FingerprintBits::Bits8
        );
    }

    #[test]
    fn shared_keys_have_at_most_eight_sharers() {
        for threads in [1, 3, 8, 9, 20] {
            for j in 0..40 {
                let n = (0..threads).filter(|&t| shares(t, j, threads)).count();
                assert_eq!(n, threads.min(MAX_SHARERS));
            }
        }
    }

    #[test]
    fn rng_is_uniform_enough() {
        let mut r = Rng::new(7, 1);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[r.index(10)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn a_small_run_passes() {
        let cfg = parse_args(args(
            "--threads 3 --seconds 5 --ops 20000 --capacity 2000 --load 0.95 --fpr-probes 20000 --quiet",
        ))
        .unwrap()
        .unwrap();
        let filter = CuckooFilter::builder()
            .capacity(cfg.capacity)
            .build()
            .unwrap();
        assert!(run(&cfg, &filter));
    }
}
