//! The code every benchmark figure comes from, shared by the criterion benches
//! (`benches/`) and the examples (`examples/`): the filters under test behind
//! one trait, the key streams, table filling, the concurrent workload driver
//! and the memory-limit kernel.
//!
//! Every implementation hashes keys with the same XXH3 (our default hasher),
//! so that hashing costs the same everywhere and only the tables differ.

use std::cell::UnsafeCell;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, RwLock};
use std::time::{Duration, Instant};

use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder, FingerprintBits, DEFAULT_SEED};
use xxhash_rust::xxh3::xxh3_64_with_seed;

// ----- keys -----------------------------------------------------------------

/// Key of the `i`-th item of the initial fill.
#[inline(always)]
pub fn key(i: u64) -> u64 {
    i
}

/// A key that was never inserted (disjoint from every other stream).
#[inline(always)]
pub fn miss_key(i: u64) -> u64 {
    (1 << 63) | i
}

/// Fresh keys for insert measurements; `i` grows forever within a process.
#[inline(always)]
pub fn fresh_key(i: u64) -> u64 {
    (1 << 62) | i
}

/// SplitMix64: a cheap, well-mixed stream (random indices, synthetic hashes).
#[inline(always)]
pub fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `x` (32 random bits) scaled onto `0..n`.
#[inline(always)]
pub fn scale(x: u64, n: u64) -> u64 {
    ((x & 0xffff_ffff) * n) >> 32
}

// ----- the hasher every peer is given ----------------------------------------

/// XXH3 with our default seed, as a `Hasher + Default` (what the peers'
/// generic parameter wants). For a `u64` key it computes exactly what our
/// [`DefaultHashBuilder`] computes.
#[derive(Clone, Debug)]
pub struct Xxh3(u64);

impl Default for Xxh3 {
    fn default() -> Self {
        Self(DEFAULT_SEED)
    }
}

impl Hasher for Xxh3 {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxh3_64_with_seed(bytes, self.0);
    }
}

// ----- sizes and environment -------------------------------------------------

/// Reads a number from the environment, or `default`.
pub fn env_num(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The two table sizes: one that fits in L2, one far larger than the caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Size {
    Small,
    Big,
}

impl Size {
    pub fn name(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Big => "big",
        }
    }

    /// The capacity our filter is built with: `CF_SMALL_ITEMS` (default 65536:
    /// a 140 KB table) or enough for a table of `CF_BIG_MIB` MiB (default 512).
    pub fn capacity(self, big_mib: f64) -> usize {
        match self {
            Size::Small => env_num("CF_SMALL_ITEMS", 65536.0) as usize,
            // 8 bytes per bucket of 4, sized at 94 % load (see the builder).
            Size::Big => (big_mib * (1u64 << 20) as f64 / 8.0 * 4.0 * 0.94) as usize,
        }
    }

    /// The sizes named in `CF_SIZES` (default `small,big`).
    pub fn selected() -> Vec<Size> {
        let spec = std::env::var("CF_SIZES").unwrap_or_else(|_| "small,big".into());
        let mut v = Vec::new();
        if spec.contains("small") {
            v.push(Size::Small);
        }
        if spec.contains("big") {
            v.push(Size::Big);
        }
        v
    }
}

/// Big-table size in MiB for the criterion benches: `CF_BIG_MIB`, default
/// 512; 8 when the bench binary runs as a test (`cargo test --benches`, no
/// `--bench` argument), so that a smoke test does not fill 512 MiB.
pub fn big_mib() -> f64 {
    let benching = std::env::args().any(|a| a == "--bench");
    env_num("CF_BIG_MIB", if benching { 512.0 } else { 8.0 })
}

/// Largest power of two not above `n` (n > 0).
pub fn prev_pow2(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.leading_zeros())
}

// ----- the filters under test -----------------------------------------------

/// A filter under test. `&self` everywhere; the ones that are not `Sync`
/// (`cuckoofilter` alone) are only driven by one thread.
pub trait Subject {
    const NAME: &'static str;
    const CAN_DELETE: bool = true;
    /// Whether a fill may use several threads.
    const PARALLEL_FILL: bool = true;
    fn insert(&self, key: u64) -> bool;
    fn contains(&self, key: u64) -> bool;
    fn remove(&self, key: u64) -> bool;
    /// Items at 100 % load (for the Bloom filter: the items it is sized for / 0.95).
    fn slots(&self) -> usize;
    /// Bytes of the structure.
    fn bytes(&self) -> usize;
}

/// This crate: `CuckooFilter` with 16-bit fingerprints and its default hasher.
pub struct Ours(pub CuckooFilter);

impl Ours {
    pub fn new(capacity: usize) -> Self {
        Self(CuckooFilter::with_capacity(capacity))
    }
}

impl Subject for Ours {
    const NAME: &'static str = "lockfree-cuckoo-filter";
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.remove(&key)
    }
    fn slots(&self) -> usize {
        self.0.capacity()
    }
    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
}

/// `atomic-cuckoo-filter` 0.3: 16-bit fingerprints, buckets of 4, power-of-two
/// bucket count (so it gets the largest power of two not above our slots).
pub struct Atomic(pub atomic_cuckoo_filter::CuckooFilter<Xxh3>);

impl Atomic {
    pub fn new(our_slots: usize) -> Self {
        let f = atomic_cuckoo_filter::CuckooFilterBuilder::<Xxh3>::default()
            .capacity(prev_pow2(our_slots))
            .fingerprint_size(16)
            .bucket_size(4)
            .build()
            .expect("atomic-cuckoo-filter config");
        Self(f)
    }
}

impl Subject for Atomic {
    const NAME: &'static str = "atomic-cuckoo-filter";
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.remove(&key)
    }
    fn slots(&self) -> usize {
        self.0.capacity()
    }
    fn bytes(&self) -> usize {
        self.0.capacity() * 2
    }
}

type Cf = cuckoofilter::CuckooFilter<Xxh3>;

fn new_cf(our_slots: usize) -> Cf {
    // `with_capacity(c)` gives c.next_power_of_two() / 4 buckets of 4 one-byte
    // fingerprints: pass a power of two so that it gets exactly that many slots.
    Cf::with_capacity(prev_pow2(our_slots))
}

fn cf_slots(cf: &Cf) -> usize {
    // memory_usage = size_of::<Self>() + buckets * 4 bytes.
    (cf.memory_usage() - std::mem::size_of::<Cf>()) / 4 * 4
}

/// `cuckoofilter` 0.5 used by one thread (it needs `&mut` to insert and
/// remove). Not `Sync`: the `UnsafeCell` stands for the `&mut` a single owner
/// would have.
pub struct Alone(UnsafeCell<Cf>);

impl Alone {
    pub fn new(our_slots: usize) -> Self {
        Self(UnsafeCell::new(new_cf(our_slots)))
    }
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    fn cf(&self) -> &mut Cf {
        // SAFETY: `Alone` is not `Sync`, and no method keeps the reference past
        // the one call into `cuckoofilter`, which does not call back.
        unsafe { &mut *self.0.get() }
    }
}

impl Subject for Alone {
    const NAME: &'static str = "cuckoofilter";
    const PARALLEL_FILL: bool = false;
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.cf().add(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.cf().contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.cf().delete(&key)
    }
    fn slots(&self) -> usize {
        cf_slots(self.cf())
    }
    fn bytes(&self) -> usize {
        self.cf().memory_usage()
    }
}

/// `cuckoofilter` behind a `std::sync::RwLock`: lookups share, writes exclude.
pub struct Rw(RwLock<Cf>);

impl Rw {
    pub fn new(our_slots: usize) -> Self {
        Self(RwLock::new(new_cf(our_slots)))
    }
}

impl Subject for Rw {
    const NAME: &'static str = "RwLock<cuckoofilter>";
    const PARALLEL_FILL: bool = false;
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.write().unwrap().add(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.read().unwrap().contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.write().unwrap().delete(&key)
    }
    fn slots(&self) -> usize {
        cf_slots(&self.0.read().unwrap())
    }
    fn bytes(&self) -> usize {
        self.0.read().unwrap().memory_usage()
    }
}

/// `cuckoofilter` behind a `std::sync::Mutex`.
pub struct Mx(Mutex<Cf>);

impl Mx {
    pub fn new(our_slots: usize) -> Self {
        Self(Mutex::new(new_cf(our_slots)))
    }
}

impl Subject for Mx {
    const NAME: &'static str = "Mutex<cuckoofilter>";
    const PARALLEL_FILL: bool = false;
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.lock().unwrap().add(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.lock().unwrap().contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.lock().unwrap().delete(&key)
    }
    fn slots(&self) -> usize {
        cf_slots(&self.0.lock().unwrap())
    }
    fn bytes(&self) -> usize {
        self.0.lock().unwrap().memory_usage()
    }
}

// One cuckoofilter table moves between the three wrappers (no refill).
impl From<Alone> for Rw {
    fn from(a: Alone) -> Self {
        Self(RwLock::new(a.0.into_inner()))
    }
}
impl From<Rw> for Mx {
    fn from(r: Rw) -> Self {
        Self(Mutex::new(r.0.into_inner().unwrap()))
    }
}
impl From<Mx> for Alone {
    fn from(m: Mx) -> Self {
        Self(UnsafeCell::new(m.0.into_inner().unwrap()))
    }
}

/// `fastbloom` 0.17 `AtomicBloomFilter` sized for 95 % of our slots at our
/// false-positive bound at 95 % load. It cannot delete.
pub struct Bloom {
    pub filter: fastbloom::AtomicBloomFilter<DefaultHashBuilder>,
    slots: usize,
}

impl Bloom {
    /// The false-positive rate the Bloom filter is sized for: our bound at 95 %.
    pub fn target_fpr() -> f64 {
        FingerprintBits::Bits16.false_positive_rate(0.95)
    }

    pub fn new(our_slots: usize) -> Self {
        let items = (our_slots as f64 * 0.95) as usize;
        let filter = fastbloom::AtomicBloomFilter::with_false_pos(Self::target_fpr())
            .hasher(DefaultHashBuilder::default())
            .expected_items(items);
        Self {
            filter,
            slots: our_slots,
        }
    }

    /// Fills keys `0..n` fast: several plain (non-atomic) Bloom filters with the
    /// same parameters, each filled by one thread, are OR-ed together and copied
    /// into an `AtomicBloomFilter`. Same bits as `n` atomic inserts, at a
    /// fraction of the time (an atomic insert is k locked cache misses).
    pub fn filled(our_slots: usize, n: u64, threads: usize) -> Self {
        let empty = Self::new(our_slots);
        let num_bits = empty.filter.num_bits();
        let hashes = empty.filter.num_hashes();
        drop(empty);
        let threads = threads.max(1) as u64;
        let parts: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let mut b = fastbloom::BloomFilter::with_num_bits(num_bits)
                            .hasher(DefaultHashBuilder::default())
                            .hashes(hashes);
                        let (lo, hi) = (n * t / threads, n * (t + 1) / threads);
                        for i in lo..hi {
                            b.insert(&key(i));
                        }
                        b.iter().collect()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut words = parts[0].clone();
        for p in &parts[1..] {
            for (w, x) in words.iter_mut().zip(p) {
                *w |= x;
            }
        }
        drop(parts);
        let filter = fastbloom::AtomicBloomFilter::from_vec(words)
            .hasher(DefaultHashBuilder::default())
            .hashes(hashes);
        Self {
            filter,
            slots: our_slots,
        }
    }
}

impl Subject for Bloom {
    const NAME: &'static str = "fastbloom AtomicBloomFilter";
    const CAN_DELETE: bool = false;
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.filter.insert(&key);
        true
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&key)
    }
    fn remove(&self, _key: u64) -> bool {
        unreachable!("a Bloom filter cannot delete")
    }
    fn slots(&self) -> usize {
        self.slots
    }
    fn bytes(&self) -> usize {
        self.filter.num_bits() / 8
    }
}

// ----- filling ----------------------------------------------------------------

/// Inserts keys `from..to`, with `threads` threads where the subject allows.
/// Returns the number of failed inserts.
pub fn fill<S: Subject + Sync>(s: &S, from: u64, to: u64, threads: usize) -> u64 {
    if to <= from {
        return 0;
    }
    let threads = if S::PARALLEL_FILL {
        threads.max(1) as u64
    } else {
        1
    };
    let span = to - from;
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                sc.spawn(move || {
                    let (lo, hi) = (from + span * t / threads, from + span * (t + 1) / threads);
                    (lo..hi).filter(|&i| !s.insert(key(i))).count() as u64
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

/// [`fill`] for subjects that are not `Sync`: one thread.
pub fn fill_alone<S: Subject>(s: &S, from: u64, to: u64) -> u64 {
    (from..to).filter(|&i| !s.insert(key(i))).count() as u64
}

/// Items at load `load` (0..1) of a subject.
pub fn items_at(slots: usize, load: f64) -> u64 {
    (slots as f64 * load) as u64
}

// ----- single-thread kernels --------------------------------------------------

/// Looks up `count` keys that are present (keys `0..n`, cycling from `*cursor`).
/// Returns how many were reported present.
#[inline(never)]
pub fn lookup_hits<S: Subject>(s: &S, n: u64, cursor: &mut u64, count: u64) -> u64 {
    let mut found = 0;
    let mut c = *cursor;
    for _ in 0..count {
        found += s.contains(key(c)) as u64;
        c += 1;
        if c == n {
            c = 0;
        }
    }
    *cursor = c;
    found
}

/// Looks up `count` absent keys from `*cursor` on. Returns the false positives.
#[inline(never)]
pub fn lookup_misses<S: Subject>(s: &S, cursor: &mut u64, count: u64) -> u64 {
    let mut found = 0;
    for i in *cursor..*cursor + count {
        found += s.contains(miss_key(i)) as u64;
    }
    *cursor += count;
    found
}

/// Runs `ops` inserts at the subject's current load, timing only the inserts:
/// in chunks of `chunk` fresh keys, each removed again (untimed) so that the
/// load stays where it was. A Bloom filter re-inserts present keys instead
/// (the same k atomic ORs), leaving its bits as they were.
pub fn timed_inserts<S: Subject>(s: &S, n: u64, ops: u64, chunk: u64, fresh: &mut u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = ops;
    while left > 0 {
        let m = left.min(chunk);
        left -= m;
        if S::CAN_DELETE {
            let start = *fresh;
            let t = Instant::now();
            for i in start..start + m {
                std::hint::black_box(s.insert(fresh_key(i)));
            }
            total += t.elapsed();
            for i in start..start + m {
                s.remove(fresh_key(i));
            }
            *fresh += m;
        } else {
            let t = Instant::now();
            for i in 0..m {
                std::hint::black_box(s.insert(key((*fresh + i) % n)));
            }
            total += t.elapsed();
            *fresh += m;
        }
    }
    total
}

/// Runs `ops` removes of present keys, timing only the removes: in chunks,
/// each re-inserted (untimed) afterwards.
pub fn timed_removes<S: Subject>(
    s: &S,
    n: u64,
    ops: u64,
    chunk: u64,
    cursor: &mut u64,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = ops;
    let chunk = chunk.min(n).max(1);
    while left > 0 {
        let m = left.min(chunk);
        left -= m;
        let start = if *cursor + m > n { 0 } else { *cursor };
        let t = Instant::now();
        for i in start..start + m {
            std::hint::black_box(s.remove(key(i)));
        }
        total += t.elapsed();
        for i in start..start + m {
            s.insert(key(i));
        }
        *cursor = start + m;
    }
    total
}

/// The chunk of an insert or remove measurement: 0.5 % of the slots, so the
/// load moves by at most half a point.
pub fn chunk_for(slots: usize) -> u64 {
    (slots as u64 / 200).clamp(64, 1 << 20)
}

// ----- concurrent workloads ---------------------------------------------------

/// An operation mix, in percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    pub lookup: u32,
    pub insert: u32,
    pub remove: u32,
}

impl Mix {
    pub const READ_ONLY: Mix = Mix {
        lookup: 100,
        insert: 0,
        remove: 0,
    };
    pub const READ_MOSTLY: Mix = Mix {
        lookup: 90,
        insert: 5,
        remove: 5,
    };
    pub const WRITE_HEAVY: Mix = Mix {
        lookup: 50,
        insert: 25,
        remove: 25,
    };
    pub const ALL: [Mix; 3] = [Self::READ_ONLY, Self::READ_MOSTLY, Self::WRITE_HEAVY];

    pub fn name(self) -> String {
        format!("{}/{}/{}", self.lookup, self.insert, self.remove)
    }
}

/// Thread counts of the concurrent runs: `CF_THREADS` (default `1,2,4,8`).
pub fn thread_counts() -> Vec<usize> {
    std::env::var("CF_THREADS")
        .unwrap_or_else(|_| "1,2,4,8".into())
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .collect()
}

/// How long a concurrent run lasts: a fixed number of operations in all, or
/// until a flag is raised.
#[derive(Clone, Copy)]
pub enum Budget<'a> {
    Ops(u64),
    Until(&'a AtomicBool),
}

/// The keys thread `t` of `threads` works on, as a FIFO stream: first its
/// share of the initial keys `0..n` (those equal to `t` mod `threads`), then
/// fresh keys unique to this run and thread.
struct Stream {
    t: u64,
    threads: u64,
    share: u64,
    tag: u64,
}

impl Stream {
    fn new(t: u64, threads: u64, n: u64, run: u64) -> Self {
        let share = if n > t { (n - t).div_ceil(threads) } else { 0 };
        Self {
            t,
            threads,
            share,
            tag: (1 << 61) | (run << 40) | (t << 34),
        }
    }
    #[inline(always)]
    fn at(&self, k: u64) -> u64 {
        if k < self.share {
            key(self.t + k * self.threads)
        } else {
            self.tag | k
        }
    }
}

/// One worker: draws operations from `mix` until the budget is spent.
/// Lookups are half hits (a key of its live window), half misses. Writes
/// alternate insert (push a fresh key) and remove (pop the oldest key), so the
/// load stays where it was. Returns (operations, time the timed loop began,
/// time it ended);
/// after `done` (all workers stopped) it restores the initial key set, untimed.
#[allow(clippy::too_many_arguments)]
fn worker<S: Subject + Sync>(
    s: &S,
    t: u64,
    threads: u64,
    n: u64,
    mix: Mix,
    run: u64,
    budget: Budget<'_>,
    done: &Barrier,
) -> (u64, Instant, Instant) {
    let begin = Instant::now();
    let stream = Stream::new(t, threads, n, run);
    let (mut rc, mut ic) = (0u64, stream.share);
    let mut rng = mix_seed(run, t);
    let mut insert_next = true;
    let limit = match budget {
        Budget::Ops(total) => total / threads + u64::from(t < total % threads),
        Budget::Until(_) => u64::MAX,
    };
    let mut ops = 0u64;
    'outer: while ops < limit {
        if let Budget::Until(flag) = budget {
            if flag.load(Ordering::Relaxed) {
                break 'outer;
            }
        }
        let block = (limit - ops).min(64);
        for _ in 0..block {
            rng = splitmix(rng);
            let pick = ((rng >> 32) * 100) >> 32;
            if pick < u64::from(mix.lookup) {
                let q = if rng & 1 == 0 && ic > rc {
                    stream.at(rc + scale(rng >> 1, ic - rc))
                } else {
                    miss_key(rng >> 8)
                };
                std::hint::black_box(s.contains(q));
            } else if insert_next {
                std::hint::black_box(s.insert(stream.at(ic)));
                ic += 1;
                insert_next = false;
            } else {
                std::hint::black_box(s.remove(stream.at(rc)));
                rc += 1;
                insert_next = true;
            }
        }
        ops += block;
    }
    let end = Instant::now();
    done.wait();
    // Back to the initial set: drop the fresh keys still present, put back the
    // initial keys taken out.
    for k in rc.max(stream.share)..ic {
        s.remove(stream.at(k));
    }
    for k in 0..rc.min(stream.share) {
        s.insert(stream.at(k));
    }
    (ops, begin, end)
}

fn mix_seed(run: u64, t: u64) -> u64 {
    splitmix(run.wrapping_mul(0x1000_0000_01b3) ^ t)
}

/// Runs `mix` on `threads` threads over a subject holding keys `0..n`.
/// Returns (operations, seconds from the first worker's start to the last
/// worker's stop). The key set is restored before returning.
pub fn run_concurrent<S: Subject + Sync>(
    s: &S,
    n: u64,
    threads: usize,
    mix: Mix,
    run: u64,
    length: RunLength,
) -> (u64, f64) {
    let start = Barrier::new(threads + 1);
    let done = Barrier::new(threads);
    let stop = AtomicBool::new(false);
    let budget = match length {
        RunLength::Ops(k) => Budget::Ops(k),
        RunLength::Time(_) => Budget::Until(&stop),
    };
    let tt = threads as u64;
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..tt)
            .map(|t| {
                let (start, done) = (&start, &done);
                sc.spawn(move || {
                    start.wait();
                    worker(s, t, tt, n, mix, run, budget, done)
                })
            })
            .collect();
        start.wait();
        if let RunLength::Time(d) = length {
            std::thread::sleep(d);
            stop.store(true, Ordering::Relaxed);
        }
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let ops = results.iter().map(|r| r.0).sum();
        let begin = results.iter().map(|r| r.1).min().unwrap();
        let end = results.iter().map(|r| r.2).max().unwrap();
        (ops, end.duration_since(begin).as_secs_f64())
    })
}

/// How long a concurrent run lasts.
#[derive(Clone, Copy, Debug)]
pub enum RunLength {
    Ops(u64),
    Time(Duration),
}

// ----- the memory limit -------------------------------------------------------

/// Lookups per generated block of hashes in the memory-limit comparison.
pub const BLOCK: usize = 1024;
/// Queries whose loads the batched kernel issues together (as our batch).
pub const GROUP: usize = 16;

/// An array of `bytes` bytes of random words, backed by huge pages where
/// Linux offers them (like our table): the least a lookup must do is two
/// independent random 8-byte reads from it.
pub struct MemKernel {
    ptr: *mut u64,
    words: usize,
    layout: std::alloc::Layout,
}

// SAFETY: the kernel owns its block and only reads it after construction.
unsafe impl Sync for MemKernel {}
unsafe impl Send for MemKernel {}

impl MemKernel {
    /// `huge`: ask for 2 MiB pages (like our table does); otherwise ask for
    /// none (4 KiB pages: a TLB miss per random read on a large array).
    pub fn new(bytes: usize, huge: bool) -> Self {
        let words = (bytes / 8).max(GROUP);
        let align = if huge { 2 << 20 } else { 4096 };
        let layout = std::alloc::Layout::from_size_align(words * 8, align).unwrap();
        // SAFETY: non-zero size; checked for null below.
        let ptr = unsafe { std::alloc::alloc(layout) }.cast::<u64>();
        assert!(!ptr.is_null(), "memory-limit array: allocation failed");
        #[cfg(target_os = "linux")]
        // SAFETY: the range is the block just allocated, page aligned; the
        // advice changes only how the kernel backs it. Errors are ignored.
        unsafe {
            let advice = if huge {
                libc::MADV_HUGEPAGE
            } else {
                libc::MADV_NOHUGEPAGE
            };
            libc::madvise(ptr.cast(), layout.size(), advice);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = huge;
        for i in 0..words {
            // SAFETY: in bounds of the block; writing initialises (and maps) it.
            unsafe { ptr.add(i).write(splitmix(i as u64) | 1) };
        }
        Self { ptr, words, layout }
    }

    pub fn bytes(&self) -> usize {
        self.words * 8
    }

    pub fn ptr(&self) -> *const u64 {
        self.ptr
    }

    fn data(&self) -> &[u64] {
        // SAFETY: `words` initialised words, alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.words) }
    }

    /// Two random reads per hash, one query after another (the loads of
    /// successive queries still overlap as far as the core's window allows).
    #[inline(never)]
    pub fn plain(&self, hashes: &[u64]) -> u64 {
        let data = self.data();
        let n = data.len() as u64;
        let mut found = 0;
        for &h in hashes {
            let a = data[scale(h, n) as usize];
            let b = data[scale(h >> 32, n) as usize];
            found += u64::from((a == h) | (b == h));
        }
        found
    }

    /// The same with the loads issued ahead: the queries go in groups of
    /// [`GROUP`], and the 32 lines of group k+1 are prefetched before group k
    /// is read, so that a group's misses overlap the previous group's.
    #[inline(never)]
    pub fn batched(&self, hashes: &[u64]) -> u64 {
        let data = self.data();
        let n = data.len() as u64;
        let idx = |h: u64| [scale(h, n) as usize, scale(h >> 32, n) as usize];
        let issue = |group: &[u64], out: &mut [[usize; 2]; GROUP]| {
            for (ix, &h) in out.iter_mut().zip(group) {
                *ix = idx(h);
                prefetch(&data[ix[0]]);
                prefetch(&data[ix[1]]);
            }
        };
        let mut found = 0;
        let mut chunks = hashes.chunks(GROUP).peekable();
        let (mut cur, mut next) = ([[0usize; 2]; GROUP], [[0usize; 2]; GROUP]);
        if let Some(first) = chunks.peek() {
            issue(first, &mut cur);
        }
        while let Some(group) = chunks.next() {
            if let Some(following) = chunks.peek() {
                issue(following, &mut next);
            }
            for (ix, &h) in cur.iter().zip(group) {
                found += u64::from((data[ix[0]] == h) | (data[ix[1]] == h));
            }
            std::mem::swap(&mut cur, &mut next);
        }
        found
    }
}

impl Drop for MemKernel {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.cast(), self.layout) }
    }
}

#[inline(always)]
fn prefetch(p: &u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; any address is allowed, this one is valid.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (p as *const u64).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Fills `buf` with the synthetic hashes of block `block` (the same for the
/// kernel and the filter).
#[inline(always)]
pub fn hash_block(buf: &mut [u64; BLOCK], block: u64) {
    for (i, h) in buf.iter_mut().enumerate() {
        *h = splitmix(block.wrapping_mul(BLOCK as u64) + i as u64);
    }
}

/// Our plain lookups by hash over one block: `contains_hash` one at a time.
#[inline(never)]
pub fn ours_plain(f: &CuckooFilter, hashes: &[u64]) -> u64 {
    hashes.iter().map(|&h| u64::from(f.contains_hash(h))).sum()
}

/// Our batched lookups by hash over one block: `contains_hash_batch`.
#[inline(never)]
pub fn ours_batched(f: &CuckooFilter, hashes: &[u64], out: &mut [bool; BLOCK]) -> u64 {
    f.contains_hash_batch(hashes, out);
    out.iter().map(|&b| u64::from(b)).sum()
}

/// A hash builder check: our filter hashes a `u64` key exactly as [`Xxh3`].
pub fn same_hash(k: u64) -> bool {
    let mut h = Xxh3::default();
    h.write_u64(k);
    h.finish() == DefaultHashBuilder::default().hash_one(k)
}
