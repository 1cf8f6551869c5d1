//! The memory limit: the least a lookup in a table far larger than the caches
//! must do (two independent random reads), to compare our lookups by hash with.

use lockfree_cuckoo_filter::CuckooFilter;

use crate::keys::{scale, splitmix};

/// Lookups per generated block of hashes in the memory-limit comparison.
pub const BLOCK: usize = 1024;
/// Queries whose loads the batched kernel issues together (as our batch).
pub const GROUP: usize = 16;

/// Groups of indices the batched kernel keeps: up to `RING - 1` ahead.
const RING: usize = 4;

/// An array of `bytes` bytes of random words, backed by huge pages where
/// Linux offers them (like our table): the least a lookup must do is two
/// independent random 8-byte reads from it.
pub struct MemKernel {
    ptr: *mut u64,
    words: usize,
    layout: std::alloc::Layout,
}

// SAFETY: the kernel owns its block and only reads it after construction.
unsafe impl Sync for MemKernel {}
unsafe impl Send for MemKernel {}

impl MemKernel {
    /// `huge`: ask for 2 MiB pages (like our table does); otherwise ask for
    /// none (4 KiB pages: a TLB miss per random read on a large array).
    pub fn new(bytes: usize, huge: bool) -> Self {
        let words = (bytes / 8).max(GROUP);
        let align = if huge { 2 << 20 } else { 4096 };
        let layout = std::alloc::Layout::from_size_align(words * 8, align).unwrap();
        // SAFETY: non-zero size; checked for null below.
        let ptr = unsafe { std::alloc::alloc(layout) }.cast::<u64>();
        assert!(!ptr.is_null(), "memory-limit array: allocation failed");
        #[cfg(target_os = "linux")]
        // SAFETY: the range is the block just allocated, page aligned; the
        // advice changes only how the kernel backs it. Errors are ignored.
        unsafe {
            let advice = if huge {
                libc::MADV_HUGEPAGE
            } else {
                libc::MADV_NOHUGEPAGE
            };
            libc::madvise(ptr.cast(), layout.size(), advice);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = huge;
        for i in 0..words {
            // SAFETY: in bounds of the block; writing initialises (and maps) it.
            unsafe { ptr.add(i).write(splitmix(i as u64) | 1) };
        }
        Self { ptr, words, layout }
    }

    pub fn bytes(&self) -> usize {
        self.words * 8
    }

    pub fn ptr(&self) -> *const u64 {
        self.ptr
    }

    fn data(&self) -> &[u64] {
        // SAFETY: `words` initialised words, alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.words) }
    }

    /// Two random reads per hash, one query after another (the loads of
    /// successive queries still overlap as far as the core's window allows).
    #[inline(never)]
    pub fn plain(&self, hashes: &[u64]) -> u64 {
        let data = self.data();
        let n = data.len() as u64;
        let mut found = 0;
        for &h in hashes {
            let a = data[scale(h, n) as usize];
            let b = data[scale(h >> 32, n) as usize];
            found += u64::from((a == h) | (b == h));
        }
        found
    }

    /// The same with the loads issued ahead: the queries go in groups of
    /// [`GROUP`], and the 32 lines of group k+3 are prefetched before group k
    /// is read, so that a group's misses overlap the three before it's.
    ///
    /// Three groups ahead was the best depth on the 2-core Xeon of
    /// BENCHMARKS.md: on the 512 MiB table one group ahead reached 0.8 of
    /// its speed, two and three the same, four and six no more.
    #[inline(never)]
    pub fn batched(&self, hashes: &[u64]) -> u64 {
        self.batched_ahead(hashes, 3)
    }

    /// [`Self::batched`] prefetching `ahead` groups ahead (1 to 3).
    #[inline(never)]
    pub fn batched_ahead(&self, hashes: &[u64], ahead: usize) -> u64 {
        assert!((1..RING).contains(&ahead));
        let data = self.data();
        let n = data.len() as u64;
        let groups = hashes.len().div_ceil(GROUP);
        let group = |g: usize| &hashes[g * GROUP..((g + 1) * GROUP).min(hashes.len())];
        let mut ring = [[[0usize; 2]; GROUP]; RING];
        let issue = |g: usize, ring: &mut [[[usize; 2]; GROUP]; RING]| {
            for (ix, &h) in ring[g % RING].iter_mut().zip(group(g)) {
                *ix = [scale(h, n) as usize, scale(h >> 32, n) as usize];
                prefetch(&data[ix[0]]);
                prefetch(&data[ix[1]]);
            }
        };
        for g in 0..ahead.min(groups) {
            issue(g, &mut ring);
        }
        let mut found = 0;
        for g in 0..groups {
            if g + ahead < groups {
                issue(g + ahead, &mut ring);
            }
            for (ix, &h) in ring[g % RING].iter().zip(group(g)) {
                found += u64::from((data[ix[0]] == h) | (data[ix[1]] == h));
            }
        }
        found
    }
}

impl Drop for MemKernel {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.cast(), self.layout) }
    }
}

/// Requests the line of `p` into L2 (`PREFETCHT1`), as our batch does: on the
/// 2-core Xeon (Emerald Rapids) the batched kernel on the 512 MiB table ran
/// 1.16 times faster requesting into L2 than into L1 (`PREFETCHT0`). The
/// kernel is the least a batch must do, so it gets the faster hint; see the
/// crate's `table::memory::Reach`.
#[inline(always)]
fn prefetch(p: &u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; any address is allowed, this one is valid.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(
            (p as *const u64).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Fills `buf` with the synthetic hashes of block `block` (the same for the
/// kernel and the filter).
#[inline(always)]
pub fn hash_block(buf: &mut [u64; BLOCK], block: u64) {
    for (i, h) in buf.iter_mut().enumerate() {
        *h = splitmix(block.wrapping_mul(BLOCK as u64) + i as u64);
    }
}

/// Our plain lookups by hash over one block: `contains_hash` one at a time.
#[inline(never)]
pub fn ours_plain(f: &CuckooFilter, hashes: &[u64]) -> u64 {
    hashes.iter().map(|&h| u64::from(f.contains_hash(h))).sum()
}

/// Our batched lookups of items over one block: `contains_batch` on the
/// block's values taken as `u64` keys, hashed inside (what a caller of
/// `contains_batch` pays; [`ours_batched`] takes hashes).
#[inline(never)]
pub fn ours_batched_items(f: &CuckooFilter, keys: &[u64], out: &mut [bool; BLOCK]) -> u64 {
    f.contains_batch(keys, out);
    out.iter().map(|&b| u64::from(b)).sum()
}

/// Our batched lookups by hash over one block: `contains_hash_batch`.
#[inline(never)]
pub fn ours_batched(f: &CuckooFilter, hashes: &[u64], out: &mut [bool; BLOCK]) -> u64 {
    f.contains_hash_batch(hashes, out);
    out.iter().map(|&b| u64::from(b)).sum()
}
