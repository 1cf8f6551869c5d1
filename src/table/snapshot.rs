//! Reading a live table for the byte format: every item that stays in the
//! table while it is read is in the reading.
//!
//! A plain word-by-word copy of a table that other threads change can lose an
//! item: one that a relocation moves from a word not yet copied into one
//! already copied is in neither copy. So the reading keeps a front (see
//! [`front`]): it reads the words a chunk at a time, publishing the chunk it
//! reads, and movers undo any move that would cross it. Removes take from the
//! lower bucket of a pair first ([`Table::remove_copy`]), so that a remove of
//! an item put behind the front never takes the copy of a colliding item ahead
//! of it. What the reading then holds: for every bucket pair and fingerprint,
//! at least one copy per item that was in the table for the whole reading.
//! It may hold more than the table held at any one moment: an item removed
//! and inserted again while it ran may be read twice, and so may one whose
//! move was under way as the front passed its buckets (copied, not yet
//! cleared), or went forward across the front (from a bucket read to one not
//! yet read: the path search leaves such moves out, so only a move the front
//! overtook between the search and the move). Never fewer: the snapshot loses
//! nothing that stayed.
//!
//! **What it costs a writer.** Nothing while no snapshot runs: a mover loads
//! one counter that nobody writes, and a path search one more. During one, a
//! move backward across the front is undone, and the insert that made it
//! searches for another path; the search leaves every move across the front
//! out to begin with, so an undo needs the front to reach a bucket of the
//! move while the move is under way. Near full, an insert then has fewer
//! paths, and one that finds none while a snapshot runs puts its item into
//! the table's stash ([`stash`]), which the reading reads after the last
//! chunk and, once done, moves back into the table: no insert is refused
//! because a snapshot runs. No writer waits for a snapshot, and a snapshot
//! waits for no one: it reads each word once.
//!
//! **What it costs the reading.** Per chunk, one store and one bump of each
//! relocation stripe (at most 256): for a table of 4096 chunks or more, about
//! a million bumps, against reading the table once.
//!
//! [`front`]: super::front
//! [`stash`]: super::stash

use super::front::{may_complete, View};
use super::walk::Reads;
use super::Table;
use crate::fingerprint::Width;
use crate::sync::Ordering;

/// Chunks a reading aims for: enough that the chunk being read (where moves
/// are undone) is a small part of the table, few enough that bumping
/// every stripe per chunk costs little beside reading the words.
const TARGET_CHUNKS: u64 = 4096;

/// Words handed to the reading's sink at a time: 512 KiB of buffer.
const PIECE: usize = 1 << 16;

/// Words a chunk has at least per relocation stripe: the bumps a chunk costs
/// (one per stripe) then cost less than reading its words from memory.
/// Under loom, chunks are as small as they can be instead, so that a table
/// of four buckets has a front between its buckets for a move to cross.
const WORDS_PER_STRIPE: u64 = if cfg!(lockfree_cuckoo_filter_loom) {
    0
} else {
    8
};

/// The shift that gives a word's chunk for a table of `words` words of width
/// `W` and `stripes` relocation stripes: a chunk is a power of two of words,
/// at least a bucket's words (two for 21 and 32-bit fingerprints, else one),
/// so that no bucket lies in two chunks, and at least [`WORDS_PER_STRIPE`]
/// per stripe.
pub(crate) fn chunk_shift<W: Width>(words: u64, stripes: usize) -> u32 {
    let least = (W::WORDS_PER_BUCKET as u64).max(WORDS_PER_STRIPE * stripes as u64);
    words
        .div_ceil(TARGET_CHUNKS)
        .max(least)
        .next_power_of_two()
        .ilog2()
}

impl<W: Width> Table<W> {
    /// The chunk of the snapshot front that bucket `bucket` lies in.
    #[inline]
    pub(super) fn chunk_of(&self, bucket: u64) -> u64 {
        (self.locus(bucket).first as u64) >> self.front_shift
    }

    /// The fronts of the snapshots under way, read once, for a path search.
    #[inline]
    pub(crate) fn front_view(&self) -> View {
        self.fronts.view()
    }

    /// Whether the path search takes a move between buckets `a` and `b`
    /// with the fronts `view` ([`Self::front_view`]): one that keeps its side
    /// of every front.
    #[inline]
    pub(crate) fn view_allows(&self, view: &View, a: u64, b: u64) -> bool {
        view.is_empty() || view.keeps_sides(self.chunk_of(a), self.chunk_of(b))
    }

    /// Whether a move from bucket `src` to bucket `dst` may complete: for
    /// every snapshot under way, [`may_complete`]. Called by a mover after
    /// its publish, which orders it (see [`front`](super::front)).
    #[inline]
    pub(crate) fn move_may_complete(&self, src: u64, dst: u64) -> bool {
        !self
            .fronts
            .any(|c| !may_complete(self.chunk_of(src), self.chunk_of(dst), c))
    }

    /// Reads the table's words in order for a snapshot, handing them to
    /// `sink` a piece at a time, then the stash (see the module
    /// documentation for what they hold). Stops at the first error `sink`
    /// returns. Once done, moves what the stash holds back into the table
    /// where room can be made ([`Self::drain_stash`]).
    pub(crate) fn read_snapshot<E>(
        &self,
        mut sink: impl FnMut(&[u64]) -> Result<(), E>,
    ) -> Result<Reading, E> {
        let words = self.word_count();
        let chunk = 1usize << self.front_shift;
        let mut piece = Vec::with_capacity(chunk.min(PIECE).min(words));
        let mut items = 0;
        let front = self.fronts.register();
        for (c, start) in (0..words).step_by(chunk).enumerate() {
            front.advance(c as u64);
            self.relocations.advance_all();
            let end = (start + chunk).min(words);
            for from in (start..end).step_by(PIECE) {
                piece.clear();
                let to = (from + PIECE).min(end);
                piece.extend((from..to).map(|i| self.word(i).load(Ordering::Acquire)));
                items += piece
                    .iter()
                    .map(|&w| u64::from(W::occupied_in(w)))
                    .sum::<u64>();
                sink(&piece)?;
            }
        }
        // The stash, as the chunk after the last.
        front.advance(self.stash_chunk());
        self.relocations.advance_all();
        let mut stashed = Vec::new();
        self.stash.visit(Reads::Loads, |lower, fp| {
            // Below 2^32: see `stash`.
            stashed.push((lower as u32, fp));
        });
        drop(front);
        // In the format's order (docs/FORMAT.md).
        stashed.sort_unstable();
        self.drain_stash();
        Ok(Reading {
            items: items + stashed.len() as u64,
            stashed,
        })
    }
}

/// What [`Table::read_snapshot`] read besides the words.
pub(crate) struct Reading {
    /// Fingerprints read: in the words, and in the stash.
    pub(crate) items: u64,
    /// The stash's entries as (lower bucket of the pair, fingerprint).
    pub(crate) stashed: Vec<(u32, u32)>,
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;
    use crate::fingerprint::{W12, W16, W21, W32, W8};

    #[test]
    fn chunks_hold_whole_buckets() {
        assert_eq!(chunk_shift::<W16>(2, 0), 0);
        assert_eq!(chunk_shift::<W8>(2, 0), 0);
        assert_eq!(chunk_shift::<W32>(4, 0), 1);
        assert_eq!(chunk_shift::<W21>(4, 0), 1);
        assert_eq!(chunk_shift::<W12>(4, 0), 0);
        assert_eq!(chunk_shift::<W16>(1 << 28, 256), 16);
        assert_eq!(chunk_shift::<W16>((1 << 28) + 1, 256), 17);
        // Small tables: at least 8 words per stripe.
        assert_eq!(chunk_shift::<W16>(5000, 64), 9);
        assert_eq!(chunk_shift::<W16>(8, 1), 3);
    }

    #[test]
    fn a_quiescent_reading_is_the_words() {
        let t = Table::<W16>::new(1 << 14).unwrap();
        for b in 0..5000u64 {
            t.insert(t.position(b.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
                .unwrap();
        }
        let mut read = Vec::new();
        let reading = t
            .read_snapshot(|piece| {
                read.extend_from_slice(piece);
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(read, t.words().collect::<Vec<_>>());
        assert_eq!((reading.items, reading.stashed.len()), (5000, 0));
        assert!(t.move_may_complete(0, 1 << 13));
    }
}
