//! Model 3: two inserts racing for the last free slot, for the same cuckoo
//! path, and for the emptier of their buckets.
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
//! Sixteen models: `last_free_slot`, `same_path` (one free slot, or room
//! for both) and `emptier_bucket`, each with `y` another item of `x`'s pair
//! and with `y` `x`'s twin (same fingerprint, same pair, opposite first
//! bucket: [`Second`]), each in both role assignments.
//!
//! Mutations it catches (preemption bound 2): `put` by
//! load + store instead of CAS (all twelve of the others: both inserts `Ok`
//! for one slot, or an item lost), and the put into a chosen bucket
//! (`put_expecting`) by a store of the word it read (all sixteen: an item
//! lost); no fallback in `relocate` and Relaxed bucket accesses
//! (the four `same_path_room_for_both*`: an insert fails although there was
//! room, the duplicate copy having taken it); an insert's put (first bucket,
//! second, or a path's root) that takes a copy of its fingerprint already in
//! the bucket for its own (only the six twin models, in every interleaving,
//! not only racing ones: both inserts `Ok` for one slot, or one copy fewer
//! than items; the six others pass).
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{assert_holds_exactly, check, filter, fps, prefill, race, Roles};
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

/// The second insert, `y`, against the first, `x`: both have the same bucket
/// pair.
#[derive(Clone, Copy, Debug)]
enum Second {
    /// Another item of the pair, with a fingerprint of its own.
    Other,
    /// `x`'s twin: `x`'s fingerprint, first bucket the other one of the pair
    /// (as `K′` in `collision.rs`). Both race for the same slot with the same
    /// fingerprint, so a put that lost its race to the twin sees its own
    /// fingerprint in the slot it wanted: a put that took that for its own
    /// copy (or stored over it) would count two items in one copy.
    Twin,
}

/// `y` for the set-up's `x` (first bucket 0, second 1, fingerprint `x_fp`):
/// `other` as it is, or `x`'s twin.
fn second(f: &common::Filter, second: Second, x_fp: u32, other: u32) -> u64 {
    match second {
        Second::Other => f.hash_for(0, other),
        Second::Twin => {
            let twin = f.hash_for(1, x_fp);
            assert_eq!(f.position(twin), (1, 0, x_fp), "a twin of x");
            twin
        }
    }
}

/// Two buckets, seven items, one free slot in bucket 1; both new items pair
/// 0 with 1 and reach it by a plain `put` (no path): `x` (first bucket 0) by
/// its second put, `y` by its second put (`Second::Other`) or its first (the
/// twin, first bucket 1).
fn last_free_slot(y: Second, roles: Roles) {
    check(move || {
        let f = filter(2);
        let all = fps(&f, 0, 1, 9, &[]);
        let mut live: Vec<u64> = all[..4].iter().map(|&p| prefill(&f, 0, p)).collect();
        live.extend(all[4..7].iter().map(|&p| prefill(&f, 1, p)));
        let (x, y) = (f.hash_for(0, all[7]), second(&f, y, all[7], all[8]));
        two_inserts(roles, f, live, x, y, false);
    });
}

#[test]
fn last_free_slot_racer_spawned() {
    last_free_slot(Second::Other, Roles::RacerSpawned);
}

#[test]
fn last_free_slot_roles_swapped() {
    last_free_slot(Second::Other, Roles::RacerOnMain);
}

#[test]
fn last_free_slot_twin() {
    last_free_slot(Second::Twin, Roles::RacerSpawned);
}

#[test]
fn last_free_slot_twin_roles_swapped() {
    last_free_slot(Second::Twin, Roles::RacerOnMain);
}

/// Four buckets, 0 and 1 full; the only free room is in bucket 3, reached from
/// 0 by moving `a[0]` (pairing 0 with 3): both inserts find that same path.
/// With `free == 1` only one of them fits; with `free == 2` both do, and both
/// may copy `a[0]` into bucket 3 before either clears it (mover fallback).
///
/// Bucket 3 holds fingerprints that pair it back with 0, and bucket 2 (full)
/// ones that pair it back with 1, so the search of a full table is short.
///
/// With `y` the twin of `x` (first bucket 1), the search does not look at
/// the fingerprint being inserted, only at its two buckets: it starts from
/// bucket 1, reads bucket 2 (full) through the `b`s first, and then finds
/// the same path, `a[0]: 0 -> 3`, and the same root, 0, where both inserts
/// then put one fingerprint.
fn same_path(free: usize, y: Second, roles: Roles) {
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
        let xy = fps(&f, 0, 1, 2, &[]);
        let (x, y) = (f.hash_for(0, xy[0]), second(&f, y, xy[0], xy[1]));
        two_inserts(roles, f, live, x, y, free == 2);
    });
}

#[test]
fn same_path_last_free_slot() {
    same_path(1, Second::Other, Roles::RacerSpawned);
}

#[test]
fn same_path_last_free_slot_roles_swapped() {
    same_path(1, Second::Other, Roles::RacerOnMain);
}

#[test]
fn same_path_room_for_both() {
    same_path(2, Second::Other, Roles::RacerSpawned);
}

#[test]
fn same_path_room_for_both_roles_swapped() {
    same_path(2, Second::Other, Roles::RacerOnMain);
}

#[test]
fn same_path_last_free_slot_twin() {
    same_path(1, Second::Twin, Roles::RacerSpawned);
}

#[test]
fn same_path_last_free_slot_twin_roles_swapped() {
    same_path(1, Second::Twin, Roles::RacerOnMain);
}

#[test]
fn same_path_room_for_both_twin() {
    same_path(2, Second::Twin, Roles::RacerSpawned);
}

#[test]
fn same_path_room_for_both_twin_roles_swapped() {
    same_path(2, Second::Twin, Roles::RacerOnMain);
}

/// Two buckets; bucket 0 has one free slot and bucket 1 two, so an insert
/// that reads them before the other's put chooses bucket 1, the emptier, for
/// either item (`x`'s first bucket is 0; `y`'s is 0 too, or 1 for the twin),
/// and one that reads them after it sees a tie and takes its first bucket.
/// Both fit. The racers' puts expect the words they read when choosing, so
/// the one whose word changed meanwhile fails its first CAS and puts again
/// into what the word holds now.
fn emptier_bucket(y: Second, roles: Roles) {
    check(move || {
        let f = filter(2);
        let all = fps(&f, 0, 1, 7, &[]);
        let mut live: Vec<u64> = all[..3].iter().map(|&p| prefill(&f, 0, p)).collect();
        live.extend(all[3..5].iter().map(|&p| prefill(&f, 1, p)));
        let (x, y) = (f.hash_for(0, all[5]), second(&f, y, all[5], all[6]));
        two_inserts(roles, f, live, x, y, true);
    });
}

#[test]
fn emptier_bucket_racer_spawned() {
    emptier_bucket(Second::Other, Roles::RacerSpawned);
}

#[test]
fn emptier_bucket_roles_swapped() {
    emptier_bucket(Second::Other, Roles::RacerOnMain);
}

#[test]
fn emptier_bucket_twin() {
    emptier_bucket(Second::Twin, Roles::RacerSpawned);
}

#[test]
fn emptier_bucket_twin_roles_swapped() {
    emptier_bucket(Second::Twin, Roles::RacerOnMain);
}
