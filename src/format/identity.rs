//! How a hasher is named in the byte format, and how a decoder accepts the
//! name it finds.

use crate::error::DecodeError;
use crate::hasher::DefaultHashBuilder;
#[cfg(doc)]
use crate::CuckooFilter; // only linked to from the docs

/// How a hasher is named in the byte format, so that a filter is only ever
/// decoded with the hash function it was built with.
///
/// A filter stores fingerprints of its items' hashes, not the items: decoded
/// with another hash function it would answer for other items. So
/// [`to_bytes`](CuckooFilter::to_bytes) records the hasher's [`ID`](Self::ID)
/// and [`seed`](Self::seed), and
/// [`from_bytes_with_hasher`](CuckooFilter::from_bytes_with_hasher) accepts
/// the bytes only if the hasher it is given has the same two.
///
/// The default hasher, [`DefaultHashBuilder`], has id 1 and its seed, and
/// [`CuckooFilter::from_bytes`] rebuilds it from the recorded seed. To save
/// filters built with your own hasher, implement this trait for it; the hasher
/// must then hash every item to the same 64 bits on every platform and every
/// run (so not `std`'s randomly keyed `RandomState`).
///
/// ```
/// use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
/// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError, HasherIdentity};
///
/// /// SipHash-1-3 with zero keys (`std`'s algorithm may change between Rust
/// /// releases: a real program would pin its own).
/// #[derive(Clone, Default, PartialEq)]
/// struct MyHasher(BuildHasherDefault<DefaultHasher>);
///
/// impl BuildHasher for MyHasher {
///     type Hasher = DefaultHasher;
///     fn build_hasher(&self) -> DefaultHasher {
///         self.0.build_hasher()
///     }
/// }
///
/// impl HasherIdentity for MyHasher {
///     const ID: u64 = 0x5349_5031_3300_0000; // any constant of your own
///     fn seed(&self) -> u64 {
///         0
///     }
/// }
///
/// let f = CuckooFilter::builder().capacity(100).hasher(MyHasher::default()).build()?;
/// f.insert("apple")?;
/// let bytes = f.to_bytes();
///
/// let g = CuckooFilter::from_bytes_with_hasher(&bytes, MyHasher::default())?;
/// assert!(g.contains("apple"));
/// // The default hasher is not the one the bytes name.
/// assert!(matches!(
///     CuckooFilter::from_bytes(&bytes),
///     Err(DecodeError::HasherMismatch { .. })
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait HasherIdentity {
    /// Names the hash function (the algorithm and how items are fed to it).
    /// The same id must mean the same function on every machine and in every
    /// version of your program. 1 is [`DefaultHashBuilder`]'s; 0 and the
    /// values below 2^16 are reserved for this crate, and a program that
    /// saves or loads a filter whose hasher claims one does not compile
    /// (bytes that named the default hasher would otherwise be decoded with
    /// it, and every item would read as absent).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{DefaultHashBuilder, HasherIdentity};
    /// assert_eq!(DefaultHashBuilder::ID, 1);
    /// ```
    ///
    /// ```compile_fail,E0080
    /// use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder, HasherIdentity};
    /// # use std::hash::BuildHasher;
    /// #[derive(Clone, Default)]
    /// struct Mine(DefaultHashBuilder);
    /// # impl BuildHasher for Mine {
    /// #     type Hasher = <DefaultHashBuilder as BuildHasher>::Hasher;
    /// #     fn build_hasher(&self) -> Self::Hasher { self.0.build_hasher() }
    /// # }
    /// impl HasherIdentity for Mine {
    ///     const ID: u64 = 1; // the default hasher's: refused at compile time
    ///     fn seed(&self) -> u64 { 0 }
    /// }
    /// let f = CuckooFilter::builder().hasher(Mine::default()).build().unwrap();
    /// let _ = f.to_bytes();
    /// ```
    const ID: u64;

    /// Whether this crate defines the hasher, which may then use a reserved
    /// [`ID`](Self::ID). Leave it `false`: it exists so that the crate's own
    /// hashers can be told from others at compile time.
    #[doc(hidden)]
    const DEFINED_BY_THIS_CRATE: bool = false;

    /// The parameter that, with [`ID`](Self::ID), fixes the function: its seed
    /// or key (for a key longer than 64 bits, a digest of it). Decoding checks
    /// it for equality only.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{DefaultHashBuilder, HasherIdentity};
    /// assert_eq!(HasherIdentity::seed(&DefaultHashBuilder::with_seed(7)), 7);
    /// ```
    fn seed(&self) -> u64;
}

impl HasherIdentity for DefaultHashBuilder {
    const ID: u64 = 1;
    const DEFINED_BY_THIS_CRATE: bool = true;

    fn seed(&self) -> u64 {
        DefaultHashBuilder::seed(self)
    }
}

/// Ids below this are the crate's (see [`HasherIdentity::ID`]).
const RESERVED_IDS: u64 = 1 << 16;

/// `S::ID`, for the encoder and the decoders: the one place it is read, so
/// that a hasher outside this crate claiming a reserved id is a compile error
/// wherever its filters are saved or loaded (the `const` block is evaluated
/// when the function is instantiated for `S`).
pub(super) fn id_of<S: HasherIdentity>() -> u64 {
    const {
        assert!(
            S::ID >= RESERVED_IDS || S::DEFINED_BY_THIS_CRATE,
            "HasherIdentity::ID values below 2^16 are reserved for lockfree-cuckoo-filter"
        );
    }
    S::ID
}

/// Accepts bytes that name `hasher` exactly (its id and its seed).
pub(super) fn exactly<S: HasherIdentity>(hasher: S, id: u64, seed: u64) -> Result<S, DecodeError> {
    let expected = (id_of::<S>(), hasher.seed());
    if (id, seed) == expected {
        Ok(hasher)
    } else {
        Err(mismatch(expected, (id, seed)))
    }
}

/// Accepts bytes that name the default hasher with any seed, and rebuilds it.
pub(super) fn default_with_seed(id: u64, seed: u64) -> Result<DefaultHashBuilder, DecodeError> {
    if id == DefaultHashBuilder::ID {
        Ok(DefaultHashBuilder::with_seed(seed))
    } else {
        Err(mismatch((DefaultHashBuilder::ID, seed), (id, seed)))
    }
}

/// The hasher named by the bytes (`found`) is not the one expected.
pub(super) fn mismatch(expected: (u64, u64), found: (u64, u64)) -> DecodeError {
    DecodeError::HasherMismatch {
        expected_id: expected.0,
        expected_seed: expected.1,
        found_id: found.0,
        found_seed: found.1,
    }
}
