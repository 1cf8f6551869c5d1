//! A table whose fingerprint width is chosen at run time: one variant per
//! width, each fully monomorphised. The match in [`dispatch!`] is the only
//! run-time cost of choosing the width, one well-predicted branch per
//! operation (and, for lookups of the widths [`AnyTable::contains_hash`]
//! does not inline, one call).

use super::{Full, Table};
use crate::error::AllocError;
use crate::fingerprint::{
    FingerprintBits, R3, R5, R6, R7, R8, W10, W12, W16, W17, W21, W32, W8, W9,
};

/// The table behind a filter (and behind each table of a growable filter's
/// chain), one variant per fingerprint width.
pub(crate) enum AnyTable {
    Bits8(Table<W8>),
    Bits9(Table<W9>),
    Bits10(Table<W10>),
    Bits12(Table<W12>),
    Bits16(Table<W16>),
    Bits17(Table<W17>),
    Bits21(Table<W21>),
    Bits32(Table<W32>),
    Ranked8(Table<R8>),
    Ranked7(Table<R7>),
    Ranked6(Table<R6>),
    Ranked5(Table<R5>),
    Ranked3(Table<R3>),
}

/// Runs `$body` with `$t` bound to the concrete table.
macro_rules! dispatch {
    ($table:expr, $t:ident => $body:expr) => {
        match $table {
            $crate::table::AnyTable::Bits8($t) => $body,
            $crate::table::AnyTable::Bits9($t) => $body,
            $crate::table::AnyTable::Bits10($t) => $body,
            $crate::table::AnyTable::Bits12($t) => $body,
            $crate::table::AnyTable::Bits16($t) => $body,
            $crate::table::AnyTable::Bits17($t) => $body,
            $crate::table::AnyTable::Bits21($t) => $body,
            $crate::table::AnyTable::Bits32($t) => $body,
            $crate::table::AnyTable::Ranked8($t) => $body,
            $crate::table::AnyTable::Ranked7($t) => $body,
            $crate::table::AnyTable::Ranked6($t) => $body,
            $crate::table::AnyTable::Ranked5($t) => $body,
            $crate::table::AnyTable::Ranked3($t) => $body,
        }
    };
}
pub(crate) use dispatch;

/// Runs `$body` with `$W` naming the width type of `$bits` (a
/// [`FingerprintBits`]) and `$wrap` the variant of [`AnyTable`] that holds a
/// `Table<$W>`: the inverse of [`dispatch!`], for code that makes a table.
macro_rules! with_width {
    ($bits:expr, $W:ident, $wrap:ident => $body:expr) => {
        match $bits {
            $crate::fingerprint::FingerprintBits::Bits8 => {
                type $W = $crate::fingerprint::W8;
                let $wrap = $crate::table::AnyTable::Bits8;
                $body
            }
            $crate::fingerprint::FingerprintBits::Bits9 => {
                type $W = $crate::fingerprint::W9;
                let $wrap = $crate::table::AnyTable::Bits9;
                $body
            }
            $crate::fingerprint::FingerprintBits::Bits10 => {
                type $W = $crate::fingerprint::W10;
                let $wrap = $crate::table::AnyTable::Bits10;
                $body
            }
            $crate::fingerprint::FingerprintBits::Bits12 => {
                type $W = $crate::fingerprint::W12;
                let $wrap = $crate::table::AnyTable::Bits12;
                $body
            }
            $crate::fingerprint::FingerprintBits::Bits16 => {
                type $W = $crate::fingerprint::W16;
                let $wrap = $crate::table::AnyTable::Bits16;
                $body
            }
            $crate::fingerprint::FingerprintBits::Bits17 => {
                type $W = $crate::fingerprint::W17;
                let $wrap = $crate::table::AnyTable::Bits17;
                $body
            }
            $crate::fingerprint::FingerprintBits::Bits21 => {
                type $W = $crate::fingerprint::W21;
                let $wrap = $crate::table::AnyTable::Bits21;
                $body
            }
            $crate::fingerprint::FingerprintBits::Bits32 => {
                type $W = $crate::fingerprint::W32;
                let $wrap = $crate::table::AnyTable::Bits32;
                $body
            }
            $crate::fingerprint::FingerprintBits::Ranked8 => {
                type $W = $crate::fingerprint::R8;
                let $wrap = $crate::table::AnyTable::Ranked8;
                $body
            }
            $crate::fingerprint::FingerprintBits::Ranked7 => {
                type $W = $crate::fingerprint::R7;
                let $wrap = $crate::table::AnyTable::Ranked7;
                $body
            }
            $crate::fingerprint::FingerprintBits::Ranked6 => {
                type $W = $crate::fingerprint::R6;
                let $wrap = $crate::table::AnyTable::Ranked6;
                $body
            }
            $crate::fingerprint::FingerprintBits::Ranked5 => {
                type $W = $crate::fingerprint::R5;
                let $wrap = $crate::table::AnyTable::Ranked5;
                $body
            }
            $crate::fingerprint::FingerprintBits::Ranked3 => {
                type $W = $crate::fingerprint::R3;
                let $wrap = $crate::table::AnyTable::Ranked3;
                $body
            }
        }
    };
}
pub(crate) use with_width;

/// A width an [`AnyTable`] has a variant for: the way back from the enum to
/// its table, for code that handles several tables of one width and would
/// otherwise dispatch on each (see the growable filter's chain lookup).
pub(crate) trait Variant: crate::fingerprint::Width {
    /// The table, if `table` is of this width.
    fn table(table: &AnyTable) -> Option<&Table<Self>>;
}

macro_rules! variants {
    ($($W:ident => $V:ident),* $(,)?) => {
        $(impl Variant for $W {
            #[inline(always)]
            fn table(table: &AnyTable) -> Option<&Table<Self>> {
                match table {
                    AnyTable::$V(t) => Some(t),
                    _ => None,
                }
            }
        })*
    };
}
variants!(W8 => Bits8, W9 => Bits9, W10 => Bits10, W12 => Bits12, W16 => Bits16, W17 => Bits17, W21 => Bits21, W32 => Bits32,
    R8 => Ranked8, R7 => Ranked7, R6 => Ranked6, R5 => Ranked5, R3 => Ranked3);

impl AnyTable {
    /// An empty table, or an error if its memory cannot be allocated.
    /// `buckets` must be even and in `2..=MAX_BUCKETS` (the builder checks).
    pub(crate) fn new(bits: FingerprintBits, buckets: u64) -> Result<Self, AllocError> {
        with_width!(bits, W, wrap => Table::<W>::new(buckets).map(wrap))
    }

    /// The fingerprint width.
    pub(crate) fn bits(&self) -> FingerprintBits {
        match self {
            AnyTable::Bits8(_) => FingerprintBits::Bits8,
            AnyTable::Bits9(_) => FingerprintBits::Bits9,
            AnyTable::Bits10(_) => FingerprintBits::Bits10,
            AnyTable::Bits12(_) => FingerprintBits::Bits12,
            AnyTable::Bits16(_) => FingerprintBits::Bits16,
            AnyTable::Bits17(_) => FingerprintBits::Bits17,
            AnyTable::Bits21(_) => FingerprintBits::Bits21,
            AnyTable::Bits32(_) => FingerprintBits::Bits32,
            AnyTable::Ranked8(_) => FingerprintBits::Ranked8,
            AnyTable::Ranked7(_) => FingerprintBits::Ranked7,
            AnyTable::Ranked6(_) => FingerprintBits::Ranked6,
            AnyTable::Ranked5(_) => FingerprintBits::Ranked5,
            AnyTable::Ranked3(_) => FingerprintBits::Ranked3,
        }
    }

    /// Inserts the item of a 64-bit hash.
    #[inline(always)]
    pub(crate) fn insert_hash(&self, hash: u64) -> Result<(), Full> {
        dispatch!(self, t => t.insert(t.position(hash)))
    }

    /// Whether the item of a 64-bit hash may be in the table.
    ///
    /// The plain layouts' lookups are inlined into the caller; the
    /// semi-sorted and ranked ones', which decode a bucket through a table,
    /// are one call away. With those inlined too, a caller's loop of
    /// lookups holds their constants as well and spills its own state to
    /// the stack, which costs the other widths more than the call costs
    /// these two.
    #[inline(always)]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        match self {
            AnyTable::Bits8(t) => t.contains(t.position(hash)),
            AnyTable::Bits16(t) => t.contains(t.position(hash)),
            AnyTable::Bits32(t) => t.contains(t.position(hash)),
            AnyTable::Bits10(t) => t.contains(t.position(hash)),
            AnyTable::Bits12(t) => t.contains(t.position(hash)),
            AnyTable::Bits9(t) => t.contains_hash_out_of_line(hash),
            AnyTable::Bits17(t) => t.contains_hash_out_of_line(hash),
            AnyTable::Bits21(t) => t.contains(t.position(hash)),
            AnyTable::Ranked8(t) => t.contains_hash_out_of_line(hash),
            AnyTable::Ranked7(t) => t.contains_hash_out_of_line(hash),
            AnyTable::Ranked6(t) => t.contains_hash_out_of_line(hash),
            AnyTable::Ranked5(t) => t.contains_hash_out_of_line(hash),
            AnyTable::Ranked3(t) => t.contains_hash_out_of_line(hash),
        }
    }

    /// Inserts the item of a 64-bit hash unless present (see
    /// [`Table::insert_if_absent`]).
    #[inline]
    pub(crate) fn insert_hash_if_absent(&self, hash: u64) -> Result<bool, Full> {
        dispatch!(self, t => t.insert_if_absent(t.position(hash)))
    }

    /// Removes one copy of the item of a 64-bit hash; true if one was there.
    #[inline(always)]
    pub(crate) fn remove_hash(&self, hash: u64) -> bool {
        dispatch!(self, t => t.remove(t.position(hash)))
    }

    /// Copies of the fingerprint of a 64-bit hash in its pair and the stash
    /// (see [`Table::copies`]).
    #[inline]
    pub(crate) fn count_hash(&self, hash: u64) -> usize {
        dispatch!(self, t => t.copies(t.position(hash)))
    }

    /// Answers [`Self::contains_hash`] for each item, writing `out[k]` for
    /// `items[k]` (both of one length), `hash` giving each item's hash.
    /// Pipelined over the whole slice (see [`Table::contains_batch`]).
    #[inline]
    pub(crate) fn contains_batch<T>(
        &self,
        items: &[T],
        out: &mut [bool],
        hash: impl FnMut(&T) -> u64,
    ) {
        dispatch!(self, t => t.contains_batch(items, out, hash))
    }

    /// Successful inserts minus successful removes.
    pub(crate) fn len(&self) -> usize {
        dispatch!(self, t => t.len())
    }

    /// The number of table words (see [`Table::word_count`]).
    pub(crate) fn word_count(&self) -> usize {
        dispatch!(self, t => t.word_count())
    }

    /// The number of buckets.
    pub(crate) fn buckets(&self) -> u64 {
        dispatch!(self, t => t.buckets())
    }

    /// The table's layout, `(width, bucket count)`: what places an item (with
    /// the hasher), as growth plans it and the byte format records it.
    pub(crate) fn layout(&self) -> (FingerprintBits, u64) {
        (self.bits(), self.buckets())
    }

    /// The number of slots (at most 2^34, which fits the `usize` of any
    /// target that can allocate such a table).
    pub(crate) fn slots(&self) -> usize {
        (self.buckets() * u64::from(self.bits().slots_per_bucket())) as usize
    }

    /// The number of distinct items a table of this size is built for (see
    /// [`crate::builder::capacity_for`]).
    pub(crate) fn capacity(&self) -> usize {
        crate::builder::capacity_for(self.buckets(), self.bits())
    }

    /// `len / slots`: the fraction of slots in use.
    pub(crate) fn load_factor(&self) -> f64 {
        self.len() as f64 / self.slots() as f64
    }

    /// The false-positive rate bound at the current load.
    pub(crate) fn false_positive_rate(&self) -> f64 {
        self.bits().false_positive_rate(self.load_factor())
    }

    /// Bytes of the table's memory and side structures (not of the enum
    /// itself, which lives where its owner puts it).
    pub(crate) fn memory_usage(&self) -> usize {
        dispatch!(self, t => t.memory_usage())
    }

    /// Empties the table, while others may use it (see [`Table::clear`]).
    pub(crate) fn clear(&self) {
        dispatch!(self, t => t.clear())
    }

    /// The other bucket of fingerprint `fp` in bucket `bucket` (see
    /// [`Table::alternate`]).
    pub(crate) fn alternate(&self, bucket: u64, fp: u32) -> u64 {
        dispatch!(self, t => t.alternate(bucket, fp))
    }

    /// Reads every occupied slot while others may use the table, and says
    /// whether the reading may be believed (see [`Table::read_fingerprints`]).
    pub(crate) fn read_fingerprints(&self, f: impl FnMut(u64, u32)) -> bool {
        dispatch!(self, t => t.read_fingerprints(f))
    }
}

/// For tests and the `test-hooks` feature ([`crate::test_hooks`]): aim items
/// at chosen buckets, read the table.
#[cfg(any(test, feature = "test-hooks"))]
impl AnyTable {
    /// The item position of a 64-bit hash (see [`Table::position`]).
    pub(crate) fn position(&self, hash: u64) -> super::Position {
        dispatch!(self, t => t.position(hash))
    }

    /// [`Self::insert_hash_if_absent`], calling `between` between its put and
    /// its decision (see [`Table::insert_if_absent_pausing`]).
    pub(crate) fn insert_hash_if_absent_pausing(
        &self,
        hash: u64,
        between: impl FnOnce(),
    ) -> Result<bool, Full> {
        dispatch!(self, t => t.insert_if_absent_pausing(t.position(hash), between))
    }

    /// A hash whose first bucket is `bucket` and whose fingerprint is `fp`.
    pub(crate) fn hash_for(&self, bucket: u64, fp: u32) -> u64 {
        fn of<W: crate::fingerprint::Width>(t: &Table<W>, bucket: u64, fp: u32) -> u64 {
            let low = ((bucket << 32).div_ceil(t.buckets())) as u32;
            let hash = crate::fingerprint::hash_with::<W>(fp, low);
            debug_assert_eq!(t.position(hash).i1, bucket);
            hash
        }
        dispatch!(self, t => of(t, bucket, fp))
    }

    /// Puts the item of `hash` into its first bucket, else its second, and
    /// counts it (see [`crate::test_hooks::TableHooks::put_hash`]).
    pub(crate) fn put_hash(&self, hash: u64) -> bool {
        dispatch!(self, t => t.put_in_order(t.position(hash), false))
    }

    /// Puts the item of `hash` into the stash and counts it (see
    /// [`crate::test_hooks::TableHooks::stash_hash`]).
    pub(crate) fn stash_hash(&self, hash: u64) {
        dispatch!(self, t => t.stash_position(t.position(hash)))
    }

    /// Moves the stash's entries into the table where room can be made.
    pub(crate) fn drain_stash(&self) {
        dispatch!(self, t => t.drain_stash())
    }

    /// Every occupied slot, and every stash entry at its pair's lower
    /// bucket, as `(bucket, fingerprint)` in bucket order; exact when
    /// quiescent.
    pub(crate) fn fingerprints(&self) -> Vec<(u64, u32)> {
        let mut all = Vec::new();
        dispatch!(self, t => t.for_each_fingerprint(|b, fp| all.push((b, fp))));
        // The stash's entries come last; a stable sort keeps each bucket's
        // slots in order.
        all.sort_by_key(|&(b, _)| b);
        all
    }
}
