//! Batched lookups: the bucket loads of a group of lookups are issued together,
//! one group ahead of the comparisons, so that their cache misses overlap.

use super::{Position, Table};
use crate::fingerprint::Width;

/// Lookups whose bucket loads a batched lookup prefetches together.
pub(crate) const GROUP: usize = 16;

impl<W: Width> Table<W> {
    /// Answers [`Self::contains`] for each hash, writing `out[k]` for
    /// `hashes[k]`; both have the same length.
    pub(crate) fn contains_batch(&self, hashes: &[u64], out: &mut [bool]) {
        debug_assert_eq!(hashes.len(), out.len());
        // A pipeline: group k+1's buckets are prefetched before group k is
        // compared, so while one group's loads are answered the next
        // group's misses are already in flight.
        let mut groups = hashes.chunks(GROUP).zip(out.chunks_mut(GROUP));
        let mut next = groups.next().map(|(hs, os)| (self.positions_of(hs), os));
        while let Some((positions, answers)) = next.take() {
            next = groups.next().map(|(hs, os)| (self.positions_of(hs), os));
            for (p, a) in positions.iter().zip(answers.iter_mut()) {
                *a = self.contains(*p);
            }
        }
    }

    /// The positions of up to [`GROUP`] hashes, each prefetched.
    #[inline(always)]
    fn positions_of(&self, hashes: &[u64]) -> PositionGroup {
        let mut positions = PositionGroup::default();
        for &h in hashes {
            let p = self.position(h);
            self.prefetch(p);
            positions.push(p);
        }
        positions
    }

    /// Starts loading both buckets of `pos` into the cache, without waiting.
    /// Batched lookups call it one group ahead, so that a group's cache misses
    /// are in flight together while the previous group is compared.
    #[inline(always)]
    fn prefetch(&self, pos: Position) {
        self.prefetch_bucket(pos.i1);
        self.prefetch_bucket(pos.i2);
    }
}

/// A fixed array of positions and how many are in use (no allocation).
#[derive(Default)]
struct PositionGroup {
    items: [Position; GROUP],
    len: usize,
}

impl PositionGroup {
    #[inline(always)]
    fn push(&mut self, p: Position) {
        self.items[self.len] = p;
        self.len += 1;
    }

    #[inline(always)]
    fn iter(&self) -> std::slice::Iter<'_, Position> {
        self.items[..self.len].iter()
    }
}
