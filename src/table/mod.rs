//! The table: buckets of four fingerprints packed into atomic words, and the
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
//! number of live items with that pair and fingerprint plus the number of
//! movers between their copy and their clear. Copies of one fingerprint in one
//! pair are interchangeable, so it does not matter which copy a remove takes.
//!
//! This module is the table core: layout and addressing, the single-bucket
//! steps, lookups, removes and relocation. Beside it: [`path`] (the cuckoo path
//! search, built on those steps) and [`insert`] (which uses it), [`relocation`]
//! (the counters that validate lookups and removes), [`count`] (the item
//! count), [`memory`] (allocation, prefetching, huge pages), [`any`] (a table
//! of a width chosen at run time) and [`batch`] (pipelined lookups).

mod any;
mod batch;
mod clear;
mod count;
mod insert;
mod memory;
mod path;
mod relocation;

use std::marker::PhantomData;

use crate::error::AllocError;
use crate::fingerprint::{self as fpr, Width};
use crate::sync::{AtomicU64, Ordering};
use count::ItemCount;
use memory::{prefetch, zeroed_blocks, Block};
use relocation::{RelocationCounters, Snapshot};

pub(crate) use any::{dispatch, with_width, AnyTable};

/// Largest bucket count: bucket indices come from the low 32 bits of the hash.
pub(crate) const MAX_BUCKETS: u64 = 1 << 32;

/// Words that `buckets` buckets of `bits`-bit fingerprints fill (4 slots a
/// bucket, 64 bits a word). At most 2^33 for the largest table.
pub(crate) fn words_for(bits: u32, buckets: u64) -> u64 {
    (buckets * u64::from(SLOTS) * u64::from(bits)).div_ceil(64)
}

/// Bytes of table memory for `buckets` buckets of `bits`-bit fingerprints:
/// whole 16-byte blocks (see [`Block`]).
pub(crate) fn table_bytes_for(bits: u32, buckets: u64) -> u64 {
    words_for(bits, buckets).div_ceil(2) * 16
}

/// Whether a table can have `buckets` buckets: even (see
/// [`Table::alternate`]), at least 2, at most [`MAX_BUCKETS`].
pub(crate) fn valid_bucket_count(buckets: u64) -> bool {
    buckets % 2 == 0 && (2..=MAX_BUCKETS).contains(&buckets)
}

/// Slots per bucket (fixed by the lane layout, see [`crate::fingerprint`]).
pub(crate) use crate::fingerprint::SLOTS;

const SUCCESS: Ordering = Ordering::AcqRel;
const FAILURE: Ordering = Ordering::Acquire;

/// Where an item lives: its two candidate buckets and its fingerprint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) i1: u64,
    pub(crate) i2: u64,
    pub(crate) fp: u32,
}

/// One bucket's place in memory: its first word, and the high bits of the
/// lanes that belong to it in each of its words.
#[derive(Clone, Copy)]
struct Locus {
    first: usize,
    mask: u64,
}

/// A bucket's words as read by one set of loads (the unused second word of a
/// one-word bucket stays 0 and is never looked at).
pub(crate) type BucketWords = [u64; 2];

/// A table of `buckets` buckets of fingerprints of width `W`.
pub(crate) struct Table<W: Width> {
    blocks: Box<[Block]>,
    buckets: u64,
    relocations: RelocationCounters,
    count: ItemCount,
    width: PhantomData<W>,
}

impl<W: Width> Table<W> {
    /// An empty table, or an error if its memory cannot be allocated.
    /// `buckets` must be even and in `2..=MAX_BUCKETS` (the builder checks).
    pub(crate) fn new(buckets: u64) -> Result<Self, AllocError> {
        debug_assert!(valid_bucket_count(buckets));
        let blocks = usize::try_from(Self::words_for(buckets).div_ceil(2))
            .map_err(|_| Self::alloc_error(buckets))?;
        Ok(Self {
            blocks: zeroed_blocks(blocks).ok_or_else(|| Self::alloc_error(buckets))?,
            buckets,
            relocations: RelocationCounters::new(buckets),
            count: ItemCount::new(),
            width: PhantomData,
        })
    }

    /// Words needed for `buckets` buckets.
    pub(crate) fn words_for(buckets: u64) -> u64 {
        words_for(W::BITS, buckets)
    }

    /// The error for a table of `buckets` buckets that cannot be allocated.
    pub(crate) fn alloc_error(buckets: u64) -> AllocError {
        AllocError {
            bytes: table_bytes_for(W::BITS, buckets),
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
    /// `h(fp)` is the high half of `fp` times an odd constant, scaled onto
    /// `0..n/2` by multiply-shift.
    #[inline(always)]
    pub(crate) fn alternate(&self, bucket: u64, fp: u32) -> u64 {
        let twins = self.buckets / 2;
        let h = ((u64::from(fp).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) * twins) >> 32;
        let s = bucket / 2;
        let reflected = if h >= s { h - s } else { h + twins - s };
        (2 * reflected) | ((bucket & 1) ^ 1)
    }

    #[inline(always)]
    fn word(&self, index: usize) -> &AtomicU64 {
        &self.blocks[index / 2].0[index % 2]
    }

    #[inline(always)]
    fn locus(&self, bucket: u64) -> Locus {
        let first_slot = bucket as usize * SLOTS as usize;
        let first = first_slot / W::LANES as usize;
        let mask = if W::LANES > SLOTS {
            // Two buckets share the word: keep the four lanes that are ours.
            let lane = (first_slot % W::LANES as usize) as u32;
            W::HIGH & (((1u64 << (SLOTS * W::BITS)) - 1) << (lane * W::BITS))
        } else {
            W::HIGH
        };
        Locus { first, mask }
    }

    /// The word and lane of slot `slot` (0..4) of `bucket`.
    #[inline(always)]
    fn slot(&self, bucket: u64, slot: u32) -> (&AtomicU64, u32) {
        let first_slot = bucket as usize * SLOTS as usize;
        let index = first_slot + slot as usize;
        (
            self.word(index / W::LANES as usize),
            (index % W::LANES as usize) as u32,
        )
    }

    /// Starts loading `bucket` into the cache (see [`prefetch`]).
    #[inline(always)]
    pub(crate) fn prefetch_bucket(&self, bucket: u64) {
        prefetch(self.word(self.locus(bucket).first));
    }

    /// Loads a bucket's words (Acquire).
    #[inline(always)]
    pub(crate) fn load_bucket(&self, bucket: u64) -> BucketWords {
        let first = self.locus(bucket).first;
        let mut words = [0; 2];
        for (k, w) in words.iter_mut().enumerate().take(W::WORDS_PER_BUCKET) {
            *w = self.word(first + k).load(Ordering::Acquire);
        }
        words
    }

    /// The fingerprint in slot `slot` of a bucket read by [`Self::load_bucket`].
    #[inline(always)]
    pub(crate) fn slot_value(&self, words: &BucketWords, bucket: u64, slot: u32) -> u32 {
        let index = bucket as usize * SLOTS as usize + slot as usize;
        let word = words[slot as usize / W::SLOTS_PER_WORD as usize];
        fpr::lane_value::<W>(word, (index % W::LANES as usize) as u32)
    }

    /// Whether `words` (bucket `bucket`) hold `fp`: branch-free per word.
    #[inline(always)]
    fn holds(&self, words: &BucketWords, bucket: u64, fp: u32) -> bool {
        let mask = self.locus(bucket).mask;
        let pattern = fpr::broadcast::<W>(fp);
        let mut hits = 0;
        for w in words.iter().take(W::WORDS_PER_BUCKET) {
            hits |= fpr::zero_lanes::<W>(w ^ pattern) & mask;
        }
        hits != 0
    }

    // ----- single-bucket steps ---------------------------------------------

    /// CASes `fp` into an empty slot of `bucket`. False if the bucket is full.
    /// Retries only when the word changed under it (another operation's step).
    #[inline]
    pub(crate) fn put(&self, bucket: u64, fp: u32) -> bool {
        self.change_lane(bucket, fpr::zero_lanes::<W>, |word, lane| {
            fpr::with_lane::<W>(word, lane, fp)
        })
    }

    /// CASes one copy of `fp` out of `bucket`. False if the bucket holds none.
    #[inline]
    fn take(&self, bucket: u64, fp: u32) -> bool {
        let pattern = fpr::broadcast::<W>(fp);
        self.change_lane(
            bucket,
            |word| fpr::zero_lanes::<W>(word ^ pattern),
            fpr::without_lane::<W>,
        )
    }

    /// The one CAS loop of a single-bucket step: in each word of `bucket`,
    /// finds the first of its lanes that `find` flags (by their high bits) and
    /// CASes the word to `change(word, lane)`. False once no word of the bucket
    /// has a flagged lane. Retries only when the word changed under it (another
    /// operation's step), finding the lane again in the value it failed on.
    #[inline(always)]
    fn change_lane(
        &self,
        bucket: u64,
        find: impl Fn(u64) -> u64,
        change: impl Fn(u64, u32) -> u64,
    ) -> bool {
        let Locus { first, mask } = self.locus(bucket);
        for k in 0..W::WORDS_PER_BUCKET {
            let cell = self.word(first + k);
            let mut word = cell.load(Ordering::Acquire);
            loop {
                let flags = find(word) & mask;
                if flags == 0 {
                    break;
                }
                let lane = fpr::first_lane::<W>(flags);
                match cell.compare_exchange(word, change(word, lane), SUCCESS, FAILURE) {
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
    /// issued before either is compared, the answer is computed, and the one
    /// branch asks "a miss while the counter moved?", which is almost never
    /// true, so it is predicted right whatever the answer. A branch on the
    /// answer itself would be mispredicted on every other lookup of a mixed
    /// workload, and each misprediction also throws away the next lookups'
    /// cache misses already in flight.
    #[inline(always)]
    pub(crate) fn contains(&self, pos: Position) -> bool {
        let counter = self.relocations.for_pair(pos.i1, pos.i2);
        let snapshot = Snapshot::take(counter);
        let a = self.load_bucket(pos.i1);
        let b = self.load_bucket(pos.i2);
        let hit = self.holds(&a, pos.i1, pos.fp) | self.holds(&b, pos.i2, pos.fp);
        let settled = hit | snapshot.unchanged();
        // `black_box` keeps the compiler from splitting `settled` back into a
        // branch on `hit` followed by one on the counter (it does, otherwise).
        if !std::hint::black_box(settled) {
            return self.contains_again(pos);
        }
        hit
    }

    /// [`Self::contains`] after a miss during which the pair's counter moved:
    /// search again until a search is validated.
    #[cold]
    #[inline(never)]
    fn contains_again(&self, pos: Position) -> bool {
        let counter = self.relocations.for_pair(pos.i1, pos.i2);
        loop {
            let snapshot = Snapshot::take(counter);
            let a = self.load_bucket(pos.i1);
            let b = self.load_bucket(pos.i2);
            if self.holds(&a, pos.i1, pos.fp) | self.holds(&b, pos.i2, pos.fp) {
                return true;
            }
            if snapshot.unchanged() {
                return false;
            }
        }
    }

    /// Removes one copy of the fingerprint of `pos` from its pair, validated
    /// like a lookup. False if (validly) none was there.
    ///
    /// The remove announces itself on the pair's stripe *before* it takes
    /// anything ([`Snapshot::announce`]): without that, an insert of a colliding
    /// item into one bucket plus this take from the other would be a move that
    /// no lookup can see (see [`relocation`], "unannounced moves").
    pub(crate) fn remove_copy(&self, pos: Position) -> bool {
        let counter = self.relocations.for_pair(pos.i1, pos.i2);
        // The second bucket's miss overlaps the first's.
        self.prefetch_bucket(pos.i2);
        let mut snapshot = Snapshot::announce(counter);
        loop {
            if self.take(pos.i1, pos.fp) || self.take(pos.i2, pos.fp) {
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

    /// Moves the copy of `fp` in slot `slot` of bucket `src` to its alternate
    /// bucket `dst`: copy into `dst`, publish the move, clear the source. At
    /// every instant the fingerprint is in at least one of its buckets.
    ///
    /// False when the table no longer matches the path (the source slot holds
    /// something else, or `dst` filled up); the table is then unchanged but for
    /// valid moves. If the source copy vanishes between the copy and the clear
    /// (a remove or another mover took it), the copy just made is one too many,
    /// and one copy is removed from the pair instead, keeping the invariant.
    /// That take is a remove like any other, announced on the stripe.
    ///
    /// From before its copy until it returns, the mover is in its stripe's
    /// in-flight count ([`relocation::Stripe::enter`]): a concurrent
    /// [`clear`](Self::clear) then leaves the fingerprints of the stripe alone,
    /// so that it never takes this mover's extra copy. (If it could, the
    /// pair would hold fewer copies than live items plus movers, and this
    /// mover's clear or fallback could take the copy of an item inserted after
    /// the clear returned: see [`clear`].)
    pub(crate) fn relocate(&self, src: u64, slot: u32, fp: u32, dst: u64) -> bool {
        debug_assert_eq!(self.alternate(src, fp), dst);
        let (cell, lane) = self.slot(src, slot);
        let mut word = cell.load(Ordering::Acquire);
        if fpr::lane_value::<W>(word, lane) != fp {
            return false;
        }
        let stripe = self.relocations.stripe(src, dst);
        let _in_flight = stripe.enter();
        if !self.put(dst, fp) {
            return false;
        }
        relocation::publish(self.relocations.for_pair(src, dst));
        loop {
            if fpr::lane_value::<W>(word, lane) != fp {
                let pos = Position {
                    i1: src,
                    i2: dst,
                    fp,
                };
                if !self.remove_copy(pos) {
                    // No copy left to take back: a remove of an item that was
                    // not in the filter (a second remove of an item inserted
                    // once) took this mover's extra copy, and returned true for
                    // it. Count that copy back in, so that `len()` keeps
                    // agreeing with the table (guarantee 4's "equals the number
                    // of fingerprints in the table").
                    self.count.increment(src);
                }
                return false;
            }
            match cell.compare_exchange(word, fpr::without_lane::<W>(word, lane), SUCCESS, FAILURE)
            {
                Ok(_) => return true,
                Err(now) => word = now,
            }
        }
    }

    /// Number of words that hold buckets (the rest of the last line is padding).
    pub(crate) fn word_count(&self) -> usize {
        Self::words_for(self.buckets) as usize
    }

    /// The bucket words in order, for the byte format. Exact when quiescent.
    pub(crate) fn words(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.word_count()).map(|i| self.word(i).load(Ordering::Acquire))
    }

    /// A table of `buckets` buckets whose words are `words` (exactly
    /// `words_for(buckets)` of them; extra ones are ignored, missing ones stay
    /// empty) and whose count is `len`, or an error if allocation fails.
    pub(crate) fn from_words(
        buckets: u64,
        words: impl IntoIterator<Item = u64>,
        len: usize,
    ) -> Result<Self, AllocError> {
        let table = Self::new(buckets)?;
        for (i, w) in words.into_iter().take(table.word_count()).enumerate() {
            table.word(i).store(w, Ordering::Relaxed);
        }
        table.count.set(len);
        Ok(table)
    }

    /// Calls `f(bucket, fingerprint)` for every occupied slot. Exact only when
    /// no operation is in flight.
    pub(crate) fn for_each_fingerprint(&self, mut f: impl FnMut(u64, u32)) {
        for bucket in 0..self.buckets {
            let words = self.load_bucket(bucket);
            for slot in 0..SLOTS {
                let fp = self.slot_value(&words, bucket, slot);
                if fp != 0 {
                    f(bucket, fp);
                }
            }
        }
    }
}

/// The table had no room (see [`crate::InsertError::Full`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Full;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::{W16, W32, W8};

    fn involution<W: Width>(buckets: u64) {
        let t = Table::<W>::new(buckets).unwrap();
        for b in 0..buckets.min(300) {
            for fp in [1u32, 2, 3, 77, 255, W::MAX as u32] {
                let a = t.alternate(b, fp);
                assert!(a < buckets);
                assert_ne!(a, b, "no fingerprint is its own alternate");
                assert_eq!(t.alternate(a, fp), b);
            }
        }
    }

    #[test]
    fn alternate_is_an_involution_for_any_size() {
        for n in [2, 4, 6, 14, 64, 1000, 1022] {
            involution::<W8>(n);
            involution::<W16>(n);
            involution::<W32>(n);
        }
    }

    fn buckets_are_independent<W: Width>() {
        // Fill every slot of every bucket with a distinct value and read back.
        let buckets = 12;
        let t = Table::<W>::new(buckets).unwrap();
        for b in 0..buckets {
            for s in 0..SLOTS {
                assert!(t.put(b, (b * 4 + u64::from(s) + 1) as u32));
            }
            assert!(!t.put(b, 99));
        }
        for b in 0..buckets {
            let words = t.load_bucket(b);
            for s in 0..SLOTS {
                assert_eq!(
                    t.slot_value(&words, b, s),
                    (b * 4 + u64::from(s) + 1) as u32
                );
            }
            assert!(t.holds(&words, b, (b * 4 + 1) as u32));
            assert!(
                !t.holds(&words, b, (b * 4 + 5) as u32),
                "neighbour's lane leaked"
            );
        }
        assert!(t.take(3, 14));
        assert!(!t.take(3, 14));
        assert!(t.put(3, 14));
    }

    #[test]
    fn buckets_do_not_overlap() {
        buckets_are_independent::<W8>();
        buckets_are_independent::<W16>();
        buckets_are_independent::<W32>();
    }

    #[test]
    fn relocate_moves_exactly_one_copy() {
        let t = Table::<W16>::new(64).unwrap();
        let fp = 1234;
        let src = 5;
        let dst = t.alternate(src, fp);
        assert!(t.put(src, fp));
        let words = t.load_bucket(src);
        let slot = (0..SLOTS)
            .find(|&s| t.slot_value(&words, src, s) == fp)
            .unwrap();
        assert!(t.relocate(src, slot, fp, dst));
        assert!(!t.holds(&t.load_bucket(src), src, fp));
        assert!(t.holds(&t.load_bucket(dst), dst, fp));
        // A stale path (the source slot is empty now) changes nothing.
        assert!(!t.relocate(src, slot, fp, dst));
        let mut n = 0;
        t.for_each_fingerprint(|_, _| n += 1);
        assert_eq!(n, 1);
    }
}
