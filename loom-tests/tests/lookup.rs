//! Model 1: `contains` racing a relocation of the very fingerprint it looks
//! for, in both directions.
//!
//! Defence checked: copy-then-clear relocation plus the relocation counter. A
//! mover copies the fingerprint into the destination, bumps the pair's counter,
//! then clears the source; a lookup that found nothing re-reads the counter
//! (`Snapshot::unchanged`) and retries if it moved. The dangerous direction is
//! a move from the lookup's second bucket into its first: the lookup reads the
//! first bucket before the copy lands and the second after the clear, and only
//! the counter tells it that it missed a move. The other direction is safe by
//! ordering alone (a lookup whose Acquire load sees the clear in its first
//! bucket also sees the copy in its second) and is modelled so that a change
//! that breaks it (clearing before copying) is caught too.
//!
//! Set-up ([`common::one_step`], 4 buckets): another thread inserts an item
//! whose two buckets are full, so its cuckoo path moves the fingerprint in slot
//! 0 of `from` to `to`. The main thread meanwhile looks that fingerprint up,
//! aimed first at either bucket. `contains` must never answer `false`, and the
//! table ends exact (model 6).
//!
//! Mutations it catches (loom, preemption bound 2; each a failed assertion in
//! some execution): lookups without validation (`Snapshot::unchanged` always
//! true) and bumping the counter after the clear instead of before (the two
//! "into first bucket" cases); clearing before copying, and Relaxed bucket
//! loads and CASes (all four cases). Rechecked on the whole
//! suite: a move by value that takes from its source before it publishes
//! the bump makes 16 of the 22 models fail, every one that moves into the
//! lookup's first bucket (two-word buckets, semi-sorted and batched included);
//! the six into the second bucket pass, safe by ordering alone. Checked
//! A mover's bump Relaxed instead of Release (`publish`), or the
//! lookup's first counter load Relaxed instead of Acquire (`Snapshot::take`),
//! fails `contains_vs_move_into_first_bucket` ("false negative"). (The
//! counter load after the search is Relaxed: see `Snapshot::drift`.)
//!
//! The `count_` models race `count` with the same move, of one of two copies
//! of the fingerprint: the count must see both. A count that believes a look
//! that found something, as a lookup does, fails the four "into first
//! bucket" models ("count 1 of two copies").
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{assert_holds_exactly, check, filter_of, one_step, race, Filter, Roles};
use lockfree_cuckoo_filter::test_hooks::TableHooks;
use lockfree_cuckoo_filter::FingerprintBits;
use loom::sync::Arc;

fn contains_during_relocation(
    bits: FingerprintBits,
    from: u64,
    to: u64,
    lookup_first: u64,
    roles: Roles,
) {
    lookup_during_relocation(bits, from, to, lookup_first, roles, |f, h| {
        f.contains_hash(h)
    });
}

/// [`contains_during_relocation`] for the batched lookup: the moving item
/// first in a batch of two (the other an absent item sharing its first
/// bucket), so that its answer comes from `contains_hash_batch`'s group
/// validation, and from its second search when the group is not validated.
fn contains_batch_during_relocation(from: u64, to: u64, lookup_first: u64, roles: Roles) {
    lookup_during_relocation(
        FingerprintBits::Bits16,
        from,
        to,
        lookup_first,
        roles,
        |f, h| {
            let mut out = [false; 2];
            f.contains_hash_batch(&[h, h ^ (1 << 40)], &mut out);
            out[0]
        },
    );
}

fn lookup_during_relocation(
    bits: FingerprintBits,
    from: u64,
    to: u64,
    lookup_first: u64,
    roles: Roles,
    lookup: fn(&Filter, u64) -> bool,
) {
    check(move || {
        let f = filter_of(bits, 4);
        let mut s = one_step(&f, from, to);
        // The moving item, seen from the lookup's first bucket.
        let target = f.hash_for(lookup_first, s.movers[0]);
        let x = s.x;

        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let (inserted, found) = race(roles, move || g.insert_hash(x), move || lookup(&h, target));
        assert!(
            found,
            "false negative: contains missed a fingerprint being relocated"
        );
        inserted.expect("room one step away");

        // The model exercised what it claims: the path moved `movers[0]`.
        assert!(f.fingerprints().contains(&(to, s.movers[0])));
        s.live.push(x);
        assert_holds_exactly(&f, &s.live);
    });
}

/// Move 0 -> 3, lookup reads 3 first: the fingerprint moves from the lookup's
/// second bucket into its first (only the counter catches it).
#[test]
fn contains_vs_move_into_first_bucket() {
    contains_during_relocation(FingerprintBits::Bits16, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn contains_vs_move_into_first_bucket_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits16, 0, 3, 3, Roles::RacerOnMain);
}

/// Move 0 -> 3, lookup reads 0 first: from its first bucket into its second.
#[test]
fn contains_vs_move_into_second_bucket() {
    contains_during_relocation(FingerprintBits::Bits16, 0, 3, 0, Roles::RacerSpawned);
}

#[test]
fn contains_vs_move_into_second_bucket_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits16, 0, 3, 0, Roles::RacerOnMain);
}

/// Move 3 -> 0, lookup reads 0 first (only the counter catches it).
#[test]
fn contains_vs_reverse_move_into_first_bucket() {
    contains_during_relocation(FingerprintBits::Bits16, 3, 0, 0, Roles::RacerSpawned);
}

#[test]
fn contains_vs_reverse_move_into_first_bucket_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits16, 3, 0, 0, Roles::RacerOnMain);
}

/// Move 3 -> 0, lookup reads 3 first.
#[test]
fn contains_vs_reverse_move_into_second_bucket() {
    contains_during_relocation(FingerprintBits::Bits16, 3, 0, 3, Roles::RacerSpawned);
}

#[test]
fn contains_vs_reverse_move_into_second_bucket_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits16, 3, 0, 3, Roles::RacerOnMain);
}

/// 21-bit fingerprints, three to a word: a bucket of six is two words
/// (bucket 0 words 0 and 1, bucket 3 words 6 and 7). Move 0 -> 3, contains reads
/// 3 first: the copy lands in the first word of bucket 3 with a free slot,
/// the take clears it from whichever word of bucket 0 held it, and the
/// contains must see it in either.
#[test]
fn contains_vs_move_into_first_bucket_two_words() {
    contains_during_relocation(FingerprintBits::Bits21, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn contains_vs_move_into_first_bucket_two_words_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits21, 0, 3, 3, Roles::RacerOnMain);
}

/// 21-bit fingerprints: move 3 -> 0 between buckets of two words, contains
/// reads 0 first.
#[test]
fn contains_vs_reverse_move_into_first_bucket_two_words() {
    contains_during_relocation(FingerprintBits::Bits21, 3, 0, 0, Roles::RacerSpawned);
}

#[test]
fn contains_vs_reverse_move_into_first_bucket_two_words_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits21, 3, 0, 0, Roles::RacerOnMain);
}

/// Semi-sorted 17-bit buckets: every change re-encodes the whole word, so a
/// fingerprint has no stable slot and moves are by value. Move 0 -> 3, contains
/// reads 3 first.
#[test]
fn contains_vs_move_into_first_bucket_semi_sorted() {
    contains_during_relocation(FingerprintBits::Bits17, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn contains_vs_move_into_first_bucket_semi_sorted_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits17, 0, 3, 3, Roles::RacerOnMain);
}

/// Semi-sorted 9-bit buckets, two to a word (bucket `b` is half `b % 2` of
/// word `b / 2`): every change re-encodes the bucket's half and CASes the
/// whole word. Move 0 -> 3 (across words), contains reads 3 first.
#[test]
fn contains_vs_move_into_first_bucket_semi_sorted_half_words() {
    contains_during_relocation(FingerprintBits::Bits9, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn contains_vs_move_into_first_bucket_semi_sorted_half_words_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits9, 0, 3, 3, Roles::RacerOnMain);
}

/// Semi-sorted 9-bit buckets: move 0 -> 1, the two halves of one word (the
/// move's put and take CAS the same word), contains reads 1 first.
#[test]
fn contains_vs_move_within_one_word_semi_sorted() {
    contains_during_relocation(FingerprintBits::Bits9, 0, 1, 1, Roles::RacerSpawned);
}

#[test]
fn contains_vs_move_within_one_word_semi_sorted_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits9, 0, 1, 1, Roles::RacerOnMain);
}

/// 8-bit buckets, two to a word (bucket `b` is half `b % 2` of word `b / 2`),
/// which a lookup compares by the pair's halves (`matches_in_halves`). Move
/// 0 -> 3 (across words), contains reads 3 first.
#[test]
fn contains_vs_move_into_first_bucket_half_words() {
    contains_during_relocation(FingerprintBits::Bits8, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn contains_vs_move_into_first_bucket_half_words_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits8, 0, 3, 3, Roles::RacerOnMain);
}

/// 8-bit buckets: move 0 -> 1, the two halves of one word (the move's put
/// and take CAS the same word), contains reads 1 first.
#[test]
fn contains_vs_move_within_one_word() {
    contains_during_relocation(FingerprintBits::Bits8, 0, 1, 1, Roles::RacerSpawned);
}

#[test]
fn contains_vs_move_within_one_word_roles_swapped() {
    contains_during_relocation(FingerprintBits::Bits8, 0, 1, 1, Roles::RacerOnMain);
}

/// Ranked buckets of seven (one rank of the sorted prefixes a word, every
/// change re-encoding it): move 0 -> 3, out of one ranked bucket and into
/// another, contains reads 3 first (only the counter catches it).
#[test]
fn contains_vs_move_into_first_bucket_ranked() {
    contains_during_relocation(FingerprintBits::Ranked7, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn contains_vs_move_into_first_bucket_ranked_roles_swapped() {
    contains_during_relocation(FingerprintBits::Ranked7, 0, 3, 3, Roles::RacerOnMain);
}

/// Ranked buckets of eight, six, five and three, the same move.
#[test]
fn contains_vs_move_into_first_bucket_ranked_other_sizes() {
    for bits in OTHER_RANKED {
        contains_during_relocation(bits, 0, 3, 3, Roles::RacerSpawned);
    }
}

#[test]
fn contains_vs_move_into_first_bucket_ranked_other_sizes_roles_swapped() {
    for bits in OTHER_RANKED {
        contains_during_relocation(bits, 0, 3, 3, Roles::RacerOnMain);
    }
}

/// The ranked layouts besides the seven-slot one the models above take.
const OTHER_RANKED: [FingerprintBits; 4] = [
    FingerprintBits::Ranked8,
    FingerprintBits::Ranked6,
    FingerprintBits::Ranked5,
    FingerprintBits::Ranked3,
];

/// The batched lookup, on the dangerous direction (only the counter catches
/// it) and the one ordering alone makes safe.
#[test]
fn contains_batch_vs_move_into_first_bucket() {
    contains_batch_during_relocation(0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn contains_batch_vs_move_into_first_bucket_roles_swapped() {
    contains_batch_during_relocation(0, 3, 3, Roles::RacerOnMain);
}

#[test]
fn contains_batch_vs_move_into_second_bucket() {
    contains_batch_during_relocation(0, 3, 0, Roles::RacerSpawned);
}

#[test]
fn contains_batch_vs_move_into_second_bucket_roles_swapped() {
    contains_batch_during_relocation(0, 3, 0, Roles::RacerOnMain);
}

/// `count` racing a relocation of one of two copies of a fingerprint: bucket
/// `from` holds two copies of `movers[0]` (one of them in place of
/// `movers[1]`), the insert's path moves one of them to `to`, and the count,
/// aimed first at `count_first`, must see both. A lookup stops at the copy
/// that stays; a count that did the same, believing a look that found
/// something without validating it, would miss the moving copy on the
/// dangerous direction (the copy lands in the bucket loaded first after that
/// load, and leaves the one loaded second before that load) and answer 1.
/// It may answer 3: between its copy and its take the mover's fingerprint is
/// in both buckets.
fn count_during_relocation(
    bits: FingerprintBits,
    from: u64,
    to: u64,
    count_first: u64,
    roles: Roles,
) {
    check(move || {
        let f = filter_of(bits, 4);
        let mut s = one_step(&f, from, to);
        // The second copy of `movers[0]` takes `movers[1]`'s slot.
        assert!(f.remove_hash(s.live[1]));
        let twin = s.live[0];
        assert!(f.put_hash(twin));
        s.live[1] = twin;
        let target = f.hash_for(count_first, s.movers[0]);
        let x = s.x;

        let f = Arc::new(f);
        let (g, h) = (Arc::clone(&f), Arc::clone(&f));
        let (inserted, counted) = race(
            roles,
            move || g.insert_hash(x),
            move || h.count_hash(target),
        );
        assert!(
            (2..=3).contains(&counted),
            "count {counted} of two copies, one of them being relocated"
        );
        inserted.expect("room one step away");

        // The model exercised what it claims: the path moved a copy of
        // `movers[0]`, and the other stayed.
        let fps = f.fingerprints();
        assert!(fps.contains(&(to, s.movers[0])) && fps.contains(&(from, s.movers[0])));
        assert_eq!(f.count_hash(target), 2);
        s.live.push(x);
        assert_holds_exactly(&f, &s.live);
    });
}

/// Move 0 -> 3, count reads 3 first: the dangerous direction.
#[test]
fn count_vs_move_into_first_bucket() {
    count_during_relocation(FingerprintBits::Bits16, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn count_vs_move_into_first_bucket_roles_swapped() {
    count_during_relocation(FingerprintBits::Bits16, 0, 3, 3, Roles::RacerOnMain);
}

/// Move 0 -> 3, count reads 0 first.
#[test]
fn count_vs_move_into_second_bucket() {
    count_during_relocation(FingerprintBits::Bits16, 0, 3, 0, Roles::RacerSpawned);
}

#[test]
fn count_vs_move_into_second_bucket_roles_swapped() {
    count_during_relocation(FingerprintBits::Bits16, 0, 3, 0, Roles::RacerOnMain);
}

/// Ranked buckets of six, the dangerous direction: copies counted through
/// the rank's decoded prefixes.
#[test]
fn count_vs_move_into_first_bucket_ranked() {
    count_during_relocation(FingerprintBits::Ranked6, 0, 3, 3, Roles::RacerSpawned);
}

#[test]
fn count_vs_move_into_first_bucket_ranked_roles_swapped() {
    count_during_relocation(FingerprintBits::Ranked6, 0, 3, 3, Roles::RacerOnMain);
}
