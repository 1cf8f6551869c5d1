//! Striped relocation counters: how lookups detect a fingerprint that moved
//! under them.
//!
//! A lookup reads bucket `i1`, then bucket `i2`. If a fingerprint moves from
//! `i2` to `i1` between those reads, the lookup sees it in neither. So a mover
//! bumps the counter of the fingerprint's bucket pair *after* copying the
//! fingerprint into the destination and *before* clearing it from the source,
//! and a lookup that found nothing re-reads the counter and retries if it
//! changed (MemC3's version counters, made lock-free: no one waits, a reader
//! retries only because a move completed).
//!
//! Why that suffices: the clear is a Release CAS that follows the bump in the
//! mover's program order. A lookup whose Acquire load of `i2` reads the cleared
//! word (or any later value of it: every bucket write is a CAS, so later writes
//! continue the release sequence) therefore also sees the bump when it re-reads
//! the counter. And a lookup whose first Acquire load of the counter already
//! sees the bump also sees the copy, which precedes the bump's Release.
//!
//! Pairs share stripes; a shared stripe only costs a spurious retry. Each stripe
//! is cache-padded: every lookup reads one, and a mover writing its stripe must
//! not evict the stripes other cores are reading.
//!
//! Each stripe also counts the operations of its pairs that hold a copy nobody
//! has counted yet ([`Stripe::in_flight`]): a mover between its copy and its
//! clear, an `insert_if_absent` between its put and its decision. A concurrent
//! `clear` must not take such a copy (see `Table::clear`); it reads the count
//! after reading a word, and keeps the word's fingerprints of any stripe that
//! has one in flight. The count lives in the stripe's cache line, which a mover
//! writes anyway.

use crate::sync::{AtomicU64, Ordering};
use crossbeam_utils::CachePadded;

/// Most stripes a table gets. 256 padded stripes are 32 KiB: they stay in L2
/// beside a table of any size.
pub(crate) const MAX_STRIPES: usize = if cfg!(lockfree_cuckoo_filter_loom) {
    1
} else {
    256
};

/// Buckets per stripe: a 128-byte stripe per 16 KiB (8-bit) to 64 KiB
/// (32-bit) of words, under 1 % of them, so that the counters cost a
/// small table (a million items: 1.2 to 4 MiB of words) no more than a
/// few hundredths of a bit per item. Fewer stripes cost nothing measurable:
/// a lookup misses its stripe's line when another core moved a fingerprint
/// of any pair of that stripe since the lookup's core last read it, and
/// both rates scale with the stripe count alike; a spurious retry needs a
/// move in the stripe within one lookup's few dozen nanoseconds.
pub(crate) const BUCKETS_PER_STRIPE: u64 = 4096;

/// One stripe: the relocation counter of its pairs, and how many operations
/// on its pairs hold an uncounted copy.
pub(crate) struct Stripe {
    /// Bumped by every move (between copy and clear) and every take, before
    /// the take; see the module documentation.
    moves: AtomicU64,
    /// Operations of this stripe's pairs that hold a copy not (yet) accounted
    /// for by the item count: movers from before their copy until after their
    /// clear or fallback, and `insert_if_absent` from before its put until its
    /// decision. Entered and left with [`Stripe::enter`].
    in_flight: AtomicU64,
}

/// Relocation counters for the bucket pairs of one table.
pub(crate) struct RelocationCounters {
    stripes: Box<[CachePadded<Stripe>]>,
}

impl RelocationCounters {
    /// Counters for a table of `buckets` buckets: one stripe per
    /// [`BUCKETS_PER_STRIPE`] (rounded down to a power of two), at least
    /// one, at most [`MAX_STRIPES`]. Rounded down, so that the stripes never
    /// cost more than docs/FORMAT.md promises beside the words.
    pub(crate) fn new(buckets: u64) -> Self {
        let wanted = usize::try_from(buckets / BUCKETS_PER_STRIPE).unwrap_or(usize::MAX);
        let stripes = 1 << wanted.clamp(1, MAX_STRIPES).ilog2();
        Self {
            stripes: (0..stripes)
                .map(|_| {
                    CachePadded::new(Stripe {
                        moves: AtomicU64::new(0),
                        in_flight: AtomicU64::new(0),
                    })
                })
                .collect(),
        }
    }

    /// The counter that guards the unordered bucket pair `{a, b}`.
    #[inline(always)]
    pub(crate) fn for_pair(&self, a: u64, b: u64) -> &AtomicU64 {
        &self.stripe(a, b).moves
    }

    /// The stripe of the unordered bucket pair `{a, b}`.
    #[inline(always)]
    pub(crate) fn stripe(&self, a: u64, b: u64) -> &Stripe {
        // Symmetric in `a` and `b`. The two buckets of a pair differ in their
        // low bit (see `Table::alternate`), so that bit of `a ^ b` is always 1
        // and is dropped; the bits above spread pairs over the stripes.
        let key = (a ^ b) >> 1;
        let index = key as usize & (self.stripes.len() - 1);
        // SAFETY: the length is a power of two, at least 1 (see `new`), so
        // masking with `len - 1` gives an index below it.
        unsafe { self.stripes.get_unchecked(index) }
    }

    /// Announces a take on every stripe at once, as [`Snapshot::announce`]
    /// does on one (AcqRel, as there): `clear`, before its sweep. Not
    /// load-bearing: lookups racing a clear may answer either way for what it
    /// takes (see `super::clear`, "Announcement"), so no model or check fails
    /// without it; it keeps every take announced, the rule the rest relies on.
    pub(crate) fn announce_all(&self) {
        for stripe in self.stripes.iter() {
            stripe.moves.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Bumps every stripe's counter for a snapshot that has just stored its
    /// next front and is about to read the chunk (see `super::front` for
    /// why). AcqRel: Acquire, so that the snapshot's reads see the copy of
    /// every mover whose bump this one reads; Release, so that a mover whose
    /// bump reads this one sees the front stored before it. Lookups that
    /// missed while it ran search again, as after any bump.
    pub(crate) fn advance_all(&self) {
        for stripe in self.stripes.iter() {
            stripe.moves.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Every stripe's relocation counter, read before a reading of the whole
    /// table. Acquire, as [`Snapshot::take`]: a counter read after a mover's
    /// bump must make its copy visible to the reading. (That rests on the
    /// argument alone: the reading's words are read by read-modify-writes,
    /// which loom always lets read the newest value, so no loom model fails
    /// with this Relaxed.)
    pub(crate) fn counts(&self) -> Vec<u64> {
        let counts = self.stripes.iter();
        counts.map(|s| s.moves.load(Ordering::Acquire)).collect()
    }

    /// Whether every counter still reads as in `counts` ([`Self::counts`]):
    /// nothing of the table moved or was taken in between. Relaxed, as
    /// [`Snapshot::drift`]: the reading's AcqRel word reads before it carry
    /// the ordering.
    pub(crate) fn counts_are(&self, counts: &[u64]) -> bool {
        let now = self.stripes.iter().map(|s| s.moves.load(Ordering::Relaxed));
        now.eq(counts.iter().copied())
    }

    /// The number of stripes.
    pub(crate) fn len(&self) -> usize {
        self.stripes.len()
    }

    /// Bytes held by the counters.
    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of_val(&*self.stripes)
    }
}

/// A snapshot of one pair's counter, taken before a search of both buckets.
#[derive(Clone, Copy)]
pub(crate) struct Snapshot<'a> {
    counter: &'a AtomicU64,
    seen: u64,
}

impl<'a> Snapshot<'a> {
    /// Reads the counter. Acquire: if it sees a mover's bump, the search that
    /// follows sees the copy the mover made before that bump.
    #[inline(always)]
    pub(crate) fn take(counter: &'a AtomicU64) -> Self {
        Self {
            seen: counter.load(Ordering::Acquire),
            counter,
        }
    }

    /// Announces a remove on `counter`, before its first take, and returns a
    /// snapshot that includes the announcement (so that only *other* movers
    /// and removes count as a change).
    ///
    /// AcqRel. Acquire, as [`Self::take`]: the search that follows sees the
    /// copies of every move announced before. Release, because a lookup whose
    /// snapshot already includes this bump will believe a miss that this
    /// remove's take caused, unless it can see the copy whose insert preceded
    /// the remove (a colliding insert into the other bucket, or an
    /// `insert_if_absent`'s own put): reading the bump with Acquire makes that
    /// insert visible. And the take that follows is a Release CAS, so a lookup
    /// whose Acquire bucket load sees the take also sees this bump when it
    /// re-reads the counter.
    #[inline(always)]
    pub(crate) fn announce(counter: &'a AtomicU64) -> Self {
        Self {
            seen: counter.fetch_add(1, Ordering::AcqRel).wrapping_add(1),
            counter,
        }
    }

    /// Whether no fingerprint of the pair moved or was taken since the
    /// snapshot, so that a search that found nothing may be believed (see
    /// [`Self::drift`] for the ordering).
    #[inline(always)]
    pub(crate) fn unchanged(&self) -> bool {
        self.drift() == 0
    }

    /// [`Self::unchanged`] as a number: zero if the counter is as the snapshot
    /// saw it, nonzero otherwise. For a hot path that combines it with the
    /// answer arithmetically rather than by a branch (see `Table::contains`).
    ///
    /// Relaxed. What must hold: a search that missed a copy because a move or
    /// take cleared it reads the bump here. The search's Acquire load that saw
    /// the clearing CAS (Release) synchronizes with it, the bump precedes
    /// that CAS in its thread, and this load follows the search's loads in
    /// ours, so the bump happens before this load, which by coherence reads
    /// it or a later value. That needs the search's loads Acquire and this
    /// load after them, not Acquire here. (The module documentation has the
    /// whole argument; the loom models `lookup` and `remove` fail when the
    /// bucket loads or the bump are weakened.)
    #[inline(always)]
    pub(crate) fn drift(&self) -> u64 {
        self.counter.load(Ordering::Relaxed) ^ self.seen
    }
}

/// Publishes a relocation in progress: called by a mover after its copy and
/// before its clear. Release, so the copy is visible to whoever sees the bump;
/// Acquire, so that the mover, when it then checks the snapshots' fronts, sees
/// every front stored before a snapshot's bump that this one follows (see
/// `super::front`). On x86-64 the same `lock xadd` either way.
#[inline(always)]
pub(crate) fn publish(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::AcqRel);
}

impl Stripe {
    /// Enters the stripe's in-flight count, before the operation puts its
    /// uncounted copy; the count is left when the guard drops, after the
    /// operation's last access to the table.
    ///
    /// Relaxed on entry, because the put that follows is a Release CAS: a
    /// `clear` whose Acquire load of the word sees the put (or any later value
    /// of the word: every bucket write is a read-modify-write, so later values
    /// continue the put's release sequence) synchronizes with it, and so reads
    /// this entry, or a later value, when it then loads the count. A later
    /// value still includes the entry until this operation's own exit, which
    /// comes after it in the count's modification order. Relaxed on exit too:
    /// a `clear` that reads the count after the exit takes the copy only by a
    /// CAS expecting the word it read, which fails if the operation changed
    /// the word since (it took its copy back), and otherwise takes a copy the
    /// operation counted in, as any other.
    #[inline(always)]
    pub(crate) fn enter(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight { stripe: self }
    }

    /// Whether an operation of this stripe holds an uncounted copy now.
    /// Relaxed: what orders it is the sweep's Acquire load of the word before
    /// it, which synchronizes with the operation's Release put and so makes
    /// the entry visible here (see [`enter`](Self::enter)); weakening that
    /// load makes the loom model `clear::relocation` fail.
    #[inline(always)]
    pub(crate) fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) != 0
    }
}

/// An operation in a stripe's in-flight count; leaves it when dropped.
pub(crate) struct InFlight<'a> {
    stripe: &'a Stripe,
}

impl Drop for InFlight<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        // Relaxed: see `Stripe::enter`.
        self.stripe.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_pair_has_one_counter_whichever_bucket_asks() {
        let r = RelocationCounters::new(1 << 20);
        for (a, b) in [(0, 1), (5, 900_001), (77, 3)] {
            assert!(std::ptr::eq(r.for_pair(a, b), r.for_pair(b, a)));
        }
        assert_eq!(r.stripes.len(), MAX_STRIPES);
        assert_eq!(RelocationCounters::new(2).stripes.len(), 1);
    }

    #[test]
    fn at_most_one_stripe_per_4096_buckets() {
        let k = BUCKETS_PER_STRIPE;
        for (buckets, stripes) in [
            (2, 1),
            (2 * k - 1, 1),
            (2 * k, 2),
            (3 * k, 2),
            (4 * k, 4),
            (17 * k, 16),
        ] {
            assert_eq!(
                RelocationCounters::new(buckets).stripes.len(),
                stripes,
                "{buckets}"
            );
        }
        assert_eq!(RelocationCounters::new(1 << 40).stripes.len(), MAX_STRIPES);
    }

    #[test]
    fn a_snapshot_sees_a_published_move() {
        let r = RelocationCounters::new(1024);
        let counter = r.for_pair(1, 2);
        let snapshot = Snapshot::take(counter);
        assert!(snapshot.unchanged());
        publish(r.for_pair(2, 1));
        assert!(!snapshot.unchanged());
        assert!(Snapshot::take(counter).unchanged());
    }
}
