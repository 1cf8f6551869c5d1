//! Inserting: into one of the item's two buckets, or, both being full, along
//! a cuckoo path that makes room ([`path`]); and inserting only if absent.
//!
//! Here rather than beside the other operations in the table core because
//! these are the operations that need the path search, which itself is built
//! on the core's single-bucket steps: the core does not depend on the search.
//!
//! # Insert if absent
//!
//! [`Table::insert_if_absent`] answers `Ok(true)` when it added a copy because
//! none was present, `Ok(false)` when a copy was present (for this item or a
//! colliding one) and it added nothing. Without races that is a lookup, then an
//! insert. Racing calls for one item could both find it absent and both add a
//! copy; the protocol below turns most of those races into one `true`, and the
//! rest into extra `true`s, each with its own copy: never a lost item, never
//! a `true` without a copy.
//!
//! 1. A validated lookup ([`Table::contains`]): present → `Ok(false)`.
//! 2. Put a copy, *uncounted*, unless the bucket already holds one: the CAS
//!    that puts it expects a word without the fingerprint ([`PutAbsent`]), so
//!    of two racers aiming at one word only the first puts, and the second,
//!    failing its CAS, finds the first's copy → `Ok(false)`. First bucket,
//!    then second, then a cuckoo path, whose final put into the freed slot
//!    first looks at the other bucket, then puts the same way
//!    ([`Table::put_root`]).
//! 3. Look for a duplicate in one word: if some word of the pair holds two or
//!    more copies of the fingerprint (in one bucket), take one of them by a
//!    single CAS *whose expected value holds two or more*, announced on the
//!    stripe first → `Ok(false)`. Otherwise count the item in → `Ok(true)`.
//!
//! Why nothing is lost: copies of one fingerprint in one pair are
//! interchangeable, and the table's invariant (copies = live items + movers in
//! flight) holds with each call between steps 2 and 3 counted as one live
//! item: step 3 either takes one copy and ends it (net zero), or counts it.
//! So once every call has returned, the pair holds exactly one copy per `true`
//! (for items only ever inserted this way). And a take in step 3 never removes
//! the last copy in its word, so from the first put on, the pair is never
//! without a copy (no removes of the item assumed): racing calls for an absent
//! item leave it present, and at least one of them answers `true`. (Loom
//! checks this on two racers; with more, the argument is the same: a take
//! needs two copies in its word at the instant of its CAS.)
//!
//! Extra `true`s: racers whose copies land in different words (one in each
//! bucket, or in the two words of a 32-bit bucket, or moved apart by a
//! relocation between step 2 and 3) both answer `true`, and the item then
//! holds two copies and counts twice; it needs two removes.
//!
//! From its put until its answer the call is in its stripe's in-flight count,
//! so a concurrent `clear` leaves its uncounted copy alone (see
//! [`super::clear`]).

use super::path::{self, NoPath, RootPut};
use super::relocation::Snapshot;
use super::{Full, Position, Reach, Table, FAILURE, SUCCESS};
use crate::fingerprint::Width;
use crate::sync::Ordering;

/// What [`Table::put_absent`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PutAbsent {
    /// Put a copy into the bucket.
    Put,
    /// Found a copy in the bucket; put nothing.
    Present,
    /// Found no copy and no empty slot; put nothing.
    Full,
}

/// Empty slots of an item's first bucket from which an insert puts the
/// item there without reading its second bucket (see [`Table::place`]).
const SPARE: u32 = 3;

impl<W: Width> Table<W> {
    /// Puts the fingerprint of `pos` into an empty slot of its first bucket
    /// if that has [`SPARE`] or more, else of the emptier of its two buckets
    /// (the first on a tie), else of the other, else searches for and
    /// applies cuckoo paths ([`path::insert`]). False if no room could be
    /// made; the table then holds the multiset of fingerprints it held (but
    /// for valid moves).
    ///
    /// Why the emptier one: filling the first bucket first leaves some
    /// buckets full while their items' other buckets have room; choosing the
    /// emptier keeps them even, so that near full fewer inserts find both
    /// buckets full (about half as many searches on the way to 90 % load)
    /// and a search finds a free slot sooner (from 90 to 95 %, searches that
    /// read 14.5 buckets instead of 18). Which bucket of the pair holds a copy
    /// matters to no reader. Each put's first CAS expects the value read
    /// for the choice, so the choice costs no access a put would not make,
    /// but the wait for the second bucket: a first bucket with room to spare
    /// takes the item without it.
    #[inline]
    fn place(&self, pos: Position) -> bool {
        let a = (pos.i1, self.load_bucket(pos.i1));
        let free_first = self.free_slots(&a.1, a.0);
        if free_first >= SPARE && self.put_expecting(a.0, a.1, pos.fp) {
            return true;
        }
        let b = (pos.i2, self.load_bucket(pos.i2));
        let emptier_second = self.free_slots(&b.1, b.0) > free_first;
        let [(first, seen_first), (second, seen_second)] =
            if emptier_second { [b, a] } else { [a, b] };
        self.put_expecting(first, seen_first, pos.fp)
            || self.put_expecting(second, seen_second, pos.fp)
            || self.stash_unless_full(path::insert(self, pos, Some([a.1, b.1])), pos)
    }

    /// What an insert does with the outcome of its path searches: done if
    /// one placed the item; if none did but one left out moves across a
    /// snapshot's front, which may have been the only way, the item goes
    /// into the stash (see [`super::stash`]); if every search saw the whole
    /// table, the table is full. So the stash is no extra capacity, only what
    /// keeps a snapshot from refusing inserts.
    #[inline(always)]
    fn stash_unless_full(&self, found: Result<(), NoPath>, pos: Position) -> bool {
        match found {
            Ok(()) => true,
            Err(NoPath::Fronts) => {
                self.stash_new(pos);
                true
            }
            Err(NoPath::Full) => false,
        }
    }

    /// Inserts an item at `pos`. On `Err` the table holds the same multiset of
    /// fingerprints it held before (relocations made meanwhile are valid moves).
    pub(crate) fn insert(&self, pos: Position) -> Result<(), Full> {
        // The second bucket's miss overlaps the first's.
        self.prefetch_bucket(pos.i2, Reach::Next);
        if self.place(pos) {
            self.count.increment(pos.i1);
            Ok(())
        } else {
            Err(Full)
        }
    }

    /// [`Self::insert`] without counting the item: bulk loads count a whole
    /// batch at once with [`Self::count_in`], one counter update per batch
    /// instead of one per item on counter lines other loading cores also write.
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    pub(crate) fn insert_uncounted(&self, pos: Position) -> Result<(), Full> {
        if self.place(pos) {
            Ok(())
        } else {
            Err(Full)
        }
    }

    /// Counts in `n` items inserted by [`Self::insert_uncounted`], in the shard
    /// of `key`.
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    pub(crate) fn count_in(&self, key: u64, n: usize) {
        self.count.add(key, n);
    }

    /// Inserts the item at `pos` unless it is present: `Ok(true)` if a copy was
    /// added (and counted), `Ok(false)` if a copy was found (nothing added),
    /// `Err(Full)` if no room could be made (nothing added). See the module
    /// documentation for the protocol and what races can do.
    pub(crate) fn insert_if_absent(&self, pos: Position) -> Result<bool, Full> {
        self.insert_if_absent_pausing(pos, || ())
    }

    /// [`Self::insert_if_absent`], calling `between` after its put and before
    /// it looks for a duplicate (between steps 2 and 3 above): the test hooks
    /// pause there, so that a loom model can run a whole `clear` and more
    /// inserts in that window (`loom-tests/tests/clear.rs`, `if_absent_paused`).
    #[inline(always)]
    pub(crate) fn insert_if_absent_pausing(
        &self,
        pos: Position,
        between: impl FnOnce(),
    ) -> Result<bool, Full> {
        if self.contains(pos) {
            return Ok(false);
        }
        // From before the put until the answer: see `super::clear`. Dropped
        // after the count is updated.
        let _in_flight = self.relocations.stripe(pos.i1, pos.i2).enter();
        let placed = match self.put_absent(pos.i1, pos.fp) {
            PutAbsent::Put => true,
            PutAbsent::Present => return Ok(false),
            PutAbsent::Full => match self.put_absent(pos.i2, pos.fp) {
                PutAbsent::Put => true,
                PutAbsent::Present => return Ok(false),
                PutAbsent::Full => {
                    match path::insert_with(self, pos, None, |root| self.put_root(pos, root)) {
                        Ok(RootPut::Put) => true,
                        Ok(RootPut::Present) => return Ok(false),
                        Ok(RootPut::Full) | Err(NoPath::Full) => false,
                        // The stash, as for `insert`, unless it holds a copy.
                        Err(NoPath::Fronts) => {
                            if self.stash_holds(pos) {
                                return Ok(false);
                            }
                            self.stash_new(pos);
                            true
                        }
                    }
                }
            },
        };
        if !placed {
            return Err(Full);
        }
        between();
        if self.take_duplicate(pos) {
            return Ok(false);
        }
        self.count.increment(pos.i1);
        Ok(true)
    }

    /// CASes `fp` into an empty slot of `bucket` unless a word of the bucket
    /// holds `fp` already. The CAS expects a word without `fp`, so that two
    /// calls for one word cannot both put. Retries only when the word changed
    /// under it (another operation's step).
    fn put_absent(&self, bucket: u64, fp: u32) -> PutAbsent {
        for (_, cell, mask) in self.cells(bucket) {
            let mut word = cell.load(Ordering::Acquire);
            loop {
                if W::holds_in(word, mask, fp) {
                    return PutAbsent::Present;
                }
                let Some(put) = W::put_in(word, mask, fp) else {
                    break;
                };
                match cell.compare_exchange(word, put, SUCCESS, FAILURE) {
                    Ok(_) => return PutAbsent::Put,
                    Err(now) => word = now,
                }
            }
        }
        PutAbsent::Full
    }

    /// The final put of a cuckoo path for `insert_if_absent`: a racer's path
    /// search takes long enough for another racer to place the item meanwhile,
    /// in either bucket. So look at the other bucket first, then put unless
    /// the root holds the fingerprint. (A racer that places its copy between
    /// the look and the put still leads to two copies in two words: an extra
    /// `Ok(true)`, never a lost item.)
    fn put_root(&self, pos: Position, root: u64) -> RootPut {
        let other = if root == pos.i1 { pos.i2 } else { pos.i1 };
        if self.holds(&self.load_bucket(other), other, pos.fp) {
            return RootPut::Present;
        }
        match self.put_absent(root, pos.fp) {
            PutAbsent::Put => RootPut::Put,
            PutAbsent::Present => RootPut::Present,
            PutAbsent::Full => RootPut::Full,
        }
    }

    /// Takes one copy of the fingerprint of `pos` out of a word of its pair
    /// that holds two or more in one bucket, by one CAS whose expected value
    /// holds two or more (so one stays in the word). The take is announced on
    /// the pair's stripe before it happens, like every take. False if no word
    /// of the pair holds two.
    fn take_duplicate(&self, pos: Position) -> bool {
        let counter = self.relocations.for_pair(pos.i1, pos.i2);
        let mut announced = false;
        for bucket in [pos.i1, pos.i2] {
            for (_, cell, mask) in self.cells(bucket) {
                let mut word = cell.load(Ordering::Acquire);
                loop {
                    if W::copies_in(word, mask, pos.fp) < 2 {
                        break;
                    }
                    if !announced {
                        Snapshot::announce(counter);
                        announced = true;
                    }
                    let Some(taken) = W::take_from(word, mask, pos.fp) else {
                        break;
                    };
                    match cell.compare_exchange(word, taken, SUCCESS, FAILURE) {
                        Ok(_) => return true,
                        Err(now) => word = now,
                    }
                }
            }
        }
        false
    }

    /// Inserts fingerprint `fp` into `bucket` if it has room, else into its
    /// alternate, else along a cuckoo path (merging, decoding): the same
    /// protocol as any insert, without the choice of the emptier bucket.
    /// Each fingerprint of a table merged into an empty table of its shape
    /// then lands where it was, so that such a merge always fits.
    pub(crate) fn insert_fingerprint(&self, bucket: u64, fp: u32) -> Result<(), Full> {
        let pos = Position {
            i1: bucket,
            i2: self.alternate(bucket, fp),
            fp,
        };
        if self.put_in_order(pos, true) {
            Ok(())
        } else {
            Err(Full)
        }
    }

    /// Puts the fingerprint of `pos` into its first bucket if that has room,
    /// else into its second, else (with `search`) along a cuckoo path, and
    /// counts it in; false if it was not put.
    pub(crate) fn put_in_order(&self, pos: Position, search: bool) -> bool {
        let put = self.put(pos.i1, pos.fp)
            || self.put(pos.i2, pos.fp)
            || (search && path::insert(self, pos, None).is_ok());
        if put {
            self.count.increment(pos.i1);
        }
        put
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;
    use crate::fingerprint::{W16, W8};

    #[test]
    fn one_thread_adds_once() {
        let t = Table::<W8>::new(8).unwrap();
        let pos = t.position(0x0123_4567_89ab_cdef);
        assert_eq!(t.insert_if_absent(pos), Ok(true));
        assert_eq!(t.insert_if_absent(pos), Ok(false));
        t.insert(pos).unwrap();
        assert_eq!(t.insert_if_absent(pos), Ok(false));
        assert_eq!(t.len(), 2);
    }

    /// The schedule of the loom model `clear::if_absent` that loom's search
    /// does not reach, played step by step: an `insert_if_absent` puts its
    /// copy, a whole `clear` runs, the item is inserted twice, and only then
    /// does the first call look for a duplicate. Its copy must have survived
    /// the clear (the sweep keeps a busy stripe's fingerprints), or its take
    /// would consume one of the two counted copies.
    #[test]
    fn a_clear_between_put_and_decision_keeps_the_uncounted_copy() {
        clear_between_put_and_decision(|t, pos| {
            assert_eq!(t.put_absent(pos.i1, pos.fp), PutAbsent::Put);
        });
    }

    /// The same schedule with the uncounted copy in the stash (an
    /// `insert_if_absent` that found no path while a snapshot ran puts it
    /// there): the sweep keeps a busy stripe's stash entries as it keeps its
    /// words' fingerprints, so the decision's take leaves the two counted
    /// copies' worth (one in the bucket, the kept entry standing for the
    /// other).
    #[test]
    fn a_clear_keeps_a_busy_stripes_stashed_uncounted_copy() {
        clear_between_put_and_decision(|t, pos| t.stash_new(pos));
    }

    /// An `insert_if_absent` of a fresh item paused between its put (made
    /// by `put`, uncounted) and its decision, a `clear` and two counted
    /// inserts of the item meanwhile: two copies are left, and counted.
    fn clear_between_put_and_decision(put: impl Fn(&Table<W16>, Position)) {
        let t = Table::<W16>::new(2).unwrap();
        let pos = t.position(0x5a5a_0000_1234_5678);
        assert!(!t.contains(pos));
        let in_flight = t.relocations.stripe(pos.i1, pos.i2).enter();
        put(&t, pos);
        t.clear();
        t.insert(pos).unwrap();
        t.insert(pos).unwrap();
        // The decision: a duplicate in one word, so `Ok(false)`.
        assert!(t.take_duplicate(pos));
        drop(in_flight);
        let mut copies = 0;
        t.for_each_fingerprint(|_, fp| copies += usize::from(fp == pos.fp));
        assert_eq!(copies, 2, "the two counted inserts after the clear");
        assert_eq!(t.len(), 2);
    }
}
