//! A concurrent, lock-free cuckoo filter.
//!
//! A cuckoo filter is an approximate set: [`insert`](CuckooFilter::insert),
//! [`contains`](CuckooFilter::contains) and [`remove`](CuckooFilter::remove),
//! storing a short fingerprint of each item in a cuckoo hash table (Fan,
//! Andersen, Kaminsky and Mitzenmacher, CoNEXT 2014). It answers "maybe present"
//! for every item inserted, and for others with a small false-positive rate;
//! at rates of about 0.01 % and below it needs less memory than a Bloom filter
//! (at 0.2 % and above, more), and unlike a Bloom filter it can delete.
//!
//! [`CuckooFilter`] is built to be shared: every method takes `&self`, the
//! filter is `Send + Sync`, and no operation takes a lock or waits for another
//! thread. Buckets are packed into `AtomicU64` words and changed only by
//! compare-and-swap.
//!
//! ```
//! use std::sync::Arc;
//! use lockfree_cuckoo_filter::CuckooFilter;
//!
//! let filter = Arc::new(CuckooFilter::with_capacity(1_000_000));
//! filter.insert("apple")?;
//! assert!(filter.contains("apple"));
//! assert!(!filter.contains("pear"));
//! assert!(filter.remove("apple"));
//! # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
//! ```
//!
//! # Guarantees
//!
//! 1. **No false negatives.** An item whose `insert` returned `Ok` and that was
//!    not removed is reported present by every `contains` that starts after the
//!    insert returned, whatever other threads are doing.
//! 2. **A failed insert changes nothing.** [`InsertError::Full`] leaves the
//!    table as it was: no item is evicted, and there is no victim slot.
//! 3. **Lock-free.** No mutex, no spin-wait on another thread.
//! 4. **Exact accounting.** With no operation in flight, [`len`](CuckooFilter::len)
//!    is the number of fingerprints in the table: successful inserts minus
//!    successful removes, as long as only inserted items are removed (a remove
//!    of an item never inserted can take a copy in flight, see `len`).
//! 5. **False-positive rate as promised**: at most about
//!    `1 - (1 - 2^-f)^(8·α)` for `f`-bit fingerprints at load factor `α`
//!    ([`FingerprintBits::false_positive_rate`]).
//!
//! Measured here (the doc test runs with `cargo test`):
//!
//! ```
//! use lockfree_cuckoo_filter::{CuckooFilter, DEFAULT_SEED};
//!
//! let n = 1_000_000u64;
//! // A fixed seed, so that the measured rate below is the same every run.
//! let filter = CuckooFilter::builder()
//!     .capacity(n as usize)
//!     .seed(DEFAULT_SEED)
//!     .build()?;
//! for i in 0..n {
//!     filter.insert(&i)?;
//! }
//! let bits_per_item = 8.0 * filter.memory_usage() as f64 / n as f64;
//! let false_positives = (n..n + 1_000_000).filter(|i| filter.contains(i)).count();
//! let rate = false_positives as f64 / 1e6;
//! // 16-bit fingerprints at 94 % load: 17 bits per item, about 0.012 %.
//! assert!(bits_per_item < 17.5, "{bits_per_item}");
//! assert!(rate < 1.3 * filter.false_positive_rate(), "{rate}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! How the protocol keeps each guarantee (table layout, the insert path,
//! validated lookups and removes, memory orderings) is in [`implementation`].
//! It is model-checked with loom on tables of two to six buckets
//! (`loom-tests/`), and stress-tested with many threads (`stress/`).
//!
//! # Limits
//!
//! * Removing an item that was never inserted may remove another item that
//!   shares its fingerprint and buckets (with the false-positive probability);
//!   that item then reads as absent. Remove only what you inserted.
//! * One item can be inserted at most 8 times (two buckets of four slots); the
//!   ninth copy fails with [`InsertError::Full`].
//! * Tables have at most 2^32 buckets (about 16·10^9 items).
//! * Pre-hashed forms (`insert_hash` and friends) need well-mixed 64-bit hashes.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod builder;
#[cfg(feature = "rayon")]
mod bulk;
mod error;
mod filter;
mod fingerprint;
mod format;
mod growable;
mod hasher;
mod merge;
// The semi-sorted bucket codec (issue #10): the 17-bit layout uses its
// one-bucket-per-word codec, the 9-bit layout its two-buckets-per-word `half`.
mod semisorted;
mod sync;
mod table;
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub mod test_hooks;
#[cfg(test)]
mod test_rng;

#[doc = include_str!("../IMPLEMENTATION.md")]
pub mod implementation {}

pub use builder::Builder;
#[cfg(feature = "rayon")]
pub use bulk::BulkOptions;
#[cfg(feature = "rayon")]
pub use error::BulkInsertError;
pub use error::{AllocError, BuildError, DecodeError, InsertError, MergeError};
pub use filter::CuckooFilter;
pub use fingerprint::FingerprintBits;
pub use format::HasherIdentity;
pub use growable::{GrowableBuilder, GrowableCuckooFilter};
pub use hasher::{DefaultHashBuilder, StableHasher, DEFAULT_SEED};

/// The README's Rust examples, compiled and run as doc tests, so that the
/// quick start compiles as pasted.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
