//! The one door through which atomics enter the crate.
//!
//! Under `--cfg lockfree_cuckoo_filter_loom` (the crate's own loom cfg, set by
//! `loom-tests/run.sh`) every atomic is loom's, so the model checker sees each
//! load, store and compare-and-swap the filter performs; otherwise they are
//! `std`'s. The rest of the crate never names `std::sync::atomic` directly (in
//! the manner of crossbeam's `primitive` shim and sharded-slab's `sync.rs`).

#[cfg(lockfree_cuckoo_filter_loom)]
pub(crate) use loom::sync::atomic::{AtomicIsize, AtomicU64, Ordering};
#[cfg(not(lockfree_cuckoo_filter_loom))]
pub(crate) use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};

/// Epoch-protected publication (the growable filter's chain of tables):
/// `crossbeam-epoch`, or under loom a scheme loom can see.
pub(crate) mod epoch;

/// Two words, 16-byte aligned. The table is an array of these: the alignment
/// keeps every bucket (half a word, one word, or two aligned words) inside one
/// 64-byte cache line, and it is no larger than the allocator's natural
/// alignment, so that `alloc_zeroed` can take fresh zero pages from the OS
/// (`calloc`) instead of writing zeros over the whole table: a large table is
/// then untouched when [`crate::table::memory::advise_huge_pages`] asks for huge pages.
#[repr(C, align(16))]
pub(crate) struct Block(pub(crate) [AtomicU64; 2]);

/// Allocates `blocks` zeroed blocks, or `None` if the allocator refuses.
///
/// Zero is the empty slot, so a fresh table is all zeros. With `std` atomics the
/// memory comes from `alloc_zeroed`, which for large tables maps fresh zero pages
/// without touching them, and which reports failure instead of aborting.
#[cfg(not(lockfree_cuckoo_filter_loom))]
pub(crate) fn zeroed_blocks(blocks: usize) -> Option<Box<[Block]>> {
    use std::alloc::{alloc_zeroed, Layout};
    use std::ptr::NonNull;

    if blocks == 0 {
        return Some(Box::new([]));
    }
    let layout = Layout::array::<Block>(blocks).ok()?;
    // SAFETY: `layout` has non-zero size (blocks > 0). An all-zero bit pattern
    // is a valid `AtomicU64` (it has the same representation as `u64`), so a
    // zeroed block of `blocks` `Block`s is `blocks` initialised values,
    // allocated by the global allocator with the layout `Box<[Block]>` frees
    // it with.
    unsafe {
        let ptr = NonNull::new(alloc_zeroed(layout).cast::<Block>())?;
        crate::table::memory::advise_huge_pages(ptr.as_ptr().cast(), layout.size());
        Some(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            ptr.as_ptr(),
            blocks,
        )))
    }
}

/// Loom's atomics cannot be zero-initialised in bulk; loom tables are tiny.
#[cfg(lockfree_cuckoo_filter_loom)]
pub(crate) fn zeroed_blocks(blocks: usize) -> Option<Box<[Block]>> {
    Some(
        (0..blocks)
            .map(|_| Block(std::array::from_fn(|_| AtomicU64::new(0))))
            .collect(),
    )
}

/// Asks the CPU to start loading the cache line of `word`, without waiting
/// for it: a hint, with no effect on what any load returns. Used to overlap
/// the cache misses of independent lookups (batches) and of a cuckoo search's
/// next level. A no-op under loom and where no stable prefetch exists.
#[inline(always)]
pub(crate) fn prefetch(word: &AtomicU64) {
    #[cfg(all(target_arch = "x86_64", not(lockfree_cuckoo_filter_loom)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is
        // in the target's baseline). PREFETCHT0 never faults and changes no
        // value the program can observe, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((word as *const AtomicU64).cast()) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(lockfree_cuckoo_filter_loom))))]
    let _ = word;
}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;

    #[test]
    fn zeroed_blocks_are_empty_and_aligned() {
        for n in [0, 1, 3, 1 << 20] {
            let blocks = zeroed_blocks(n).expect("allocation");
            assert_eq!(blocks.len(), n);
            assert_eq!(blocks.as_ptr() as usize % 16, 0);
            assert!(blocks
                .iter()
                .step_by(4099)
                .all(|b| b.0.iter().all(|w| w.load(Ordering::Relaxed) == 0)));
            if let Some(b) = blocks.last() {
                prefetch(&b.0[1]);
            }
        }
        assert!(
            zeroed_blocks(usize::MAX).is_none(),
            "an impossible size is refused, not an abort"
        );
    }
}
