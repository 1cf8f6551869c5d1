//! Typed errors.

use std::fmt;

use crate::fingerprint::FingerprintBits;

/// The allocator could not provide a table's memory: the error every
/// `AllocationFailed` variant carries ([`BuildError`], [`DecodeError`],
/// [`InsertError`]).
///
/// ```
/// use lockfree_cuckoo_filter::{AllocError, BuildError};
///
/// fn explain(err: BuildError) -> String {
///     match err {
///         BuildError::AllocationFailed(AllocError { bytes, .. }) => {
///             format!("out of memory: a table of {bytes} bytes")
///         }
///         other => other.to_string(),
///     }
/// }
/// assert!(explain(BuildError::CapacityTooLarge { capacity: usize::MAX }).contains("2^32"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AllocError {
    /// The size of the table that could not be allocated.
    pub bytes: u64,
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "could not allocate {} bytes for the table", self.bytes)
    }
}

impl std::error::Error for AllocError {}

/// Why an insert did not insert: the error of every insert of
/// [`CuckooFilter`](crate::CuckooFilter) and of
/// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter) (`insert`,
/// `insert_if_absent` and their `_hash` forms).
///
/// A failed insert changes nothing: no item already in the filter is evicted or
/// lost. A [`CuckooFilter`](crate::CuckooFilter) fails only with
/// [`Full`](Self::Full); a growable filter never with `Full` (it grows
/// instead), only with the reasons it cannot grow.
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, InsertError};
///
/// let f = CuckooFilter::with_capacity(10);
/// let mut i = 0u64;
/// let err = loop {
///     match f.insert(&i) {
///         Ok(()) => i += 1,
///         Err(e) => break e,
///     }
/// };
/// assert_eq!(err, InsertError::Full);
/// assert_eq!(f.len() as u64, i);
/// assert!((0..i).all(|j| f.contains(&j)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum InsertError {
    /// No empty slot was reachable from the item's two buckets by a path of
    /// relocations: the table is (practically) full. Grow it, or remove items.
    /// Only a [`CuckooFilter`](crate::CuckooFilter) says this.
    Full,
    /// Growable filters: the item's two buckets are full in every table while
    /// the newest table is less than half full and has 1024 buckets or more
    /// (a smaller newest table grows instead). Almost always the same item
    /// (or items with the same hash) was inserted too many times: each table
    /// holds at most 8 copies of one item. Distinct items fill one bucket
    /// pair only by a chance that no real workload meets, or when they were
    /// chosen for it by someone who knows the seed (nine suffice; see
    /// [`DefaultHashBuilder`](crate::DefaultHashBuilder) on keys chosen by
    /// others). Growing for lack of room in one bucket pair would multiply the
    /// memory of a mostly empty filter (by four per growth, for nine more
    /// chosen items each time), so the filter does not.
    TooManyCopies,
    /// Growable filters: another table would take the sum of the tables'
    /// false-positive bounds over the rate the filter was built for: even
    /// 32-bit fingerprints are too short for the budget left. A filter this
    /// version built never says this (its builder refuses such rates); a
    /// chain decoded from bytes an earlier version wrote may. Build with a
    /// higher rate or a larger initial capacity (fewer tables).
    RateExhausted {
        /// The false-positive rate the filter was built for.
        rate: f64,
        /// The tables in the chain.
        tables: usize,
    },
    /// Growable filters: the newest table already has the largest bucket
    /// count a table can address (2^32, about 16·10^9 items).
    CapacityExhausted,
    /// Growable filters: the allocator could not provide the next table's
    /// memory.
    AllocationFailed(AllocError),
}

impl From<AllocError> for InsertError {
    fn from(e: AllocError) -> Self {
        InsertError::AllocationFailed(e)
    }
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            InsertError::Full => {
                f.write_str("cuckoo filter is full: no relocation path to an empty slot")
            }
            InsertError::TooManyCopies => f.write_str(
                "the item's two buckets are full in every table (of its copies, almost always) and the newest table is less than half full",
            ),
            InsertError::RateExhausted { rate, tables } => write!(
                f,
                "a table after the {tables} in the chain would take the false-positive bound over {rate}"
            ),
            InsertError::CapacityExhausted => {
                f.write_str("the newest table already has 2^32 buckets, the most a table can address")
            }
            InsertError::AllocationFailed(AllocError { bytes }) => {
                write!(f, "could not allocate {bytes} bytes for the next table")
            }
        }
    }
}

impl std::error::Error for InsertError {}

/// Why a [`Builder`](crate::Builder) could not build a filter.
///
/// ```
/// use lockfree_cuckoo_filter::{BuildError, CuckooFilter};
///
/// let err = CuckooFilter::builder().capacity(10).false_positive_rate(1.5).build().unwrap_err();
/// assert!(matches!(err, BuildError::InvalidFalsePositiveRate { .. }));
/// let err = CuckooFilter::builder().capacity(usize::MAX).build().unwrap_err();
/// assert!(matches!(err, BuildError::CapacityTooLarge { .. }));
/// let err = CuckooFilter::builder().false_positive_rate(0.01).build().unwrap_err();
/// assert_eq!(err, BuildError::MissingCapacity);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
    /// [`Builder::capacity`](crate::Builder::capacity) was not called. A
    /// [`CuckooFilter`](crate::CuckooFilter) never grows, so its size has no
    /// sensible default; a filter that grows is
    /// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter).
    MissingCapacity,
    /// The false-positive rate was not a number in the open interval (0, 1).
    InvalidFalsePositiveRate {
        /// The rate asked for.
        rate: f64,
    },
    /// No fingerprint width offered (or the width asked for) reaches the rate at
    /// full load.
    UnreachableFalsePositiveRate {
        /// The rate asked for.
        rate: f64,
        /// The best rate reachable with the width considered.
        best: f64,
        /// The fingerprint width considered, in bits.
        bits: u32,
    },
    /// A [`GrowableCuckooFilter`](crate::GrowableCuckooFilter)'s rate is too
    /// small for its budget to give a fingerprint width to every table growth
    /// can add (each table spends a share of the rate), so the filter could
    /// not promise to grow until memory runs out.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, GrowableCuckooFilter};
    ///
    /// let err = GrowableCuckooFilter::builder().false_positive_rate(1e-9).build().unwrap_err();
    /// let BuildError::UnreachableGrowableRate { smallest, bits, .. } = err else {
    ///     panic!("{err:?}");
    /// };
    /// assert!(smallest > 1e-9 && bits == 32);
    /// assert!(GrowableCuckooFilter::builder().false_positive_rate(smallest).build().is_ok());
    /// ```
    UnreachableGrowableRate {
        /// The rate asked for.
        rate: f64,
        /// The smallest rate a growable filter accepts.
        smallest: f64,
        /// The longest fingerprint width growth uses, in bits.
        bits: u32,
    },
    /// The capacity needs more buckets than a table can address (2^32).
    CapacityTooLarge {
        /// The capacity asked for.
        capacity: usize,
    },
    /// The allocator could not provide the table's memory.
    AllocationFailed(AllocError),
}

impl From<AllocError> for BuildError {
    fn from(e: AllocError) -> Self {
        BuildError::AllocationFailed(e)
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BuildError::InvalidFalsePositiveRate { rate } => {
                write!(f, "false-positive rate {} is not in the open interval (0, 1)", Rate(rate))
            }
            BuildError::UnreachableFalsePositiveRate { rate, best, bits } => write!(
                f,
                "false-positive rate {} is below {best:e}, the best {bits}-bit fingerprints reach at full load",
                Rate(rate)
            ),
            BuildError::UnreachableGrowableRate {
                rate,
                smallest,
                bits,
            } => write!(
                f,
                "false-positive rate {} is below {smallest:e}, the smallest a growable filter accepts: \
                 each table it can grow spends a share of the rate, and the last ones need more \
                 than {bits}-bit fingerprints below it",
                Rate(rate)
            ),
            BuildError::MissingCapacity => f.write_str(
                "no capacity given: call .capacity(n) with the number of items the filter must hold \
                 (or use GrowableCuckooFilter, which grows)",
            ),
            BuildError::CapacityTooLarge { capacity } => {
                write!(f, "capacity {capacity} needs more than 2^32 buckets")
            }
            BuildError::AllocationFailed(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for BuildError {}

/// A rate as people write it: `0.01`, but `1e-9` rather than a decimal point
/// followed by eight zeros (or three hundred, for a subnormal).
struct Rate(f64);

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        if r != 0.0 && r.is_finite() && !(1e-4..1e6).contains(&r.abs()) {
            write!(f, "{r:e}")
        } else {
            write!(f, "{r}")
        }
    }
}

/// Why [`from_bytes`](crate::CuckooFilter::from_bytes) (or
/// [`from_bytes_with_hasher`](crate::CuckooFilter::from_bytes_with_hasher))
/// rejected a byte string.
///
/// Every byte string decodes to a filter or to one of these; the decoder never
/// panics, and allocates no more than the input's length justifies. The header
/// fields that fix the layout are checked first, then the length, then the
/// checksum, then everything else; a damaged input therefore usually reports
/// [`ChecksumMismatch`](Self::ChecksumMismatch). See `docs/FORMAT.md` for the
/// format.
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError};
///
/// let f = CuckooFilter::with_capacity(100);
/// f.insert("apple")?;
/// let mut bytes = f.to_bytes();
///
/// assert!(matches!(CuckooFilter::from_bytes(b"not a filter"), Err(DecodeError::BadMagic)));
/// assert!(matches!(
///     CuckooFilter::from_bytes(&bytes[..bytes.len() - 1]),
///     Err(DecodeError::Truncated { .. })
/// ));
/// let last = bytes.len() - 5;
/// bytes[last] ^= 1; // a bit flip in the table
/// assert!(matches!(CuckooFilter::from_bytes(&bytes), Err(DecodeError::ChecksumMismatch { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input does not start with the format's magic bytes: it is not a
    /// serialized cuckoo filter.
    BadMagic,
    /// The input is the other filter type's bytes: a
    /// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter)'s given to
    /// [`CuckooFilter::from_bytes`](crate::CuckooFilter::from_bytes), or the
    /// other way round.
    WrongFilterType {
        /// Whether the bytes are a growable filter's.
        growable: bool,
    },
    /// The input was written by a format version this crate does not read.
    UnsupportedVersion {
        /// The version found.
        version: u16,
    },
    /// The fingerprint width is not one of [`FingerprintBits::ALL`](crate::FingerprintBits::ALL).
    UnknownFingerprintBits {
        /// The width found.
        bits: u8,
    },
    /// The bucket size is not 4 slots.
    UnsupportedBucketSize {
        /// The bucket size found.
        slots: u8,
    },
    /// Flag bits reserved for later versions are set.
    UnsupportedFlags {
        /// The flags found.
        flags: u32,
    },
    /// The bucket count is odd, 0, or more than 2^32.
    InvalidBucketCount {
        /// The bucket count found.
        buckets: u64,
    },
    /// The recorded number of table words is not the number that the bucket
    /// count and fingerprint width need.
    WordCountMismatch {
        /// Words the bucket count and width need.
        expected: u64,
        /// Words recorded.
        found: u64,
    },
    /// The input is shorter than its header says (or than a header).
    Truncated {
        /// Bytes the header implies (at least).
        expected: u64,
        /// Bytes given.
        actual: u64,
    },
    /// The input is longer than its header says.
    TrailingBytes {
        /// Bytes the header implies.
        expected: u64,
        /// Bytes given.
        actual: u64,
    },
    /// The CRC-32C of the content does not match the one stored: the bytes
    /// were damaged.
    ChecksumMismatch {
        /// The checksum stored in the input.
        stored: u32,
        /// The checksum of the input's content.
        computed: u32,
    },
    /// The filter was written with another hasher (or seed) than the one it is
    /// being decoded with: its fingerprints would answer for other items.
    HasherMismatch {
        /// Hasher id expected by the decoder.
        expected_id: u64,
        /// Hasher seed expected by the decoder.
        expected_seed: u64,
        /// Hasher id recorded in the input.
        found_id: u64,
        /// Hasher seed recorded in the input.
        found_seed: u64,
    },
    /// The recorded item count differs from the number of fingerprints in the
    /// table.
    ItemCountMismatch {
        /// Items recorded in the header.
        recorded: u64,
        /// Fingerprints found in the table.
        found: u64,
    },
    /// A table word has bits set outside its slots: above the last slot of
    /// the word (10, 12 and 21-bit fingerprints leave the top `64 mod bits`
    /// bits of each word unused), or in a slot past the last bucket.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError, FingerprintBits};
    ///
    /// let f = CuckooFilter::builder().capacity(10).fingerprint_bits(FingerprintBits::Bits12).build()?;
    /// let mut bytes = f.to_bytes();
    /// bytes[56 + 7] |= 0x80; // the top bit of the first word, above its five slots
    /// let n = bytes.len();
    /// let crc = crc32c::crc32c(&bytes[..n - 4]);
    /// bytes[n - 4..].copy_from_slice(&crc.to_le_bytes());
    /// assert_eq!(CuckooFilter::from_bytes(&bytes).unwrap_err(), DecodeError::NonzeroPadding { word: 0 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    NonzeroPadding {
        /// Index of the first such word in the table.
        word: u64,
    },
    /// A word of a semi-sorted table ([`FingerprintBits::Bits17`],
    /// or either half of one of a [`FingerprintBits::Bits9`]
    /// table) is not one the codec writes: an unused prefix code, or
    /// fingerprints out of order.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError, FingerprintBits};
    ///
    /// let f = CuckooFilter::builder().capacity(10).fingerprint_bits(FingerprintBits::Bits17).build()?;
    /// let mut bytes = f.to_bytes();
    /// bytes[56 + 7] = 0xff; // the first bucket's 12-bit code: 4080 or more, unused
    /// let n = bytes.len();
    /// let crc = crc32c::crc32c(&bytes[..n - 4]);
    /// bytes[n - 4..].copy_from_slice(&crc.to_le_bytes());
    /// assert_eq!(CuckooFilter::from_bytes(&bytes).unwrap_err(), DecodeError::InvalidBucket { word: 0 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    InvalidBucket {
        /// Index of the first such word in the table.
        word: u64,
    },
    /// The allocator could not provide the table's memory.
    AllocationFailed(AllocError),
    /// A growable filter's chain of tables is not one that growth produces:
    /// no tables, too many, a rate outside (0, 1), a table whose width or
    /// size is not the one growth gives it after the table before, or tables
    /// whose false-positive bounds add up to more than the rate.
    InvalidChain {
        /// What is wrong.
        reason: &'static str,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::BadMagic => f.write_str("not a serialized cuckoo filter (bad magic bytes)"),
            DecodeError::WrongFilterType { growable } => {
                let (is, other) = if growable {
                    ("GrowableCuckooFilter", "CuckooFilter")
                } else {
                    ("CuckooFilter", "GrowableCuckooFilter")
                };
                write!(
                    f,
                    "these are a {is}'s bytes, not a {other}'s: decode them with {is}::from_bytes"
                )
            }
            DecodeError::InvalidChain { reason } => write!(f, "invalid chain of tables: {reason}"),
            DecodeError::UnsupportedVersion { version } => {
                write!(f, "unsupported cuckoo filter format version {version}")
            }
            DecodeError::UnknownFingerprintBits { bits } => {
                write!(f, "unknown fingerprint width {bits} (expected 8, 9, 10, 12, 16, 17, 21 or 32 bits)")
            }
            DecodeError::UnsupportedBucketSize { slots } => {
                write!(f, "unsupported bucket size {slots} (expected 4 slots)")
            }
            DecodeError::UnsupportedFlags { flags } => write!(f, "unsupported format flags {flags:#x}"),
            DecodeError::InvalidBucketCount { buckets } => {
                write!(f, "invalid bucket count {buckets} (expected an even number from 2 to 2^32)")
            }
            DecodeError::WordCountMismatch { expected, found } => write!(
                f,
                "table word count {found} disagrees with the {expected} words the bucket count needs"
            ),
            DecodeError::Truncated { expected, actual } => {
                write!(f, "truncated cuckoo filter: {actual} bytes, expected {expected}")
            }
            DecodeError::TrailingBytes { expected, actual } => {
                // Saturating: the fields are public, so a caller may build one
                // with `actual < expected`, and `Display` must not panic.
                let more = actual.saturating_sub(expected);
                write!(f, "cuckoo filter of {expected} bytes followed by {more} more")
            }
            DecodeError::ChecksumMismatch { stored, computed } => write!(
                f,
                "checksum mismatch: stored CRC-32C {stored:#010x}, content has {computed:#010x}"
            ),
            DecodeError::HasherMismatch {
                expected_id,
                expected_seed,
                found_id,
                found_seed,
            } => write!(
                f,
                "filter was written with hasher {found_id:#x} seed {found_seed:#x}, \
                 not hasher {expected_id:#x} seed {expected_seed:#x}"
            ),
            DecodeError::ItemCountMismatch { recorded, found } => write!(
                f,
                "item count {recorded} disagrees with the {found} fingerprints in the table"
            ),
            DecodeError::InvalidBucket { word } => {
                write!(f, "table word {word} is not a semi-sorted bucket")
            }
            DecodeError::NonzeroPadding { word } => {
                write!(f, "table word {word} has bits set outside its slots")
            }
            DecodeError::AllocationFailed(e) => e.fmt(f),
        }
    }
}

impl From<AllocError> for DecodeError {
    fn from(e: AllocError) -> Self {
        DecodeError::AllocationFailed(e)
    }
}

impl std::error::Error for DecodeError {}

/// Why `merge` (of [`CuckooFilter`](crate::CuckooFilter::merge) or
/// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter::merge)) did not merge
/// every item.
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, MergeError};
///
/// let small = CuckooFilter::with_capacity(10);
/// let large = CuckooFilter::with_capacity(1000);
/// assert!(matches!(small.merge(&large), Err(MergeError::BucketCountMismatch { .. })));
/// // Each filter has its own random seed unless given one.
/// let other = CuckooFilter::with_capacity(10);
/// let err = small.merge(&other).unwrap_err();
/// assert_eq!(err, MergeError::HasherMismatch);
/// assert!(err.to_string().contains("builder().seed(..)"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum MergeError {
    /// The filters have different fingerprint widths. Nothing was merged.
    FingerprintBitsMismatch {
        /// The width of the filter merged into.
        ours: FingerprintBits,
        /// The width of the filter merged from.
        theirs: FingerprintBits,
    },
    /// The filters have different bucket counts, so an item's buckets differ
    /// between them. Nothing was merged.
    BucketCountMismatch {
        /// The bucket count of the filter merged into.
        ours: u64,
        /// The bucket count of the filter merged from.
        theirs: u64,
    },
    /// The filters' hashers differ (`!=`), so the same item has different
    /// fingerprints in them. Nothing was merged. Two filters built with the
    /// default hasher differ unless both were given the same seed
    /// ([`Builder::seed`](crate::Builder::seed)): each draws a random one.
    HasherMismatch,
    /// A growable filter merged into had to grow to as many tables as the
    /// other, and could not (the reason is given). Nothing was merged.
    CannotGrow(InsertError),
    /// The filter merged into ran out of room (for a growable filter: in the
    /// table that must take the fingerprints of the other's table of the same
    /// place in the chain). The first `merged` of the `total` fingerprints
    /// were inserted; the one after them did not fit and changed nothing, and
    /// the rest were not tried. Every item the filter held before is still
    /// there.
    Full {
        /// Fingerprints inserted.
        merged: usize,
        /// Fingerprints the other filter held.
        total: usize,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MergeError::FingerprintBitsMismatch { ours, theirs } => write!(
                f,
                "cannot merge a filter of {}-bit fingerprints into one of {}-bit fingerprints: \
                 build both with the same false-positive rate (or fingerprint width)",
                theirs.bits(),
                ours.bits()
            ),
            MergeError::BucketCountMismatch { ours, theirs } => write!(
                f,
                "cannot merge a filter of {theirs} buckets into one of {ours} buckets: \
                 build both with the same capacity (initial capacity, for growable filters)"
            ),
            MergeError::HasherMismatch => f.write_str(
                "cannot merge filters built with different hashers or seeds \
                 (filters get a random seed each by default): build both with the same seed, \
                 builder().seed(..)",
            ),
            MergeError::CannotGrow(e) => write!(f, "cannot grow to merge: {e}"),
            MergeError::Full { merged, total } => write!(
                f,
                "cuckoo filter is full: merged {merged} of {total} fingerprints, every item \
                 held before kept (a growable filter merges table by table, and a table it \
                 grew past is nearly full: merge into an empty filter, or insert the items)"
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// The items that `par_insert_all` (of
/// [`CuckooFilter`](crate::CuckooFilter::par_insert_all) or
/// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter::par_insert_all))
/// could not insert, given back, the number it did insert, and why
/// ([`reason`](Self::reason)). Nothing is lost: every item was either inserted
/// or is in [`failed`](Self::failed).
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, InsertError};
///
/// let f = CuckooFilter::with_capacity(1000);
/// let err = f.par_insert_all(0..5000u64).unwrap_err();
/// assert_eq!(err.inserted() + err.failed().len(), 5000);
/// assert_eq!(f.len(), err.inserted());
/// assert_eq!(err.reason(), InsertError::Full);
/// // The items that did not fit come back, to put elsewhere.
/// let overflow = CuckooFilter::with_capacity(5000);
/// assert_eq!(overflow.par_insert_all(err.failed().to_vec()), Ok(err.failed().len()));
/// assert!((0..5000u64).all(|i| f.contains(&i) || overflow.contains(&i)));
/// ```
#[cfg(feature = "rayon")]
pub struct BulkInsertError<T> {
    pub(crate) inserted: usize,
    pub(crate) failed: Vec<T>,
    pub(crate) reason: InsertError,
}

#[cfg(feature = "rayon")]
impl<T> BulkInsertError<T> {
    /// How many items were inserted.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(10);
    /// let err = f.par_insert_all(0..100u32).unwrap_err();
    /// assert_eq!(err.inserted(), f.len());
    /// ```
    pub fn inserted(&self) -> usize {
        self.inserted
    }

    /// The items that did not fit, in no particular order.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::with_capacity(10);
    /// let err = f.par_insert_all(0..100u32).unwrap_err();
    /// assert_eq!(err.failed().len(), 100 - err.inserted());
    /// ```
    pub fn failed(&self) -> &[T] {
        &self.failed
    }

    /// The items that did not fit, to insert elsewhere (for example into a
    /// second filter).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let small = CuckooFilter::with_capacity(10);
    /// let big = CuckooFilter::with_capacity(1000);
    /// let rest = small.par_insert_all(0..100u32).unwrap_err().into_failed();
    /// assert_eq!(big.par_insert_all(rest.clone()), Ok(rest.len()));
    /// assert!((0..100u32).all(|i| small.contains(&i) || big.contains(&i)));
    /// ```
    pub fn into_failed(self) -> Vec<T> {
        self.failed
    }

    /// Why the items in [`failed`](Self::failed) were not inserted: for a
    /// [`CuckooFilter`](crate::CuckooFilter), [`InsertError::Full`]; for a
    /// growable filter, the first reason it could not grow.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, InsertError};
    /// let f = CuckooFilter::with_capacity(10);
    /// assert_eq!(f.par_insert_all(0..100u32).unwrap_err().reason(), InsertError::Full);
    /// ```
    pub fn reason(&self) -> InsertError {
        self.reason
    }
}

/// Shows the counts, not the items, so that it needs no `T: Debug` (like
/// `std::sync::mpsc::SendError`).
#[cfg(feature = "rayon")]
impl<T> fmt::Debug for BulkInsertError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkInsertError")
            .field("inserted", &self.inserted)
            .field("failed", &self.failed.len())
            .field("reason", &self.reason)
            .finish()
    }
}

#[cfg(feature = "rayon")]
impl<T> fmt::Display for BulkInsertError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} items inserted, {} were not",
            self.reason,
            self.inserted,
            self.failed.len()
        )
    }
}

#[cfg(feature = "rayon")]
impl<T> std::error::Error for BulkInsertError<T> {}

/// Equal when the counts, the failed items (in order) and the reasons are
/// equal.
///
/// ```
/// use lockfree_cuckoo_filter::CuckooFilter;
/// let f = CuckooFilter::with_capacity(100);
/// assert_eq!(f.par_insert_all(vec![1, 2, 3]), Ok(3));
/// ```
#[cfg(feature = "rayon")]
impl<T: PartialEq> PartialEq for BulkInsertError<T> {
    fn eq(&self, other: &Self) -> bool {
        self.inserted == other.inserted
            && self.failed == other.failed
            && self.reason == other.reason
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_print_as_written() {
        let invalid = |rate| BuildError::InvalidFalsePositiveRate { rate }.to_string();
        assert!(invalid(1.5).contains(" 1.5 "));
        assert!(invalid(-0.25).contains(" -0.25 "));
        assert!(invalid(f64::NAN).contains(" NaN "));
        assert!(invalid(0.0).contains(" 0 "));
        // Not 0.000…: a subnormal would be 300-odd digits.
        assert!(invalid(-5e-324).contains(" -5e-324 "));
        let unreachable = |rate| {
            BuildError::UnreachableFalsePositiveRate {
                rate,
                best: 1.7e-9,
                bits: 32,
            }
            .to_string()
        };
        assert!(unreachable(1e-300).contains(" 1e-300 is below 1.7e-9,"));
        assert!(unreachable(0.001).contains(" 0.001 "));
    }
}
