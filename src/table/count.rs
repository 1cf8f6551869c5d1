//! The item count behind `len()`, sharded so that inserts and removes on
//! different cores do not fight over one cache line, and so that a thread
//! counting alone pays no atomic read-modify-write.

use std::cell::Cell;

use crate::sync::{AtomicIsize, Ordering};
use crossbeam_utils::CachePadded;

/// Shards that each belong to one thread, which changes its shard by a plain
/// load and store (no `lock`ed instruction on x86). Under loom every thread
/// uses the shared shards: loom's threads are not the operating system's, so
/// a thread-local slot would not tell them apart.
const OWNED: usize = if cfg!(lockfree_cuckoo_filter_loom) {
    0
} else {
    12
};

/// Shards for the threads beyond the first [`OWNED`], changed by atomic
/// read-modify-writes, spread by the item's first bucket. With [`OWNED`],
/// 16 padded shards (2 KiB), as many as before the owned ones existed, so a
/// table's fixed overhead is unchanged.
const SHARED: usize = if cfg!(lockfree_cuckoo_filter_loom) {
    1
} else {
    4
};

/// Successful inserts minus successful removes, spread over padded shards.
///
/// The first [`OWNED`] threads of the process that count anything get a shard
/// each, in every table: thread `k` alone writes owned shard `k`, so its update
/// is a load and a store, and the shard always holds the net count of that
/// thread's operations. Every later thread counts into a shared shard chosen by
/// the item's first bucket, by `fetch_add`. A count is never lost: each owned
/// shard has one writer, and the shared ones are only changed atomically.
///
/// Relaxed: the count is exact once no operation is in flight, because
/// whatever made the operations "finished" (a join, a channel, a lock in the
/// caller) also orders their counter updates before the read; while
/// operations are in flight, `len` is a moment's estimate.
///
/// The owned path is what makes an uncontended insert cheap: its CAS is the
/// only `lock`ed instruction left, where a `fetch_add` on the count would be a
/// second full barrier on every insert and remove (about 12 % of an insert
/// into a table in L3). Loom cannot check it (see [`OWNED`]); the test
/// `owned_and_shared_shards_lose_no_count` fails if two threads ever share an
/// owned shard (checked by giving every thread shard 0).
pub(crate) struct ItemCount {
    owned: Box<[CachePadded<AtomicIsize>]>,
    shared: Box<[CachePadded<AtomicIsize>]>,
}

thread_local! {
    /// This thread's number for [`owned_slot`]: `usize::MAX` until it counts
    /// something, then its shard, or [`OWNED`] for a thread beyond them.
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// This thread's owned shard, or `None` for a thread beyond the first
/// [`OWNED`] (and always under loom).
#[inline(always)]
fn owned_slot() -> Option<usize> {
    if OWNED == 0 {
        return None;
    }
    // A plain std atomic: it hands out thread numbers, and is not part of
    // the table's protocol (so not one of `crate::sync`'s loom atomics).
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let slot = SLOT.with(|s| {
        let mut slot = s.get();
        if slot == usize::MAX {
            // Numbers are never reused: an exited thread's shard keeps its
            // count and gets no new writer.
            slot = NEXT
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .min(OWNED);
            s.set(slot);
        }
        slot
    });
    (slot < OWNED).then_some(slot)
}

impl ItemCount {
    pub(crate) fn new() -> Self {
        let shards = |n| {
            (0..n)
                .map(|_| CachePadded::new(AtomicIsize::new(0)))
                .collect()
        };
        Self {
            owned: shards(OWNED),
            shared: shards(SHARED),
        }
    }

    /// Adds `delta` (negative for removes) to this thread's shard.
    #[inline(always)]
    fn change(&self, key: u64, delta: isize) {
        match owned_slot() {
            Some(slot) => {
                // This thread is the shard's only writer (see the type's
                // documentation): no update can fall between the two.
                let shard = &self.owned[slot];
                shard.store(
                    shard.load(Ordering::Relaxed).wrapping_add(delta),
                    Ordering::Relaxed,
                );
            }
            None => {
                self.shared[key as usize % SHARED].fetch_add(delta, Ordering::Relaxed);
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
        self.owned.iter().chain(self.shared.iter()).map(|s| &**s)
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

    /// Bytes held by the shards.
    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of_val(&*self.owned) + std::mem::size_of_val(&*self.shared)
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;

    #[test]
    fn counts_across_shards_and_clamps_mid_flight() {
        let c = ItemCount::new();
        for key in 0..100 {
            c.increment(key);
        }
        for key in 0..40 {
            c.decrement(key);
        }
        assert_eq!(c.get(), 60);
        // A remove counted before its insert: one shard negative, sum clamped.
        let d = ItemCount::new();
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
        // More threads than owned shards: some count by load and store into
        // their own shard, the rest by `fetch_add` into the shared ones. All
        // start together, so that two writers of one shard (the bug this
        // catches) would overlap and lose counts.
        //
        // The process hands out owned shards once, to its first threads that
        // count (`NEXT`), and under `cargo test` earlier tests' threads have
        // taken them all. So each thread here takes its number itself, as
        // `owned_slot` would have given it in a fresh process: thread `t`
        // owns shard `t`, those beyond share. (Numbering every thread 0, the
        // bug, loses counts and fails the sum.)
        let c = ItemCount::new();
        let threads = 2 * OWNED + 3;
        let rounds = 100_000;
        let start = std::sync::Barrier::new(threads);
        std::thread::scope(|s| {
            for t in 0..threads as u64 {
                let (c, start) = (&c, &start);
                s.spawn(move || {
                    let slot = (t as usize).min(OWNED);
                    SLOT.with(|s| s.set(slot));
                    assert_eq!(owned_slot(), (slot < OWNED).then_some(slot));
                    start.wait();
                    for key in 0..rounds {
                        c.increment(key ^ t);
                        if key % 4 == 0 {
                            c.decrement(key);
                        }
                    }
                    c.add(t, 10);
                    c.sub(t, 5);
                });
            }
        });
        assert_eq!(c.get(), threads * (rounds as usize * 3 / 4 + 5));
    }
}
