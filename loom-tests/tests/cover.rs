//! loom models of covering: a growable filter puts its oldest tables behind
//! one summary of what they hold, read from the tables while other threads
//! insert into them, and lookups then look in those tables only when the
//! summary says the item may be there.
//!
//! Each model builds a chain of three tables (6, 24 and 96 buckets) by the
//! test hooks, without covering, then races the covering of the oldest table
//! against an insert into it (as an insert through a chain loaded before a
//! growth, or one past a crowded bucket pair, reaches an older table),
//! against a put into its stash (an insert that reached it while a snapshot
//! read it, into the stash's line or into a line it chains), against lookups
//! of its items, or against the insert and remove of a colliding twin whose
//! remove takes another item's copy. Six models, twelve tests with both role
//! assignments. What is checked, in every interleaving: the inserting thread
//! finds its item once its insert returned, lookups find the table's items
//! throughout, the twin's thread finds the other item once its remove
//! returned, and afterwards every item of the covered table is found, with
//! the table behind the summary, and `len()` is exact.
//!
//! Mutations they catch (preemption bound 2; all twelve tests pass at 3):
//! an insert that does not record its item in a pending summary (the four
//! insert models fail); the covering reading the words by plain loads
//! instead of read-modify-writes (the same four); a stash put by a Release
//! CAS, without the Acquire half that shows it the pending summary (all four
//! stash models); the covering following the links between the stash's
//! lines by loads (both chained-put models); a reading believed without
//! checking the relocation counters (both `move_during_covering` and both
//! `remove_during_covering` models); the covering published before its
//! reading (all six then in the file, `lookups_during_covering` among
//! them). Not caught: a remove whose announcement does not bump the counter
//! (`Snapshot::announce` a plain load): the covering reads the buckets in
//! order, and a twin's remove, taking from the pair's lower bucket first,
//! moves a copy only forward (see `remove_during_covering`), so all pass;
//! the lookup models of `collision.rs` catch it.
//!
//! ```text
//! RUSTFLAGS="--cfg lockfree_cuckoo_filter_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
//!     cargo test -p loom-tests --release --test cover
//! ```
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{check, race, Roles};
use lockfree_cuckoo_filter::test_hooks::GrowableHooks;
use lockfree_cuckoo_filter::GrowableCuckooFilter;
use loom::sync::Arc;

/// A chain of three tables (6, 24 and 96 buckets, 16-bit fingerprints),
/// grown without covering; the first holds `first` (inserted into it).
fn three_tables(first: &[u64]) -> Arc<GrowableCuckooFilter> {
    let f = GrowableCuckooFilter::builder()
        .initial_capacity(4)
        .seed(1)
        .build()
        .unwrap();
    assert_eq!(
        f.slots(),
        24,
        "the models assume a first table of six buckets"
    );
    for &h in first {
        assert!(f.insert_hash_into(0, h));
    }
    f.grow_now();
    f.grow_now();
    assert_eq!((f.table_count(), f.covered_tables()), (3, 0));
    Arc::new(f)
}

/// Hashes of items whose first bucket in the first table is `bucket` and
/// whose second is `second`: `n` of them, with distinct fingerprints.
fn aimed(f: &GrowableCuckooFilter, bucket: u64, second: u64, n: usize) -> Vec<u64> {
    (1..=u16::MAX as u32)
        .map(|fp| f.hash_into(0, bucket, fp))
        .filter(|&h| f.position_in(0, h).1 == second)
        .take(n)
        .collect()
}

/// Races the covering of the first table of `f` against an insert of the
/// item of `hash` into that table; the inserting thread finds its item once
/// its insert returned.
fn cover_while_inserting(f: &Arc<GrowableCuckooFilter>, roles: Roles, hash: u64) {
    let cover = {
        let f = f.clone();
        move || f.cover_now()
    };
    let insert = {
        let f = f.clone();
        move || {
            assert!(f.insert_hash_into(0, hash));
            assert!(f.contains_hash(hash), "own insert missed");
        }
    };
    race(roles, cover, insert);
}

/// An insert into the first table while it is being covered: the item is
/// found by its own thread once the insert returned, and by everyone after,
/// whether the covering's reading saw it or the insert recorded it.
fn insert_during_covering(roles: Roles) {
    check(move || {
        let f = three_tables(&[]);
        let x = aimed(&f, 1, 0, 1)[0];
        cover_while_inserting(&f, roles, x);
        assert_eq!(f.covered_tables(), 1);
        assert!(f.contains_hash(x), "item of a covered table missed");
        assert_eq!(f.len(), 1);
    });
}

#[test]
fn insert_during_covering_racer_spawned() {
    insert_during_covering(Roles::RacerSpawned);
}

#[test]
fn insert_during_covering_roles_swapped() {
    insert_during_covering(Roles::RacerOnMain);
}

/// Lookups of the first table's items while it is covered: found before,
/// during and after, through the summary once the covering is published.
fn lookups_during_covering(roles: Roles) {
    check(move || {
        let probe = three_tables(&[]);
        let first = aimed(&probe, 2, 3, 2);
        drop(probe);
        let f = three_tables(&first);
        let cover = {
            let f = f.clone();
            move || f.cover_now()
        };
        let lookups = {
            let (f, first) = (f.clone(), first.clone());
            move || {
                for &h in &first {
                    assert!(f.contains_hash(h), "item missed during covering");
                }
            }
        };
        race(roles, cover, lookups);
        assert_eq!(f.covered_tables(), 1);
        assert!(first.iter().all(|&h| f.contains_hash(h)));
        assert_eq!(f.len(), 2);
    });
}

#[test]
fn lookups_during_covering_racer_spawned() {
    lookups_during_covering(Roles::RacerSpawned);
}

#[test]
fn lookups_during_covering_roles_swapped() {
    lookups_during_covering(Roles::RacerOnMain);
}

/// An insert into the first table that has to move a fingerprint, while the
/// table is covered: its pair (buckets 4 and 5) is full, and every
/// fingerprint there can move only to a bucket the covering reads before
/// 4 and 5, so a reading that did not check the relocation counters could
/// miss the one that moves. Every item stays findable.
fn move_during_covering(roles: Roles) {
    check(move || {
        let probe = three_tables(&[]);
        let mut first = aimed(&probe, 4, 1, 4);
        first.extend(aimed(&probe, 5, 0, 4));
        let q = aimed(&probe, 4, 5, 1)[0];
        drop(probe);
        let f = three_tables(&first);
        cover_while_inserting(&f, roles, q);
        assert!(f.contains_hash(q), "inserted item missed");
        assert!(
            first.iter().all(|&h| f.contains_hash(h)),
            "item of a covered table missed"
        );
        assert_eq!(f.len(), 9);
    });
}

#[test]
fn move_during_covering_racer_spawned() {
    move_during_covering(Roles::RacerSpawned);
}

#[test]
fn move_during_covering_roles_swapped() {
    move_during_covering(Roles::RacerOnMain);
}

/// An insert and remove of a colliding twin in the first table while it is
/// covered: the remove takes another item's copy, a move that no mover
/// announced.
///
/// K (first bucket 3, second 0) sits in bucket 0: bucket 3 had one free
/// slot and bucket 0 two when K went in, and the insert chose the emptier.
/// Bucket 0 is then filled; bucket 3 keeps its free slot. The twin Y has
/// K's fingerprint and pair, but its first bucket is 0: its insert finds 0
/// full and puts into 3, and its remove takes from 0, the pair's lower
/// bucket, first: K's copy, leaving K in Y's copy in 3.
///
/// The copy moves from bucket 0 to bucket 3, forward in the reading's order,
/// so a reading that read bucket 0 after the take reads bucket 3 after the
/// put and sees K's fingerprint there: the reading needs no announcement for
/// this (removes take from the lower bucket first so that a twin's take
/// never moves a copy backward, see `Table::remove_copy`), and the model
/// passes with the announcement taken out. What it checks is the rest: the
/// covering, the twin's recording of its own item, and the summary keep K
/// found when its copy was taken by a twin's remove.
///
/// Y's first bucket is not K's: an insert records its own item's key, the
/// prefix of its first bucket and the fingerprint, and a twin that shares
/// K's first bucket (and prefix) would record K's key. Bucket 0 is prefix 0
/// of the low half, bucket 3 prefix 2.
fn remove_during_covering(roles: Roles) {
    check(move || {
        let probe = three_tables(&[]);
        // K, a filler of bucket 3 pairing it with 0, and a filler of bucket
        // 0 pairing it with 3: three fingerprints of the pair {0, 3}.
        let pair = aimed(&probe, 3, 0, 3);
        let (k, three_last) = (pair[0], pair[1]);
        let (_, _, fp) = probe.position_in(0, k);
        let y = probe.hash_into(0, 0, fp);
        assert_eq!(probe.position_in(0, y), (0, 3, fp), "Y is no twin of K");
        assert_ne!(k as u32 >> 30, y as u32 >> 30, "Y records K's key");
        let zero_last = probe.hash_into(0, 0, probe.position_in(0, pair[2]).2);
        assert_eq!(probe.position_in(0, zero_last).1, 3);
        let zero = aimed(&probe, 0, 1, 2);
        let three = aimed(&probe, 3, 2, 2);
        drop(probe);
        // In this order: bucket 0 gets two (four free, then three), bucket 3
        // two, then a third (a tie with bucket 0: the first bucket), K goes
        // to 0 (two free against 3's one), and the last filler to 0 (a tie).
        let mut first = zero.clone();
        first.extend(&three);
        first.extend([three_last, k, zero_last]);
        let f = three_tables(&first);
        let cover = {
            let f = f.clone();
            move || f.cover_now()
        };
        let twin = {
            let f = f.clone();
            move || {
                assert!(f.insert_hash_into(0, y));
                assert!(f.remove_hash(y), "twin's remove missed");
                assert!(f.contains_hash(k), "item missed after a twin's remove");
            }
        };
        race(roles, cover, twin);
        assert_eq!(f.covered_tables(), 1);
        assert!(
            f.contains_hash(k),
            "item whose copy a twin's remove took missed"
        );
        assert!(
            first.iter().all(|&h| f.contains_hash(h)),
            "item of a covered table missed"
        );
        assert_eq!(f.len(), 7);
    });
}

#[test]
fn remove_during_covering_racer_spawned() {
    remove_during_covering(Roles::RacerSpawned);
}

#[test]
fn remove_during_covering_roles_swapped() {
    remove_during_covering(Roles::RacerOnMain);
}

/// A stash put into the first table while it is covered (an insert that
/// reached the table while a snapshot read it, and found no path): the
/// inserting thread finds its item once the put returned, and everyone
/// after. With `chained`, the stash's line (one entry under loom) already
/// holds another item, so the put chains a new line after it, which the
/// covering may or may not have reached.
fn stash_put_during_covering(roles: Roles, chained: bool) {
    check(move || {
        let f = three_tables(&[]);
        let items = aimed(&f, 1, 0, 2);
        let (x, earlier) = (items[0], items[1]);
        if chained {
            f.stash_hash_into(0, earlier);
        }
        let cover = {
            let f = f.clone();
            move || f.cover_now()
        };
        let put = {
            let f = f.clone();
            move || {
                f.stash_hash_into(0, x);
                assert!(f.contains_hash(x), "own stash put missed");
            }
        };
        race(roles, cover, put);
        assert_eq!(f.covered_tables(), 1);
        assert!(f.contains_hash(x), "stashed item of a covered table missed");
        assert!(
            !chained || f.contains_hash(earlier),
            "earlier stash entry missed"
        );
        assert_eq!(f.len(), 1 + usize::from(chained));
    });
}

#[test]
fn stash_put_during_covering_racer_spawned() {
    stash_put_during_covering(Roles::RacerSpawned, false);
}

#[test]
fn stash_put_during_covering_roles_swapped() {
    stash_put_during_covering(Roles::RacerOnMain, false);
}

#[test]
fn chained_stash_put_during_covering_racer_spawned() {
    stash_put_during_covering(Roles::RacerSpawned, true);
}

#[test]
fn chained_stash_put_during_covering_roles_swapped() {
    stash_put_during_covering(Roles::RacerOnMain, true);
}
