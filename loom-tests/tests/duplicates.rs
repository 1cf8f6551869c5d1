//! Model 4: duplicates. One item is inserted twice and removed once, from
//! three threads, while one of its copies is being relocated.
//!
//! Defences checked: copies of one fingerprint in one pair are
//! interchangeable and counted exactly (the invariant in `table.rs`): `put`
//! and `take` change one slot each by compare-and-swap, and a mover whose
//! source copy was taken by the remove (between its copy and its clear) drops
//! one copy of the pair instead (fallback in `relocate`). The pair must end
//! with exactly `2 + 1 - 1` copies.
//!
//! Set-up (4 buckets): bucket 0 holds `[h, h, s1, s2]`, all pairing 0 with 3;
//! bucket 1 is full. Thread A inserts an item `x` whose buckets are 0 and 1,
//! so its cuckoo path moves the copy of `h` in slot 0 to bucket 3. Thread B
//! inserts `h` again (bucket 0 is full: it lands in 3, or in the slot A's path
//! freed). The main thread removes `h`, scanning bucket 3 first.
//!
//! Mutations it catches: no fallback in `relocate` (3 copies left), `put` or
//! `take` by load + store instead of CAS (1 copy left).
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{assert_holds_exactly, check, filter, fp, fps, prefill, race, Roles};
use lockfree_cuckoo_filter::test_hooks::TableHooks;
use loom::sync::Arc;

fn insert_insert_remove(roles: Roles) {
    check(move || {
        let f = filter(4);
        let zero = fps(&f, 0, 3, 3, &[]);
        let (h_fp, s) = (zero[0], &zero[1..]);
        let h = prefill(&f, 0, h_fp);
        prefill(&f, 0, h_fp);
        let mut live = vec![h, h];
        live.extend(s.iter().map(|&p| prefill(&f, 0, p)));
        live.extend(fps(&f, 1, 2, 4, &[]).into_iter().map(|p| prefill(&f, 1, p)));
        let x = f.hash_for(0, fp(&f, 0, 1, &[]));
        let h_from_3 = f.hash_for(3, h_fp);

        let f = Arc::new(f);
        // The racing work: the relocating insert, and a second insert of `h`
        // on a thread of its own.
        let g = Arc::clone(&f);
        let racer = move || {
            let again = common::spawn_insert(&g, h);
            let moved = g.insert_hash(x);
            (moved, again.join().unwrap())
        };
        let r = Arc::clone(&f);
        let ((moved, again), removed) = race(roles, racer, move || r.remove_hash(h_from_3));
        moved.expect("room one step away");
        again.expect("room in bucket 3");

        assert!(removed, "remove missed an item with two live copies");
        assert_eq!(f.copies(h), 2, "copies of h: 2 inserted + 1 - 1 removed");
        live.extend([x, h]);
        live.remove(0);
        assert_holds_exactly(&f, &live);
    });
}

#[test]
fn insert_insert_remove_of_one_item() {
    insert_insert_remove(Roles::RacerSpawned);
}

#[test]
fn insert_insert_remove_of_one_item_roles_swapped() {
    insert_insert_remove(Roles::RacerOnMain);
}
