//! What a plain lookup costs, piece by piece: a ladder of minimal 16-bit
//! lookup loops, each adding one thing the crate's `contains` does that the C++
//! reference's (efficient/cuckoofilter) does not, ending with the crate itself.
//!
//! ```text
//! cargo run --release -p benchmarks --example lookup_floor                      # 1 M keys
//! cargo run --release -p benchmarks --example lookup_floor -- --items 30000000
//! cargo run --release -p benchmarks --example lookup_floor -- --chain         # 4 M keys, chains
//! cargo run --release -p benchmarks --example lookup_floor -- --bits 8        # the 8-bit ladder
//! ```
//!
//! The rungs, each monomorphic (one width, no dispatch) and each with a table
//! of its own, filled through its own hash and alternate:
//!
//! 1. `c++`: a model of the reference's lookup. A multiply-add hash over 128
//!    bits with random constants, a power-of-two table, the alternate by XOR
//!    with the fingerprint times a constant, each bucket tested by the
//!    zero-lane trick (the reference's `hasvalue16`), no validation. (It has
//!    no victim slot to check, so it runs faster than the reference's own
//!    loop.)
//! 2. `+ one vector comparison`: both buckets' eight lanes compared with the
//!    fingerprint at once (SSE2 `pcmpeqw`), as the crate's lookup does
//!    (`fingerprint::matches_in_either`).
//! 3. `+ validation`: the pair's relocation counter read before the buckets
//!    and again after, the lookup repeated if it moved (256 padded counters,
//!    as the crate's tables of this size have).
//! 4. `+ any even size`: a table of any even number of buckets, as the
//!    crate's: the first bucket by multiply-shift, the alternate by reflection
//!    through a hash of the fingerprint.
//! 5. `+ XXH3`: the crate's default hash (XXH3, seeded). This rung is the
//!    crate's lookup without its runtime choice of width.
//! 6. `crate`: `CuckooFilter::contains` at 16 bits, the same keys.
//!
//! Two more rows change one thing on rung 5, to show what a different design
//! would buy: a power-of-two table (the hash, bucket and alternate of rung 1)
//! and a one-multiply hash (a 64 × 64 → 128-bit product of the key and a
//! constant, its halves XORed).
//!
//! The keys and query lists are the bulk workload's (`bulk_insert_and_query`:
//! 1 M shuffled queries, here 0, 50 or 100 % present). Each cell is millions
//! of lookups per second, the best of five passes summing the answers. The
//! loops are models: they are single-threaded and their inserts are plain
//! stores, so only the lookups mean anything.
//!
//! With `--bits 8`, the same ladder at 8 bits, where the table stays in L2
//! and lookups are bound by the instructions they retire. The model's
//! buckets are four 8-bit slots in a 32-bit word, as the reference's
//! `Cuckoo8` (the crate's 8-bit buckets are the halves of 64-bit words);
//! rung 1 tests each by the zero-byte trick (`hasvalue8`), rungs 2 to 5 and
//! the power-of-two row are the 16-bit ones, then the crate's 8-bit
//! `contains` (there is no one-multiply row).
//!
//! With `--chain` (items default 4 M), the floor of a growable filter's miss
//! instead: rung 5's lookup, the hash computed once, asked of every table of
//! a chain, newest first, as `GrowableCuckooFilter::contains` does. The
//! chain's first table is sized for 1000 items and each next one has four
//! times its buckets, up to the first that holds the items (seven tables at
//! 4 M); each table is filled to its size. Rows drop tables from the chain,
//! to show what each costs: the smallest tables fit in the caches and cost
//! instructions, the largest cost cache misses. The last rows keep every
//! table but put the older ones behind summaries of what they hold (see
//! `Summary`): one bitmap for all of them, built from their entries, or one
//! for each, as its inserts could keep it; a lookup looks in an older table
//! only if the summary says it may be there. Each row gives misses per
//! second (0 % present, the bulk workload's list) and that as a share of one
//! table sized for all the items.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use benchmarks::bulk_insert_and_query::{
    added_keys, contains_each, filter_for, insert_all, query_list, QUERIES,
};
use lockfree_cuckoo_filter::FingerprintBits;

/// A relocation counter alone in 128 bytes, as the crate pads its own.
#[repr(align(128))]
struct Padded(AtomicU64);

/// The relocation counters of a crate table of the models' size: 256, padded.
struct Counters(Box<[Padded; 256]>);

impl Counters {
    fn new() -> Self {
        Self(Box::new(std::array::from_fn(|_| Padded(AtomicU64::new(0)))))
    }

    /// `look` validated in the cheapest form of the crate's protocol: the
    /// counter of the pair `{i1, i2}` read before and after, the look again
    /// if it moved. (The crate's `contains` retries only a miss during which
    /// it moved; in these loops that form ran about 10 % slower, in the crate
    /// no slower.)
    #[inline(always)]
    fn validated(&self, i1: u64, i2: u64, look: impl Fn() -> bool) -> bool {
        let counter = &self.0[((i1 ^ i2) >> 1) as usize & 255].0;
        loop {
            let before = counter.load(Ordering::Acquire);
            let hit = look();
            if counter.load(Ordering::Acquire) == before {
                return hit;
            }
        }
    }
}

/// A single-threaded model insert of `fp`, first bucket `bucket`, into
/// buckets of four `LANE`-bit lanes that `word` reads and `set` writes: a
/// free lane of either bucket, else a random walk of evictions (as the
/// reference's). False if it gives up.
fn random_walk<const LANE: u64>(
    (mut bucket, mut fp): (u64, u64),
    alternate: impl Fn(u64, u64) -> u64,
    word: impl Fn(u64) -> u64,
    set: impl Fn(u64, u64),
    rng: &mut u64,
) -> bool {
    let lane = (1 << LANE) - 1;
    for _ in 0..500 {
        for b in [bucket, alternate(bucket, fp)] {
            let w = word(b);
            if let Some(slot) = (0..4).find(|s| (w >> (LANE * s)) & lane == 0) {
                set(b, w | (fp << (LANE * slot)));
                return true;
            }
        }
        let slot = xorshift(rng) % 4;
        let w = word(bucket);
        let victim = (w >> (LANE * slot)) & lane;
        set(
            bucket,
            (w & !(lane << (LANE * slot))) | (fp << (LANE * slot)),
        );
        fp = victim;
        bucket = alternate(bucket, fp);
    }
    false
}

const USAGE: &str = "usage: lookup_floor [--items N] [--chain | --bits 8]";

const PASSES: usize = 5;

/// High bit of each 16-bit lane, the rest, and one in each lane.
const HIGH: u64 = 0x8000_8000_8000_8000;
const LOW: u64 = 0x7fff_7fff_7fff_7fff;
const ONES: u64 = 0x0001_0001_0001_0001;

/// Whether the 4-lane word `w` holds `fp` (nonzero, below 2^16): a lane of
/// `w ^ fp·ONES` is zero exactly where `fp` is. The reference's test
/// (`hasvalue16`), the zero-lane trick.
#[inline(always)]
fn holds(w: u64, fp: u64) -> bool {
    let x = w ^ (fp * ONES);
    (((x & LOW) + LOW) | x) & HIGH != HIGH
}

/// Whether either of the 4-lane words `a` and `b` holds `fp`: the crate's
/// test (`fingerprint::matches_in_either`), one SSE2 comparison of all eight
/// lanes with `fp`; elsewhere, [`holds`] on each.
#[inline(always)]
fn either_holds(a: u64, b: u64, fp: u64) -> bool {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use std::arch::x86_64::{
            _mm_cmpeq_epi16, _mm_movemask_epi8, _mm_set1_epi16, _mm_set_epi64x,
        };
        // SAFETY: SSE2 is enabled for this target (the `cfg` above); these
        // intrinsics compute on values in registers and touch no memory.
        unsafe {
            let lanes = _mm_set_epi64x(b as i64, a as i64);
            _mm_movemask_epi8(_mm_cmpeq_epi16(lanes, _mm_set1_epi16(fp as i16))) != 0
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        holds(a, fp) | holds(b, fp)
    }
}

/// The crate's fingerprint of a hash (`fingerprint::of_hash`): the high half
/// mapped onto `1..=max` by multiply-shift.
#[inline(always)]
fn fingerprint(h: u64, max: u64) -> u64 {
    (((h >> 32) * max) >> 32) + 1
}

/// A step of xorshift64: the model inserts' choice of victim, and the
/// models' hash constants.
fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// How a rung hashes a key.
trait KeyHash: Copy {
    fn of(self, key: u64) -> u64;
}

/// The C++ reference's: `(add + mul · key) >> 64` over 128 bits.
#[derive(Clone, Copy)]
struct MultiplyAdd {
    mul: u128,
    add: u128,
}

impl KeyHash for MultiplyAdd {
    #[inline(always)]
    fn of(self, key: u64) -> u64 {
        (self
            .add
            .wrapping_add(self.mul.wrapping_mul(u128::from(key)))
            >> 64) as u64
    }
}

/// The crate's default: XXH3 of the key's 8 bytes, seeded.
#[derive(Clone, Copy)]
struct Xxh3 {
    seed: u64,
}

impl KeyHash for Xxh3 {
    #[inline(always)]
    fn of(self, key: u64) -> u64 {
        xxhash_rust::xxh3::xxh3_64_with_seed(&key.to_le_bytes(), self.seed)
    }
}

/// One product: `(key ^ seed) · K` over 128 bits, its two halves XORed.
#[derive(Clone, Copy)]
struct Fold {
    seed: u64,
}

impl KeyHash for Fold {
    #[inline(always)]
    fn of(self, key: u64) -> u64 {
        let p = u128::from(key ^ self.seed) * 0x9e37_79b9_7f4a_7c15;
        (p as u64) ^ ((p >> 64) as u64)
    }
}

/// Buckets for `items` (four slots each): the crate's sizing (95 % load,
/// an even number), or with `POW2` the reference's ([`power_of_two_buckets`]).
fn buckets_for<const POW2: bool>(items: usize) -> u64 {
    if POW2 {
        power_of_two_buckets(items)
    } else {
        ((items as u64).div_ceil(4) * 100 / 95 + 2) & !1
    }
}

/// The position of hash `h` in a table of `n` buckets, its fingerprint in
/// `1..=max`: with `POW2` the reference's (the first bucket from the high
/// half, the tag the low bits, 0 made 1), else the crate's
/// (`Table::position`, `fingerprint::of_hash`: both by multiply-shift); the
/// second bucket by [`alternate`].
#[inline(always)]
fn locate<const POW2: bool>(h: u64, n: u64, max: u64) -> Pos {
    let (i1, fp) = if POW2 {
        let tag = h & max;
        ((h >> 32) & (n - 1), tag + u64::from(tag == 0))
    } else {
        ((u64::from(h as u32) * n) >> 32, fingerprint(h, max))
    };
    Pos {
        i1,
        i2: alternate::<POW2>(i1, fp, n),
        fp,
    }
}

/// The other bucket of fingerprint `fp` in `bucket`, in a table of `n`
/// buckets: with `POW2` the reference's (XOR with the fingerprint times
/// MurmurHash2's constant, in 32 bits, masked), else the crate's
/// (`Table::alternate`: the twin index reflected through a hash of the
/// fingerprint and the half flipped, computed as `(2h + 1 - bucket) mod n`).
#[inline(always)]
fn alternate<const POW2: bool>(bucket: u64, fp: u64, n: u64) -> u64 {
    if POW2 {
        (bucket ^ (fp.wrapping_mul(0x5bd1_e995) & 0xffff_ffff)) & (n - 1)
    } else {
        let x = fp.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
        let odd = ((x * n) >> 32) | 1;
        let (d, borrow) = odd.overflowing_sub(bucket);
        let wrapped = d.wrapping_add(n);
        if borrow {
            wrapped
        } else {
            d
        }
    }
}

/// A model table: `n` one-word buckets of four 16-bit slots, and the
/// relocation counters of a crate table of this size.
///
/// `POW2`: a power-of-two table with the reference's XOR alternate, else a
/// table of any even size with the crate's alternate.
struct Model<H, const POW2: bool> {
    words: Vec<AtomicU64>,
    n: u64,
    counters: Counters,
    hash: H,
}

/// A bucket pair and a fingerprint.
#[derive(Clone, Copy)]
struct Pos {
    i1: u64,
    i2: u64,
    fp: u64,
}

impl<H: KeyHash, const POW2: bool> Model<H, POW2> {
    fn new(items: usize, hash: H) -> Self {
        let n = buckets_for::<POW2>(items);
        Self {
            words: (0..n).map(|_| AtomicU64::new(0)).collect(),
            n,
            counters: Counters::new(),
            hash,
        }
    }

    /// [`Lookups::position`] of a key whose hash is `h`.
    #[inline(always)]
    fn position_of_hash(&self, h: u64) -> Pos {
        locate::<POW2>(h, self.n, 0xffff)
    }

    #[inline(always)]
    fn cell(&self, bucket: u64) -> &AtomicU64 {
        debug_assert!(bucket < self.n);
        // SAFETY: every bucket that `position` and `alternate` give is below
        // `n`, the length of `words` (unchecked, as the crate's table is).
        unsafe { self.words.get_unchecked(bucket as usize) }
    }

    #[inline(always)]
    fn word(&self, bucket: u64) -> u64 {
        self.cell(bucket).load(Ordering::Acquire)
    }

    /// A single-threaded model insert ([`random_walk`]).
    fn insert(&self, key: u64, rng: &mut u64) -> bool {
        let p = self.position(key);
        random_walk::<16>(
            (p.i1, p.fp),
            |b, fp| alternate::<POW2>(b, fp, self.n),
            |b| self.word(b),
            |b, w| self.cell(b).store(w, Ordering::Relaxed),
            rng,
        )
    }
}

/// The reference's table size for `items`: buckets of four, the next power
/// of two, doubled if the load would be over 96 %.
fn power_of_two_buckets(items: usize) -> u64 {
    let p = (items as u64 / 4).next_power_of_two().max(2);
    if items as f64 > 0.96 * 4.0 * p as f64 {
        2 * p
    } else {
        p
    }
}

/// The `--bits 8` ladder's model table: `n` buckets of four 8-bit slots,
/// each a 32-bit word (as the reference's `Cuckoo8`; two of them are the two
/// halves of one of the crate's 8-bit words), addressed as [`Model`]'s are.
struct Model8<H, const POW2: bool> {
    words: Vec<AtomicU32>,
    n: u64,
    counters: Counters,
    hash: H,
}

impl<H: KeyHash, const POW2: bool> Model8<H, POW2> {
    fn new(items: usize, hash: H) -> Self {
        let n = buckets_for::<POW2>(items);
        Self {
            words: (0..n).map(|_| AtomicU32::new(0)).collect(),
            n,
            counters: Counters::new(),
            hash,
        }
    }

    #[inline(always)]
    fn cell(&self, bucket: u64) -> &AtomicU32 {
        debug_assert!(bucket < self.n);
        // SAFETY: every bucket that `locate` and `alternate` give is below
        // `n`, the length of `words` (unchecked, as the crate's table is).
        unsafe { self.words.get_unchecked(bucket as usize) }
    }

    #[inline(always)]
    fn word(&self, bucket: u64) -> u32 {
        self.cell(bucket).load(Ordering::Acquire)
    }

    /// A single-threaded model insert ([`random_walk`]).
    fn insert(&self, key: u64, rng: &mut u64) -> bool {
        let p = self.position(key);
        random_walk::<8>(
            (p.i1, p.fp),
            |b, fp| alternate::<POW2>(b, fp, self.n),
            |b| u64::from(self.word(b)),
            |b, w| self.cell(b).store(w as u32, Ordering::Relaxed),
            rng,
        )
    }
}

/// The `--bits 8` ladder on the bulk workload's keys and lists.
fn ladder8(
    items: usize,
    keys: &[u64],
    lists: &[Vec<u64>],
    (multiply_add, xxh3): (MultiplyAdd, Xxh3),
    rng: &mut u64,
) {
    println!("{items} keys, 8-bit fingerprints; M lookups/s, best of {PASSES} passes\n");
    println!("| rung | 0 % | 50 % | 100 % |\n|---|--:|--:|--:|");
    /// The rows of one model, filled with `keys`.
    fn rows<H: KeyHash, const POW2: bool>(
        items: usize,
        hash: H,
        keys: &[u64],
        lists: &[Vec<u64>],
        rng: &mut u64,
        rows: &[(&str, Look)],
    ) {
        let m = Model8::<H, POW2>::new(items, hash);
        let failed = keys.iter().filter(|&&k| !m.insert(k, rng)).count();
        if failed > 0 {
            eprintln!(
                "lookup_floor: {failed} model inserts gave up ({})",
                rows[0].0
            );
        }
        for &(name, look) in rows {
            let row = cells(|q| pass(&m, look, q), lists);
            println!("| {name} | {row} |");
        }
    }
    use Look::*;
    let c_plus_plus = [
        (
            "1. c++ at 8 bits: multiply-add, power of two, XOR alternate, zero-byte test",
            ZeroLanes,
        ),
        ("2. + one vector comparison of both buckets", Vector),
        ("3. + validation", Validated),
    ];
    let any_size = [("4. + any even size", Validated)];
    let xxh3_rows = [(
        "5. + XXH3: the crate's lookup at 8 bits, one width",
        Validated,
    )];
    let pow2 = [("5, power-of-two table", Validated)];
    let (k, l) = (keys, lists);
    rows::<_, true>(items, multiply_add, k, l, rng, &c_plus_plus);
    rows::<_, false>(items, multiply_add, k, l, rng, &any_size);
    rows::<_, false>(items, xxh3, k, l, rng, &xxh3_rows);
    rows::<_, true>(items, xxh3, k, l, rng, &pow2);
    crate_row("6. crate", items, keys, lists, FingerprintBits::Bits8);
}

/// The last rung, named `name`: the crate's `contains` at `bits`, on the
/// same keys.
fn crate_row(name: &str, items: usize, keys: &[u64], lists: &[Vec<u64>], bits: FingerprintBits) {
    let filter = filter_for(items, bits).unwrap_or_else(|e| {
        eprintln!("lookup_floor: cannot build the filter: {e}");
        std::process::exit(1);
    });
    let failed = insert_all(&filter, keys);
    if failed > 0 {
        eprintln!("lookup_floor: {failed} filter inserts failed");
    }
    let row = cells(|q| contains_each(&filter, q), lists);
    println!(
        "| {name}: `CuckooFilter::contains`, {}-bit | {row} |",
        bits.bits()
    );
}

/// How a rung compares: the zero-lane test, one vector comparison, or that
/// and validation.
#[derive(Clone, Copy)]
enum Look {
    ZeroLanes,
    Vector,
    Validated,
}

/// What a [`pass`] times of a model: its position of a key, and its look
/// for the fingerprint there, unvalidated or validated.
trait Lookups {
    fn position(&self, key: u64) -> Pos;

    /// The lookup without validation (rungs 1 and 2): the reference's test
    /// of each bucket, or one comparison of both if `VECTOR`.
    fn look<const VECTOR: bool>(&self, p: Pos) -> bool;

    fn counters(&self) -> &Counters;

    /// The lookup of rung 2, validated ([`Counters::validated`]).
    #[inline(always)]
    fn look_validated(&self, p: Pos) -> bool {
        self.counters()
            .validated(p.i1, p.i2, || self.look::<true>(p))
    }
}

impl<H: KeyHash, const POW2: bool> Lookups for Model<H, POW2> {
    #[inline(always)]
    fn position(&self, key: u64) -> Pos {
        self.position_of_hash(self.hash.of(key))
    }

    /// Rung 1 tests each bucket by the zero-lane trick ([`holds`]); rung 2
    /// compares both at once ([`either_holds`]).
    #[inline(always)]
    fn look<const VECTOR: bool>(&self, p: Pos) -> bool {
        let (a, b) = (self.word(p.i1), self.word(p.i2));
        if VECTOR {
            either_holds(a, b, p.fp)
        } else {
            holds(a, p.fp) | holds(b, p.fp)
        }
    }

    #[inline(always)]
    fn counters(&self) -> &Counters {
        &self.counters
    }
}

impl<H: KeyHash, const POW2: bool> Lookups for Model8<H, POW2> {
    #[inline(always)]
    fn position(&self, key: u64) -> Pos {
        locate::<POW2>(self.hash.of(key), self.n, 0xff)
    }

    /// Rung 1 at 8 bits tests each bucket by the zero-byte trick (the
    /// reference's `hasvalue8`: a byte of `w ^ fp·0x01010101` is zero
    /// exactly where `fp` is); rung 2 compares both buckets' eight lanes with
    /// `fp` at once, as the crate's 8-bit lookup does (SSE2 `pcmpeqb`).
    #[inline(always)]
    fn look<const VECTOR: bool>(&self, p: Pos) -> bool {
        let (a, b, fp) = (self.word(p.i1), self.word(p.i2), p.fp as u32);
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if VECTOR {
            use std::arch::x86_64::{
                _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi32,
            };
            // SAFETY: SSE2 is enabled for this target (the `cfg` above);
            // these intrinsics compute on values in registers and touch no
            // memory.
            return unsafe {
                let lanes = _mm_set_epi32(0, 0, b as i32, a as i32);
                _mm_movemask_epi8(_mm_cmpeq_epi8(lanes, _mm_set1_epi8(fp as i8))) & 0xff != 0
            };
        }
        let has_zero_byte = |x: u32| x.wrapping_sub(0x0101_0101) & !x & 0x8080_8080 != 0;
        let lanes = fp.wrapping_mul(0x0101_0101);
        has_zero_byte(a ^ lanes) | has_zero_byte(b ^ lanes)
    }

    #[inline(always)]
    fn counters(&self) -> &Counters {
        &self.counters
    }
}

/// One pass of a rung's lookups over `queries`, the number found.
#[inline(never)]
fn pass(m: &impl Lookups, look: Look, queries: &[u64]) -> u64 {
    // One loop per kind of look (`count` is monomorphised for each closure),
    // so that none branches on the kind per lookup.
    fn count(queries: &[u64], found: impl Fn(u64) -> bool) -> u64 {
        queries.iter().map(|&k| u64::from(found(k))).sum()
    }
    match look {
        Look::ZeroLanes => count(queries, |k| m.look::<false>(m.position(k))),
        Look::Vector => count(queries, |k| m.look::<true>(m.position(k))),
        Look::Validated => count(queries, |k| m.look_validated(m.position(k))),
    }
}

/// The best of [`PASSES`] passes of `pass` over each list, as a table row's
/// cells (millions of lookups per second).
fn cells(pass: impl Fn(&[u64]) -> u64, lists: &[Vec<u64>]) -> String {
    let cells: Vec<String> = lists
        .iter()
        .map(|l| format!("{:.0}", best_rate(&pass, l)))
        .collect();
    cells.join(" | ")
}

/// The best of [`PASSES`] passes of `pass` over `list`, in millions of
/// lookups per second.
fn best_rate(pass: impl Fn(&[u64]) -> u64, list: &[u64]) -> f64 {
    (0..PASSES)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(pass(std::hint::black_box(list)));
            list.len() as f64 / start.elapsed().as_secs_f64() / 1e6
        })
        .fold(0.0, f64::max)
}

/// One rung's row: its model filled with `keys`, then timed on each list.
fn rung<H: KeyHash, const POW2: bool>(
    name: &str,
    look: Look,
    hash: H,
    keys: &[u64],
    lists: &[Vec<u64>],
    rng: &mut u64,
) {
    let m = Model::<H, POW2>::new(keys.len(), hash);
    let failed = keys.iter().filter(|&&k| !m.insert(k, rng)).count();
    if failed > 0 {
        // As the reference's victim slot would hold: one or two at 95 %.
        eprintln!("lookup_floor: {failed} model inserts gave up ({name})");
    }
    let row = cells(|q| pass(&m, look, q), lists);
    println!("| {name} | {row} |");
}

struct Args {
    items: Option<usize>,
    chain: bool,
    /// 8 for the 8-bit ladder, else 16.
    bits: u32,
}

fn parse_args() -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;
    let mut args = Args {
        items: None,
        chain: false,
        bits: 16,
    };
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("items") => args.items = Some(parser.value()?.parse()?),
            Long("chain") => args.chain = true,
            Long("bits") => match parser.value()?.parse()? {
                bits @ (8 | 16) => args.bits = bits,
                bits => return Err(format!("--bits {bits}: 8 or 16").into()),
            },
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if args.chain && args.bits == 8 {
        return Err("--chain measures 16-bit tables; --bits 8 is a ladder of its own".into());
    }
    if args.items.is_some_and(|n| n < 4) {
        return Err("--items must be at least 4".into());
    }
    Ok(args)
}

/// Items in the first table of a `--chain` run, as a growable filter built
/// with `with_capacity(1000)`.
const CHAIN_FIRST: usize = 1000;

/// Whether any of `tables` (oldest first) holds the item of hash `h`: rung 5's
/// validated lookup in each, newest first, stopping at the first hit.
#[inline(always)]
fn chain_holds(tables: &[&Model<Xxh3, false>], h: u64) -> bool {
    tables
        .iter()
        .rev()
        .any(|t| t.look_validated(t.position_of_hash(h)))
}

/// The `--chain` run: misses of one table sized for `items`, then of chains
/// grown to `items`, whole and without some of their tables.
fn chains(items: usize, rng: &mut u64) {
    let xxh3 = Xxh3 {
        seed: xorshift(rng),
    };
    let keys = added_keys(items);
    let misses = query_list(&keys, 0, QUERIES, 0);
    // Table sizes as growth makes them: four times the buckets each time,
    // until one holds the items.
    let mut sizes = vec![CHAIN_FIRST];
    while sizes[sizes.len() - 1] < items {
        sizes.push(sizes[sizes.len() - 1] * 4);
    }
    let fill = |size: usize, rng: &mut u64| {
        let m = Model::<Xxh3, false>::new(size, xxh3);
        let mut held = Vec::with_capacity(size);
        for _ in 0..size {
            let key = xorshift(rng);
            if m.insert(key, rng) {
                held.push(key);
            }
        }
        (m, held)
    };
    let (one, _) = fill(items, rng);
    let (tables, held): (Vec<_>, Vec<_>) = sizes.iter().map(|&size| fill(size, rng)).unzip();
    let alone = best_rate(|q| pass(&one, Look::Validated, q), &misses);
    println!(
        "{items} items; chains from {CHAIN_FIRST} items by fours; misses, M lookups/s, \
         best of {PASSES} passes\n"
    );
    println!("| lookup | tables | misses | x one table |\n|---|--:|--:|--:|");
    println!("| one table sized for all the items | 1 | {alone:.1} | 1.00 |");
    let n = tables.len();
    let mut rows: Vec<(String, Vec<usize>)> =
        vec![(format!("the chain, {n} tables"), (0..n).collect())];
    for dropped in 1..n.saturating_sub(2) {
        rows.push((
            format!("without its {dropped} smallest"),
            (dropped..n).collect(),
        ));
    }
    rows.push(("its smallest four only".into(), (0..n.min(4)).collect()));
    rows.push(("its largest only".into(), vec![n - 1]));
    for (name, which) in rows {
        let chain: Vec<&Model<Xxh3, false>> = which.iter().map(|&t| &tables[t]).collect();
        let rate = best_rate(|q| chain_pass(&chain, xxh3, q, |_| false), &misses);
        println!(
            "| {name} | {} | {rate:.1} | {:.2} |",
            chain.len(),
            rate / alone
        );
    }
    // The older tables behind summaries (see `Summary`): one for all of
    // them, built from their entries, then one for each, built from the
    // hashes of its items.
    for newest in [2, 1] {
        let (old, new) = split(&tables, newest);
        let summary = Summary::of_entries(&old);
        // No false negatives: every key an older table holds passes.
        let held_old = held[..old.len()].iter().flatten();
        assert!(held_old.clone().all(|&k| summary.may_hold(xxh3.of(k))));
        let passing = misses
            .iter()
            .filter(|&&k| summary.may_hold(xxh3.of(k)))
            .count();
        let older = |h| summary.may_hold(h) && chain_holds(&old, h);
        let rate = best_rate(|q| chain_pass(&new, xxh3, q, older), &misses);
        println!(
            "| its newest {newest}, the older {} behind one summary ({:.1} MiB, {} entries; \
             {:.1} % of misses pass) | {n} | {rate:.1} | {:.2} |",
            old.len(),
            summary.mib(),
            held_old.count(),
            100.0 * passing as f64 / misses.len() as f64,
            rate / alone
        );
    }
    for newest in [2, 1] {
        let (old, new) = split(&tables, newest);
        let summaries: Vec<Summary> = old
            .iter()
            .zip(&held)
            .map(|(t, keys)| Summary::of_hashes(t, keys.iter().map(|&k| xxh3.of(k))))
            .collect();
        let older = |h| {
            let mut tables = old.iter().zip(&summaries).rev();
            tables.any(|(t, s)| s.may_hold(h) && t.look_validated(t.position_of_hash(h)))
        };
        let rate = best_rate(|q| chain_pass(&new, xxh3, q, older), &misses);
        println!(
            "| its newest {newest}, each older one behind its own summary ({} bits a slot, \
             {:.2} MiB) | {n} | {rate:.1} | {:.2} |",
            Summary::BITS_PER_SLOT,
            summaries.iter().map(Summary::mib).sum::<f64>(),
            rate / alone
        );
    }
}

/// The tables of a chain (oldest first) but its newest `newest`, and those.
#[allow(clippy::type_complexity)]
fn split(
    tables: &[Model<Xxh3, false>],
    newest: usize,
) -> (Vec<&Model<Xxh3, false>>, Vec<&Model<Xxh3, false>>) {
    let (old, new) = tables.split_at(tables.len().saturating_sub(newest));
    (old.iter().collect(), new.iter().collect())
}

/// A summary of the items of older tables: a bitmap with one bit for each
/// key, the pair of a prefix of the hash's low half (the bits that choose
/// the first bucket) and the fingerprint, set for every item the tables
/// hold. A lookup reads one bit and skips the tables when it is clear.
///
/// Built from the tables' entries ([`Self::of_entries`]), as a filter that
/// keeps no hashes must: an entry of bucket `b` in a table of `n` buckets has
/// its first bucket at `b` or at `b`'s alternate, and a first bucket `i`
/// puts the hash's low half in `[i · 2^32 / n, (i + 1) · 2^32 / n)`, which
/// spans at most two prefixes of `s` bits when `2^s <= n`: each entry sets
/// two to four keys, all a bucket pair and a fingerprint determine, so
/// moving an entry to its other bucket changes none. With `s` from the
/// smallest table, the keys have `s + 16` bits and the bitmap is indexed by
/// them directly. Or built from the items' hashes, one per table, as its
/// inserts could keep it ([`Self::of_hashes`]): then the key is mixed onto
/// [`Self::BITS_PER_SLOT`] bits for each slot of the table.
struct Summary {
    bits: Vec<u64>,
    /// `32 - s`: the low half shifted right by this is the prefix.
    shift: u32,
    /// A key's bit is the high bits of `key · mix` (for the direct index, a
    /// power of two that makes them the key itself).
    mix: u64,
    index_shift: u32,
}

impl Summary {
    /// Bits per slot of a summary of one table's hashes.
    const BITS_PER_SLOT: usize = 8;

    fn of_entries(tables: &[&Model<Xxh3, false>]) -> Self {
        let smallest = tables.iter().map(|t| t.n).min().unwrap_or(2);
        let s = 63 - smallest.leading_zeros();
        let mut me = Self::empty(s, 1 << (48 - s), s + 16);
        for t in tables {
            let n = u128::from(t.n);
            for b in 0..t.n {
                let w = t.word(b);
                let fps = (0..4).map(|lane| (w >> (16 * lane)) & 0xffff);
                for fp in fps.filter(|&fp| fp != 0) {
                    for i1 in [b, alternate::<false>(b, fp, t.n)] {
                        let i1 = u128::from(i1);
                        let low = ((i1 << 32).div_ceil(n) >> me.shift) as u64;
                        let high = ((((i1 + 1) << 32).div_ceil(n) - 1) >> me.shift) as u64;
                        for prefix in low..=high {
                            me.set((prefix << 16) | fp);
                        }
                    }
                }
            }
        }
        me
    }

    fn of_hashes(table: &Model<Xxh3, false>, hashes: impl Iterator<Item = u64>) -> Self {
        let s = 63 - table.n.leading_zeros();
        let bits = (table.n * 4 * Self::BITS_PER_SLOT as u64).next_power_of_two();
        let mut me = Self::empty(s, 0x9e37_79b9_7f4a_7c15, bits.trailing_zeros().max(6));
        for h in hashes {
            me.set(me.key(h));
        }
        me
    }

    /// A summary of `2^log_bits` clear bits.
    fn empty(s: u32, mix: u64, log_bits: u32) -> Self {
        Self {
            bits: vec![0; 1 << (log_bits - 6)],
            shift: 32 - s,
            mix,
            index_shift: 64 - log_bits,
        }
    }

    /// The key of the item of hash `h`: its prefix and its fingerprint.
    #[inline(always)]
    fn key(&self, h: u64) -> u64 {
        (u64::from((h as u32) >> self.shift) << 16) | fingerprint(h, 0xffff)
    }

    #[inline(always)]
    fn index(&self, key: u64) -> usize {
        (key.wrapping_mul(self.mix) >> self.index_shift) as usize
    }

    fn set(&mut self, key: u64) {
        let i = self.index(key);
        self.bits[i / 64] |= 1 << (i % 64);
    }

    #[inline(always)]
    fn may_hold(&self, h: u64) -> bool {
        let i = self.index(self.key(h));
        // SAFETY: `index` keeps `log_bits` bits of the product (see `empty`),
        // so it is below the number of bits allocated.
        (unsafe { *self.bits.get_unchecked(i / 64) } >> (i % 64)) & 1 != 0
    }

    fn mib(&self) -> f64 {
        (self.bits.len() * 8) as f64 / (1 << 20) as f64
    }
}

/// One pass of [`chain_holds`] over `queries` on the `new` tables, then,
/// for each key they do not hold, `older(hash)`: whether the older tables,
/// behind their summary or summaries, hold it (`|_| false` for a chain of
/// `new` alone); the number found. Out of line, one copy per `older`, as
/// [`pass`] is for the rungs.
#[inline(never)]
fn chain_pass(
    new: &[&Model<Xxh3, false>],
    hash: Xxh3,
    queries: &[u64],
    older: impl Fn(u64) -> bool,
) -> u64 {
    queries
        .iter()
        .map(|&k| {
            let h = hash.of(k);
            u64::from(chain_holds(new, h) || older(h))
        })
        .sum()
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("lookup_floor: {e}\n{USAGE}");
        std::process::exit(2);
    });
    if args.chain {
        chains(
            args.items.unwrap_or(4_000_000),
            &mut 0x2545_f491_4f6c_dd1d_u64,
        );
        return;
    }
    let items = args.items.unwrap_or(1_000_000);
    // The keys and query lists of the bulk workload (`bulk_insert_and_query`).
    let keys = added_keys(items);
    let lists: Vec<Vec<u64>> = [0, 50, 100]
        .iter()
        .map(|&percent| query_list(&keys, percent, QUERIES, 0))
        .collect();
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut r = || xorshift(&mut rng);
    let multiply_add = MultiplyAdd {
        mul: (u128::from(r()) << 64) | u128::from(r()),
        add: (u128::from(r()) << 64) | u128::from(r()),
    };
    let xxh3 = Xxh3 { seed: r() };
    let fold = Fold { seed: r() };
    if args.bits == 8 {
        ladder8(items, &keys, &lists, (multiply_add, xxh3), &mut rng);
        return;
    }

    println!("{items} keys, 16-bit fingerprints; M lookups/s, best of {PASSES} passes\n");
    println!("| rung | 0 % | 50 % | 100 % |\n|---|--:|--:|--:|");
    let (k, l, g) = (&keys, &lists, &mut rng);
    use Look::*;
    rung::<_, true>(
        "1. c++: multiply-add, power of two, XOR alternate, zero-lane test",
        ZeroLanes,
        multiply_add,
        k,
        l,
        g,
    );
    rung::<_, true>(
        "2. + one vector comparison of both buckets",
        Vector,
        multiply_add,
        k,
        l,
        g,
    );
    rung::<_, true>("3. + validation", Validated, multiply_add, k, l, g);
    rung::<_, false>("4. + any even size", Validated, multiply_add, k, l, g);
    rung::<_, false>(
        "5. + XXH3: the crate's lookup, one width",
        Validated,
        xxh3,
        k,
        l,
        g,
    );
    rung::<_, true>("5, power-of-two table", Validated, xxh3, k, l, g);
    rung::<_, false>("5, one-multiply hash", Validated, fold, k, l, g);
    crate_row("6. crate", items, &keys, &lists, FingerprintBits::Bits16);
}
