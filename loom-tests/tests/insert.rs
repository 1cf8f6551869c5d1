//! Model 3: two inserts racing for the last free slot, and for the same
//! cuckoo path.
//!
//! Defences checked:
//! - every bucket write is a compare-and-swap (`put`, `take`, the clear in
//!   `relocate`): of two threads that saw the same empty slot only one fills
//!   it, and the loser searches again;
//! - a failed insert changes nothing: the loser of the last slot returns `Err`
//!   and the table holds exactly the set-up's items plus the winner's;
//! - the mover's fallback when two movers copy the same fingerprint (the
//!   second finds its source already cleared and removes its extra copy).
//!
//! After the join: every `Ok` insert is present, every `Err` left no trace,
//! and `len()` is exact and agrees with the table (model 6).
//!
//! Mutations it catches: `put` by load + store instead of CAS (all three:
//! both inserts `Ok` for one slot, or an item lost); no fallback in `relocate`
//! and Relaxed bucket accesses (`same_path_room_for_both`: an insert fails
//! although there was room, the duplicate copy having taken it).
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{assert_holds_exactly, check, filter, fp, fps, prefill, race, Roles};
use lockfree_cuckoo_filter::test_hooks::TableHooks;
use loom::sync::Arc;

/// Runs inserts of `x` and `y` on `f` (`x` spawned and `y` on the main
/// thread, or the other way round, as `roles` says), then checks that the
/// table holds exactly `live` plus the successful ones.
fn two_inserts(
    roles: Roles,
    f: common::Filter,
    mut live: Vec<u64>,
    x: u64,
    y: u64,
    both_fit: bool,
) {
    let f = Arc::new(f);
    let (g, h) = (Arc::clone(&f), Arc::clone(&f));
    let (rx, ry) = race(roles, move || g.insert_hash(x), move || h.insert_hash(y));

    if both_fit {
        assert!(
            rx.is_ok() && ry.is_ok(),
            "an insert failed with room for both"
        );
    } else {
        assert!(rx.is_ok() != ry.is_ok(), "one slot, yet {rx:?} and {ry:?}");
    }
    live.extend(
        [(x, rx), (y, ry)]
            .into_iter()
            .filter(|(_, r)| r.is_ok())
            .map(|(h, _)| h),
    );
    assert_holds_exactly(&f, &live);
}

/// Two buckets, seven items, one free slot in bucket 1; both new items pair
/// 0 with 1 and reach it by a plain `put` (no path).
fn last_free_slot(roles: Roles) {
    check(move || {
        let f = filter(2);
        let all = fps(&f, 0, 1, 9, &[]);
        let mut live: Vec<u64> = all[..4].iter().map(|&p| prefill(&f, 0, p)).collect();
        live.extend(all[4..7].iter().map(|&p| prefill(&f, 1, p)));
        let (x, y) = (f.hash_for(0, all[7]), f.hash_for(0, all[8]));
        two_inserts(roles, f, live, x, y, false);
    });
}

#[test]
fn last_free_slot_racer_spawned() {
    last_free_slot(Roles::RacerSpawned);
}

#[test]
fn last_free_slot_roles_swapped() {
    last_free_slot(Roles::RacerOnMain);
}

/// Four buckets, 0 and 1 full; the only free room is in bucket 3, reached from
/// 0 by moving `a[0]` (pairing 0 with 3): both inserts find that same path.
/// With `free == 1` only one of them fits; with `free == 2` both do, and both
/// may copy `a[0]` into bucket 3 before either clears it (mover fallback).
///
/// Bucket 3 holds fingerprints that pair it back with 0, and bucket 2 (full)
/// ones that pair it back with 1, so the search of a full table is short.
fn same_path(free: usize, roles: Roles) {
    check(move || {
        let f = filter(4);
        let a = fps(&f, 0, 3, 4, &[]);
        let b = fps(&f, 1, 2, 4, &[]);
        let c = fps(&f, 3, 0, 8 - 4 - free, &a);
        let d = fps(&f, 2, 1, 4, &b);
        let mut live: Vec<u64> = Vec::new();
        for (bucket, group) in [(0, &a), (1, &b), (3, &c), (2, &d)] {
            live.extend(group.iter().map(|&p| prefill(&f, bucket, p)));
        }
        let x = f.hash_for(0, fp(&f, 0, 1, &[]));
        let y = f.hash_for(0, fps(&f, 0, 1, 2, &[])[1]);
        two_inserts(roles, f, live, x, y, free == 2);
    });
}

#[test]
fn same_path_last_free_slot() {
    same_path(1, Roles::RacerSpawned);
}

#[test]
fn same_path_last_free_slot_roles_swapped() {
    same_path(1, Roles::RacerOnMain);
}

#[test]
fn same_path_room_for_both() {
    same_path(2, Roles::RacerSpawned);
}

#[test]
fn same_path_room_for_both_roles_swapped() {
    same_path(2, Roles::RacerOnMain);
}
