//! Snapshot fronts: where each snapshot of a live table has read up to, and
//! the moves that carried an item behind it.
//!
//! A snapshot reads the table's words front to back, one chunk of words at a
//! time (see [`super::snapshot`]). A relocation from a bucket it has not read
//! into one it has read would hide the item from it (read in neither bucket),
//! and one the other way would show it twice. So every snapshot publishes the
//! chunk it is reading, its *front*, and a mover, between its copy and its
//! clear, checks the fronts: a move from a bucket ahead of a front (or in the
//! chunk being read) to one behind it (or in that chunk) is **recorded** in
//! that snapshot's list of moved entries (the destination bucket and the
//! fingerprint) before the mover clears the source, and the snapshot writes
//! the list after the table. Every move completes; no mover waits, and no
//! insert is refused because a snapshot runs ([`crosses_back`] says which
//! moves are recorded).
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
//! The invariant: an item that stays in the table is, at every moment, held
//! by the snapshot (seen in a bucket it read, or in its list) or in a bucket
//! it has yet to read. A mover that sees its destination ahead of a front
//! completes: the snapshot reads the destination after the copy. One that
//! sees its source behind completes: the snapshot read the source before the
//! clear, and by the invariant the item was held already. One that sees
//! neither pushes the entry onto the snapshot's list (Release), then clears
//! the source (Release): a snapshot whose read of the source sees the clear
//! takes its list afterwards (AcqRel) and finds the entry; one whose read
//! does not see it holds the item from the source. A push that finds the list
//! closed (the snapshot has read the whole table: its close is ordered before
//! the push's Acquire read of it) drops the entry: the source was read before
//! the clear. So the snapshot never misses an item that stays in the table
//! (the loom models in `loom-tests/tests/snapshot.rs` fail with the check or
//! the list taken out).
//!
//! **What it costs.** While no snapshot runs, a mover loads one counter that
//! nobody writes. During one, a move recorded costs the mover one small
//! allocation and one compare-and-swap; the list holds 16 bytes a move until
//! the snapshot writes it. The path search leaves moves across a front out of
//! its first try (each recorded move is one more entry, and a forward move
//! across the front shows the item twice), and searches again with every
//! move allowed when that finds nothing: a snapshot takes no path an insert
//! would have had without it.
//!
//! The registry holds any number of snapshots at once: [`SLOTS`] fronts here,
//! and more in blocks chained on demand, kept until the table is dropped.

use std::ptr;

use crate::sync::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// Fronts per block of the registry.
const SLOTS: usize = 4;

/// A slot's front while its snapshot has claimed it but not yet published
/// its first chunk: movers skip it (the snapshot has read nothing).
const CLAIMED: u64 = u64::MAX;

/// The fronts of the snapshots reading one table.
pub(crate) struct Fronts {
    /// Snapshots under way. Raised before a snapshot's first front is
    /// published and lowered after its last is withdrawn, so that a mover that
    /// sees zero (after its bump, see the module documentation) has nothing
    /// to check: the common case costs one load of a line nobody writes.
    active: AtomicUsize,
    first: Block,
}

/// One snapshot's place: its front and its list of moved entries.
struct Slot {
    /// 0 for a free slot, [`CLAIMED`] while its snapshot starts, `c + 1`
    /// while it reads chunk `c`.
    chunk: AtomicU64,
    /// The entries recorded for the snapshot: a stack of [`Moved`] nodes,
    /// pushed by movers and taken whole by the snapshot when it has read the
    /// table; [`closed`] while no snapshot takes entries.
    moved: AtomicPtr<Moved>,
}

/// One recorded move: the entry ([`entry`]) and the node pushed before it.
struct Moved {
    entry: u64,
    next: *mut Moved,
}

/// The list value of a slot that takes no entries: an address no node has
/// (nodes are aligned to 8 bytes).
fn closed() -> *mut Moved {
    ptr::without_provenance_mut(1)
}

/// A moved entry: the bucket the fingerprint went to (below 2^32) in the
/// high half, the fingerprint in the low half.
#[inline]
pub(crate) fn entry(bucket: u64, fp: u32) -> u64 {
    (bucket << 32) | u64::from(fp)
}

/// The bucket and fingerprint of a moved entry.
#[inline]
pub(crate) fn split_entry(entry: u64) -> (u64, u32) {
    (entry >> 32, entry as u32)
}

/// One block of fronts.
struct Block {
    slots: [Slot; SLOTS],
    next: AtomicPtr<Block>,
}

impl Block {
    fn new() -> Self {
        Self {
            slots: std::array::from_fn(|_| Slot {
                chunk: AtomicU64::new(0),
                moved: AtomicPtr::new(closed()),
            }),
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The next block, if one was chained (Acquire: its slots were
    /// initialised before it was published).
    fn next(&self) -> Option<&Block> {
        // SAFETY: a non-null `next` points to a block leaked by `register`
        // with `Box::into_raw`, freed only by `Fronts`'s `Drop`, which has
        // `&mut`.
        unsafe { self.next.load(Ordering::Acquire).as_ref() }
    }
}

/// A snapshot's place in the registry: its slot, withdrawn when dropped.
pub(crate) struct Front<'a> {
    fronts: &'a Fronts,
    slot: &'a Slot,
}

impl Fronts {
    pub(crate) fn new() -> Self {
        Self {
            active: AtomicUsize::new(0),
            first: Block::new(),
        }
    }

    /// Registers a snapshot about to read chunk 0, its list of moved
    /// entries open. The caller then publishes chunk 0 ([`Front::advance`])
    /// and bumps every stripe before it reads (see the module documentation).
    ///
    /// Claims a free slot by compare-and-swap, chaining a new block when all
    /// are taken: a claim retries only because another snapshot claimed the
    /// slot or chained the block first.
    pub(crate) fn register(&self) -> Front<'_> {
        // Raised first, so that a mover that loads a front loads `active`
        // first and finds it raised (Release here, Acquire there).
        self.active.fetch_add(1, Ordering::AcqRel);
        let mut block = &self.first;
        loop {
            for slot in &block.slots {
                if slot
                    .chunk
                    .compare_exchange(0, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    // Opened before the first front is published (Release,
                    // in `advance`): a mover that sees the front sees the
                    // list open. A mover of an earlier snapshot of this slot
                    // that pushes now adds a real item (copied before this
                    // snapshot began), at worst a second copy of it.
                    slot.moved.store(ptr::null_mut(), Ordering::Relaxed);
                    return Front { fronts: self, slot };
                }
            }
            block = match block.next() {
                Some(next) => next,
                None => {
                    let fresh = Box::into_raw(Box::new(Block::new()));
                    match block.next.compare_exchange(
                        ptr::null_mut(),
                        fresh,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        // SAFETY: just published, and never freed before the
                        // registry.
                        Ok(_) => unsafe { &*fresh },
                        Err(winner) => {
                            // SAFETY: `fresh` was never published: ours to free.
                            drop(unsafe { Box::from_raw(fresh) });
                            // SAFETY: as in `Block::next`.
                            unsafe { &*winner }
                        }
                    }
                }
            };
        }
    }

    /// Calls `f(c)` for the chunk `c` of every snapshot under way, until `f`
    /// returns true; whether it did. Called by a path search to avoid moves
    /// across a front.
    #[inline]
    pub(crate) fn any(&self, mut f: impl FnMut(u64) -> bool) -> bool {
        let mut found = false;
        self.each(|_, c| {
            found = f(c);
            found
        });
        found
    }

    /// Calls `f(slot, c)` for every snapshot under way reading chunk `c`,
    /// until `f` returns true.
    #[inline]
    fn each(&self, mut f: impl FnMut(&Slot, u64) -> bool) {
        // Acquire, pairing with `register`'s raise and with the fronts'
        // Release stores: see the module documentation.
        if self.active.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut block = Some(&self.first);
        while let Some(b) = block {
            for slot in &b.slots {
                // Acquire: a mover that reads a front stored after the
                // snapshot's bump it read (or a slot freed at the end) must
                // complete its move after the reads that preceded that store,
                // and sees the slot's list opened before it. (Loom does not
                // explore the load buffering that Relaxed would allow here,
                // so no model fails with it; the argument stands on its own.)
                let front = slot.chunk.load(Ordering::Acquire);
                if front != 0 && front != CLAIMED && f(slot, front - 1) {
                    return;
                }
            }
            block = b.next();
        }
    }

    /// Records `entry` (see [`entry`]) with every snapshot under way whose
    /// chunk `c` has `crosses(c)`: called by a mover after its publish and
    /// before its clear, for a move that such a snapshot might otherwise
    /// miss (see the module documentation).
    #[inline]
    pub(crate) fn record(&self, crosses: impl Fn(u64) -> bool, entry: u64) {
        self.each(|slot, c| {
            if crosses(c) {
                push(slot, entry);
            }
            false
        });
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
        let mut bytes = 0;
        let mut block = self.first.next();
        while let Some(b) = block {
            bytes += std::mem::size_of::<Block>();
            block = b.next();
        }
        bytes
    }
}

/// Pushes `entry` onto `slot`'s list, unless the list is closed (its
/// snapshot read the whole table: see the module documentation).
fn push(slot: &Slot, entry: u64) {
    let node = Box::into_raw(Box::new(Moved {
        entry,
        next: ptr::null_mut(),
    }));
    // Acquire: a push that reads the list closed sees the snapshot's reads
    // as done (the close is AcqRel).
    let mut head = slot.moved.load(Ordering::Acquire);
    loop {
        if head == closed() {
            // SAFETY: `node` was never published: ours to free.
            drop(unsafe { Box::from_raw(node) });
            return;
        }
        // SAFETY: `node` is unpublished until the CAS below succeeds; only
        // this thread reaches it until then.
        unsafe { (*node).next = head };
        // Release: the snapshot that takes the list sees the node's fields.
        // The push never reads another node, so a head freed and reused
        // meanwhile (ABA) still leaves a well-formed list: `next` is always
        // the value the CAS replaced.
        match slot
            .moved
            .compare_exchange_weak(head, node, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return,
            Err(now) => head = now,
        }
    }
}

/// Closes `slot`'s list and returns its entries, freeing the nodes.
fn take_all(slot: &Slot) -> Vec<u64> {
    // AcqRel: Acquire, to see every node pushed before (and its fields);
    // Release, so that a push that reads the list closed sees this
    // snapshot's reads of the table as done.
    let mut node = slot.moved.swap(closed(), Ordering::AcqRel);
    let mut entries = Vec::new();
    while !node.is_null() && node != closed() {
        // SAFETY: every node on the list was leaked by `push` with
        // `Box::into_raw` and published by its CAS; the swap took the list
        // out of the slot, so no one else reaches it, and each node is freed
        // once.
        let moved = unsafe { Box::from_raw(node) };
        entries.push(moved.entry);
        node = moved.next;
    }
    entries
}

impl Drop for Fronts {
    fn drop(&mut self) {
        // Loads, not `get_mut`: loom's atomics have no `get_mut`. With
        // `&mut self` no other thread holds the registry, and every
        // snapshot's list was closed when its `Front` dropped.
        let mut next = self.first.next.load(Ordering::Acquire);
        while !next.is_null() {
            // SAFETY: every chained block was leaked by `register` with
            // `Box::into_raw` and is freed here once; `&mut self` means no
            // snapshot or mover holds a reference.
            let block = unsafe { Box::from_raw(next) };
            next = block.next.load(Ordering::Acquire);
        }
    }
}

impl Front<'_> {
    /// Publishes that the snapshot now reads chunk `chunk` (Release: the
    /// chunks before it were read before this store, and the list was
    /// opened; a mover that sees it completes moves behind it after those
    /// reads).
    pub(crate) fn advance(&self, chunk: u64) {
        self.slot.chunk.store(chunk + 1, Ordering::Release);
    }

    /// Ends the snapshot, which has read every chunk: closes its list and
    /// returns the entries recorded in it (see [`entry`]), in no particular
    /// order.
    pub(crate) fn finish(self) -> Vec<u64> {
        take_all(self.slot)
    }
}

impl Drop for Front<'_> {
    fn drop(&mut self) {
        // A snapshot that stopped early (its sink failed) frees its list
        // here; after `finish` the list is closed and empty.
        drop(take_all(self.slot));
        // Release: the snapshot's reads come before a mover that sees the
        // slot free completes a move across it.
        self.slot.chunk.store(0, Ordering::Release);
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
    /// A view of no snapshot: a search with it takes every move.
    pub(crate) fn none() -> Self {
        Self {
            chunks: [0; VIEW],
            len: 0,
        }
    }

    /// Whether no snapshot was under way.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a move between buckets in chunks `a` and `b` keeps its side
    /// of every front in the view ([`keeps_side`]): the moves a path search
    /// takes first while snapshots run.
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

/// Whether a move from a bucket in chunk `src` to one in chunk `dst` must be
/// recorded with a snapshot reading chunk `c`: its source is not behind the
/// front (it may be read after the clear) and its destination not ahead of
/// it (it may have been read before the copy). Every other move is seen by
/// the snapshot without help: a source behind the front was read while it
/// held the item, a destination ahead of it is read after the copy. A
/// forward move across the front (source behind, destination ahead) shows
/// the item twice.
#[inline]
pub(crate) fn crosses_back(src: u64, dst: u64, c: u64) -> bool {
    src >= c && dst <= c
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
        // Claimed but not yet reading: no front to respect.
        assert!(!fronts.any(|_| true));
        drop(again);
    }

    #[test]
    fn moves_are_recorded_with_the_snapshots_they_cross() {
        let fronts = Fronts::new();
        // No snapshot: nothing to record, nothing kept.
        fronts.record(|_| true, entry(3, 7));
        let (a, b) = (fronts.register(), fronts.register());
        a.advance(2);
        b.advance(9);
        for (bucket, fp) in [(1, 5), (4, 6)] {
            fronts.record(|c| crosses_back(5, 1, c) && c == 2, entry(bucket, fp));
        }
        fronts.record(|c| c == 9, entry(8, u32::MAX));
        let mut got = a.finish();
        got.sort_unstable();
        assert_eq!(got, [entry(1, 5), entry(4, 6)]);
        assert_eq!(b.finish(), [entry(8, u32::MAX)]);
        assert_eq!(split_entry(entry((1 << 32) - 1, 9)), ((1 << 32) - 1, 9));
        // A finished snapshot's slot takes no entries, and a new snapshot of
        // the slot starts with an empty list.
        fronts.record(|_| true, entry(1, 1));
        let c = fronts.register();
        c.advance(0);
        assert!(c.finish().is_empty());
    }

    #[test]
    fn which_moves_are_recorded_and_which_keep_their_side() {
        assert!(keeps_side(1, 2, 5) && keeps_side(7, 9, 5));
        assert!(!keeps_side(1, 7, 5) && !keeps_side(7, 1, 5));
        assert!(!keeps_side(5, 7, 5) && !keeps_side(1, 5, 5) && !keeps_side(5, 5, 5));
        // Forward across the front, or out of the chunk read onward: seen.
        assert!(!crosses_back(1, 7, 5) && !crosses_back(5, 7, 5) && !crosses_back(1, 5, 5));
        assert!(!crosses_back(1, 2, 5) && !crosses_back(7, 9, 5));
        // Backward, or into the chunk read from ahead or from it: recorded.
        assert!(crosses_back(7, 1, 5) && crosses_back(7, 5, 5) && crosses_back(5, 5, 5));
        assert!(crosses_back(5, 1, 5));
    }
}
