//! Clearing: every table, while other threads go on using the filter.

use super::GrowableCuckooFilter;
#[cfg(doc)]
use crate::CuckooFilter; // only linked to from the docs

impl<S> GrowableCuckooFilter<S> {
    /// Removes every item, while other threads may go on using the filter:
    /// every table is cleared as [`CuckooFilter::clear`] clears its one
    /// (same semantics for racing operations, same rare survivors). The
    /// tables stay: the filter keeps the size it grew to, and its
    /// false-positive budget stays spent on them. So does the summary of the
    /// older tables, with its bits set: until the next growth reads those
    /// tables again, lookups look in them as often as before the clear,
    /// which only costs time.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// for i in 0..1000 {
    ///     f.insert(&i)?;
    /// }
    /// let tables = f.table_count();
    /// f.clear();
    /// assert!(f.is_empty() && !f.contains(&5));
    /// assert_eq!(f.table_count(), tables);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn clear(&self) {
        self.with_tables(|tables| tables.iter().for_each(|t| t.clear()))
    }
}
