//! Typed errors: those of inserts, of the builders and of allocation here;
//! those of decoding, merging and bulk inserts beside them.
//!
//! Each error's message is whole: where it wraps another error it includes
//! that error's message, so its `source()` is what lies under the wrapped
//! error (nothing, for this crate's own), and a report that prints the
//! chain prints each message once.

#[cfg(feature = "rayon")]
mod bulk;
mod decode;
mod merge;

use std::fmt;

#[cfg(feature = "rayon")]
pub use bulk::BulkInsertError;
pub use decode::DecodeError;
pub use merge::MergeError;

/// The allocator could not provide a table's memory: the error every
/// `AllocationFailed` variant carries ([`BuildError`], [`DecodeError`],
/// [`InsertError`]).
///
/// ```
/// use lockfree_cuckoo_filter::{AllocError, BuildError};
///
/// fn explain(err: BuildError) -> String {
///     match err {
///         BuildError::AllocationFailed(AllocError { bytes, .. }) => {
///             format!("out of memory: a table of {bytes} bytes")
///         }
///         other => other.to_string(),
///     }
/// }
/// assert!(explain(BuildError::CapacityTooLarge { capacity: usize::MAX }).contains("2^32"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AllocError {
    /// The size of the table that could not be allocated.
    pub bytes: u64,
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "could not allocate {} bytes for the table", self.bytes)
    }
}

impl std::error::Error for AllocError {}

/// Why an insert did not insert: the error of every insert of
/// [`CuckooFilter`](crate::CuckooFilter) and of
/// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter) (`insert`,
/// `insert_if_absent` and their `_hash` forms).
///
/// A failed insert changes nothing: no item already in the filter is evicted or
/// lost. A [`CuckooFilter`](crate::CuckooFilter) fails only with
/// [`Full`](Self::Full); a growable filter never with `Full` (it grows
/// instead), only with the reasons it cannot grow.
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
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum InsertError {
    /// No empty slot was reachable from the item's two buckets by a path of
    /// relocations: the table is (practically) full. Grow it, or remove items.
    /// Only a [`CuckooFilter`](crate::CuckooFilter) says this.
    Full,
    /// Growable filters: the item's two buckets are full in every table while
    /// the newest table is less than half full and has 1024 buckets or more
    /// (a smaller newest table grows instead). Almost always the same item
    /// (or items with the same hash) was inserted too many times: each table
    /// holds at most 8 copies of one item. Distinct items fill one bucket
    /// pair only by a chance that no real workload meets, or when they were
    /// chosen for it by someone who knows the seed (nine suffice; see
    /// [`DefaultHashBuilder`](crate::DefaultHashBuilder) on keys chosen by
    /// others). Growing for lack of room in one bucket pair would multiply the
    /// memory of a mostly empty filter (by four per growth, for nine more
    /// chosen items each time), so the filter does not.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{GrowableCuckooFilter, InsertError};
    /// // 1024 buckets or more: the filter does not grow for one crowded pair.
    /// let f = GrowableCuckooFilter::with_capacity(10_000);
    /// for _ in 0..8 {
    ///     f.insert("again")?;
    /// }
    /// assert_eq!(f.insert("again"), Err(InsertError::TooManyCopies));
    /// assert_eq!((f.len(), f.table_count()), (8, 1));
    /// # Ok::<(), InsertError>(())
    /// ```
    TooManyCopies,
    /// Growable filters: another table would take the sum of the tables'
    /// false-positive bounds over the rate the filter was built for: even
    /// 32-bit fingerprints are too short for the budget left. A filter this
    /// version built never says this (its builder refuses such rates); a
    /// chain decoded from bytes an earlier version wrote may. Build with a
    /// higher rate or a larger initial capacity (fewer tables).
    RateExhausted {
        /// The false-positive rate the filter was built for.
        rate: f64,
        /// The tables in the chain.
        tables: usize,
    },
    /// Growable filters: the newest table already has the largest bucket
    /// count a table can address (2^32, about 16·10^9 items).
    CapacityExhausted,
    /// Growable filters: the allocator could not provide the next table's
    /// memory.
    AllocationFailed(AllocError),
}

impl From<AllocError> for InsertError {
    fn from(e: AllocError) -> Self {
        InsertError::AllocationFailed(e)
    }
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            InsertError::Full => {
                f.write_str("cuckoo filter is full: no relocation path to an empty slot")
            }
            InsertError::TooManyCopies => f.write_str(
                "the item's two buckets are full in every table (of its copies, almost always) and the newest table is less than half full",
            ),
            InsertError::RateExhausted { rate, tables } => write!(
                f,
                "a table after the {tables} in the chain would take the false-positive bound over {rate}"
            ),
            InsertError::CapacityExhausted => {
                f.write_str("the newest table already has 2^32 buckets, the most a table can address")
            }
            InsertError::AllocationFailed(AllocError { bytes }) => {
                write!(f, "could not allocate {bytes} bytes for the next table")
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
/// let err = CuckooFilter::builder().capacity(10).false_positive_rate(1.5).build().unwrap_err();
/// assert!(matches!(err, BuildError::InvalidFalsePositiveRate { .. }));
/// let err = CuckooFilter::builder().capacity(usize::MAX).build().unwrap_err();
/// assert!(matches!(err, BuildError::CapacityTooLarge { .. }));
/// let err = CuckooFilter::builder().false_positive_rate(0.01).build().unwrap_err();
/// assert_eq!(err, BuildError::MissingCapacity);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
    /// [`Builder::capacity`](crate::Builder::capacity) was not called. A
    /// [`CuckooFilter`](crate::CuckooFilter) never grows, so its size has no
    /// sensible default; a filter that grows is
    /// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, CuckooFilter};
    /// let err = CuckooFilter::builder().build().unwrap_err();
    /// assert_eq!(err, BuildError::MissingCapacity);
    /// ```
    MissingCapacity,
    /// The false-positive rate was not a number in the open interval (0, 1).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, CuckooFilter};
    /// let err = CuckooFilter::builder().capacity(10).false_positive_rate(0.0).build();
    /// assert_eq!(err.unwrap_err(), BuildError::InvalidFalsePositiveRate { rate: 0.0 });
    /// ```
    InvalidFalsePositiveRate {
        /// The rate asked for.
        rate: f64,
    },
    /// No fingerprint width offered (or the width asked for) reaches the rate at
    /// full load.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, CuckooFilter};
    /// let err = CuckooFilter::builder().capacity(10).false_positive_rate(1e-12).build().unwrap_err();
    /// let BuildError::UnreachableFalsePositiveRate { best, bits, .. } = err else {
    ///     panic!("{err:?}");
    /// };
    /// assert!(best > 1e-12 && bits == 32);
    /// ```
    UnreachableFalsePositiveRate {
        /// The rate asked for.
        rate: f64,
        /// The best rate reachable with the width considered.
        best: f64,
        /// The fingerprint width considered, in bits.
        bits: u32,
    },
    /// A [`GrowableCuckooFilter`](crate::GrowableCuckooFilter)'s rate is too
    /// small for its budget to give a fingerprint width to every table growth
    /// can add (each table spends a share of the rate), so the filter could
    /// not promise to grow until memory runs out.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, GrowableCuckooFilter};
    ///
    /// let err = GrowableCuckooFilter::builder().false_positive_rate(1e-9).build().unwrap_err();
    /// let BuildError::UnreachableGrowableRate { smallest, bits, .. } = err else {
    ///     panic!("{err:?}");
    /// };
    /// assert!(smallest > 1e-9 && bits == 32);
    /// assert!(GrowableCuckooFilter::builder().false_positive_rate(smallest).build().is_ok());
    /// ```
    UnreachableGrowableRate {
        /// The rate asked for.
        rate: f64,
        /// The smallest rate a growable filter accepts.
        smallest: f64,
        /// The longest fingerprint width growth uses, in bits.
        bits: u32,
    },
    /// The capacity needs more buckets than a table can address (2^32).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, CuckooFilter};
    /// let err = CuckooFilter::builder().capacity(usize::MAX).build().unwrap_err();
    /// assert_eq!(err, BuildError::CapacityTooLarge { capacity: usize::MAX });
    /// ```
    CapacityTooLarge {
        /// The capacity asked for.
        capacity: usize,
    },
    /// The allocator could not provide the table's memory.
    AllocationFailed(AllocError),
}

impl From<AllocError> for BuildError {
    fn from(e: AllocError) -> Self {
        BuildError::AllocationFailed(e)
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BuildError::InvalidFalsePositiveRate { rate } => {
                write!(f, "false-positive rate {} is not in the open interval (0, 1)", Rate(rate))
            }
            BuildError::UnreachableFalsePositiveRate { rate, best, bits } => write!(
                f,
                "false-positive rate {} is below {best:e}, the best {bits}-bit fingerprints reach at full load",
                Rate(rate)
            ),
            BuildError::UnreachableGrowableRate {
                rate,
                smallest,
                bits,
            } => write!(
                f,
                "false-positive rate {} is below {smallest:e}, the smallest a growable filter accepts: \
                 each table it can grow spends a share of the rate, and the last ones need more \
                 than {bits}-bit fingerprints below it",
                Rate(rate)
            ),
            BuildError::MissingCapacity => f.write_str(
                "no capacity given: call .capacity(n) with the number of items the filter must hold \
                 (or use GrowableCuckooFilter, which grows)",
            ),
            BuildError::CapacityTooLarge { capacity } => {
                write!(f, "capacity {capacity} needs more than 2^32 buckets")
            }
            BuildError::AllocationFailed(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for BuildError {}

/// A rate as people write it: `0.01`, but `1e-9` rather than a decimal point
/// followed by eight zeros (or three hundred, for a subnormal).
struct Rate(f64);

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        if r != 0.0 && r.is_finite() && !(1e-4..1e6).contains(&r.abs()) {
            write!(f, "{r:e}")
        } else {
            write!(f, "{r}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_print_as_written() {
        let invalid = |rate| BuildError::InvalidFalsePositiveRate { rate }.to_string();
        assert!(invalid(1.5).contains(" 1.5 "));
        assert!(invalid(-0.25).contains(" -0.25 "));
        assert!(invalid(f64::NAN).contains(" NaN "));
        assert!(invalid(0.0).contains(" 0 "));
        // Not 0.000…: a subnormal would be 300-odd digits.
        assert!(invalid(-5e-324).contains(" -5e-324 "));
        let unreachable = |rate| {
            BuildError::UnreachableFalsePositiveRate {
                rate,
                best: 1.7e-9,
                bits: 32,
            }
            .to_string()
        };
        assert!(unreachable(1e-300).contains(" 1e-300 is below 1.7e-9,"));
        assert!(unreachable(0.001).contains(" 0.001 "));
    }
}
