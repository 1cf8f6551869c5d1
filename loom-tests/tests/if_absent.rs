//! Model 8: `insert_if_absent`. Racing calls for one item must never lose it,
//! and every `Ok(true)` must stand for exactly one copy.
//!
//! Defences checked (see `src/table/insert.rs`, "Insert if absent"):
//! - the put expects a word without the fingerprint (`put_absent`), so that
//!   two racers aiming at one word do not both put;
//! - the duplicate take (`take_duplicate`) is one CAS whose expected value
//!   holds two or more copies, so that one copy always stays in the word;
//! - the validated lookup first, so that an item present throughout answers
//!   `Ok(false)` and adds nothing.
//!
//! Models, each with both role assignments ([`common::Roles`]):
//! - `two_racers_*`: two `insert_if_absent(x)` on an empty 4-bucket table;
//! - `two_racers_one_free_slot_*`: the same with one free slot in `x`'s first
//!   bucket, so that the second racer must find the first's copy there or go
//!   to the second bucket;
//! - `two_racers_on_a_path_*`: both of `x`'s buckets full, so that both racers
//!   reach the cuckoo path, whose final put is a plain one: duplicates in one
//!   word are resolved by the take;
//! - `twin_removed_*`: `insert_if_absent(x)` racing the remove of a live
//!   item with `x`'s fingerprint and buckets but the other first bucket.
//! - `if_absent_take_vs_lookup_*`: three threads; the duplicate take is
//!   announced like any take, so that with a colliding twin's remove it is
//!   no unseen move (see the model). It checks a lookup, not the end state
//!   alone.
//!
//! Each ends with: at least one `Ok(true)` where the item was absent and not
//! removed; the pair holds exactly one copy per `Ok(true)` (plus the items
//! the set-up put in); `len()` agrees with the table
//! ([`common::assert_holds_exactly`]).
//!
//! Mutations seen to fail. The duplicate take without its announcement
//! (`Snapshot::announce` in `take_duplicate` a plain load):
//! `if_absent_take_vs_lookup_roles_swapped` (the lookup spawned), "false
//! negative: L was live", at LOOM_MAX_PREEMPTIONS=2; both at 3 (the model
//! runs at CI's 2: at 3 it takes about 30 s on two cores).
//! At LOOM_MAX_PREEMPTIONS=2: the duplicate take by a
//! CAS whose expected value need only hold one copy (`take` on the bucket
//! once two were seen): `two_racers_on_a_path*` fail, both roles, with "x was
//! absent: one racer must add it" (both racers took, no copy left). Not
//! caught, and why: a lookup without validation (`put_absent` re-reads the
//! first bucket, where a copy the lookup missed has just arrived); a plain
//! put instead of `put_absent`, or no look at the other bucket before a
//! path's last put (the take resolves duplicates in one word, and copies in
//! two words are extra `Ok(true)`s, which these models allow: they only
//! change the rate, measured in `tests/if_absent.rs`).
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{assert_holds_exactly, check, filter, fps, one_step, prefill, race, Filter, Roles};
use lockfree_cuckoo_filter::test_hooks::TableHooks;
use loom::sync::Arc;

/// Races two `insert_if_absent(x)` and returns how many answered `Ok(true)`.
fn race_two(f: &Arc<Filter>, x: u64, roles: Roles) -> usize {
    let (a, b) = (Arc::clone(f), Arc::clone(f));
    let (ra, rb) = race(
        roles,
        move || a.insert_hash_if_absent(x),
        move || b.insert_hash_if_absent(x),
    );
    let trues = [ra, rb]
        .into_iter()
        .map(|r| r.expect("room for x"))
        .filter(|&t| t)
        .count();
    assert!(trues >= 1, "x was absent: one racer must add it");
    assert!(f.contains_hash(x), "x lost");
    assert_eq!(f.copies(x), trues, "copies of x != Ok(true) answers");
    trues
}

fn two_racers_empty(roles: Roles) {
    check(move || {
        let f = filter(4);
        let x = f.hash_for(0, fps(&f, 0, 3, 1, &[])[0]);
        let f = Arc::new(f);
        let trues = race_two(&f, x, roles);
        assert_eq!(trues, 1, "both racers aimed at one word");
        assert_holds_exactly(&f, &[x]);
    });
}

#[test]
fn two_racers() {
    two_racers_empty(Roles::RacerSpawned);
}

#[test]
fn two_racers_roles_swapped() {
    two_racers_empty(Roles::RacerOnMain);
}

fn one_free_slot(roles: Roles) {
    check(move || {
        let f = filter(4);
        let all = fps(&f, 0, 3, 4, &[]);
        let x = f.hash_for(0, all[0]);
        let mut live: Vec<u64> = all[1..].iter().map(|&p| prefill(&f, 0, p)).collect();
        let f = Arc::new(f);
        let trues = race_two(&f, x, roles);
        live.extend(std::iter::repeat_n(x, trues));
        assert_holds_exactly(&f, &live);
    });
}

#[test]
fn two_racers_one_free_slot() {
    one_free_slot(Roles::RacerSpawned);
}

#[test]
fn two_racers_one_free_slot_roles_swapped() {
    one_free_slot(Roles::RacerOnMain);
}

fn on_a_path(roles: Roles) {
    check(move || {
        let f = filter(4);
        let s = one_step(&f, 0, 3);
        let x = s.x;
        let mut live = s.live;
        let f = Arc::new(f);
        let trues = race_two(&f, x, roles);
        live.extend(std::iter::repeat_n(x, trues));
        assert_holds_exactly(&f, &live);
    });
}

#[test]
fn two_racers_on_a_path() {
    on_a_path(Roles::RacerSpawned);
}

#[test]
fn two_racers_on_a_path_roles_swapped() {
    on_a_path(Roles::RacerOnMain);
}

fn twin_removed_during(roles: Roles) {
    check(move || {
        // 2 buckets: the twin K' (first bucket 1) holds one copy, in bucket
        // 1; x has first bucket 0 and the same fingerprint.
        let f = filter(2);
        let all = fps(&f, 0, 1, 3, &[]);
        let twin = prefill(&f, 1, all[0]);
        let x = f.hash_for(0, all[0]);
        let mut live = vec![prefill(&f, 0, all[1]), prefill(&f, 1, all[2])];
        let f = Arc::new(f);
        let (a, b) = (Arc::clone(&f), Arc::clone(&f));
        let (removed, added) = race(
            roles,
            move || a.remove_hash(twin),
            move || b.insert_hash_if_absent(x),
        );
        assert!(removed, "the twin was live");
        let added = added.expect("room for x");
        // Ok(false): x found the twin's copy (a false positive) and added
        // nothing; the twin's remove then took it.
        assert_eq!(
            f.copies(x),
            usize::from(added),
            "copies of x != Ok(true) answers"
        );
        if added {
            assert!(f.contains_hash(x), "x lost");
            live.push(x);
        }
        assert_holds_exactly(&f, &live);
    });
}

#[test]
fn twin_removed() {
    twin_removed_during(Roles::RacerSpawned);
}

#[test]
fn twin_removed_roles_swapped() {
    twin_removed_during(Roles::RacerOnMain);
}

/// `insert_if_absent`'s take of a duplicate is a take like a remove's, and
/// announced like one: without the bump, it and a colliding twin's remove
/// move a copy unseen.
///
/// Set-up: 2 buckets, fingerprints pairing 0 with 1; bucket 1 holds two
/// other items. `L` has fingerprint `s` and first bucket 1; `K′` has `s` and
/// first bucket 0. A third thread, spawned first, runs
/// `insert_if_absent(L)`. The racing work inserts `L` (bucket 1 has two free
/// slots, bucket 0 four: it goes to 0), raises a flag, inserts `K′` (into
/// 0) and removes it (from 0, the lower bucket). The checked work: if the
/// flag is up, `L` is live for the rest of the lookup, and `contains(L)`
/// (bucket 1 read, then 0) must be true.
///
/// The hazard: the lookup's counter read follows the remove's announcement
/// and its read of bucket 1 precedes the `insert_if_absent`'s put there;
/// that call then finds two copies in bucket 0 and takes one, the remove
/// takes the other, and the lookup reads bucket 0 empty. Only the duplicate
/// take's own bump moves the counter after the lookup read it.
fn if_absent_take_vs_lookup(roles: Roles) {
    use loom::sync::atomic::{AtomicBool, Ordering};
    check(move || {
        let f = filter(2);
        let all = fps(&f, 0, 1, 3, &[]);
        let s = all[0];
        let mut live = vec![prefill(&f, 1, all[1]), prefill(&f, 1, all[2])];
        let l = f.hash_for(1, s);
        let k_twin = f.hash_for(0, s);
        let f = Arc::new(f);
        let flag = Arc::new(AtomicBool::new(false));
        let third = {
            let f = Arc::clone(&f);
            loom::thread::spawn(move || f.insert_hash_if_absent(l))
        };
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let raised = Arc::clone(&flag);
        let churn = move || {
            g.insert_hash(l).expect("room for L");
            raised.store(true, Ordering::Release);
            g.insert_hash(k_twin).expect("room for K′");
            assert!(g.remove_hash(k_twin), "K′ was just inserted");
        };
        let look = move || {
            if flag.load(Ordering::Acquire) {
                assert!(h.contains_hash(l), "false negative: L was live");
            }
        };
        race(roles, churn, look);
        let added = third.join().unwrap().expect("room for L");
        live.push(l);
        if added {
            live.push(l);
        }
        assert_holds_exactly(&f, &live);
    });
}

#[test]
fn if_absent_take_vs_lookup_racer_spawned() {
    if_absent_take_vs_lookup(Roles::RacerSpawned);
}

#[test]
fn if_absent_take_vs_lookup_roles_swapped() {
    if_absent_take_vs_lookup(Roles::RacerOnMain);
}
