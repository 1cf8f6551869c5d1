//! The item count behind `len()`, sharded so that inserts and removes on
//! different cores do not fight over one cache line.

use crate::sync::{AtomicIsize, Ordering};
use crossbeam_utils::CachePadded;

const SHARDS: usize = if cfg!(lockfree_cuckoo_filter_loom) {
    1
} else {
    16
};

/// Successful inserts minus successful removes, spread over padded shards.
///
/// An operation counts into the shard chosen by its item's first bucket, so an
/// item is always counted in the same shard and two threads working on
/// different items rarely share one. Relaxed: the count is exact once no
/// operation is in flight, because whatever made the operations "finished" (a
/// join, a channel, a lock in the caller) also orders their counter updates
/// before the read; while operations are in flight, `len` is a moment's estimate.
pub(crate) struct ItemCount {
    shards: Box<[CachePadded<AtomicIsize>]>,
}

impl ItemCount {
    pub(crate) fn new() -> Self {
        Self {
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(AtomicIsize::new(0)))
                .collect(),
        }
    }

    #[inline(always)]
    fn shard(&self, key: u64) -> &AtomicIsize {
        &self.shards[key as usize % SHARDS]
    }

    /// Counts one item in.
    #[inline(always)]
    pub(crate) fn increment(&self, key: u64) {
        self.shard(key).fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one item out.
    #[inline(always)]
    pub(crate) fn decrement(&self, key: u64) {
        self.shard(key).fetch_sub(1, Ordering::Relaxed);
    }

    /// Counts `n` items in at once.
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn add(&self, key: u64, n: usize) {
        self.shard(key).fetch_add(n as isize, Ordering::Relaxed);
    }

    /// Counts `n` items out at once.
    #[inline(always)]
    pub(crate) fn sub(&self, key: u64, n: usize) {
        self.shard(key).fetch_sub(n as isize, Ordering::Relaxed);
    }

    /// The count. Shards may be negative on their own (a remove counted before
    /// the insert it undoes is seen); the sum is clamped at zero mid-flight.
    pub(crate) fn get(&self) -> usize {
        let sum = self
            .shards
            .iter()
            .fold(0isize, |acc, s| acc.wrapping_add(s.load(Ordering::Relaxed)));
        sum.max(0) as usize
    }

    /// Sets the count to zero; only while the table is not shared.
    pub(crate) fn reset(&self) {
        for s in self.shards.iter() {
            s.store(0, Ordering::Relaxed);
        }
    }

    /// Sets the count to `n`; only while the table is not shared (decoding).
    pub(crate) fn set(&self, n: usize) {
        self.reset();
        self.shards[0].store(n as isize, Ordering::Relaxed);
    }

    /// Bytes held by the shards.
    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of_val(&*self.shards)
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
}
