//! A growable filter's bytes: a header, each table in the table layout behind
//! its length, a checksum (see `docs/FORMAT.md`). In short:
//!
//! ```text
//! offset  size  field
//!      0     8  magic "LFCUCKCH"
//!      8     2  format version (1)
//!     10     2  flags (0)
//!     12     4  table count T (1 to 33)
//!     16     8  false-positive rate the filter was built for (f64 bits)
//!     24        T times: 8 bytes of length L, then L bytes of a table
//!      …     4  CRC-32C of every byte before it
//! ```
//!
//! The header, the length and the checksum are checked before any table is
//! decoded; each table is then decoded as a single filter's bytes, and the
//! chain is checked against the rules growth follows
//! (`growable::chain`).

use super::identity::{default_with_seed, exactly, id_of, mismatch};
use super::table::{decode, encode, layout};
use super::{
    check_checksum, check_magic, check_version, Fields, HasherIdentity, CHAIN_MAGIC, CHECKSUM_LEN,
    VERSION,
};
use crate::error::DecodeError;
use crate::growable::{check_shape, check_table_count};
use crate::hasher::DefaultHashBuilder;
use crate::{CuckooFilter, GrowableCuckooFilter};

/// Bytes before a growable filter's first table.
const CHAIN_HEADER_LEN: usize = 24;

impl<S: HasherIdentity> GrowableCuckooFilter<S> {
    /// The filter as bytes: a small header (magic `LFCUCKCH`, version, table
    /// count, false-positive rate) and each table, oldest first, in
    /// [`CuckooFilter::to_bytes`]'s format behind its length, closed by a
    /// CRC-32C (see `docs/FORMAT.md`).
    ///
    /// On a live filter, as [`CuckooFilter::to_bytes`]: exact when no
    /// operation is in flight, otherwise a valid blend of the states the
    /// filter went through while its words were read one by one. The chain
    /// written is the one current when the copy began; a table added by a
    /// growth during the copy, and the items inserted into it, are not in the
    /// bytes. The seed is recorded in the clear.
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
                let bytes = encode(t, id_of::<S>(), seed);
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
    /// a panic. Only a chain that growth can produce is accepted (each table
    /// four times the one before, or twice as earlier versions grew, of the
    /// width the false-positive budget gives it),
    /// and that is checked before any table is allocated; each table then
    /// costs at most 1.5 times its bytes plus about 2.2 KB, and the summary
    /// of the older tables under 0.6 times the input for a chain grown by
    /// four (2.7 for one that doubled; docs/FORMAT.md).
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
    /// assert_eq!(GrowableCuckooFilter::from_bytes(b"not a filter").unwrap_err(), DecodeError::BadMagic);
    /// // A single filter's bytes are not a growable one's, and the error says so.
    /// let single = lockfree_cuckoo_filter::CuckooFilter::with_capacity(100).to_bytes();
    /// assert_eq!(
    ///     GrowableCuckooFilter::from_bytes(&single).unwrap_err(),
    ///     DecodeError::WrongFilterType { growable: false }
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        decode_chain(bytes, default_with_seed)
    }
}

/// A growable filter's bytes whose header, length and checksum are right.
struct Parsed<'a> {
    /// The false-positive rate the filter was built for.
    rate: f64,
    /// The first table's encoding (a chain has at least one).
    first: &'a [u8],
    /// The other tables' encodings, oldest first.
    later: Vec<&'a [u8]>,
}

/// Checks a growable filter's header, length and checksum, and returns its
/// false-positive rate and its tables' encodings (each still to be decoded).
fn parse(bytes: &[u8]) -> Result<Parsed<'_>, DecodeError> {
    check_magic(bytes, &CHAIN_MAGIC)?;
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
    let mut fields = Fields::new(header);
    let _magic: [u8; 8] = fields.bytes();
    let version = fields.u16();
    let flags = fields.u16();
    let count = fields.u32();
    let rate = f64::from_bits(fields.u64());
    check_version(version)?;
    check_checksum(content, stored)?;
    if flags != 0 {
        return Err(DecodeError::UnsupportedFlags {
            flags: u32::from(flags),
        });
    }
    check_table_count(count).map_err(|reason| DecodeError::InvalidChain { reason })?;
    // Split the body into length-prefixed tables; any inconsistency in the
    // lengths shows up as a table that is truncated or bytes left over.
    let mut rest = &content[CHAIN_HEADER_LEN..];
    let mut next = || next_table(&mut rest, bytes.len());
    let first = next()?;
    let later = (1..count).map(|_| next()).collect::<Result<_, _>>()?;
    if !rest.is_empty() {
        return Err(DecodeError::TrailingBytes {
            expected: (bytes.len() - rest.len()) as u64,
            actual: bytes.len() as u64,
        });
    }
    Ok(Parsed { rate, first, later })
}

/// Splits the next length-prefixed table off `rest`, the part of an input of
/// `total` bytes that follows the tables split off before.
fn next_table<'a>(rest: &mut &'a [u8], total: usize) -> Result<&'a [u8], DecodeError> {
    let Some((len, tail)) = rest.split_first_chunk::<8>() else {
        return Err(DecodeError::Truncated {
            expected: (total + 8) as u64,
            actual: total as u64,
        });
    };
    let len = u64::from_le_bytes(*len);
    if len > tail.len() as u64 {
        return Err(DecodeError::Truncated {
            expected: (total as u64).saturating_add(len - tail.len() as u64),
            actual: total as u64,
        });
    }
    let (table, tail) = tail.split_at(len as usize);
    *rest = tail;
    Ok(table)
}

/// Decodes a chain. The hasher is resolved from the first table's recorded
/// identity (by `resolve`, as for a single filter); every later table must
/// record the same identity.
fn decode_chain<S>(
    bytes: &[u8],
    resolve: impl FnOnce(u64, u64) -> Result<S, DecodeError>,
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let Parsed { rate, first, later } = parse(bytes)?;
    // The chain's shape, from the tables' headers, before any table is
    // allocated.
    let layouts = std::iter::once(first)
        .chain(later.iter().copied())
        .map(layout)
        .collect::<Result<Vec<_>, _>>()?;
    check_shape(rate, layouts).map_err(|reason| DecodeError::InvalidChain { reason })?;
    let mut identity = (0, 0);
    let CuckooFilter { table, hasher } = decode(first, |id, seed| {
        identity = (id, seed);
        resolve(id, seed)
    })?;
    let mut tables = Vec::with_capacity(1 + later.len());
    tables.push(table);
    for encoding in later {
        let same = |id, seed| {
            if (id, seed) == identity {
                Ok(())
            } else {
                Err(mismatch(identity, (id, seed)))
            }
        };
        tables.push(decode(encoding, same)?.table);
    }
    GrowableCuckooFilter::from_tables(tables, rate, hasher)
        .map_err(|reason| DecodeError::InvalidChain { reason })
}
