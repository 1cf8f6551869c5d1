//! Walks over the whole table: its words in order, and every fingerprint
//! with its bucket (for the byte format's tests, the growable filter's
//! covering, and the test hooks).

use super::Table;
use crate::fingerprint::Width;
use crate::sync::chain::{Chained, Link};
use crate::sync::{AtomicU64, Ordering};

/// How a walk reads the table's words and the stash's entries, and follows
/// the links between the stash's lines.
#[derive(Clone, Copy)]
pub(crate) enum Reads {
    /// Acquire loads: exact when no operation is in flight.
    Loads,
    /// Read-modify-writes that leave each word and link as it is (AcqRel),
    /// each reading placed in its word's modification order: see
    /// [`Table::read_fingerprints`].
    InOrder,
}

impl Reads {
    /// The value of `cell`.
    #[inline]
    pub(crate) fn word(self, cell: &AtomicU64) -> u64 {
        match self {
            Self::Loads => cell.load(Ordering::Acquire),
            Self::InOrder => cell.fetch_or(0, Ordering::AcqRel),
        }
    }

    /// The block chained after `link`, if any.
    #[inline]
    pub(crate) fn link<T: Chained>(self, link: &Link<T>) -> Option<&T> {
        match self {
            Self::Loads => link.get(),
            Self::InOrder => link.get_in_order(),
        }
    }
}

impl<W: Width> Table<W> {
    /// Number of words that hold buckets (the rest of the last line is padding).
    pub(crate) fn word_count(&self) -> usize {
        Self::words_for(self.buckets) as usize
    }

    /// The bucket words in order (tests compare readings with it). Exact
    /// when quiescent.
    #[cfg(test)]
    pub(crate) fn words(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.word_count()).map(|i| self.word(i).load(Ordering::Acquire))
    }

    /// Calls `f(bucket, fingerprint)` for every occupied slot and stash
    /// entry, as
    /// [`Self::for_each_fingerprint`], and returns whether the reading may be
    /// believed: that no fingerprint moved and none was taken while it read.
    /// Then every fingerprint the table held throughout was passed to `f` at
    /// one of the two buckets of its pair (a growable filter's summary keeps
    /// keys that name the pair, not the bucket, so either will do).
    ///
    /// A reading of one bucket after another can miss a fingerprint that moves
    /// from a bucket not yet read to one already read. Moves are announced on
    /// their pair's stripe between their copy and their clear (see
    /// [`relocation`](super::relocation)), so, as for a lookup, the counters of
    /// every stripe read before the buckets and again after tell whether one
    /// happened: the reading that sees a cleared word (Acquire) sees the bump
    /// that preceded the clear.
    ///
    /// Each word is read by a read-modify-write that leaves it as it is
    /// (`fetch_or(0)`, AcqRel) rather than by a load: that places the reading
    /// in the word's modification order, so a put into the word is either
    /// before it (and read) or after it, and then the put, an AcqRel CAS,
    /// synchronizes with it, and the putting thread sees whatever the reader
    /// published before reading (the growable filter's pending summary, which
    /// tells it to record its own item). Value-compared CASes of other
    /// threads are unaffected by a write of the same value. The links
    /// between the stash's lines are read the same way, so a put into a
    /// line chained while this reads is reached or sees what came before
    /// the reading ([`Link::get_in_order`]).
    pub(crate) fn read_fingerprints(&self, f: impl FnMut(u64, u32)) -> bool {
        let before = self.relocations.counts();
        self.visit_fingerprints(Reads::InOrder, f);
        self.relocations.counts_are(&before)
    }

    /// Calls `f(bucket, fingerprint)` for every occupied slot and stash
    /// entry. Exact only when
    /// no operation is in flight.
    pub(crate) fn for_each_fingerprint(&self, f: impl FnMut(u64, u32)) {
        self.visit_fingerprints(Reads::Loads, f);
    }

    /// Calls `f(bucket, fingerprint)` for every occupied slot, bucket by
    /// bucket, then for every entry of the stash (at its pair's lower
    /// bucket), each word read as `reads` says.
    fn visit_fingerprints(&self, reads: Reads, mut f: impl FnMut(u64, u32)) {
        for bucket in 0..self.buckets {
            let words = self.read_bucket(bucket, |cell| reads.word(cell));
            for &fp in &self.bucket_fingerprints(&words, bucket)[..W::SLOTS as usize] {
                if fp != 0 {
                    f(bucket, fp);
                }
            }
        }
        self.stash.visit(reads, f);
    }
}
