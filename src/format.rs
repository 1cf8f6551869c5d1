//! The byte format: a filter saved on one machine loads on any other.
//!
//! Little-endian throughout, versioned, checksummed with CRC-32C; described
//! byte by byte in `docs/FORMAT.md`. In short:
//!
//! ```text
//! offset  size  field
//!      0     8  magic "LFCUCKOO"
//!      8     2  format version (1)
//!     10     1  fingerprint bits (8, 16 or 32)
//!     11     1  slots per bucket (4)
//!     12     4  flags (0)
//!     16     8  hasher id     (HasherIdentity::ID; 1 = DefaultHashBuilder)
//!     24     8  hasher seed   (HasherIdentity::seed)
//!     32     8  bucket count  (even, 2 to 2^32)
//!     40     8  item count    (= nonzero slots in the table)
//!     48     8  table words W (= ceil(buckets · 4 · bits / 64))
//!     56   8·W  the slots: buckets · 4 fingerprints of `bits` bits, LE, 0 = empty
//! 56+8·W     4  CRC-32C of bytes [0, 56 + 8·W)
//! ```
//!
//! Decoding checks every field against the others and against the input's
//! length before it allocates anything, then the checksum, then the table's
//! contents; any byte string yields a filter or a [`DecodeError`], never a
//! panic. An accepted input is canonical: encoding the decoded filter gives the
//! same bytes back.

use crate::error::DecodeError;
use crate::fingerprint::FingerprintBits;
use crate::fingerprint::{self, Width};
use crate::growable::check_table_count;
use crate::hasher::DefaultHashBuilder;
use crate::table::{self, valid_bucket_count, Table, SLOTS};
use crate::table::{dispatch, with_width};
use crate::{CuckooFilter, GrowableCuckooFilter};

/// The first eight bytes of every encoded filter.
const MAGIC: [u8; 8] = *b"LFCUCKOO";

/// The format version this crate writes and reads.
const VERSION: u16 = 1;

/// Bytes before the table.
const HEADER_LEN: usize = 56;

/// Bytes of the trailing checksum.
const CHECKSUM_LEN: usize = 4;

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
    /// values below 2^16 are reserved for this crate.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{DefaultHashBuilder, HasherIdentity};
    /// assert_eq!(DefaultHashBuilder::ID, 1);
    /// ```
    const ID: u64;

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

    fn seed(&self) -> u64 {
        DefaultHashBuilder::seed(self)
    }
}

impl<S: HasherIdentity> CuckooFilter<S> {
    /// The filter as bytes, in a versioned, little-endian, checksummed format
    /// that [`from_bytes`](CuckooFilter::from_bytes) (or
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)) loads on any
    /// platform. It records the fingerprint width, the bucket count, the
    /// hasher's [identity](HasherIdentity), the item count and every slot; its
    /// length is `60 + 8 · ceil(bucket_count · 4 · bits / 64)` bytes, about the
    /// table's memory.
    ///
    /// Exact when no operation is in flight. While other threads modify the
    /// filter, the bytes are still a valid filter, but a blend of its states
    /// during the copy: an item inserted, removed or relocated meanwhile may be
    /// in it or not, or (relocated) twice. The recorded item count is the
    /// number of fingerprints copied.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    ///
    /// let f = CuckooFilter::with_capacity(1000);
    /// f.insert("apple")?;
    /// let bytes = f.to_bytes();
    /// assert_eq!(&bytes[..8], b"LFCUCKOO");
    ///
    /// let g = CuckooFilter::from_bytes(&bytes)?;
    /// assert!(g.contains("apple") && !g.contains("pear"));
    /// assert_eq!(g.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        dispatch!(&self.table, t => encode(t, S::ID, self.hasher.seed()))
    }

    /// Loads a filter saved by [`to_bytes`](Self::to_bytes) with `hasher`,
    /// which must have the [identity](HasherIdentity) recorded in the bytes
    /// (the same id and seed); [`DecodeError::HasherMismatch`] otherwise.
    ///
    /// Any byte string gives a filter or a [`DecodeError`] that says what is
    /// wrong, never a panic; memory is allocated only once the input's length
    /// is known to match its header, and is then about that length.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError, DefaultHashBuilder};
    ///
    /// let seeded = DefaultHashBuilder::with_seed(42);
    /// let f = CuckooFilter::builder().capacity(100).hasher(seeded).build()?;
    /// f.insert(&7u32)?;
    /// let bytes = f.to_bytes();
    ///
    /// let g = CuckooFilter::from_bytes_with_hasher(&bytes, seeded)?;
    /// assert!(g.contains(&7u32));
    /// let wrong = CuckooFilter::from_bytes_with_hasher(&bytes, DefaultHashBuilder::default());
    /// assert!(matches!(wrong, Err(DecodeError::HasherMismatch { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, DecodeError> {
        decode(bytes, |id, seed| exactly(hasher, id, seed))
    }
}

impl CuckooFilter<DefaultHashBuilder> {
    /// Loads a filter saved by [`to_bytes`](Self::to_bytes) with the default
    /// hasher, rebuilt with the seed recorded in the bytes. Bytes written with
    /// another hasher are refused ([`DecodeError::HasherMismatch`]): load them
    /// with [`from_bytes_with_hasher`](Self::from_bytes_with_hasher).
    ///
    /// Any byte string gives a filter or a [`DecodeError`] that says what is
    /// wrong, never a panic; memory is allocated only once the input's length
    /// is known to match its header, and is then about that length. The
    /// restored filter answers every query as the saved one did.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError};
    ///
    /// let f = CuckooFilter::with_capacity(1000);
    /// for i in 0..500u32 {
    ///     f.insert(&i)?;
    /// }
    /// let g = CuckooFilter::from_bytes(&f.to_bytes())?;
    /// assert!((0..500u32).all(|i| g.contains(&i)));
    /// assert_eq!((g.len(), g.capacity()), (f.len(), f.capacity()));
    ///
    /// assert_eq!(CuckooFilter::from_bytes(b"").unwrap_err(), DecodeError::Truncated { expected: 60, actual: 0 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        decode(bytes, default_with_seed)
    }
}

/// Accepts bytes that name `hasher` exactly (its id and its seed).
fn exactly<S: HasherIdentity>(hasher: S, id: u64, seed: u64) -> Result<S, DecodeError> {
    if (id, seed) == (S::ID, hasher.seed()) {
        Ok(hasher)
    } else {
        Err(mismatch((S::ID, hasher.seed()), (id, seed)))
    }
}

/// Accepts bytes that name the default hasher with any seed, and rebuilds it.
fn default_with_seed(id: u64, seed: u64) -> Result<DefaultHashBuilder, DecodeError> {
    if id == DefaultHashBuilder::ID {
        Ok(DefaultHashBuilder::with_seed(seed))
    } else {
        Err(mismatch((DefaultHashBuilder::ID, seed), (id, seed)))
    }
}

/// The hasher named by the bytes (`found`) is not the one expected.
fn mismatch(expected: (u64, u64), found: (u64, u64)) -> DecodeError {
    DecodeError::HasherMismatch {
        expected_id: expected.0,
        expected_seed: expected.1,
        found_id: found.0,
        found_seed: found.1,
    }
}

/// The first eight bytes of an encoded growable filter.
const CHAIN_MAGIC: [u8; 8] = *b"LFCUCKCH";

/// Bytes before a growable filter's first table.
const CHAIN_HEADER_LEN: usize = 24;

impl<S: HasherIdentity> GrowableCuckooFilter<S> {
    /// The filter as bytes: a small header (magic `LFCUCKCH`, version, table
    /// count, false-positive rate) and each table, oldest first, in
    /// [`CuckooFilter::to_bytes`]'s format behind its length, closed by a
    /// CRC-32C (see `docs/FORMAT.md`). Exact when no operation is in flight.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// for i in 0..1000u32 {
    ///     f.insert(&i)?;
    /// }
    /// let g = GrowableCuckooFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!((g.len(), g.table_count()), (f.len(), f.table_count()));
    /// assert!((0..1000u32).all(|i| g.contains(&i)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let seed = self.hasher().seed();
        let mut out = Vec::new();
        out.extend_from_slice(&CHAIN_MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        self.with_tables(|tables| {
            out.extend_from_slice(&(tables.len() as u32).to_le_bytes());
            out.extend_from_slice(&self.max_false_positive_rate().to_bits().to_le_bytes());
            debug_assert_eq!(out.len(), CHAIN_HEADER_LEN);
            for t in tables {
                let bytes = dispatch!(&**t, t => encode(t, S::ID, seed));
                out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
                out.extend_from_slice(&bytes);
            }
        });
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Loads a growable filter saved by [`to_bytes`](Self::to_bytes) with
    /// `hasher`, which must have the [identity](HasherIdentity) recorded in
    /// every table. Any byte string gives a filter or a [`DecodeError`], never
    /// a panic; each table is allocated only once its bytes are known to be
    /// all there.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{DefaultHashBuilder, GrowableCuckooFilter};
    ///
    /// let seeded = DefaultHashBuilder::with_seed(9);
    /// let f = GrowableCuckooFilter::builder().hasher(seeded).build()?;
    /// f.insert("x")?;
    /// let g = GrowableCuckooFilter::from_bytes_with_hasher(&f.to_bytes(), seeded)?;
    /// assert!(g.contains("x"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, DecodeError> {
        decode_chain(bytes, |id, seed| exactly(hasher, id, seed))
    }
}

impl GrowableCuckooFilter<DefaultHashBuilder> {
    /// Loads a growable filter saved by [`to_bytes`](Self::to_bytes) with the
    /// default hasher, rebuilt with the seed its tables record. Any byte string
    /// gives a filter or a [`DecodeError`], never a panic.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{DecodeError, GrowableCuckooFilter};
    ///
    /// let f = GrowableCuckooFilter::with_capacity(100);
    /// f.insert("apple")?;
    /// let g = GrowableCuckooFilter::from_bytes(&f.to_bytes())?;
    /// assert!(g.contains("apple"));
    /// assert_eq!(GrowableCuckooFilter::from_bytes(b"LFCUCKOO").unwrap_err(), DecodeError::BadMagic);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        decode_chain(bytes, default_with_seed)
    }
}

/// Checks a growable filter's header, length and checksum, and returns its
/// false-positive rate and its tables' encodings (each still to be decoded).
fn chain_tables(bytes: &[u8]) -> Result<(f64, Vec<&[u8]>), DecodeError> {
    let prefix = bytes.len().min(CHAIN_MAGIC.len());
    if bytes[..prefix] != CHAIN_MAGIC[..prefix] {
        return Err(DecodeError::BadMagic);
    }
    let (Some(header), Some((content, stored))) = (
        bytes.first_chunk::<CHAIN_HEADER_LEN>(),
        bytes
            .split_last_chunk::<CHECKSUM_LEN>()
            .filter(|(content, _)| content.len() >= CHAIN_HEADER_LEN),
    ) else {
        return Err(DecodeError::Truncated {
            expected: (CHAIN_HEADER_LEN + CHECKSUM_LEN) as u64,
            actual: bytes.len() as u64,
        });
    };
    let version = u16::from_le_bytes([header[8], header[9]]);
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion { version });
    }
    let stored = u32::from_le_bytes(*stored);
    let computed = crc32c::crc32c(content);
    if stored != computed {
        return Err(DecodeError::ChecksumMismatch { stored, computed });
    }
    let flags = u16::from_le_bytes([header[10], header[11]]);
    if flags != 0 {
        return Err(DecodeError::UnsupportedFlags {
            flags: u32::from(flags),
        });
    }
    let count = u32::from_le_bytes([header[12], header[13], header[14], header[15]]);
    check_table_count(count).map_err(|reason| DecodeError::InvalidChain { reason })?;
    // Split the body into length-prefixed tables; any inconsistency in the
    // lengths shows up as a table that is truncated or bytes left over.
    let mut rest = &content[CHAIN_HEADER_LEN..];
    let mut tables = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let Some((len, tail)) = rest.split_first_chunk::<8>() else {
            return Err(DecodeError::Truncated {
                expected: (bytes.len() + 8) as u64,
                actual: bytes.len() as u64,
            });
        };
        let len = u64::from_le_bytes(*len);
        if len > tail.len() as u64 {
            return Err(DecodeError::Truncated {
                expected: (bytes.len() as u64).saturating_add(len - tail.len() as u64),
                actual: bytes.len() as u64,
            });
        }
        let (table, tail) = tail.split_at(len as usize);
        tables.push(table);
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(DecodeError::TrailingBytes {
            expected: (bytes.len() - rest.len()) as u64,
            actual: bytes.len() as u64,
        });
    }
    let rate = f64::from_bits(u64::from_le_bytes([
        header[16], header[17], header[18], header[19], header[20], header[21], header[22],
        header[23],
    ]));
    Ok((rate, tables))
}

/// Decodes a chain. The hasher is resolved from the first table's recorded
/// identity (by `resolve`, as for a single filter); every later table must
/// record the same identity.
fn decode_chain<S>(
    bytes: &[u8],
    resolve: impl FnOnce(u64, u64) -> Result<S, DecodeError>,
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let (rate, encodings) = chain_tables(bytes)?;
    let mut resolve = Some(resolve);
    let mut first: Option<((u64, u64), S)> = None;
    let mut tables = Vec::with_capacity(encodings.len());
    for encoding in encodings {
        tables.push(
            decode(encoding, |id, seed| match (&first, resolve.take()) {
                (None, Some(resolve)) => {
                    first = Some(((id, seed), resolve(id, seed)?));
                    Ok(())
                }
                (Some((identity, _)), _) if *identity != (id, seed) => {
                    Err(mismatch(*identity, (id, seed)))
                }
                _ => Ok(()),
            })?
            .table,
        );
    }
    let Some((_, hasher)) = first else {
        return Err(DecodeError::InvalidChain {
            reason: "no tables",
        });
    };
    GrowableCuckooFilter::from_tables(tables, rate, hasher)
        .map_err(|reason| DecodeError::InvalidChain { reason })
}

/// Lanes of `word` that hold a fingerprint.
#[inline]
fn occupied<W: Width>(word: u64) -> u64 {
    u64::from(W::LANES - fingerprint::zero_lanes::<W>(word).count_ones())
}

fn encode<W: Width>(t: &Table<W>, hasher_id: u64, seed: u64) -> Vec<u8> {
    let words = t.words();
    let mut out = Vec::with_capacity(HEADER_LEN + 8 * words.len() + CHECKSUM_LEN);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.push(W::BITS as u8);
    out.push(SLOTS as u8);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&hasher_id.to_le_bytes());
    out.extend_from_slice(&seed.to_le_bytes());
    out.extend_from_slice(&t.buckets().to_le_bytes());
    let items_at = out.len();
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&(words.len() as u64).to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_LEN);
    // The count is taken from the words copied, so the bytes are consistent
    // even when the table changes during the copy.
    let mut items = 0;
    for word in words {
        items += occupied::<W>(word);
        out.extend_from_slice(&word.to_le_bytes());
    }
    out[items_at..items_at + 8].copy_from_slice(&items.to_le_bytes());
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The header of an input whose layout, length and checksum are right.
struct Parsed<'a> {
    bits: FingerprintBits,
    hasher_id: u64,
    seed: u64,
    buckets: u64,
    items: u64,
    /// The table words' bytes.
    body: &'a [u8],
}

fn u16_at(header: &[u8; HEADER_LEN], at: usize) -> u16 {
    u16::from_le_bytes([header[at], header[at + 1]])
}

fn u32_at(header: &[u8; HEADER_LEN], at: usize) -> u32 {
    let mut b = [0; 4];
    b.copy_from_slice(&header[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(header: &[u8; HEADER_LEN], at: usize) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&header[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Checks everything that does not need the table's contents.
fn parse(bytes: &[u8]) -> Result<Parsed<'_>, DecodeError> {
    let actual = bytes.len() as u64;
    let prefix = bytes.len().min(MAGIC.len());
    if bytes[..prefix] != MAGIC[..prefix] {
        return Err(DecodeError::BadMagic);
    }
    let Some(header) = bytes.first_chunk::<HEADER_LEN>() else {
        return Err(DecodeError::Truncated {
            expected: (HEADER_LEN + CHECKSUM_LEN) as u64,
            actual,
        });
    };
    let version = u16_at(header, 8);
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion { version });
    }
    let Some(bits) = FingerprintBits::from_bits(u32::from(header[10])) else {
        return Err(DecodeError::UnknownFingerprintBits { bits: header[10] });
    };
    if u32::from(header[11]) != SLOTS {
        return Err(DecodeError::UnsupportedBucketSize { slots: header[11] });
    }
    let buckets = u64_at(header, 32);
    if !valid_bucket_count(buckets) {
        return Err(DecodeError::InvalidBucketCount { buckets });
    }
    let words = u64_at(header, 48);
    let expected_words = table::words_for(bits.bits(), buckets);
    if words != expected_words {
        return Err(DecodeError::WordCountMismatch {
            expected: expected_words,
            found: words,
        });
    }
    // At most 2^33 words (2^32 buckets of 32-bit slots): no overflow.
    let expected = (HEADER_LEN + CHECKSUM_LEN) as u64 + 8 * words;
    if actual < expected {
        return Err(DecodeError::Truncated { expected, actual });
    }
    if actual > expected {
        return Err(DecodeError::TrailingBytes { expected, actual });
    }
    let (content, stored) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let stored = u32::from_le_bytes([stored[0], stored[1], stored[2], stored[3]]);
    let computed = crc32c::crc32c(content);
    if stored != computed {
        return Err(DecodeError::ChecksumMismatch { stored, computed });
    }
    let flags = u32_at(header, 12);
    if flags != 0 {
        return Err(DecodeError::UnsupportedFlags { flags });
    }
    Ok(Parsed {
        bits,
        hasher_id: u64_at(header, 16),
        seed: u64_at(header, 24),
        buckets,
        items: u64_at(header, 40),
        body: &content[HEADER_LEN..],
    })
}

fn decode<S>(
    bytes: &[u8],
    hasher: impl FnOnce(u64, u64) -> Result<S, DecodeError>,
) -> Result<CuckooFilter<S>, DecodeError> {
    let parsed = parse(bytes)?;
    let hasher = hasher(parsed.hasher_id, parsed.seed)?;
    let table = with_width!(parsed.bits, W, wrap => decode_table::<W>(&parsed).map(wrap))?;
    Ok(CuckooFilter { table, hasher })
}

fn word_at(chunk: &[u8]) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(chunk);
    u64::from_le_bytes(b)
}

/// Checks the table's contents, then allocates and fills it.
fn decode_table<W: Width>(p: &Parsed<'_>) -> Result<Table<W>, DecodeError> {
    let found: u64 = p
        .body
        .chunks_exact(8)
        .map(|c| occupied::<W>(word_at(c)))
        .sum();
    if found != p.items {
        return Err(DecodeError::ItemCountMismatch {
            recorded: p.items,
            found,
        });
    }
    let len = usize::try_from(found).map_err(|_| Table::<W>::alloc_error(p.buckets))?;
    Ok(Table::from_words(
        p.buckets,
        p.body.chunks_exact(8).map(word_at),
        len,
    )?)
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::HasherIdentity;
    use crate::error::DecodeError;
    use crate::hasher::DefaultHashBuilder;
    use crate::{CuckooFilter, GrowableCuckooFilter};
    use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
    use serde::{Serialize, Serializer};
    use std::fmt;

    /// Serializes the filter as one byte string, [`to_bytes`](CuckooFilter::to_bytes).
    impl<S: HasherIdentity> Serialize for CuckooFilter<S> {
        fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
            serializer.serialize_bytes(&self.to_bytes())
        }
    }

    /// Deserializes a byte string (or a sequence of bytes, for formats without
    /// byte strings) with [`from_bytes`](CuckooFilter::from_bytes).
    impl<'de> Deserialize<'de> for CuckooFilter<DefaultHashBuilder> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_bytes(BytesVisitor(CuckooFilter::from_bytes))
        }
    }

    impl<S: HasherIdentity> Serialize for GrowableCuckooFilter<S> {
        fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
            serializer.serialize_bytes(&self.to_bytes())
        }
    }

    impl<'de> Deserialize<'de> for GrowableCuckooFilter<DefaultHashBuilder> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_bytes(BytesVisitor(GrowableCuckooFilter::from_bytes))
        }
    }

    /// Accepts the byte string (or a sequence of bytes) and decodes it.
    struct BytesVisitor<T>(fn(&[u8]) -> Result<T, DecodeError>);

    impl<'de, T> Visitor<'de> for BytesVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the bytes of a cuckoo filter")
        }

        fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Self::Value, E> {
            (self.0)(v).map_err(E::custom)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            // The hint is the input's claim: trust it only so far.
            let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some(b) = seq.next_element::<u8>()? {
                bytes.push(b);
            }
            self.visit_bytes(&bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_laid_out_in_order() {
        // The format promises slot k of bucket b at byte offset
        // 56 + (4b + k) · bits / 8, whatever the in-memory word layout.
        for bits in FingerprintBits::ALL {
            let f = CuckooFilter::with_buckets(4, bits, DefaultHashBuilder::default()).unwrap();
            let fp = 0x5a; // fits every width
            f.insert_hash(f.table.hash_for(2, fp)).unwrap();
            let bytes = f.to_bytes();
            let b = f.table.position(f.table.hash_for(2, fp)).i1;
            let slot_bytes = (bits.bits() / 8) as usize;
            let at = HEADER_LEN + (4 * b as usize) * slot_bytes;
            assert_eq!(bytes[at], 0x5a, "{bits:?}");
            let nonzero = bytes[HEADER_LEN..bytes.len() - 4]
                .iter()
                .filter(|&&x| x != 0)
                .count();
            assert_eq!(nonzero, 1);
        }
    }
}
