//! The stash: a few slots beside the buckets for items that an insert could
//! not place while a snapshot was reading the table.
//!
//! While a snapshot runs, the path search leaves out every move across its
//! front (see [`super::front`]), and near full an insert may then find no
//! path where it would have found one otherwise. Such an insert puts its item
//! here instead of reporting the table full. The snapshot reads the stash
//! after the last bucket, so the stash is, to the front, one more chunk past
//! the end: an item put here before the snapshot reads it is in the
//! snapshot, and the byte format carries the stash's entries after the table
//! (its moved list).
//!
//! An entry names its item's pair by the pair's lower bucket and holds its
//! fingerprint: `lower << 32 | fp` (bucket indices are below 2^32, and a
//! fingerprint is never 0, so 0 is an empty entry). Entries are grouped in
//! lines of [`LINE`], one cache line each; a pair's entries live in the line
//! its lower bucket hashes to (and the lines chained after it when it
//! filled), so a lookup reads one line. Every operation
//! that searches a pair reads its line while the stash is not empty
//! ([`Stash::is_empty`]: one load of a counter that only stash operations
//! write), and treats an entry like one more bucket of the pair, the last:
//! copies of one fingerprint in one pair are interchangeable, wherever they
//! lie, and every take from the stash is announced on the pair's stripe like
//! any other take.
//!
//! Entries leave the stash by removes, by `clear`, and by the snapshot that
//! ends: it moves each entry into the table as a relocation would, copy
//! first, then a publish on the pair's stripe, then the take of the entry
//! ([`Table::drain_stash`](super::Table::drain_stash)).
//!
//! **The count.** The stash's `len` counts the entries present plus the
//! puts under way: a put raises it (Relaxed) and then CASes its entry in, a
//! take lowers it after its CAS (Release). No search relies on the order of
//! a put's raise and its CAS: a search that must find the entry is one that
//! the put happens before, and it sees the raise with the entry. A search
//! loads the count (Acquire) after its bucket loads and before it reads the
//! pair's counter again, and two cases need that order:
//!
//! - a move out of the stash (copy into a bucket, publish, take, lower): a
//!   search that read the bucket before the copy and the count as lowered
//!   synchronizes with the lowering, so its counter read sees the publish,
//!   and it searches again;
//! - a colliding twin put here and then removed, the remove taking the
//!   item's copy from a bucket (buckets before the stash): a search whose
//!   bucket load saw that take sees what came before it, the put's raise
//!   included, so it reads the line and finds the twin's entry, which now
//!   stands for the item.
//!
//! A count read as nonzero sends the search to the line; a full line has
//! another chained after it ([`crate::sync::chain`]), so a put never fails.

use std::cell::Cell;

use super::front::may_complete;
use super::path::{self, RootPut};
use super::relocation;
use super::walk::Reads;
use super::{Position, Table};
use crate::fingerprint::Width;
use crate::sync::chain::{self, Chained, Link};
use crate::sync::{AtomicU64, Ordering};

/// Entries per line: a line is a cache line, seven entries and the link to
/// the line chained after it (one entry and the link under loom, to keep
/// models small).
const LINE: usize = if cfg!(lockfree_cuckoo_filter_loom) {
    1
} else {
    7
};

/// Most lines a stash starts with.
const MAX_LINES: u64 = 1024;

/// Buckets per line a stash starts with: a table of 2^20 buckets gets 64
/// lines (4 KiB, 0.004 bytes per bucket).
const BUCKETS_PER_LINE: u64 = 1 << 14;

/// Least lines a stash starts with.
const MIN_LINES: u64 = 4;

/// One line of entries, and the line chained after it when it filled.
#[repr(align(64))]
struct Line {
    cells: [AtomicU64; LINE],
    next: Link<Line>,
}

impl Line {
    fn new() -> Self {
        Self {
            cells: std::array::from_fn(|_| AtomicU64::new(0)),
            next: Link::new(),
        }
    }

    /// This line's cells and those of every line chained after it.
    fn cells(&self) -> impl Iterator<Item = &AtomicU64> {
        chain::from(self).flat_map(|line| &line.cells)
    }
}

impl Chained for Line {
    fn link(&self) -> &Link<Line> {
        &self.next
    }
}

/// The stash of one table.
pub(crate) struct Stash {
    /// Entries present plus puts under way (see the module documentation).
    len: AtomicU64,
    lines: Box<[Line]>,
}

/// The entry of the item whose pair's lower bucket is `lower`, fingerprint `fp`.
#[inline(always)]
fn entry(lower: u64, fp: u32) -> u64 {
    debug_assert!(lower < 1 << 32 && fp != 0);
    (lower << 32) | u64::from(fp)
}

/// The lower bucket and fingerprint of a nonzero entry.
#[inline(always)]
fn parts(entry: u64) -> (u64, u32) {
    (entry >> 32, entry as u32)
}

impl Stash {
    /// An empty stash for a table of `buckets` buckets: one line per
    /// [`BUCKETS_PER_LINE`], a power of two between [`MIN_LINES`] and
    /// [`MAX_LINES`] (1 under loom).
    pub(crate) fn new(buckets: u64) -> Self {
        let lines = if cfg!(lockfree_cuckoo_filter_loom) {
            1
        } else {
            (buckets / BUCKETS_PER_LINE)
                .clamp(MIN_LINES, MAX_LINES)
                .next_power_of_two()
        };
        Self {
            len: AtomicU64::new(0),
            lines: (0..lines).map(|_| Line::new()).collect(),
        }
    }

    /// Whether the stash holds no entry and no put is under way. Acquire:
    /// see the module documentation.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Ordering::Acquire) == 0
    }

    /// Bytes the stash holds, chained lines included.
    pub(crate) fn memory_usage(&self) -> usize {
        let chained = self
            .lines
            .iter()
            .map(|line| line.next.chain().count() * size_of::<Line>());
        size_of_val(&*self.lines) + chained.sum::<usize>()
    }

    /// The line of the pair whose lower bucket is `lower`.
    #[inline(always)]
    fn line(&self, lower: u64) -> &Line {
        let mixed = lower.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
        let index = mixed as usize & (self.lines.len() - 1);
        // SAFETY: the length is a power of two, at least 1 (see `new`), so
        // masking with `len - 1` gives an index below it.
        unsafe { self.lines.get_unchecked(index) }
    }

    /// Puts an entry for the pair whose lower bucket is `lower` with
    /// fingerprint `fp` into an empty entry of its line, or of a line chained
    /// after it, chaining a new line when all are taken: the stash never
    /// refuses, and holds 8 bytes per item put here (9 with the links). The
    /// count is raised first, Relaxed; a reader that must see this entry is
    /// one that this put happens before, and it sees the raise with the
    /// entry, whichever came first (see the module documentation).
    pub(crate) fn put(&self, lower: u64, fp: u32) {
        self.len.fetch_add(1, Ordering::Relaxed);
        let new = entry(lower, fp);
        let mut line = self.line(lower);
        loop {
            for cell in &line.cells {
                // AcqRel. Acquire for a growable filter's covering, which reads
                // every cell, and every link to a chained line, by an AcqRel
                // read-modify-write after publishing its pending summary
                // (`Table::read_fingerprints`): a put that comes after that
                // read in the cell's order (or into a line chained after the
                // reading of its link, the chaining's CAS being AcqRel too)
                // synchronizes with it, so the inserting thread sees the
                // pending summary and records its item. Release, as every
                // CAS of a bucket word: a search that reads the entry sees
                // what came before it.
                if cell
                    .compare_exchange(0, new, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return;
                }
            }
            line = line.next.get_or_chain(Line::new);
        }
    }

    /// Whether the pair's line (and the lines chained after it) holds an
    /// entry for it with `fp` (Acquire loads, as a bucket's).
    #[inline]
    pub(crate) fn holds(&self, lower: u64, fp: u32) -> bool {
        let wanted = entry(lower, fp);
        self.line(lower)
            .cells()
            .any(|cell| cell.load(Ordering::Acquire) == wanted)
    }

    /// How many entries for the pair with `fp` its line (and the lines
    /// chained after it) holds (Acquire loads, as [`Self::holds`]).
    pub(crate) fn copies(&self, lower: u64, fp: u32) -> usize {
        let wanted = entry(lower, fp);
        self.line(lower)
            .cells()
            .filter(|cell| cell.load(Ordering::Acquire) == wanted)
            .count()
    }

    /// Takes one entry for the pair with `fp`; false if there is none. The
    /// caller announced the take on the pair's stripe before. The count is
    /// lowered after the CAS, Release: see the module documentation.
    pub(crate) fn take(&self, lower: u64, fp: u32) -> bool {
        let wanted = entry(lower, fp);
        for cell in self.line(lower).cells() {
            if cell
                .compare_exchange(wanted, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                self.len.fetch_sub(1, Ordering::Release);
                return true;
            }
        }
        false
    }

    /// Calls `f(lower, fp)` for every entry, line by line, each line's
    /// entries and then its link read as `reads` says.
    pub(crate) fn visit(&self, reads: Reads, mut f: impl FnMut(u64, u32)) {
        // As `chain::from`, with each link followed as `reads` says.
        let chained =
            |first| std::iter::successors(Some(first), move |line: &&Line| reads.link(&line.next));
        for cell in self
            .lines
            .iter()
            .flat_map(chained)
            .flat_map(|line| &line.cells)
        {
            let e = reads.word(cell);
            if e != 0 {
                let (lower, fp) = parts(e);
                f(lower, fp);
            }
        }
    }

    /// Takes every entry for which `keep(lower, fp)`, asked after the entry
    /// was read (Acquire), is false: `clear`'s sweep (see `super::clear`).
    /// Returns how many it took and whether it kept any.
    pub(crate) fn sweep(&self, keep: impl Fn(u64, u32) -> bool) -> (usize, bool) {
        let (mut taken, mut kept) = (0, false);
        for cell in self.lines.iter().flat_map(Line::cells) {
            let mut e = cell.load(Ordering::Acquire);
            while e != 0 {
                let (lower, fp) = parts(e);
                if keep(lower, fp) {
                    kept = true;
                    break;
                }
                match cell.compare_exchange(e, 0, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => {
                        self.len.fetch_sub(1, Ordering::Release);
                        taken += 1;
                        break;
                    }
                    Err(now) => e = now,
                }
            }
        }
        (taken, kept)
    }
}

impl Drop for Stash {
    fn drop(&mut self) {
        for line in self.lines.iter_mut() {
            line.next.free_chain();
        }
    }
}

impl<W: Width> Table<W> {
    /// The chunk the stash is to a snapshot's front: the one after the last
    /// chunk of words, read after all of them.
    pub(crate) fn stash_chunk(&self) -> u64 {
        (self.word_count() as u64).div_ceil(1 << self.front_shift)
    }

    /// Puts an item of a decoded moved list (a snapshot's stash entry, its
    /// pair named by either bucket) into the table as an insert would (see
    /// [`Self::insert_fingerprint`]), else into the stash, and counts it in.
    /// Decoding only: no other thread uses the table yet.
    pub(crate) fn put_stashed(&self, bucket: u64, fp: u32) {
        if self.insert_fingerprint(bucket, fp).is_err() {
            self.stash_position(Position {
                i1: bucket,
                i2: self.alternate(bucket, fp),
                fp,
            });
        }
    }

    /// Puts the item of `pos` into the stash and counts it (decoding, and
    /// the test hooks).
    pub(crate) fn stash_position(&self, pos: Position) {
        self.stash_new(pos);
        self.count.increment(pos.i1);
    }

    /// Puts the fingerprint of `pos` into the stash, under its pair's lower
    /// bucket, uncounted (an insert counts its item once it is placed).
    #[cold]
    pub(crate) fn stash_new(&self, pos: Position) {
        self.stash.put(pos.i1.min(pos.i2), pos.fp);
    }

    /// Moves every entry of the stash into the table where room can be made
    /// (see [`Self::unstash`]); the rest stay. Called by a snapshot once it
    /// has withdrawn its front.
    pub(crate) fn drain_stash(&self) {
        if self.stash.is_empty() {
            return;
        }
        let mut entries = Vec::new();
        self.stash
            .visit(Reads::Loads, |lower, fp| entries.push((lower, fp)));
        for (lower, fp) in entries {
            self.unstash(lower, fp);
        }
    }

    /// Moves one copy of `fp` out of the stash, from the entry of the pair
    /// whose lower bucket is `lower`, into the table: a relocation whose
    /// source is the stash ([`Self::relocate`] has the protocol). Copy into
    /// a bucket of the pair (along a cuckoo path if both are full), publish
    /// on the pair's stripe, check the fronts, take the entry. True if it
    /// moved.
    ///
    /// To the fronts, the stash is the chunk past the last
    /// ([`Self::stash_chunk`]): a move out of it may complete only into a
    /// bucket ahead of every front, and is undone otherwise (the copy taken
    /// back), as a move backward across a front is. If the entry is gone by
    /// the time of the take (a remove took it), the copy is one too many and
    /// one copy of the pair is removed instead, as a mover's fallback does.
    pub(crate) fn unstash(&self, lower: u64, fp: u32) -> bool {
        let pos = Position {
            i1: lower,
            i2: self.alternate(lower, fp),
            fp,
        };
        // From before the copy until the end, as a mover (see `super::clear`).
        let _in_flight = self.relocations.stripe(pos.i1, pos.i2).enter();
        let root = Cell::new(pos.i1);
        let put = |bucket: u64| {
            root.set(bucket);
            self.put(bucket, fp)
        };
        let copied = put(pos.i1)
            || put(pos.i2)
            || path::insert_with(self, pos, None, |bucket| {
                if put(bucket) {
                    RootPut::Put
                } else {
                    RootPut::Full
                }
            }) == Ok(RootPut::Put);
        if !copied {
            return false;
        }
        relocation::publish(self.relocations.for_pair(pos.i1, pos.i2));
        let (src, dst) = (self.stash_chunk(), self.chunk_of(root.get()));
        if self.fronts.any(|c| !may_complete(src, dst, c)) {
            // Behind a front, or in the chunk it reads: take the copy back.
            self.take_back_copy(Some(root.get()), pos);
            return false;
        }
        if !self.stash.is_empty() && self.stash.take(lower, fp) {
            return true;
        }
        // The entry is gone (a remove took it): this copy is one too many.
        self.take_back_copy(None, pos);
        false
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;

    #[test]
    fn puts_finds_and_takes_by_pair_and_fingerprint() {
        let s = Stash::new(1 << 10);
        assert!(s.is_empty());
        s.put(7, 3);
        s.put(7, 3);
        s.put(8, 3);
        assert!(!s.is_empty());
        assert!(s.holds(7, 3) && s.holds(8, 3) && !s.holds(7, 4) && !s.holds(9, 3));
        assert!(s.take(7, 3) && s.take(7, 3) && !s.take(7, 3));
        let mut left = Vec::new();
        s.visit(Reads::Loads, |b, fp| left.push((b, fp)));
        assert_eq!(left, [(8, 3)]);
        assert!(s.take(8, 3) && s.is_empty());
        // The largest bucket and fingerprint round-trip.
        s.put((1 << 32) - 1, u32::MAX);
        assert!(s.holds((1 << 32) - 1, u32::MAX));
    }

    #[test]
    fn lookups_and_removes_see_the_stash_and_the_buckets() {
        use crate::fingerprint::W16;
        let t = Table::<W16>::new(64).unwrap();
        let hashes: Vec<u64> = (0..201u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let positions: Vec<_> = hashes.iter().map(|&h| t.position(h)).collect();
        for &pos in &positions[..200] {
            t.insert(pos).unwrap();
        }
        t.stash_position(positions[200]);
        // Hits in every lane, and the stashed item, while the stash holds
        // something.
        assert!(positions.iter().all(|&pos| t.contains(pos)));
        let mut out = vec![false; positions.len()];
        t.contains_batch(&hashes, &mut out, |&h| h);
        assert!(out.iter().all(|&hit| hit));
        assert_eq!(t.len(), 201);
        // Moved into the table by a drain where room can be made.
        assert!(t.remove(positions[0]));
        t.drain_stash();
        assert!(t.stash.is_empty());
        assert!(positions[1..].iter().all(|&pos| t.contains(pos)));
        assert_eq!(t.len(), 200);
    }

    #[test]
    fn a_full_line_chains_another_and_sizes_follow_the_table() {
        let s = Stash::new(2);
        assert_eq!(s.memory_usage(), MIN_LINES as usize * 64);
        for k in 0..3 * LINE as u32 {
            s.put(5, 1 + k);
        }
        assert_eq!(s.memory_usage(), (MIN_LINES as usize + 2) * 64);
        assert!((0..3 * LINE as u32).all(|k| s.holds(5, 1 + k)));
        assert_eq!(s.sweep(|_, fp| fp % 2 == 0), (11, true));
        assert!(s.take(5, 2) && !s.holds(5, 1));
        assert_eq!(s.sweep(|_, _| false), (9, false));
        assert!(s.is_empty());
        assert_eq!(Stash::new(1 << 20).memory_usage(), 64 * 64);
        assert_eq!(Stash::new(1 << 32).memory_usage(), MAX_LINES as usize * 64);
    }
}
