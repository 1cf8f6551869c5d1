//! The one door through which atomics enter the crate.
//!
//! Under `--cfg loom` every atomic is loom's, so the model checker sees each
//! load, store and compare-and-swap the filter performs; otherwise they are
//! `std`'s. The rest of the crate never names `std::sync::atomic` directly (in
//! the manner of crossbeam's `primitive` shim and sharded-slab's `sync.rs`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicIsize, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};

/// Epoch-protected publication (the growable filter's chain of tables):
/// `crossbeam-epoch`, or under loom a scheme loom can see.
pub(crate) mod epoch;

/// Eight words: one 64-byte cache line. The table is an array of these, so a
/// bucket (one, half of one, or two aligned words) never straddles a line.
#[repr(C, align(64))]
pub(crate) struct CacheLine(pub(crate) [AtomicU64; 8]);

/// Allocates `lines` zeroed cache lines, or `None` if the allocator refuses.
///
/// Zero is the empty slot, so a fresh table is all zeros. With `std` atomics the
/// memory comes from `alloc_zeroed`, which for large tables maps fresh zero pages
/// without touching them, and which reports failure instead of aborting.
#[cfg(not(loom))]
pub(crate) fn zeroed_lines(lines: usize) -> Option<Box<[CacheLine]>> {
    use std::alloc::{alloc_zeroed, Layout};
    use std::ptr::NonNull;

    if lines == 0 {
        return Some(Box::new([]));
    }
    let layout = Layout::array::<CacheLine>(lines).ok()?;
    // SAFETY: `layout` has non-zero size (lines > 0). An all-zero bit pattern is
    // a valid `AtomicU64` (it has the same representation as `u64`), so a zeroed
    // block of `lines` `CacheLine`s is `lines` initialised values, allocated by the
    // global allocator with the layout `Box<[CacheLine]>` will free it with.
    unsafe {
        let ptr = NonNull::new(alloc_zeroed(layout).cast::<CacheLine>())?;
        crate::memory::advise_huge_pages(ptr.as_ptr().cast(), layout.size());
        Some(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            ptr.as_ptr(),
            lines,
        )))
    }
}

/// Loom's atomics cannot be zero-initialised in bulk; loom tables are tiny.
#[cfg(loom)]
pub(crate) fn zeroed_lines(lines: usize) -> Option<Box<[CacheLine]>> {
    Some(
        (0..lines)
            .map(|_| CacheLine(std::array::from_fn(|_| AtomicU64::new(0))))
            .collect(),
    )
}
