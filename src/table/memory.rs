//! Operating-system hints for large tables.
//!
//! A lookup touches two random buckets; on a table far larger than the caches
//! each is a TLB miss as well as a cache miss. Backing the table with 2 MiB
//! transparent huge pages removes most of the TLB misses. The hint is advisory:
//! where the OS offers no huge pages (or is not Linux) nothing changes.

/// Tables smaller than this gain nothing from huge pages.
#[cfg(all(target_os = "linux", not(lockfree_cuckoo_filter_loom)))]
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// Asks the kernel to back `[ptr, ptr + len)` with transparent huge pages.
#[cfg(all(target_os = "linux", not(lockfree_cuckoo_filter_loom)))]
pub(crate) fn advise_huge_pages(ptr: *mut u8, len: usize) {
    if len < HUGE_PAGE_THRESHOLD {
        return;
    }
    // madvise wants a page-aligned start; advise the whole pages inside the block.
    const PAGE: usize = 4096;
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + len) & !(PAGE - 1);
    if end <= start {
        return;
    }
    // SAFETY: `[start, end)` lies inside one live allocation owned by the caller,
    // and MADV_HUGEPAGE changes only how the kernel backs those pages, never
    // their contents. An error (no THP support) is deliberately ignored.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

/// No huge-page hint on this platform.
#[cfg(not(all(target_os = "linux", not(lockfree_cuckoo_filter_loom))))]
#[allow(dead_code)]
pub(crate) fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}
