//! Inserting: into one of the item's two buckets, or, both being full, along
//! a cuckoo path that makes room ([`path`]).
//!
//! Here rather than beside the other operations in the table core because it
//! is the one operation that needs the path search, which itself is built on
//! the core's single-bucket steps: the core does not depend on the search.

use super::{path, Full, Position, Table};
use crate::fingerprint::Width;

impl<W: Width> Table<W> {
    /// Puts the fingerprint of `pos` into an empty slot of its first bucket,
    /// else of its second, else searches for and applies cuckoo paths
    /// ([`path::insert`]). False if no room could be made; the table then
    /// holds the multiset of fingerprints it held (but for valid moves).
    #[inline]
    fn place(&self, pos: Position) -> bool {
        self.put(pos.i1, pos.fp) || self.put(pos.i2, pos.fp) || path::insert(self, pos)
    }

    /// Inserts an item at `pos`. On `Err` the table holds the same multiset of
    /// fingerprints it held before (relocations made meanwhile are valid moves).
    pub(crate) fn insert(&self, pos: Position) -> Result<(), Full> {
        // The second bucket's miss overlaps the first's.
        self.prefetch_bucket(pos.i2);
        if self.place(pos) {
            self.count.increment(pos.i1);
            Ok(())
        } else {
            Err(Full)
        }
    }

    /// [`Self::insert`] without counting the item: bulk loads count a whole
    /// batch at once with [`Self::count_in`], one counter update per batch
    /// instead of one per item on counter lines other loading cores also write.
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    pub(crate) fn insert_uncounted(&self, pos: Position) -> Result<(), Full> {
        if self.place(pos) {
            Ok(())
        } else {
            Err(Full)
        }
    }

    /// Counts in `n` items inserted by [`Self::insert_uncounted`], in the shard
    /// of `key`.
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    pub(crate) fn count_in(&self, key: u64, n: usize) {
        self.count.add(key, n);
    }

    /// Inserts fingerprint `fp` with `bucket` as its first bucket (merging,
    /// decoding): the same protocol as any insert.
    pub(crate) fn insert_fingerprint(&self, bucket: u64, fp: u32) -> Result<(), Full> {
        self.insert(Position {
            i1: bucket,
            i2: self.alternate(bucket, fp),
            fp,
        })
    }
}
