//! Merging one filter into another: the fingerprints of both, in one table.

use crate::error::MergeError;
use crate::table::dispatch;
use crate::CuckooFilter;

impl<S: PartialEq> CuckooFilter<S> {
    /// Inserts every item of `other` into `self`: afterwards `self` contains
    /// every item either filter contained, and its [`len`](Self::len) is the
    /// sum of both (a multiset sum: an item inserted into both filters is held
    /// twice and needs two removes, just as if it had been inserted twice).
    ///
    /// The filters must agree on everything that places an item: the
    /// fingerprint width, the bucket count, and the hasher (compared with
    /// `==`, so the hasher type must implement [`PartialEq`];
    /// [`DefaultHashBuilder`](crate::DefaultHashBuilder)s are equal when their
    /// seeds are). Otherwise nothing is merged and the error says which
    /// differs. Filters built without a seed each draw a random one, so build
    /// filters that will be merged with the same
    /// [`seed`](crate::Builder::seed). A filter built on another machine with the same options and
    /// loaded with [`from_bytes`](CuckooFilter::from_bytes) merges fine.
    ///
    /// Fingerprints are moved, not items, so merging costs one insert per item
    /// of `other` and never rehashes. If `self` runs out of room,
    /// [`MergeError::Full`] says how many were merged; the insert that failed
    /// changed nothing, and `self` still holds every item it held before.
    ///
    /// `other`'s fingerprints are copied out first, so `f.merge(&f)` doubles
    /// every item (when there is room) rather than looping. `self` may be used
    /// by other threads during the merge, like any insert. `other` may be too,
    /// but then what is merged is a blend of its states during the copy (an
    /// item inserted, removed or relocated meanwhile may be merged or not, or,
    /// relocated, twice): merge from a filter no one is modifying for an exact
    /// result.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, MergeError};
    ///
    /// // Two shards of a data set, filtered separately, with one seed ...
    /// let seed = 0x5eed;
    /// let a = CuckooFilter::builder().capacity(1000).seed(seed).build()?;
    /// let b = CuckooFilter::builder().capacity(1000).seed(seed).build()?;
    /// for i in 0..400u32 {
    ///     a.insert(&i)?;
    ///     b.insert(&(i + 400))?;
    /// }
    /// // ... then combined (b could have come from another machine as bytes).
    /// let b = CuckooFilter::from_bytes(&b.to_bytes())?;
    /// a.merge(&b)?;
    /// assert_eq!(a.len(), 800);
    /// assert!((0..800u32).all(|i| a.contains(&i)));
    ///
    /// // No room for 800 more: some are merged, none of a's are lost.
    /// match a.merge(&a) {
    ///     Err(MergeError::Full { merged, total }) => {
    ///         assert_eq!(total, 800);
    ///         assert_eq!(a.len(), 800 + merged);
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// assert!((0..800u32).all(|i| a.contains(&i)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn merge(&self, other: &CuckooFilter<S>) -> Result<(), MergeError> {
        let (ours, theirs) = (self.fingerprint_bits(), other.fingerprint_bits());
        if ours != theirs {
            return Err(MergeError::FingerprintBitsMismatch { ours, theirs });
        }
        let (ours, theirs) = (self.bucket_count(), other.bucket_count());
        if ours != theirs {
            return Err(MergeError::BucketCountMismatch { ours, theirs });
        }
        if self.hasher != other.hasher {
            return Err(MergeError::HasherMismatch);
        }
        // Bucket indices are below 2^32: (bucket, fingerprint) fits in 8 bytes.
        let mut snapshot: Vec<(u32, u32)> = Vec::with_capacity(other.len().min(other.capacity()));
        dispatch!(&other.table, t => t.for_each_fingerprint(|bucket, fp| snapshot.push((bucket as u32, fp))));
        let total = snapshot.len();
        dispatch!(&self.table, t => {
            for (merged, &(bucket, fp)) in snapshot.iter().enumerate() {
                if t.insert_fingerprint(u64::from(bucket), fp).is_err() {
                    return Err(MergeError::Full { merged, total });
                }
            }
        });
        Ok(())
    }
}
