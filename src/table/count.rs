//! The item count behind `len()`, sharded so that inserts and removes on
//! different cores do not fight over one cache line, and so that a thread
//! counting alone pays no atomic read-modify-write.

use crate::sync::chain::{Chained, Link};
use crate::sync::{AtomicIsize, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;

/// Owned-shard indices of the process: the threads, at most, that count
/// without an atomic read-modify-write (one bit each of [`ShardSlots`]'s
/// word). A shard belongs to one thread at a time, which changes it by a
/// plain load and store (no `lock`ed instruction on x86). Under loom every
/// thread uses the shared shards: loom's threads are not the operating
/// system's, so a thread-local slot would not tell them apart. (The hand-over
/// of an owned shard from one thread to the next, [`ShardSlots`], has a loom
/// model of its own: loom-tests/tests/count.rs.)
const OWNED: usize = if cfg!(lockfree_cuckoo_filter_loom) {
    0
} else {
    usize::BITS as usize
};

/// Owned shards of a small table. A table of `b` buckets has owned shards
/// for `b /` [`BUCKETS_PER_OWNED`] indices, at least this many and at most
/// [`OWNED`] (from a million slots at 16 bits): an 8-byte link each, and a
/// 128-byte shard behind it once a thread holding that index has counted
/// into the table. A thread whose index is past a table's owned shards
/// counts into its shared ones. Big tables get them all because the
/// threads without one all update the few shared shards, whose lines then
/// move between cores on every update: on 16 cores, with 12 owned shards,
/// removes on a big table run slower at 12 and 16 threads than at 8.
const MIN_OWNED: usize = if cfg!(lockfree_cuckoo_filter_loom) {
    0
} else {
    12
};

/// Buckets per owned shard past [`MIN_OWNED`]: a link per 16 KiB (8-bit) to
/// 64 KiB (32-bit) of words.
const BUCKETS_PER_OWNED: u64 = 4096;

/// Shards for threads that hold no owned shard of the table, changed by
/// atomic read-modify-writes, spread by the item's first bucket; a table
/// smaller than [`ONE_SHARED_BELOW`] has one.
const SHARED: usize = if cfg!(lockfree_cuckoo_filter_loom) {
    1
} else {
    4
};

/// Tables of fewer bytes than this have one shared shard rather than
/// [`SHARED`]: 384 bytes less, in a table whose words are few lines that its
/// writers share anyway.
const ONE_SHARED_BELOW: usize = 16 << 10;

/// Successful inserts minus successful removes, spread over padded shards.
///
/// Up to [`OWNED`] live threads of the process hold an owned-shard index
/// each, the same in every table: while thread `t` holds index `k`, it alone
/// writes owned shard `k` of each table that has one (the table's size sets
/// how many it has: [`owned_shards`]), so its update is a load and a store.
/// An owned shard is allocated by the first holder of its index to count
/// into the table (and published by compare-and-swap on its link, as the
/// stash's lines are), so that a table holds lines for the threads that
/// wrote it, not for every thread that might: a filter written by one
/// thread carries one line, not twelve to sixty-four, which in a filter of
/// a thousand items would be as much memory as its table. The price is one
/// more load, of the link, on each count.
/// A thread takes an index when it first counts, from the process's
/// [`ShardSlots`], and hands it back when it exits; the next thread to take
/// it continues the shard's count (see [`ShardSlots`] for why it sees the
/// count it continues). A thread that finds no index free counts into a
/// shared shard chosen by the item's first bucket, by `fetch_add`, and
/// tries again for an index on its next count. A count is never lost: each owned shard has one writer at a time,
/// and the shared ones are only changed atomically.
///
/// Relaxed: the count is exact once no operation is in flight, because
/// whatever made the operations "finished" (a join, a channel, a lock in the
/// caller) also orders their counter updates before the read; while
/// operations are in flight, `len` is a moment's estimate.
///
/// The owned path is what makes an uncontended insert cheap: its CAS is the
/// only `lock`ed instruction left, where a `fetch_add` on the count would be a
/// second full barrier on every insert and remove (about 12 % of an insert
/// into a table in L3). Loom cannot check the thread-local part (see
/// [`OWNED`]); the test `owned_and_shared_shards_lose_no_count` fails if two
/// threads ever share an owned shard (checked by giving every thread shard
/// 0), and `threads_that_come_and_go_lose_no_count` runs thread after thread
/// through the hand-over.
pub(crate) struct ItemCount {
    /// Owned shard `k` hangs from link `k` once a holder of index `k` has
    /// counted here.
    owned: Box<[Link<Shard>]>,
    /// A power of two of them, so that the item's bucket picks one by a mask.
    shared: Box<[CachePadded<AtomicIsize>]>,
}

/// An owned shard: a count on a line of its own.
#[repr(align(128))]
struct Shard {
    count: AtomicIsize,
    /// Never followed: each shard hangs from its index's own link.
    link: Link<Shard>,
}

impl Chained for Shard {
    fn link(&self) -> &Link<Self> {
        &self.link
    }
}

/// Which owned-shard indices no live thread holds: bit `k` is set while
/// index `k` is free. Taken and handed back by compare-and-swap and
/// `fetch_or`, so no thread waits for another: a take retries only when
/// another thread took or handed back an index meanwhile.
///
/// **The hand-over.** Owned shards are written with Relaxed loads and stores,
/// so what orders a shard's writes by its old holder before those by its next
/// one is this bitmap: the old holder hands its index back with a Release
/// `fetch_or` after its last write, and the next holder takes it with an
/// Acquire CAS that reads that `fetch_or`'s value or a later one (a later
/// value is written by read-modify-writes, which continue the release
/// sequence). So the next holder's first load of the shard sees the old
/// holder's last store, in every table, and continues its count. The loom
/// model `a_shard_handed_back_is_seen_by_its_next_owner` fails with either
/// side Relaxed.
pub(crate) struct ShardSlots {
    free: AtomicUsize,
}

impl ShardSlots {
    /// `n` free indices, `0..n` (`n` at most the bits of a `usize`).
    #[cfg_attr(not(any(test, feature = "test-hooks")), allow(dead_code))]
    pub(crate) fn new(n: usize) -> Self {
        Self {
            free: AtomicUsize::new(all_free(n)),
        }
    }

    /// A free index, now held by the caller, or `None` if every index is
    /// held.
    pub(crate) fn take(&self) -> Option<usize> {
        let mut free = self.free.load(Ordering::Relaxed);
        loop {
            if free == 0 {
                return None;
            }
            let k = free.trailing_zeros() as usize;
            // Acquire: see the type's documentation, "the hand-over".
            match self.free.compare_exchange_weak(
                free,
                free & !(1 << k),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(k),
                Err(now) => free = now,
            }
        }
    }

    /// Hands back index `k`, held by the caller, after its last write to the
    /// shards of that index.
    pub(crate) fn give_back(&self, k: usize) {
        // Release: see the type's documentation, "the hand-over".
        self.free.fetch_or(1 << k, Ordering::Release);
    }
}

/// Owned shards of a table of `buckets` buckets (see [`MIN_OWNED`]).
fn owned_shards(buckets: u64) -> usize {
    let wanted = usize::try_from(buckets / BUCKETS_PER_OWNED).unwrap_or(usize::MAX);
    wanted.clamp(MIN_OWNED, OWNED)
}

/// The bitmap with indices `0..n` free.
const fn all_free(n: usize) -> usize {
    if n >= usize::BITS as usize {
        usize::MAX
    } else {
        (1 << n) - 1
    }
}

/// This thread's owned shard, or `None`: under loom there are none (see
/// [`OWNED`]).
#[cfg(lockfree_cuckoo_filter_loom)]
#[inline(always)]
fn owned_slot() -> Option<usize> {
    None
}

#[cfg(not(lockfree_cuckoo_filter_loom))]
use holder::owned_slot;

/// Which owned shard this thread holds: the process's indices and the
/// thread-local that takes one and hands it back.
#[cfg(not(lockfree_cuckoo_filter_loom))]
mod holder {
    use std::cell::Cell;

    use super::{all_free, ShardSlots, OWNED};
    use crate::sync::AtomicUsize;

    /// The process's owned-shard indices, shared by every table.
    static SLOTS: ShardSlots = ShardSlots {
        free: AtomicUsize::new(all_free(OWNED)),
    };

    /// A thread's owned-shard index: [`NOT_HELD`] until it first counts, or
    /// while every index is held by other threads. Handed back when the
    /// thread exits.
    struct Holder(Cell<usize>);

    /// A [`Holder`] holding no index.
    const NOT_HELD: usize = usize::MAX;

    impl Drop for Holder {
        fn drop(&mut self) {
            if self.0.get() != NOT_HELD {
                SLOTS.give_back(self.0.get());
            }
        }
    }

    thread_local! {
        /// This thread's owned-shard index (see [`Holder`]).
        static HOLDER: Holder = const { Holder(Cell::new(NOT_HELD)) };
    }

    /// This thread's owned shard, or `None` if it holds none: every index
    /// is held by other threads, or the thread is exiting and its index
    /// already handed back.
    #[inline(always)]
    pub(super) fn owned_slot() -> Option<usize> {
        HOLDER
            .try_with(|h| {
                let mut k = h.0.get();
                if k == NOT_HELD {
                    k = take_slot()?;
                    h.0.set(k);
                }
                Some(k)
            })
            .ok()
            .flatten()
    }

    /// [`ShardSlots::take`] on the process's indices, out of line: a thread
    /// takes one once, or on every count while all are held.
    #[cold]
    #[inline(never)]
    fn take_slot() -> Option<usize> {
        SLOTS.take()
    }
}

impl ItemCount {
    /// The count of a table of `buckets` buckets in `bytes` bytes, with
    /// [`owned_shards`] of them owned shards (none allocated yet).
    pub(crate) fn new(buckets: u64, bytes: usize) -> Self {
        let shared = if bytes < ONE_SHARED_BELOW { 1 } else { SHARED };
        Self {
            owned: (0..owned_shards(buckets)).map(|_| Link::new()).collect(),
            shared: (0..shared)
                .map(|_| CachePadded::new(AtomicIsize::new(0)))
                .collect(),
        }
    }

    /// Owned shard `k`, allocated at its first use; `None` past the
    /// table's owned shards.
    #[inline(always)]
    fn owned_shard(&self, k: usize) -> Option<&AtomicIsize> {
        let link = self.owned.get(k)?;
        let shard = match link.get() {
            Some(shard) => shard,
            None => Self::allocate(link),
        };
        Some(&shard.count)
    }

    /// Allocates the shard of `link`, out of line: once per thread and table.
    #[cold]
    #[inline(never)]
    fn allocate(link: &Link<Shard>) -> &Shard {
        link.get_or_chain(|| Shard {
            count: AtomicIsize::new(0),
            link: Link::new(),
        })
    }

    /// The owned shards allocated so far.
    fn allocated(&self) -> impl Iterator<Item = &AtomicIsize> {
        self.owned
            .iter()
            .filter_map(|link| link.get().map(|s| &s.count))
    }

    /// Adds `delta` (negative for removes) to this thread's shard.
    #[inline(always)]
    fn change(&self, key: u64, delta: isize) {
        self.change_as(owned_slot(), key, delta);
    }

    /// [`Self::change`] by the holder of owned shard `slot`, or into a
    /// shared shard if `None`.
    #[inline(always)]
    fn change_as(&self, slot: Option<usize>, key: u64, delta: isize) {
        match slot.and_then(|k| self.owned_shard(k)) {
            Some(shard) => {
                // This thread is the shard's only writer (see the type's
                // documentation): no update can fall between the two.
                shard.store(
                    shard.load(Ordering::Relaxed).wrapping_add(delta),
                    Ordering::Relaxed,
                );
            }
            None => {
                let spread = key as usize & (self.shared.len() - 1);
                self.shared[spread].fetch_add(delta, Ordering::Relaxed);
            }
        }
    }

    /// Counts one item in.
    #[inline(always)]
    pub(crate) fn increment(&self, key: u64) {
        self.change(key, 1);
    }

    /// Counts one item out.
    #[inline(always)]
    pub(crate) fn decrement(&self, key: u64) {
        self.change(key, -1);
    }

    /// Counts `n` items in at once.
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn add(&self, key: u64, n: usize) {
        self.change(key, n as isize);
    }

    /// Counts `n` items out at once.
    #[inline(always)]
    pub(crate) fn sub(&self, key: u64, n: usize) {
        self.change(key, (n as isize).wrapping_neg());
    }

    /// Every shard, owned then shared.
    fn all(&self) -> impl Iterator<Item = &AtomicIsize> {
        self.allocated().chain(self.shared.iter().map(|s| &**s))
    }

    /// The count. Shards may be negative on their own (a remove counted before
    /// the insert it undoes is seen); the sum is clamped at zero mid-flight.
    pub(crate) fn get(&self) -> usize {
        let sum = self
            .all()
            .fold(0isize, |acc, s| acc.wrapping_add(s.load(Ordering::Relaxed)));
        sum.max(0) as usize
    }

    /// Sets the count to zero; only while the table is not shared.
    pub(crate) fn reset(&self) {
        for s in self.all() {
            s.store(0, Ordering::Relaxed);
        }
    }

    /// Sets the count to `n`; only while the table is not shared (decoding).
    pub(crate) fn set(&self, n: usize) {
        self.reset();
        self.shared[0].store(n as isize, Ordering::Relaxed);
    }

    /// Bytes held by the shards and the owned shards' links.
    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of_val(&*self.owned)
            + self.allocated().count() * std::mem::size_of::<Shard>()
            + std::mem::size_of_val(&*self.shared)
    }
}

impl Drop for ItemCount {
    fn drop(&mut self) {
        for link in self.owned.iter_mut() {
            link.free_chain();
        }
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;

    #[test]
    fn counts_across_shards_and_clamps_mid_flight() {
        let c = ItemCount::new(2, 64);
        for key in 0..100 {
            c.increment(key);
        }
        for key in 0..40 {
            c.decrement(key);
        }
        assert_eq!(c.get(), 60);
        // A remove counted before its insert: one shard negative, sum clamped.
        let d = ItemCount::new(2, 64);
        d.decrement(3);
        assert_eq!(d.get(), 0);
        d.increment(3);
        assert_eq!(d.get(), 0);
        c.set(7);
        assert_eq!(c.get(), 7);
        c.reset();
        assert_eq!(c.get(), 0);
    }

    #[test]
    fn owned_and_shared_shards_lose_no_count() {
        // More threads than owned-shard indices: thread `t` holds index `t`,
        // as if it had taken it, and those beyond hold none and share; each
        // counts into a small table's count (indices past its owned shards
        // share too) and a big one's. All start together, so that two
        // writers of one shard (the bug this catches) would overlap and lose
        // counts. (The indices are given here, not taken from the process's,
        // which other tests' threads hold some of: this test is of the
        // shards, `threads_that_come_and_go_lose_no_count` of the taking.
        // Giving every thread shard 0, the bug, loses counts and fails the
        // sum.)
        let small = ItemCount::new(2, 64);
        let big = ItemCount::new(u64::MAX, usize::MAX);
        assert_eq!((small.owned.len(), big.owned.len()), (MIN_OWNED, OWNED));
        let threads = OWNED + 3;
        let rounds = 50_000;
        let start = std::sync::Barrier::new(threads);
        std::thread::scope(|s| {
            for t in 0..threads as u64 {
                let (small, big, start) = (&small, &big, &start);
                s.spawn(move || {
                    let slot = (t < OWNED as u64).then_some(t as usize);
                    start.wait();
                    for c in [small, big] {
                        for key in 0..rounds {
                            c.change_as(slot, key ^ t, 1);
                            if key % 4 == 0 {
                                c.change_as(slot, key, -1);
                            }
                        }
                        c.change_as(slot, t, 10);
                        c.change_as(slot, t, -5);
                    }
                });
            }
        });
        let expected = threads * (rounds as usize * 3 / 4 + 5);
        assert_eq!((small.get(), big.get()), (expected, expected));
    }

    #[test]
    fn threads_that_come_and_go_lose_no_count() {
        // Waves of threads, each thread counting through `owned_slot` (taking
        // an index of the process's when one is free, handing it back as it
        // exits), more threads per wave than indices: every index changes
        // hands many times, and a thread still writing a shard whose index
        // another had taken (the bug this catches) would lose counts.
        let c = ItemCount::new(u64::MAX, usize::MAX);
        let (waves, per_wave, rounds) = (20, OWNED + 4, 20_000u64);
        for wave in 0..waves {
            std::thread::scope(|s| {
                for t in 0..per_wave as u64 {
                    let c = &c;
                    s.spawn(move || {
                        for key in 0..rounds {
                            c.increment(key ^ t ^ wave);
                            if key % 4 == 0 {
                                c.decrement(key);
                            }
                        }
                    });
                }
            });
        }
        assert_eq!(c.get(), waves as usize * per_wave * rounds as usize * 3 / 4);
    }

    #[test]
    fn big_tables_get_more_owned_shards() {
        let owned = |buckets| ItemCount::new(buckets, usize::MAX).owned.len();
        assert_eq!(owned(0), MIN_OWNED);
        assert_eq!(owned(13 * BUCKETS_PER_OWNED - 1), MIN_OWNED);
        assert_eq!(owned(13 * BUCKETS_PER_OWNED), 13);
        assert_eq!(owned(1 << 18), OWNED);
        assert_eq!(owned(u64::MAX), OWNED);
    }

    #[test]
    fn an_index_past_a_tables_owned_shards_counts_into_a_shared_one() {
        let small = ItemCount::new(2, 64);
        let owned = |c: &ItemCount| c.allocated().map(|s| s.load(Ordering::Relaxed)).sum();
        let shard =
            |c: &ItemCount, k: usize| c.owned[k].get().map(|s| s.count.load(Ordering::Relaxed));
        small.change_as(Some(MIN_OWNED), 7, 1);
        small.change_as(Some(OWNED - 1), 7, 1);
        assert_eq!((owned(&small), small.get()), (0, 2));
        small.change_as(Some(MIN_OWNED - 1), 7, 1);
        assert_eq!(shard(&small, MIN_OWNED - 1), Some(1));
        let big = ItemCount::new(u64::MAX, usize::MAX);
        big.change_as(Some(OWNED - 1), 7, 1);
        assert_eq!(shard(&big, OWNED - 1), Some(1));
    }

    #[test]
    fn owned_shards_are_allocated_by_the_indices_that_count() {
        // None at first: the links, and the shared shards (one in a small
        // table, four in a big one).
        let big = ItemCount::new(1 << 20, 1 << 30);
        let links = std::mem::size_of_val(&*big.owned);
        let base = big.memory_usage();
        assert_eq!(base, links + SHARED * 128);
        assert_eq!(std::mem::size_of::<Shard>(), 128);
        // Index 3 counting twice allocates one shard; index 5 another.
        big.change_as(Some(3), 1, 1);
        big.change_as(Some(3), 2, 1);
        assert_eq!(big.memory_usage(), base + 128);
        big.change_as(Some(5), 1, -1);
        assert_eq!(big.memory_usage(), base + 2 * 128);
        assert_eq!(big.get(), 1);
        let small = ItemCount::new(2, 64);
        assert_eq!(small.memory_usage(), MIN_OWNED * 8 + 128);
        small.change_as(None, 1, 1);
        small.change_as(None, 2, 1);
        small.change_as(Some(0), 3, 1);
        assert_eq!(
            (small.get(), small.memory_usage()),
            (3, MIN_OWNED * 8 + 256)
        );
        small.reset();
        assert_eq!(small.get(), 0);
    }

    #[test]
    fn shard_slots_are_taken_lowest_first_and_handed_back() {
        let slots = ShardSlots::new(3);
        assert_eq!(
            [slots.take(), slots.take(), slots.take()],
            [Some(0), Some(1), Some(2)]
        );
        assert_eq!(slots.take(), None);
        slots.give_back(1);
        assert_eq!(slots.take(), Some(1));
        assert_eq!(slots.take(), None);
        assert_eq!(all_free(usize::BITS as usize), usize::MAX);
        assert_eq!(all_free(0), 0);
        let all = ShardSlots::new(usize::BITS as usize);
        assert!((0..usize::BITS as usize).all(|k| all.take() == Some(k)));
        assert_eq!(all.take(), None);
    }
}
