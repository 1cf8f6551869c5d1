//! A concurrent, lock-free cuckoo filter.
//!
//! (Crate documentation is filled in below.)
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

mod builder;
mod count;
mod error;
pub(crate) mod filter;
mod fingerprint;
mod format;
mod hasher;
mod memory;
mod merge;
mod path;
mod relocation;
mod sync;
mod table;

pub use builder::{Builder, FingerprintBits};
pub use error::{BuildError, DecodeError, InsertError, MergeError};
#[doc(hidden)]
pub use filter::__buckets_for;
pub use filter::CuckooFilter;
pub use format::HasherIdentity;
pub use hasher::{DefaultHashBuilder, StableHasher, DEFAULT_SEED};
