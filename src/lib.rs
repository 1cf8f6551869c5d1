//! A concurrent, lock-free cuckoo filter.
//!
//! A cuckoo filter is an approximate set: [`insert`](CuckooFilter::insert),
//! [`contains`](CuckooFilter::contains) and [`remove`](CuckooFilter::remove),
//! storing a short fingerprint of each item in a cuckoo hash table (Fan,
//! Andersen, Kaminsky and Mitzenmacher, CoNEXT 2014). It answers "maybe present"
//! for every item it holds, and for others with a small false-positive rate
//! set by the [fingerprint width](#fingerprint-widths).
//!
//! [`CuckooFilter`] is built to be shared: every method takes `&self`, the
//! filter is `Send + Sync`, and no operation takes a lock or waits for another
//! thread. Buckets are packed into `AtomicU64` words and changed only by
//! compare-and-swap. [`GrowableCuckooFilter`] is the same without a fixed
//! capacity.
//!
//! **Pick it over a Bloom filter** when you need to remove items: a Bloom
//! filter cannot. On memory it wins at most rates from 1 % down. An ideal
//! Bloom filter needs `1.44 · log2(1/ε)` bits per item for a rate ε; a
//! cuckoo filter pays for the cheapest [layout](#fingerprint-widths) that
//! meets ε, in steps. Asked for a rate, the builder's filter of 10⁶ items
//! takes fewer bits than that at 10 of 16 rates from 3 % to 10⁻⁸ (1 %: 9.4
//! bits against 9.6; 0.1 %: 13.3 against 14.4; 10⁻⁴: 16.9 against 19.2), at
//! most 3 % more at the others from 1 % down, and 5.8 and 12.6 % more at
//! 2 % and 3 % (the `sweep` example of the benchmarks). A lookup reads two
//! buckets, not *k* scattered bits. A fixed-size filter refuses inserts
//! once full (at 93 to 99 % load, by layout): size it, or let it
//! [grow](#growth).
//!
//! ```
//! use std::sync::Arc;
//! use lockfree_cuckoo_filter::CuckooFilter;
//!
//! let filter = Arc::new(CuckooFilter::with_capacity(1_000_000));
//! filter.insert("apple")?;
//! assert!(filter.contains("apple"));
//! assert!(filter.remove("apple"));
//! assert!(!filter.contains("apple"));
//! # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
//! ```
//!
//! # Guarantees
//!
//! 1. **No false negatives, live or saved.** An item whose `insert` returned
//!    `Ok` and that was not removed is reported present by every `contains`
//!    that starts after the insert returned, whatever other threads are doing;
//!    and it is in every snapshot ([`to_bytes`](CuckooFilter::to_bytes),
//!    [`write_to`](CuckooFilter::write_to)) that begins after the insert
//!    returned and ends before a remove (or `clear`) of it begins: the filter
//!    decoded from the bytes reports it present.
//! 2. **A failed insert changes nothing.** [`InsertError::Full`] leaves the
//!    table as it was: no item is evicted, and there is no victim slot.
//! 3. **Lock-free.** No mutex, no spin-wait on another thread.
//! 4. **Exact accounting.** With no operation in flight, [`len`](CuckooFilter::len)
//!    is the number of fingerprints in the table: successful inserts minus
//!    successful removes, as long as only inserted items are removed (a remove
//!    of an item never inserted can take a copy in flight, see `len`).
//! 5. **False-positive rate as promised**: at most about
//!    `1 - (1 - 2^-f)^(2·s·α)` for `f`-bit fingerprints in buckets of `s`
//!    slots at load factor `α`
//!    ([`FingerprintBits::false_positive_rate`]).
//!
//! Writers never wait for a snapshot, and a snapshot refuses no insert: an
//! insert near full that finds no path because a snapshot is reading the
//! table keeps its item in a small stash beside the table, which the
//! snapshot saves and, once done, moves into the table. A snapshot of a live
//! filter is not an instant's image: an item inserted or removed meanwhile
//! may be in it or not, and an item whose relocation was under way at the
//! instant the snapshot passed its buckets may be in it twice (the restored
//! [`len`](CuckooFilter::len) then counts it twice). With no operation in
//! flight it is exact.
//!
//! How the protocol keeps each guarantee (table layout, the insert path,
//! validated lookups and removes, memory orderings) is in [`implementation`].
//! It is model-checked with loom on tables of two to six buckets
//! (`loom-tests/`), and stress-tested with many threads (`stress/`).
//!
//! # Sharing it in a server
//!
//! Put one filter in an [`Arc`](std::sync::Arc) (or lend `&CuckooFilter` to
//! scoped threads) and call it from every thread. To deduplicate, use
//! [`insert_if_absent`](CuckooFilter::insert_if_absent), not `contains` then
//! `insert`: two threads given the same key can both find it absent between
//! the two calls. `insert_if_absent` answers `Ok(true)` when it added the key,
//! and racing calls for one key rarely both do (its docs say when).
//! [`contains_batch`](CuckooFilter::contains_batch) answers many lookups at
//! once, faster on large tables. [`clear`](CuckooFilter::clear) empties the
//! filter while others keep using it; its docs say what they see, and show a
//! time window of two filters rotated by `clear`.
//!
//! **Seeds and untrusted input.** Each filter hashes with its own random seed
//! unless you give one ([`Builder::seed`]). Keep it random, and secret, when
//! the keys come from others: whoever knows the seed can aim nine keys at one
//! bucket pair, so that inserts fail long before the filter is full, or find
//! keys that `contains` falsely reports present (see [`DefaultHashBuilder`]).
//! The saved bytes hold the seed in the clear. Give a seed only to filters you
//! will merge or compare, or for reproducible tests ([`DEFAULT_SEED`]).
//!
//! ```
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use lockfree_cuckoo_filter::CuckooFilter;
//!
//! let seen = CuckooFilter::with_capacity(10_000); // random seed
//! let firsts = AtomicUsize::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         s.spawn(|| {
//!             for id in 0..1000u32 {
//!                 if seen.insert_if_absent(&id).unwrap() {
//!                     firsts.fetch_add(1, Ordering::Relaxed); // a new request
//!                 }
//!             }
//!         });
//!     }
//! });
//! assert!((0..1000u32).all(|id| seen.contains(&id)));
//! assert_eq!(seen.len(), firsts.load(Ordering::Relaxed)); // one copy per `Ok(true)`
//! seen.clear();
//! assert!(seen.is_empty());
//! ```
//!
//! # Bulk loading
//!
//! With the `rayon` feature (on by default),
//! [`par_insert_all`](CuckooFilter::par_insert_all) inserts many items on
//! rayon's threads; into a table larger than the caches it inserts them in
//! table order, sweeping the table front to back instead of missing the cache
//! once per item. If the filter fills up, what fit stays and
//! [`BulkInsertError`] gives back the rest. `&CuckooFilter` also implements
//! rayon's `ParallelExtend`, which panics instead when the filter is full. A
//! [`GrowableCuckooFilter`] has a `par_insert_all` too.
//!
//! ```
//! # #[cfg(feature = "rayon")] {
//! use lockfree_cuckoo_filter::CuckooFilter;
//!
//! let filter = CuckooFilter::with_capacity(10_000);
//! assert_eq!(filter.par_insert_all(0..10_000u64), Ok(10_000));
//!
//! let small = CuckooFilter::with_capacity(100);
//! let err = small.par_insert_all(0..1000u64).unwrap_err();
//! assert_eq!(err.inserted(), small.len());
//! let rest: Vec<u64> = err.into_failed(); // insert these elsewhere
//! assert_eq!(rest.len(), 1000 - small.len());
//! # }
//! ```
//!
//! # Growth
//!
//! A [`GrowableCuckooFilter`] never refuses an insert for lack of room: when
//! its newest table is full it adds one four times as large, with
//! fingerprints (8, 16 or 32 bits) long enough that the whole filter stays
//! under the false-positive rate it was built for. What it costs: a lookup
//! reads the two newest tables and a summary of the older ones, more than in
//! a filter sized up front; and a remove can, with a probability below that
//! rate, take another item's copy in a newer table and so hide that item
//! ([`remove`](GrowableCuckooFilter::remove)). Its inserts fail only when it
//! cannot grow (memory, 2^32 buckets) or for a ninth copy of one item
//! ([`InsertError`]). Start it near the expected size when that is known.
//!
//! ```
//! use lockfree_cuckoo_filter::GrowableCuckooFilter;
//!
//! let filter = GrowableCuckooFilter::builder()
//!     .initial_capacity(100)
//!     .false_positive_rate(1e-4)
//!     .build()?;
//! for i in 0..10_000u32 {
//!     filter.insert(&i)?;
//! }
//! assert!(filter.table_count() > 1);
//! assert!(filter.false_positive_rate() <= filter.max_false_positive_rate());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Fingerprint widths
//!
//! Longer fingerprints cost memory and buy fewer false positives. The default
//! is 16 bits; [`Builder::false_positive_rate`] picks the layout, and the
//! load to size it for, with the fewest bits per item whose bound, one
//! percent above that load, meets the rate; [`Builder::fingerprint_bits`] forces
//! one ([`FingerprintBits`] lists them). Bits per item are
//! [`memory_usage`](CuckooFilter::memory_usage) over the capacity, for a
//! filter of two million items sized for the highest load the builder
//! takes the layout to (side structures add a few KiB, which weigh on
//! small filters; without a rate, the builder sizes every layout for 94 %,
//! the ranked ones for 97 %, a few percent more bits); the bound is the
//! layout's rate one percent above that load, and the Bloom column is
//! `1.44 · log2(1/ε)` at that rate.
//!
//! | width | sized for | bits per item | false positives | Bloom, bits per item |
//! |---|--:|--:|--:|--:|
//! | 8 | 94 % | 8.6 | 2.9 % | 7.3 |
//! | 9, semi-sorted | 94 % | 8.6 | 1.5 % | 8.8 |
//! | 9.5, ranked 8 | 98 % | 8.2 | 2.2 % | 7.9 |
//! | 10.6, ranked 7 | 98 % | 9.4 | 0.90 % | 9.8 |
//! | 10 | 96.5 % | 11.2 | 1.1 % | 9.3 |
//! | 12, ranked 6 | 98 % | 10.9 | 0.29 % | 12.2 |
//! | 12 | 96.5 % | 13.4 | 0.24 % | 12.6 |
//! | 14, ranked 5 | 97 % | 13.2 | 0.060 % | 15.5 |
//! | 16 (default) | 95.5 % | 16.8 | 0.012 % | 18.8 |
//! | 17, semi-sorted | 95.5 % | 16.8 | 0.0059 % | 20.3 |
//! | 21 | 97 % | 22.0 | 5.6·10⁻⁶ | 25.2 |
//! | 22.1, ranked 3 | 91 % | 23.5 | 1.2·10⁻⁶ | 28.3 |
//! | 32 | 95.5 % | 33.6 | 1.8·10⁻⁹ | 41.9 |
//!
//! A rate between two rows gets the row below at its cost, or the row above
//! sized for a lower load where that costs less (5·10⁻⁴: ranked 5 sized
//! for 80.9 %, 15.9 bits per item; 10⁻⁶: ranked 3 sized for 73.2 %, 29.3
//! bits), while Bloom's cost follows the rate: so 10⁻⁷ costs 33.7 bits here
//! and 33.5 in a Bloom filter. The semi-sorted layouts give the memory of 8
//! and 16 bits with about half their false positives, for slower lookups;
//! the ranked ones pack three to eight fingerprints into a word, and the
//! builder takes them over 8, 10 and 12 bits and between 21 and 32;
//! `cargo run --release --example rates` measures each choice. No bucket
//! crosses a word boundary, so a plain layout's lookup compares whole
//! words: 8, 10 and 12 bits look up at about 0.8 to 1.4 times 16-bit's
//! rate, 21 and 32 bits (two words a bucket) at 0.65 to 0.9; the
//! semi-sorted ones, which decode a bucket first, at 0.5 to 0.8, the
//! ranked ones at 0.3 to 0.8 (see docs/layouts.md in the repository,
//! "Layouts" and "Ranked buckets").
//!
//! ```
//! use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits, DEFAULT_SEED};
//!
//! let n = 10_000u32;
//! let filter = CuckooFilter::builder()
//!     .capacity(n as usize)
//!     .false_positive_rate(0.004)
//!     .seed(DEFAULT_SEED) // the same measurement every run
//!     .build()?;
//! assert_eq!(filter.fingerprint_bits(), FingerprintBits::Ranked6);
//! for i in 0..n {
//!     filter.insert(&i)?;
//! }
//! // The table alone (`memory_usage` adds the side structures).
//! let table_bits = filter.slots() as f64 * filter.fingerprint_bits().bits_per_slot();
//! let bits_per_item = table_bits / f64::from(n);
//! let rate = (n..11 * n).filter(|i| filter.contains(i)).count() as f64 / f64::from(10 * n);
//! assert!(bits_per_item < 11.5 && rate < 0.004, "{bits_per_item} {rate}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Saving and loading
//!
//! [`to_bytes`](CuckooFilter::to_bytes) and
//! [`from_bytes`](CuckooFilter::from_bytes) save a filter and load it on any
//! platform; [`write_to`](CuckooFilter::write_to) and
//! [`read_from`](CuckooFilter::read_from) stream it without a copy of the
//! table, and `read_from` says whether the reader failed ([`ReadError::Io`])
//! or the bytes are not a filter ([`ReadError::Decode`]). The format is
//! versioned and checksummed (CRC-32C), specified in `docs/FORMAT.md` in the
//! repository; any bytes decode to a filter or a [`DecodeError`], never a
//! panic. The bytes hold the seed in the clear. `write_to` takes any
//! [`Write`](std::io::Write) (a file, a socket, a pipe, a compressor): it
//! writes front to back once. The growable filter has the same methods;
//! with the `serde` feature both serialize as their bytes.
//! [`merge`](CuckooFilter::merge) adds one filter's items to another with the
//! same seed, width and size, say one loaded from another machine.
//!
//! ```
//! use std::fs::{self, File};
//! use std::io::{BufReader, BufWriter};
//! use lockfree_cuckoo_filter::{CuckooFilter, ReadError};
//!
//! let filter = CuckooFilter::builder().capacity(1000).seed(7).build()?;
//! filter.insert("apple")?;
//!
//! // Write a temporary file and rename it: a failed write leaves the old file.
//! let path = std::env::temp_dir().join(format!("filter-{}.bin", std::process::id()));
//! let tmp = path.with_extension("tmp");
//! let mut out = BufWriter::new(File::create(&tmp)?);
//! filter.write_to(&mut out)?;
//! out.into_inner()?.sync_all()?;
//! fs::rename(&tmp, &path)?;
//! let loaded = CuckooFilter::read_from(BufReader::new(File::open(&path)?))?;
//! assert!(loaded.contains("apple"));
//! # fs::remove_file(&path)?;
//!
//! // In memory; damaged bytes are refused.
//! let bytes = filter.to_bytes();
//! let other = CuckooFilter::from_bytes(&bytes)?;
//! assert!(matches!(
//!     CuckooFilter::read_from(&bytes[..bytes.len() - 1]),
//!     Err(ReadError::Decode(_))
//! ));
//!
//! // Same seed, width and size: mergeable.
//! other.insert("pear")?;
//! filter.merge(&other)?;
//! assert!(filter.contains("pear") && filter.len() == 3); // "apple" twice
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Limits
//!
//! * A [`CuckooFilter`] holds about its [`capacity`](CuckooFilter::capacity)
//!   (sized for 94 % load, 97 % in the ranked layouts, 91 % with three
//!   slots; asked for a rate, up to 94 to 98 % by layout, or less;
//!   the first refused insert comes most often one to two percent above
//!   that), then answers
//!   [`InsertError::Full`].
//! * Removing an item that was never inserted may remove another item that
//!   shares its fingerprint and buckets (with the false-positive probability);
//!   that item then reads as absent. Remove only what you inserted.
//! * One item can be inserted at most twice
//!   [`slots_per_bucket`](FingerprintBits::slots_per_bucket) times into one
//!   table (two buckets: 8 at the default width, 6 to 16 at the others); the
//!   next copy fails with [`InsertError::Full`]. A growable filter then
//!   grows while its newest table has fewer than 1024 buckets, and past that
//!   answers [`InsertError::TooManyCopies`].
//! * Tables have at most 2^32 buckets (about 16·10^9 items).
//! * Pre-hashed forms (`insert_hash` and friends) need well-mixed 64-bit hashes.
//! * Merging growable filters that have both grown past their first table
//!   usually fails ([`MergeError::Full`]): see
//!   [`GrowableCuckooFilter::merge`].
//! * A filter with a hasher other than [`DefaultHashBuilder`] saves only if the
//!   hasher names itself ([`HasherIdentity`]); `std`'s `RandomState` cannot.
//!
//! ```
//! use lockfree_cuckoo_filter::{CuckooFilter, InsertError};
//!
//! let filter = CuckooFilter::with_capacity(1000);
//! for _ in 0..8 {
//!     filter.insert("again")?;
//! }
//! assert_eq!(filter.insert("again"), Err(InsertError::Full));
//! assert_eq!(filter.len(), 8); // the failed insert changed nothing
//! # Ok::<(), InsertError>(())
//! ```
#![warn(missing_docs)]
// On docs.rs (nightly rustdoc, `--cfg docsrs`): each item gated by a feature
// is labelled with it. Stable builds never see the attribute.
#![cfg_attr(docsrs, feature(doc_cfg))]
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
// The semi-sorted bucket codec: the 17-bit layout uses its
// one-bucket-per-word codec, the 9-bit layout its two-buckets-per-word `half`.
mod ranked;
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
pub use format::{HasherIdentity, ReadError};
pub use growable::{GrowableBuilder, GrowableCuckooFilter};
pub use hasher::{DefaultHashBuilder, StableHasher, DEFAULT_SEED};

/// The README's Rust examples, compiled and run as doc tests, so that the
/// quick start compiles as pasted.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
