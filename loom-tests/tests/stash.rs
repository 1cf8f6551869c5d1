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
//! sees the counter moved and searches again.
//!
//! Set-up: 4 buckets; `x` (pair `{0, 3}`) in the stash, bucket 0 empty. One
//! thread moves the stash into the table while the other looks `x` up (one
//! lookup, and a batch of one) or removes it: the lookup must answer true,
//! the remove must find it, and the table ends exact (model 6).
//!
//! Mutations they catch (loom, preemption bound 2): a move out of the stash
//! that does not publish (`relocation::publish` left out of
//! `Table::unstash`) fails both lookups with the racer on the main thread
//! ("false negative"; with it spawned, loom finds no failing schedule) and
//! both `remove_vs_unstash` models ("a live item was not removed").
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{assert_holds_exactly, check, filter, fp, race, Roles};
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
