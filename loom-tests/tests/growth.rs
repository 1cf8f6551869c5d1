//! loom models of growth: an insert that finds the newest table full publishes
//! a larger one while other threads insert, look up and remove in the old one.
//!
//! Every model starts from a full first table (two buckets, eight items), so
//! the next insert must grow the chain. What is checked, in every interleaving:
//! no item whose insert returned is ever missed (by any thread that starts
//! looking after that), none is lost when two threads grow at once (one
//! allocation wins, the other's item goes into the winner's table), and `len`
//! is exact at the end. Under loom the chain pointer is a loom `AtomicPtr` and
//! each chain lives in a loom `UnsafeCell` (see `src/sync/published.rs`, the
//! same code that runs outside loom), so a thread that could read a chain
//! before its publication happens-before the read is reported as a causality
//! violation.
//!
//! Nine models: `racing_growths_*` (two items, in both spawn orders; one
//! item inserted twice, a twin in every table), and `lookups_*`,
//! `insert_into_old_table_*` (its insert a twin, in the old table, of the
//! item its remove takes) and `insert_if_absent_*`, each in both role
//! assignments.
//!
//! Mutations it catches (preemption bound 2): lookups
//! that read only the newest table (all 9 models fail); the chain published
//! by a Relaxed CAS instead of AcqRel (8 of the 9 fail, all but
//! `insert_if_absent_during_growth`); an `insert_if_absent` that skips the
//! older tables (see `insert_if_absent_during_growth`); an insert whose put
//! takes a copy of its fingerprint already in the bucket for its own (only
//! `racing_growths_of_one_item_lose_nothing`: a copy of `X` missing).
//!
//! ```text
//! RUSTFLAGS="--cfg lockfree_cuckoo_filter_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
//!     cargo test -p loom-tests --release --test growth
//! ```
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{check, race, spawn_both, Roles, SpawnOrder};
use lockfree_cuckoo_filter::test_hooks::GrowableHooks;
use lockfree_cuckoo_filter::GrowableCuckooFilter;
use loom::sync::Arc;
// A plain std counter outside the model, read once loom is done.
use std::sync::atomic::{AtomicUsize, Ordering};

/// splitmix64: distinct, well-mixed hashes.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The eight items that fill the first table.
fn prefilled() -> impl Iterator<Item = u64> {
    (0..8).map(mix)
}

const X: u64 = 0x5851_f42d_4c95_7f2d;
const Y: u64 = 0x1405_7b7e_f767_814f;

/// A filter whose only table (two buckets, 8 slots) is full.
fn full_filter() -> Arc<GrowableCuckooFilter> {
    let f = GrowableCuckooFilter::builder()
        .initial_capacity(0)
        .build()
        .unwrap();
    for h in prefilled() {
        f.insert_hash(h).unwrap();
    }
    assert_eq!(f.table_count(), 1);
    assert_eq!(
        f.slots(),
        8,
        "the models assume a first table of two buckets"
    );
    Arc::new(f)
}

/// The second insert of [`racing_growths`].
#[derive(Clone, Copy, Debug)]
enum Second {
    /// `Y`, another item.
    Other,
    /// `X` again: two inserts of one item, a twin in every table of the
    /// chain, so that besides growing at once the two inserts race for the
    /// same bucket pair of the winner's table.
    SameItem,
}

/// Two inserts find the table full and grow at once: one chain wins, the other
/// thread drops its table and inserts into the winner's.
///
/// Both inserts run on spawned threads (the main thread only joins), so that
/// neither starts ahead of the other: a head start for the main thread would
/// cost a preemption to undo. `Y` runs with both spawn orders. The twin
/// (`X` twice) runs with one: its two threads run the same code on the same
/// hash, so the other order is the same program.
fn racing_growths(second: Second, order: SpawnOrder) {
    check(move || {
        let f = full_filter();
        let y = match second {
            Second::Other => Y,
            Second::SameItem => X,
        };
        let insert = |h: u64| {
            let f = f.clone();
            move || {
                f.insert_hash(h).unwrap();
                assert!(f.contains_hash(h), "own insert missed");
            }
        };
        spawn_both(order, insert(X), insert(y));
        assert_eq!(f.table_count(), 2, "one growth wins, the other is dropped");
        assert!(f.contains_hash(X) && f.contains_hash(y), "item lost");
        assert!(prefilled().all(|h| f.contains_hash(h)), "old item lost");
        assert_eq!(f.len(), 10);
        if let Second::SameItem = second {
            // Two copies, one for each insert.
            assert!(f.remove_hash(X) && f.remove_hash(X), "a copy of X lost");
            assert_eq!(f.len(), 8);
            assert!(prefilled().all(|h| f.contains_hash(h)), "old item lost");
        }
    });
}

#[test]
fn racing_growths_lose_nothing() {
    racing_growths(Second::Other, SpawnOrder::AFirst);
}

#[test]
fn racing_growths_lose_nothing_spawn_order_swapped() {
    racing_growths(Second::Other, SpawnOrder::BFirst);
}

#[test]
fn racing_growths_of_one_item_lose_nothing() {
    racing_growths(Second::SameItem, SpawnOrder::AFirst);
}

/// Lookups of the old table's items, and of the item that triggers growth,
/// while it grows: old items are always found, and the new one once its
/// insert is known to have returned.
fn lookups_during_growth(roles: Roles) {
    check(move || {
        let f = full_filter();
        let done = Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let grower = {
            let (f, done) = (f.clone(), done.clone());
            move || {
                f.insert_hash(X).unwrap();
                done.store(true, loom::sync::atomic::Ordering::Release);
            }
        };
        let lookups = {
            let (f, done) = (f.clone(), done.clone());
            move || {
                let old = mix(3);
                assert!(f.contains_hash(old), "old item missed during growth");
                if done.load(loom::sync::atomic::Ordering::Acquire) {
                    assert!(f.contains_hash(X), "item missed after its insert returned");
                }
                assert!(f.contains_hash(mix(7)), "old item missed during growth");
            }
        };
        race(roles, grower, lookups);
        assert!(f.contains_hash(X));
        assert_eq!(f.len(), 9);
    });
}

#[test]
fn lookups_during_growth_racer_spawned() {
    lookups_during_growth(Roles::RacerSpawned);
}

#[test]
fn lookups_during_growth_roles_swapped() {
    lookups_during_growth(Roles::RacerOnMain);
}

/// A remove frees a slot of the old table and an insert through a chain that
/// may be stale fills it, while another insert grows the chain: every item
/// stays findable and the count is exact.
///
/// The item inserted, `y`, is the twin in the old table of the item removed
/// (`mix(0)`): same fingerprint, same bucket pair, opposite first bucket. The
/// freed slot is the only one in the old table, so when `y` goes there the
/// word returns to the very value it had before the remove (an ABA that the
/// other thread's reads, path search and CASes on that table may straddle).
fn insert_into_old_table_during_growth(roles: Roles) {
    // Executions in which `y` went into the slot the remove freed (a plain
    // std counter outside the model, read once loom is done).
    let aba = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&aba);
    check(move || {
        let f = full_filter();
        let removed = mix(0);
        let (i1, i2, fp) = f.position_in(0, removed);
        let y = f.hash_into(0, i2, fp);
        assert_eq!(f.position_in(0, y), (i2, i1, fp), "a twin of mix(0)");
        assert!(
            prefilled().skip(1).all(|h| f.position_in(0, h).2 != fp),
            "mix(0)'s copy is the only one of its fingerprint"
        );
        // An item of a fingerprint the old table never holds, for the end.
        let probe = f.hash_into(0, 0, fp ^ 1);
        assert!(prefilled().all(|h| f.position_in(0, h).2 != fp ^ 1));
        let grower = {
            let f = f.clone();
            move || f.insert_hash(X).unwrap()
        };
        let churn = {
            let f = f.clone();
            move || {
                assert!(f.remove_hash(removed));
                f.insert_hash(y).unwrap();
            }
        };
        race(roles, grower, churn);
        assert!(f.contains_hash(X) && f.contains_hash(y), "item lost");
        assert!(
            prefilled().skip(1).all(|h| f.contains_hash(h)),
            "old item lost"
        );
        assert_eq!(f.len(), 9);
        // Whether `y` went into the slot the remove freed: then the old table
        // is full, and stays full without `X` (removed from whichever table
        // holds it; the probe goes in wherever there is room).
        assert!(f.remove_hash(X));
        if !f.insert_hash_into(0, probe) {
            seen.fetch_add(1, Ordering::Relaxed);
        }
    });
    assert!(
        aba.load(Ordering::Relaxed) > 0,
        "no execution put y into the slot freed in the old table"
    );
}

#[test]
fn insert_into_old_table_during_growth_racer_spawned() {
    insert_into_old_table_during_growth(Roles::RacerSpawned);
}

#[test]
fn insert_into_old_table_during_growth_roles_swapped() {
    insert_into_old_table_during_growth(Roles::RacerOnMain);
}

/// `insert_if_absent` of an item of the full first table while another
/// thread's insert grows the chain: the item was present throughout, so the
/// answer is `Ok(false)` and nothing is added, whichever chain the call sees
/// (after the growth its newest table does not hold the item: the older
/// tables must be looked in). Run with both role assignments.
///
/// Seen to fail ("present item added again", with the growth on the main
/// thread; the other assignment passes) when the older tables of the chain
/// are not looked in first.
fn if_absent_during_growth(roles: Roles) {
    check(move || {
        let f = full_filter();
        let present = mix(5);
        let grow = {
            let f = f.clone();
            move || f.insert_hash(X).unwrap()
        };
        let if_absent = {
            let f = f.clone();
            move || f.insert_hash_if_absent(present).unwrap()
        };
        let ((), added) = race(roles, grow, if_absent);
        assert!(!added, "present item added again");
        assert_eq!(f.len(), 9);
        assert!(prefilled().all(|h| f.contains_hash(h)) && f.contains_hash(X));
    });
}

#[test]
fn insert_if_absent_during_growth() {
    if_absent_during_growth(Roles::RacerSpawned);
}

#[test]
fn insert_if_absent_during_growth_roles_swapped() {
    if_absent_during_growth(Roles::RacerOnMain);
}
