//! Model 10: an owned shard of the item count passing from one thread to the
//! next. The first threads of a process to count each hold an owned shard
//! index and write that shard by a Relaxed load and store, no `lock`ed
//! instruction; a thread hands its index back as it exits, and the next
//! thread to take it continues the shard's count.
//!
//! Defence checked: the hand-back is a Release `fetch_or` on the bitmap of
//! free indices and the take an Acquire compare-and-swap on it
//! (`ShardSlots`), so the next holder's load of the shard happens after the
//! previous holder's store, and no count is lost across the hand-over.
//!
//! The model: one index; thread A counts twice and thread B once, each count
//! taking the index, adding one to the owned shard and handing the index
//! back, or, finding it held, adding one to a shared shard by `fetch_add`
//! (as the crate's count does). After the join the two shards sum to 3.
//! Both role assignments ([`common::Roles`]). The thread-local part (taking
//! at the first count, handing back in the thread-local's destructor) is
//! plain code around this, and the crate's unit test
//! `threads_that_come_and_go_lose_no_count` runs it.
//!
//! Mutations it catches: the take's CAS Relaxed; the hand-back Relaxed (in
//! either case B's load of the shard can miss A's store, and the sum is 2).
#![cfg(lockfree_cuckoo_filter_loom)]

mod common;

use common::{check, race, Roles};
use lockfree_cuckoo_filter::test_hooks::ShardSlots;
use loom::sync::atomic::{AtomicIsize, Ordering};
use loom::sync::Arc;

/// A count of one owned shard (index 0) and one shared shard.
struct Count {
    slots: ShardSlots,
    owned: AtomicIsize,
    shared: AtomicIsize,
}

impl Count {
    /// Counts one item in, as `ItemCount::change` does for a thread that
    /// takes the index for this count and hands it back after.
    fn one(&self) {
        match self.slots.take() {
            Some(k) => {
                assert_eq!(k, 0, "one index only");
                let v = self.owned.load(Ordering::Relaxed);
                self.owned.store(v + 1, Ordering::Relaxed);
                self.slots.give_back(k);
            }
            None => {
                self.shared.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

fn hand_over(roles: Roles) {
    check(move || {
        let c = Arc::new(Count {
            slots: ShardSlots::new(1),
            owned: AtomicIsize::new(0),
            shared: AtomicIsize::new(0),
        });
        let (a, b) = (Arc::clone(&c), Arc::clone(&c));
        race(
            roles,
            move || {
                a.one();
                a.one();
            },
            move || b.one(),
        );
        let total = c.owned.load(Ordering::Relaxed) + c.shared.load(Ordering::Relaxed);
        assert_eq!(total, 3, "a count was lost in a hand-over of the shard");
    });
}

#[test]
fn a_shard_handed_back_is_seen_by_its_next_owner() {
    hand_over(Roles::RacerSpawned);
}

#[test]
fn a_shard_handed_back_is_seen_by_its_next_owner_roles_swapped() {
    hand_over(Roles::RacerOnMain);
}
