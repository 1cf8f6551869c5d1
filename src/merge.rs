//! Merging one filter into another: the fingerprints of both, in one table
//! (or, for growable filters, in each pair of tables at the same place in
//! their chains).

use crate::error::MergeError;
use crate::fingerprint::FingerprintBits;
use crate::table::{dispatch, AnyTable};
use crate::{CuckooFilter, GrowableCuckooFilter};

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
        same_shape(self.table.layout(), other.table.layout())?;
        if self.hasher != other.hasher {
            return Err(MergeError::HasherMismatch);
        }
        let fps = fingerprints(&other.table);
        merge_table(&self.table, &fps, 0, fps.len()).map(|_| ())
    }
}

/// Fails unless tables of layouts `ours` and `theirs` ([`AnyTable::layout`])
/// place an item the same way (the hashers are compared by the caller).
fn same_shape(
    (ours_bits, ours_buckets): (FingerprintBits, u64),
    (theirs_bits, theirs_buckets): (FingerprintBits, u64),
) -> Result<(), MergeError> {
    if ours_bits != theirs_bits {
        return Err(MergeError::FingerprintBitsMismatch {
            ours: ours_bits,
            theirs: theirs_bits,
        });
    }
    if ours_buckets != theirs_buckets {
        return Err(MergeError::BucketCountMismatch {
            ours: ours_buckets,
            theirs: theirs_buckets,
        });
    }
    Ok(())
}

/// The fingerprints of `table` as `(bucket, fingerprint)`, copied out first
/// (so that merging a table into itself terminates). Bucket indices are below
/// 2^32: a pair fits in 8 bytes.
fn fingerprints(table: &AnyTable) -> Vec<(u32, u32)> {
    let mut all = Vec::with_capacity(table.len().min(table.slots()));
    dispatch!(table, t => t.for_each_fingerprint(|bucket, fp| all.push((bucket as u32, fp))));
    all
}

/// Inserts `fps` into `table`; returns `merged + fps.len()`, or
/// [`MergeError::Full`] counting from `merged` of `total`.
fn merge_table(
    table: &AnyTable,
    fps: &[(u32, u32)],
    merged: usize,
    total: usize,
) -> Result<usize, MergeError> {
    dispatch!(table, t => {
        for (k, &(bucket, fp)) in fps.iter().enumerate() {
            if t.insert_fingerprint(u64::from(bucket), fp).is_err() {
                return Err(MergeError::Full { merged: merged + k, total });
            }
        }
    });
    Ok(merged + fps.len())
}

impl<S: PartialEq> GrowableCuckooFilter<S> {
    /// Inserts every item of `other` into `self`, as
    /// [`CuckooFilter::merge`] does: afterwards `self` contains every item
    /// either filter contained, and its [`len`](Self::len) is the sum of both.
    ///
    /// Fingerprints move table by table: the k-th table of `other` into the
    /// k-th table of `self`, which must have the same fingerprint width and
    /// bucket count. Two filters built with the same initial capacity, rate
    /// and seed ([`GrowableBuilder::seed`](crate::GrowableBuilder::seed)) have
    /// chains of the same shapes however far each grew; `self` grows first if
    /// `other` has more tables ([`MergeError::CannotGrow`] if it cannot).
    ///
    /// **A fingerprint cannot move to another table** (the filter keeps no
    /// items, and a larger table places an item by hash bits the fingerprint
    /// does not keep), so the k-th table of `self` must have room for the k-th
    /// table of `other`, or the merge ends with [`MergeError::Full`] (every
    /// item `self` held is still there). A table that made its filter grow is
    /// nearly full: merging two filters that have both grown past a table
    /// usually fails. Merge growable filters that are still in their first
    /// table (an initial capacity for both parts together), or merge into an
    /// empty filter; to combine filters that have grown, insert the items
    /// again, or use [`CuckooFilter`]s sized for the union.
    ///
    /// What `other` must not be doing meanwhile, and what `self` may, is as
    /// for [`CuckooFilter::merge`].
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{GrowableCuckooFilter, MergeError};
    ///
    /// let build = || {
    ///     GrowableCuckooFilter::builder().initial_capacity(10_000).seed(5).build()
    /// };
    /// let (a, b) = (build()?, build()?);
    /// for i in 0..4000u32 {
    ///     a.insert(&i)?;
    ///     b.insert(&(i + 4000))?;
    /// }
    /// a.merge(&b)?;
    /// assert_eq!(a.len(), 8000);
    /// assert!((0..8000u32).all(|i| a.contains(&i)));
    ///
    /// // Into an empty filter, which grows to the other's chain.
    /// for i in 8000..30_000u32 {
    ///     a.insert(&i)?;
    /// }
    /// let all = build()?;
    /// all.merge(&a)?;
    /// assert_eq!(all.table_count(), a.table_count());
    /// assert!((0..30_000u32).all(|i| all.contains(&i)));
    ///
    /// // Both grown past their first table, which is nearly full in each.
    /// match all.merge(&a) {
    ///     Err(MergeError::Full { merged, total }) => {
    ///         assert_eq!(total, 30_000);
    ///         assert_eq!(all.len(), 30_000 + merged);
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// assert!((0..30_000u32).all(|i| all.contains(&i)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn merge(&self, other: &GrowableCuckooFilter<S>) -> Result<(), MergeError> {
        if self.hasher() != other.hasher() {
            return Err(MergeError::HasherMismatch);
        }
        // Copy out first (`a.merge(&a)` terminates), and check every table
        // of `other` against the table `self` has or will grow in its place,
        // before growing or merging anything: two chains can agree on their
        // first tables and differ later (built for different rates).
        let theirs: Vec<Vec<(u32, u32)>> = other.with_tables(|tables| {
            let ours = self
                .layouts_when_grown(tables.len())
                .map_err(MergeError::CannotGrow)?;
            ours.into_iter()
                .zip(tables)
                .try_for_each(|(o, t)| same_shape(o, t.layout()))?;
            Ok(tables.iter().map(|t| fingerprints(t)).collect())
        })?;
        self.grow_to(theirs.len()).map_err(MergeError::CannotGrow)?;
        let total = theirs.iter().map(Vec::len).sum();
        self.with_tables(|ours| {
            let mut merged = 0;
            for (k, fps) in theirs.iter().enumerate() {
                let result = merge_table(&ours[k], fps, merged, total);
                // What went in, recorded in the summary of the older tables
                // if table k is (or is being) put behind it.
                let now = match result {
                    Ok(now) | Err(MergeError::Full { merged: now, .. }) => now,
                    Err(_) => merged,
                };
                self.record_merged(k, &fps[..now - merged]);
                merged = result?;
            }
            Ok(())
        })
    }
}
