//! Ranked semi-sorted buckets: a bucket of `B` fingerprints in one 64-bit
//! word, its prefixes stored as one rank among the sorted multisets.
//!
//! # The idea
//!
//! As in [`crate::semisorted`], a bucket is a multiset: a lookup asks whether
//! it holds a fingerprint, never where. Each fingerprint is
//! `prefix · 2^S + suffix`, the prefix in `0..P`. The bucket's `B` slots are
//! sorted by their whole value (empty slots, the value 0, first); their
//! prefixes then form a non-decreasing sequence, one of `C(P + B − 1, B)`
//! multisets, and the word stores that sequence's rank in the combinatorial
//! number system (`rank = Σ C(pᵢ + i, i + 1)`, a bijection onto
//! `0..C(P + B − 1, B)`) above the `B` suffixes:
//!
//! ```text
//!  63         B·S   B·S−1                               0
//! +-------------+---------+-----+---------+---------+
//! |    rank     | suffix  | ... | suffix1 | suffix0 |
//! +-------------+---------+-----+---------+---------+
//! ```
//!
//! The layouts ([`Layout`]): eight fingerprints of 11 prefix values and
//! 6-bit suffixes (703 fingerprints, about 9.5 bits; rank < C(18, 8) =
//! 43 758 < 2^16), seven of 12 prefix values and 7-bit suffixes (1535
//! fingerprints, about 10.6 bits; rank < C(18, 7) = 31 824 < 2^15), six of
//! 16 prefix values and 8-bit suffixes (12 bits; rank < C(21, 6) = 54 264 <
//! 2^16), five of 16 prefix values and 10-bit suffixes (14 bits; rank <
//! C(20, 5) = 15 504 < 2^14), three of 17 prefix values and 18-bit suffixes
//! (4 456 447 fingerprints, about 22.1 bits; rank < C(19, 3) = 969 < 2^10).
//!
//! # Why the word is canonical, and the empty bucket is 0
//!
//! Sorting by the whole value makes the word of a multiset unique, so a CAS
//! that expects a word succeeds exactly when the bucket still holds the
//! multiset it read (see [`crate::semisorted`] for why the table needs
//! that). `B` empty slots are the prefix sequence `0, …, 0` (rank 0) and zero
//! suffixes: the word 0, so a zeroed allocation is an empty table. A slot is
//! empty exactly when its prefix and suffix are both 0, and empty slots sort
//! first, so a full bucket is one whose slot 0 is not empty.
//!
//! # Costs
//!
//! A lookup ([`holds`]) first asks whether any suffix lane holds the
//! fingerprint's suffix, and only then loads one entry of the layout's
//! decode table, indexed by the rank, which holds the sorted prefixes
//! already placed in the suffix lanes (prefix `i` at bit `S·i`). OR-ing `suffixes ^ broadcast(suffix)`
//! with `prefixes ^ broadcast(prefix)` leaves a lane zero exactly where both
//! parts match, and one zero-lane test over the `B` lanes answers: no
//! branch, no bit deposit. The tables hold one `u64` per multiset: 342 KiB
//! (eight slots), 248 KiB (seven), 424 KiB (six), 121 KiB (five), 7.6 KiB
//! (three), built at compile time.
//! Writers ([`with`], [`without`]) decode the bucket, insert or remove in
//! sorted order and re-encode (a sum of `B` binomials from a small table);
//! a bucket whose smallest slot has a nonzero suffix is full, which inserts
//! and path searches near full learn without the decode table.
//!
//! Words read from bytes must pass [`is_canonical`]: a rank at or above the
//! number of multisets, or slots out of order, are refused. (Lookups clamp
//! the rank into the table, so even such a word reads memory safely.)

use crate::fingerprint::MAX_SLOTS;

/// Most prefix values of any layout.
const MAX_PREFIXES: usize = 17;

/// Columns of [`RANK`]: [`MAX_PREFIXES`] rounded up to a power of two, so
/// that [`encode_sorted`] keeps its index in the table by a mask rather
/// than a division.
const RANK_COLUMNS: usize = MAX_PREFIXES.next_power_of_two();

/// `C(n, k)`, exact in `u64` for the arguments used here (up to
/// `C(38, 8)` here and in [`crate::semisorted`]).
pub(crate) const fn binomial(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let mut r = 1u64;
    let mut i = 0;
    while i < k {
        // Exact at every step: r · (n − i) / (i + 1) is C(n, i + 1).
        r = r * (n - i) / (i + 1);
        i += 1;
    }
    r
}

/// `RANK[i][p] = C(p + i, i + 1)`: the share of the rank of prefix `p` in
/// sorted slot `i` (the same for every layout; the columns past
/// [`MAX_PREFIXES`] are never read, and `C(38, 8)` still fits a `u32`).
static RANK: [[u32; RANK_COLUMNS]; MAX_SLOTS] = rank_table();

/// The contents of [`RANK`], which [`build_decode`] reads too.
const fn rank_table() -> [[u32; RANK_COLUMNS]; MAX_SLOTS] {
    let mut t = [[0u32; RANK_COLUMNS]; MAX_SLOTS];
    let mut i = 0;
    while i < MAX_SLOTS {
        let mut p = 0;
        while p < RANK_COLUMNS {
            t[i][p] = binomial((p + i) as u64, (i + 1) as u64) as u32;
            p += 1;
        }
        i += 1;
    }
    t
}

/// The decode table of `b` slots of `s`-bit suffixes with `p` prefix
/// values: entry `rank` holds the rank's sorted prefixes, prefix `i` at bit
/// `s·i`. `N` must be `C(p + b − 1, b)`. Enumerates the non-decreasing
/// sequences in order, like an odometer whose digits never fall below the
/// one to their left, and keeps the rank and the entry of the sequence as
/// running sums that each step changes only in the digits it sets (mostly
/// the last one): recomputing both for every sequence takes the compiler's
/// evaluation of the eight-slot table past its step limit.
const fn build_decode<const N: usize>(b: usize, s: u32, p: u32) -> [u64; N] {
    assert!(N as u64 == binomial((p as usize + b - 1) as u64, b as u64));
    let shares = rank_table();
    let mut t = [0u64; N];
    let mut seq = [0u32; MAX_SLOTS];
    // The rank and the entry of `seq`; all zero, which share nothing.
    let mut rank = 0u64;
    let mut entry = 0u64;
    loop {
        t[rank as usize] = entry;
        // The next sequence: raise the last digit that can rise, and set
        // every digit after it to its new value.
        let mut k = b;
        while k > 0 && seq[k - 1] == p - 1 {
            k -= 1;
        }
        if k == 0 {
            return t;
        }
        let v = seq[k - 1] + 1;
        let mut j = k - 1;
        while j < b {
            let old = seq[j];
            rank = rank + shares[j][v as usize] as u64 - shares[j][old as usize] as u64;
            entry = entry + ((v as u64) << (s * j as u32)) - ((old as u64) << (s * j as u32));
            seq[j] = v;
            j += 1;
        }
    }
}

/// One ranked layout: `SLOTS` fingerprints of `PREFIXES` prefix values and
/// `SUFFIX_BITS`-bit suffixes in one word, and its decode table.
pub(crate) trait Layout: 'static {
    /// Fingerprints in a bucket (a word).
    const SLOTS: usize;
    /// Bits of a stored suffix.
    const SUFFIX_BITS: u32;
    /// Prefix values, `0..PREFIXES`.
    const PREFIXES: u32;
    /// Number of prefix multisets, `C(PREFIXES + SLOTS − 1, SLOTS)`: the
    /// valid ranks are `0..RANKS`.
    const RANKS: usize;
    /// Largest fingerprint, `PREFIXES · 2^SUFFIX_BITS − 1`; fingerprints lie
    /// in `1..=MAX`.
    const MAX: u32 = (Self::PREFIXES << Self::SUFFIX_BITS) - 1;
    /// The decode table ([`build_decode`]).
    fn decode_table() -> &'static [u64];
}

macro_rules! layout {
    ($(#[$doc:meta])* $name:ident, $table:ident, slots $b:literal, suffix $s:literal, prefixes $p:literal, ranks $n:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name;
        static $table: [u64; $n] = build_decode::<$n>($b, $s, $p);
        impl Layout for $name {
            const SLOTS: usize = $b;
            const SUFFIX_BITS: u32 = $s;
            const PREFIXES: u32 = $p;
            const RANKS: usize = $n;
            #[inline(always)]
            fn decode_table() -> &'static [u64] {
                &$table
            }
        }
        // The rank fits above the suffixes, and the prefixes in the table.
        const _: () = assert!(
            $b * $s < 64
                && ($n as u64) <= 1u64 << (64 - $b * $s)
                && $b <= MAX_SLOTS
                && $p <= MAX_PREFIXES
        );
    };
}

layout!(
    /// Eight fingerprints of 11 prefix values and 6-bit suffixes.
    Eight, DECODE8, slots 8, suffix 6, prefixes 11, ranks 43758
);
layout!(
    /// Seven fingerprints of 12 prefix values and 7-bit suffixes.
    Seven, DECODE7, slots 7, suffix 7, prefixes 12, ranks 31824
);
layout!(
    /// Six 12-bit fingerprints: 16 prefix values, 8-bit suffixes.
    Six, DECODE6, slots 6, suffix 8, prefixes 16, ranks 54264
);
layout!(
    /// Five 14-bit fingerprints: 16 prefix values, 10-bit suffixes.
    Five, DECODE5, slots 5, suffix 10, prefixes 16, ranks 15504
);
layout!(
    /// Three fingerprints of 17 prefix values and 18-bit suffixes.
    Three, DECODE3, slots 3, suffix 18, prefixes 17, ranks 969
);

/// The mask of one suffix lane.
#[inline(always)]
const fn lane<L: Layout>() -> u64 {
    (1 << L::SUFFIX_BITS) - 1
}

/// The lowest bit of each of the `SLOTS` lanes.
#[inline(always)]
const fn low<L: Layout>() -> u64 {
    let mut low = 0;
    let mut i = 0;
    while i < L::SLOTS {
        low |= 1 << (L::SUFFIX_BITS * i as u32);
        i += 1;
    }
    low
}

/// The highest bit of each lane.
#[inline(always)]
const fn high<L: Layout>() -> u64 {
    low::<L>() << (L::SUFFIX_BITS - 1)
}

/// The bits of the suffix lanes.
#[inline(always)]
const fn lanes<L: Layout>() -> u64 {
    (1 << (L::SLOTS as u32 * L::SUFFIX_BITS)) - 1
}

/// The rank of `word`.
#[inline(always)]
fn rank<L: Layout>(word: u64) -> usize {
    (word >> (L::SLOTS as u32 * L::SUFFIX_BITS)) as usize
}

/// The sorted prefixes of `word`, prefix `i` at bit `S·i`. A rank past the
/// table (only in a word that [`is_canonical`] refuses) reads its last entry.
#[inline(always)]
fn prefixes<L: Layout>(word: u64) -> u64 {
    let table = L::decode_table();
    table[rank::<L>(word).min(L::RANKS - 1)]
}

/// The flag bits (high bit of each lane) of the slots of `word` that hold
/// `fp`; with `fp = 0`, of its empty slots. Exact: adding the low bits of a
/// lane to all-ones below its high bit cannot carry out of the lane.
#[inline(always)]
pub(crate) fn hits<L: Layout>(word: u64, fp: u32) -> u64 {
    debug_assert!(fp <= L::MAX);
    let fp = u64::from(fp);
    let suffixes = (word ^ (fp & lane::<L>()).wrapping_mul(low::<L>())) & lanes::<L>();
    let x = suffixes | (prefixes::<L>(word) ^ (fp >> L::SUFFIX_BITS).wrapping_mul(low::<L>()));
    let l = lanes::<L>() & !high::<L>();
    !(((x & l) + l) | x | l) & high::<L>()
}

/// Whether `word` holds `fp` (in `1..=MAX`): the short zero-lane test, exact
/// as to whether any lane is zero (a borrow only flags the lane above one that
/// is flagged itself). With `fp = 0`, whether the bucket has an empty slot.
///
/// The suffixes are asked first: a word with no lane of `fp`'s suffix
/// cannot hold `fp`, and then the decode table is not read. Most words a
/// lookup reads are such (a lane matches a suffix of `t` bits with
/// probability `2^-t`), so the table load, a second dependent memory access
/// and the cache lines it takes from the filter's own, is mostly skipped, at
/// the price of a branch that the lookups of absent items predict well.
#[inline(always)]
pub(crate) fn holds<L: Layout>(word: u64, fp: u32) -> bool {
    debug_assert!(fp <= L::MAX);
    let fp = u64::from(fp);
    let suffixes = suffix_differences::<L>(word, fp);
    if suffixes.wrapping_sub(low::<L>()) & !suffixes & high::<L>() == 0 {
        return false;
    }
    holds_given::<L>(word, suffixes, fp)
}

/// The flags of the suffix lanes of `word` that hold `fp`'s suffix, by the
/// short zero-lane test: nonzero exactly when some lane does (a borrow only
/// flags the lane above one that is flagged itself).
#[inline(always)]
fn suffix_differences<L: Layout>(word: u64, fp: u64) -> u64 {
    (word ^ (fp & lane::<L>()).wrapping_mul(low::<L>())) & lanes::<L>()
}

/// Whether `word`'s suffix differences `suffixes` (from
/// [`suffix_differences`]) and its prefixes say it holds `fp`.
#[inline(always)]
fn holds_given<L: Layout>(word: u64, suffixes: u64, fp: u64) -> bool {
    let x = suffixes | (prefixes::<L>(word) ^ (fp >> L::SUFFIX_BITS).wrapping_mul(low::<L>()));
    x.wrapping_sub(low::<L>()) & !x & high::<L>() != 0
}

/// Whether either of `words` (a bucket pair) holds `fp` (in `1..=MAX`),
/// reading the decode table at most once in the common case.
///
/// When neither word has a lane of `fp`'s suffix (most lookups of absent
/// items: each lane matches with probability `2^-t`) it answers without the
/// table. Otherwise the word to decode is the one with such a lane, chosen
/// by a select rather than a branch: which bucket holds a present item is a
/// coin toss that a branch would mispredict half the time, while whether
/// any lane matches is what the caller's items mostly agree on (present, or
/// absent), which a branch predicts. Only when both words have such a lane
/// (for a present item, about one lookup in `2^t / (2·B)`) does it decode
/// both.
#[inline(always)]
pub(crate) fn holds_in_either<L: Layout>(words: [u64; 2], fp: u32) -> bool {
    debug_assert!(fp <= L::MAX);
    let fp = u64::from(fp);
    let [s0, s1] = words.map(|w| suffix_differences::<L>(w, fp));
    let flagged = |s: u64| s.wrapping_sub(low::<L>()) & !s & high::<L>() != 0;
    let (f0, f1) = (flagged(s0), flagged(s1));
    if !(f0 | f1) {
        return false;
    }
    if f0 & f1 {
        return holds_given::<L>(words[0], s0, fp) | holds_given::<L>(words[1], s1, fp);
    }
    let (word, suffixes) = if f0 { (words[0], s0) } else { (words[1], s1) };
    holds_given::<L>(word, suffixes, fp)
}

/// The `SLOTS` fingerprints of `word`, ascending (0 = empty, first), then 0
/// up to [`MAX_SLOTS`].
#[inline]
pub(crate) fn fingerprints<L: Layout>(word: u64) -> [u32; MAX_SLOTS] {
    let p = prefixes::<L>(word);
    let mut fps = [0u32; MAX_SLOTS];
    for (i, fp) in fps.iter_mut().enumerate().take(L::SLOTS) {
        let at = L::SUFFIX_BITS * i as u32;
        let prefix = (p >> at) & lane::<L>();
        let suffix = (word >> at) & lane::<L>();
        *fp = (prefix << L::SUFFIX_BITS | suffix) as u32;
    }
    fps
}

/// The word holding the multiset of the first `SLOTS` values of `fps` (0 =
/// empty, each at most `MAX`), given **ascending**.
#[inline]
fn encode_sorted<L: Layout>(fps: &[u32; MAX_SLOTS]) -> u64 {
    let mut rank = 0u64;
    let mut suffixes = 0u64;
    for (i, &fp) in fps.iter().enumerate().take(L::SLOTS) {
        debug_assert!(fp <= L::MAX, "fingerprint {fp:#x} too wide");
        debug_assert!(i == 0 || fps[i - 1] <= fp, "not sorted");
        let prefix = (fp >> L::SUFFIX_BITS) as usize & (RANK_COLUMNS - 1);
        rank += u64::from(RANK[i][prefix]);
        suffixes |= (u64::from(fp) & lane::<L>()) << (L::SUFFIX_BITS * i as u32);
    }
    rank << (L::SLOTS as u32 * L::SUFFIX_BITS) | suffixes
}

/// The word holding the multiset `fps` (first `SLOTS` values, any order, 0 =
/// empty): the inverse of [`fingerprints`].
#[inline]
pub(crate) fn encode<L: Layout>(mut fps: [u32; MAX_SLOTS]) -> u64 {
    fps[..L::SLOTS].sort_unstable();
    encode_sorted::<L>(&fps)
}

/// Whether the bucket is seen to be full without the decode table: slot 0
/// (the smallest value, empty slots first) has a nonzero suffix, so it is
/// not empty. (A full bucket whose smallest suffix is 0 needs the table.)
#[inline(always)]
fn surely_full<L: Layout>(word: u64) -> bool {
    word & lane::<L>() != 0
}

/// `word` with one more copy of `fp` (in `1..=MAX`); None when full.
///
/// Slot 0 is empty: the values below `fp` move down one slot over it and
/// `fp` takes the place the order gives it. Slot `j` of the result is
/// `max(fps[j], min(fps[j + 1], fp))`: `fps[j + 1]` where that is below
/// `fp` (it moves down), else `fp` where `fps[j]` is below it (the new
/// value's place), else `fps[j]` (it stays). Selects, not a loop that stops
/// at the place: where a new value falls among the others is random, a
/// branch on it mispredicted about once an insert.
#[inline]
pub(crate) fn with<L: Layout>(word: u64, fp: u32) -> Option<u64> {
    debug_assert!(fp != 0 && fp <= L::MAX);
    if surely_full::<L>(word) {
        return None;
    }
    let fps = fingerprints::<L>(word);
    if fps[0] != 0 {
        return None;
    }
    let mut out = [0u32; MAX_SLOTS];
    for j in 0..L::SLOTS {
        let next = if j + 1 < L::SLOTS {
            fps[j + 1]
        } else {
            u32::MAX
        };
        out[j] = fps[j].max(next.min(fp));
    }
    Some(encode_sorted::<L>(&out))
}

/// `word` with one copy of `fp` (in `1..=MAX`) fewer; None when it holds none.
#[inline]
pub(crate) fn without<L: Layout>(word: u64, fp: u32) -> Option<u64> {
    debug_assert!(fp <= L::MAX);
    if fp == 0 {
        return None;
    }
    let fps = without_sorted(&fingerprints::<L>(word), L::SLOTS, fp)?;
    Some(encode_sorted::<L>(&fps))
}

/// The first `len` values of `fps` (ascending, empty slots as 0 first) with
/// one copy of `fp` fewer, still ascending; None when they hold none. Here
/// and in [`crate::semisorted`].
///
/// The values below `fp` move up one slot over its first copy, and slot 0
/// empties: slot `j ≥ 1` of the result is `fps[j − 1]` where that is below
/// `fp`, else `fps[j]`. Selects, and an OR of equalities for whether `fp`
/// is there, as in [`with`]: a search for the copy would end on a branch
/// that the copy's random place mispredicts.
#[inline(always)]
pub(crate) fn without_sorted<const N: usize>(
    fps: &[u32; N],
    len: usize,
    fp: u32,
) -> Option<[u32; N]> {
    if !fps[..len].iter().fold(false, |any, &f| any | (f == fp)) {
        return None;
    }
    let mut out = [0u32; N];
    for j in 1..len {
        out[j] = if fps[j - 1] < fp { fps[j - 1] } else { fps[j] };
    }
    Some(out)
}

/// Occupied slots of `word`.
#[inline]
pub(crate) fn len<L: Layout>(word: u64) -> u32 {
    if surely_full::<L>(word) {
        return L::SLOTS as u32;
    }
    L::SLOTS as u32 - hits::<L>(word, 0).count_ones()
}

/// Copies of `fp` in `word`.
#[inline]
pub(crate) fn copies<L: Layout>(word: u64, fp: u32) -> u32 {
    hits::<L>(word, fp).count_ones()
}

/// Whether `word` is the word this codec writes for some multiset: a rank
/// below [`Layout::RANKS`] and slots in canonical (ascending) order.
pub(crate) fn is_canonical<L: Layout>(word: u64) -> bool {
    rank::<L>(word) < L::RANKS && encode::<L>(fingerprints::<L>(word)) == word
}

#[cfg(test)]
mod tests;
