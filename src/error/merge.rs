//! The error of merging one filter into another.

use std::fmt;

use super::InsertError;
use crate::fingerprint::FingerprintBits;

/// Why `merge` (of [`CuckooFilter`](crate::CuckooFilter::merge) or
/// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter::merge)) did not merge
/// every item.
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, MergeError};
///
/// let small = CuckooFilter::with_capacity(10);
/// let large = CuckooFilter::with_capacity(1000);
/// assert!(matches!(small.merge(&large), Err(MergeError::BucketCountMismatch { .. })));
/// // Each filter has its own random seed unless given one.
/// let other = CuckooFilter::with_capacity(10);
/// let err = small.merge(&other).unwrap_err();
/// assert_eq!(err, MergeError::HasherMismatch);
/// assert!(err.to_string().contains("builder().seed(..)"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum MergeError {
    /// The filters have different fingerprint widths. Nothing was merged.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits, MergeError};
    /// let build = |bits| CuckooFilter::builder().capacity(1000).fingerprint_bits(bits).seed(1).build();
    /// let (a, b) = (build(FingerprintBits::Bits16)?, build(FingerprintBits::Bits8)?);
    /// assert!(matches!(a.merge(&b), Err(MergeError::FingerprintBitsMismatch { .. })));
    /// // Two layouts of one width: the message names them.
    /// let (c, d) = (build(FingerprintBits::Bits12)?, build(FingerprintBits::Ranked6)?);
    /// assert!(c.merge(&d).unwrap_err().to_string().contains("layout Ranked6 (12-bit"));
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    FingerprintBitsMismatch {
        /// The layout of the filter merged into.
        ours: FingerprintBits,
        /// The layout of the filter merged from.
        theirs: FingerprintBits,
    },
    /// The filters have different bucket counts, so an item's buckets differ
    /// between them. Nothing was merged.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, MergeError};
    /// let build = |capacity| CuckooFilter::builder().capacity(capacity).seed(1).build();
    /// let (a, b) = (build(1000)?, build(100_000)?);
    /// assert!(matches!(a.merge(&b), Err(MergeError::BucketCountMismatch { .. })));
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    BucketCountMismatch {
        /// The bucket count of the filter merged into.
        ours: u64,
        /// The bucket count of the filter merged from.
        theirs: u64,
    },
    /// The filters' hashers differ (`!=`), so the same item has different
    /// fingerprints in them. Nothing was merged. Two filters built with the
    /// default hasher differ unless both were given the same seed
    /// ([`Builder::seed`](crate::Builder::seed)): each draws a random one.
    HasherMismatch,
    /// A growable filter merged into had to grow to as many tables as the
    /// other, and could not (the reason is given). Nothing was merged.
    CannotGrow(InsertError),
    /// The filter merged into ran out of room (for a growable filter: in the
    /// table that must take the fingerprints of the other's table of the same
    /// place in the chain). The first `merged` of the `total` fingerprints
    /// were inserted; the one after them did not fit and changed nothing, and
    /// the rest were not tried. Every item the filter held before is still
    /// there.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, MergeError};
    /// let build = || CuckooFilter::builder().capacity(1000).seed(1).build();
    /// let (a, b) = (build()?, build()?);
    /// for i in 0..1000u64 {
    ///     a.insert(&i)?;
    ///     b.insert(&(i + 1000))?;
    /// }
    /// let Err(MergeError::Full { merged, total }) = a.merge(&b) else {
    ///     panic!("two full filters fit in one");
    /// };
    /// assert!(merged < total && total == 1000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    Full {
        /// Fingerprints inserted.
        merged: usize,
        /// Fingerprints the other filter held.
        total: usize,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MergeError::FingerprintBitsMismatch { ours, theirs } => write!(
                f,
                "cannot merge a filter of layout {theirs:?} ({}-bit fingerprints) into one of \
                 layout {ours:?} ({}-bit fingerprints): build both with the same false-positive \
                 rate (or fingerprint layout)",
                theirs.bits(),
                ours.bits()
            ),
            MergeError::BucketCountMismatch { ours, theirs } => write!(
                f,
                "cannot merge a filter of {theirs} buckets into one of {ours} buckets: \
                 build both with the same capacity (initial capacity, for growable filters)"
            ),
            MergeError::HasherMismatch => f.write_str(
                "cannot merge filters built with different hashers or seeds \
                 (filters get a random seed each by default): build both with the same seed, \
                 builder().seed(..)",
            ),
            MergeError::CannotGrow(e) => write!(f, "cannot grow to merge: {e}"),
            MergeError::Full { merged, total } => write!(
                f,
                "cuckoo filter is full: merged {merged} of {total} fingerprints, every item \
                 held before kept (a growable filter merges table by table, and a table it \
                 grew past is nearly full: merge into an empty filter, or insert the items)"
            ),
        }
    }
}

impl std::error::Error for MergeError {}
