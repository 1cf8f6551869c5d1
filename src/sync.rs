//! The one door through which atomics enter the crate.
//!
//! Under `--cfg lockfree_cuckoo_filter_loom` (the crate's own loom cfg, set by
//! `loom-tests/run.sh`) every atomic is loom's, so the model checker sees each
//! load, store and compare-and-swap the filter performs; otherwise they are
//! `std`'s. The rest of the crate never names `std::sync::atomic` directly (in
//! the manner of crossbeam's `primitive` shim and sharded-slab's `sync.rs`).

#[cfg(lockfree_cuckoo_filter_loom)]
pub(crate) use loom::sync::atomic::{AtomicIsize, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(lockfree_cuckoo_filter_loom))]
pub(crate) use std::sync::atomic::{AtomicIsize, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// Blocks chained on demand after a link (the snapshot fronts' registry, the
/// stash's lines).
pub(crate) mod chain;

/// A pointer to an immutable value, replaced by compare-and-swap and read
/// without pinning (the growable filter's chain of tables).
pub(crate) mod published;
