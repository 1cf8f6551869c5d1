//! A filter's bytes: a header, the table's slots, the moved list, the item
//! count, a checksum. In short (the rest of `docs/FORMAT.md`'s description):
//!
//! ```text
//! offset  size  field
//!      0     8  magic "LFCUCKOO"
//!      8     2  format version (2; 1 is still read)
//!     10     1  fingerprint bits (8, 9 or 17 = semi-sorted, 10, 12, 16, 21,
//!               32; ranked: 10, 11, 12, 14, 23)
//!     11     1  slots per bucket (6 at 10 and 21 bits, 5 at 12, else 4;
//!               ranked: 8, 7, 6, 5, 3 by the bits above)
//!     12     4  flags (0, or bit 0: the table is sized for a load other
//!               than its layout's full load)
//!     16     8  hasher id     (HasherIdentity::ID; 1 = DefaultHashBuilder)
//!     24     8  hasher seed   (HasherIdentity::seed)
//!     32     8  bucket count  (even, 2 to 2^32)
//!     40     8  0, or with flag bit 0 the load the table was sized for,
//!               in thousandths (version 1: the item count, and no moved
//!               list below)
//!     48     8  table words W (= ceil(buckets · slots per bucket / s))
//!     56   8·W  the table words, LE: s = floor(64 / bits) slots each (4 at
//!               17 bits, 8 at 9), from bit 0 up, 0 = empty; bits outside
//!               every slot are 0. At 17 bits each word is one semi-sorted
//!               bucket (src/semisorted.rs), at 9 bits each 32-bit half is
//!               one, as the codec writes them
//! 56+8·W     8  moved entries M
//! 64+8·W   8·M  M times: bucket (u32), fingerprint (u32)
//!      …     8  item count (= nonzero slots + M)
//!      …     4  CRC-32C of every byte before it
//! ```
//!
//! The moved list holds the fingerprints a snapshot read in the table's
//! stash (`table::stash`: items inserted while a snapshot ran that no path
//! could place), as (a bucket of the pair, fingerprint); the decoder puts
//! them into the table as an insert would, or back into the stash. With the
//! count after the table, an encoding is written front to back in one pass,
//! to any `Write`.
//!
//! Decoding checks every field against the others and against the input's
//! length before it allocates anything, then the checksum, then the table's
//! contents; any byte string yields a filter or a [`DecodeError`], never a
//! panic. An accepted input with an empty moved list is canonical: encoding
//! the decoded filter gives the same bytes back.

use std::io::{self, Write};

use super::identity::{default_with_seed, exactly, id_of};
use super::stream::{ReadError, Source};
use super::{
    check_checksum, check_checksum_value, check_magic, check_version, Fields, HasherIdentity,
    Summed, CHECKSUM_LEN, TABLE_MAGIC, VERSION, VERSION_1,
};
use crate::builder::MIN_LOAD;
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
    /// hasher's [identity](HasherIdentity), the load the table was sized for
    /// (and so the [capacity](Self::capacity)), the item count and every
    /// slot; its
    /// length is `76 + 8 · ceil(bucket_count · c / s)` bytes (and 8 more per
    /// entry of the moved list of a live filter's snapshot), `c` the
    /// [slots per bucket](FingerprintBits::slots_per_bucket) and `s` the
    /// [slots per word](FingerprintBits::slots_per_word): about the table's
    /// memory.
    ///
    /// **On a live filter** the bytes are a snapshot that keeps every item
    /// present for the whole of it: an item whose insert returned before
    /// `to_bytes` began, and that no `remove` or [`clear`](Self::clear) began
    /// to take before it returned, is in the filter decoded from the bytes,
    /// whatever other threads do meanwhile (relocations included). Nothing
    /// waits: writers go on, relocations that would carry an item across
    /// the point the reading has reached are undone and made another way,
    /// and an insert that then finds no way keeps its item in a small stash
    /// beside the table (written after it), so that no insert is refused
    /// because a snapshot runs. An
    /// item inserted or removed meanwhile may be in the bytes or not (an item
    /// removed and inserted again, twice), and an item whose relocation was
    /// under way at the very instant the reading passed its buckets may be in
    /// them twice, as the table held it then: the decoded filter's `len()`
    /// then counts it twice. The recorded item count is the number of
    /// fingerprints written, so the bytes always decode, and with no
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
        encode(
            &self.table,
            id_of::<S>(),
            self.hasher.seed(),
            self.sizing_field(),
        )
    }

    /// Writes the filter to `writer` in [`to_bytes`](Self::to_bytes)'s
    /// format, reading the table as it writes: beyond the filter it takes a
    /// buffer of 512 KiB, not a copy of the table. On a live filter it is the
    /// snapshot `to_bytes` describes.
    ///
    /// Any [`Write`] will do: a file, a socket, a pipe, a compressor, a
    /// hashing writer. The bytes go out front to back, once; the item count
    /// follows the table. On an error the bytes written so far are not a
    /// filter: write to a temporary file and rename it, as the filter
    /// server does.
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
    ///
    /// // No need to seek: a `Vec`, or a pipe, takes the same bytes.
    /// let mut bytes = Vec::new();
    /// f.write_to(&mut bytes)?;
    /// assert_eq!(bytes, f.to_bytes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<X: Write>(&self, mut writer: X) -> io::Result<()> {
        let (id, seed) = (id_of::<S>(), self.hasher.seed());
        write_table(&self.table, id, seed, self.sizing_field(), &mut writer)?;
        writer.flush()
    }

    /// Loads a filter saved by [`to_bytes`](Self::to_bytes) with `hasher`,
    /// which must have the [identity](HasherIdentity) recorded in the bytes
    /// (the same id and seed); [`DecodeError::HasherMismatch`] otherwise.
    ///
    /// Any byte string gives a filter or a [`DecodeError`] that says what is
    /// wrong, never a panic; memory is allocated only once the input's length
    /// is known to match its header: at most 1.5 times that length (the table
    /// and the counters beside it) plus about 2.5 KB (docs/FORMAT.md).
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
    /// and the counters beside it) plus about 2.5 KB (docs/FORMAT.md). The
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

/// The bytes of `table`, recording the hasher `hasher_id` with `seed` and
/// the load it was sized for (`sizing`: 0 for its layout's full load).
pub(super) fn encode(table: &AnyTable, hasher_id: u64, seed: u64, sizing: u64) -> Vec<u8> {
    let len = HEADER_LEN + TRAILER_LEN + CHECKSUM_LEN + 8 * table.word_count();
    let mut out = Vec::with_capacity(len);
    // A `Vec` takes every write.
    write_table(table, hasher_id, seed, sizing, &mut out).expect("writing to a Vec");
    out
}

/// Writes `table`'s encoding to `out`, front to back, reading the table as a
/// snapshot (see `table::snapshot`): the header, the words, then what the
/// reading found (the moved list and the item count), then the checksum.
/// `sizing` is the load the table was sized for, in thousandths, or 0 for
/// its layout's full load (always, in a growable filter's chain).
pub(super) fn write_table<X: Write + ?Sized>(
    table: &AnyTable,
    hasher_id: u64,
    seed: u64,
    sizing: u64,
    out: &mut X,
) -> io::Result<()> {
    dispatch!(table, t => write_table_of(t, hasher_id, seed, sizing, out))
}

fn write_table_of<W: Width, X: Write + ?Sized>(
    t: &Table<W>,
    hasher_id: u64,
    seed: u64,
    sizing: u64,
    out: &mut X,
) -> io::Result<()> {
    let mut out = Summed::new(out);
    out.write_all(&header::<W>(t, hasher_id, seed, sizing))?;
    let mut bytes = Vec::new();
    let reading = t.read_snapshot(|words| {
        bytes.resize(8 * words.len(), 0);
        for (b, w) in bytes.chunks_exact_mut(8).zip(words) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        out.write_all(&bytes)
    })?;
    // The moved list: the stash's entries (`table::stash`).
    let mut tail = Vec::with_capacity(TRAILER_LEN + 8 * reading.stashed.len());
    tail.extend_from_slice(&(reading.stashed.len() as u64).to_le_bytes());
    for &(bucket, fp) in &reading.stashed {
        tail.extend_from_slice(&bucket.to_le_bytes());
        tail.extend_from_slice(&fp.to_le_bytes());
    }
    tail.extend_from_slice(&reading.items.to_le_bytes());
    out.write_all(&tail)?;
    out.close().map(drop)
}

/// Bytes of a version-2 trailer besides its moved entries: their number and
/// the item count.
const TRAILER_LEN: usize = 16;

/// The flag bit that says bytes 40 to 48 of a version-2 header hold the
/// load, in thousandths, the table was sized for, other than its layout's
/// full load; without it they are 0 and the table was sized for that full
/// load.
const SIZED: u32 = 1;

/// The header of `t`'s encoding (version 2: where version 1 has the item
/// count, 0, or with the [`SIZED`] flag the load `sizing` if it is not 0).
fn header<W: Width>(t: &Table<W>, hasher_id: u64, seed: u64, sizing: u64) -> [u8; HEADER_LEN] {
    let mut out = [0; HEADER_LEN];
    let flags = if sizing == 0 { 0 } else { SIZED };
    let fields: [&[u8]; 10] = [
        &TABLE_MAGIC,
        &VERSION.to_le_bytes(),
        &[W::BITS as u8],
        &[W::SLOTS as u8],
        &flags.to_le_bytes(),
        &hasher_id.to_le_bytes(),
        &seed.to_le_bytes(),
        &t.buckets().to_le_bytes(),
        &sizing.to_le_bytes(),
        &(t.word_count() as u64).to_le_bytes(),
    ];
    let mut at = 0;
    for field in fields {
        out[at..at + field.len()].copy_from_slice(field);
        at += field.len();
    }
    debug_assert_eq!(at, HEADER_LEN);
    out
}

/// An input whose layout, length and checksum are right.
struct Parsed<'a> {
    bits: FingerprintBits,
    hasher_id: u64,
    seed: u64,
    buckets: u64,
    items: u64,
    /// The load the table was sized for, in thousandths.
    sized_for: u32,
    /// The table words' bytes.
    body: &'a [u8],
    /// The moved list's bytes (version 2; empty in version 1).
    moved: &'a [u8],
}

/// Checks everything that does not need the table's contents, in the order
/// `read_table` meets it: the layout, the input's length, the checksum, the
/// flags and the reserved field.
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
    let body_end = HEADER_LEN + 8 * h.words as usize;
    // The length with no moved entries; version 2 then says how many follow.
    let least = encoded_len_of(&h, 0);
    let mut expected = least;
    if h.version != VERSION_1 {
        let Some(count) = bytes
            .get(body_end..)
            .and_then(|rest| rest.first_chunk::<8>())
        else {
            return Err(DecodeError::Truncated {
                expected: least,
                actual,
            });
        };
        expected = encoded_len_of(&h, u64::from_le_bytes(*count));
    }
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
    let sized_for = check_flags(&h)?;
    let body = &content[HEADER_LEN..body_end];
    let (moved, items) = if h.version == VERSION_1 {
        (&[][..], h.items)
    } else {
        // The list between its count and the item count, which ends the
        // content: the lengths were checked against the count above.
        let list = &content[body_end + 8..content.len() - 8];
        let mut count = [0; 8];
        count.copy_from_slice(&content[content.len() - 8..]);
        (list, u64::from_le_bytes(count))
    };
    Ok(Parsed {
        bits: h.bits,
        hasher_id: h.hasher_id,
        seed: h.seed,
        buckets: h.buckets,
        items,
        sized_for,
        body,
        moved,
    })
}

/// A header's fields, its layout checked ([`check_header`]).
struct Header {
    version: u16,
    bits: FingerprintBits,
    flags: u32,
    hasher_id: u64,
    seed: u64,
    buckets: u64,
    /// The item count in version 1; in version 2, 0 or (with the
    /// [`SIZED`] flag) the load the table was sized for.
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
    // with five slots is the plain layout, with six the ranked one; 10 bits
    // with six slots the plain one, with eight the ranked one).
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
        version,
        bits,
        flags,
        hasher_id,
        seed,
        buckets,
        items,
        words,
    })
}

/// The checks that follow the checksum's: the flags, and in version 2 the
/// field at bytes 40 to 48 (0, or with the [`SIZED`] flag a load other
/// than the layout's full load, from `MIN_LOAD` to its max load). Gives the
/// load the table was sized for, in thousandths.
fn check_flags(h: &Header) -> Result<u32, DecodeError> {
    let known = if h.version == VERSION_1 { 0 } else { SIZED };
    if h.flags & !known != 0 {
        return Err(DecodeError::UnsupportedFlags { flags: h.flags });
    }
    let full = h.bits.full_load();
    if h.version == VERSION_1 {
        return Ok(full);
    }
    if h.flags & SIZED == 0 {
        return match h.items {
            0 => Ok(full),
            _ => Err(DecodeError::ReservedNotZero),
        };
    }
    match u32::try_from(h.items) {
        Ok(load) if (MIN_LOAD..=h.bits.max_load()).contains(&load) && load != full => Ok(load),
        _ => Err(DecodeError::InvalidSizingLoad { load: h.items }),
    }
}

/// Bytes of the encoding with header `h` and `moved` entries in its moved
/// list (none in version 1). At most 2^33 words (2^32 buckets of 32-bit
/// slots): only the list can overflow, and the length then saturates.
fn encoded_len_of(h: &Header, moved: u64) -> u64 {
    let table = (HEADER_LEN + CHECKSUM_LEN) as u64 + 8 * h.words;
    if h.version == VERSION_1 {
        table
    } else {
        (table + TRAILER_LEN as u64).saturating_add(moved.saturating_mul(8))
    }
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
    Ok(CuckooFilter {
        table,
        hasher,
        sized_for: parsed.sized_for,
    })
}

fn word_at(chunk: &[u8]) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(chunk);
    u64::from_le_bytes(b)
}

/// The (bucket, fingerprint) of a moved entry's 8 bytes: 8 bytes held for
/// each, as many as the input gave.
fn moved_at(chunk: &[u8]) -> (u32, u32) {
    let w = word_at(chunk);
    (w as u32, (w >> 32) as u32)
}

/// The first fault of table word `word`, numbered `at`: bits outside its
/// slots, or, in a semi-sorted table, a word the codec does not write.
fn word_fault<W: Width>(word: u64, at: u64) -> Option<DecodeError> {
    if W::SORTED {
        (!W::valid_word(word)).then_some(DecodeError::InvalidBucket { word: at })
    } else {
        (word & !W::USED != 0).then_some(DecodeError::NonzeroPadding { word: at })
    }
}

/// `InvalidMovedEntry` for the first entry of `moved` that names no bucket of
/// a table of `buckets`, or no fingerprint of width `W`, or is not as a
/// writer writes it: naming its pair's lower bucket, after the entry before
/// it in the order of (bucket, fingerprint). So a moved list has one form,
/// and an input whose entries stay in the stash is written back as it was.
fn check_moved<W: Width>(buckets: u64, moved: &[(u32, u32)]) -> Result<(), DecodeError> {
    let valid = |&(bucket, fp): &(u32, u32)| {
        let b = u64::from(bucket);
        b < buckets
            && fp != 0
            && u64::from(fp) <= W::MAX
            && b < table::alternate_in::<W>(buckets, b, fp)
    };
    let first_bad = moved
        .iter()
        .enumerate()
        .position(|(k, e)| !valid(e) || (k > 0 && moved[k - 1] > *e));
    match first_bad {
        Some(index) => Err(DecodeError::InvalidMovedEntry {
            index: index as u64,
        }),
        None => Ok(()),
    }
}

/// Checks the recorded item count against the table's fingerprints and the
/// moved list's, then puts each moved entry (an item a snapshot read in the
/// table's stash, `table::stash`) into the table as an insert would (its
/// bucket, else its alternate, else along a cuckoo path), or, where no room
/// can be made, back into the stash.
fn finish_table<W: Width>(
    table: &Table<W>,
    found: u64,
    recorded: u64,
    moved: &[(u32, u32)],
) -> Result<(), DecodeError> {
    let found = found + moved.len() as u64;
    if found != recorded {
        return Err(DecodeError::ItemCountMismatch { recorded, found });
    }
    for &(bucket, fp) in moved {
        table.put_stashed(u64::from(bucket), fp);
    }
    Ok(())
}

/// Checks the table's contents, then allocates and fills it.
fn decode_table<W: Width>(p: &Parsed<'_>) -> Result<Table<W>, DecodeError> {
    if let Some(fault) = p
        .body
        .chunks_exact(8)
        .enumerate()
        .find_map(|(at, c)| word_fault::<W>(word_at(c), at as u64))
    {
        return Err(fault);
    }
    let moved: Vec<_> = p.moved.chunks_exact(8).map(moved_at).collect();
    check_moved::<W>(p.buckets, &moved)?;
    let found: u64 = p
        .body
        .chunks_exact(8)
        .map(|c| occupied::<W>(word_at(c)))
        .sum();
    if found + moved.len() as u64 != p.items {
        return Err(DecodeError::ItemCountMismatch {
            recorded: p.items,
            found: found + moved.len() as u64,
        });
    }
    let len = usize::try_from(found).map_err(|_| Table::<W>::alloc_error(p.buckets))?;
    let table = Table::from_words(p.buckets, p.body.chunks_exact(8).map(word_at), len)?;
    finish_table(&table, found, p.items, &moved)?;
    Ok(table)
}

/// Moved entries read from a stream at a time.
const MOVED_PIECE: u64 = 1 << 13;

/// Reads one table's encoding from `src` (its first byte next), checking it
/// as [`decode`] does, in the same order: layout, length (the input ending
/// early), checksum, flags, hasher, contents. The hasher comes from the
/// recorded identity by `hasher`. A table of a growable filter's chain must
/// be of the chain's format `version` (`InvalidChain` otherwise, before
/// anything is allocated). Memory is taken as the words arrive (see
/// `Table::from_pieces`), and as the moved entries arrive.
pub(super) fn read_table<S, R: std::io::Read>(
    src: &mut Source<R>,
    version: Option<u16>,
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
    if version.is_some_and(|v| v != h.version) {
        return Err(DecodeError::InvalidChain {
            reason: "a table's format version is not its chain's",
        }
        .into());
    }
    let mut expected = start + encoded_len_of(&h, 0);
    with_width!(h.bits, W, wrap => {
        let (table, found, fault) = read_words::<W, R>(src, &h, expected)?;
        let mut moved = Vec::new();
        let mut items = h.items;
        if h.version != VERSION_1 {
            let mut field = [0; 8];
            src.fill(&mut field, expected)?;
            let count = u64::from_le_bytes(field);
            expected = start.saturating_add(encoded_len_of(&h, count));
            let mut bytes = Vec::new();
            let mut left = count;
            while left > 0 {
                let n = left.min(MOVED_PIECE);
                bytes.resize(8 * n as usize, 0);
                src.fill(&mut bytes, expected)?;
                moved.extend(bytes.chunks_exact(8).map(moved_at));
                left -= n;
            }
            src.fill(&mut field, expected)?;
            items = u64::from_le_bytes(field);
        }
        let content_crc = src.take_crc();
        let mut stored = [0; CHECKSUM_LEN];
        src.fill(&mut stored, expected)?;
        check_checksum_value(u32::from_le_bytes(stored), content_crc)?;
        // The caller's running checksum continues over this table's bytes.
        src.resume_crc(crc32c::crc32c_append(content_crc, &stored));
        let sized_for = check_flags(&h)?;
        if version.is_some() && sized_for != h.bits.full_load() {
            return Err(DecodeError::InvalidChain {
                reason: "a table of a chain is sized for a load below its layout's",
            }
            .into());
        }
        let hasher = hasher(h.hasher_id, h.seed)?;
        if let Some(fault) = fault {
            return Err(fault.into());
        }
        check_moved::<W>(h.buckets, &moved)?;
        // `found` fingerprints fit in memory: they are in the table.
        table.set_len(found as usize);
        finish_table(&table, found, items, &moved)?;
        Ok(CuckooFilter {
            table: wrap(table),
            hasher,
            sized_for,
        })
    })
}

/// The words of a table with header `h`, read from `src` into a table as they
/// arrive, the fingerprints they hold, and the first fault in them, if any
/// (reported only after the checksum, as `decode` orders its checks).
fn read_words<W: Width, R: std::io::Read>(
    src: &mut Source<R>,
    h: &Header,
    expected: u64,
) -> Result<(Table<W>, u64, Option<DecodeError>), ReadError> {
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
                fault = word_fault::<W>(*w, at);
            }
            at += 1;
        }
        Ok::<(), ReadError>(())
    })?;
    Ok((table?, found, fault))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rewrites the checksum at the end of `bytes` over every byte before
    /// it: an edited input that only the checks after the checksum's can
    /// refuse.
    fn reseal(bytes: &mut [u8]) {
        let n = bytes.len();
        let crc = crc32c::crc32c(&bytes[..n - CHECKSUM_LEN]);
        bytes[n - CHECKSUM_LEN..].copy_from_slice(&crc.to_le_bytes());
    }

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
            let body = &bytes[HEADER_LEN..bytes.len() - TRAILER_LEN - CHECKSUM_LEN];
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
                reseal(&mut damaged);
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
            // Half the slots (a random seed: a full table could refuse one).
            let n = f.slots() as u64 / 2;
            for i in 0..n {
                f.insert(&i).unwrap();
            }
            let bytes = f.to_bytes();
            let g = CuckooFilter::from_bytes(&bytes).unwrap();
            assert_eq!(g.fingerprint_bits(), bits);
            assert!((0..n).all(|i| g.contains(&i)));
            assert_eq!(g.to_bytes(), bytes);
            // The top byte of word 2 all ones: a rank past the multisets
            // (at least 2^16 − 2^8, 2^15 − 2^7, 2^16 − 2^8, 2^14 − 2^6 and
            // 2^10 − 2^2 against 43 758, 31 824, 54 264, 15 504 and 969).
            let mut damaged = bytes.clone();
            damaged[HEADER_LEN + 2 * 8 + 7] = 0xff;
            reseal(&mut damaged);
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
        reseal(&mut bytes);
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
            let body_len = bytes.len() - HEADER_LEN - TRAILER_LEN - CHECKSUM_LEN;
            // Every bit of the body that is in no slot of the two buckets.
            let lanes = 64 / bits.bits() as usize;
            let slots = 2 * bits.slots_per_bucket() as usize;
            for bit in 0..body_len * 8 {
                let (word, at) = (bit / 64, bit % 64);
                let f_bits = bits.bits() as usize;
                let in_slot = at < lanes * f_bits && (word * lanes + at / f_bits) < slots;
                let mut damaged = bytes.clone();
                damaged[HEADER_LEN + bit / 8] |= 1 << (bit % 8);
                reseal(&mut damaged);
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

    /// The bytes of `f` with the fingerprint of `hash` taken out of the
    /// table and put on the moved list as `(bucket, fp)`, checksum mended.
    fn with_moved(f: &CuckooFilter, hash: u64, moved: &[(u32, u32)]) -> Vec<u8> {
        let bytes = f.to_bytes();
        let words = (bytes.len() - HEADER_LEN - TRAILER_LEN - CHECKSUM_LEN) / 8;
        let pos = f.table.position(hash);
        let mut body: Vec<u64> = bytes[HEADER_LEN..HEADER_LEN + 8 * words]
            .chunks_exact(8)
            .map(word_at)
            .collect();
        // 16-bit slots, four a word: bucket b is word b.
        let (bucket, fp) = (pos.i1 as usize, u64::from(pos.fp));
        let lane = (0..4).find(|l| (body[bucket] >> (16 * l)) & 0xffff == fp);
        let lane = lane.expect("the item is in its first bucket");
        body[bucket] &= !(0xffff << (16 * lane));
        let mut out = bytes[..HEADER_LEN].to_vec();
        body.iter()
            .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
        out.extend_from_slice(&(moved.len() as u64).to_le_bytes());
        for &(b, fp) in moved {
            out.extend_from_slice(&b.to_le_bytes());
            out.extend_from_slice(&fp.to_le_bytes());
        }
        let items = f.len() as u64 - 1 + moved.len() as u64;
        out.extend_from_slice(&items.to_le_bytes());
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    #[test]
    fn moved_entries_are_put_back() {
        let f =
            CuckooFilter::with_buckets(64, FingerprintBits::Bits16, DefaultHashBuilder::default())
                .unwrap();
        let hash = 0x1234_5678_9abc_def0;
        f.insert_hash(hash).unwrap();
        for i in 0..100u64 {
            f.insert_hash(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .unwrap();
        }
        let pos = f.table.position(hash);
        let entry = (pos.i1.min(pos.i2) as u32, pos.fp);
        let bytes = with_moved(&f, hash, &[entry]);
        for g in [
            CuckooFilter::from_bytes(&bytes).unwrap(),
            CuckooFilter::read_from(&bytes[..]).unwrap(),
        ] {
            assert!(g.contains_hash(hash));
            assert_eq!(g.len(), f.len());
            // Written again with the entry in the table, the list empty.
            assert_eq!(g.to_bytes().len(), bytes.len() - 8);
        }
        // The same entry twice: a second copy, counted.
        let twice = with_moved(&f, hash, &[entry, entry]);
        assert_eq!(CuckooFilter::from_bytes(&twice).unwrap().len(), f.len() + 1);
        // An entry past the table, with no fingerprint, naming its pair's
        // higher bucket, or before the entry ahead of it.
        let higher = (pos.i1.max(pos.i2) as u32, pos.fp);
        let before = (entry.0, entry.1 - 1);
        for bad in [(64, pos.fp), (0, 0), (1, 1 << 16), higher, before] {
            let bytes = with_moved(&f, hash, &[entry, bad]);
            let expected = DecodeError::InvalidMovedEntry { index: 1 };
            assert_eq!(CuckooFilter::from_bytes(&bytes).unwrap_err(), expected);
            match CuckooFilter::read_from(&bytes[..]) {
                Err(ReadError::Decode(e)) => assert_eq!(e, expected),
                other => panic!("{other:?}"),
            }
        }
        // A count that disagrees with the table and the list.
        let mut wrong = with_moved(&f, hash, &[entry]);
        let n = wrong.len();
        wrong[n - 12] ^= 1;
        reseal(&mut wrong);
        assert!(matches!(
            CuckooFilter::from_bytes(&wrong),
            Err(DecodeError::ItemCountMismatch { .. })
        ));
        // The reserved field of a version-2 header.
        let mut reserved = f.to_bytes();
        reserved[40] = 1; // bytes 40..48: reserved in version 2
        reseal(&mut reserved);
        assert_eq!(
            CuckooFilter::from_bytes(&reserved).unwrap_err(),
            DecodeError::ReservedNotZero
        );
    }

    #[test]
    fn the_sizing_load_is_one_the_builder_sizes_for() {
        // With the sized flag, any load from MIN_LOAD to the layout's
        // highest but its full load (which is written without the flag).
        let f =
            CuckooFilter::with_buckets(64, FingerprintBits::Bits16, DefaultHashBuilder::default())
                .unwrap();
        let sized = |load: u64| {
            let mut b = f.to_bytes();
            b[12] = 1; // the sized flag
            b[40..48].copy_from_slice(&load.to_le_bytes());
            reseal(&mut b);
            CuckooFilter::from_bytes(&b)
        };
        let bits = FingerprintBits::Bits16;
        for load in [
            MIN_LOAD,
            bits.full_load() - 1,
            bits.full_load() + 1,
            bits.max_load(),
        ] {
            let g = sized(u64::from(load)).unwrap();
            assert_eq!(g.sizing_field(), u64::from(load));
        }
        for load in [
            0,
            MIN_LOAD - 1,
            bits.full_load(),
            bits.max_load() + 1,
            1000,
            u32::MAX,
        ] {
            let load = u64::from(load);
            assert_eq!(
                sized(load).unwrap_err(),
                DecodeError::InvalidSizingLoad { load }
            );
        }
    }

    #[test]
    fn moved_entries_with_no_room_go_to_the_stash() {
        // Two buckets of four, full: a ninth fingerprint has no room in the
        // table.
        let f =
            CuckooFilter::with_buckets(2, FingerprintBits::Bits16, DefaultHashBuilder::default())
                .unwrap();
        let mut i = 0u64;
        while f.len() < 8 {
            let _ = f.insert_hash(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            i += 1;
        }
        let bytes = f.to_bytes();
        let with_entries = |n: u64| {
            let at = bytes.len() - TRAILER_LEN - CHECKSUM_LEN;
            let mut out = bytes[..at].to_vec();
            out.extend_from_slice(&n.to_le_bytes());
            for _ in 0..n {
                // The pair {0, 1}, named by its lower bucket.
                out.extend_from_slice(&0u32.to_le_bytes());
                out.extend_from_slice(&7u32.to_le_bytes());
            }
            out.extend_from_slice(&(8 + n).to_le_bytes());
            let crc = crc32c::crc32c(&out);
            out.extend_from_slice(&crc.to_le_bytes());
            out
        };
        let stashed = with_entries(8);
        let g = CuckooFilter::from_bytes(&stashed).unwrap();
        assert_eq!(g.len(), 16);
        let held = g.table.hash_for(1, 7);
        assert!(g.contains_hash(held));
        // Written again, the stash is the moved list: the same bytes.
        assert_eq!(g.to_bytes(), stashed);
        for _ in 0..8 {
            assert!(g.remove_hash(held));
        }
        assert!(!g.contains_hash(held));
        assert_eq!(g.len(), 8);
        // More than a line holds: the stash chains another.
        let g = CuckooFilter::from_bytes(&with_entries(20)).unwrap();
        assert_eq!(g.len(), 28);
        assert_eq!(
            CuckooFilter::read_from(&with_entries(20)[..])
                .unwrap()
                .len(),
            28
        );
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
            let nonzero = bytes[HEADER_LEN..bytes.len() - TRAILER_LEN - CHECKSUM_LEN]
                .iter()
                .filter(|&&x| x != 0)
                .count();
            assert_eq!(nonzero, 1);
        }
    }
}
