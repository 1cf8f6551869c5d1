//! The table: buckets of fingerprints packed into atomic words, and the
//! lock-free protocol that inserts, finds and removes them.
//!
//! Every change to a bucket word is a compare-and-swap, and every successful
//! CAS on a bucket is `AcqRel`: Release so that a thread that later reads the
//! word also sees what this thread did before writing it (a mover's copy and
//! counter bump before its clear), Acquire so that this thread sees what the
//! word's previous writer did. Failure orderings are Acquire, since the value
//! read is then used as the next expected value. Loads of bucket words are
//! Acquire for the same reason. On x86-64 all of these are plain `mov`s and
//! `lock cmpxchg`s.
//!
//! Invariant (the one `remove` and the relocation fallback maintain): for every
//! bucket pair and fingerprint, the number of copies in the pair equals the
//! number of live items with that pair and fingerprint, plus the movers
//! between their copy and their clear (moves out of the stash among them),
//! plus the `insert_if_absent` calls between their put and their decision
//! (see [`insert`]). Copies of one fingerprint in one
//! pair are interchangeable, so it does not matter which copy a remove takes.
//! A pair's entries in the [`stash`] are copies of it like those in its
//! buckets.
//!
//! This module is the table core: layout and addressing, the single-bucket
//! steps, lookups, removes and relocation. Beside it: [`path`] (the cuckoo path
//! search, built on those steps) and [`insert`] (which uses it), [`relocation`]
//! (the counters that validate lookups and removes), [`count`] (the item
//! count), [`memory`] (allocation, prefetching, huge pages), [`any`] (a table
//! of a width chosen at run time), [`batch`] (pipelined lookups), and
//! [`snapshot`], [`front`] and [`stash`] (reading a live table).

mod any;
mod batch;
mod clear;
pub(crate) mod count;
mod front;
mod insert;
mod load;
mod memory;
mod path;
mod relocation;
mod snapshot;
mod stash;
mod walk;

use std::marker::PhantomData;

use crate::error::AllocError;
use crate::fingerprint::{self as fpr, Width};
use crate::sync::{AtomicU64, Ordering};
use count::ItemCount;
use front::Fronts;
use memory::{prefetch, zeroed_blocks, Block};
pub(crate) use memory::{prefetch_line, Reach};
use relocation::{RelocationCounters, Snapshot};
use stash::Stash;

pub(crate) use any::{dispatch, with_width, AnyTable, Variant};

/// Largest bucket count: bucket indices come from the low 32 bits of the hash.
pub(crate) const MAX_BUCKETS: u64 = 1 << 32;

/// Words that `buckets` buckets of `slots` slots fill with `lanes` slots a
/// word ([`FingerprintBits::slots_per_bucket`](crate::FingerprintBits::slots_per_bucket),
/// [`slots_per_word`](crate::FingerprintBits::slots_per_word)). At most 2^33
/// for the largest table.
pub(crate) fn words_for(slots: u32, lanes: u32, buckets: u64) -> u64 {
    (buckets * u64::from(slots)).div_ceil(u64::from(lanes))
}

/// Whether a table can have `buckets` buckets: even (see
/// [`Table::alternate`]), at least 2, at most [`MAX_BUCKETS`].
pub(crate) fn valid_bucket_count(buckets: u64) -> bool {
    buckets % 2 == 0 && (2..=MAX_BUCKETS).contains(&buckets)
}

/// The most slots a bucket has, whatever its width (see [`Width::SLOTS`]).
pub(crate) use crate::fingerprint::MAX_SLOTS;

const SUCCESS: Ordering = Ordering::AcqRel;
const FAILURE: Ordering = Ordering::Acquire;

/// Where an item lives: its two candidate buckets and its fingerprint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) i1: u64,
    pub(crate) i2: u64,
    pub(crate) fp: u32,
}

/// One bucket's place in memory: its words (`first`, and `second` where the
/// bucket is two words), and the high bits of the lanes that belong to it in
/// each of them.
///
/// With 8, 9, 10, 12, 16 or 17 bits a bucket is in one word (`mask[1]` and
/// `second` are never read: the loops over a bucket's words run
/// `W::WORDS_PER_BUCKET` times, a constant 1); at 8 bits `mask[0]` flags the
/// bucket's four lanes of the word, at 9 bits (semi-sorted, two buckets a
/// word) it is the bucket's half of the word, all 32 bits. With 21 or 32
/// bits a bucket is two whole words.
#[derive(Clone, Copy)]
struct Locus {
    first: usize,
    second: usize,
    mask: [u64; 2],
}

impl Locus {
    /// Index of the bucket's `k`-th word (0 or 1).
    #[inline(always)]
    fn index(&self, k: usize) -> usize {
        if k == 0 {
            self.first
        } else {
            self.second
        }
    }
}

/// A bucket's words as read by one set of loads (the unused second word of a
/// one-word bucket stays 0 and is never looked at).
pub(crate) type BucketWords = [u64; 2];

/// [`Table::alternate`] for a table of `buckets` buckets of width `W`
/// (the decoder checks moved entries with it before it allocates a table).
#[inline(always)]
pub(crate) fn alternate_in<W: Width>(buckets: u64, bucket: u64, fp: u32) -> u64 {
    let mut x = u64::from(fp).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    if W::MIXED_ALTERNATE {
        x = (x ^ (x >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
    }
    let x = x >> 32;
    // `x < 2^32` and `buckets <= 2^32`: the product fits.
    let odd = ((x * buckets) >> 32) | 1;
    let (d, borrow) = odd.overflowing_sub(bucket);
    // Both values computed, then one chosen: a select, one instruction
    // fewer per batched lookup than adding a selected `n` or 0.
    let wrapped = d.wrapping_add(buckets);
    if borrow {
        wrapped
    } else {
        d
    }
}

/// A table of `buckets` buckets of fingerprints of width `W`.
pub(crate) struct Table<W: Width> {
    blocks: Box<[Block]>,
    buckets: u64,
    relocations: RelocationCounters,
    /// Where the snapshots reading this table are (see [`front`]).
    fronts: Fronts,
    /// A snapshot's front moves a chunk of `1 << front_shift` words at a
    /// time (see [`snapshot`]).
    front_shift: u32,
    /// Items an insert could not place while a snapshot ran (see [`stash`]).
    stash: Stash,
    count: ItemCount,
    width: PhantomData<W>,
}

impl<W: Width> Table<W> {
    /// An empty table, or an error if its memory cannot be allocated.
    /// `buckets` must be even and in `2..=MAX_BUCKETS` (the builder checks).
    pub(crate) fn new(buckets: u64) -> Result<Self, AllocError> {
        debug_assert!(valid_bucket_count(buckets));
        let blocks =
            usize::try_from(Self::blocks_for(buckets)).map_err(|_| Self::alloc_error(buckets))?;
        let blocks = zeroed_blocks(blocks).ok_or_else(|| Self::alloc_error(buckets))?;
        Ok(Self::with_blocks(blocks, buckets))
    }

    /// A table of `buckets` buckets over `blocks` ([`Self::blocks_for`] of
    /// them); its count is 0.
    fn with_blocks(blocks: Box<[Block]>, buckets: u64) -> Self {
        let relocations = RelocationCounters::new(buckets);
        let count = ItemCount::new(buckets, std::mem::size_of_val(&*blocks));
        Self {
            blocks,
            buckets,
            front_shift: snapshot::chunk_shift::<W>(Self::words_for(buckets), relocations.len()),
            relocations,
            fronts: Fronts::new(),
            stash: Stash::new(buckets),
            count,
            width: PhantomData,
        }
    }

    /// Words needed for `buckets` buckets.
    pub(crate) fn words_for(buckets: u64) -> u64 {
        words_for(W::SLOTS, W::LANES, buckets)
    }

    /// Blocks (see [`Block`]) that hold the words of `buckets` buckets.
    pub(crate) fn blocks_for(buckets: u64) -> u64 {
        Self::words_for(buckets).div_ceil(2)
    }

    /// The error for a table of `buckets` buckets that cannot be allocated.
    pub(crate) fn alloc_error(buckets: u64) -> AllocError {
        AllocError {
            bytes: Self::blocks_for(buckets) * 16,
        }
    }

    pub(crate) fn buckets(&self) -> u64 {
        self.buckets
    }

    pub(crate) fn len(&self) -> usize {
        self.count.get()
    }

    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of_val(&*self.blocks)
            + self.relocations.memory_usage()
            + self.fronts.memory_usage()
            + self.stash.memory_usage()
            + self.count.memory_usage()
    }

    // ----- addressing -------------------------------------------------------

    /// The item position of a 64-bit hash: the low 32 bits pick the first
    /// bucket (multiply-shift onto `0..buckets`, no division), the high 32 bits
    /// the fingerprint.
    #[inline(always)]
    pub(crate) fn position(&self, hash: u64) -> Position {
        let i1 = (u64::from(hash as u32) * self.buckets) >> 32;
        let fp = fpr::of_hash::<W>(hash);
        Position {
            i1,
            i2: self.alternate(i1, fp),
            fp,
        }
    }

    /// The other bucket of fingerprint `fp` in bucket `bucket`.
    ///
    /// Buckets come in twins `2s` and `2s + 1`. The alternate of `2s + e` is
    /// `2 · ((h(fp) - s) mod n/2) + (1 - e)`: reflecting the twin index through
    /// `h(fp)` and flipping the half. That is an involution for any even `n`
    /// (so the table need not be a power of two) and, because the half always
    /// flips, it has no fixed point: every item has two distinct buckets and
    /// eight slots, even in a table of two buckets. (`(h(fp) - i) mod n` alone
    /// maps about one fingerprint in `n` to itself, leaving it four slots.)
    /// `h(fp)` is the high half of `fp` times an odd constant, `x`, scaled onto
    /// `0..n/2` by multiply-shift: `h = ⌊x · n/2 / 2^32⌋`. For the ranked
    /// layouts ([`Width::MIXED_ALTERNATE`]) `x` is the high half of a
    /// multiply-xorshift-multiply mix of `fp` instead: one multiplication
    /// leaves the high bits of short fingerprints' products in a few
    /// arithmetic progressions, and the alternates of fingerprints of 8 to 11
    /// bits then crowd onto fewer buckets (an 8-bit table failed at 95.9 %
    /// load where a well-mixed alternate reaches 97.2 %).
    ///
    /// Computed as `(2h + 1 - bucket) mod n`, which is the same number: for
    /// `bucket = 2s + e`, `2h + 1 - 2s - e` is `2(h - s) + (1 - e)`, and it is
    /// negative exactly when `h < s`, where adding `n` gives the reflection's
    /// wrap. And `2h + 1` is `⌊x · n / 2^32⌋ | 1`, since `⌊2y⌋` is `2⌊y⌋` or
    /// `2⌊y⌋ + 1`. Two multiplies, a subtract and a conditional add: about
    /// half the instructions of the twin arithmetic spelled out (the test
    /// `alternate_is_the_twin_reflection` compares the two).
    #[inline(always)]
    pub(crate) fn alternate(&self, bucket: u64, fp: u32) -> u64 {
        alternate_in::<W>(self.buckets, bucket, fp)
    }

    #[inline(always)]
    fn word(&self, index: usize) -> &AtomicU64 {
        debug_assert!(index < 2 * self.blocks.len());
        // SAFETY: the blocks are `2 · blocks.len()` contiguous `AtomicU64`s
        // (`Block` has no padding, see its definition), and `index` is one of
        // them: every caller's index is below `words_for(buckets)` (a word
        // that `locus` gives for a bucket below `buckets`, or a word index
        // below `word_count()` from the whole-table walks: `words`,
        // `from_words`, `clear`'s sweep), and the table allocates those
        // words in whole blocks.
        unsafe { &*self.blocks.as_ptr().cast::<AtomicU64>().add(index) }
    }

    #[inline(always)]
    fn locus(&self, bucket: u64) -> Locus {
        let bucket = bucket as usize;
        if W::LANES > W::SLOTS {
            // Two buckets share the word: keep the four lanes that are ours;
            // for semi-sorted buckets, the half of the word that is ours
            // (bucket `b` is half `b % 2` of word `b / 2`), which is how the
            // content methods tell the half.
            let first = bucket / 2;
            let half = (bucket % 2) as u32;
            let mask = if W::SORTED {
                fpr::half_mask(half)
            } else {
                let bucket_bits = W::SLOTS * W::BITS;
                W::HIGH & (((1u64 << bucket_bits) - 1) << (half * bucket_bits))
            };
            Locus {
                first,
                second: first,
                mask: [mask, 0],
            }
        } else {
            // The bucket is one word, or two whole words.
            let first = bucket * W::WORDS_PER_BUCKET;
            Locus {
                first,
                second: first + W::WORDS_PER_BUCKET - 1,
                mask: [W::HIGH; 2],
            }
        }
    }

    /// Starts loading `bucket` into the cache, as far in as `reach` says
    /// (see [`Reach`]).
    #[inline(always)]
    pub(crate) fn prefetch_bucket(&self, bucket: u64, reach: Reach) {
        prefetch(self.word(self.locus(bucket).first), reach);
    }

    /// Loads a bucket's words (Acquire).
    #[inline(always)]
    pub(crate) fn load_bucket(&self, bucket: u64) -> BucketWords {
        self.read_bucket(bucket, |cell| cell.load(Ordering::Acquire))
    }

    /// A bucket's words, each read by `read` (the unused second word of a
    /// one-word bucket is never read and stays 0).
    #[inline(always)]
    fn read_bucket(&self, bucket: u64, read: impl Fn(&AtomicU64) -> u64) -> BucketWords {
        let locus = self.locus(bucket);
        let mut words = [0; 2];
        for (k, w) in words.iter_mut().enumerate().take(W::WORDS_PER_BUCKET) {
            *w = read(self.word(locus.index(k)));
        }
        words
    }

    /// The `W::SLOTS` fingerprints (0 for an empty slot) of a bucket read by
    /// [`Self::load_bucket`], in slot order, then 0 up to [`MAX_SLOTS`]; for
    /// a semi-sorted bucket, in its (ascending) order, which no slot keeps.
    #[inline(always)]
    pub(crate) fn bucket_fingerprints(&self, words: &BucketWords, bucket: u64) -> [u32; MAX_SLOTS] {
        let mut fps = [0; MAX_SLOTS];
        if W::SORTED {
            let sorted = W::sorted_fingerprints(words[0], self.locus(bucket).mask[0]);
            fps[..sorted.len()].copy_from_slice(&sorted);
        } else {
            for (s, fp) in fps.iter_mut().enumerate().take(W::SLOTS as usize) {
                *fp = self.slot_value(words, bucket, s as u32);
            }
        }
        fps
    }

    /// The fingerprint in slot `slot` of a bucket read by [`Self::load_bucket`]
    /// (plain layouts; [`Self::bucket_fingerprints`] for any).
    #[inline(always)]
    fn slot_value(&self, words: &BucketWords, bucket: u64, slot: u32) -> u32 {
        if W::LANES > W::SLOTS {
            // Half `bucket % 2` of the word (see `locus`).
            fpr::lane_value::<W>(words[0], (bucket % 2) as u32 * W::SLOTS + slot)
        } else {
            let k = (slot / W::LANES) as usize;
            fpr::lane_value::<W>(words[k], slot % W::LANES)
        }
    }

    /// Whether `words` (bucket `bucket`) hold `fp`: branch-free per word.
    #[inline(always)]
    fn holds(&self, words: &BucketWords, bucket: u64, fp: u32) -> bool {
        let mask = self.locus(bucket).mask;
        if W::WORDS_PER_BUCKET == 1 {
            W::holds_in(words[0], mask[0], fp)
        } else {
            fpr::matches_in_either::<W>(*words, mask, fp) != 0
        }
    }

    /// Nonzero if and only if bucket `a` or bucket `b`, their words in `wa`
    /// and `wb`, holds `fp` ([`fpr::matches_in_either`]): for buckets of one
    /// word, both in one comparison; else one comparison per bucket. `a` and
    /// `b` are a pair (each the other's alternate), which for buckets of
    /// 8-bit lanes says which half of each word is theirs
    /// ([`fpr::matches_in_halves`]).
    #[inline(always)]
    fn pair_matches(&self, wa: &BucketWords, a: u64, wb: &BucketWords, b: u64, fp: u32) -> u32 {
        if W::BITS == 8 && !W::SORTED {
            debug_assert_ne!(a % 2, b % 2, "the buckets of a pair are of opposite halves");
            return fpr::matches_in_halves::<W>([wa[0], wb[0]], a, fp);
        }
        let (ma, mb) = (self.locus(a).mask, self.locus(b).mask);
        if W::WORDS_PER_BUCKET == 1 {
            fpr::matches_in_either::<W>([wa[0], wb[0]], [ma[0], mb[0]], fp)
        } else {
            fpr::matches_in_either::<W>(*wa, ma, fp) | fpr::matches_in_either::<W>(*wb, mb, fp)
        }
    }

    // ----- single-bucket steps ---------------------------------------------

    /// CASes `fp` into an empty slot of `bucket`. False if the bucket is full.
    /// Retries only when the word changed under it (another operation's step).
    #[inline]
    pub(crate) fn put(&self, bucket: u64, fp: u32) -> bool {
        self.change_word(bucket, |word, mask| W::put_in(word, mask, fp))
    }

    /// CASes one copy of `fp` out of `bucket`. False if the bucket holds none.
    #[inline]
    fn take(&self, bucket: u64, fp: u32) -> bool {
        self.change_word(bucket, |word, mask| W::take_from(word, mask, fp))
    }

    /// The words of `bucket` that hold some of its lanes, as `(k, cell,
    /// mask)`: `k` the word's place in the bucket (its index in
    /// [`BucketWords`]), `mask` the high bits of the bucket's lanes in it.
    /// Every CAS loop on a bucket walks its words through this.
    #[inline(always)]
    pub(super) fn cells(&self, bucket: u64) -> impl Iterator<Item = (usize, &AtomicU64, u64)> + '_ {
        let locus = self.locus(bucket);
        (0..W::WORDS_PER_BUCKET).map(move |k| (k, self.word(locus.index(k)), locus.mask[k]))
    }

    /// Empty slots of a bucket read by [`Self::load_bucket`].
    #[inline(always)]
    pub(crate) fn free_slots(&self, words: &BucketWords, bucket: u64) -> u32 {
        let mask = self.locus(bucket).mask;
        (0..W::WORDS_PER_BUCKET)
            .map(|k| W::free_in(words[k], mask[k]))
            .sum()
    }

    /// [`Self::put`], but the first CAS on each word of `bucket` expects the
    /// value in `words` (read earlier by [`Self::load_bucket`]): see
    /// [`Self::change_expecting`].
    #[inline]
    pub(crate) fn put_expecting(&self, bucket: u64, words: BucketWords, fp: u32) -> bool {
        self.change_expecting(bucket, words, |word, mask| W::put_in(word, mask, fp))
    }

    /// [`Self::take`], but the first CAS on each word of `bucket` expects the
    /// value in `words` (read earlier by [`Self::load_bucket`]): see
    /// [`Self::change_expecting`]. False means only that this take found no
    /// copy, and the caller falls back on an announced, validated
    /// [`Self::remove_copy`].
    fn take_expecting(&self, bucket: u64, words: BucketWords, fp: u32) -> bool {
        self.change_expecting(bucket, words, |word, mask| W::take_from(word, mask, fp))
    }

    /// [`Self::change_word`], but the first CAS on each word of `bucket`
    /// expects the value in `words` instead of loading it: a stale value
    /// costs one failed CAS, which reads the word. A word whose value in
    /// `words` gives `change` nothing to do is not looked at again.
    #[inline(always)]
    fn change_expecting(
        &self,
        bucket: u64,
        words: BucketWords,
        change: impl Fn(u64, u64) -> Option<u64>,
    ) -> bool {
        for (k, cell, mask) in self.cells(bucket) {
            let mut word = words[k];
            while let Some(new) = change(word, mask) {
                match cell.compare_exchange(word, new, SUCCESS, FAILURE) {
                    Ok(_) => return true,
                    Err(now) => word = now,
                }
            }
        }
        false
    }

    /// The CAS loop of a single-bucket step: in each word of `bucket`,
    /// asks `change(word, mask)` (`mask` flagging the bucket's lanes of the
    /// word) for the word's new value and CASes it in. False once `change`
    /// has no new value for any word of the bucket. Retries only when the word
    /// changed under it (another operation's step), asking again with the
    /// value it failed on.
    #[inline(always)]
    fn change_word(&self, bucket: u64, change: impl Fn(u64, u64) -> Option<u64>) -> bool {
        for (_, cell, mask) in self.cells(bucket) {
            let mut word = cell.load(Ordering::Acquire);
            while let Some(new) = change(word, mask) {
                match cell.compare_exchange(word, new, SUCCESS, FAILURE) {
                    Ok(_) => return true,
                    Err(now) => word = now,
                }
            }
        }
        false
    }

    // ----- operations ------------------------------------------------------

    /// Whether the pair of `pos` holds its fingerprint, validated against
    /// concurrent relocation and removes (see [`relocation`]).
    ///
    /// The common case does not branch on the answer: both bucket loads are
    /// issued before either is compared, the answer is computed, and the
    /// branch asks "a miss while the counter moved?" (compiled as "did the
    /// counter move?" first), which is almost never true, so it is predicted
    /// right whatever the answer. A branch on the answer itself would be
    /// mispredicted on every other lookup of a mixed workload, and each
    /// misprediction also throws away the next lookups' cache misses already
    /// in flight.
    #[inline(always)]
    pub(crate) fn contains(&self, pos: Position) -> bool {
        let (matches, snapshot) = self.look_matches(pos);
        // Nonzero if a miss while the counter moved, and zero whenever the
        // counter stood still. Arithmetic on the drift and on the lane
        // matches, not on a `hit` flag: from `hit | unchanged`, and from
        // `drift & (hit - 1)` once the comparison was a vector compare, the
        // compiler made a branch on `hit` first, a coin flip on a mixed
        // workload (a `black_box` kept it one branch, for a store and a load
        // per lookup). `matches - 1` is no flag, so it tests the counter
        // first, which is predicted. (A hit with some `matches - 1` bits in
        // common with the drift also searches again; that needs the counter
        // to have moved, and the search answers at once.)
        //
        // A miss also searches again, the stash with it, while the stash
        // holds anything: that load after the bucket loads and before the
        // counter's, as [`stash`] explains.
        let stashed = u64::from(!self.stash.is_empty());
        let unsettled = (snapshot.drift() | stashed) & u64::from(matches).wrapping_sub(1);
        if unsettled != 0 {
            return self.contains_unsettled(pos.i1, pos.i2, pos.fp, matches, snapshot);
        }
        matches != 0
    }

    /// [`Self::contains`] when its look is not settled by the arithmetic
    /// above: a hit (whose `matches - 1` met the drift or the stash's flag),
    /// or a miss while the stash held something or the counter moved. A
    /// miss looks at the stash's line, then validates the whole look (after
    /// the line's loads), then, if the counter moved, searches again.
    #[cold]
    #[inline(never)]
    fn contains_unsettled(
        &self,
        i1: u64,
        i2: u64,
        fp: u32,
        matches: u32,
        snapshot: Snapshot<'_>,
    ) -> bool {
        if matches != 0 {
            return true;
        }
        if self.stash_holds(Position { i1, i2, fp }) {
            return true;
        }
        snapshot.drift() != 0 && self.contains_again(i1, i2, fp)
    }

    /// [`Self::contains`] of a 64-bit hash, not inlined: each width's
    /// lookup is its own function, saving only the registers it uses (see
    /// [`AnyTable::contains_hash`](any::AnyTable::contains_hash) for why some
    /// widths' lookups are not inlined).
    #[inline(never)]
    pub(crate) fn contains_hash_out_of_line(&self, hash: u64) -> bool {
        self.contains(self.position(hash))
    }

    /// [`Self::contains`] after a miss during which the pair's counter moved,
    /// or while the stash held something: search again, the stash too, until
    /// a search is validated.
    ///
    /// Takes the position's fields one by one: a `Position` argument is
    /// passed through memory, and the hot path would store it on every call.
    #[cold]
    #[inline(never)]
    fn contains_again(&self, i1: u64, i2: u64, fp: u32) -> bool {
        let pos = Position { i1, i2, fp };
        loop {
            let (hit, snapshot) = self.look(pos);
            if hit || self.stash_holds(pos) {
                return true;
            }
            if snapshot.unchanged() {
                return false;
            }
        }
    }

    /// Copies of the fingerprint of `pos` in its pair and in the stash, from
    /// a look validated whatever it found: both buckets loaded, then the
    /// stash's line if the stash holds anything, then the pair's counter,
    /// again until no fingerprint of the pair moved or was taken meanwhile.
    ///
    /// A lookup believes a hit without validation, since one copy seen is
    /// enough; a count may not: a copy moved from the bucket loaded second
    /// into the one loaded first, between the two loads, is seen in neither,
    /// while another copy is seen. Validated, the look sees every copy that
    /// was in the pair throughout it. It may also see a mover's copy before
    /// the mover takes the original (the pair holds both for that time).
    pub(crate) fn copies(&self, pos: Position) -> usize {
        loop {
            let snapshot = Snapshot::take(self.relocations.for_pair(pos.i1, pos.i2));
            let (a, b) = (self.load_bucket(pos.i1), self.load_bucket(pos.i2));
            let in_buckets =
                self.copies_in(&a, pos.i1, pos.fp) + self.copies_in(&b, pos.i2, pos.fp);
            let stashed = if self.stash.is_empty() {
                0
            } else {
                self.stash.copies(pos.i1.min(pos.i2), pos.fp)
            };
            if snapshot.unchanged() {
                return in_buckets as usize + stashed;
            }
        }
    }

    /// Copies of `fp` in `bucket`, whose words [`Self::load_bucket`] read.
    fn copies_in(&self, words: &BucketWords, bucket: u64, fp: u32) -> u32 {
        let mask = self.locus(bucket).mask;
        (0..W::WORDS_PER_BUCKET)
            .map(|k| W::copies_in(words[k], mask[k], fp))
            .sum()
    }

    /// Whether the stash holds the fingerprint of `pos` for its pair: its
    /// count loaded first (Acquire), then, unless zero, the pair's line. A
    /// search's last look, after its buckets and before its validation (see
    /// [`stash`]).
    #[inline]
    fn stash_holds(&self, pos: Position) -> bool {
        !self.stash.is_empty() && self.stash.holds(pos.i1.min(pos.i2), pos.fp)
    }

    /// One look for the fingerprint of `pos`: the pair's counter read, then
    /// both buckets loaded (both loads issued before either is compared) and
    /// compared. The answer may be believed if it is a hit, or if the
    /// snapshot is still [`unchanged`](Snapshot::unchanged) afterwards; every
    /// lookup (one, batched, or searching again) is made of these.
    #[inline(always)]
    fn look(&self, pos: Position) -> (bool, Snapshot<'_>) {
        let (matches, snapshot) = self.look_matches(pos);
        (matches != 0, snapshot)
    }

    /// [`Self::look`] with the answer as the number [`Self::pair_matches`]
    /// gives: nonzero for a hit.
    #[inline(always)]
    fn look_matches(&self, pos: Position) -> (u32, Snapshot<'_>) {
        let snapshot = Snapshot::take(self.relocations.for_pair(pos.i1, pos.i2));
        let (a, b) = (self.load_bucket(pos.i1), self.load_bucket(pos.i2));
        let matches = self.pair_matches(&a, pos.i1, &b, pos.i2, pos.fp);
        (matches, snapshot)
    }

    /// Removes one copy of the fingerprint of `pos` from its pair, validated
    /// like a lookup. False if (validly) none was there.
    ///
    /// The remove announces itself on the pair's stripe *before* it takes
    /// anything ([`Snapshot::announce`]): without that, an insert of a colliding
    /// item into one bucket plus this take from the other would be a move that
    /// no lookup can see (see [`relocation`], "unannounced moves").
    ///
    /// It takes from the pair's lower-numbered bucket when both hold a copy,
    /// and from the stash (see [`stash`]) only when neither does:
    /// the bucket a snapshot reads first. A copy that a snapshot did not
    /// save (put after the snapshot read its bucket) is then taken before a
    /// saved or unread one, so a remove of an item inserted during a snapshot
    /// never takes the copy a colliding item has in a bucket the snapshot has
    /// yet to read (see [`snapshot`]).
    pub(crate) fn remove_copy(&self, pos: Position) -> bool {
        let counter = self.relocations.for_pair(pos.i1, pos.i2);
        // The lower bucket first: see the documentation above.
        let (first, second) = (pos.i1.min(pos.i2), pos.i1.max(pos.i2));
        // The second bucket's miss overlaps the first's.
        self.prefetch_bucket(second, Reach::Next);
        let mut snapshot = Snapshot::announce(counter);
        loop {
            // The stash last: to a snapshot it lies past every bucket.
            if self.take(first, pos.fp)
                || self.take(second, pos.fp)
                || (!self.stash.is_empty() && self.stash.take(first, pos.fp))
            {
                return true;
            }
            if snapshot.unchanged() {
                return false;
            }
            // Another mover or remove of the stripe ran meanwhile: search again.
            // This announcement still covers the one take this remove makes.
            snapshot = Snapshot::take(counter);
        }
    }

    /// Removes one item at `pos`; true if one was there.
    pub(crate) fn remove(&self, pos: Position) -> bool {
        let removed = self.remove_copy(pos);
        if removed {
            self.count.decrement(pos.i1);
        }
        removed
    }

    /// Moves one copy of `fp` from bucket `src` to its alternate bucket `dst`:
    /// copy into `dst`, publish the move, take a copy out of `src`. At every
    /// instant the fingerprint is in at least one of its buckets.
    ///
    /// False when the table no longer matches the path (`src` holds no `fp`
    /// any more, or `dst` filled up); the table is then unchanged but for
    /// valid moves. If the source holds no copy between the copy and the take
    /// (a remove or another mover took it), the copy just made is one too
    /// many, and one copy is removed from the pair instead, keeping the
    /// invariant. That take is a remove like any other, announced on the
    /// stripe.
    ///
    /// **By value, not by slot.** The move names a fingerprint and a bucket,
    /// not a slot: it takes *some* copy of `fp` out of `src`, the first its
    /// CAS finds. That is the same protocol as moving the copy of one slot:
    /// every copy of `fp` in `src` belongs to the same pair `{src, dst}` (the
    /// alternate depends only on the bucket and the fingerprint), and by the
    /// invariant at the top of this module copies of one fingerprint in one
    /// pair are interchangeable: which copy moves changes no item's
    /// findability and no count. Where a by-slot mover would find its slot
    /// emptied while another copy of `fp` stays in `src`, its fallback took
    /// that copy anyway (a remove of the pair looks in `src` first); the
    /// by-value take takes it directly, after the same announcement (the
    /// publish), and the move counts as made. A layout whose slots have no
    /// stable position (a bucket kept sorted) needs exactly this.
    ///
    /// From before its copy until it returns, the mover is in its stripe's
    /// in-flight count ([`relocation::Stripe::enter`]): a concurrent
    /// [`clear`](Self::clear) then leaves the fingerprints of the stripe alone,
    /// so that it never takes this mover's extra copy. (If it could, the
    /// pair would hold fewer copies than live items plus movers, and this
    /// mover's take or fallback could take the copy of an item inserted after
    /// the clear returned: see [`clear`].)
    pub(crate) fn relocate(&self, src: u64, fp: u32, dst: u64) -> bool {
        debug_assert_eq!(self.alternate(src, fp), dst);
        let words = self.load_bucket(src);
        if !self.holds(&words, src, fp) {
            return false;
        }
        let stripe = self.relocations.stripe(src, dst);
        let _in_flight = stripe.enter();
        if !self.put(dst, fp) {
            return false;
        }
        relocation::publish(self.relocations.for_pair(src, dst));
        let pos = Position {
            i1: src,
            i2: dst,
            fp,
        };
        if !self.move_may_complete(src, dst) {
            // A snapshot's front lies between the buckets, or on one of
            // them: take the copy back instead (see [`front`]). The item
            // stays in `src`.
            self.take_back_copy(Some(dst), pos);
            return false;
        }
        // The take is announced by the publish just before it, as a by-slot
        // clear was. Its CAS expects the words read before the copy (a
        // failed CAS reads the word again), so a move costs the loads it
        // always did.
        if self.take_expecting(src, words, fp) {
            return true;
        }
        self.take_back_copy(None, pos);
        false
    }

    /// Takes back the extra copy of the fingerprint of `pos` that a mover
    /// made and cannot complete its move with: one of `from`'s, if given and
    /// it still holds one, else one copy of the pair (a remove like any
    /// other, announced on the stripe). If no copy is left, a remove of an
    /// item that was not in the filter (a second remove of an item inserted
    /// once) took the mover's extra copy and returned true for it: that copy
    /// is counted back in, so that `len()` keeps agreeing with the table
    /// (guarantee 4: `len` is the number of fingerprints; only such a remove
    /// makes that differ from inserts minus removes, see `CuckooFilter::len`).
    fn take_back_copy(&self, from: Option<u64>, pos: Position) {
        let taken = from.is_some_and(|bucket| self.take(bucket, pos.fp));
        if !taken && !self.remove_copy(pos) {
            self.count.increment(pos.i1);
        }
    }
}

/// The table had no room (see [`crate::InsertError::Full`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Full;

#[cfg(test)]
mod tests;
