//! What a growable filter holds and costs: its items, capacity, tables,
//! memory and false-positive rates, summed over the tables.

use super::chain::Chain;
use super::summary::Summary;
use super::GrowableCuckooFilter;
use crate::fingerprint::FingerprintBits;
use crate::sync::published::Arc;
use crate::table::AnyTable;
#[cfg(doc)]
use crate::CuckooFilter; // only linked to from the docs

impl<S> GrowableCuckooFilter<S> {
    /// The number of items: successful inserts minus successful removes, over
    /// all tables. Exact when no operation is in flight.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(1);
    /// for i in 0..50 {
    ///     f.insert(&i)?;
    /// }
    /// assert_eq!(f.len(), 50);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.with_tables(|tables| tables.iter().map(|t| t.len()).sum())
    }

    /// Whether [`len`](Self::len) is 0.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// assert!(GrowableCuckooFilter::with_capacity(10).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of distinct items the tables are built to hold now: the sum
    /// of their [capacities](CuckooFilter::capacity). It grows with the
    /// filter; inserts never fail for lack of room.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(1000);
    /// assert!(f.capacity() >= 1000 && f.capacity() < f.slots());
    /// for i in 0..5000 {
    ///     f.insert(&i)?;
    /// }
    /// assert!(f.capacity() >= 5000);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.with_tables(|tables| tables.iter().map(|t| t.capacity()).sum())
    }

    /// The number of slots of all tables now; it grows with the filter.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(1000);
    /// assert_eq!(f.slots(), 1136);
    /// ```
    pub fn slots(&self) -> usize {
        self.with_tables(|tables| tables.iter().map(|t| t.slots()).sum())
    }

    /// The fraction of all tables' slots in use: `len / slots`.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(1000);
    /// assert_eq!(f.load_factor(), 0.0);
    /// f.insert("x")?;
    /// assert!(f.load_factor() > 0.0);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn load_factor(&self) -> f64 {
        self.with_tables(|tables| {
            let len: usize = tables.iter().map(|t| t.len()).sum();
            let slots: usize = tables.iter().map(|t| t.slots()).sum();
            len as f64 / slots as f64
        })
    }

    /// The number of tables in the chain: 1, plus one per growth.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(1);
    /// assert_eq!(f.table_count(), 1);
    /// for i in 0..100 {
    ///     f.insert(&i)?;
    /// }
    /// assert!(f.table_count() > 1);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn table_count(&self) -> usize {
        self.with_tables(|tables| tables.len())
    }

    /// The fingerprint width of each table, oldest first.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{FingerprintBits, GrowableCuckooFilter};
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// assert_eq!(f.fingerprint_bits(), vec![FingerprintBits::Bits16]);
    /// ```
    pub fn fingerprint_bits(&self) -> Vec<FingerprintBits> {
        self.with_tables(|tables| tables.iter().map(|t| t.bits()).collect())
    }

    /// Bytes used by all tables and their side structures, and by the chain
    /// (with the shorter chains growth replaced, kept until the filter is
    /// dropped: a few KiB at most).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(1_000_000);
    /// assert!(f.memory_usage() < 2_400_000);
    /// ```
    pub fn memory_usage(&self) -> usize {
        let chain = self.chain();
        let kept: usize = chain
            .replaced()
            .map(|c| std::mem::size_of::<Chain>() + std::mem::size_of_val(c.tables()))
            .sum();
        // The summaries of this chain and of the ones it replaced, each once
        // (consecutive chains share theirs).
        let mut summaries: Vec<&Arc<Summary>> = Vec::new();
        for s in std::iter::once(&*chain)
            .chain(chain.replaced())
            .flat_map(Chain::summaries)
        {
            if !summaries.iter().any(|seen| Arc::ptr_eq(seen, s)) {
                summaries.push(s);
            }
        }
        let summaries: usize = summaries.iter().map(|s| s.memory_usage()).sum();
        std::mem::size_of::<Self>()
            + std::mem::size_of::<Chain>()
            + std::mem::size_of_val(chain.tables())
            + kept
            + summaries
            // Each table is its own allocation, behind its `Arc`.
            + chain
                .tables()
                .iter()
                .map(|t| std::mem::size_of::<AnyTable>() + t.memory_usage())
                .sum::<usize>()
    }

    /// The false-positive rate bound now: the sum of the tables' bounds at
    /// their current loads. Always at most
    /// [`max_false_positive_rate`](Self::max_false_positive_rate).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// for i in 0..1000 {
    ///     f.insert(&i)?;
    /// }
    /// assert!(f.false_positive_rate() > 0.0);
    /// assert!(f.false_positive_rate() <= f.max_false_positive_rate());
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn false_positive_rate(&self) -> f64 {
        self.with_tables(|tables| tables.iter().map(|t| t.false_positive_rate()).sum())
    }

    /// The false-positive rate the filter was built for: a bound on
    /// [`false_positive_rate`](Self::false_positive_rate) however large the
    /// filter grows.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// assert_eq!(GrowableCuckooFilter::with_capacity(10).max_false_positive_rate(), 1e-3);
    /// ```
    pub fn max_false_positive_rate(&self) -> f64 {
        self.rate
    }

    /// The hasher items are hashed with.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{DefaultHashBuilder, GrowableCuckooFilter};
    /// let f = GrowableCuckooFilter::builder().seed(42).build()?;
    /// assert_eq!(*f.hasher(), DefaultHashBuilder::with_seed(42));
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
}
