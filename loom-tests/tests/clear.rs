//! Model 9: `clear` on a shared table. An item inserted after `clear`
//! returned must be present, and once every thread is joined `len()` must
//! equal the fingerprints in the table, whatever raced the clear.
//!
//! The hazard (see `src/table/clear.rs`): an operation that holds a copy the
//! item count does not stand for (a mover between its copy and its clear, an
//! `insert_if_absent` between its put and its answer) will later take a copy
//! of its fingerprint out of the pair. If the sweep took its uncounted copy,
//! that later take removes the copy of an item inserted after the clear.
//!
//! Defence checked: such operations are in their stripe's in-flight count, and
//! the sweep keeps the fingerprints of a busy stripe.
//!
//! - `relocation_*`: an insert whose cuckoo path moves `K` (bucket 0 -> 3)
//!   races `clear(); insert(K2)`, `K2` having `K`'s fingerprint and first
//!   bucket: after the clear, `K2` lands in the slot `K` had, where the
//!   mover's clear (or fallback) looks.
//! - `relocation_refill_*`: the same, but after the clear the four items of
//!   bucket 0 are inserted again in their old order, so that the mover's
//!   source word returns to exactly the value it read before the clear (the
//!   ABA that defeats a clear generation checked between copy and CAS).
//! - `if_absent_*`: `insert_if_absent(x)` races `clear(); insert(x);
//!   insert(x)`: after the clear, bucket 0 holds two counted copies of `x`,
//!   and the racer's duplicate take must not consume one of them if the sweep
//!   took its own.
//! - `unstash_*`: a move out of the stash (`drain_stash`, `x`'s entry into
//!   bucket 0) races `clear(); insert(x)`: the move's copy is uncounted until
//!   its take of the entry, and if the sweep took it and the entry, the
//!   move's fallback would take the copy inserted after the clear.
//! - `if_absent_paused_*`: the same, with the `insert_if_absent` paused by a
//!   test hook between its put and its decision until the other thread is
//!   done, so that the schedule above, which loom's search of `if_absent_*`
//!   never reaches, is certain (its put still falls anywhere against the
//!   clear).
//!
//! All with both role assignments ([`common::Roles`]): the racing work is the
//! insert, the checked work the clear and what follows it.
//!
//! Mutations seen to fail (LOOM_MAX_PREEMPTIONS=2):
//! - a sweep that keeps nothing (`busy_lanes` returning 0): `relocation*` and
//!   `relocation_refill*`, both roles, "item inserted after the clear is
//!   missing" (the mover's fallback took `K2`'s copy after the sweep took its
//!   extra one); `if_absent_paused*`, both roles, "item inserted after the
//!   clear lost a copy". `unstash*` pass: the sweep takes the move's copy
//!   in the bucket but keeps its counted entry (`sweep_stash` still asks),
//!   which the move then takes, so the table loses nothing. `if_absent` and
//!   `if_absent_roles_swapped` do not fail under this mutation: loom never
//!   schedules the racer's put before the sweep *and* its duplicate look
//!   after both inserts (not at bound 3, nor at 100; in a run with the
//!   mutation the sweep took the racer's copy in 8 of 241 executions, each
//!   time with the racer's decision before the inserts), which is why the
//!   paused models exist; they remain for the free interleavings of the
//!   decision with the clear and the inserts. The unit test
//!   `a_clear_between_put_and_decision_keeps_the_uncounted_copy` in
//!   `src/table/insert.rs` plays the same schedule without loom, and
//!   `a_clear_keeps_a_busy_stripes_stashed_uncounted_copy` beside it the
//!   same with the racer's copy in the stash (it fails when `sweep_stash`
//!   keeps nothing: one copy left of two).
//! - a move out of the stash outside its stripe's in-flight count (no
//!   `enter` in `Table::unstash`): `unstash*`, both roles, "item inserted
//!   after the clear is missing".
//! - the sweep's load of a word Relaxed instead of Acquire (so that seeing a
//!   mover's copy no longer makes its in-flight entry visible): `relocation`
//!   fails, "item inserted after the clear is missing".
//! - a clear generation in place of the in-flight count
//!   (`clear` bumps it before the sweep; a mover reads it before its copy and
//!   abandons, counting its copy in, if it changed by its clear or fallback):
//!   `relocation`, `relocation_refill` and `relocation_refill_roles_swapped`
//!   fail, "item inserted after the clear is missing": a mover that reads the
//!   generation after the bump, during the sweep, sees no change later, has
//!   its extra copy swept, and its fallback takes `K2`'s copy.
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{check, filter, one_step, race, Filter, Roles};
use lockfree_cuckoo_filter::test_hooks::TableHooks;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;

/// Once every thread is joined: `len()` agrees with the table, and every
/// hash in `must` is present with at least as many copies as it appears.
fn assert_consistent(f: &Filter, must: &[u64]) {
    assert_eq!(
        f.len(),
        f.fingerprints().len(),
        "len() disagrees with the table"
    );
    for &h in must {
        let wanted = must.iter().filter(|&&g| g == h).count();
        assert!(
            f.contains_hash(h),
            "item inserted after the clear is missing"
        );
        assert!(
            f.copies(h) >= wanted,
            "item inserted after the clear lost a copy"
        );
    }
}

fn relocation_across_clear(roles: Roles, refill: bool) {
    check(move || {
        let f = filter(4);
        let s = one_step(&f, 0, 3);
        let x = s.x;
        // After the clear: the movers again, in order (refill), or only K2.
        let after: Vec<u64> = if refill {
            s.movers.iter().map(|&m| f.hash_for(0, m)).collect()
        } else {
            vec![f.hash_for(0, s.movers[0])]
        };
        let f = Arc::new(f);
        let (a, b) = (Arc::clone(&f), Arc::clone(&f));
        let (inserted, after) = race(
            roles,
            move || a.insert_hash(x),
            move || {
                b.clear();
                // A refill may find the table full, when the clear kept the
                // fingerprints of a busy stripe (under loom there is one
                // stripe); what went in must stay.
                let mut ok = Vec::new();
                for h in after {
                    if b.insert_hash(h).is_ok() {
                        assert!(b.contains_hash(h), "K2 inserted after the clear is missing");
                        ok.push(h);
                    } else {
                        assert!(refill, "K2 must fit after the clear");
                    }
                }
                ok
            },
        );
        inserted.expect("room one step away, or after the clear");
        assert_consistent(&f, &after);
    });
}

#[test]
fn relocation() {
    relocation_across_clear(Roles::RacerSpawned, false);
}

#[test]
fn relocation_roles_swapped() {
    relocation_across_clear(Roles::RacerOnMain, false);
}

#[test]
fn relocation_refill() {
    relocation_across_clear(Roles::RacerSpawned, true);
}

#[test]
fn relocation_refill_roles_swapped() {
    relocation_across_clear(Roles::RacerOnMain, true);
}

/// `insert_if_absent(x)` racing `clear(); insert(x); insert(x)` (see the
/// module documentation), paused as `pause` says.
fn if_absent_across_clear(roles: Roles, pause: Pause) {
    check(move || {
        let f = filter(2);
        let x = f.hash_for(0, 0x5a);
        let f = Arc::new(f);
        let done = Arc::new(AtomicBool::new(false));
        let (a, b) = (Arc::clone(&f), Arc::clone(&f));
        let (a_done, b_done) = (Arc::clone(&done), Arc::clone(&done));
        let (added, ()) = race(
            roles,
            move || {
                // Unpaused, the hook's pause is empty: `insert_hash_if_absent`.
                a.insert_hash_if_absent_pausing(x, || {
                    while pause == Pause::UntilDone && !a_done.load(Ordering::Acquire) {
                        loom::thread::yield_now();
                    }
                })
            },
            move || {
                b.clear();
                b.insert_hash(x).expect("room");
                b.insert_hash(x).expect("room");
                if pause == Pause::UntilDone {
                    b_done.store(true, Ordering::Release);
                }
            },
        );
        let added = added.expect("room");
        assert_consistent(&f, &[x, x]);
        assert!(f.copies(x) <= 2 + usize::from(added));
    });
}

/// Whether the `insert_if_absent` of `if_absent_*` waits between its put and
/// its decision.
#[derive(Clone, Copy, PartialEq)]
enum Pause {
    /// No: loom interleaves its decision freely with the clear and inserts.
    Never,
    /// The schedule `if_absent` and `if_absent_roles_swapped` never reach,
    /// made certain: paused between its put and its decision (a test hook)
    /// until the other thread has cleared and inserted `x` twice. Loom still
    /// explores where its put falls against the clear (before the sweep reads
    /// the word, between that read and the sweep's CAS, or after the sweep),
    /// and every interleaving of the rest.
    UntilDone,
}

#[test]
fn if_absent() {
    if_absent_across_clear(Roles::RacerSpawned, Pause::Never);
}

#[test]
fn if_absent_roles_swapped() {
    if_absent_across_clear(Roles::RacerOnMain, Pause::Never);
}

#[test]
fn if_absent_paused() {
    if_absent_across_clear(Roles::RacerSpawned, Pause::UntilDone);
}

#[test]
fn if_absent_paused_roles_swapped() {
    if_absent_across_clear(Roles::RacerOnMain, Pause::UntilDone);
}

/// A move out of the stash holds an uncounted copy from its put into the
/// bucket until its take of the entry, as a mover does: `unstash` is in its
/// stripe's in-flight count for that time, and the sweep keeps the copy.
///
/// Set-up: 4 buckets, `x` (pair `{0, 3}`, first bucket 0) in the stash. The
/// racing work moves the stash into the table (`x`'s copy into bucket 0,
/// publish, take of the entry); the checked work is `clear(); insert(x)`,
/// whose copy lands in bucket 0 too. If the sweep took the move's copy and
/// its entry, the move finds its entry gone and takes one copy of the pair
/// instead, as a mover's fallback does: the copy inserted after the clear.
fn unstash_across_clear(roles: Roles) {
    check(move || {
        let f = filter(4);
        let x = f.hash_for(0, common::fp(&f, 0, 3, &[]));
        f.stash_hash(x);
        let f = Arc::new(f);
        let (a, b) = (Arc::clone(&f), Arc::clone(&f));
        race(
            roles,
            move || a.drain_stash(),
            move || {
                b.clear();
                b.insert_hash(x).expect("room after the clear");
                assert!(
                    b.contains_hash(x),
                    "item inserted after the clear is missing"
                );
            },
        );
        assert_consistent(&f, &[x]);
    });
}

#[test]
fn unstash() {
    unstash_across_clear(Roles::RacerSpawned);
}

#[test]
fn unstash_roles_swapped() {
    unstash_across_clear(Roles::RacerOnMain);
}
