//! Snapshot fronts: where each snapshot of a live table has read up to, so
//! that no relocation carries an item across it.
//!
//! A snapshot reads the table's words front to back, one chunk of words at a
//! time (see [`super::snapshot`]). A relocation from a bucket it has not read
//! into one it has read would hide the item from it (read in neither bucket),
//! and one the other way would show it twice. So every snapshot publishes the
//! chunk it is reading, its *front*, and a mover, between its copy and its
//! clear, checks the fronts: a move from a bucket ahead of a front (or in
//! the chunk being read) to one behind it (or in that chunk) is undone (the
//! copy taken back) instead of completed, and the insert searches for another
//! path (or, finding none, puts its item into the stash, which a snapshot
//! reads as the chunk after the last: see `super::stash`). Every other move
//! completes: both buckets behind every front, both ahead, or from behind to
//! ahead ([`may_complete`]).
//!
//! **The ordering.** A snapshot stores its new front, then bumps every stripe's
//! relocation counter (AcqRel), then reads the chunk. A mover copies, bumps its
//! pair's counter (AcqRel, the publish every move makes anyway), then loads the
//! fronts (Acquire). The bumps of one stripe are totally ordered:
//!
//! - if the mover's bump comes first, the snapshot's bump reads it, so the
//!   snapshot's reads of every later chunk see the mover's copy;
//! - if the snapshot's comes first, the mover's reads it, so the mover sees
//!   that front or a later one, and every chunk the snapshot read before
//!   storing that front was read before the mover's clear.
//!
//! The invariant: an item that stays in the table is, at every moment, either
//! already held by the snapshot (seen in a bucket it read) or in a bucket it
//! has yet to read. A mover that sees its destination ahead of a front
//! completes: the snapshot reads the destination after the copy. One that
//! sees its source behind completes: the snapshot read the source before the
//! clear, and by the invariant the item was held already. An undone move
//! leaves the item where it was. So the snapshot never misses an item that
//! stays in the table (the loom models in `loom-tests/tests/snapshot.rs`
//! fail with the check taken out). A forward move across the front (source
//! behind, destination ahead) shows the item twice; the path search leaves
//! out every move across a front, so a mover makes one only when the front
//! overtook it after its search.
//!
//! The registry holds any number of snapshots at once: [`SLOTS`] fronts here,
//! and more in blocks chained on demand, kept until the table is dropped.

use crate::sync::chain::{self, Chained, Link};
use crate::sync::{AtomicU64, AtomicUsize, Ordering};

/// Fronts per block of the registry.
const SLOTS: usize = 4;

/// The fronts of the snapshots reading one table.
pub(crate) struct Fronts {
    /// Snapshots under way. Raised before a snapshot's first front is
    /// published and lowered after its last is withdrawn, so that a mover that
    /// sees zero (after its bump, see the module documentation) has nothing
    /// to check: the common case costs one load of a line nobody writes.
    active: AtomicUsize,
    first: Block,
}

/// One block of fronts: 0 for a free slot, `c + 1` while its snapshot reads
/// chunk `c`.
struct Block {
    slots: [AtomicU64; SLOTS],
    next: Link<Block>,
}

impl Block {
    fn new() -> Self {
        Self {
            slots: std::array::from_fn(|_| AtomicU64::new(0)),
            next: Link::new(),
        }
    }
}

impl Chained for Block {
    fn link(&self) -> &Link<Block> {
        &self.next
    }
}

/// A snapshot's place in the registry: its slot, withdrawn when dropped.
pub(crate) struct Front<'a> {
    fronts: &'a Fronts,
    slot: &'a AtomicU64,
}

impl Fronts {
    pub(crate) fn new() -> Self {
        Self {
            active: AtomicUsize::new(0),
            first: Block::new(),
        }
    }

    /// Registers a snapshot about to read chunk 0. The caller then bumps every
    /// stripe before it reads (see the module documentation).
    ///
    /// Claims a free slot by compare-and-swap, chaining a new block when all
    /// are taken: a claim retries only because another snapshot claimed the
    /// slot or chained the block first.
    pub(crate) fn register(&self) -> Front<'_> {
        // Raised before the slot is claimed and before the snapshot's first
        // stripe bump (`advance_all`, AcqRel). A mover that must see this
        // snapshot is one whose publish (AcqRel) reads that bump, and it then
        // sees the raise through it; nothing relies on the raise's own
        // ordering.
        self.active.fetch_add(1, Ordering::AcqRel);
        let mut block = &self.first;
        loop {
            for slot in &block.slots {
                if slot
                    .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    return Front { fronts: self, slot };
                }
            }
            block = block.next.get_or_chain(Block::new);
        }
    }

    /// Calls `f(c)` for the chunk `c` of every snapshot under way, until `f`
    /// returns true; whether it did. Called by a mover after its bump, and by
    /// a path search to avoid moves a mover would undo.
    #[inline]
    pub(crate) fn any(&self, mut f: impl FnMut(u64) -> bool) -> bool {
        // Acquire, pairing with the Release lowering at a snapshot's end
        // (`Drop for Front`): a mover that reads the count lowered completes
        // its move after that snapshot's reads. (A raise needs no pairing
        // here: see `register`. Loom does not explore the load buffering
        // that Relaxed would allow, so no model fails with it; the argument
        // stands on its own.)
        if self.active.load(Ordering::Acquire) == 0 {
            return false;
        }
        for b in chain::from(&self.first) {
            for slot in &b.slots {
                // Acquire: a mover that reads a front stored after the
                // snapshot's bump it read (or a slot freed at the end) must
                // complete its move after the reads that preceded that store.
                // (Loom does not explore the load buffering that Relaxed
                // would allow here, so no model fails with it; the argument
                // stands on its own.)
                let front = slot.load(Ordering::Acquire);
                if front != 0 && f(front - 1) {
                    return true;
                }
            }
        }
        false
    }

    /// The chunks of up to [`VIEW`] snapshots under way, read once: what a
    /// path search prunes its moves by (only a hint: the mover's own check
    /// after its publish decides; see the module documentation).
    #[inline]
    pub(crate) fn view(&self) -> View {
        let mut view = View {
            chunks: [0; VIEW],
            len: 0,
        };
        self.any(|c| {
            view.chunks[view.len] = c;
            view.len += 1;
            view.len == VIEW
        });
        view
    }

    /// Bytes held beyond the table's own struct (chained blocks).
    pub(crate) fn memory_usage(&self) -> usize {
        self.first.next.chain().count() * std::mem::size_of::<Block>()
    }
}

impl Drop for Fronts {
    fn drop(&mut self) {
        self.first.next.free_chain();
    }
}

impl Front<'_> {
    /// Publishes that the snapshot now reads chunk `chunk` (Release: the
    /// chunks before it were read before this store; a mover that sees it
    /// completes moves behind it after those reads). Loom does not explore
    /// the load buffering that Relaxed would allow, so no model fails with
    /// it; the argument stands on its own.
    pub(crate) fn advance(&self, chunk: u64) {
        self.slot.store(chunk + 1, Ordering::Release);
    }
}

impl Drop for Front<'_> {
    fn drop(&mut self) {
        // Release, both: the snapshot's reads come before a mover that sees
        // the slot free, or the count lowered, completes a move across it.
        // (As in `advance`, loom cannot fail a Relaxed here: the argument
        // stands on its own.)
        self.slot.store(0, Ordering::Release);
        self.fronts.active.fetch_sub(1, Ordering::Release);
    }
}

/// Snapshots a [`View`] holds at most.
const VIEW: usize = 4;

/// The chunks some snapshots read at one moment ([`Fronts::view`]).
pub(crate) struct View {
    chunks: [u64; VIEW],
    len: usize,
}

impl View {
    /// Whether no snapshot was under way.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a move between buckets in chunks `a` and `b` keeps its side
    /// of every front in the view ([`keeps_side`]): the moves a path search
    /// takes while snapshots run.
    #[inline]
    pub(crate) fn keeps_sides(&self, a: u64, b: u64) -> bool {
        self.chunks[..self.len].iter().all(|&c| keeps_side(a, b, c))
    }
}

/// Whether a move between buckets in chunks `a` and `b` keeps its side of a
/// snapshot reading chunk `c`: both behind it or both ahead. Such a move
/// changes nothing the snapshot sees but where it finds the item.
#[inline]
pub(crate) fn keeps_side(a: u64, b: u64, c: u64) -> bool {
    (a < c && b < c) || (a > c && b > c)
}

/// Whether a move from a bucket in chunk `src` to one in chunk `dst` may
/// complete while a snapshot reads chunk `c`: its source is behind the front
/// (read: the snapshot holds the item already, or holds it elsewhere), or its
/// destination ahead of it (to be read, after the copy). A move from ahead
/// to behind, or into or out of the chunk being read other than forward,
/// could hide the item from the snapshot and is undone. A forward move across
/// the front shows the item to the snapshot twice: the path search leaves
/// such moves out too, so a mover completes one only when the front overtook
/// it between the search and the move.
#[inline]
pub(crate) fn may_complete(src: u64, dst: u64, c: u64) -> bool {
    src < c || dst > c
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;

    #[test]
    fn registers_any_number_and_withdraws() {
        let fronts = Fronts::new();
        assert!(!fronts.any(|_| true));
        let held: Vec<_> = (0..3 * SLOTS as u64 + 1)
            .map(|c| {
                let f = fronts.register();
                f.advance(c);
                f
            })
            .collect();
        let mut seen = Vec::new();
        fronts.any(|c| {
            seen.push(c);
            false
        });
        seen.sort_unstable();
        assert_eq!(seen, (0..3 * SLOTS as u64 + 1).collect::<Vec<_>>());
        assert!(fronts.memory_usage() >= 3 * std::mem::size_of::<Block>());
        drop(held);
        assert!(!fronts.any(|_| true));
        // Freed slots are claimed again before any new block is chained.
        let blocks = fronts.memory_usage();
        let again: Vec<_> = (0..2 * SLOTS).map(|_| fronts.register()).collect();
        assert_eq!(fronts.memory_usage(), blocks);
        drop(again);
    }

    #[test]
    fn which_moves_complete_and_which_keep_their_side() {
        assert!(keeps_side(1, 2, 5) && keeps_side(7, 9, 5));
        assert!(!keeps_side(1, 7, 5) && !keeps_side(7, 1, 5));
        assert!(!keeps_side(5, 7, 5) && !keeps_side(1, 5, 5) && !keeps_side(5, 5, 5));
        // Forward across the front, or out of the chunk read onward: done.
        assert!(may_complete(1, 7, 5) && may_complete(5, 7, 5) && may_complete(1, 5, 5));
        assert!(may_complete(1, 2, 5) && may_complete(7, 9, 5));
        // Backward, or into the chunk read from ahead or from it: undone.
        assert!(!may_complete(7, 1, 5) && !may_complete(7, 5, 5) && !may_complete(5, 5, 5));
        assert!(!may_complete(5, 1, 5));
    }
}
