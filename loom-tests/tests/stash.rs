//! Model 10: the stash. An item an insert could not place while a snapshot
//! ran waits in the table's stash until a snapshot, ending, moves it into
//! the table (`src/table/stash.rs`). Lookups and removes search the stash
//! as one more place of the pair, while it holds anything.
//!
//! Defences checked: a move out of the stash is copy, publish on the pair's
//! stripe, take (as every relocation); the stash's count is lowered after
//! the take (Release) and loaded by a search after its bucket loads and
//! before its validation (Acquire). So a lookup or remove that read the
//! table before the copy and the stash after the take (or its count as zero)
//! sees the counter moved and searches again. A line chained on demand is
//! published by an AcqRel CAS of its link and the link loaded Acquire.
//!
//! - `contains_vs_unstash_*`, `contains_batch_vs_unstash_*`,
//!   `remove_vs_unstash_*`: 4 buckets; `x` (pair `{0, 3}`) in the stash,
//!   bucket 0 empty. One thread moves the stash into the table while the
//!   other looks `x` up (one lookup, and a batch of one) or removes it: the
//!   lookup must answer true, the remove must find it, and the table ends
//!   exact (model 6).
//! - `lookup_vs_twin_stashed_*`, `lookup_batch_vs_twin_stashed_*`: a
//!   colliding twin put into the stash and removed, its remove taking the
//!   item's copy from bucket 0 (the second case of the count's order in
//!   `src/table/stash.rs`).
//! - `lookups_vs_chained_put_*`: a stash put that chains a line, racing
//!   lookups that walk the chain.
//!
//! Mutations they catch (loom, preemption bound 2): a move out of the stash
//! that does not publish (`relocation::publish` left out of
//! `Table::unstash`) fails both lookups with the racer on the main thread
//! ("false negative"; with it spawned, loom finds no failing schedule) and
//! both `remove_vs_unstash` models ("a live item was not removed"). The
//! stash's count loaded before the bucket loads (in `Table::contains` and in
//! the batch's `answer`): all four twin-stashed models ("false negative";
//! the `contains_vs_unstash` ones pass). The chain's link published by a
//! Relaxed CAS, or loaded Relaxed: both `lookups_vs_chained_put` models
//! (loom's "Causality violation: Concurrent load and mut accesses": the
//! lookup reads the new line's entries without their initialisation
//! happening before).
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{assert_holds_exactly, check, filter, fp, prefill, race, Roles};
use lockfree_cuckoo_filter::test_hooks::TableHooks;
use loom::sync::Arc;

/// The filter of the set-up, and `x`'s hash.
fn stashed() -> (common::Filter, u64) {
    let f = filter(4);
    let x = f.hash_for(3, fp(&f, 3, 0, &[]));
    f.stash_hash(x);
    (f, x)
}

fn contains_vs_unstash(roles: Roles, batch: bool) {
    check(move || {
        let (f, x) = stashed();
        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let ((), found) = race(
            roles,
            move || g.drain_stash(),
            move || {
                if batch {
                    let mut out = [false];
                    h.contains_hash_batch(&[x], &mut out);
                    out[0]
                } else {
                    h.contains_hash(x)
                }
            },
        );
        assert!(
            found,
            "false negative: the item was in the stash or the table"
        );
        assert_holds_exactly(&f, &[x]);
    });
}

#[test]
fn contains_vs_unstash_racer_spawned() {
    contains_vs_unstash(Roles::RacerSpawned, false);
}

#[test]
fn contains_vs_unstash_roles_swapped() {
    contains_vs_unstash(Roles::RacerOnMain, false);
}

#[test]
fn contains_batch_vs_unstash_racer_spawned() {
    contains_vs_unstash(Roles::RacerSpawned, true);
}

#[test]
fn contains_batch_vs_unstash_roles_swapped() {
    contains_vs_unstash(Roles::RacerOnMain, true);
}

fn remove_vs_unstash(roles: Roles) {
    check(move || {
        let (f, x) = stashed();
        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let ((), removed) = race(roles, move || g.drain_stash(), move || h.remove_hash(x));
        assert!(removed, "a live item was not removed");
        assert_holds_exactly(&f, &[]);
    });
}

#[test]
fn remove_vs_unstash_racer_spawned() {
    remove_vs_unstash(Roles::RacerSpawned);
}

#[test]
fn remove_vs_unstash_roles_swapped() {
    remove_vs_unstash(Roles::RacerOnMain);
}

/// A colliding twin put into the stash and then removed, its remove taking
/// the item's copy from a bucket (buckets before the stash): the twin's
/// entry now stands for the item. A search sees it because it loads the
/// stash's count after its bucket loads: a bucket load that saw the take
/// sees what came before it, the put's raise of the count included.
///
/// Set-up: 4 buckets; `K` (first bucket 0, pair `{0, 3}`) in bucket 0. The
/// racing work puts `K′` (`K`'s fingerprint, first bucket 3) into the stash
/// and removes it: the remove takes from bucket 0 first, `K`'s copy. The
/// checked work looks `K` up (one lookup, or a batch of one): true.
fn lookup_vs_twin_stashed(roles: Roles, batch: bool) {
    check(move || {
        let f = filter(4);
        let shared = fp(&f, 0, 3, &[]);
        let k = prefill(&f, 0, shared);
        let k_twin = f.hash_for(3, shared);
        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let (removed, found) = race(
            roles,
            move || {
                g.stash_hash(k_twin);
                g.remove_hash(k_twin)
            },
            move || {
                if batch {
                    let mut out = [false];
                    h.contains_hash_batch(&[k], &mut out);
                    out[0]
                } else {
                    h.contains_hash(k)
                }
            },
        );
        assert!(removed, "K′ was just put in");
        assert!(found, "false negative: K was live throughout");
        assert_holds_exactly(&f, &[k]);
    });
}

#[test]
fn lookup_vs_twin_stashed_racer_spawned() {
    lookup_vs_twin_stashed(Roles::RacerSpawned, false);
}

#[test]
fn lookup_vs_twin_stashed_roles_swapped() {
    lookup_vs_twin_stashed(Roles::RacerOnMain, false);
}

#[test]
fn lookup_batch_vs_twin_stashed_racer_spawned() {
    lookup_vs_twin_stashed(Roles::RacerSpawned, true);
}

#[test]
fn lookup_batch_vs_twin_stashed_roles_swapped() {
    lookup_vs_twin_stashed(Roles::RacerOnMain, true);
}

/// A stash line that fills chains another after it (one entry a line under
/// loom): the new line is published by an AcqRel CAS of the link and read
/// through an Acquire load, so a search that follows the link sees the
/// line's initialised entries.
///
/// Set-up: 4 buckets; `x` (pair `{0, 3}`) in the stash, whose one line
/// (under loom) it fills. The racing work puts `y` (pair `{1, 2}`) into the
/// stash, which chains a second line for it, and looks `y` up. The checked
/// work looks up `x`, there throughout (true), and `y`, which walks the
/// chain whether or not the second line is there yet.
fn lookups_vs_chained_put(roles: Roles) {
    check(move || {
        let f = filter(4);
        let x = f.hash_for(0, fp(&f, 0, 3, &[]));
        let y = f.hash_for(1, fp(&f, 1, 2, &[]));
        f.stash_hash(x);
        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let ((), found) = race(
            roles,
            move || {
                g.stash_hash(y);
                assert!(g.contains_hash(y), "y missed after its put");
            },
            move || {
                let found = h.contains_hash(x);
                let _ = h.contains_hash(y);
                found
            },
        );
        assert!(found, "false negative: x was in the stash throughout");
        assert_holds_exactly(&f, &[x, y]);
    });
}

#[test]
fn lookups_vs_chained_put_racer_spawned() {
    lookups_vs_chained_put(Roles::RacerSpawned);
}

#[test]
fn lookups_vs_chained_put_roles_swapped() {
    lookups_vs_chained_put(Roles::RacerOnMain);
}
