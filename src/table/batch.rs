//! Batched lookups: each lookup's bucket loads are issued two groups ahead of
//! its comparison, so that many lookups' cache misses overlap.

use super::{Position, Reach, Table};
use crate::fingerprint::Width;

/// Lookups a batch locates (and prefetches) at once; the pipeline runs two
/// groups ahead.
pub(crate) const GROUP: usize = 16;

/// Tables larger than this many bytes get the batch's requests into L2 only
/// ([`Reach::Later`](super::memory::Reach)); smaller ones into L1 as well.
///
/// Measured on a 2-core Xeon (Emerald Rapids: 2 MiB of L2 per core),
/// `contains_hash_batch` at 95 % load, 16 bits, into L1 against into L2 only,
/// two rounds each, interleaved (2026-11-24): 2 MiB tables 255-276 against
/// 223-258 M/s, 4 MiB 247-249 against 211-214, 8 MiB 212 against 193-206,
/// 16 MiB 151-157 against 161-162, 32 MiB 121-123 against 120-125, 64 MiB
/// 74-79 against 95; and `contains_batch` on the bulk workload at 30 M items
/// (64 MiB), three runs, 52-70 against 80-88. A profile of the batch at 64
/// MiB put most of its samples just after its prefetch instructions.
const FAR_TABLE_BYTES: usize = 16 << 20;

/// The positions of up to [`GROUP`] lookups, field by field.
///
/// Each field starts on a cache line. [`Table::locate`] writes them with
/// vector stores (16 or 32 bytes); with only the alignment of a `u64`, up to
/// three in eight of those stores could cross a line, each then a second
/// cache access, and how many did depended on where the ring landed in the
/// stack frame, which changed with how the code was split into codegen
/// units. On a 2-core Xeon (Emerald Rapids), 1 M items, 16 bits,
/// `target-cpu=native` and LTO, `contains_batch` ran at 144 to 166 M/s with
/// the default 16 codegen units and 190 to 197 with one; aligned, 181 to 199
/// with 16.
#[repr(C, align(64))]
struct Group {
    i1: [u64; GROUP],
    i2: [u64; GROUP],
    fp: [u32; GROUP],
}

const _: () = {
    use std::mem::{align_of, offset_of};
    assert!(align_of::<Group>() == 64);
    assert!(offset_of!(Group, i2) % 64 == 0 && offset_of!(Group, fp) % 64 == 0);
};

impl Group {
    const EMPTY: Self = Self {
        i1: [0; GROUP],
        i2: [0; GROUP],
        fp: [0; GROUP],
    };

    fn position(&self, k: usize) -> Position {
        Position {
            i1: self.i1[k],
            i2: self.i2[k],
            fp: self.fp[k],
        }
    }
}

impl<W: Width> Table<W> {
    /// Answers [`Self::contains`] for every item, writing `out[k]` for
    /// `items[k]` (both of one length), `hash` giving each item's hash.
    ///
    /// A software pipeline over the whole slice, a [`GROUP`] at a time: while
    /// group `g` is compared, group `g + 1`'s buckets are already on their
    /// way and group `g + 2`'s are requested, one lookup's pair per
    /// comparison, so that `2 · GROUP` to `4 · GROUP` cache misses are in
    /// flight all along, from the first lookup to the last, whatever the
    /// slice's length. Two groups ahead, not one: on a table much larger than
    /// the caches, a miss to memory takes longer than comparing one group
    /// (one ahead: 88 M/s at 30 M items, two: 110). And spread over the
    /// comparisons, not issued in a burst of `2 · GROUP` after locating:
    /// bursts filled the core's miss buffers (30 M items: 75 to 98 M/s).
    /// From a table larger than [`FAR_TABLE_BYTES`] the buckets are requested
    /// into L2 only.
    #[inline(always)]
    pub(crate) fn contains_batch<T>(
        &self,
        items: &[T],
        out: &mut [bool],
        hash: impl FnMut(&T) -> u64,
    ) {
        if self.word_count() * 8 > FAR_TABLE_BYTES {
            self.pipeline::<T, true>(items, out, hash);
        } else {
            self.pipeline::<T, false>(items, out, hash);
        }
    }

    /// [`Self::contains_batch`]'s pipeline; `FAR`: request the buckets into
    /// L2 only.
    #[inline(always)]
    fn pipeline<T, const FAR: bool>(
        &self,
        items: &[T],
        out: &mut [bool],
        mut hash: impl FnMut(&T) -> u64,
    ) {
        debug_assert_eq!(items.len(), out.len());
        // Group `g` lives in `ring[g % 3]`, so that no group is copied. Every
        // slot holds positions of this table (zeros before it is first filled,
        // a finished group's after the last group), so requesting the buckets
        // of a slot that holds no group ahead is only a wasted prefetch.
        let mut ring = [Group::EMPTY, Group::EMPTY, Group::EMPTY];
        let mut groups = items.chunks(GROUP);
        for group in &mut ring[..2] {
            if let Some(items) = groups.next() {
                self.locate(items, group, &mut hash);
                for k in 0..items.len() {
                    self.request::<FAR>(group, k);
                }
            }
        }
        let next_in_ring = |g: usize| if g == 2 { 0 } else { g + 1 };
        let (mut current, mut after) = (0, 2);
        for answers in out.chunks_mut(GROUP) {
            if let Some(items) = groups.next() {
                self.locate(items, &mut ring[after], &mut hash);
            }
            self.answer::<FAR>(&ring[current], answers, &ring[after]);
            current = next_in_ring(current);
            after = next_in_ring(after);
        }
    }

    /// Fills `group` with the positions of `items`: plain arithmetic from one
    /// array into three, which the compiler vectorizes for targets with wide
    /// vector multiplies (AVX2, AVX-512). A prefetch in this loop would keep
    /// it scalar; [`Self::answer`] issues them. See BENCHMARKS.md for what it
    /// saves.
    ///
    /// A full group goes through a loop of constant length, which is
    /// vectorized whole. Bounded by `items.len()`, the loop got a vector body
    /// for all but the last 8 items and a scalar tail for those, so half of
    /// every full group was located one item at a time (1 M items, 16 bits:
    /// 210 against 280 M/s).
    #[inline(always)]
    fn locate<T>(&self, items: &[T], group: &mut Group, hash: &mut impl FnMut(&T) -> u64) {
        match <&[T; GROUP]>::try_from(items) {
            Ok(full) => self.locate_each(full, group, hash),
            Err(_) => self.locate_each(items, group, hash),
        }
    }

    /// [`Self::locate`]'s loop.
    #[inline(always)]
    fn locate_each<T>(&self, items: &[T], group: &mut Group, hash: &mut impl FnMut(&T) -> u64) {
        for (k, item) in items.iter().enumerate().take(GROUP) {
            let pos = self.position(hash(item));
            group.i1[k] = pos.i1;
            group.i2[k] = pos.i2;
            group.fp[k] = pos.fp;
        }
    }

    /// Starts loading the two buckets of the `k`-th lookup of `group` into
    /// the cache (into L2 only if `FAR`); they are compared two groups later.
    #[inline(always)]
    fn request<const FAR: bool>(&self, group: &Group, k: usize) {
        let reach = if FAR { Reach::Later } else { Reach::Next };
        self.prefetch_bucket(group.i1[k], reach);
        self.prefetch_bucket(group.i2[k], reach);
    }

    /// Answers the first `out.len()` lookups of `group`, as [`Self::contains`]
    /// would, but with one branch per group instead of one per lookup: each
    /// lookup is validated as in `contains` (a hit, or a miss while its
    /// stripe's counter stood still), and only if some lookup of the group
    /// was not are the group's misses searched again, by `contains` itself.
    ///
    /// Before comparing its `k`-th lookup it requests the buckets of the
    /// `k`-th lookup of `ahead`, the group two ahead.
    #[inline(always)]
    fn answer<const FAR: bool>(&self, group: &Group, out: &mut [bool], ahead: &Group) {
        let mut settled = true;
        for (k, answer) in out.iter_mut().enumerate().take(GROUP) {
            self.request::<FAR>(ahead, k);
            let (hit, snapshot) = self.look(group.position(k));
            // The stash's count between the bucket loads and the counter's,
            // as in `contains`: a miss while it holds anything is searched
            // again, the stash with it.
            let unstashed = self.stash.is_empty();
            settled &= hit | (unstashed & snapshot.unchanged());
            *answer = hit;
        }
        if !settled {
            self.answer_again(group, out);
        }
    }

    /// The misses of a group in which a miss was not validated, searched
    /// again one by one.
    #[cold]
    #[inline(never)]
    fn answer_again(&self, group: &Group, out: &mut [bool]) {
        for (k, answer) in out.iter_mut().enumerate() {
            if !*answer {
                *answer = self.contains(group.position(k));
            }
        }
    }
}
