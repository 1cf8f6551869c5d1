//! Model 2: `remove` racing a relocation of the very fingerprint it removes.
//!
//! Defences checked:
//! - the validated search of `remove_copy` (relocation counter, as for a
//!   lookup): a remove that scans the bucket the copy is about to land in, then
//!   the bucket it just left, must not report a live item absent;
//! - the mover's fallback in `relocate`: a mover that finds its source copy
//!   gone (the remove took it, after the copy was made) removes one copy of the
//!   pair instead, so the pair ends with exactly as many copies as live items.
//!
//! Set-up ([`common::one_step`], 4 buckets): another thread inserts an item
//! whose cuckoo path moves `movers[0]` between `from` and `to`; the main thread
//! removes that item, aimed first at either bucket. The remove must succeed
//! (the item was live throughout), the pair must end with no copy of it
//! (`copies`), a later `contains` must agree, and the table ends exact
//! (model 6).
//!
//! Mutations it catches: removes without validation and the counter bumped
//! after the clear ("remove missed a live item", the cases that scan the
//! destination first); no fallback in `relocate`, and `take` by load + store
//! instead of CAS ("copies ... left in its pair", all cases); clearing before
//! copying and Relaxed bucket accesses (remove missed a live item); the
//! remove's announcement Release only, not AcqRel, so that its search need not
//! see the copy of a move announced before (14 of the 16 models, "remove
//! missed a live item being relocated").
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{assert_holds_exactly, check, filter_of, key, one_step, race, Roles};
use lockfree_cuckoo_filter::test_hooks::TableHooks;
use lockfree_cuckoo_filter::FingerprintBits;
use loom::sync::Arc;

fn remove_during_relocation(
    bits: FingerprintBits,
    from: u64,
    to: u64,
    remove_first: u64,
    roles: Roles,
) {
    check(move || {
        let f = filter_of(bits, 4);
        let mut s = one_step(&f, from, to);
        let target = f.hash_for(remove_first, s.movers[0]);
        let x = s.x;

        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let (inserted, removed) = race(
            roles,
            move || g.insert_hash(x),
            move || h.remove_hash(target),
        );
        inserted.expect("room one step away");

        assert!(removed, "remove missed a live item being relocated");
        assert_eq!(
            f.copies(target),
            0,
            "copies of the removed item left in its pair"
        );
        assert!(
            !f.contains_hash(target),
            "contains disagrees with the table"
        );
        let gone = s.live.iter().position(|&h| key(&f, h) == key(&f, target));
        s.live
            .remove(gone.expect("the target was put in by the set-up"));
        s.live.push(x);
        assert_holds_exactly(&f, &s.live);
    });
}

/// Move 0 -> 3, remove scans 3 first (the copy's destination): the search
/// needs the counter, and a take from 0 between copy and clear needs the
/// fallback.
#[test]
fn remove_vs_move_into_first_bucket() {
    remove_during_relocation(FingerprintBits::Bits16, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn remove_vs_move_into_first_bucket_roles_swapped() {
    remove_during_relocation(FingerprintBits::Bits16, 0, 3, 3, Roles::RacerOnMain);
}

/// Move 0 -> 3, remove scans 0 first: it takes the source copy whenever it
/// runs between the mover's copy and clear (fallback).
#[test]
fn remove_vs_move_into_second_bucket() {
    remove_during_relocation(FingerprintBits::Bits16, 0, 3, 0, Roles::RacerSpawned);
}

#[test]
fn remove_vs_move_into_second_bucket_roles_swapped() {
    remove_during_relocation(FingerprintBits::Bits16, 0, 3, 0, Roles::RacerOnMain);
}

/// Move 3 -> 0, remove scans 0 first (the destination).
#[test]
fn remove_vs_reverse_move_into_first_bucket() {
    remove_during_relocation(FingerprintBits::Bits16, 3, 0, 0, Roles::RacerSpawned);
}

#[test]
fn remove_vs_reverse_move_into_first_bucket_roles_swapped() {
    remove_during_relocation(FingerprintBits::Bits16, 3, 0, 0, Roles::RacerOnMain);
}

/// 21-bit fingerprints, three to a word: a bucket of six is two words
/// (bucket 0 words 0 and 1, bucket 3 words 6 and 7). Move 0 -> 3, remove reads
/// 3 first: the copy lands in the first word of bucket 3 with a free slot,
/// the take clears it from whichever word of bucket 0 held it, and the
/// remove must see it in either.
#[test]
fn remove_vs_move_into_first_bucket_two_words() {
    remove_during_relocation(FingerprintBits::Bits21, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn remove_vs_move_into_first_bucket_two_words_roles_swapped() {
    remove_during_relocation(FingerprintBits::Bits21, 0, 3, 3, Roles::RacerOnMain);
}

/// 21-bit fingerprints: move 3 -> 0 between buckets of two words, remove
/// reads 0 first.
#[test]
fn remove_vs_reverse_move_into_first_bucket_two_words() {
    remove_during_relocation(FingerprintBits::Bits21, 3, 0, 0, Roles::RacerSpawned);
}

#[test]
fn remove_vs_reverse_move_into_first_bucket_two_words_roles_swapped() {
    remove_during_relocation(FingerprintBits::Bits21, 3, 0, 0, Roles::RacerOnMain);
}

/// Semi-sorted 17-bit buckets: every change re-encodes the whole word, so a
/// fingerprint has no stable slot and moves are by value. Move 0 -> 3, remove
/// reads 3 first.
#[test]
fn remove_vs_move_into_first_bucket_semi_sorted() {
    remove_during_relocation(FingerprintBits::Bits17, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn remove_vs_move_into_first_bucket_semi_sorted_roles_swapped() {
    remove_during_relocation(FingerprintBits::Bits17, 0, 3, 3, Roles::RacerOnMain);
}

/// Semi-sorted 9-bit buckets, two to a word (bucket `b` is half `b % 2` of
/// word `b / 2`): every change re-encodes the bucket's half and CASes the
/// whole word. Move 0 -> 3 (across words), remove reads 3 first.
#[test]
fn remove_vs_move_into_first_bucket_semi_sorted_half_words() {
    remove_during_relocation(FingerprintBits::Bits9, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn remove_vs_move_into_first_bucket_semi_sorted_half_words_roles_swapped() {
    remove_during_relocation(FingerprintBits::Bits9, 0, 3, 3, Roles::RacerOnMain);
}

/// Semi-sorted 9-bit buckets: move 0 -> 1, the two halves of one word (the
/// move's put and take CAS the same word), remove reads 1 first.
#[test]
fn remove_vs_move_within_one_word_semi_sorted() {
    remove_during_relocation(FingerprintBits::Bits9, 0, 1, 1, Roles::RacerSpawned);
}

#[test]
fn remove_vs_move_within_one_word_semi_sorted_roles_swapped() {
    remove_during_relocation(FingerprintBits::Bits9, 0, 1, 1, Roles::RacerOnMain);
}

/// Ranked buckets of seven: move 0 -> 3 (out of one ranked bucket, into
/// another), remove scans 3 first.
#[test]
fn remove_vs_move_into_first_bucket_ranked() {
    remove_during_relocation(FingerprintBits::Ranked7, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn remove_vs_move_into_first_bucket_ranked_roles_swapped() {
    remove_during_relocation(FingerprintBits::Ranked7, 0, 3, 3, Roles::RacerOnMain);
}
