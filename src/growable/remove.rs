//! Removes: one copy, from the newest table that holds one.

use std::hash::{BuildHasher, Hash};

use super::chain::Remove;
use super::GrowableCuckooFilter;
#[cfg(doc)]
use crate::CuckooFilter; // only linked to from the docs

impl<S> GrowableCuckooFilter<S> {
    /// Removes one copy of an item given by its 64-bit hash, from the newest
    /// table that holds one; true if one was there.
    ///
    /// A remove that starts after the item's insert returned finds it (it looks
    /// in every table of a chain at least as new as the insert's). A remove
    /// concurrent with the insert of the same item may miss it, and then
    /// returns false as if it had run first, exactly as in [`CuckooFilter`].
    ///
    /// **Removes can cause false negatives here, rarely.** Within one table,
    /// copies of a fingerprint in one bucket pair are interchangeable, so
    /// removing an inserted item never hides another. Across tables they are
    /// not: if a newer table holds another item under the same fingerprint and
    /// buckets as this item has *there* (a false positive of this item in that
    /// table), the remove takes that copy, this item's own copy stays in its
    /// older table, and the other item reads as absent. Newest first is the
    /// order that makes this least likely (newer tables have the longest
    /// fingerprints, and removing an item of the newest table, where most
    /// items are, is always safe); its
    /// probability per remove is at most the sum of the newer tables' bounds,
    /// so below [`max_false_positive_rate`](Self::max_false_positive_rate).
    /// Every chained cuckoo filter (dynamic, scalable) shares this; where
    /// removes are frequent and no false negative is tolerable, use a
    /// [`CuckooFilter`] sized up front.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// f.insert_hash(7 << 40 | 7)?;
    /// assert!(f.remove_hash(7 << 40 | 7));
    /// assert!(!f.remove_hash(7 << 40 | 7));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn remove_hash(&self, hash: u64) -> bool {
        self.chain().any_of(hash, Remove)
    }
}

impl<S: BuildHasher> GrowableCuckooFilter<S> {
    /// Removes one copy of the item; true if one was there. Only remove items
    /// you inserted (see [`CuckooFilter::remove`]); see
    /// [`remove_hash`](Self::remove_hash) for removes racing inserts.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// f.insert("apple")?;
    /// assert!(f.remove("apple"));
    /// assert!(!f.contains("apple"));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    #[inline]
    pub fn remove<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.remove_hash(self.hasher.hash_one(item))
    }
}
