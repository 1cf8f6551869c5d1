//! Model 9: a snapshot (`to_bytes`) of a live table keeps every item that
//! stays in it throughout.
//!
//! Defences checked (see `src/table/front.rs` and `src/table/snapshot.rs`):
//! - the snapshot's front: it reads the table a chunk at a time (here two
//!   buckets a chunk, so that a four-bucket table has a front between its
//!   buckets) and publishes the chunk it reads; a mover checks the fronts
//!   after its publish and undoes a move from a bucket at or ahead of a
//!   front to one at or behind it;
//! - removes take from the lower bucket of a pair first (the one the
//!   snapshot reads first), so that a remove of a colliding item put behind
//!   the front takes that item's copy, not the copy ahead of it;
//! - the stash (`src/table/stash.rs`): an insert whose searches left out
//!   moves across a front and found no path puts its item there, and the
//!   snapshot reads it as the chunk after the last, so no insert is refused
//!   because a snapshot runs; a move out of the stash checks the fronts as a
//!   relocation does.
//!
//! Every model snapshots on one thread while the other changes the table;
//! once both are joined, the bytes are decoded and every item that was in the
//! table for the whole snapshot must be found in the decoded filter, its
//! `len()` must be the fingerprints it holds and no fewer than those items,
//! and the live table must hold exactly its live items (model 6: an undone
//! move, or a remove from the lower bucket, leaves the accounting exact).
//!
//! What no model checks: that a snapshot holds no copy twice. A relocation
//! that is under way (copied, not yet cleared or taken back) at the instant
//! the front reaches one of its buckets leaves the item in both, and the
//! snapshot may read both; no check of a front before or after the move's
//! steps closes that window without the snapshot waiting for the mover (see
//! `src/table/snapshot.rs`). So the models check no loss, and count copies
//! only as far as that allows.
//!
//! Mutations they catch (loom, preemption bound 2; the models pass at 3): a
//! mover that completes every move (`move_may_complete` always true), one
//! that also completes moves into the chunk being read (`dst >= c` in
//! `front::may_complete`), a mover's publish Release only (not AcqRel), and
//! a plain word-by-word copy (no front registered) each fail both
//! `relocation_into_a_bucket_read` models ("lost"); a remove that takes from
//! its own first bucket first fails both `twin_insert_and_remove` models
//! ("lost"); an insert that reports `Full` instead of using the stash fails
//! all four `relocation_*` models ("refused"); a move out of the stash that
//! does not check the fronts fails both `snapshot_during_unstash` models
//! ("lost"); a snapshot that reads the stash before the words fails both
//! `twin_stashed_and_removed` models ("lost"). The fronts' Acquire load is not shown by any model: loom does
//! not explore the load buffering that Relaxed would allow there.
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{
    assert_holds_exactly, check, filter, fp, fps, one_step, prefill, race, Filter, Roles,
};
use lockfree_cuckoo_filter::test_hooks::TableHooks;
use lockfree_cuckoo_filter::CuckooFilter;
use loom::sync::Arc;

/// Decodes `bytes` and checks it against the items that were in the table
/// for the whole snapshot (`held`), and the most copies it may hold (`most`).
fn assert_snapshot_keeps(bytes: &[u8], held: &[u64], most: usize) {
    let g = CuckooFilter::from_bytes(bytes).expect("a snapshot decodes");
    for &h in held {
        assert!(
            g.contains_hash(h),
            "lost: an item in the table throughout is not in its snapshot"
        );
    }
    assert_eq!(g.len(), g.fingerprints().len(), "len is not what was saved");
    assert!(g.len() >= held.len(), "fewer copies than items held");
    assert!(
        g.len() <= most,
        "{} copies, at most {most} possible",
        g.len()
    );
}

/// A snapshot racing a one-step relocation `from -> to` (the insert of `x`
/// moves `movers[0]`): into a bucket the snapshot reads before the other
/// (`to < from`) or out of one (`to > from`).
fn snapshot_during_relocation(from: u64, to: u64, roles: Roles) {
    check(move || {
        let f = filter(4);
        let s = one_step(&f, from, to);
        let (x, held) = (s.x, s.live.clone());

        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let (inserted, bytes) = race(roles, move || g.insert_hash(x), move || h.to_bytes());
        // The held items, `x`, and a copy of each move under way as the
        // front passed: the search has two (one out of each of `x`'s full
        // buckets), and each may be made, undone and read in both buckets.
        assert_snapshot_keeps(&bytes, &held, held.len() + 3);

        // Near full, the front may rule out the only path: the item then
        // goes into the stash, never refused because a snapshot ran.
        inserted.expect("refused: an insert failed because a snapshot ran");
        let mut live = held;
        live.push(x);
        assert_holds_exactly(&f, &live);
    });
}

/// The move goes from bucket 3 into bucket 0, which the snapshot reads first:
/// read before the copy lands and after the clear, the item is in neither
/// reading, unless the move is undone.
#[test]
fn relocation_into_a_bucket_read() {
    snapshot_during_relocation(3, 0, Roles::RacerSpawned);
}

#[test]
fn relocation_into_a_bucket_read_roles_swapped() {
    snapshot_during_relocation(3, 0, Roles::RacerOnMain);
}

/// The move goes out of bucket 0 into bucket 3: read in 0 before the clear
/// and in 3 after the copy, the item is in both readings (a forward move
/// across the front completes). No loss either way; the model checks that,
/// and the accounting.
#[test]
fn relocation_out_of_a_bucket_read() {
    snapshot_during_relocation(0, 3, Roles::RacerSpawned);
}

#[test]
fn relocation_out_of_a_bucket_read_roles_swapped() {
    snapshot_during_relocation(0, 3, Roles::RacerOnMain);
}

/// Colliding items `k` and `twin`: one fingerprint, one bucket pair `{0, 3}`,
/// first buckets 0 and 3. `k`'s copy is in bucket 3 (bucket 0 was full when
/// it went in); bucket 3 is full and bucket 0 has room. Meanwhile the twin is
/// inserted (into 0, its first bucket being full) and removed again. A remove
/// that looks in its own first bucket first takes `k`'s copy from 3: a
/// snapshot that read 0 before the twin arrived and 3 after the take holds
/// neither. Taking from the lower bucket first takes the twin's own copy.
fn twin_insert_and_remove(roles: Roles) {
    check(move || {
        let f = filter(4);
        let shared = fps(&f, 0, 3, 1, &[])[0];
        let fillers_0 = fps(&f, 0, 1, 4, &[shared]);
        let fillers_3 = fps(&f, 3, 2, 3, &[shared]);
        let mut held: Vec<u64> = fillers_0.iter().map(|&fp| prefill(&f, 0, fp)).collect();
        let k = prefill(&f, 0, shared);
        assert_eq!(f.fingerprints().iter().filter(|e| e.1 == shared).count(), 1);
        held.extend(fillers_3.iter().map(|&fp| prefill(&f, 3, fp)));
        // Room in bucket 0 again.
        let freed = held.remove(0);
        assert!(f.remove_hash(freed));
        held.push(k);
        let twin = f.hash_for(3, shared);
        assert_ne!(twin, k);

        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let (removed, bytes) = race(
            roles,
            move || {
                g.insert_hash(twin).expect("room in bucket 0");
                g.remove_hash(twin)
            },
            move || h.to_bytes(),
        );
        assert!(removed);
        // At most the held items and the twin's copy.
        assert_snapshot_keeps(&bytes, &held, held.len() + 1);
        assert_holds_exactly(&f, &held);
    });
}

#[test]
fn twin_insert_and_remove_racer_spawned() {
    twin_insert_and_remove(Roles::RacerSpawned);
}

#[test]
fn twin_insert_and_remove_roles_swapped() {
    twin_insert_and_remove(Roles::RacerOnMain);
}

/// An item's owner removes it and inserts it again while a colliding item
/// stays: `k` (first bucket 3, full when it went in: its copy in 0) and
/// `other` (first bucket 0: its copy in 0 too), one fingerprint, one pair.
/// The owner's remove takes a copy from 0 and its insert puts one into 3
/// (its first bucket, with room again): the pair's copy moves forward with
/// no relocation announced. `other` was in the table throughout and must be
/// in the snapshot. (With two threads no schedule loses it, whichever bucket
/// the remove takes from: this model guards the accounting and the no-loss
/// rule against a change to either operation.)
fn owner_removes_and_reinserts(roles: Roles) {
    check(move || {
        let f = filter(4);
        let shared = fps(&f, 0, 3, 1, &[])[0];
        let fillers_3 = fps(&f, 3, 2, 4, &[shared]);
        let mut held: Vec<u64> = fillers_3.iter().map(|&fp| prefill(&f, 3, fp)).collect();
        // `k`'s first bucket is full: its copy goes to 0.
        let k = prefill(&f, 3, shared);
        let freed = held.remove(0);
        assert!(f.remove_hash(freed));
        let other = prefill(&f, 0, shared);
        assert_eq!(f.copies(k), 2);
        held.push(other);

        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let (again, bytes) = race(
            roles,
            move || {
                assert!(g.remove_hash(k));
                g.insert_hash(k)
            },
            move || h.to_bytes(),
        );
        again.expect("room: the remove made some");
        assert_snapshot_keeps(&bytes, &held, held.len() + 2);
        held.push(k);
        assert_holds_exactly(&f, &held);
    });
}

#[test]
fn owner_removes_and_reinserts_racer_spawned() {
    owner_removes_and_reinserts(Roles::RacerSpawned);
}

#[test]
fn owner_removes_and_reinserts_roles_swapped() {
    owner_removes_and_reinserts(Roles::RacerOnMain);
}

/// A `clear` while the snapshot runs: nothing stays throughout, so nothing
/// must be kept; the bytes must still decode, with a count that is the
/// fingerprints saved, at most the ones there were.
fn clear_during_snapshot(roles: Roles) {
    check(move || {
        let f: Filter = filter(4);
        let a = prefill(&f, 0, fps(&f, 0, 3, 1, &[])[0]);
        let b = prefill(&f, 2, fps(&f, 2, 1, 1, &[])[0]);

        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let ((), bytes) = race(roles, move || g.clear(), move || h.to_bytes());
        assert_snapshot_keeps(&bytes, &[], 2);
        let _ = (a, b);
        assert_holds_exactly(&f, &[]);
    });
}

#[test]
fn clear_during_snapshot_racer_spawned() {
    clear_during_snapshot(Roles::RacerSpawned);
}

#[test]
fn clear_during_snapshot_roles_swapped() {
    clear_during_snapshot(Roles::RacerOnMain);
}

/// An item in the stash (an insert put it there while a snapshot ran) is
/// moved into the table, into bucket 0, while a snapshot reads: to the front
/// the stash is the chunk past the last, so a move from it into bucket 0
/// after the snapshot read bucket 0 and before it read the stash would hide
/// the item, unless the move is undone. The item must be in the snapshot,
/// and the table must hold it once both are done (moved or not).
fn snapshot_during_unstash(roles: Roles) {
    check(move || {
        let f = filter(4);
        let x = f.hash_for(0, fp(&f, 0, 3, &[]));
        f.stash_hash(x);
        let held = vec![x];

        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let ((), bytes) = race(roles, move || g.drain_stash(), move || h.to_bytes());
        // The item, and a second copy of it if the move was under way as the
        // front passed.
        assert_snapshot_keeps(&bytes, &held, 2);
        assert_holds_exactly(&f, &held);
    });
}

#[test]
fn snapshot_during_unstash_racer_spawned() {
    snapshot_during_unstash(Roles::RacerSpawned);
}

#[test]
fn snapshot_during_unstash_roles_swapped() {
    snapshot_during_unstash(Roles::RacerOnMain);
}

/// Colliding items `k` and `twin` (one fingerprint, pair `{0, 3}`): `k`'s
/// copy is in bucket 0; the twin goes into the stash (as an insert that
/// found no path while a snapshot ran) and is removed again. The remove
/// looks in the buckets before the stash, so it takes `k`'s copy from
/// bucket 0 and leaves the twin's in the stash, which then stands for `k`:
/// the snapshot must hold a copy, whether it read bucket 0 before the take
/// or the stash after it. A snapshot that read the stash before the words
/// would hold neither.
fn twin_stashed_and_removed(roles: Roles) {
    check(move || {
        let f = filter(4);
        let shared = fps(&f, 0, 3, 1, &[])[0];
        let k = prefill(&f, 0, shared);
        let twin = f.hash_for(3, shared);
        assert_ne!(twin, k);

        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let (removed, bytes) = race(
            roles,
            move || {
                g.stash_hash(twin);
                g.remove_hash(twin)
            },
            move || h.to_bytes(),
        );
        assert!(removed);
        // `k`, and the twin's copy too if the snapshot read bucket 0 before
        // the take and the stash after the put.
        assert_snapshot_keeps(&bytes, &[k], 2);
        assert_holds_exactly(&f, &[k]);
    });
}

#[test]
fn twin_stashed_and_removed_racer_spawned() {
    twin_stashed_and_removed(Roles::RacerSpawned);
}

#[test]
fn twin_stashed_and_removed_roles_swapped() {
    twin_stashed_and_removed(Roles::RacerOnMain);
}
