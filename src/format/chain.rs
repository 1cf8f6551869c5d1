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

use std::io::{self, Cursor, Read, Seek, Write};

use super::identity::{default_with_seed, exactly, id_of, mismatch};
use super::stream::{ReadError, Source};
use super::table::{decode, encoded_len, layout, read_table, write_table};
use super::{
    check_checksum, check_checksum_value, check_magic, check_version, Fields, HasherIdentity,
    CHAIN_MAGIC, CHECKSUM_LEN, VERSION,
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
    /// On a live filter, a snapshot as [`CuckooFilter::to_bytes`] takes one,
    /// table by table: every item present for the whole of it is kept (as
    /// far as this filter's removes keep items at all: see
    /// [`remove_hash`](Self::remove_hash) on a remove that takes another
    /// item's copy in a newer table). The chain written is the one current
    /// when the snapshot began; a table added by a growth meanwhile holds
    /// only items inserted meanwhile, and is not in the bytes. The seed is
    /// recorded in the clear.
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
        let mut out = Cursor::new(Vec::new());
        // A `Vec` takes every write (see `table::encode`).
        write_chain(self, &mut out).expect("writing to a Vec");
        out.into_inner()
    }

    /// Writes the filter to `writer` in [`to_bytes`](Self::to_bytes)'s
    /// format, each table read as it is written, as
    /// [`CuckooFilter::write_to`] does (whose notes on seeking and on errors
    /// hold here too): beyond the filter, a buffer of 512 KiB.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// for i in 0..100u32 {
    ///     f.insert(&i)?;
    /// }
    /// let mut file = Cursor::new(Vec::new());
    /// f.write_to(&mut file)?;
    /// file.set_position(0);
    /// let g = GrowableCuckooFilter::read_from(file)?;
    /// assert!((0..100u32).all(|i| g.contains(&i)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<X: Write + Seek>(&self, mut writer: X) -> io::Result<()> {
        write_chain(self, &mut writer)?;
        writer.flush()
    }

    /// Reads a growable filter written by [`write_to`](Self::write_to) or
    /// [`to_bytes`](Self::to_bytes) with `hasher`, checking what
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher) checks, as
    /// the bytes arrive: memory is taken as the tables arrive, so an input
    /// that ends early costs what it delivered. It reads the filter's bytes
    /// and no further.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{DefaultHashBuilder, GrowableCuckooFilter};
    ///
    /// let h = DefaultHashBuilder::with_seed(3);
    /// let f = GrowableCuckooFilter::builder().hasher(h).build()?;
    /// f.insert(&1u8)?;
    /// let g = GrowableCuckooFilter::read_from_with_hasher(&f.to_bytes()[..], h)?;
    /// assert!(g.contains(&1u8));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_from_with_hasher<R: Read>(reader: R, hasher: S) -> Result<Self, ReadError> {
        read_chain(&mut Source::new(reader), |id, seed| {
            exactly(hasher, id, seed)
        })
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

    /// Reads a growable filter written by [`write_to`](Self::write_to) or
    /// [`to_bytes`](Self::to_bytes) with the default hasher, as
    /// [`read_from_with_hasher`](Self::read_from_with_hasher) does.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// f.insert("x")?;
    /// let g = GrowableCuckooFilter::read_from(&f.to_bytes()[..])?;
    /// assert!(g.contains("x"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_from<R: Read>(reader: R) -> Result<Self, ReadError> {
        read_chain(&mut Source::new(reader), default_with_seed)
    }
}

/// Writes `f`'s encoding: the header, then each table of the chain current
/// when it starts, oldest first, read as a snapshot behind its length, then
/// the checksum of it all (assembled from the tables' own, see
/// `table::write_table`).
fn write_chain<S: HasherIdentity, X: Write + Seek>(
    f: &GrowableCuckooFilter<S>,
    out: &mut X,
) -> io::Result<()> {
    let seed = f.hasher().seed();
    f.with_tables(|tables| {
        let mut head = Vec::with_capacity(CHAIN_HEADER_LEN);
        head.extend_from_slice(&CHAIN_MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&0u16.to_le_bytes());
        head.extend_from_slice(&(tables.len() as u32).to_le_bytes());
        head.extend_from_slice(&f.max_false_positive_rate().to_bits().to_le_bytes());
        debug_assert_eq!(head.len(), CHAIN_HEADER_LEN);
        out.write_all(&head)?;
        let mut crc = crc32c::crc32c(&head);
        for t in tables {
            let len = encoded_len(t);
            out.write_all(&len.to_le_bytes())?;
            crc = crc32c::crc32c_append(crc, &len.to_le_bytes());
            let table_crc = write_table(t, id_of::<S>(), seed, out)?;
            crc = crc32c::crc32c_combine(crc, table_crc, len as usize);
        }
        out.write_all(&crc.to_le_bytes())
    })
}

/// Reads a chain from `src`: the header, each table behind its length (each
/// checked as `table::read_table` checks one, the chain's shape checked as
/// each arrives), then the checksum over it all, then the flags.
fn read_chain<S, R: Read>(
    src: &mut Source<R>,
    resolve: impl FnOnce(u64, u64) -> Result<S, DecodeError>,
) -> Result<GrowableCuckooFilter<S>, ReadError> {
    let least = (CHAIN_HEADER_LEN + CHECKSUM_LEN) as u64;
    let mut head = [0; CHAIN_HEADER_LEN];
    src.header(&mut head, &CHAIN_MAGIC, least)?;
    let (flags, count, rate) = chain_header(&head)?;
    let invalid = |reason| DecodeError::InvalidChain { reason };
    check_table_count(count).map_err(invalid)?;
    let mut tables = Vec::with_capacity(count as usize);
    let mut layouts = Vec::with_capacity(count as usize);
    let mut resolve = Some(resolve);
    let mut hasher = None;
    let mut identity = (0, 0);
    for _ in 0..count {
        let mut len = [0; 8];
        src.fill(&mut len, src.position() + 8 + least)?;
        let len = u64::from_le_bytes(len);
        let start = src.position();
        // The running checksum goes on over the table, whose own checksum
        // `read_table` takes from the same reader.
        let before = src.take_crc();
        let table = read_table(src, |id, seed| match resolve.take() {
            Some(resolve) => {
                identity = (id, seed);
                resolve(id, seed).map(Some)
            }
            None if (id, seed) == identity => Ok(None),
            None => Err(mismatch(identity, (id, seed))),
        })?;
        let read = src.position() - start;
        let table_crc = src.take_crc();
        src.resume_crc(crc32c::crc32c_combine(before, table_crc, read as usize));
        if read != len {
            return Err(invalid("a table's length is not the one recorded before it").into());
        }
        if let Some(h) = table.hasher {
            hasher = Some(h);
        }
        layouts.push(table.table.layout());
        check_shape(rate, layouts.iter().copied()).map_err(invalid)?;
        tables.push(table.table);
    }
    let computed = src.take_crc();
    let mut stored = [0; CHECKSUM_LEN];
    src.fill(&mut stored, src.position() + CHECKSUM_LEN as u64)?;
    check_checksum_value(u32::from_le_bytes(stored), computed)?;
    if flags != 0 {
        return Err(DecodeError::UnsupportedFlags {
            flags: u32::from(flags),
        }
        .into());
    }
    let Some(hasher) = hasher else {
        return Err(invalid("a chain has at least one table").into());
    };
    Ok(GrowableCuckooFilter::from_tables(tables, rate, hasher).map_err(invalid)?)
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
    let (flags, count, rate) = chain_header(header)?;
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

/// A chain header's flags, table count and false-positive rate, its version
/// checked (the magic is checked by the caller, the rest after the checksum).
fn chain_header(header: &[u8; CHAIN_HEADER_LEN]) -> Result<(u16, u32, f64), DecodeError> {
    let mut fields = Fields::new(header);
    let _magic: [u8; 8] = fields.bytes();
    let version = fields.u16();
    let flags = fields.u16();
    let count = fields.u32();
    let rate = f64::from_bits(fields.u64());
    check_version(version)?;
    Ok((flags, count, rate))
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
