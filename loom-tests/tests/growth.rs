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
//! Mutations it catches (rechecked 2026-11-23, preemption bound 2): lookups
//! that read only the newest table (all 7 models fail); the chain published
//! by a Relaxed CAS instead of AcqRel (6 of the 7 fail, all but
//! `insert_if_absent_during_growth`); an `insert_if_absent` that skips the
//! older tables (see `insert_if_absent_during_growth`).
//!
//! ```text
//! RUSTFLAGS="--cfg lockfree_cuckoo_filter_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
//!     cargo test -p loom-tests --release --test growth
//! ```
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{check, race, Roles};
use lockfree_cuckoo_filter::GrowableCuckooFilter;
use loom::sync::Arc;
use loom::thread;

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

/// Two inserts find the table full and grow at once: one chain wins, the other
/// thread drops its table and inserts into the winner's.
#[test]
fn racing_growths_lose_nothing() {
    check(|| {
        let f = full_filter();
        let a = {
            let f = f.clone();
            thread::spawn(move || {
                f.insert_hash(X).unwrap();
                assert!(f.contains_hash(X), "own insert missed");
            })
        };
        let b = {
            let f = f.clone();
            thread::spawn(move || {
                f.insert_hash(Y).unwrap();
                assert!(f.contains_hash(Y), "own insert missed");
            })
        };
        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(f.table_count(), 2, "one growth wins, the other is dropped");
        assert!(f.contains_hash(X) && f.contains_hash(Y), "item lost");
        assert!(prefilled().all(|h| f.contains_hash(h)), "old item lost");
        assert_eq!(f.len(), 10);
    });
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
fn insert_into_old_table_during_growth(roles: Roles) {
    check(move || {
        let f = full_filter();
        let grower = {
            let f = f.clone();
            move || f.insert_hash(X).unwrap()
        };
        let churn = {
            let f = f.clone();
            move || {
                assert!(f.remove_hash(mix(0)));
                f.insert_hash(Y).unwrap();
            }
        };
        race(roles, grower, churn);
        assert!(f.contains_hash(X) && f.contains_hash(Y), "item lost");
        assert!(
            prefilled().skip(1).all(|h| f.contains_hash(h)),
            "old item lost"
        );
        assert_eq!(f.len(), 9);
    });
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
