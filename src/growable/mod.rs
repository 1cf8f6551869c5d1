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

mod builder;
mod chain;
mod clear;
mod cover;
mod grow;
mod insert;
mod lookup;
mod remove;
mod stats;
mod summary;
#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests;

use std::fmt;

use crate::error::BuildError;
use crate::hasher::DefaultHashBuilder;
use crate::sync::published::{Arc, Current, Published};
use crate::table::AnyTable;

#[cfg(doc)]
use crate::CuckooFilter; // only linked to from the docs
pub use builder::GrowableBuilder;
use chain::Chain;
#[cfg(test)]
use chain::{bound, width_for};
pub(crate) use chain::{check_shape, check_table_count};

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
    /// [`CuckooFilter::with_capacity`]. Use
    /// [`try_with_capacity`](Self::try_with_capacity) or the
    /// [`builder`](Self::builder) to get an error instead.
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
        match Self::try_with_capacity(initial) {
            Ok(f) => f,
            Err(e) => panic!("GrowableCuckooFilter::with_capacity({initial}): {e}"),
        }
    }

    /// Like [`with_capacity`](Self::with_capacity), but returns an error
    /// instead of panicking.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, GrowableCuckooFilter};
    /// assert!(GrowableCuckooFilter::try_with_capacity(1000).is_ok());
    /// assert!(matches!(
    ///     GrowableCuckooFilter::try_with_capacity(usize::MAX),
    ///     Err(BuildError::CapacityTooLarge { .. })
    /// ));
    /// ```
    pub fn try_with_capacity(initial: usize) -> Result<Self, BuildError> {
        Self::builder().initial_capacity(initial).build()
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
}

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
