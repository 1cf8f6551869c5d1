//! Batched lookups: each lookup's bucket loads are issued a fixed distance
//! ahead of its comparison, so that many lookups' cache misses overlap.

use super::{Position, Table};
use crate::fingerprint::Width;

/// How many lookups ahead a batched lookup prefetches.
pub(crate) const GROUP: usize = 16;

impl<W: Width> Table<W> {
    /// Answers [`Self::contains`] for every item, writing `out[k]` for
    /// `items[k]` (both of one length), `hash` giving each item's hash.
    ///
    /// A software pipeline over the whole slice: the buckets of the lookup
    /// [`GROUP`] places ahead are prefetched before the current one is
    /// compared, so about `2 · GROUP` cache misses are in flight all along,
    /// from the first lookup to the last, whatever the slice's length.
    #[inline(always)]
    pub(crate) fn contains_batch<T>(
        &self,
        items: &[T],
        out: &mut [bool],
        mut hash: impl FnMut(&T) -> u64,
    ) {
        debug_assert_eq!(items.len(), out.len());
        let mut ring = [Position::default(); GROUP];
        for (slot, item) in ring.iter_mut().zip(items) {
            *slot = self.position(hash(item));
            self.prefetch(*slot);
        }
        let mut ahead = items.iter().skip(GROUP);
        for (k, answer) in out.iter_mut().enumerate() {
            let slot = &mut ring[k % GROUP];
            let current = *slot;
            if let Some(item) = ahead.next() {
                *slot = self.position(hash(item));
                self.prefetch(*slot);
            }
            *answer = self.contains(current);
        }
    }

    /// Starts loading both buckets of `pos` into the cache, without waiting.
    #[inline(always)]
    fn prefetch(&self, pos: Position) {
        self.prefetch_bucket(pos.i1);
        self.prefetch_bucket(pos.i2);
    }
}
