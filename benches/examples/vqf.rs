//! This crate beside the Vector Quotient Filter (VQF; Pandey et al., SIGMOD
//! 2021, <https://github.com/splatlab/vqf>): every fingerprint layout, the
//! plain VQF build and its thread-safe build, on the same random 64-bit
//! hashes and tables of (nearly) the same slot count.
//!
//! ```text
//! benches/vqf/build.sh /path/to/vqf-checkout /tmp/vqf-build       # VQF, outside this repository
//! VQF_LIB_DIR=/tmp/vqf-build cargo run --release -p benchmarks --example vqf
//! VQF_LIB_DIR=/tmp/vqf-build cargo run --release -p benchmarks --example vqf -- --quick
//! VQF_LIB_DIR=/tmp/vqf-build cargo run --release -p benchmarks --example vqf -- --repro
//! cargo run --release -p benchmarks --example vqf                  # this crate's rows alone
//! ```
//!
//! No VQF code is in this repository: `benches/vqf/build.sh` compiles a VQF
//! checkout into `libvqf.a` (three builds, symbols renamed so that they live
//! in one process: plain, thread-safe as published, thread-safe with removes
//! locked), and `benches/build.rs` links it when `VQF_LIB_DIR` names its
//! folder. VQF's remainders are 8 bits (its default `TAG_BITS`); its table is
//! what `vqf_init` allocates.
//!
//! What is measured, for each table size (`--slots 20,26`: 2^20 and 2^26
//! slots), in interleaved rounds (`--rounds 3`; round r runs every subject in
//! turn, each on a fresh table):
//! - the hashes are SplitMix64 of a counter, so random and distinct; VQF gets
//!   them through `vqf_insert` / `vqf_is_present` / `vqf_remove`, this crate
//!   through `insert_hash` / `contains_hash` / `remove_hash` /
//!   `contains_hash_batch`. VQF costs a call into C per operation (nothing
//!   inlines across the languages); this crate's operations inline into the
//!   timed loops;
//! - slots: this crate's tables get the most slots up to 2^s (exactly 2^s
//!   for buckets of four, within a bucket or two for buckets of five and six;
//!   the capacity that gives them is found by building candidates), VQF's the
//!   whole number of 48-slot blocks nearest to 2^s;
//! - timed, on one thread: the fill from empty to 90 % of the slots, then
//!   from 90 to 95 %; at 95 %, lookups of every present key, the same by
//!   `contains_hash_batch` (this crate only), as many lookups of absent keys
//!   (the measured false-positive rate), then the removes of every key
//!   (95 % to empty);
//! - at 90 %, between the two fills, `--threads 1,2` threads sharing the
//!   filter: lookups of present keys, then a 90/5/5 lookup/insert/remove mix
//!   (each thread inserts fresh keys and removes its own, 64 behind, so the
//!   load stays put). Only VQF's thread-safe build (removes locked) runs on
//!   more than one thread; lookups that miss a present key are counted.
//!
//! The tables print ops/s per subject (median of the rounds, min–max), each
//! layout ÷ 16-bit, and 16-bit and 12-bit ÷ VQF and ÷ VQF-MT, ratios taken
//! within each round. `--out FILE` writes them to FILE as well.
//!
//! `--repro` shows two faults of VQF's thread-safe build as published: its
//! `vqf_remove` takes no lock but leaves the lock bit of the block it changed
//! set, so the next insert into that block spins forever; and its lookups
//! take no lock, so an insert or remove shifting a block can hide a present
//! key. It counts blocks left locked and false negatives, beside this crate.
//!
//! `--perf-lookups W` (a layout's bits, `vqf`, or `vqf-mt`: the published
//! thread-safe build, whose lookups are VQF-MT's) only fills a
//! table of the first `--slots` size to 95 % and loops `--perf-count N`
//! lookups of present keys: run it under `perf stat -e instructions` (or,
//! where the machine has no counters, `valgrind --tool=callgrind`) with N
//! and with 0, and divide the difference by N for instructions per lookup.

use std::fmt::Write as _;
use std::path::PathBuf;
#[cfg(vqf)]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(vqf)]
use std::sync::mpsc;
use std::sync::Barrier;
#[cfg(vqf)]
use std::time::Duration;
use std::time::Instant;

use benchmarks::{filter_with, items_at, largest_capacity, parse_threads, splitmix};
use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits};
use rayon::prelude::*;

const USAGE: &str = "\
usage: vqf [OPTIONS]

  --slots LIST        table sizes as log2 of the slots, 10 to 28 (default 20,26)
  --layouts LIST      this crate's fingerprint widths (default all: 8,9,r8,r7,10,r6,12,r5,16,17,21,r3,32)
  --rounds N          interleaved rounds (default 3)
  --threads LIST      thread counts sharing one filter at 90 % (default 1,2)
  --quick             a smoke run: 2^18 slots, one round, short concurrent runs
  --out FILE          write the tables to FILE too
  --repro             show the published thread-safe VQF's deadlock and false negatives
  --repro-secs S      seconds of each false-negative run (default 3; 1 with --quick)
  --perf-lookups W    fill one table (W: layout bits, vqf or vqf-mt) to 95 % and loop lookups
  --perf-count N      lookups of --perf-lookups (default 100000000)
  -h, --help          this text";

struct Args {
    slots: Vec<u32>,
    layouts: Vec<FingerprintBits>,
    rounds: usize,
    threads: Vec<usize>,
    quick: bool,
    out: Option<PathBuf>,
    repro: bool,
    repro_secs: f64,
    perf: Option<Subject>,
    perf_count: u64,
}

fn parse_args() -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;
    let mut quick = false;
    let mut slots = None;
    let mut layouts = FingerprintBits::ALL.to_vec();
    let mut rounds = None;
    let mut threads = vec![1, 2];
    let mut out = None;
    let mut repro = false;
    let mut repro_secs = None;
    let mut perf = None;
    let mut perf_count = 100_000_000;
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("slots") => slots = Some(parser.value()?.parse_with(parse_slots)?),
            Long("layouts") => layouts = parser.value()?.parse_with(parse_layouts)?,
            Long("rounds") => rounds = Some(parser.value()?.parse()?),
            Long("threads") => threads = parser.value()?.parse_with(parse_threads)?,
            Long("quick") => quick = true,
            Long("out") => out = Some(parser.value()?.into()),
            Long("repro") => repro = true,
            Long("repro-secs") => repro_secs = Some(parser.value()?.parse()?),
            Long("perf-lookups") => perf = Some(parser.value()?.parse_with(parse_subject)?),
            Long("perf-count") => perf_count = parser.value()?.parse()?,
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    let rounds = rounds.unwrap_or(if quick { 1 } else { 3 });
    if rounds == 0 {
        return Err("--rounds must be at least 1".into());
    }
    Ok(Args {
        slots: slots.unwrap_or(if quick { vec![18] } else { vec![20, 26] }),
        layouts,
        rounds,
        threads,
        quick,
        out,
        repro,
        repro_secs: repro_secs.unwrap_or(if quick { 1.0 } else { 3.0 }),
        perf,
        perf_count,
    })
}

fn parse_slots(spec: &str) -> Result<Vec<u32>, String> {
    spec.split(',')
        .map(|s| match s.trim().parse::<u32>() {
            Ok(n) if (10..=28).contains(&n) => Ok(n),
            _ => Err(format!(
                "not a table size: {s:?} (log2 of the slots, 10 to 28)"
            )),
        })
        .collect()
}

fn parse_layouts(spec: &str) -> Result<Vec<FingerprintBits>, String> {
    spec.split(',')
        .map(|s| {
            benchmarks::parse_layout(s).ok_or_else(|| {
                format!("not a layout: {s:?} (8, 9, 10, 12, 16, 17, 21, 32, r8, r7, r6, r5 or r3)")
            })
        })
        .collect()
}

fn parse_subject(spec: &str) -> Result<Subject, String> {
    match spec.trim() {
        "vqf" => Ok(Subject::Vqf(Build::Plain)),
        "vqf-mt" => Ok(Subject::Vqf(Build::Mt)),
        s => parse_layouts(s).map(|l| Subject::Crate(l[0])),
    }
}

// ----- keys ------------------------------------------------------------------------

/// The `i`-th present key, a random 64-bit hash. SplitMix64's finaliser is a
/// bijection, so the keys of disjoint counters are distinct.
fn present(i: u64) -> u64 {
    splitmix(i)
}

/// The `i`-th key never inserted.
fn absent(i: u64) -> u64 {
    splitmix((1 << 62) | i)
}

/// The `j`-th fresh key of thread `t`, for the inserts of the mixes.
fn fresh(t: u64, j: u64) -> u64 {
    splitmix((1 << 63) | (t << 40) | j)
}

fn make_keys(n: usize, key: fn(u64) -> u64) -> Vec<u64> {
    (0..n as u64).into_par_iter().map(key).collect()
}

// ----- the subjects ----------------------------------------------------------------

/// A filter under test, driven by 64-bit hashes.
trait Filter {
    fn insert(&self, hash: u64) -> bool;
    fn contains(&self, hash: u64) -> bool;
    fn remove(&self, hash: u64) -> bool;
    /// `contains_hash_batch`, for a filter that has it; false otherwise.
    fn contains_batch(&self, _hashes: &[u64], _out: &mut [bool]) -> bool {
        false
    }
    fn slots(&self) -> usize;
    fn bytes(&self) -> usize;
}

impl Filter for CuckooFilter {
    #[inline(always)]
    fn insert(&self, hash: u64) -> bool {
        self.insert_hash(hash).is_ok()
    }
    #[inline(always)]
    fn contains(&self, hash: u64) -> bool {
        self.contains_hash(hash)
    }
    #[inline(always)]
    fn remove(&self, hash: u64) -> bool {
        self.remove_hash(hash)
    }
    fn contains_batch(&self, hashes: &[u64], out: &mut [bool]) -> bool {
        self.contains_hash_batch(hashes, out);
        true
    }
    fn slots(&self) -> usize {
        CuckooFilter::slots(self)
    }
    fn bytes(&self) -> usize {
        self.memory_usage()
    }
}

/// VQF's builds (see `benches/vqf/build.sh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Build {
    /// Not thread-safe.
    Plain,
    /// Thread-safe (`ENABLE_THREADS`), with `vqf_remove` taking the blocks'
    /// locks: the one measured.
    MtLocked,
    /// Thread-safe as published: `vqf_remove` takes no lock. Only `--repro`
    /// and `--perf-lookups vqf-mt` use it (its lookups are MtLocked's).
    Mt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Subject {
    Crate(FingerprintBits),
    Vqf(Build),
}

impl Subject {
    fn name(self) -> String {
        match self {
            Subject::Crate(b) => benchmarks::long_name(b),
            Subject::Vqf(Build::Plain) => "VQF".into(),
            Subject::Vqf(Build::MtLocked) => "VQF-MT".into(),
            Subject::Vqf(Build::Mt) => "VQF-MT as published".into(),
        }
    }
    /// A short name for the ratio rows: the bits, or VQF's.
    fn short(self) -> String {
        match self {
            Subject::Crate(b) => benchmarks::short_name(b),
            v => v.name(),
        }
    }
}

/// This crate's filter of `bits`-bit fingerprints with the most slots up
/// to 2^`log2`: exactly 2^log2 where a bucket is four slots, a few fewer
/// where it is five or six.
fn crate_filter(bits: FingerprintBits, log2: u32) -> CuckooFilter {
    let slots = 1usize << log2;
    let capacity = largest_capacity(bits, slots, |f| f.slots() <= slots).unwrap_or(0);
    filter_with(capacity, bits)
}

#[cfg(vqf)]
mod vqf {
    //! The three builds of `libvqf.a` behind [`Filter`].

    use std::marker::PhantomData;

    use super::Filter;

    /// `vqf_metadata`, the head of a `vqf_filter` (`include/vqf_filter.h`);
    /// the blocks follow it.
    #[repr(C)]
    pub struct Raw {
        total_size_in_bytes: u64,
        key_remainder_bits: u64,
        range: u64,
        nblocks: u64,
        nelts: u64,
        nslots: u64,
    }

    /// Slots in one 64-byte block, with 8-bit remainders.
    pub const SLOTS_PER_BLOCK: usize = 48;

    extern "C" {
        fn vqf_init(nslots: u64) -> *mut Raw;
        fn vqf_insert(filter: *mut Raw, hash: u64) -> bool;
        fn vqf_remove(filter: *mut Raw, hash: u64) -> bool;
        fn vqf_is_present(filter: *mut Raw, hash: u64) -> bool;
        fn vqf_mt_init(nslots: u64) -> *mut Raw;
        fn vqf_mt_insert(filter: *mut Raw, hash: u64) -> bool;
        fn vqf_mt_remove(filter: *mut Raw, hash: u64) -> bool;
        fn vqf_mt_is_present(filter: *mut Raw, hash: u64) -> bool;
        fn vqf_mtl_init(nslots: u64) -> *mut Raw;
        fn vqf_mtl_insert(filter: *mut Raw, hash: u64) -> bool;
        fn vqf_mtl_remove(filter: *mut Raw, hash: u64) -> bool;
        fn vqf_mtl_is_present(filter: *mut Raw, hash: u64) -> bool;
    }

    /// One build's entry points, called directly.
    pub trait Build {
        /// # Safety
        /// As `vqf_init`.
        unsafe fn init(nslots: u64) -> *mut Raw;
        /// # Safety
        /// `filter` from this build's `init`; not shared unless thread-safe.
        unsafe fn insert(filter: *mut Raw, hash: u64) -> bool;
        /// # Safety
        /// As [`insert`](Self::insert).
        unsafe fn remove(filter: *mut Raw, hash: u64) -> bool;
        /// # Safety
        /// As [`insert`](Self::insert).
        unsafe fn contains(filter: *mut Raw, hash: u64) -> bool;
    }

    macro_rules! build {
        ($ty:ident, $init:ident, $insert:ident, $remove:ident, $contains:ident) => {
            pub struct $ty;
            impl Build for $ty {
                unsafe fn init(nslots: u64) -> *mut Raw {
                    $init(nslots)
                }
                #[inline(always)]
                unsafe fn insert(filter: *mut Raw, hash: u64) -> bool {
                    $insert(filter, hash)
                }
                #[inline(always)]
                unsafe fn remove(filter: *mut Raw, hash: u64) -> bool {
                    $remove(filter, hash)
                }
                #[inline(always)]
                unsafe fn contains(filter: *mut Raw, hash: u64) -> bool {
                    $contains(filter, hash)
                }
            }
        };
    }
    build!(Plain, vqf_init, vqf_insert, vqf_remove, vqf_is_present);
    build!(
        Mt,
        vqf_mt_init,
        vqf_mt_insert,
        vqf_mt_remove,
        vqf_mt_is_present
    );
    build!(
        MtLocked,
        vqf_mtl_init,
        vqf_mtl_insert,
        vqf_mtl_remove,
        vqf_mtl_is_present
    );

    /// A VQF of one build, owned.
    pub struct Vqf<B> {
        raw: *mut Raw,
        build: PhantomData<B>,
    }

    // SAFETY: the filter is one heap allocation that this value owns; no
    // build keeps thread-local state.
    unsafe impl<B> Send for Vqf<B> {}
    // SAFETY: the thread-safe builds lock blocks around inserts (and, in
    // MtLocked, removes), which is how VQF means them to be shared. Their
    // lookups read blocks without a lock while others may shift them: a read
    // racing a write, by VQF's design, whose wrong answers `--repro` counts.
    unsafe impl Sync for Vqf<Mt> {}
    // SAFETY: as above.
    unsafe impl Sync for Vqf<MtLocked> {}

    impl<B: Build> Vqf<B> {
        /// The VQF of whole 48-slot blocks nearest to `slots` slots.
        pub fn new(slots: usize) -> Self {
            // vqf_init(n) makes n / 48 + 1 blocks.
            let blocks = ((slots + SLOTS_PER_BLOCK / 2) / SLOTS_PER_BLOCK).max(1);
            let nslots = ((blocks - 1) * SLOTS_PER_BLOCK) as u64;
            // SAFETY: vqf_init takes any slot count; it prints the table's
            // size on stdout, which would land in our Markdown.
            let raw = super::stdout_silenced(|| unsafe { B::init(nslots) });
            assert!(!raw.is_null(), "vqf_init({nslots}) failed");
            Self {
                raw,
                build: PhantomData,
            }
        }

        fn metadata(&self) -> &Raw {
            // SAFETY: initialised by vqf_init; VQF updates no field of it
            // after that (it does not maintain nelts).
            unsafe { &*self.raw }
        }

        /// Blocks whose lock bit (bit 63 of `md[1]`) is set, while no
        /// operation is in flight: each would stop the next insert into it.
        pub fn locked_blocks(&self) -> usize {
            let blocks = self.metadata().nblocks as usize;
            // SAFETY: the blocks follow the metadata, 64 bytes each (packed:
            // md[2], tags[48]), and lie inside the allocation.
            let first = unsafe { self.raw.add(1).cast::<u8>() };
            (0..blocks)
                .filter(|&b| {
                    // SAFETY: as above; md[1] is at byte 8 of its block.
                    let md1 = unsafe { first.add(b * 64 + 8).cast::<u64>().read_unaligned() };
                    md1 >> 63 == 1
                })
                .count()
        }

        pub fn blocks(&self) -> usize {
            self.metadata().nblocks as usize
        }
    }

    impl<B> Drop for Vqf<B> {
        fn drop(&mut self) {
            // SAFETY: vqf_init allocates the filter with one malloc.
            unsafe { libc::free(self.raw.cast()) }
        }
    }

    impl<B: Build> Filter for Vqf<B> {
        #[inline(always)]
        fn insert(&self, hash: u64) -> bool {
            // SAFETY: a filter of this build; shared only where Sync.
            unsafe { B::insert(self.raw, hash) }
        }
        #[inline(always)]
        fn contains(&self, hash: u64) -> bool {
            // SAFETY: as insert.
            unsafe { B::contains(self.raw, hash) }
        }
        #[inline(always)]
        fn remove(&self, hash: u64) -> bool {
            // SAFETY: as insert.
            unsafe { B::remove(self.raw, hash) }
        }
        fn slots(&self) -> usize {
            self.metadata().nslots as usize
        }
        fn bytes(&self) -> usize {
            size_of::<Raw>() + self.metadata().total_size_in_bytes as usize
        }
    }
}

/// Runs `f` with the process's stdout (file descriptor 1) sent to /dev/null,
/// C's stdio buffers flushed before it comes back.
#[cfg(vqf)]
fn stdout_silenced<T>(f: impl FnOnce() -> T) -> T {
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    // SAFETY: plain descriptor calls on descriptors this function opens, and
    // fflush(NULL), which flushes every C stream.
    unsafe {
        let saved = libc::dup(1);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
        if saved < 0 || null < 0 || libc::dup2(null, 1) < 0 {
            for fd in [saved, null] {
                if fd >= 0 {
                    libc::close(fd);
                }
            }
            return f();
        }
        let r = f();
        libc::fflush(std::ptr::null_mut());
        libc::dup2(saved, 1);
        libc::close(null);
        libc::close(saved);
        r
    }
}

// ----- the kernels -----------------------------------------------------------------

/// Inserts every key; the number that failed.
#[inline(never)]
fn insert_all<F: Filter>(f: &F, keys: &[u64]) -> u64 {
    keys.iter().filter(|&&k| !f.insert(k)).count() as u64
}

/// Looks every key up; the number found.
#[inline(never)]
fn count_found<F: Filter>(f: &F, keys: &[u64]) -> u64 {
    keys.iter().filter(|&&k| f.contains(k)).count() as u64
}

/// Keys per `contains_hash_batch` call.
const BATCH: usize = 1024;

/// Looks every key up by `contains_hash_batch`; the number found, if the
/// filter has it.
#[inline(never)]
fn count_found_batched<F: Filter>(f: &F, keys: &[u64]) -> Option<u64> {
    let mut out = [false; BATCH];
    let mut found = 0;
    for chunk in keys.chunks(BATCH) {
        let out = &mut out[..chunk.len()];
        if !f.contains_batch(chunk, out) {
            return None;
        }
        found += out.iter().filter(|&&x| x).count() as u64;
    }
    Some(found)
}

/// Removes every key; the number not found.
#[inline(never)]
fn remove_all<F: Filter>(f: &F, keys: &[u64]) -> u64 {
    keys.iter().filter(|&&k| !f.remove(k)).count() as u64
}

/// Runs `op` and times it: (seconds, its result).
fn timed<T>(op: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let r = op();
    (t.elapsed().as_secs_f64(), r)
}

/// `ops` lookups of `keys`, cycling from `start`; the number that missed.
#[inline(never)]
fn lookup_loop<F: Filter>(f: &F, keys: &[u64], start: usize, ops: u64) -> u64 {
    let mut i = start % keys.len();
    let mut missed = 0;
    for _ in 0..ops {
        missed += u64::from(!f.contains(keys[i]));
        i += 1;
        if i == keys.len() {
            i = 0;
        }
    }
    missed
}

/// Fresh keys a mix thread keeps in the filter before it removes its oldest.
const LAG: u64 = 64;

/// What one mix thread did: lookups of present keys that missed, inserts
/// that failed, and its fresh keys still in the filter (`from..to`).
struct MixOut {
    missed: u64,
    failed: u64,
    from: u64,
    to: u64,
}

/// `ops` operations of the 90/5/5 mix: of each 20, one insert of a fresh key
/// of thread `t`, one remove of its oldest fresh key once `LAG` are in, and
/// lookups of `keys`, cycling from `start`.
#[inline(never)]
fn mix_loop<F: Filter>(f: &F, keys: &[u64], t: u64, start: usize, ops: u64) -> MixOut {
    let mut i = start % keys.len();
    let mut out = MixOut {
        missed: 0,
        failed: 0,
        from: 0,
        to: 0,
    };
    for step in 0..ops {
        match step % 20 {
            0 => {
                out.failed += u64::from(!f.insert(fresh(t, out.to)));
                out.to += 1;
            }
            10 if out.to - out.from > LAG => {
                f.remove(fresh(t, out.from));
                out.from += 1;
            }
            _ => {
                out.missed += u64::from(!f.contains(keys[i]));
                i += 1;
                if i == keys.len() {
                    i = 0;
                }
            }
        }
    }
    out
}

/// Runs `body(t)` on `threads` threads at once; the wall time from the
/// first one's start to the last one's end, and what each returned.
fn on_threads<T: Send>(threads: usize, body: impl Fn(usize) -> T + Sync) -> (f64, Vec<T>) {
    let start = Barrier::new(threads);
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (start, body) = (&start, &body);
                sc.spawn(move || {
                    start.wait();
                    let t0 = Instant::now();
                    let r = body(t);
                    (t0, Instant::now(), r)
                })
            })
            .collect();
        let done: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let first = done.iter().map(|d| d.0).min().unwrap();
        let last = done.iter().map(|d| d.1).max().unwrap();
        let out = done.into_iter().map(|d| d.2).collect();
        ((last - first).as_secs_f64(), out)
    })
}

/// One thread count's figures at 90 %.
#[derive(Clone, Copy, Default)]
struct Conc {
    threads: usize,
    lookups: f64,
    mix: f64,
    missed: u64,
    failed: u64,
}

/// Lookups, then the mix, on `threads` threads sharing `f` (filled with
/// `keys`); the mix's fresh keys are removed again after it, untimed.
fn conc_shared<F: Filter + Sync>(f: &F, keys: &[u64], threads: usize, ops: u64) -> Conc {
    let share = |t: usize| keys.len() * t / threads;
    let (secs, missed) = on_threads(threads, |t| lookup_loop(f, keys, share(t), ops));
    let lookups = (threads as u64 * ops) as f64 / secs;
    let mut missed: u64 = missed.iter().sum();
    let (secs, outs) = on_threads(threads, |t| mix_loop(f, keys, t as u64, share(t), ops));
    let mix = (threads as u64 * ops) as f64 / secs;
    let mut failed = 0;
    for (t, o) in outs.iter().enumerate() {
        missed += o.missed;
        failed += o.failed;
        for j in o.from..o.to {
            f.remove(fresh(t as u64, j));
        }
    }
    Conc {
        threads,
        lookups,
        mix,
        missed,
        failed,
    }
}

#[cfg(vqf)]
/// [`conc_shared`] for a filter that threads may not share: one thread, this
/// one.
fn conc_alone<F: Filter>(f: &F, keys: &[u64], threads: usize, ops: u64) -> Option<Conc> {
    if threads != 1 {
        return None;
    }
    let (secs, mut missed) = timed(|| lookup_loop(f, keys, 0, ops));
    let lookups = ops as f64 / secs;
    let (secs, o) = timed(|| mix_loop(f, keys, 0, 0, ops));
    missed += o.missed;
    for j in o.from..o.to {
        f.remove(fresh(0, j));
    }
    Some(Conc {
        threads,
        lookups,
        mix: ops as f64 / secs,
        missed,
        failed: o.failed,
    })
}

// ----- one subject, one round --------------------------------------------------------

/// The timed operations of the one-thread workload, in the order of
/// [`Figures::ops`].
const OPS: [&str; 6] = [
    "insert 0→90 %",
    "insert 90→95 %",
    "contains present",
    "contains_batch present",
    "contains absent",
    "remove 95→0 %",
];
const INS90: usize = 0;
const INS95: usize = 1;
const HIT: usize = 2;
const BATCH_HIT: usize = 3;
const MISS: usize = 4;
const REMOVE: usize = 5;

/// One subject's figures in one round.
#[derive(Clone, Default)]
struct Figures {
    slots: usize,
    bits_per_item: f64,
    /// Operations per second, in the order of [`OPS`]; NaN where not run.
    ops: [f64; 6],
    false_positives: u64,
    probes: u64,
    failed_inserts: u64,
    /// Lookups of present keys that said absent (one thread, at 95 %).
    missed: u64,
    failed_removes: u64,
    conc: Vec<Conc>,
}

struct Keys {
    present: Vec<u64>,
    absent: Vec<u64>,
}

/// The one-thread workload on `f`, with the concurrent runs at 90 % by `conc`.
fn measure<F: Filter>(
    f: &F,
    keys: &Keys,
    args: &Args,
    say: &dyn Fn(&str),
    conc: impl Fn(&F, &[u64], usize, u64) -> Option<Conc>,
) -> Figures {
    let slots = f.slots();
    let n90 = items_at(slots, 0.90) as usize;
    let n95 = items_at(slots, 0.95) as usize;
    let present = &keys.present[..n95];
    let mut fig = Figures {
        slots,
        bits_per_item: f.bytes() as f64 * 8.0 / n95 as f64,
        ops: [f64::NAN; 6],
        ..Figures::default()
    };
    let rate = |n: usize, secs: f64| n as f64 / secs;

    say("insert 0→90 %");
    let (secs, failed) = timed(|| insert_all(f, &present[..n90]));
    fig.ops[INS90] = rate(n90, secs);
    fig.failed_inserts += failed;

    let ops = if args.quick {
        n90.min(1 << 18)
    } else {
        n90.clamp(4 << 20, 16 << 20)
    } as u64;
    for &threads in &args.threads {
        say(&format!("{threads} thread(s) at 90 %"));
        fig.conc.extend(conc(f, &present[..n90], threads, ops));
    }

    say("insert 90→95 %");
    let (secs, failed) = timed(|| insert_all(f, &present[n90..]));
    fig.ops[INS95] = rate(n95 - n90, secs);
    fig.failed_inserts += failed;

    say("lookups");
    let (secs, found) = timed(|| count_found(f, present));
    fig.ops[HIT] = rate(n95, secs);
    fig.missed = n95 as u64 - found;
    let (secs, found) = timed(|| count_found_batched(f, present));
    if found.is_some() {
        fig.ops[BATCH_HIT] = rate(n95, secs);
    }
    let probes = &keys.absent[..n95];
    let (secs, fps) = timed(|| count_found(f, probes));
    fig.ops[MISS] = rate(n95, secs);
    fig.false_positives = fps;
    fig.probes = n95 as u64;

    say("removes");
    let (secs, failed) = timed(|| remove_all(f, present));
    fig.ops[REMOVE] = rate(n95, secs);
    fig.failed_removes = failed;
    fig
}

/// The largest slot count of any subject of a 2^`log2`-slot table: VQF's may
/// pass 2^log2 by up to half a block.
fn max_slots(log2: u32) -> usize {
    (1 << log2) + 48
}

fn run_subject(s: Subject, log2: u32, keys: &Keys, args: &Args) -> Figures {
    let say = |msg: &str| eprintln!("2^{log2} slots, {}: {msg}", s.name());
    match s {
        Subject::Crate(bits) => {
            let f = crate_filter(bits, log2);
            measure(&f, keys, args, &say, |f, k, t, n| {
                Some(conc_shared(f, k, t, n))
            })
        }
        #[cfg(vqf)]
        Subject::Vqf(Build::Plain) => {
            let f = vqf::Vqf::<vqf::Plain>::new(1 << log2);
            measure(&f, keys, args, &say, conc_alone)
        }
        #[cfg(vqf)]
        Subject::Vqf(Build::MtLocked) => {
            let f = vqf::Vqf::<vqf::MtLocked>::new(1 << log2);
            measure(&f, keys, args, &say, |f, k, t, n| {
                Some(conc_shared(f, k, t, n))
            })
        }
        Subject::Vqf(build) => unreachable!("VQF {build:?} is not measured here"),
    }
}

// ----- the tables --------------------------------------------------------------------

/// Median, min and max (NaN-free input).
fn spread(values: &[f64]) -> (f64, f64, f64) {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// Millions, to three significant figures or so.
fn millions(v: f64) -> String {
    let m = v / 1e6;
    if m >= 100.0 {
        format!("{m:.0}")
    } else if m >= 10.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.2}")
    }
}

/// A rate cell: the median in M ops/s, and min–max over the rounds.
fn rate_cell(values: &[f64]) -> String {
    let (med, lo, hi) = spread(values);
    if med.is_nan() {
        "–".into()
    } else if values.len() == 1 {
        millions(med)
    } else {
        format!("{} ({}–{})", millions(med), millions(lo), millions(hi))
    }
}

/// A ratio cell: the median of the rounds' ratios, and min–max.
fn ratio_cell(ratios: &[f64]) -> String {
    let (med, lo, hi) = spread(ratios);
    if med.is_nan() {
        "–".into()
    } else if ratios.len() == 1 {
        format!("{med:.2}×")
    } else {
        format!("{med:.2}× ({lo:.2}–{hi:.2})")
    }
}

/// Each round's `num / den`.
fn ratios(num: &[f64], den: &[f64]) -> Vec<f64> {
    num.iter().zip(den).map(|(a, b)| a / b).collect()
}

/// The operations whose ratio to 16-bit is meant to stay at 0.8× or above.
const TARGET_OPS: [usize; 4] = [INS90, HIT, MISS, REMOVE];

struct Rows<'a> {
    log2: u32,
    subjects: &'a [Subject],
    /// Per subject, the figures of each round.
    figures: &'a [Vec<Figures>],
}

impl Rows<'_> {
    fn of(&self, s: Subject) -> Option<&[Figures]> {
        let i = self.subjects.iter().position(|&x| x == s)?;
        Some(&self.figures[i])
    }

    fn op(&self, s: Subject, op: usize) -> Option<Vec<f64>> {
        Some(self.of(s)?.iter().map(|f| f.ops[op]).collect())
    }

    fn conc(&self, s: Subject, threads: usize, mix: bool) -> Option<Vec<f64>> {
        self.of(s)?
            .iter()
            .map(|f| {
                let c = f.conc.iter().find(|c| c.threads == threads)?;
                Some(if mix { c.mix } else { c.lookups })
            })
            .collect()
    }

    fn one_thread(&self, md: &mut String) {
        let log2 = self.log2;
        let _ = writeln!(md, "\n### 2^{log2} slots, one thread\n");
        let _ = writeln!(
            md,
            "M operations/s, median of the rounds (min–max). Bits per item and \
             false positives at 95 %; failed inserts and removes, and lookups \
             of present keys that missed, summed over the rounds.\n"
        );
        let _ = write!(
            md,
            "| subject | slots | bits/item | measured FPR | failed inserts | missed | failed removes |"
        );
        for op in OPS {
            let _ = write!(md, " {op} |");
        }
        let _ = write!(md, "\n|---|--:|--:|--:|--:|--:|--:|");
        let _ = writeln!(md, "{}", "--:|".repeat(OPS.len()));
        for (s, figs) in self.subjects.iter().zip(self.figures) {
            let first = &figs[0];
            let sum = |g: fn(&Figures) -> u64| figs.iter().map(g).sum::<u64>();
            let (fp, probes) = (sum(|f| f.false_positives), sum(|f| f.probes));
            let _ = write!(
                md,
                "| {} | {} | {:.2} | {:.2e} (of {:.1} M) | {} | {} | {} |",
                s.name(),
                first.slots,
                first.bits_per_item,
                fp as f64 / probes as f64,
                probes as f64 / 1e6,
                sum(|f| f.failed_inserts),
                sum(|f| f.missed),
                sum(|f| f.failed_removes),
            );
            for op in 0..OPS.len() {
                let v: Vec<f64> = figs.iter().map(|f| f.ops[op]).collect();
                let _ = write!(md, " {} |", rate_cell(&v));
            }
            let _ = writeln!(md);
        }
    }

    fn to_16(&self, md: &mut String) {
        let base = Subject::Crate(FingerprintBits::Bits16);
        if self.of(base).is_none() {
            return;
        }
        let _ = writeln!(
            md,
            "\n### 2^{} slots, one thread: each layout ÷ 16-bit\n",
            self.log2
        );
        let _ = write!(md, "| layout |");
        for op in OPS {
            let _ = write!(md, " {op} |");
        }
        let _ = writeln!(md, " ≥ 0.8× on insert 0→90 %, contains, remove |");
        let _ = writeln!(md, "|---|{}---|", "--:|".repeat(OPS.len()));
        for &s in self.subjects {
            let Subject::Crate(_) = s else { continue };
            let _ = write!(md, "| {} |", s.name());
            let mut below = Vec::new();
            for (op, name) in OPS.iter().enumerate() {
                let r = ratios(&self.op(s, op).unwrap(), &self.op(base, op).unwrap());
                if TARGET_OPS.contains(&op) && spread(&r).0 < 0.8 {
                    below.push(*name);
                }
                let _ = write!(md, " {} |", ratio_cell(&r));
            }
            let verdict = if below.is_empty() {
                "yes".to_string()
            } else {
                format!("no: {}", below.join(", "))
            };
            let _ = writeln!(md, " {verdict} |");
        }
    }

    /// 16-bit and 12-bit ÷ VQF and ÷ VQF-MT.
    fn to_vqf(&self, md: &mut String) {
        let pairs = self.vqf_pairs();
        if pairs.is_empty() {
            return;
        }
        let _ = writeln!(
            md,
            "\n### 2^{} slots, one thread: this crate ÷ VQF\n\n\
             contains_batch is this crate's batched lookup ÷ VQF's contains (VQF has no batch).\n",
            self.log2
        );
        let _ = write!(md, "| |");
        for op in OPS {
            let _ = write!(md, " {op} |");
        }
        let _ = writeln!(md, "\n|---|{}", "--:|".repeat(OPS.len()));
        for (ours, theirs) in pairs {
            let _ = write!(md, "| {} ÷ {} |", ours.short(), theirs.short());
            for op in 0..OPS.len() {
                let their_op = if op == BATCH_HIT { HIT } else { op };
                let r = ratios(
                    &self.op(ours, op).unwrap(),
                    &self.op(theirs, their_op).unwrap(),
                );
                let _ = write!(md, " {} |", ratio_cell(&r));
            }
            let _ = writeln!(md);
        }
    }

    fn vqf_pairs(&self) -> Vec<(Subject, Subject)> {
        let mut pairs = Vec::new();
        for bits in [FingerprintBits::Bits16, FingerprintBits::Bits12] {
            for build in [Build::Plain, Build::MtLocked] {
                let (ours, theirs) = (Subject::Crate(bits), Subject::Vqf(build));
                if self.of(ours).is_some() && self.of(theirs).is_some() {
                    pairs.push((ours, theirs));
                }
            }
        }
        pairs
    }

    fn threads(&self, md: &mut String, thread_counts: &[usize]) {
        let log2 = self.log2;
        let _ = writeln!(
            md,
            "\n### 2^{log2} slots, threads sharing one filter at 90 %\n\n\
             M operations/s, all threads together, median of the rounds (min–max); \
             lookups of present keys that missed and failed inserts summed over the rounds.\n"
        );
        let _ = writeln!(
            md,
            "| subject | threads | lookups (present) | 90/5/5 lookup/insert/remove | missed | failed inserts |\n|---|--:|--:|--:|--:|--:|"
        );
        for &t in thread_counts {
            for (&s, figs) in self.subjects.iter().zip(self.figures) {
                let Some(look) = self.conc(s, t, false) else {
                    continue;
                };
                let mix = self.conc(s, t, true).unwrap();
                let cs = figs
                    .iter()
                    .filter_map(|f| f.conc.iter().find(|c| c.threads == t));
                let (missed, failed) = cs.fold((0, 0), |(m, f), c| (m + c.missed, f + c.failed));
                let _ = writeln!(
                    md,
                    "| {} | {t} | {} | {} | {missed} | {failed} |",
                    s.name(),
                    rate_cell(&look),
                    rate_cell(&mix)
                );
            }
        }

        let base = Subject::Crate(FingerprintBits::Bits16);
        let mut rows: Vec<(Subject, Subject)> = self
            .subjects
            .iter()
            .filter(|s| matches!(s, Subject::Crate(_)) && **s != base)
            .map(|&s| (s, base))
            .collect();
        rows.extend(self.vqf_pairs());
        if self.of(base).is_none() && rows.is_empty() {
            return;
        }
        let _ = writeln!(md, "\n### 2^{log2} slots, threads at 90 %: ratios\n");
        let _ = write!(md, "| |");
        for &t in thread_counts {
            let _ = write!(md, " lookups, {t} thr. | mix, {t} thr. |");
        }
        let _ = writeln!(md, "\n|---|{}", "--:|".repeat(2 * thread_counts.len()));
        for (a, b) in rows {
            let _ = write!(md, "| {} ÷ {} |", a.short(), b.short());
            for &t in thread_counts {
                for mix in [false, true] {
                    let cell = match (self.conc(a, t, mix), self.conc(b, t, mix)) {
                        (Some(x), Some(y)) => ratio_cell(&ratios(&x, &y)),
                        _ => "–".into(),
                    };
                    let _ = write!(md, " {cell} |");
                }
            }
            let _ = writeln!(md);
        }
    }
}

// ----- reproducing the thread-safe build's faults ------------------------------------

/// Runs `f` on a thread of its own; its result, or `None` if it has not
/// returned after `limit` (the thread is then left running).
#[cfg(vqf)]
fn watchdog<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).ok()
}

/// What a reader saw while a writer changed other keys.
#[cfg(vqf)]
#[derive(Default)]
struct Race {
    episodes: u64,
    lookups: u64,
    false_negatives: u64,
    writes: u64,
    /// Present keys missing when checked alone after each episode.
    lost: u64,
}

/// For `secs`: a filter made by `make` holds the keys of 50 % of its slots;
/// one thread looks them up over and over while this one inserts other keys
/// up to 90 % and, with `removes`, removes them again, round and round. A
/// filter is made afresh whenever the writer is done with one.
#[cfg(vqf)]
fn race<F: Filter + Sync>(make: impl Fn() -> F, removes: bool, secs: f64) -> Race {
    let mut out = Race::default();
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let mut fixed = Vec::new();
    while Instant::now() < deadline {
        let f = make();
        let base = items_at(f.slots(), 0.5);
        let top = items_at(f.slots(), 0.9) - base;
        if fixed.len() != base as usize {
            fixed = make_keys(base as usize, present);
        }
        insert_all(&f, &fixed);
        out.episodes += 1;
        let stop = AtomicBool::new(false);
        let (lookups, missed) = std::thread::scope(|sc| {
            let reader = sc.spawn(|| {
                let (mut lookups, mut missed) = (0, 0);
                let mut start = 0;
                while !stop.load(Ordering::Relaxed) {
                    missed += lookup_loop(&f, &fixed, start, 1024);
                    start = (start + 1024) % fixed.len();
                    lookups += 1024;
                }
                (lookups, missed)
            });
            'writing: loop {
                for j in 0..top {
                    if j % 1024 == 0 && Instant::now() >= deadline {
                        break 'writing;
                    }
                    f.insert(fresh(0, j));
                    out.writes += 1;
                }
                if !removes {
                    break;
                }
                for j in 0..top {
                    f.remove(fresh(0, j));
                    out.writes += 1;
                }
            }
            stop.store(true, Ordering::Relaxed);
            reader.join().unwrap()
        });
        out.lookups += lookups;
        out.false_negatives += missed;
        out.lost += fixed.len() as u64 - count_found(&f, &fixed);
    }
    out
}

#[cfg(vqf)]
fn repro(args: &Args) -> String {
    use vqf::{Mt, MtLocked, Vqf};

    let log2 = if args.quick { 20 } else { 22 };
    let secs = args.repro_secs;
    let limit = Duration::from_secs_f64(secs + 30.0);
    let mut md = String::new();
    let _ = writeln!(
        md,
        "\n### Lookups beside a writer\n\n\
         2^{log2} slots holding the keys of 50 %; one thread looks them up over and over \
         while another inserts other keys up to 90 % (and removes them again, round and \
         round, where the row says so), {secs} s a row; a fresh table whenever an \
         insert-only writer reaches 90 %. A false negative is a lookup of a present key \
         that said absent; \"lost\" counts present keys missing when checked alone after \
         each table's run.\n"
    );
    let _ = writeln!(
        md,
        "| filter | writer | tables | lookups | false negatives | writes | lost |\n|---|---|--:|--:|--:|--:|--:|"
    );
    let crate16 = move || crate_filter(FingerprintBits::Bits16, log2);
    type Run = Box<dyn FnOnce() -> Race + Send>;
    let runs: Vec<(&str, &str, Run)> = vec![
        (
            "VQF-MT as published",
            "inserts",
            Box::new(move || race(|| Vqf::<Mt>::new(1 << log2), false, secs)),
        ),
        (
            "VQF-MT, removes locked",
            "inserts",
            Box::new(move || race(|| Vqf::<MtLocked>::new(1 << log2), false, secs)),
        ),
        (
            "VQF-MT, removes locked",
            "inserts and removes",
            Box::new(move || race(|| Vqf::<MtLocked>::new(1 << log2), true, secs)),
        ),
        (
            "this crate, 16-bit",
            "inserts",
            Box::new(move || race(crate16, false, secs)),
        ),
        (
            "this crate, 16-bit",
            "inserts and removes",
            Box::new(move || race(crate16, true, secs)),
        ),
    ];
    for (name, writer, run) in runs {
        eprintln!("repro: {name}, writer {writer}");
        match watchdog(limit, run) {
            Some(r) => {
                let _ = writeln!(
                    md,
                    "| {name} | {writer} | {} | {} | {} | {} | {} |",
                    r.episodes, r.lookups, r.false_negatives, r.writes, r.lost
                );
            }
            None => {
                let _ = writeln!(
                    md,
                    "| {name} | {writer} | hung: no return in {limit:?} | | | | |"
                );
            }
        }
    }

    // Last: a deadlocked thread spins on one core until the process exits.
    let _ = writeln!(
        md,
        "\n### Remove, then insert\n\n\
         1000 keys inserted into an empty 2^{log2}-slot table, 100 of them removed: the \
         blocks left with their lock bit set; then the first removed key inserted again, \
         with a watchdog of 2 s.\n"
    );
    fn remove_then_insert<B: vqf::Build + 'static>(name: &str, log2: u32, md: &mut String) {
        eprintln!("repro: {name}, remove then insert");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let f = Vqf::<B>::new(1 << log2);
            let ks = make_keys(1000, present);
            insert_all(&f, &ks);
            let removed = 100 - remove_all(&f, &ks[..100]);
            let _ = tx.send((removed, f.locked_blocks(), f.blocks()));
            let t = Instant::now();
            f.insert(ks[0]);
            let _ = tx.send((0, 0, t.elapsed().as_micros() as usize));
        });
        let Ok((removed, locked, blocks)) = rx.recv_timeout(Duration::from_secs(30)) else {
            let _ = writeln!(md, "- {name}: no answer");
            return;
        };
        let _ = write!(
            md,
            "- {name}: {removed} of 100 removed, {locked} of {blocks} blocks left locked; \
             insert after remove: "
        );
        match rx.recv_timeout(Duration::from_secs(2)) {
            Ok((_, _, micros)) => {
                let _ = writeln!(md, "returned in {micros} µs");
            }
            Err(_) => {
                let _ = writeln!(md, "deadlocked after remove (no return in 2 s)");
            }
        }
    }
    remove_then_insert::<Mt>("VQF-MT as published", log2, &mut md);
    remove_then_insert::<MtLocked>("VQF-MT, removes locked", log2, &mut md);
    md
}

// ----- main ------------------------------------------------------------------------

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "?".into())
}

/// `--perf-lookups`: fill, then loop lookups, for `perf stat`.
fn perf_lookups<F: Filter>(f: &F, count: u64) {
    let n95 = items_at(f.slots(), 0.95) as usize;
    let ks = make_keys(n95, present);
    let (secs, failed) = timed(|| insert_all(f, &ks));
    eprintln!(
        "filled {n95} of {} slots in {secs:.2} s ({failed} failed)",
        f.slots()
    );
    let (secs, missed) = timed(|| lookup_loop(f, &ks, 0, count));
    println!(
        "{count} lookups of present keys in {secs:.3} s: {:.2} ns each, {missed} missed",
        secs * 1e9 / count.max(1) as f64
    );
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("vqf: {e}\n{USAGE}");
        std::process::exit(2);
    });
    let linked = cfg!(vqf);
    let not_linked = "VQF is not linked: build it with `benches/vqf/build.sh VQF_CHECKOUT DIR` \
                      and run with `VQF_LIB_DIR=DIR` (see this example's docs); this crate's rows only.";
    if let Some(s) = args.perf {
        let log2 = args.slots[0];
        match s {
            Subject::Crate(bits) => perf_lookups(&crate_filter(bits, log2), args.perf_count),
            #[cfg(vqf)]
            Subject::Vqf(Build::Plain) => {
                perf_lookups(&vqf::Vqf::<vqf::Plain>::new(1 << log2), args.perf_count)
            }
            #[cfg(vqf)]
            Subject::Vqf(Build::MtLocked) => {
                perf_lookups(&vqf::Vqf::<vqf::MtLocked>::new(1 << log2), args.perf_count)
            }
            #[cfg(vqf)]
            Subject::Vqf(Build::Mt) => {
                perf_lookups(&vqf::Vqf::<vqf::Mt>::new(1 << log2), args.perf_count)
            }
            #[cfg(not(vqf))]
            Subject::Vqf(_) => {
                eprintln!("vqf: {not_linked}");
                std::process::exit(2);
            }
        }
        return;
    }

    let mut md = format!(
        "## This crate beside the Vector Quotient Filter\n\n\
         {}, {} hardware threads; load average at the start {}. Hashes: SplitMix64 of a counter.\n",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average()
    );
    if !linked {
        println!("{not_linked}");
    }

    if args.repro {
        #[cfg(vqf)]
        md.push_str(&repro(&args));
        #[cfg(not(vqf))]
        {
            eprintln!(
                "vqf: --repro ({} s a run) needs VQF. {not_linked}",
                args.repro_secs
            );
            std::process::exit(2);
        }
    } else {
        let mut subjects: Vec<Subject> = args.layouts.iter().map(|&b| Subject::Crate(b)).collect();
        if linked {
            subjects.extend([Subject::Vqf(Build::Plain), Subject::Vqf(Build::MtLocked)]);
        }
        let _ = writeln!(
            md,
            "{} round(s), interleaved; threads at 90 %: {:?}. VQF-MT is VQF's thread-safe \
             build with removes locked (benches/vqf/build.sh).",
            args.rounds, args.threads
        );
        print!("{md}");
        for &log2 in &args.slots {
            let slots = max_slots(log2);
            let n95 = items_at(slots, 0.95) as usize;
            eprintln!("2^{log2} slots: making {n95} present and {n95} absent keys");
            let keys = Keys {
                present: make_keys(n95, present),
                absent: make_keys(n95, absent),
            };
            let mut figures: Vec<Vec<Figures>> = vec![Vec::new(); subjects.len()];
            for round in 0..args.rounds {
                eprintln!("2^{log2} slots: round {} of {}", round + 1, args.rounds);
                for (i, &s) in subjects.iter().enumerate() {
                    figures[i].push(run_subject(s, log2, &keys, &args));
                }
            }
            let rows = Rows {
                log2,
                subjects: &subjects,
                figures: &figures,
            };
            let mut section = String::new();
            rows.one_thread(&mut section);
            rows.to_16(&mut section);
            rows.to_vqf(&mut section);
            if !args.threads.is_empty() {
                rows.threads(&mut section, &args.threads);
            }
            print!("{section}");
            md.push_str(&section);
        }
    }
    let end = format!("\nLoad average at the end: {}.\n", load_average());
    if args.repro {
        print!("{md}");
    }
    print!("{end}");
    md.push_str(&end);
    if let Some(path) = &args.out {
        if !linked {
            md.insert_str(0, &format!("{not_linked}\n\n"));
        }
        if let Err(e) = std::fs::write(path, md) {
            eprintln!("vqf: writing {}: {e}", path.display());
            std::process::exit(1);
        }
    }
}
