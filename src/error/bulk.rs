//! The error of a parallel bulk insert: the items it could not insert.

use std::fmt;

use super::InsertError;

/// The items that `par_insert_all` (of
/// [`CuckooFilter`](crate::CuckooFilter::par_insert_all) or
/// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter::par_insert_all))
/// could not insert, given back, the number it did insert, and why
/// ([`reason`](Self::reason)). Nothing is lost: every item was either inserted
/// or is in [`failed`](Self::failed).
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, InsertError};
///
/// let f = CuckooFilter::with_capacity(1000);
/// let err = f.par_insert_all(0..5000u64).unwrap_err();
/// assert_eq!(err.inserted() + err.failed().len(), 5000);
/// assert_eq!(f.len(), err.inserted());
/// assert_eq!(err.reason(), InsertError::Full);
/// // The items that did not fit come back, to put elsewhere.
/// let overflow = CuckooFilter::with_capacity(5000);
/// assert_eq!(overflow.par_insert_all(err.failed().to_vec()), Ok(err.failed().len()));
/// assert!((0..5000u64).all(|i| f.contains(&i) || overflow.contains(&i)));
/// ```
pub struct BulkInsertError<T> {
    pub(crate) inserted: usize,
    pub(crate) failed: Vec<T>,
    pub(crate) reason: InsertError,
}

impl<T> BulkInsertError<T> {
    /// How many items were inserted.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(10);
    /// let err = f.par_insert_all(0..100u32).unwrap_err();
    /// assert_eq!(err.inserted(), f.len());
    /// ```
    pub fn inserted(&self) -> usize {
        self.inserted
    }

    /// The items that did not fit, in no particular order.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(10);
    /// let err = f.par_insert_all(0..100u32).unwrap_err();
    /// assert_eq!(err.failed().len(), 100 - err.inserted());
    /// ```
    pub fn failed(&self) -> &[T] {
        &self.failed
    }

    /// The items that did not fit, to insert elsewhere (for example into a
    /// second filter).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let small = CuckooFilter::with_capacity(10);
    /// let big = CuckooFilter::with_capacity(1000);
    /// let rest = small.par_insert_all(0..100u32).unwrap_err().into_failed();
    /// assert_eq!(big.par_insert_all(rest.clone()), Ok(rest.len()));
    /// assert!((0..100u32).all(|i| small.contains(&i) || big.contains(&i)));
    /// ```
    pub fn into_failed(self) -> Vec<T> {
        self.failed
    }

    /// Why the items in [`failed`](Self::failed) were not inserted: for a
    /// [`CuckooFilter`](crate::CuckooFilter), [`InsertError::Full`]; for a
    /// growable filter, the first reason it could not grow.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, InsertError};
    /// let f = CuckooFilter::with_capacity(10);
    /// assert_eq!(f.par_insert_all(0..100u32).unwrap_err().reason(), InsertError::Full);
    /// ```
    pub fn reason(&self) -> InsertError {
        self.reason
    }
}

/// Shows the counts, not the items, so that it needs no `T: Debug` (like
/// `std::sync::mpsc::SendError`).
impl<T> fmt::Debug for BulkInsertError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkInsertError")
            .field("inserted", &self.inserted)
            .field("failed", &self.failed.len())
            .field("reason", &self.reason)
            .finish()
    }
}

impl<T> fmt::Display for BulkInsertError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} items inserted, {} were not",
            self.reason,
            self.inserted,
            self.failed.len()
        )
    }
}

impl<T> std::error::Error for BulkInsertError<T> {}

/// Equal when the counts, the failed items (in order) and the reasons are
/// equal.
///
/// ```
/// use lockfree_cuckoo_filter::CuckooFilter;
/// let f = CuckooFilter::with_capacity(100);
/// assert_eq!(f.par_insert_all(vec![1, 2, 3]), Ok(3));
/// ```
impl<T: PartialEq> PartialEq for BulkInsertError<T> {
    fn eq(&self, other: &Self) -> bool {
        self.inserted == other.inserted
            && self.failed == other.failed
            && self.reason == other.reason
    }
}
