//! Inserting: into the newest table, past a crowded bucket pair into an
//! older one, or into the table a growth adds; and recording each item added
//! in the summaries that cover or will cover its table.

use std::hash::{BuildHasher, Hash};

use super::chain::{Chain, Contains};
use super::GrowableCuckooFilter;
use crate::error::InsertError;
use crate::sync::published::Current;
use crate::table::{AnyTable, Full};
#[cfg(doc)]
use crate::CuckooFilter; // only linked to from the docs

impl<S> GrowableCuckooFilter<S> {
    /// Inserts an item given by its 64-bit hash (see
    /// [`CuckooFilter::insert_hash`]), growing the filter if the newest table
    /// is full. On `Err` nothing changed; the error is never
    /// [`InsertError::Full`], only a reason the filter cannot grow.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(1);
    /// for i in 0..100u64 {
    ///     f.insert_hash(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))?;
    /// }
    /// assert_eq!(f.len(), 100);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.insert_into(self.chain(), hash, |t| t.insert_hash(hash).map(|()| true))
            .map(|_| ())
    }

    /// Inserts an item given by its 64-bit hash unless it is present (see
    /// [`insert_if_absent`](Self::insert_if_absent)).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// assert_eq!(f.insert_hash_if_absent(0x1234_5678_9abc_def0), Ok(true));
    /// assert_eq!(f.insert_hash_if_absent(0x1234_5678_9abc_def0), Ok(false));
    /// ```
    pub fn insert_hash_if_absent(&self, hash: u64) -> Result<bool, InsertError> {
        let chain = self.chain();
        // The newest table looks for itself (validated, in its own protocol),
        // as does every table the loop below tries. An item whose insert
        // returned before this call began is in a table of `chain` (see the
        // module documentation: a later load sees a chain at least as new), so
        // every such item is looked for. Tables of later chains that the loop
        // skips hold only items inserted during this call: racers.
        if chain.any_older(hash, Contains) {
            return Ok(false);
        }
        self.insert_into(chain, hash, |t| t.insert_hash_if_absent(hash))
    }

    /// The growth loop of every insert of the item of `hash`: `insert(table)`
    /// into the newest table of `chain` (loaded by the caller); if that table
    /// is full, into an older one (when the newest is not full enough to grow:
    /// one crowded bucket pair), or into the table a growth adds. An item
    /// added is [recorded](Self::record) before this returns.
    fn insert_into<'a>(
        &'a self,
        mut chain: Current<'a, Chain>,
        hash: u64,
        insert: impl Fn(&AnyTable) -> Result<bool, Full>,
    ) -> Result<bool, InsertError> {
        loop {
            let newest = chain.tables().len() - 1;
            if let Ok(added) = insert(chain.newest()) {
                return Ok(self.record(added, newest, hash));
            }
            if !chain.should_grow() {
                // One bucket pair is crowded, not the table: an older table may
                // still have room for this item.
                let mut older = chain.older().iter().enumerate().rev();
                if let Some((k, added)) = older.find_map(|(k, t)| Some((k, insert(t).ok()?))) {
                    return Ok(self.record(added, k, hash));
                }
                let now = self.chain();
                if now.same(chain) {
                    return Err(InsertError::TooManyCopies);
                }
                chain = now;
                continue;
            }
            chain = self.grow_from(chain)?;
        }
    }

    /// Records the item of `hash`, if `added` into table `table` (its index in
    /// the chain), in every summary that covers or will cover that table (see
    /// "Covering" in the module documentation); returns `added`.
    ///
    /// The chain is loaded after the put: a covering that read the put's word
    /// before the put announced itself (with a Release CAS of the chain)
    /// before reading, and the put, an AcqRel CAS of that word, synchronized
    /// with the reading's read-modify-write, so this load sees the
    /// announcement, or a later chain.
    #[inline]
    pub(super) fn record(&self, added: bool, table: usize, hash: u64) -> bool {
        if added {
            for summary in self.chain().summaries_of(table) {
                summary.record_hash(hash);
            }
        }
        added
    }
}

impl<S: BuildHasher> GrowableCuckooFilter<S> {
    /// Inserts an item, growing the filter if the newest table is full. Fails
    /// only when the filter cannot grow (see [`InsertError`]); nothing changed
    /// then.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// f.insert("apple")?;
    /// assert!(f.contains("apple"));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&self, item: &T) -> Result<(), InsertError> {
        self.insert_hash(self.hasher.hash_one(item))
    }

    /// Inserts the item unless it is present: `Ok(true)` when a copy was added
    /// because no table held one, `Ok(false)` when one was found (possibly
    /// falsely) and nothing was added. The guarantees of
    /// [`CuckooFilter::insert_if_absent`] hold (nothing lost, one copy per
    /// `Ok(true)`, exact on one thread), with one more source of extra
    /// `Ok(true)`s: racers on either side of a growth put their copies into
    /// different tables. And one narrow window: an `Ok(false)` may have found
    /// a racer's copy in an older table that the racer has not yet recorded
    /// in the summary of those tables, and until that racer returns, a
    /// `contains` can miss the item (guarantee 1 owes it only once an
    /// insert returned).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// let mut added = 0;
    /// for i in 0..1000 {
    ///     // `Ok(false)` only for a false positive (rate at most 10^-3).
    ///     added += usize::from(f.insert_if_absent(&i)?);
    /// }
    /// assert!(added > 990 && f.len() == added);
    /// assert_eq!(f.insert_if_absent(&7), Ok(false));
    /// assert!((0..1000).all(|i| f.contains(&i)));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    #[inline]
    pub fn insert_if_absent<T: Hash + ?Sized>(&self, item: &T) -> Result<bool, InsertError> {
        self.insert_hash_if_absent(self.hasher.hash_one(item))
    }
}
