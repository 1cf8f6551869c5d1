//! A growable filter's bytes: a header, each table in the table layout, a
//! checksum (see `docs/FORMAT.md`). In short:
//!
//! ```text
//! offset  size  field
//!      0     8  magic "LFCUCKCH"
//!      8     2  format version (2; 1 is still read)
//!     10     2  flags (0)
//!     12     4  table count T (1 to 33)
//!     16     8  false-positive rate the filter was built for (f64 bits)
//!     24        T times: a table's encoding, oldest first (version 1: each
//!               behind 8 bytes of its length)
//!      …     4  CRC-32C of every byte before it
//! ```
//!
//! Each table is read as a single filter's bytes are, the chain's shape
//! checked as each arrives against the rules growth follows
//! (`growable::chain`). `from_bytes` reads a byte string the way `read_from`
//! reads a stream, so that the two give the same answer for every input.

use std::io::{self, Read, Write};

use super::identity::{default_with_seed, exactly, id_of, mismatch};
use super::stream::{ReadError, Source};
use super::table::{read_table, write_table};
use super::{
    check_checksum_value, check_version, Fields, HasherIdentity, Summed, CHAIN_MAGIC, CHECKSUM_LEN,
    VERSION, VERSION_1,
};
use crate::error::DecodeError;
use crate::growable::{check_shape, check_table_count};
use crate::hasher::DefaultHashBuilder;
use crate::GrowableCuckooFilter;

/// Bytes before a growable filter's first table.
const CHAIN_HEADER_LEN: usize = 24;

impl<S: HasherIdentity> GrowableCuckooFilter<S> {
    /// The filter as bytes: a small header (magic `LFCUCKCH`, version, table
    /// count, false-positive rate) and each table, oldest first, in
    /// [`CuckooFilter::to_bytes`](crate::CuckooFilter::to_bytes)'s format,
    /// closed by a CRC-32C (see `docs/FORMAT.md`).
    ///
    /// On a live filter, a snapshot as
    /// [`CuckooFilter::to_bytes`](crate::CuckooFilter::to_bytes) takes one,
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
        let mut out = Vec::new();
        // A `Vec` takes every write.
        write_chain(self, &mut out).expect("writing to a Vec");
        out
    }

    /// Writes the filter to `writer` in [`to_bytes`](Self::to_bytes)'s
    /// format, each table read as it is written, as
    /// [`CuckooFilter::write_to`](crate::CuckooFilter::write_to) does (whose
    /// notes on writers and on errors hold here too): beyond the filter, a
    /// buffer of 512 KiB.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// for i in 0..100u32 {
    ///     f.insert(&i)?;
    /// }
    /// let mut bytes = Vec::new();
    /// f.write_to(&mut bytes)?;
    /// let g = GrowableCuckooFilter::read_from(&bytes[..])?;
    /// assert!((0..100u32).all(|i| g.contains(&i)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<X: Write>(&self, mut writer: X) -> io::Result<()> {
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
    /// a panic, and the same one [`read_from_with_hasher`](Self::read_from_with_hasher)
    /// gives for it: the bytes are read as that reads a stream. Only a chain
    /// that growth can produce is accepted (each table four times the one
    /// before, or twice as earlier versions grew, of the width the
    /// false-positive budget gives it), checked as each table's header
    /// arrives; each table then costs at most 1.5 times its bytes plus about
    /// 2.5 KB, and the summary of the older tables under 0.6 times the input
    /// for a chain grown by four (2.7 for one that doubled; docs/FORMAT.md).
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

/// Writes `f`'s encoding, front to back: the header, then each table of the
/// chain current when it starts, oldest first, read as a snapshot, then the
/// checksum of it all.
fn write_chain<S: HasherIdentity, X: Write + ?Sized>(
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
        let mut out = Summed::new(out);
        out.write_all(&head)?;
        for t in tables {
            write_table(t, id_of::<S>(), seed, 0, &mut out)?;
        }
        out.close().map(drop)
    })
}

/// Reads a chain from `src`: the header, each table (each checked as
/// `table::read_table` checks one, in version 1 behind its length, the
/// chain's shape checked as each arrives), then the checksum over it all,
/// then the flags.
fn read_chain<S, R: Read>(
    src: &mut Source<R>,
    resolve: impl FnOnce(u64, u64) -> Result<S, DecodeError>,
) -> Result<GrowableCuckooFilter<S>, ReadError> {
    let least = (CHAIN_HEADER_LEN + CHECKSUM_LEN) as u64;
    let mut head = [0; CHAIN_HEADER_LEN];
    src.header(&mut head, &CHAIN_MAGIC, least)?;
    let (version, flags, count, rate) = chain_header(&head)?;
    let invalid = |reason| DecodeError::InvalidChain { reason };
    check_table_count(count).map_err(invalid)?;
    let mut tables = Vec::with_capacity(count as usize);
    let mut layouts = Vec::with_capacity(count as usize);
    let mut resolve = Some(resolve);
    let mut hasher = None;
    let mut identity = (0, 0);
    for _ in 0..count {
        let mut len = None;
        if version == VERSION_1 {
            let mut field = [0; 8];
            src.fill(&mut field, src.position() + 8 + least)?;
            len = Some(u64::from_le_bytes(field));
        }
        let start = src.position();
        // The running checksum goes on over the table, whose own checksum
        // `read_table` takes from the same reader.
        let before = src.take_crc();
        let table = read_table(src, Some(version), |id, seed| match resolve.take() {
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
        if len.is_some_and(|len| len != read) {
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

/// A chain header's version, flags, table count and false-positive rate, its
/// version checked (the magic is checked by the caller, the rest after the
/// checksum).
fn chain_header(header: &[u8; CHAIN_HEADER_LEN]) -> Result<(u16, u16, u32, f64), DecodeError> {
    let mut fields = Fields::new(header);
    let _magic: [u8; 8] = fields.bytes();
    let version = fields.u16();
    let flags = fields.u16();
    let count = fields.u32();
    let rate = f64::from_bits(fields.u64());
    check_version(version)?;
    Ok((version, flags, count, rate))
}

/// Decodes a chain from a byte string: read as a stream ([`read_chain`]),
/// which must end where the bytes do. The hasher is resolved from the first
/// table's recorded identity (by `resolve`, as for a single filter); every
/// later table must record the same identity.
fn decode_chain<S>(
    bytes: &[u8],
    resolve: impl FnOnce(u64, u64) -> Result<S, DecodeError>,
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let mut src = Source::new(bytes);
    let filter = read_chain(&mut src, resolve).map_err(|e| match e {
        ReadError::Decode(e) => e,
        // A byte slice never fails to read; were it to, the input was
        // not all there.
        ReadError::Io(_) => DecodeError::Truncated {
            expected: bytes.len() as u64 + 1,
            actual: bytes.len() as u64,
        },
    })?;
    let (expected, actual) = (src.position(), bytes.len() as u64);
    if actual > expected {
        return Err(DecodeError::TrailingBytes { expected, actual });
    }
    Ok(filter)
}
