//! Typed errors.

use std::fmt;

/// Why [`insert`](crate::CuckooFilter::insert) did not insert.
///
/// A failed insert changes nothing: no item already in the filter is evicted or
/// lost.
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, InsertError};
///
/// let f = CuckooFilter::with_capacity(10);
/// let mut i = 0u64;
/// let err = loop {
///     match f.insert(&i) {
///         Ok(()) => i += 1,
///         Err(e) => break e,
///     }
/// };
/// assert_eq!(err, InsertError::Full);
/// assert_eq!(f.len() as u64, i);
/// assert!((0..i).all(|j| f.contains(&j)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InsertError {
    /// No empty slot was reachable from the item's two buckets by a path of
    /// relocations: the table is (practically) full. Grow it, or remove items.
    Full,
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InsertError::Full => {
                f.write_str("cuckoo filter is full: no relocation path to an empty slot")
            }
        }
    }
}

impl std::error::Error for InsertError {}

/// Why a [`Builder`](crate::Builder) could not build a filter.
///
/// ```
/// use lockfree_cuckoo_filter::{BuildError, CuckooFilter};
///
/// let err = CuckooFilter::builder().false_positive_rate(1.5).build().unwrap_err();
/// assert!(matches!(err, BuildError::InvalidFalsePositiveRate { .. }));
/// let err = CuckooFilter::builder().capacity(usize::MAX).build().unwrap_err();
/// assert!(matches!(err, BuildError::CapacityTooLarge { .. }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
    /// The false-positive rate was not a number in the open interval (0, 1).
    InvalidFalsePositiveRate {
        /// The rate asked for.
        rate: f64,
    },
    /// No fingerprint width offered (or the width asked for) reaches the rate at
    /// full load.
    UnreachableFalsePositiveRate {
        /// The rate asked for.
        rate: f64,
        /// The best rate reachable with the width considered.
        best: f64,
        /// The fingerprint width considered, in bits.
        bits: u32,
    },
    /// The capacity needs more buckets than a table can address (2^32).
    CapacityTooLarge {
        /// The capacity asked for.
        capacity: usize,
    },
    /// The allocator could not provide the table's memory.
    AllocationFailed {
        /// The size of the table that could not be allocated.
        bytes: u64,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BuildError::InvalidFalsePositiveRate { rate } => {
                write!(f, "false-positive rate {rate} is not in the open interval (0, 1)")
            }
            BuildError::UnreachableFalsePositiveRate { rate, best, bits } => write!(
                f,
                "false-positive rate {rate} is below {best:e}, the best {bits}-bit fingerprints reach at full load"
            ),
            BuildError::CapacityTooLarge { capacity } => {
                write!(f, "capacity {capacity} needs more than 2^32 buckets")
            }
            BuildError::AllocationFailed { bytes } => {
                write!(f, "could not allocate {bytes} bytes for the table")
            }
        }
    }
}

impl std::error::Error for BuildError {}
