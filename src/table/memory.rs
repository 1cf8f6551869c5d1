//! The table's memory: zeroed allocation in cache-line-friendly blocks,
//! operating-system hints for large tables, and prefetching.
//!
//! A lookup touches two random buckets; on a table far larger than the caches
//! each is a TLB miss as well as a cache miss. Backing the table with 2 MiB
//! transparent huge pages removes most of the TLB misses. The hint is advisory:
//! where the OS offers no huge pages (or is not Linux) nothing changes.

use crate::sync::AtomicU64;

/// Two words, 16-byte aligned. The table is an array of these: the alignment
/// keeps every bucket (half a word, one word, or two words starting at an
/// even word) inside one 64-byte cache line. It is no larger than the
/// allocator's natural alignment, so that `alloc_zeroed` can take fresh zero
/// pages from the OS (`calloc`) instead of writing zeros over the whole
/// table: a large table is then untouched when [`advise_huge_pages`] asks
/// for huge pages.
#[repr(C, align(16))]
pub(crate) struct Block(pub(crate) [AtomicU64; 2]);

// A slice of blocks is a plain array of words (`Table::word` indexes it so):
// an `AtomicU64` is a multiple of 8 bytes, so two of them fill the 16-byte
// alignment exactly, with or without loom.
const _: () = assert!(std::mem::size_of::<Block>() == 2 * std::mem::size_of::<AtomicU64>());

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
        advise_huge_pages(ptr.as_ptr().cast(), layout.size());
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

/// How far ahead of its use a line is requested, which decides where the
/// CPU is asked to put it.
#[derive(Clone, Copy)]
pub(crate) enum Reach {
    /// Into every level, L1 included (`PREFETCHT0`): for a line wanted
    /// within a few dozen instructions (a lookup's second bucket, a path
    /// search's next level), or from a table that fits in the outer caches.
    Next,
    /// Into L2 and the levels below it, not L1 (`PREFETCHT1`): for the
    /// batch pipeline's lines from a table much larger than the caches, and
    /// a bulk load's. A request into L1 holds one of the core's few L1 miss
    /// buffers for the whole trip to memory, and each of these asks for more
    /// lines than there are buffers; one into L2 leaves the miss to L2's
    /// deeper queue. (See `batch::FAR_TABLE_BYTES` for what each hint
    /// measured, on Intel. AMD documents `PREFETCHT1` into L2 from Zen 4 on
    /// and into L1 before it; one study saw Zen 4 drop some of them. Not
    /// measured on AMD.)
    Later,
}

/// Asks the CPU to start loading the cache line of `word`, without waiting
/// for it: a hint, with no effect on what any load returns. Used to overlap
/// the cache misses of independent lookups (batches) and of a cuckoo search's
/// next level. A no-op under loom and where no stable prefetch exists.
#[inline(always)]
pub(crate) fn prefetch(word: &AtomicU64, reach: Reach) {
    prefetch_line((word as *const AtomicU64).cast::<u8>(), reach);
}

/// Asks the CPU to start loading the cache line of `p`, which need not point
/// to anything: the address is only a hint (the bulk load's sort asks for
/// lines past the end of its buffer). A no-op under loom and where no stable
/// prefetch exists.
#[inline(always)]
pub(crate) fn prefetch_line<T>(p: *const T, reach: Reach) {
    #[cfg(all(target_arch = "x86_64", not(lockfree_cuckoo_filter_loom)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
        let p = p.cast::<i8>();
        // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is
        // in the target's baseline). PREFETCHT0 and PREFETCHT1 never fault
        // and change no value the program can observe, whatever the address.
        unsafe {
            match reach {
                Reach::Next => _mm_prefetch::<_MM_HINT_T0>(p),
                Reach::Later => _mm_prefetch::<_MM_HINT_T1>(p),
            }
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(lockfree_cuckoo_filter_loom))))]
    let _ = (p, reach);
}

/// Tables smaller than this gain nothing from huge pages.
#[cfg(all(target_os = "linux", not(lockfree_cuckoo_filter_loom)))]
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// Asks for huge pages for a table's blocks filled by a reader (see
/// [`advise_huge_pages`]); its pages are written already, so the kernel
/// backs them with huge pages when it next collapses them.
pub(crate) fn advise_loaded(blocks: &[Block]) {
    advise_huge_pages(
        blocks.as_ptr().cast_mut().cast(),
        std::mem::size_of_val(blocks),
    );
}

/// Asks the kernel to back `[ptr, ptr + len)` with transparent huge pages.
#[cfg(all(target_os = "linux", not(lockfree_cuckoo_filter_loom)))]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    if len < HUGE_PAGE_THRESHOLD {
        return;
    }
    // madvise wants a page-aligned start; advise the whole pages inside the
    // block. Miri has no kernel to advise: the hint changes nothing it checks.
    const PAGE: usize = 4096;
    let addr = ptr.addr();
    let start = addr.next_multiple_of(PAGE);
    let end = (addr + len) & !(PAGE - 1);
    if end <= start || cfg!(miri) {
        return;
    }
    // The first whole page, as a pointer derived from `ptr` (with its
    // provenance: no integer-to-pointer cast, so strict provenance holds).
    let first = ptr.wrapping_add(start - addr);
    // SAFETY: `[first, first + (end - start))` lies inside one live allocation
    // owned by the caller, and MADV_HUGEPAGE changes only how the kernel backs
    // those pages, never their contents. An error (no THP support) is
    // deliberately ignored.
    unsafe {
        libc::madvise(first.cast(), end - start, libc::MADV_HUGEPAGE);
    }
}

/// No huge-page hint on this platform.
#[cfg(not(all(target_os = "linux", not(lockfree_cuckoo_filter_loom))))]
#[allow(dead_code)]
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;
    use crate::sync::Ordering;

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
                prefetch(&b.0[1], Reach::Next);
                prefetch(&b.0[0], Reach::Later);
            }
        }
        assert!(
            zeroed_blocks(usize::MAX).is_none(),
            "an impossible size is refused, not an abort"
        );
    }
}
