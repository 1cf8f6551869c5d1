//! Lookups: one item through every table of the chain the lookup loads
//! (the covered ones behind the summary), and batches of them, each table's
//! pass pipelined.

use std::hash::{BuildHasher, Hash};

use super::chain::{Chain, Contains, Covering};
use super::GrowableCuckooFilter;
use crate::sync::published::Arc;
use crate::table::AnyTable;
#[cfg(doc)]
use crate::CuckooFilter; // only linked to from the docs

/// Batched lookups take this many items through every table before the next
/// ones, each table's pass pipelined over all of them (see
/// [`CuckooFilter::contains_hash_batch`]); a table is skipped once all are
/// found. Long enough that a pass's pipeline runs full most of the time (it
/// fills over its first 32 lookups), short enough that the hashes and answers
/// stay in L1 (9 KiB).
const BLOCK: usize = 1024;

impl<S> GrowableCuckooFilter<S> {
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

    /// How many copies of an item with this 64-bit hash the filter holds:
    /// see [`count`](Self::count), which this is after hashing.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// f.insert_hash(0x1234_5678_9abc_def0)?;
    /// f.insert_hash(0x1234_5678_9abc_def0)?;
    /// assert_eq!(f.count_hash(0x1234_5678_9abc_def0), 2);
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    pub fn count_hash(&self, hash: u64) -> usize {
        // Every table, the covered ones too: a copy never leaves the table
        // it was put in, so each table's validated count (see
        // [`CuckooFilter::count`]) sees every copy that stays there
        // throughout it, whatever the other tables do meanwhile.
        self.with_tables(|tables| tables.iter().map(|t| t.count_hash(hash)).sum())
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
}

impl<S: BuildHasher> GrowableCuckooFilter<S> {
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

    /// How many copies of the item the filter holds, over all its tables:
    /// at least the copies inserted before the call began and not removed
    /// before it returned, more by colliding items' copies and by a copy
    /// under relocation (see [`CuckooFilter::count`]).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{GrowableCuckooFilter, DEFAULT_SEED};
    /// let f = GrowableCuckooFilter::builder().initial_capacity(10).seed(DEFAULT_SEED).build()?;
    /// for _ in 0..3 {
    ///     f.insert("apple")?;
    /// }
    /// assert_eq!((f.count("apple"), f.count("pear")), (3, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn count<T: Hash + ?Sized>(&self, item: &T) -> usize {
        self.count_hash(self.hasher.hash_one(item))
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
