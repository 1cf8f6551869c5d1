//! Typed errors.

use std::fmt;

use crate::builder::FingerprintBits;

/// Why [`insert`](crate::CuckooFilter::insert) did not insert.
///
/// A failed insert changes nothing: no item already in the filter is evicted or
/// lost.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InsertError {
    /// No empty slot was reachable from the item's two buckets by a path of
    /// relocations: the table is (practically) full. Grow it, or remove items.
    Full,
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InsertError::Full => {
                f.write_str("cuckoo filter is full: no relocation path to an empty slot")
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
/// let err = CuckooFilter::builder().false_positive_rate(1.5).build().unwrap_err();
/// assert!(matches!(err, BuildError::InvalidFalsePositiveRate { .. }));
/// let err = CuckooFilter::builder().capacity(usize::MAX).build().unwrap_err();
/// assert!(matches!(err, BuildError::CapacityTooLarge { .. }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
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
    /// The capacity needs more buckets than a table can address (2^32).
    CapacityTooLarge {
        /// The capacity asked for.
        capacity: usize,
    },
    /// The allocator could not provide the table's memory.
    AllocationFailed {
        /// The size of the table that could not be allocated.
        bytes: u64,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BuildError::InvalidFalsePositiveRate { rate } => {
                write!(f, "false-positive rate {rate} is not in the open interval (0, 1)")
            }
            BuildError::UnreachableFalsePositiveRate { rate, best, bits } => write!(
                f,
                "false-positive rate {rate} is below {best:e}, the best {bits}-bit fingerprints reach at full load"
            ),
            BuildError::CapacityTooLarge { capacity } => {
                write!(f, "capacity {capacity} needs more than 2^32 buckets")
            }
            BuildError::AllocationFailed { bytes } => {
                write!(f, "could not allocate {bytes} bytes for the table")
            }
        }
    }
}

impl std::error::Error for BuildError {}

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
    /// The input was written by a format version this crate does not read.
    UnsupportedVersion {
        /// The version found.
        version: u16,
    },
    /// The fingerprint width is not 8, 16 or 32 bits.
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
    /// The allocator could not provide the table's memory.
    AllocationFailed {
        /// The size of the table that could not be allocated.
        bytes: u64,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::BadMagic => f.write_str("not a serialized cuckoo filter (bad magic bytes)"),
            DecodeError::UnsupportedVersion { version } => {
                write!(f, "unsupported cuckoo filter format version {version}")
            }
            DecodeError::UnknownFingerprintBits { bits } => {
                write!(f, "unknown fingerprint width {bits} (expected 8, 16 or 32 bits)")
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
                write!(f, "cuckoo filter of {expected} bytes followed by {} more", actual - expected)
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
            DecodeError::AllocationFailed { bytes } => {
                write!(f, "could not allocate {bytes} bytes for the table")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// Why [`merge`](crate::CuckooFilter::merge) did not merge every item.
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, MergeError};
///
/// let small = CuckooFilter::with_capacity(10);
/// let large = CuckooFilter::with_capacity(1000);
/// assert!(matches!(small.merge(&large), Err(MergeError::BucketCountMismatch { .. })));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// fingerprints in them. Nothing was merged.
    HasherMismatch,
    /// The filter merged into ran out of room. The first `merged` of the
    /// `total` fingerprints were inserted; the one after them did not fit and
    /// changed nothing, and the rest were not tried. Every item the filter
    /// held before is still there.
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
                "cannot merge a filter of {}-bit fingerprints into one of {}-bit fingerprints",
                theirs.bits(),
                ours.bits()
            ),
            MergeError::BucketCountMismatch { ours, theirs } => write!(
                f,
                "cannot merge a filter of {theirs} buckets into one of {ours} buckets"
            ),
            MergeError::HasherMismatch => {
                f.write_str("cannot merge filters built with different hashers")
            }
            MergeError::Full { merged, total } => write!(
                f,
                "cuckoo filter is full: merged {merged} of {total} fingerprints"
            ),
        }
    }
}

impl std::error::Error for MergeError {}
