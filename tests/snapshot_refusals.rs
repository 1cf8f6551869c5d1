//! A snapshot changes nothing writers see: inserts refused (`Full`,
//! `TooManyCopies`) and tables added by a growable filter, counted while two
//! writers hold a filter at a fixed load and a third thread takes snapshots
//! back to back, are no more than the same churn gives with no snapshot.
//!
//! Items are counted, not timed: each writer makes a fixed number of steps
//! (remove one of its own keys, insert a fresh one), and the snapshot
//! thread runs until they are done.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use common::mix;
use lockfree_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter, InsertError, DEFAULT_SEED};

/// The filters' capacity: a small table, so that snapshots follow each other
/// quickly and each runs through many writer steps.
const CAPACITY: usize = 60_000;

/// Steps each writer makes at each load.
const STEPS: u64 = 150_000;

/// The loads (of the capacity) the writers hold.
const LOADS: [f64; 5] = [0.5, 0.7, 0.8, 0.9, 0.95];

/// What a churn of one filter came to.
#[derive(Debug, Default, PartialEq)]
struct Refusals {
    full: u64,
    too_many_copies: u64,
    snapshots: u64,
}

/// The filter operations the churn needs, for both filter types.
trait Churned: Sync {
    fn insert(&self, key: u64) -> Result<(), InsertError>;
    fn remove(&self, key: u64) -> bool;
    fn snapshot(&self) -> Vec<u8>;
}

/// Both filter types have the same three methods.
macro_rules! churned {
    ($($filter:ty),*) => {$(
        impl Churned for $filter {
            fn insert(&self, key: u64) -> Result<(), InsertError> {
                self.insert_hash(key)
            }
            fn remove(&self, key: u64) -> bool {
                self.remove_hash(key)
            }
            fn snapshot(&self) -> Vec<u8> {
                self.to_bytes()
            }
        }
    )*};
}

churned!(CuckooFilter, GrowableCuckooFilter);

/// Fills `f` to `load` of [`CAPACITY`] with two writers' keys, then lets
/// each make [`STEPS`] steps, with a thread taking snapshots throughout if
/// `snapshots`.
fn churn(f: &impl Churned, load: f64, snapshots: bool) -> Refusals {
    let per_writer = (load * CAPACITY as f64) as u64 / 2;
    let full = AtomicU64::new(0);
    let too_many = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let mut taken = 0;
    thread::scope(|s| {
        let writers: Vec<_> = (0..2u64)
            .map(|w| {
                let (full, too_many) = (&full, &too_many);
                s.spawn(move || {
                    let key = |i: u64| mix((w << 40) | i);
                    let count = |r: Result<(), InsertError>| match r {
                        Ok(()) => true,
                        Err(InsertError::Full) => {
                            full.fetch_add(1, Ordering::Relaxed);
                            false
                        }
                        Err(_) => {
                            too_many.fetch_add(1, Ordering::Relaxed);
                            false
                        }
                    };
                    // The keys held, oldest first: a ring of `per_writer`.
                    let mut held: Vec<u64> = Vec::with_capacity(per_writer as usize);
                    let mut next = 0u64;
                    while (held.len() as u64) < per_writer {
                        if count(f.insert(key(next))) {
                            held.push(next);
                        }
                        next += 1;
                    }
                    for step in 0..STEPS {
                        let at = (step % per_writer) as usize;
                        assert!(f.remove(key(held[at])), "a held key was not found");
                        loop {
                            next += 1;
                            if count(f.insert(key(next))) {
                                held[at] = next;
                                break;
                            }
                        }
                    }
                })
            })
            .collect();
        if snapshots {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    assert!(!f.snapshot().is_empty());
                    taken += 1;
                }
            });
        }
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });
    Refusals {
        full: full.into_inner(),
        too_many_copies: too_many.into_inner(),
        snapshots: taken,
    }
}

#[test]
fn snapshots_refuse_no_insert() {
    for load in LOADS {
        let build = || {
            CuckooFilter::builder()
                .capacity(CAPACITY)
                .seed(DEFAULT_SEED)
                .build()
                .unwrap()
        };
        let without = churn(&build(), load, false);
        let with = churn(&build(), load, true);
        println!("load {load}: without {without:?}, with {with:?}");
        assert!(with.snapshots > 0);
        assert!(
            with.full <= without.full,
            "load {load}: {} refused during snapshots, {} without",
            with.full,
            without.full
        );
    }
}

#[test]
fn snapshots_grow_no_growable_filter() {
    for load in LOADS {
        let build = || {
            GrowableCuckooFilter::builder()
                .initial_capacity(CAPACITY)
                .seed(DEFAULT_SEED)
                .build()
                .unwrap()
        };
        let (f, g) = (build(), build());
        let without = churn(&f, load, false);
        let with = churn(&g, load, true);
        println!(
            "load {load}: without {without:?} in {} tables, with {with:?} in {}",
            f.table_count(),
            g.table_count()
        );
        assert!(with.snapshots > 0);
        assert!(
            with.too_many_copies <= without.too_many_copies,
            "load {load}"
        );
        assert!(with.full <= without.full, "load {load}");
        assert!(g.table_count() <= f.table_count(), "load {load}: grew");
    }
}
