//! A filter that grows: a chain of tables, each new one four times as large and with
//! fingerprints long enough that the chain's false-positive rate stays under the
//! rate asked for at build time.
//!
//! # The chain
//!
//! The filter points (through [`Published`], see [`crate::sync::published`]) to
//! an immutable [`Chain`]: the tables, oldest first. Tables are never removed
//! and never move; growing publishes a new chain that holds the same tables plus
//! one, by a compare-and-swap on the pointer. The replaced chain (an array of
//! pointers, not the tables) is kept until the filter is dropped, so readers
//! neither pin nor count references: a lookup is a load of the pointer and
//! the tables' own lookups.
//!
//! - `insert` tries the newest table of the chain it loaded. When that table is
//!   full, the thread reloads the pointer: if the chain changed, another thread
//!   grew it and this one inserts into the new table (it helps itself to the
//!   other's allocation); if not, it allocates the next table and tries to
//!   swap the chain. If the swap loses, another thread's table is published
//!   already, and the loser drops its own (a fresh table is zeroed lazily by
//!   the OS, so a lost allocation costs a map and an unmap, not a memset) and
//!   inserts into the winner's. Nobody waits for anybody: a thread retries only
//!   because a table filled up or another growth completed.
//! - An insert into table k (even through a chain that is no longer current)
//!   stays in table k, and every later chain holds table k. `contains` and
//!   `remove` check every table of the chain they load (the covered ones
//!   through the summary, see "Covering" below). A `contains` that starts
//!   after an insert returned loads a chain at least as new as the one the
//!   insert used (the insert's load of the pointer happens-before the
//!   `contains`'s, and by read-read coherence it reads the same or a later
//!   value; later values are supersets), and within the table each table's own
//!   guarantee holds: no false negatives.
//! - Publication is Release (the swap) / Acquire (every load): a thread that
//!   sees the new chain sees the table initialised.
//!
//! # False-positive budget
//!
//! Each new table gets fingerprints long enough that the tables' bounds sum to
//! less than the rate asked for, however long the chain: see [`chain`], where
//! the rules of what growth can produce live.
//!
//! # Covering
//!
//! A lookup of an absent item would read two buckets of every table; grown
//! from 1000 items to 4 M, seven tables. So after each growth the thread that
//! grew puts the oldest tables, all but the two newest (where most items are
//! and inserts go), behind one [`summary`]: a bitmap of keys computed from
//! what those tables hold, which a lookup reads first, looking in those
//! tables only if its key is set (4 % of absent items, grown to 4 M). The key of
//! an item is fixed by its bucket pair and fingerprint, so moves inside a
//! table do not change it, and it can be read from the tables without the
//! items' hashes.
//!
//! Covering in three steps, none waiting for another thread:
//! 1. *Announce*: publish a chain with the covering pending (its summary and
//!    how many tables it will cover). If a covering is under way already, do
//!    nothing.
//! 2. *Read* the tables into the summary, each word by a read-modify-write
//!    that leaves it unchanged, and the relocation counters before and after
//!    ([`Table::read_fingerprints`](crate::table::Table::read_fingerprints));
//!    a reading during which something moved or was taken is done again, up
//!    to three times.
//! 3. *Publish* the chain that covers the tables with the summary; or, if
//!    the reading of one never held still, the chain that covers the tables
//!    before it (they are read oldest first), if those are more than the
//!    chain covers already, and otherwise the chain without the pending
//!    covering. The argument below holds table by table, so a table whose
//!    reading failed takes nothing from the tables read before it (see
//!    `cover`); a later growth's covering reads the rest.
//!
//! Inserts still reach covered tables (through a chain loaded before the
//! growth, or past a crowded bucket pair of the newest table, or by `merge`),
//! so every insert, having put its item, loads the chain and records the item
//! in the summary of a covering that covers or will cover its table. Either
//! the reading saw the put, or it did not: then the put came after the
//! reading's read-modify-write of that word in the word's modification order,
//! so the put (an AcqRel CAS) synchronized with it, the announcement (a
//! Release CAS of the chain before the reading) happens-before the insert's
//! load of the chain, and the insert records its item. A lookup that starts
//! after the insert returned loads that chain or a later one, whose summary
//! holds the item's key or was read after the put. The loom models in
//! `loom-tests/tests/cover.rs` check both halves: with either the record or
//! the read-modify-write taken out, they find a lookup that misses the item.
//!
//! Summaries are kept until the filter is dropped, as chains are; a covering
//! whose summary would have the size of the current one extends it instead
//! of replacing it. `clear` leaves their bits set: items that are gone only
//! send lookups to the tables. Covering costs the thread that grew one
//! reading of the older tables (about a twelfth of the slots); on the
//! filter grown to 4 M items the summaries add 2.7 MiB to 12 MiB of tables.

mod chain;
mod summary;

use std::fmt;
use std::hash::{BuildHasher, Hash};

use crate::builder::buckets_for;
use crate::error::{BuildError, InsertError};
use crate::fingerprint::FingerprintBits;
use crate::hasher::DefaultHashBuilder;
use crate::sync::published::{Arc, Current, Published};
use crate::table::{AnyTable, Full};

/// Batched lookups take this many items through every table before the next
/// ones, each table's pass pipelined over all of them (see
/// [`CuckooFilter::contains_hash_batch`]); a table is skipped once all are
/// found. Long enough that a pass's pipeline runs full most of the time (it
/// fills over its first 32 lookups), short enough that the hashes and answers
/// stay in L1 (9 KiB).
const BLOCK: usize = 1024;
#[cfg(doc)]
use crate::CuckooFilter; // only linked to from the docs
#[cfg(test)]
use chain::{bound, width_for};
pub(crate) use chain::{check_shape, check_table_count};
use chain::{Chain, Contains, Covering, Remove};
use summary::Summary;

/// The default false-positive rate of a growable filter (16-bit fingerprints
/// in the first tables).
const DEFAULT_RATE: f64 = 1e-3;

/// The default capacity of the first table, in items: small enough to cost
/// little (about 2 KiB), large enough that a filter that ends up with a
/// million items gets there in five growths (about nine from a first table
/// of two buckets; each table costs a lookup two more bucket reads until it
/// is covered).
const DEFAULT_INITIAL_CAPACITY: usize = 1000;

/// A concurrent, lock-free cuckoo filter that grows: `insert` never fails for
/// lack of room. When the newest table is full, the filter adds a table four
/// times as large, with fingerprints long enough that the false-positive rate of the
/// whole filter stays under the rate it was built for.
///
/// Same `&self` API as [`CuckooFilter`]; share it with
/// [`Arc`]. No operation waits for another, growth included:
/// while one thread allocates the next table, the others keep inserting into
/// the current one, or allocate too (one allocation wins, the others are
/// dropped).
///
/// Every table stays until the filter is dropped. `contains` and `remove` look
/// in the two newest (two buckets each), then read one bit of a summary of
/// what the older ones hold, and look in those only if it is set. Grown from
/// 1000 items to 4 M, seven tables, 4 % of absent items get past the summary,
/// and a lookup of an absent item costs about three times one in a filter
/// sized for 4 M, where reading all seven tables cost five. Start with a capacity near the
/// expected size when it is known.
///
/// Guarantees: those of [`CuckooFilter`] (no false negatives, lock-free,
/// exact `len` when quiescent, failed inserts change nothing), and a
/// false-positive rate at most the one asked for at build time, however large
/// the filter grows; with one exception: a remove can, with probability below
/// that rate, hide another item (see [`remove_hash`](Self::remove_hash)).
///
/// ```
/// use std::sync::Arc;
/// use std::thread;
/// use lockfree_cuckoo_filter::GrowableCuckooFilter;
///
/// let filter = Arc::new(GrowableCuckooFilter::with_capacity(100));
/// thread::scope(|s| {
///     for t in 0..4u64 {
///         let filter = &filter;
///         s.spawn(move || {
///             for i in 0..10_000 {
///                 filter.insert(&(t, i)).unwrap();
///             }
///         });
///     }
/// });
/// assert_eq!(filter.len(), 40_000);
/// assert!(filter.table_count() > 1);
/// assert!((0..4u64).all(|t| (0..10_000).all(|i| filter.contains(&(t, i)))));
/// ```
pub struct GrowableCuckooFilter<S = DefaultHashBuilder> {
    chain: Published<Chain>,
    rate: f64,
    hasher: S,
}

impl GrowableCuckooFilter {
    /// A filter whose first table holds `initial` items, with a false-positive
    /// rate of at most 10^-3 however large it grows, and the default hasher
    /// with a seed drawn at random for this filter (see
    /// [`GrowableBuilder::seed`]).
    ///
    /// # Panics
    ///
    /// If the first table cannot be addressed or allocated, like
    /// [`CuckooFilter::with_capacity`]; the [`builder`](Self::builder) returns
    /// an error instead.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// for i in 0..1000 {
    ///     f.insert(&i)?;
    /// }
    /// assert!(f.capacity() >= 1000 && f.len() == 1000);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn with_capacity(initial: usize) -> Self {
        match Self::builder().initial_capacity(initial).build() {
            Ok(f) => f,
            Err(e) => panic!("GrowableCuckooFilter::with_capacity({initial}): {e}"),
        }
    }

    /// A builder for the options: initial capacity, false-positive rate,
    /// hasher.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::builder()
    ///     .initial_capacity(1000)
    ///     .false_positive_rate(0.01)
    ///     .build()?;
    /// assert_eq!(f.max_false_positive_rate(), 0.01);
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn builder() -> GrowableBuilder {
        GrowableBuilder {
            initial_capacity: DEFAULT_INITIAL_CAPACITY,
            rate: DEFAULT_RATE,
            hasher: DefaultHashBuilder::new(),
        }
    }
}

impl<S> GrowableCuckooFilter<S> {
    #[inline]
    fn chain(&self) -> Current<'_, Chain> {
        self.chain.load()
    }

    /// Runs `f` on the tables of the current chain, oldest first.
    #[inline]
    pub(crate) fn with_tables<R>(&self, f: impl FnOnce(&[Arc<AnyTable>]) -> R) -> R {
        f(self.chain().tables())
    }

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
    fn record(&self, added: bool, table: usize, hash: u64) -> bool {
        if added {
            for summary in self.chain().summaries_of(table) {
                summary.record_hash(hash);
            }
        }
        added
    }

    /// Publishes a chain one table longer than `seen`, or finds that another
    /// thread did; returns the chain that is current afterwards.
    #[cold]
    fn grow_from<'a>(
        &'a self,
        seen: Current<'a, Chain>,
    ) -> Result<Current<'a, Chain>, InsertError> {
        let now = self.chain();
        if !now.same(seen) {
            return Ok(now);
        }
        let next = seen.grown(self.rate)?;
        match self.chain.replace(seen, next) {
            Ok(ours) => {
                self.cover();
                Ok(ours)
            }
            // Another thread's table won; ours is dropped here.
            Err((_ours, theirs)) => Ok(theirs),
        }
    }

    /// The layouts (width, bucket count) the chain will have once grown to
    /// `tables` tables (for `merge`, to check them before it grows or merges
    /// anything), or why it cannot grow that far.
    pub(crate) fn layouts_when_grown(
        &self,
        tables: usize,
    ) -> Result<Vec<(FingerprintBits, u64)>, InsertError> {
        self.chain().layouts(self.rate, tables)
    }

    /// Grows the chain until it has at least `tables` tables (for `merge`).
    pub(crate) fn grow_to(&self, tables: usize) -> Result<(), InsertError> {
        let mut chain = self.chain();
        while chain.tables().len() < tables {
            chain = self.grow_from(chain)?;
        }
        Ok(())
    }

    /// Whether an item with this 64-bit hash may be in the filter.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// f.insert_hash(0x1234_5678_9abc_def0)?;
    /// assert!(f.contains_hash(0x1234_5678_9abc_def0));
    /// assert!(!f.contains_hash(42));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn contains_hash(&self, hash: u64) -> bool {
        // Newest first: most items are there. (Requesting every table's
        // buckets before comparing any, comparing all without stopping at
        // the first hit, or oldest first with the newest tables' buckets
        // requested up front measured slower, the last on present keys: see
        // the growth example's notes.)
        self.chain().any_of(hash, Contains)
    }

    /// Answers [`contains_hash`](Self::contains_hash) for each hash, writing
    /// `out[k]` for `hashes[k]`: 1024 lookups at a time go through each
    /// table in one pipelined pass (see
    /// [`CuckooFilter::contains_hash_batch`]), newest table first. Answers
    /// `min(hashes.len(), out.len())` lookups and returns that number.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// f.insert_hash(0x9e37_79b9_7f4a_7c15)?;
    /// let mut out = [false; 2];
    /// assert_eq!(f.contains_hash_batch(&[0x9e37_79b9_7f4a_7c15, 7], &mut out), 2);
    /// assert_eq!(out, [true, false]);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> usize {
        let n = hashes.len().min(out.len());
        let chain = self.chain();
        for (hs, os) in hashes[..n].chunks(BLOCK).zip(out[..n].chunks_mut(BLOCK)) {
            answer_block(&chain, hs, os);
        }
        n
    }

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

/// Covering: the older tables behind one summary.
impl<S> GrowableCuckooFilter<S> {
    /// Puts the oldest tables of the current chain behind a summary, if
    /// [`Chain::to_cover`] says more should be: announces the covering by
    /// publishing a chain with it pending, reads the tables into the summary,
    /// oldest first, and publishes the chain that covers those read before the
    /// first whose reading could not be believed in three tries (all of them,
    /// when every reading held still), if that is more tables than are covered
    /// already; if not, the chain without the pending covering, the current
    /// covering kept. Lookups keep looking in the tables left uncovered, until
    /// a later covering reads them. No thread waits for this: inserts meanwhile
    /// record their items in the pending summary themselves, and a thread that
    /// finds a covering under way does not start another.
    #[cold]
    pub(crate) fn cover(&self) {
        let (pending, from) = loop {
            let now = self.chain();
            let Some((tables, slots)) = now.to_cover() else {
                return;
            };
            let first = &now.tables()[0];
            let (summary, from) = match now.covered() {
                Some(c) if c.summary.fits(slots) => (c.summary.clone(), c.tables),
                _ => match Summary::new(first.bits(), first.buckets(), slots) {
                    Ok(summary) => (Arc::new(summary), 0),
                    Err(_) => return,
                },
            };
            let pending = Covering { summary, tables };
            if self
                .chain
                .replace(now, now.with_pending(Some(pending.clone())))
                .is_ok()
            {
                break (pending, from);
            }
        };
        let Covering { summary, tables } = &pending;
        // The oldest tables this covering can cover: those before the first,
        // from `from` on, whose reading could not be believed in three tries.
        let read = self.with_tables(|all| {
            from + all[from..*tables]
                .iter()
                .enumerate()
                .take_while(|&(k, t)| {
                    (0..3).any(|_| {
                        !disbelieved(from + k)
                            && t.read_fingerprints(|b, fp| summary.record_entry(t, b, fp))
                    })
                })
                .count()
        });
        // Publish the oldest `read` tables behind `summary`. A covering's
        // claim, that every item of a covered table has its key in the
        // summary, holds table by table: for each it rests on that table's
        // believed reading, made after the announcement, and on the records
        // of inserts into it, which go to `summary` while it is pending and,
        // once it is published, for the tables under `read` (module
        // documentation, "Covering"). So a table whose reading failed spoils
        // only its own claim, and the tables before it may still be covered;
        // a prefix, as lookups take the summary for the oldest tables. A new
        // summary (`from` is 0) was read here for the whole prefix; an
        // extended one (the current covering's `Arc`, `from` its tables)
        // holds its earlier tables already. Bits from a failed reading, or
        // from inserts into tables past the prefix, only send lookups on to
        // the tables. A prefix no longer than the current covering covers no
        // more: the pending covering is dropped and the current one kept
        // (only a covering changes it, and none starts while this one is
        // pending); the next growth's covering tries again.
        loop {
            let now = self.chain();
            debug_assert!(now
                .pending()
                .is_some_and(|p| Arc::ptr_eq(&p.summary, summary)));
            let next = if read > now.covered_tables() {
                now.with_pending_covered(read)
            } else {
                now.with_pending(None)
            };
            if self.chain.replace(now, next).is_ok() {
                return;
            }
        }
    }

    /// Records entries merged into table `table` (its index in the chain) in
    /// every summary that covers or will cover it, as [`Self::record`] does
    /// for an inserted item.
    pub(crate) fn record_merged(&self, table: usize, entries: &[(u32, u32)]) {
        let chain = self.chain();
        let t = &chain.tables()[table];
        for summary in chain.summaries_of(table) {
            for &(bucket, fp) in entries {
                summary.record_entry(t, u64::from(bucket), fp);
            }
        }
    }

    /// How many of the oldest tables are behind the summary.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn covered_tables(&self) -> usize {
        self.chain().covered_tables()
    }

    /// [`Self::grow_from`] without the covering (for the test hooks).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn grow_without_covering(&self) {
        let seen = self.chain();
        if let Ok(next) = seen.grown(self.rate) {
            let _ = self.chain.replace(seen, next);
        }
    }

    /// The fallback of [`Self::insert_into`] into an older table, alone (for
    /// the test hooks).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn insert_hash_into_table(&self, table: usize, hash: u64) -> bool {
        let added = self.with_tables(|tables| tables[table].insert_hash(hash).is_ok());
        self.record(added, table, hash)
    }
}

/// Whether the reading of table `k` of the chain by a covering is to be
/// treated as one that could not be believed, without reading (for the tests
/// of a partial covering, `tests::disbelieve`): never, outside them.
#[cfg(not(all(test, not(lockfree_cuckoo_filter_loom))))]
#[inline(always)]
fn disbelieved(_k: usize) -> bool {
    false
}
#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
use tests::disbelieved;

/// For the byte format: a filter from a decoded chain.
impl<S> GrowableCuckooFilter<S> {
    /// A filter whose chain is `tables` (oldest first), or why growth could
    /// not have produced that chain.
    pub(crate) fn from_tables(
        tables: Vec<AnyTable>,
        rate: f64,
        hasher: S,
    ) -> Result<Self, &'static str> {
        let filter = Self {
            chain: Published::new(Chain::from_tables(tables, rate)?),
            rate,
            hasher,
        };
        filter.cover();
        Ok(filter)
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

    /// Whether the item may be in the filter: always true for an item inserted
    /// and not removed; true with probability at most
    /// [`max_false_positive_rate`](Self::max_false_positive_rate) for any
    /// other.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{GrowableCuckooFilter, DEFAULT_SEED};
    /// // A fixed seed, so that "pear" is not one of the rare false positives.
    /// let f = GrowableCuckooFilter::builder().initial_capacity(10).seed(DEFAULT_SEED).build()?;
    /// f.insert("apple")?;
    /// assert!(f.contains("apple") && !f.contains("pear"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, item: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(item))
    }

    /// Answers [`contains`](Self::contains) for each item, writing `out[k]`
    /// for `items[k]`; faster than one call per item on large tables (see
    /// [`contains_hash_batch`](Self::contains_hash_batch)). Answers
    /// `min(items.len(), out.len())` items and returns that number.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{GrowableCuckooFilter, DEFAULT_SEED};
    /// let f = GrowableCuckooFilter::builder().initial_capacity(10).seed(DEFAULT_SEED).build()?;
    /// f.insert("a")?;
    /// let mut out = [false; 3];
    /// f.contains_batch(&["a", "b", "a"], &mut out);
    /// assert_eq!(out, [true, false, true]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn contains_batch<T: Hash>(&self, items: &[T], out: &mut [bool]) -> usize {
        let n = items.len().min(out.len());
        let mut hashes = [0u64; BLOCK];
        let chain = self.chain();
        for (is, os) in items[..n].chunks(BLOCK).zip(out[..n].chunks_mut(BLOCK)) {
            for (h, item) in hashes.iter_mut().zip(is) {
                *h = self.hasher.hash_one(item);
            }
            answer_block(&chain, &hashes[..is.len()], os);
        }
        n
    }

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

/// Answers the lookups of at most [`BLOCK`] hashes, writing `out[k]` for
/// `hashes[k]` (both of one length): one pipelined pass over all of them per
/// table, newest table first, where most items are, until every one is found.
/// On the filter grown to 4 M items (seven tables) misses ran at 33 M/s
/// where taking 16 lookups through every table at a time ran at 17 to 21:
/// passes of 16 were too short to pipeline (see the growth example).
///
/// The covered tables get only the items still not found that the summary
/// sends to them, gathered into one shorter list.
fn answer_block(chain: &Chain, hashes: &[u64], out: &mut [bool]) {
    let tables = chain.tables();
    out.fill(false);
    if answer_in(&tables[chain.covered_tables()..], hashes, out) {
        return;
    }
    let Some(Covering {
        summary,
        tables: covered,
    }) = chain.covered()
    else {
        return;
    };
    let (mut index, mut sent, mut n) = ([0u16; BLOCK], [0u64; BLOCK], 0);
    for (k, (&h, &o)) in hashes.iter().zip(out.iter()).enumerate() {
        if !o && summary.may_hold(h) {
            // `k` < `BLOCK` = 1024.
            (index[n], sent[n]) = (k as u16, h);
            n += 1;
        }
    }
    let mut answers = [false; BLOCK];
    answer_in(&tables[..*covered], &sent[..n], &mut answers[..n]);
    for (&k, &a) in index[..n].iter().zip(&answers[..n]) {
        out[usize::from(k)] |= a;
    }
}

/// One pipelined pass over `hashes` per table of `tables`, newest first,
/// OR-ing the answers into `out` (false where nothing is found yet), until
/// every item is found; whether every one was.
fn answer_in(tables: &[Arc<AnyTable>], hashes: &[u64], out: &mut [bool]) -> bool {
    let mut found = [false; BLOCK];
    let found = &mut found[..hashes.len()];
    for t in tables.iter().rev() {
        t.contains_batch(hashes, found, |&h| h);
        let mut all = true;
        for (o, &f) in out.iter_mut().zip(found.iter()) {
            *o |= f;
            all &= *o;
        }
        if all {
            return true;
        }
    }
    false
}

impl<S> fmt::Debug for GrowableCuckooFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrowableCuckooFilter")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("tables", &self.table_count())
            .field("covered_tables", &self.chain().covered_tables())
            .field("false_positive_rate", &self.false_positive_rate())
            .field("max_false_positive_rate", &self.rate)
            .field("memory_usage", &self.memory_usage())
            .finish()
    }
}

// Compile-time check of the promised auto traits.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<GrowableCuckooFilter>();
};

/// Builds a [`GrowableCuckooFilter`]. Obtained from
/// [`GrowableCuckooFilter::builder`]. Every option has a default: a first
/// table of 1000 items, a false-positive rate of 10^-3, and the default hasher
/// with a seed drawn at random for each filter.
///
/// ```
/// use lockfree_cuckoo_filter::GrowableCuckooFilter;
/// let f = GrowableCuckooFilter::builder()
///     .initial_capacity(1000)
///     .false_positive_rate(1e-4)
///     .build()?;
/// f.insert("x").unwrap();
/// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct GrowableBuilder<S = DefaultHashBuilder> {
    initial_capacity: usize,
    rate: f64,
    hasher: S,
}

impl GrowableBuilder {
    /// Hash with the default hasher started from `seed` instead of a random
    /// seed, as [`Builder::seed`](crate::Builder::seed): for filters that
    /// will be merged or whose bytes will be compared, and for reproducible
    /// runs. Keep the seed of a filter that takes keys from others secret
    /// (see [`DefaultHashBuilder`]).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let a = GrowableCuckooFilter::builder().seed(9).build()?;
    /// let b = GrowableCuckooFilter::builder().seed(9).build()?;
    /// assert_eq!(a.hasher(), b.hasher());
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn seed(self, seed: u64) -> Self {
        self.hasher(DefaultHashBuilder::with_seed(seed))
    }
}

impl<S> GrowableBuilder<S> {
    /// Items the first table accepts (default 1000). Each growth adds a table
    /// four times as large as the newest. A size near the number of items expected saves growths,
    /// and so bucket reads on every lookup; 0 gives the smallest table.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::builder().initial_capacity(5000).build()?;
    /// assert!(f.capacity() >= 5000);
    /// let default = GrowableCuckooFilter::builder().build()?;
    /// assert!(default.capacity() >= 1000);
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn initial_capacity(mut self, initial: usize) -> Self {
        self.initial_capacity = initial;
        self
    }

    /// The false-positive rate the filter must stay under however large it
    /// grows (default 10^-3). It must be in (0, 1) and large enough that the
    /// budget gives a fingerprint width to every table growth can add (17, up
    /// to 2^32 buckets): about 3.4·10^-8 with 32-bit fingerprints at most
    /// ([`build`](Self::build) says the exact floor when it is not). A filter
    /// built never fails to grow for want of budget; the lower the rate, the
    /// longer the fingerprints of later tables.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, FingerprintBits, GrowableCuckooFilter};
    /// let f = GrowableCuckooFilter::builder().false_positive_rate(0.1).build()?;
    /// assert_eq!(f.fingerprint_bits(), vec![FingerprintBits::Bits8]);
    /// assert!(matches!(
    ///     GrowableCuckooFilter::builder().false_positive_rate(1e-9).build(),
    ///     Err(BuildError::UnreachableGrowableRate { .. })
    /// ));
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.rate = rate;
        self
    }

    /// The hasher items are hashed with (see
    /// [`Builder::hasher`](crate::Builder::hasher); the default is
    /// [`DefaultHashBuilder`] with a random seed).
    ///
    /// ```
    /// use std::collections::hash_map::RandomState;
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::builder().hasher(RandomState::new()).build()?;
    /// f.insert("x")?;
    /// assert!(f.contains("x"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> GrowableBuilder<T> {
        GrowableBuilder {
            initial_capacity: self.initial_capacity,
            rate: self.rate,
            hasher,
        }
    }

    /// Builds the filter (its first table), or says which option is
    /// impossible.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, GrowableCuckooFilter};
    /// assert!(GrowableCuckooFilter::builder().build().is_ok());
    /// assert!(matches!(
    ///     GrowableCuckooFilter::builder().false_positive_rate(0.0).build(),
    ///     Err(BuildError::InvalidFalsePositiveRate { .. })
    /// ));
    /// ```
    pub fn build(self) -> Result<GrowableCuckooFilter<S>, BuildError>
    where
        S: BuildHasher,
    {
        let rate = self.rate;
        let bits = chain::first_width(rate)?;
        let buckets = buckets_for(self.initial_capacity)?;
        Ok(GrowableCuckooFilter {
            chain: Published::new(Chain::first(AnyTable::new(bits, buckets)?)),
            rate,
            hasher: self.hasher,
        })
    }
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;
    use std::cell::RefCell;

    thread_local! {
        /// The tables (indices in the chain) whose readings by a covering on
        /// this thread are to fail, one entry a failed try.
        static DISBELIEVED: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    }

    /// Makes the next readings of these tables (one entry a try) by a
    /// covering on this thread fail without reading, as readings during
    /// which something moved or was taken do.
    fn disbelieve(tries: &[usize]) {
        DISBELIEVED.with(|d| *d.borrow_mut() = tries.to_vec());
    }

    /// Whether this try at reading table `k` is to fail (see
    /// [`disbelieve`]); takes one entry for `k`.
    pub(super) fn disbelieved(k: usize) -> bool {
        DISBELIEVED.with(|d| {
            let mut d = d.borrow_mut();
            let at = d.iter().position(|&t| t == k);
            at.map(|i| d.remove(i)).is_some()
        })
    }

    /// splitmix64: distinct, well-mixed 64-bit hashes from a counter.
    fn mix(mut x: u64) -> u64 {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    /// The budget's bounds are the same bits on every platform (the decoder
    /// of a chain recomputes them), and what `false_positive_rate(1.0)` says
    /// through the platform's `powf`, nearly: `1 - x^8` with `x` near 1
    /// magnifies the last bit of `x^8` (by 10^8 at 32 bits), so one ulp of
    /// libm difference moves that bound in its eighth digit. (With glibc the
    /// two agree to the bit; Miri, which perturbs `powf`, moved the 16-bit
    /// one by 3·10^-12.)
    #[test]
    fn bounds_are_pinned() {
        let pinned = [
            (FingerprintBits::Bits8, 0x3f9f_90de_e8df_9020),
            (FingerprintBits::Bits16, 0x3f1f_ff90_00e0_0000),
            (FingerprintBits::Bits32, 0x3e20_0000_0000_0000),
        ];
        for (b, bits) in pinned {
            assert_eq!(bound(b).to_bits(), bits, "{b:?}");
            let libm = b.false_positive_rate(1.0);
            assert!((bound(b) - libm).abs() <= 1e-6 * libm, "{b:?}: {libm}");
        }
    }

    #[test]
    fn budget_never_exceeds_the_rate() {
        for rate in [0.5, 0.1, 0.01, 1e-3, 1e-4, 1e-6, 1e-8, 4e-9] {
            let mut spent = 0.0;
            let mut widths = Vec::new();
            while let Some(bits) = width_for(rate, spent) {
                spent += bound(bits);
                widths.push(bits.bits());
                assert!(spent < rate, "{rate}: {widths:?}");
                if widths.len() == 40 {
                    break;
                }
            }
            assert!(!widths.is_empty(), "{rate}");
            assert!(
                widths.windows(2).all(|w| w[0] <= w[1]),
                "{rate}: {widths:?}"
            );
        }
        // The default rate: seven 16-bit tables, then 32-bit ones.
        let mut spent = 0.0;
        let widths: Vec<u32> = (0..10)
            .map(|_| {
                let b = width_for(DEFAULT_RATE, spent).unwrap();
                spent += bound(b);
                b.bits()
            })
            .collect();
        assert_eq!(widths, [16, 16, 16, 16, 16, 16, 16, 32, 32, 32]);
        // Near the 32-bit floor only a few tables fit.
        let mut spent = 0.0;
        let mut n = 0;
        while let Some(b) = width_for(1e-8, spent) {
            spent += bound(b);
            n += 1;
        }
        assert_eq!(n, 4);
    }

    #[test]
    fn grows_and_keeps_everything() {
        let f = GrowableCuckooFilter::builder()
            .initial_capacity(100)
            .false_positive_rate(0.1)
            .build()
            .unwrap();
        let n = 100_000u64;
        for i in 0..n {
            f.insert_hash(mix(i)).unwrap();
        }
        assert_eq!(f.len() as u64, n);
        assert!(f.table_count() >= 5, "{f:?}");
        assert!((0..n).all(|i| f.contains_hash(mix(i))));
        let bits = f.fingerprint_bits();
        assert_eq!(bits[0], FingerprintBits::Bits8);
        assert!(bits.windows(2).all(|w| w[0] <= w[1]));
        // Two runs of widths, so lookups and removes also take the path for
        // the runs after the newest (`chain::any_of`).
        assert_eq!(bits.last(), Some(&FingerprintBits::Bits16));
        // Removing an inserted item may take another's copy from a newer table
        // (see `remove_hash`): that item's own remove then finds nothing, and
        // it reads as absent. At most the false-positive rate of the removes,
        // in either case.
        let allowed = (n / 2) as f64 * f.max_false_positive_rate();
        let failed = (0..n)
            .step_by(2)
            .filter(|&i| !f.remove_hash(mix(i)))
            .count();
        assert!((failed as f64) <= allowed, "{failed}");
        assert_eq!(f.len(), (n / 2) as usize + failed);
        let missing = (1..n)
            .step_by(2)
            .filter(|&i| !f.contains_hash(mix(i)))
            .count();
        assert!((missing as f64) <= allowed, "{missing}");
    }

    #[test]
    fn a_built_filter_never_runs_out_of_budget() {
        let floor = chain::smallest_rate();
        assert!(floor > 3e-8 && floor < 4e-8, "{floor}");
        // Every rate the builder accepts gives a width to all the tables growth
        // can add; just below the floor, the builder says no.
        for rate in [0.5, 0.1, 0.03, 0.01, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, floor] {
            let f = GrowableCuckooFilter::builder()
                .false_positive_rate(rate)
                .build();
            assert!(f.is_ok(), "{rate}");
            assert_eq!(
                chain::widths(rate, chain::GROWN_TABLES).len(),
                chain::GROWN_TABLES as usize,
                "{rate}"
            );
        }
        for rate in [floor * 0.99, 1e-8, 1e-9] {
            assert!(
                matches!(
                    GrowableCuckooFilter::builder()
                        .false_positive_rate(rate)
                        .build(),
                    Err(BuildError::UnreachableGrowableRate { .. })
                ),
                "{rate}"
            );
        }
    }

    #[test]
    fn layouts_are_the_tables_growth_makes() {
        // From a chain decoded with a doubled table (growth goes on by
        // four), at a rate whose budget gives three more 8-bit tables, then
        // 16-bit ones.
        let tables = vec![
            AnyTable::new(FingerprintBits::Bits8, 4).unwrap(),
            AnyTable::new(FingerprintBits::Bits8, 8).unwrap(),
        ];
        let rate = 0.2;
        let mut chain = Chain::from_tables(tables, rate).unwrap();
        let planned = chain.layouts(rate, 7).unwrap();
        assert_eq!(
            chain.layouts(rate, 1).unwrap(),
            planned[..2],
            "fewer than it has"
        );
        for _ in 2..7 {
            chain = chain.grown(rate).unwrap();
        }
        let grown: Vec<_> = chain.tables().iter().map(|t| t.layout()).collect();
        assert_eq!(planned, grown);
        assert_eq!(grown[4], (FingerprintBits::Bits8, 512), "{grown:?}");
        assert_eq!(grown[5], (FingerprintBits::Bits16, 2048), "{grown:?}");
        // Where growth would stop, `layouts` stops with the same error.
        let tables = (0..4)
            .map(|k| AnyTable::new(FingerprintBits::Bits32, 2 << k).unwrap())
            .collect();
        let chain = Chain::from_tables(tables, 1e-8).unwrap();
        assert_eq!(chain.layouts(1e-8, 5).err(), chain.grown(1e-8).err());
        assert!(chain.layouts(1e-8, 4).is_ok());
    }

    #[test]
    fn rate_exhaustion_is_an_error_that_changes_nothing() {
        // A chain decoded from a version that doubled may be longer than
        // growth by four makes: four 32-bit tables spend all of 1e-8.
        let tables = (0..4)
            .map(|k| AnyTable::new(FingerprintBits::Bits32, 2 << k).unwrap())
            .collect();
        let chain = Chain::from_tables(tables, 1e-8).unwrap();
        assert_eq!(
            chain.grown(1e-8).err(),
            Some(InsertError::RateExhausted {
                rate: 1e-8,
                tables: 4
            })
        );
        assert_eq!(chain.tables().len(), 4);
    }

    #[test]
    fn grown_from_1000_to_4m_items_at_the_default_rate() {
        // The sizes and widths growth gives (no items needed): seven 16-bit
        // tables hold 4 M items, and their memory is within twice that of one
        // 16-bit table sized for 4 M.
        let first = buckets_for(DEFAULT_INITIAL_CAPACITY).unwrap();
        let widths = chain::widths(DEFAULT_RATE, 7);
        assert!(
            widths.iter().all(|&b| b == FingerprintBits::Bits16),
            "{widths:?}"
        );
        let buckets: Vec<u64> = (0..7).map(|k| first * chain::GROWTH.pow(k)).collect();
        let capacity: usize = buckets
            .iter()
            .map(|&b| crate::builder::capacity_for(b))
            .sum();
        assert!(capacity >= 4_000_000, "{capacity}");
        let sized = buckets_for(4_000_000).unwrap();
        let chain_buckets: u64 = buckets.iter().sum();
        assert!(chain_buckets <= 2 * sized, "{chain_buckets} vs {sized}");
    }

    /// A filter grown from 100 items to seven tables, its five oldest behind
    /// the summary, and its items.
    fn covered_filter() -> (GrowableCuckooFilter, u64) {
        let f = GrowableCuckooFilter::builder()
            .initial_capacity(100)
            .seed(7)
            .build()
            .unwrap();
        let mut n = 0u64;
        while f.table_count() < 7 || n % 1000 != 0 {
            f.insert(&n).unwrap();
            n += 1;
        }
        assert_eq!(f.covered_tables(), 5);
        (f, n)
    }

    #[test]
    fn older_tables_behind_the_summary_miss_nothing() {
        let (f, n) = covered_filter();
        assert!((0..n).all(|i| f.contains(&i)));
        // Batched lookups agree, present and absent items alike.
        let items: Vec<u64> = (0..2 * n).collect();
        let mut out = vec![false; items.len()];
        f.contains_batch(&items, &mut out);
        assert!(items.iter().zip(&out).all(|(i, &o)| o == f.contains(i)));
        // Most absent items are answered by the summary alone.
        let chain = f.chain();
        let Covering {
            summary,
            tables: covered,
        } = chain.covered().unwrap();
        let hasher = f.hasher();
        let passing = (n..2 * n)
            .filter(|i| summary.may_hold(hasher.hash_one(i)))
            .count();
        assert!(passing < n as usize / 5, "{passing} of {n} pass");
        // The first 100 items are in the first table, behind the summary:
        // removes find them.
        assert_eq!(*covered, 5);
        assert!((0..100u64).all(|i| f.remove(&i)));
        // Gone (seed 7: none of them reads present as a false positive).
        assert!(
            (0..100u64).all(|i| !f.contains(&i)),
            "a removed item still found"
        );
        assert_eq!(f.len() as u64, n - 100);
        // A decoded filter covers the same tables.
        let g = GrowableCuckooFilter::from_bytes_with_hasher(&f.to_bytes(), *hasher).unwrap();
        assert_eq!(g.covered_tables(), 5);
        assert!((100..n).all(|i| g.contains(&i)));
    }

    #[test]
    fn an_insert_into_a_covered_table_records_its_item() {
        let (f, n) = covered_filter();
        // An item whose bit is clear, so that only its own insert can set it.
        let clear = |f: &GrowableCuckooFilter, i: &u64| {
            let chain = f.chain();
            !chain
                .covered()
                .unwrap()
                .summary
                .may_hold(f.hasher().hash_one(i))
        };
        let x = (n..).find(|i| clear(&f, i)).unwrap();
        // The newest table is far from half full, so copies of one item past
        // its pair's eight slots go into older tables, down to covered ones.
        let copies = (0..100).take_while(|_| f.insert(&x).is_ok()).count();
        assert!(copies > 16, "{copies}");
        // Take the copies of the two uncovered tables: those left are in
        // covered tables, and only the summary can send a lookup there.
        for _ in 0..16 {
            assert!(f.remove(&x));
        }
        assert!(f.contains(&x));
        // Merged entries too, into the first table once it has room.
        assert!((0..100u64).all(|i| f.remove(&i)));
        let g = GrowableCuckooFilter::builder()
            .initial_capacity(100)
            .seed(7)
            .build()
            .unwrap();
        let y = (x + 1..).find(|i| clear(&f, i)).unwrap();
        g.insert(&y).unwrap();
        f.merge(&g).unwrap();
        assert!(f.contains(&y));
    }

    #[test]
    fn copies_of_one_item_do_not_double_a_large_table() {
        let f = GrowableCuckooFilter::with_capacity(10_000);
        let copies = (0..100).take_while(|_| f.insert("same").is_ok()).count();
        assert_eq!(copies, 8);
        assert_eq!(f.table_count(), 1);
        assert_eq!(f.insert("same"), Err(InsertError::TooManyCopies));
        // A small table grows instead, until it is large.
        let f = GrowableCuckooFilter::with_capacity(0);
        let copies = (0..1000).take_while(|_| f.insert("same").is_ok()).count();
        assert!(copies > 8 && f.table_count() <= 12, "{copies} {f:?}");
        assert_eq!(f.len(), copies);
    }

    /// Nine distinct items whose fingerprints share a bucket pair, as someone
    /// who knows the seed can choose them: the ninth is refused as
    /// `TooManyCopies` (what its docs say), the filter does not grow for it,
    /// and nothing else changes.
    #[test]
    fn nine_items_aimed_at_one_pair_do_not_grow_a_large_table() {
        let f = GrowableCuckooFilter::with_capacity(10_000);
        // Nine fingerprints of bucket 7 with the alternate of the first.
        let bucket = 7;
        let aimed: Vec<u64> = f.with_tables(|tables| {
            let t = &tables[0];
            let alternate = t.position(t.hash_for(bucket, 1)).i2;
            (1..=u32::from(u16::MAX))
                .map(|fp| t.hash_for(bucket, fp))
                .filter(|&h| t.position(h).i2 == alternate)
                .take(9)
                .collect()
        });
        assert_eq!(aimed.len(), 9);
        for &h in &aimed[..8] {
            f.insert_hash(h).unwrap();
        }
        let before = f.to_bytes();
        assert_eq!(f.insert_hash(aimed[8]), Err(InsertError::TooManyCopies));
        assert_eq!(f.table_count(), 1);
        assert_eq!(f.to_bytes(), before);
        assert!(aimed[..8].iter().all(|&h| f.contains_hash(h)));
    }

    #[test]
    fn concurrent_growth_loses_nothing_and_keeps_the_rate() {
        let rate = 0.02;
        let f = GrowableCuckooFilter::builder()
            .initial_capacity(64)
            .false_positive_rate(rate)
            .build()
            .unwrap();
        let per_thread = 100_000u64;
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let f = &f;
                s.spawn(move || {
                    for i in 0..per_thread {
                        let key = t << 40 | i;
                        f.insert_hash(mix(key)).unwrap();
                        // Items inserted earlier by this thread stay visible
                        // while other threads grow the chain.
                        if i % 64 == 0 {
                            let j = i / 2;
                            assert!(f.contains_hash(mix(t << 40 | j)), "lost {t}/{j}");
                        }
                    }
                });
            }
            // A reader of the chain racing the growths.
            s.spawn(|| {
                for _ in 0..50 {
                    assert!(f.len() <= 4 * per_thread as usize);
                    let _ = f.contains_hash(mix(1 << 62));
                }
            });
        });
        assert_eq!(f.len() as u64, 4 * per_thread);
        for t in 0..4u64 {
            assert!((0..per_thread).all(|i| f.contains_hash(mix(t << 40 | i))));
        }
        assert!(f.table_count() >= 7, "{f:?}");
        assert!(f.covered_tables() > 0, "{f:?}");
        let bound = f.false_positive_rate();
        assert!(bound <= rate);
        let probes = 1_000_000u64;
        let hits = (0..probes)
            .filter(|&i| f.contains_hash(mix(i | 1 << 62)))
            .count();
        let measured = hits as f64 / probes as f64;
        // The measured rate is under the bound (plus six standard deviations
        // of sampling noise: which table holds an item depends on the
        // threads' interleaving, and at four about one run in 10^5 failed),
        // which is under the rate asked for.
        let slack = 6.0 * (bound / probes as f64).sqrt();
        assert!(
            measured <= bound + slack,
            "measured {measured}, bound {bound}"
        );
        assert!(
            measured > 0.0,
            "16-bit tables: about 10^-4 per table expected"
        );
    }

    /// A chain of six tables (the four oldest to be covered), grown without
    /// covering, and the 40 items inserted into each, by table.
    fn six_uncovered_tables() -> (GrowableCuckooFilter, Vec<Vec<u64>>) {
        let f = GrowableCuckooFilter::builder()
            .initial_capacity(100)
            .seed(7)
            .build()
            .unwrap();
        let mut items = Vec::new();
        for k in 0..6 {
            if k > 0 {
                f.grow_without_covering();
            }
            let hashes: Vec<u64> = (0..40).map(|i| mix((k as u64) << 32 | i)).collect();
            assert!(hashes.iter().all(|&h| f.insert_hash_into_table(k, h)));
            items.push(hashes);
        }
        assert_eq!((f.table_count(), f.covered_tables()), (6, 0));
        (f, items)
    }

    /// A covering whose reading of one table cannot be believed covers the
    /// tables before it, and only those; one that would cover no more than
    /// the chain does is dropped; later coverings read the rest.
    #[test]
    fn a_reading_that_cannot_be_believed_ends_the_covering_there() {
        let (f, items) = six_uncovered_tables();
        let all_found =
            |f: &GrowableCuckooFilter| items.iter().flatten().all(|&h| f.contains_hash(h));
        let summary = |f: &GrowableCuckooFilter| f.chain().covered().unwrap().summary.clone();
        // Items of a table whose bits the summary lacks: a table not read.
        let unread = |s: &Summary, k: usize| items[k].iter().filter(|&&h| !s.may_hold(h)).count();
        let left = || DISBELIEVED.with(|d| d.borrow().len());

        // The oldest table failed: nothing to cover, nothing pending.
        disbelieve(&[0, 0, 0]);
        f.cover();
        assert_eq!((f.covered_tables(), left()), (0, 0));
        assert!(f.chain().pending().is_none());

        // A new summary: table 1 held still at the third try, table 2 never.
        disbelieve(&[1, 1, 2, 2, 2]);
        f.cover();
        assert_eq!((f.covered_tables(), left()), (2, 0));
        assert!(f.chain().pending().is_none());
        let s = summary(&f);
        // Tables 2 and 3 were not read (the reading stopped at 2): a covering
        // of either would hide their items.
        assert!(unread(&s, 2) > 30 && unread(&s, 3) > 30);
        assert!(all_found(&f), "an item missed");
        // An insert into a covered table records its item in the summary.
        let x = (1u64 << 40..).map(mix).find(|&h| !s.may_hold(h)).unwrap();
        assert!(f.insert_hash_into_table(1, x));
        assert!(s.may_hold(x) && f.contains_hash(x));

        // Extending it: the first table to read (2) failed, so the covering
        // would cover no more; dropped, the current one kept.
        disbelieve(&[2, 2, 2]);
        f.cover();
        assert_eq!((f.covered_tables(), left()), (2, 0));
        assert!(f.chain().pending().is_none());
        assert!(Arc::ptr_eq(&summary(&f), &s));

        // Extending it by one table (2): the reading of table 3 failed.
        disbelieve(&[3, 3, 3]);
        f.cover();
        assert_eq!((f.covered_tables(), left()), (3, 0));
        assert!(Arc::ptr_eq(&summary(&f), &s));
        assert!(unread(&s, 3) > 30);
        assert!(all_found(&f) && f.contains_hash(x), "an item missed");

        // The next growth's covering (of five tables) has a new summary, whose
        // reading failed below the current covering's tables: dropped, the
        // current covering kept.
        disbelieve(&[1, 1, 1]);
        f.grow_to(7).unwrap();
        assert_eq!((f.covered_tables(), left()), (3, 0));
        assert!(f.chain().pending().is_none());
        assert!(Arc::ptr_eq(&summary(&f), &s));
        // The next one's (of six tables) failed past them: it covers more, and
        // replaces the current one.
        disbelieve(&[4, 4, 4]);
        f.grow_to(8).unwrap();
        assert_eq!((f.covered_tables(), left()), (4, 0));
        let new = summary(&f);
        assert!(!Arc::ptr_eq(&new, &s) && unread(&new, 4) > 30);
        assert!(all_found(&f) && f.contains_hash(x), "an item missed");
        // The next growth covers the rest (all seven 16-bit tables).
        f.grow_to(9).unwrap();
        assert_eq!(f.covered_tables(), 7);
        assert!(f.chain().pending().is_none());
        assert!(all_found(&f) && f.contains_hash(x), "an item missed");
    }
}
