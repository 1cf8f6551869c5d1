//! What the crate allocates, counted by a global allocator (this file's own
//! test binary, so that no other test's allocations mix in): a reader that
//! claims a huge table and then ends costs what it delivered, a filter read
//! or written costs its table plus a buffer, and a bulk load's scratch
//! holds what its items need, not the budget it may use.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use common::mix;
#[cfg(feature = "rayon")]
use lockfree_cuckoo_filter::BulkOptions;
use lockfree_cuckoo_filter::{CuckooFilter, DecodeError, ReadError};

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to `System` unchanged; the counters only
// observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: as the caller promised for `layout`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: as the caller promised for `layout`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as the caller promised for `ptr` and `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the new block arriving before the old one goes, which
        // is what a copying reallocation holds at its peak.
        grew(new_size);
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as the caller promised for `ptr`, `layout` and `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn grew(bytes: usize) {
    let now = NOW.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The tests of this file run one at a time: the counters are global.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Takes the turn; a test that failed holding it leaves the next ones
/// theirs (each then fails or passes for its own reason).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` and returns its result and the most it held allocated at once
/// beyond what was allocated when it started.
fn peak_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = f();
    (r, PEAK.load(Ordering::Relaxed) - base)
}

const MIB: usize = 1 << 20;

#[test]
fn a_reader_that_claims_a_huge_table_and_ends_costs_what_it_gave() {
    let _one = one_at_a_time();
    // A real header, made to claim 2^32 buckets of 16-bit slots (32 GiB),
    // followed by 4 MiB of table and the end of the input.
    let mut input = CuckooFilter::with_capacity(10).to_bytes()[..56].to_vec();
    input[32..40].copy_from_slice(&(1u64 << 32).to_le_bytes());
    input[48..56].copy_from_slice(&(1u64 << 32).to_le_bytes());
    input.resize(56 + 4 * MIB, 0);
    let (r, peak) = peak_of(|| CuckooFilter::read_from(&input[..]).map(|_| ()));
    assert!(matches!(
        r,
        Err(ReadError::Decode(DecodeError::Truncated { expected, actual }))
            if expected == 76 + 8 * (1 << 32) && actual == input.len() as u64
    ));
    // The 4 MiB delivered, grown by doubling, and a piece buffer.
    assert!(peak < 14 * MIB, "{peak} bytes");
}

#[test]
fn a_reader_that_claims_a_huge_moved_list_and_ends_costs_what_it_gave() {
    let _one = one_at_a_time();
    // A real filter's header and table, then a moved list that claims 2^60
    // entries and delivers 4 MiB of them.
    let bytes = CuckooFilter::with_capacity(1000).to_bytes();
    let mut input = bytes[..bytes.len() - 20].to_vec();
    input.extend_from_slice(&(1u64 << 60).to_le_bytes());
    let at = input.len();
    input.resize(at + 4 * MIB, 0);
    let (r, peak) = peak_of(|| CuckooFilter::read_from(&input[..]).map(|_| ()));
    assert!(matches!(
        r,
        Err(ReadError::Decode(DecodeError::Truncated { expected, actual }))
            if expected == bytes.len() as u64 + 8 * (1 << 60) && actual == input.len() as u64
    ));
    // The 4 MiB delivered, grown by doubling, and a piece buffer.
    assert!(peak < 14 * MIB, "{peak} bytes");
}

#[test]
fn reading_and_writing_a_filter_cost_its_table_and_a_buffer() {
    let _one = one_at_a_time();
    let f = CuckooFilter::with_capacity(8_000_000);
    for i in 0..7_000_000 {
        f.insert_hash(mix(i)).unwrap();
    }
    let table = f.memory_usage();
    assert!(table > 16 * MIB);
    let mut bytes = Vec::with_capacity(table + MIB);
    let (r, written_peak) = peak_of(|| f.write_to(&mut bytes));
    r.unwrap();
    assert!(written_peak < 2 * MIB, "write_to: {written_peak} bytes");
    let (g, read_peak) = peak_of(|| CuckooFilter::read_from(&bytes[..]).unwrap());
    // The table, and, while the last growth copies the blocks, the blocks
    // grown so far (at most half the table; see `Table::from_pieces`).
    assert!(
        read_peak < table + table / 2 + 2 * MIB,
        "read_from: {read_peak} bytes for {table}"
    );
    assert_eq!(g.len(), 7_000_000);
}

/// A bulk load allocates scratch as its items come, within the budget: ten
/// items under a budget of 1 TiB (a caller's "no limit") load without
/// asking for the budget, and under the default one hold a few KiB, not
/// the task's share of 256 MiB.
#[cfg(feature = "rayon")]
#[test]
fn a_bulk_load_allocates_what_its_items_need_not_its_budget() {
    let _one = one_at_a_time();
    // Over 4 MiB of table, so that the load sorts its passes in scratch.
    let f = CuckooFilter::with_capacity(3_000_000);
    let huge = BulkOptions::new().scratch_bytes(1 << 40);
    let (r, peak) = peak_of(|| f.par_insert_all_with(0..10u64, huge));
    assert_eq!(r, Ok(10));
    assert!(peak < MIB, "ten items, budget 1 TiB: {peak} bytes");
    let (r, peak) = peak_of(|| f.par_insert_all(10..20u64));
    assert_eq!(r, Ok(10));
    assert!(peak < MIB, "ten items, default budget: {peak} bytes");
    let unlimited = BulkOptions::new().scratch_bytes(usize::MAX);
    assert_eq!(
        f.par_insert_all_with(1_000_020..1_000_030u64, unlimited),
        Ok(10)
    );
    // A load larger than the first scratch grows it, all items found.
    let (r, peak) = peak_of(|| f.par_insert_all_with(20..1_000_020u64, huge));
    assert_eq!(r, Ok(1_000_000));
    assert!(peak < 48 * MIB, "10^6 items, budget 1 TiB: {peak} bytes");
    assert!((0..1_000_030u64).all(|i| f.contains(&i)));
}
