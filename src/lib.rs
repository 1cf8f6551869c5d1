//! A concurrent, lock-free cuckoo filter.
//!
//! (Crate documentation is filled in below.)
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

mod builder;
#[cfg(feature = "rayon")]
mod bulk;
mod count;
mod error;
pub(crate) mod filter;
mod fingerprint;
mod growable;
mod hasher;
mod memory;
mod path;
mod relocation;
mod sync;
mod table;

pub use builder::{Builder, FingerprintBits};
#[cfg(feature = "rayon")]
pub use error::BulkInsertError;
pub use error::{BuildError, GrowError, InsertError};
#[doc(hidden)]
pub use filter::__buckets_for;
pub use filter::CuckooFilter;
pub use growable::{GrowableBuilder, GrowableCuckooFilter};
pub use hasher::{DefaultHashBuilder, StableHasher, DEFAULT_SEED};
