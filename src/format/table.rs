//! A filter's bytes: a header, the table's slots, a checksum. In short (the
//! rest of `docs/FORMAT.md`'s description):
//!
//! ```text
//! offset  size  field
//!      0     8  magic "LFCUCKOO"
//!      8     2  format version (1)
//!     10     1  fingerprint bits (8, 9 or 17 = semi-sorted, 10, 12, 16, 21, 32)
//!     11     1  slots per bucket (4)
//!     12     4  flags (0)
//!     16     8  hasher id     (HasherIdentity::ID; 1 = DefaultHashBuilder)
//!     24     8  hasher seed   (HasherIdentity::seed)
//!     32     8  bucket count  (even, 2 to 2^32)
//!     40     8  item count    (= nonzero slots in the table)
//!     48     8  table words W (= ceil(buckets · 4 / s), s = slots per word)
//!     56   8·W  the table words, LE: s = floor(64 / bits) slots each (4 at
//!               17 bits, 8 at 9), from bit 0
//!               up, slot k of bucket b in lane (4b + k) of the whole table,
//!               0 = empty; bits outside every slot are 0. At 17 bits each
//!               word is one semi-sorted bucket (src/semisorted.rs), at 9
//!               bits each 32-bit half is one (bucket b: half b % 2 of word
//!               b / 2, 8 slots a word), as the codec writes them
//! 56+8·W     4  CRC-32C of bytes [0, 56 + 8·W)
//! ```
//!
//! Decoding checks every field against the others and against the input's
//! length before it allocates anything, then the checksum, then the table's
//! contents; any byte string yields a filter or a [`DecodeError`], never a
//! panic. An accepted input is canonical: encoding the decoded filter gives the
//! same bytes back.

use std::io::{self, Cursor, Seek, SeekFrom, Write};

use super::identity::{default_with_seed, exactly, id_of};
use super::stream::{ReadError, Source};
use super::{
    check_checksum, check_checksum_value, check_magic, check_version, Fields, HasherIdentity,
    CHECKSUM_LEN, TABLE_MAGIC, VERSION,
};
use crate::error::DecodeError;
use crate::fingerprint::{FingerprintBits, Width};
use crate::hasher::DefaultHashBuilder;
use crate::table::{self, dispatch, valid_bucket_count, with_width, AnyTable, Table};
use crate::CuckooFilter;

/// Bytes before the table.
const HEADER_LEN: usize = 56;

impl<S: HasherIdentity> CuckooFilter<S> {
    /// The filter as bytes, in a versioned, little-endian, checksummed format
    /// that [`from_bytes`](CuckooFilter::from_bytes) (or
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)) loads on any
    /// platform. It records the fingerprint width, the bucket count, the
    /// hasher's [identity](HasherIdentity), the item count and every slot; its
    /// length is `60 + 8 · ceil(bucket_count · 4 / s)` bytes, `s` the
    /// [slots per word](FingerprintBits::slots_per_word): about the table's
    /// memory.
    ///
    /// **On a live filter** the bytes are a snapshot that keeps every item
    /// present for the whole of it: an item whose insert returned before
    /// `to_bytes` began, and that no `remove` or [`clear`](Self::clear) began
    /// to take before it returned, is in the filter decoded from the bytes,
    /// whatever other threads do meanwhile (relocations included). Nothing
    /// waits: writers go on, and relocations that would carry an item across
    /// the point the reading has reached are undone and made another way. An
    /// item inserted or removed meanwhile may be in the bytes or not (an item
    /// removed and inserted again, twice), and an item whose relocation was
    /// under way at the very instant the reading passed its buckets may be in
    /// them twice, as the table held it then. The recorded item count is the
    /// number of fingerprints written, so the bytes always decode, and with no
    /// operation in flight they are exact. See [`write_to`](Self::write_to)
    /// to write a large filter without this copy in memory.
    ///
    /// The bytes record the hasher's seed in the clear: do not publish the
    /// bytes of a filter whose seed must stay secret (see
    /// [`DefaultHashBuilder`]).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DEFAULT_SEED};
    ///
    /// let f = CuckooFilter::builder().capacity(1000).seed(DEFAULT_SEED).build()?;
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
        encode(&self.table, id_of::<S>(), self.hasher.seed())
    }

    /// Writes the filter to `writer` in [`to_bytes`](Self::to_bytes)'s
    /// format, reading the table as it writes: beyond the filter it takes a
    /// buffer of 512 KiB, not a copy of the table. On a live filter it is the
    /// snapshot `to_bytes` describes.
    ///
    /// The writer must seek: the format records the item count in its
    /// header, before the table, and the count of a table that other threads
    /// change is known only once it is read, so `write_to` writes the header,
    /// then the table, then goes back to fill in the count (and forward again
    /// to the end). A [`File`](std::fs::File), a
    /// [`BufWriter`](std::io::BufWriter) of one, or a
    /// [`Cursor`](std::io::Cursor) will do; for a stream that cannot seek,
    /// write [`to_bytes`](Self::to_bytes). On an error the bytes written so
    /// far are not a filter: write to a temporary file and rename it, as the
    /// dedup server example does.
    ///
    /// ```
    /// use std::io::{BufReader, BufWriter};
    /// use lockfree_cuckoo_filter::CuckooFilter;
    ///
    /// let f = CuckooFilter::with_capacity(1000);
    /// f.insert("apple")?;
    /// let path = std::env::temp_dir().join(format!("doc-write-to-{}", std::process::id()));
    /// f.write_to(BufWriter::new(std::fs::File::create(&path)?))?;
    /// let g = CuckooFilter::read_from(BufReader::new(std::fs::File::open(&path)?))?;
    /// assert!(g.contains("apple") && g.len() == 1);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<X: Write + Seek>(&self, mut writer: X) -> io::Result<()> {
        write_table(&self.table, id_of::<S>(), self.hasher.seed(), &mut writer)?;
        writer.flush()
    }

    /// Loads a filter saved by [`to_bytes`](Self::to_bytes) with `hasher`,
    /// which must have the [identity](HasherIdentity) recorded in the bytes
    /// (the same id and seed); [`DecodeError::HasherMismatch`] otherwise.
    ///
    /// Any byte string gives a filter or a [`DecodeError`] that says what is
    /// wrong, never a panic; memory is allocated only once the input's length
    /// is known to match its header: at most 1.5 times that length (the table
    /// and the counters beside it) plus about 2.2 KB (docs/FORMAT.md).
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
    /// is known to match its header: at most 1.5 times that length (the table
    /// and the counters beside it) plus about 2.2 KB (docs/FORMAT.md). The
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

/// Lanes of `word` that hold a fingerprint.
#[inline]
fn occupied<W: Width>(word: u64) -> u64 {
    u64::from(W::occupied_in(word))
}

/// The bytes of `table`, recording the hasher `hasher_id` with `seed`.
pub(super) fn encode(table: &AnyTable, hasher_id: u64, seed: u64) -> Vec<u8> {
    let mut out = Cursor::new(Vec::with_capacity(encoded_len(table) as usize));
    // A `Vec` takes every write: the only error a cursor over one can give
    // is a position past `u64::MAX`.
    write_table(table, hasher_id, seed, &mut out).expect("writing to a Vec");
    out.into_inner()
}

/// The bytes of a table's encoding: header, words, checksum.
pub(super) fn encoded_len(table: &AnyTable) -> u64 {
    encoded_len_of(table.word_count() as u64)
}

/// Writes `table`'s encoding to `out`, reading the table as a snapshot (see
/// `table::snapshot`), and returns the CRC-32C of all the bytes written (the
/// chain's checksum covers them). The item count is known once the table is
/// read: the header goes out with 0 there, and is mended by seeking back.
pub(super) fn write_table<X: Write + Seek>(
    table: &AnyTable,
    hasher_id: u64,
    seed: u64,
    out: &mut X,
) -> io::Result<u32> {
    dispatch!(table, t => write_table_of(t, hasher_id, seed, out))
}

fn write_table_of<W: Width, X: Write + Seek>(
    t: &Table<W>,
    hasher_id: u64,
    seed: u64,
    out: &mut X,
) -> io::Result<u32> {
    let start = out.stream_position()?;
    out.write_all(&header::<W>(t, hasher_id, seed, 0))?;
    let mut body_crc = 0;
    let mut bytes = Vec::new();
    let items = t.read_snapshot(|words| {
        bytes.resize(8 * words.len(), 0);
        for (b, w) in bytes.chunks_exact_mut(8).zip(words) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        body_crc = crc32c::crc32c_append(body_crc, &bytes);
        out.write_all(&bytes)
    })?;
    let head = header::<W>(t, hasher_id, seed, items);
    let body_len = 8 * t.word_count();
    let crc = crc32c::crc32c_combine(crc32c::crc32c(&head), body_crc, body_len);
    let trailer = crc.to_le_bytes();
    out.write_all(&trailer)?;
    let end = out.stream_position()?;
    out.seek(SeekFrom::Start(start + ITEMS_AT as u64))?;
    out.write_all(&items.to_le_bytes())?;
    out.seek(SeekFrom::Start(end))?;
    Ok(crc32c::crc32c_append(crc, &trailer))
}

/// Where the item count lies in the header.
const ITEMS_AT: usize = 40;

/// The header of `t`'s encoding with `items` fingerprints.
fn header<W: Width>(t: &Table<W>, hasher_id: u64, seed: u64, items: u64) -> [u8; HEADER_LEN] {
    let mut out = [0; HEADER_LEN];
    let fields: [&[u8]; 10] = [
        &TABLE_MAGIC,
        &VERSION.to_le_bytes(),
        &[W::BITS as u8],
        &[W::SLOTS as u8],
        &0u32.to_le_bytes(),
        &hasher_id.to_le_bytes(),
        &seed.to_le_bytes(),
        &t.buckets().to_le_bytes(),
        &items.to_le_bytes(),
        &(t.word_count() as u64).to_le_bytes(),
    ];
    let mut at = 0;
    for field in fields {
        out[at..at + field.len()].copy_from_slice(field);
        at += field.len();
    }
    debug_assert_eq!(
        (at, &out[ITEMS_AT..ITEMS_AT + 8]),
        (HEADER_LEN, &items.to_le_bytes()[..])
    );
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

/// Checks everything that does not need the table's contents.
fn parse(bytes: &[u8]) -> Result<Parsed<'_>, DecodeError> {
    let actual = bytes.len() as u64;
    check_magic(bytes, &TABLE_MAGIC)?;
    let Some(header) = bytes.first_chunk::<HEADER_LEN>() else {
        return Err(DecodeError::Truncated {
            expected: (HEADER_LEN + CHECKSUM_LEN) as u64,
            actual,
        });
    };
    let h = check_header(header)?;
    let expected = encoded_len_of(h.words);
    if actual < expected {
        return Err(DecodeError::Truncated { expected, actual });
    }
    if actual > expected {
        return Err(DecodeError::TrailingBytes { expected, actual });
    }
    // `actual == expected`, more than the checksum: the split always succeeds.
    let Some((content, stored)) = bytes.split_last_chunk::<CHECKSUM_LEN>() else {
        return Err(DecodeError::Truncated { expected, actual });
    };
    check_checksum(content, stored)?;
    if h.flags != 0 {
        return Err(DecodeError::UnsupportedFlags { flags: h.flags });
    }
    Ok(Parsed {
        bits: h.bits,
        hasher_id: h.hasher_id,
        seed: h.seed,
        buckets: h.buckets,
        items: h.items,
        body: &content[HEADER_LEN..],
    })
}

/// A header's fields, its layout checked ([`check_header`]).
struct Header {
    bits: FingerprintBits,
    flags: u32,
    hasher_id: u64,
    seed: u64,
    buckets: u64,
    items: u64,
    words: u64,
}

/// Reads a header and checks the fields that fix the layout (version, width,
/// bucket size and count, word count) against each other; the magic bytes
/// are checked by the caller, the flags after the checksum.
fn check_header(header: &[u8; HEADER_LEN]) -> Result<Header, DecodeError> {
    let mut fields = Fields::new(header);
    let _magic: [u8; 8] = fields.bytes();
    let version = fields.u16();
    let bits = fields.u8();
    let slots = fields.u8();
    let flags = fields.u32();
    let hasher_id = fields.u64();
    let seed = fields.u64();
    let buckets = fields.u64();
    let items = fields.u64();
    let words = fields.u64();
    check_version(version)?;
    // The width and the bucket size together name the layout (12 bits
    // with five slots is the plain layout, with six the ranked one).
    let Some(bits) = FingerprintBits::from_layout(u32::from(bits), u32::from(slots)) else {
        return Err(match FingerprintBits::from_bits(u32::from(bits)) {
            None => DecodeError::UnknownFingerprintBits { bits },
            Some(_) => DecodeError::UnsupportedBucketSize { bits, slots },
        });
    };
    if !valid_bucket_count(buckets) {
        return Err(DecodeError::InvalidBucketCount { buckets });
    }
    let expected_words = table::words_for(bits.slots_per_bucket(), bits.slots_per_word(), buckets);
    if words != expected_words {
        return Err(DecodeError::WordCountMismatch {
            expected: expected_words,
            found: words,
        });
    }
    Ok(Header {
        bits,
        flags,
        hasher_id,
        seed,
        buckets,
        items,
        words,
    })
}

/// Bytes of an encoding of `words` table words. At most 2^33 words (2^32
/// buckets of 32-bit slots): no overflow.
fn encoded_len_of(words: u64) -> u64 {
    (HEADER_LEN + CHECKSUM_LEN) as u64 + 8 * words
}

/// The fingerprint width and bucket count an encoded table declares, once its
/// layout, length and checksum are checked: nothing is allocated.
pub(super) fn layout(bytes: &[u8]) -> Result<(FingerprintBits, u64), DecodeError> {
    parse(bytes).map(|p| (p.bits, p.buckets))
}

/// Decodes a filter, its hasher given by `hasher` from the recorded identity
/// (checked after the header's layout, length and checksum, before the
/// table's contents).
pub(super) fn decode<S>(
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

/// The index of the first word of `body` with a bit set outside its slots,
/// above its lanes. (Every lane of every word is a slot: buckets fill whole
/// words or half words, and a table has an even number of buckets.)
fn nonzero_padding<W: Width>(body: &[u8]) -> Option<u64> {
    body.chunks_exact(8)
        .position(|c| word_at(c) & !W::USED != 0)
        .map(|i| i as u64)
}

/// Checks the table's contents, then allocates and fills it.
fn decode_table<W: Width>(p: &Parsed<'_>) -> Result<Table<W>, DecodeError> {
    if W::SORTED {
        if let Some(word) = p
            .body
            .chunks_exact(8)
            .position(|c| !W::valid_word(word_at(c)))
        {
            return Err(DecodeError::InvalidBucket { word: word as u64 });
        }
    } else if let Some(word) = nonzero_padding::<W>(p.body) {
        return Err(DecodeError::NonzeroPadding { word });
    }
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

/// Reads one table's encoding from `src` (its first byte next), checking it
/// as [`decode`] does, in the same order: layout, length (the input ending
/// early), checksum, flags, hasher, contents. The hasher comes from the
/// recorded identity by `hasher`. Memory is taken as the words arrive (see
/// `Table::from_pieces`).
pub(super) fn read_table<S, R: std::io::Read>(
    src: &mut Source<R>,
    hasher: impl FnOnce(u64, u64) -> Result<S, DecodeError>,
) -> Result<CuckooFilter<S>, ReadError> {
    let start = src.position();
    let mut head = [0; HEADER_LEN];
    src.header(
        &mut head,
        &TABLE_MAGIC,
        start + (HEADER_LEN + CHECKSUM_LEN) as u64,
    )?;
    let h = check_header(&head)?;
    let expected = start + encoded_len_of(h.words);
    let (table, fault) = with_width!(h.bits, W, wrap => {
        let (t, fault) = read_words::<W, R>(src, &h, expected)?;
        (wrap(t), fault)
    });
    let content_crc = src.take_crc();
    let mut stored = [0; CHECKSUM_LEN];
    src.fill(&mut stored, expected)?;
    check_checksum_value(u32::from_le_bytes(stored), content_crc)?;
    // The caller's running checksum continues over this table's bytes.
    src.resume_crc(crc32c::crc32c_append(content_crc, &stored));
    if h.flags != 0 {
        return Err(DecodeError::UnsupportedFlags { flags: h.flags }.into());
    }
    let hasher = hasher(h.hasher_id, h.seed)?;
    if let Some(fault) = fault {
        return Err(fault.into());
    }
    Ok(CuckooFilter { table, hasher })
}

/// The words of a table with header `h`, read from `src` into a table as they
/// arrive, and the first fault in its contents, if any (reported only after
/// the checksum, as `decode` orders its checks). The item count is set if
/// the contents are right.
fn read_words<W: Width, R: std::io::Read>(
    src: &mut Source<R>,
    h: &Header,
    expected: u64,
) -> Result<(Table<W>, Option<DecodeError>), ReadError> {
    let mut at = 0u64;
    let mut found = 0u64;
    let mut fault = None;
    let mut bytes = Vec::new();
    let table = Table::<W>::from_pieces(h.buckets, |piece: &mut [u64]| {
        bytes.resize(8 * piece.len(), 0);
        src.fill(&mut bytes, expected)?;
        for (w, chunk) in piece.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = word_at(chunk);
            found += occupied::<W>(*w);
            if fault.is_none() {
                if W::SORTED && !W::valid_word(*w) {
                    fault = Some(DecodeError::InvalidBucket { word: at });
                } else if !W::SORTED && *w & !W::USED != 0 {
                    fault = Some(DecodeError::NonzeroPadding { word: at });
                }
            }
            at += 1;
        }
        Ok::<(), ReadError>(())
    })?;
    let table = table?;
    if fault.is_none() && found != h.items {
        fault = Some(DecodeError::ItemCountMismatch {
            recorded: h.items,
            found,
        });
    }
    if fault.is_none() {
        // `found` fingerprints fit in memory: they are in the table.
        table.set_len(found as usize);
    }
    Ok((table, fault))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_packed_into_words_in_order() {
        // Slot k of bucket b is lane s·b + k of the table (s slots a
        // bucket): lane L mod (64 / f) of word L / (64 / f), from bit 0 up.
        for bits in FingerprintBits::ALL.into_iter().filter(|b| {
            *b != FingerprintBits::Bits17 && *b != FingerprintBits::Bits9 && !b.is_ranked()
        }) {
            let f = CuckooFilter::with_buckets(6, bits, DefaultHashBuilder::default()).unwrap();
            let fp = 0x25a; // fits every width but 8
            let fp = if bits.bits() == 8 { 0x5a } else { fp };
            for b in 0..6 {
                f.insert_hash(f.table.hash_for(b, fp)).unwrap();
            }
            let bytes = f.to_bytes();
            let lanes = 64 / bits.bits() as usize;
            let s = bits.slots_per_bucket() as usize;
            let body = &bytes[HEADER_LEN..bytes.len() - 4];
            assert_eq!(body.len(), 8 * (6 * s).div_ceil(lanes), "{bits:?}");
            let lane = |l: usize| {
                let w = word_at(&body[8 * (l / lanes)..8 * (l / lanes) + 8]);
                (w >> ((l % lanes) as u32 * bits.bits())) & ((1 << bits.bits()) - 1)
            };
            let held: Vec<u64> = (0..6 * s).map(lane).collect();
            let nonzero = held.iter().filter(|&&v| v != 0).count();
            assert_eq!(nonzero, 6, "{bits:?}");
            for b in 0..6 {
                assert!(
                    held[s * b..s * b + s].contains(&u64::from(fp)) || {
                        let alt = f.table.position(f.table.hash_for(b as u64, fp)).i2 as usize;
                        held[s * alt..s * alt + s].contains(&u64::from(fp))
                    },
                    "{bits:?} bucket {b}"
                );
            }
            assert_eq!(CuckooFilter::from_bytes(&bytes).unwrap().to_bytes(), bytes);
        }
    }

    #[test]
    fn semi_sorted_words_must_be_canonical() {
        // The top 8 bits of a bucket's 12-bit code set (a code of at least
        // 4080, unused): at 9 bits, bits 24..32 of its half (byte 3 of the
        // word for bucket 0, byte 7 for bucket 1, both in word 0); at 17
        // bits, bits 56..64 of its word.
        for (bits, damage) in [
            (FingerprintBits::Bits9, [(3usize, 0u64), (7, 0)]),
            (FingerprintBits::Bits17, [(7, 0), (15, 1)]),
        ] {
            let f = CuckooFilter::with_buckets(4, bits, DefaultHashBuilder::default()).unwrap();
            let bytes = f.to_bytes();
            for (bucket, (at, word)) in damage.into_iter().enumerate() {
                let mut damaged = bytes.clone();
                damaged[HEADER_LEN + at] = 0xff;
                let n = damaged.len();
                let crc = crc32c::crc32c(&damaged[..n - 4]);
                damaged[n - 4..].copy_from_slice(&crc.to_le_bytes());
                assert_eq!(
                    CuckooFilter::from_bytes(&damaged).unwrap_err(),
                    DecodeError::InvalidBucket { word },
                    "{bits:?} bucket {bucket}"
                );
            }
        }
    }

    #[test]
    fn ranked_words_must_be_canonical_and_round_trip() {
        for bits in FingerprintBits::ALL.into_iter().filter(|b| b.is_ranked()) {
            let f = CuckooFilter::with_buckets(4, bits, DefaultHashBuilder::default()).unwrap();
            for i in 0..12u64 {
                f.insert(&i).unwrap();
            }
            let bytes = f.to_bytes();
            let g = CuckooFilter::from_bytes(&bytes).unwrap();
            assert_eq!(g.fingerprint_bits(), bits);
            assert!((0..12u64).all(|i| g.contains(&i)));
            assert_eq!(g.to_bytes(), bytes);
            // The top byte of word 2 all ones: a rank past the multisets
            // (at least 2^15 − 2^7, 2^16 − 2^8 and 2^14 − 2^6 against
            // 31 824, 54 264 and 15 504).
            let mut damaged = bytes.clone();
            damaged[HEADER_LEN + 2 * 8 + 7] = 0xff;
            let n = damaged.len();
            let crc = crc32c::crc32c(&damaged[..n - 4]);
            damaged[n - 4..].copy_from_slice(&crc.to_le_bytes());
            assert_eq!(
                CuckooFilter::from_bytes(&damaged).unwrap_err(),
                DecodeError::InvalidBucket { word: 2 },
                "{bits:?}"
            );
        }
        // The width byte alone does not name a layout: 12 bits with six
        // slots is the ranked layout, with five the plain one, with four none.
        let f =
            CuckooFilter::with_buckets(2, FingerprintBits::Ranked6, DefaultHashBuilder::default())
                .unwrap();
        let mut bytes = f.to_bytes();
        assert_eq!((bytes[10], bytes[11]), (12, 6));
        bytes[11] = 4;
        let n = bytes.len();
        let crc = crc32c::crc32c(&bytes[..n - 4]);
        bytes[n - 4..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            CuckooFilter::from_bytes(&bytes).unwrap_err(),
            DecodeError::UnsupportedBucketSize { bits: 12, slots: 4 }
        );
    }

    #[test]
    fn padding_must_be_zero() {
        for bits in FingerprintBits::ALL.into_iter().filter(|b| {
            *b != FingerprintBits::Bits17 && *b != FingerprintBits::Bits9 && !b.is_ranked()
        }) {
            let f = CuckooFilter::with_buckets(2, bits, DefaultHashBuilder::default()).unwrap();
            let bytes = f.to_bytes();
            let body_len = bytes.len() - HEADER_LEN - 4;
            // Every bit of the body that is in no slot of the two buckets.
            let lanes = 64 / bits.bits() as usize;
            let slots = 2 * bits.slots_per_bucket() as usize;
            for bit in 0..body_len * 8 {
                let (word, at) = (bit / 64, bit % 64);
                let f_bits = bits.bits() as usize;
                let in_slot = at < lanes * f_bits && (word * lanes + at / f_bits) < slots;
                let mut damaged = bytes.clone();
                damaged[HEADER_LEN + bit / 8] |= 1 << (bit % 8);
                let n = damaged.len();
                let crc = crc32c::crc32c(&damaged[..n - 4]);
                damaged[n - 4..].copy_from_slice(&crc.to_le_bytes());
                let got = CuckooFilter::from_bytes(&damaged);
                if in_slot {
                    assert!(
                        matches!(got, Err(DecodeError::ItemCountMismatch { .. })),
                        "{bits:?} {bit}"
                    );
                } else {
                    assert_eq!(
                        got.unwrap_err(),
                        DecodeError::NonzeroPadding { word: word as u64 },
                        "{bits:?} {bit}"
                    );
                }
            }
        }
    }

    #[test]
    fn byte_wide_slots_are_laid_out_in_order() {
        // For 8, 16 and 32 bits the words are the slots, each bits / 8 bytes
        // LE: slot k of bucket b at byte offset 56 + (4b + k) · bits / 8,
        // the layout of the first version of this format.
        for bits in FingerprintBits::ALL
            .into_iter()
            .filter(|b| b.bits() % 8 == 0)
        {
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
