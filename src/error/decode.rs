//! The error of decoding a filter's byte string.

use std::fmt;

use super::AllocError;
use crate::fingerprint::FingerprintBits;

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
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError};
    /// assert!(matches!(CuckooFilter::from_bytes(b"not a filter"), Err(DecodeError::BadMagic)));
    /// ```
    BadMagic,
    /// The input is the other filter type's bytes: a
    /// [`GrowableCuckooFilter`](crate::GrowableCuckooFilter)'s given to
    /// [`CuckooFilter::from_bytes`](crate::CuckooFilter::from_bytes), or the
    /// other way round.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError, GrowableCuckooFilter};
    /// let bytes = GrowableCuckooFilter::with_capacity(10).to_bytes();
    /// let err = CuckooFilter::from_bytes(&bytes).unwrap_err();
    /// assert_eq!(err, DecodeError::WrongFilterType { growable: true });
    /// ```
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
    /// The bucket size is not the one this version gives the fingerprint
    /// width ([`FingerprintBits::slots_per_bucket`](crate::FingerprintBits::slots_per_bucket)).
    UnsupportedBucketSize {
        /// The fingerprint width of the table.
        bits: u8,
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
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError};
    /// let bytes = CuckooFilter::with_capacity(10).to_bytes();
    /// let err = CuckooFilter::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err();
    /// assert!(matches!(err, DecodeError::Truncated { .. }));
    /// ```
    Truncated {
        /// Bytes the header implies (at least).
        expected: u64,
        /// Bytes given.
        actual: u64,
    },
    /// The input is longer than its header says.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError};
    /// let mut bytes = CuckooFilter::with_capacity(10).to_bytes();
    /// bytes.push(0);
    /// let err = CuckooFilter::from_bytes(&bytes).unwrap_err();
    /// assert!(matches!(err, DecodeError::TrailingBytes { .. }));
    /// ```
    TrailingBytes {
        /// Bytes the header implies.
        expected: u64,
        /// Bytes given.
        actual: u64,
    },
    /// The CRC-32C of the content does not match the one stored: the bytes
    /// were damaged.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError};
    /// let f = CuckooFilter::with_capacity(10);
    /// f.insert("apple")?;
    /// let mut bytes = f.to_bytes();
    /// let last = bytes.len() - 5;
    /// bytes[last] ^= 1; // a bit flip in the table
    /// let err = CuckooFilter::from_bytes(&bytes).unwrap_err();
    /// assert!(matches!(err, DecodeError::ChecksumMismatch { .. }));
    /// # Ok::<(), lockfree_cuckoo_filter::InsertError>(())
    /// ```
    ChecksumMismatch {
        /// The checksum stored in the input.
        stored: u32,
        /// The checksum of the input's content.
        computed: u32,
    },
    /// The filter was written with another hasher (or seed) than the one it is
    /// being decoded with: its fingerprints would answer for other items.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError, DefaultHashBuilder};
    /// let bytes = CuckooFilter::builder().capacity(10).seed(1).build()?.to_bytes();
    /// let err = CuckooFilter::from_bytes_with_hasher(&bytes, DefaultHashBuilder::with_seed(2));
    /// assert!(matches!(err, Err(DecodeError::HasherMismatch { .. })));
    /// assert!(CuckooFilter::from_bytes_with_hasher(&bytes, DefaultHashBuilder::with_seed(1)).is_ok());
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
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
        /// Items recorded (in the header in version 1, after the table in
        /// version 2).
        recorded: u64,
        /// Fingerprints found in the table (and its moved list).
        found: u64,
    },
    /// A table word has bits set outside its slots: above the last slot of
    /// the word (10, 12 and 21-bit fingerprints leave the top `64 mod bits`
    /// bits of each word unused).
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
    /// A version-2 header's reserved field (bytes 40 to 48, where version 1
    /// records the item count) is not 0, and the flags do not say it holds
    /// the load the table was sized for.
    ReservedNotZero,
    /// The load the header says the table was sized for (in thousandths,
    /// bytes 40 to 48 with flag bit 0 set) is not one the builder sizes a
    /// table of its layout for, other than the layout's full load: 500 to
    /// the layout's highest (910 to 980, see `docs/FORMAT.md`).
    InvalidSizingLoad {
        /// The load found, in thousandths.
        load: u64,
    },
    /// An entry of the moved list (a fingerprint that a snapshot of a live
    /// filter read in the table's stash; see `docs/FORMAT.md`) names a
    /// bucket past the table's, a fingerprint the width cannot hold (0
    /// included), or its pair's higher bucket, or comes before the entry
    /// ahead of it in the order of (bucket, fingerprint).
    InvalidMovedEntry {
        /// Index of the first such entry in the list.
        index: u64,
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
                write!(f, "unknown fingerprint width {bits} (expected 8, 9, 10, 11, 12, 14, 16, 17, 21, 23 or 32 bits)")
            }
            DecodeError::UnsupportedBucketSize { bits, slots } => {
                let expected: Vec<String> = FingerprintBits::ALL
                    .into_iter()
                    .filter(|b| b.bits() == u32::from(bits))
                    .map(|b| b.slots_per_bucket().to_string())
                    .collect();
                write!(
                    f,
                    "unsupported bucket size {slots} for {bits}-bit fingerprints \
                     (this version reads {} slots)",
                    expected.join(" or ")
                )
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
            DecodeError::ReservedNotZero => {
                f.write_str("the header's reserved field (bytes 40 to 48) is not 0")
            }
            DecodeError::InvalidSizingLoad { load } => {
                write!(f, "the table's sizing load, {load} thousandths, is not one of its layout's")
            }
            DecodeError::InvalidMovedEntry { index } => {
                write!(f, "moved entry {index} is not a bucket and fingerprint of the table in order")
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
