//! Emptying a table that other threads are using.
//!
//! [`Table::clear`] sweeps the table word by word: each word with fingerprints
//! in it is CASed to a value without them, and the item count loses as many
//! items as the sweep took fingerprints. A word whose CAS fails (another
//! operation changed it) is read again and swept again. Operations racing the
//! sweep see each word before or after its sweep; once every operation has
//! finished, `len()` equals the number of fingerprints in the table, because
//! every fingerprint the sweep takes was counted in by the insert that put it,
//! and is counted out exactly once, by the sweep.
//!
//! # What the sweep must not take
//!
//! Two kinds of operation hold a copy that the count does not (yet) stand for:
//! a mover between its copy and its clear (its extra copy), and an
//! `insert_if_absent` between its put and its answer. Both go on to take a
//! copy of their fingerprint out of the pair (the mover its source, or one copy
//! in its fallback; the `insert_if_absent` a duplicate), trusting the table's
//! invariant that the pair holds one copy per live item plus one per such
//! operation in flight. A sweep that took their uncounted copy would break that
//! invariant, and their take would then remove the copy of an item inserted
//! after `clear` returned:
//!
//! > A mover copies `K` from bucket `a` to bucket `b`. The sweep takes both
//! > copies and `clear` returns. `K2`, with the same fingerprint and buckets, is
//! > inserted into `a` (in the slot `K` had). The mover's clear of its source
//! > finds the fingerprint in its slot and clears it: `K2` is gone, and `len()`
//! > counts it.
//!
//! So each such operation enters its stripe's in-flight count before it puts
//! its copy, and leaves it after its last step
//! ([`Stripe::enter`](super::relocation::Stripe::enter)), and the sweep keeps, in every word, the
//! fingerprints whose pair's stripe has an operation in flight when the sweep
//! looks. The sweep reads the count *after* reading the word it will CAS
//! (the word by an Acquire load; the count needs no ordering of its own): if
//! the word holds such a copy, or any later value of it, the sweep
//! synchronizes with the put and sees the operation's entry, and if
//! the put comes after the read, the sweep's CAS fails and it reads again. So
//! the sweep never takes an uncounted copy, and acts on every pair like a
//! sequence of removes of live items, which the protocol already handles.
//!
//! A kept fingerprint (a mover's, or a fingerprint that merely shares its
//! stripe with one) stays in the table, counted. Words that kept something are
//! swept once more at the end, when the operations have usually finished; what
//! is still kept then survives the clear, as if inserted during it.
//!
//! Why not a clear generation (bumped by `clear` before its sweep, read by a
//! mover before its copy; a mover that sees it changed by its clear or
//! fallback abandons and counts its extra copy in)? Two holes, the first seen
//! in loom (`loom-tests/tests/clear.rs`, `relocation_*`): a mover that reads
//! the generation *after* the bump, while the sweep is under way, copies into
//! a word the sweep has not reached, sees no change, has its extra copy swept,
//! and its fallback then takes the copy of an item inserted after the clear.
//! And a mover that checks the generation and then CASes its source can be
//! overtaken between the two by a whole clear plus inserts that refill the
//! source word to exactly the value it expects; no check separate from the
//! CAS closes that window. Keeping the uncounted copy closes both.
//!
//! # Announcement
//!
//! Every take is announced on its pair's stripe before it happens (the
//! protocol's rule, see [`super::relocation`]). The sweep bumps every stripe
//! once before it starts, which precedes every take it makes. Lookups that
//! race the sweep may answer either way for the items it takes (they race the
//! clear), so the bump only keeps the rule uniform; it costs one bump per
//! stripe (at most 256) and one retry of the lookups running at that moment.

use super::{Table, FAILURE, SUCCESS};
use crate::fingerprint::{self as fpr, Width};
use crate::sync::{AtomicU64, Ordering};

impl<W: Width> Table<W> {
    /// Removes every fingerprint, while other threads may be using the table,
    /// and counts them out. See the module documentation for what racing
    /// operations see and which fingerprints may survive.
    pub(crate) fn clear(&self) {
        self.relocations.announce_all();
        let mut taken = 0;
        let mut again = Vec::new();
        for index in 0..self.word_count() {
            let (n, kept) = self.sweep_word(index);
            taken += n;
            if kept {
                again.push(index);
            }
        }
        // The stash's entries like the words' fingerprints (see `stash`).
        let (n, kept) = self.sweep_stash();
        taken += n;
        for index in again {
            taken += self.sweep_word(index).0;
        }
        if kept {
            taken += self.sweep_stash().0;
        }
        self.count.sub(0, taken);
    }

    /// Takes the fingerprints out of word `index`, except those whose pair's
    /// stripe has an operation with an uncounted copy in flight. Returns how
    /// many it took and whether it kept any.
    fn sweep_word(&self, index: usize) -> (usize, bool) {
        let cell = self.word(index);
        let mut word = cell.load(Ordering::Acquire);
        if W::SORTED {
            return self.sweep_sorted_word(index, cell, word);
        }
        loop {
            let occupied = !fpr::zero_lanes::<W>(word) & W::HIGH;
            if occupied == 0 {
                return (0, false);
            }
            // After the load of `word` (Acquire, like the failed CAS that
            // replaces it): see the module documentation.
            let keep = self.busy_lanes(index, word, occupied);
            let swept = word & keep;
            if swept == word {
                return (0, true);
            }
            match cell.compare_exchange(word, swept, SUCCESS, FAILURE) {
                Ok(_) => {
                    let taken = occupied & !keep;
                    return (taken.count_ones() as usize, keep != 0);
                }
                Err(now) => word = now,
            }
        }
    }

    /// [`Self::sweep_word`] for a semi-sorted layout: word `index` holds
    /// bucket `index` (17 bits, ranked), or buckets `2 · index` and
    /// `2 · index + 1` (9 bits, one in each half), whose fingerprints are kept if their
    /// pair's stripe is busy and otherwise taken, the rest re-encoded, by one
    /// CAS of the whole word.
    fn sweep_sorted_word(&self, index: usize, cell: &AtomicU64, mut word: u64) -> (usize, bool) {
        let per_word = u64::from(W::LANES / W::SLOTS);
        loop {
            let (mut taken, mut keep) = (0, 0);
            let mut swept = word;
            for b in 0..per_word {
                let bucket = index as u64 * per_word + b;
                let mask = self.locus(bucket).mask[0];
                let mut kept = [0u32; fpr::MAX_SLOTS];
                let mut kept_here = 0;
                for fp in W::sorted_fingerprints(word, mask)
                    .into_iter()
                    .filter(|&fp| fp != 0)
                {
                    // After the load of `word`: see the module documentation.
                    let alternate = self.alternate(bucket, fp);
                    if self.relocations.stripe(bucket, alternate).busy() {
                        kept[kept_here] = fp;
                        kept_here += 1;
                    } else {
                        taken += 1;
                    }
                }
                keep += kept_here;
                swept = W::sorted_with_bucket(swept, mask, kept);
            }
            if taken == 0 {
                return (0, keep != 0);
            }
            match cell.compare_exchange(word, swept, SUCCESS, FAILURE) {
                Ok(_) => return (taken, keep != 0),
                Err(now) => word = now,
            }
        }
    }

    /// Takes the stash's entries, except those whose pair's stripe has an
    /// operation in flight (asked after each entry's Acquire load, as for a
    /// word). Returns how many it took and whether it kept any.
    fn sweep_stash(&self) -> (usize, bool) {
        if self.stash.is_empty() {
            return (0, false);
        }
        self.stash.sweep(|lower, fp| {
            let alternate = self.alternate(lower, fp);
            self.relocations.stripe(lower, alternate).busy()
        })
    }

    /// The lanes of `word` (word `index`) to keep: all bits of each occupied
    /// lane (`occupied` flags them by their high bit) whose fingerprint's pair
    /// has an operation in flight on its stripe.
    fn busy_lanes(&self, index: usize, word: u64, mut occupied: u64) -> u64 {
        let mut keep = 0;
        while occupied != 0 {
            let lane = fpr::first_lane::<W>(occupied);
            occupied &= occupied - 1;
            let slot = index as u64 * u64::from(W::LANES) + u64::from(lane);
            let bucket = slot / u64::from(W::SLOTS);
            let fp = fpr::lane_value::<W>(word, lane);
            let alternate = self.alternate(bucket, fp);
            if self.relocations.stripe(bucket, alternate).busy() {
                keep |= W::MAX << (lane * W::BITS);
            }
        }
        keep
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;
    use crate::fingerprint::{W16, W17, W9};
    use crate::table::with_width;

    fn clears<W: Width>() {
        // 200 items in at least 384 slots (buckets of three and up).
        let t = Table::<W>::new(128).unwrap();
        for i in 0..200u64 {
            let hash = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            t.insert(t.position(hash)).unwrap();
        }
        assert_eq!(t.len(), 200);
        t.clear();
        assert_eq!(t.len(), 0);
        let mut left = 0;
        t.for_each_fingerprint(|_, _| left += 1);
        assert_eq!(left, 0);
    }

    #[test]
    fn clear_empties_every_width() {
        for bits in crate::FingerprintBits::ALL {
            with_width!(bits, W, _variant => clears::<W>());
        }
    }

    #[test]
    fn a_busy_stripe_keeps_its_fingerprints() {
        keeps_busy::<W16>();
        keeps_busy::<W17>();
        // Both buckets in one word, one in each half.
        keeps_busy::<W9>();
    }

    fn keeps_busy<W: Width>() {
        let t = Table::<W>::new(2).unwrap();
        let pos = t.position(0x1234_5678_0000_0001);
        t.insert(pos).unwrap();
        t.insert(pos).unwrap();
        let stripe = t.relocations.stripe(pos.i1, pos.i2);
        let guard = stripe.enter();
        t.clear();
        assert_eq!(t.len(), 2, "kept fingerprints stay counted");
        drop(guard);
        t.clear();
        assert_eq!(t.len(), 0);
        assert!(!t.contains(pos));
    }
}
