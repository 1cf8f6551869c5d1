//! Covering: the older tables put behind one summary (see "Covering" in the
//! module documentation of [`growable`](super)).

use super::chain::Covering;
use super::summary::Summary;
use super::GrowableCuckooFilter;
use crate::sync::published::Arc;

/// Covering: the older tables behind one summary.
impl<S> GrowableCuckooFilter<S> {
    /// Puts the oldest tables of the current chain behind a summary, if
    /// [`Chain::to_cover`](super::chain::Chain::to_cover) says more should be:
    /// announces the covering by publishing a chain with it pending, reads the
    /// tables into the summary, oldest first, and publishes the chain that
    /// covers those read before the first whose reading could not be believed
    /// in three tries (all of them, when every reading held still), if that is
    /// more tables than are covered already; if not, the chain without the
    /// pending covering, the current covering kept. Lookups keep looking in the
    /// tables left uncovered, until a later covering reads them. No thread
    /// waits for this: inserts meanwhile record their items in the pending
    /// summary themselves, and a thread that finds a covering under way does
    /// not start another.
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

    /// The fallback of [`Self::insert_into`] into an older table, alone (for
    /// the test hooks).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn insert_hash_into_table(&self, table: usize, hash: u64) -> bool {
        let added = self.with_tables(|tables| tables[table].insert_hash(hash).is_ok());
        self.record(added, table, hash)
    }

    /// A stash put into an older table, and its recording, alone (for the
    /// test hooks): what an insert into that table does when a snapshot
    /// reads it and no path is left.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn stash_hash_into_table(&self, table: usize, hash: u64) {
        self.with_tables(|tables| tables[table].stash_hash(hash));
        self.record(true, table, hash);
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
use super::tests::disbelieved;
