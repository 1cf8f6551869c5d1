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

use super::identity::{default_with_seed, exactly, id_of};
use super::{
    check_checksum, check_magic, check_version, Fields, HasherIdentity, CHECKSUM_LEN, TABLE_MAGIC,
    VERSION,
};
use crate::error::DecodeError;
use crate::fingerprint::{FingerprintBits, Width};
use crate::hasher::DefaultHashBuilder;
use crate::table::{self, dispatch, valid_bucket_count, with_width, AnyTable, Table, SLOTS};
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
    /// **On a live filter.** Exact when no operation is in flight. While other
    /// threads modify the filter, each table word is read atomically, but the
    /// words are read one after another, not the whole table at one instant:
    /// the bytes are still a valid filter, but a blend of its states during the
    /// copy. An item inserted, removed or relocated meanwhile may be in it or
    /// not, or (relocated from a word not yet read to one already read, or the
    /// other way) missing or twice; a [`clear`](Self::clear) meanwhile leaves
    /// the words read before it. The recorded item count is the number of
    /// fingerprints copied, so the bytes always decode. For an exact snapshot,
    /// stop the writers first (a filter written by a few threads can be
    /// quiesced by the caller, as any data structure without a snapshot
    /// operation).
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

    /// Loads a filter saved by [`to_bytes`](Self::to_bytes) with `hasher`,
    /// which must have the [identity](HasherIdentity) recorded in the bytes
    /// (the same id and seed); [`DecodeError::HasherMismatch`] otherwise.
    ///
    /// Any byte string gives a filter or a [`DecodeError`] that says what is
    /// wrong, never a panic; memory is allocated only once the input's length
    /// is known to match its header: at most 1.5 times that length (the table
    /// and its relocation stripes) plus about 2.2 KB (docs/FORMAT.md).
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
    /// and its relocation stripes) plus about 2.2 KB (docs/FORMAT.md). The
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
    dispatch!(table, t => encode_table(t, hasher_id, seed))
}

fn encode_table<W: Width>(t: &Table<W>, hasher_id: u64, seed: u64) -> Vec<u8> {
    let words = t.words();
    let mut out = Vec::with_capacity(HEADER_LEN + 8 * words.len() + CHECKSUM_LEN);
    out.extend_from_slice(&TABLE_MAGIC);
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
    let Some(bits) = FingerprintBits::from_bits(u32::from(bits)) else {
        return Err(DecodeError::UnknownFingerprintBits { bits });
    };
    if u32::from(slots) != SLOTS {
        return Err(DecodeError::UnsupportedBucketSize { slots });
    }
    if !valid_bucket_count(buckets) {
        return Err(DecodeError::InvalidBucketCount { buckets });
    }
    let expected_words = table::words_for(bits.slots_per_word(), buckets);
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
    // `actual == expected`, more than the checksum: the split always succeeds.
    let Some((content, stored)) = bytes.split_last_chunk::<CHECKSUM_LEN>() else {
        return Err(DecodeError::Truncated { expected, actual });
    };
    check_checksum(content, stored)?;
    if flags != 0 {
        return Err(DecodeError::UnsupportedFlags { flags });
    }
    Ok(Parsed {
        bits,
        hasher_id,
        seed,
        buckets,
        items,
        body: &content[HEADER_LEN..],
    })
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

/// The index of the first word of `body` (a table of `buckets` buckets) with a
/// bit set outside its slots: above its lanes, or in a lane past the last
/// bucket (only the last word can have such lanes).
fn nonzero_padding<W: Width>(body: &[u8], buckets: u64) -> Option<u64> {
    let words = body.len() / 8;
    let lanes_in_last = (buckets * u64::from(SLOTS)) - (words as u64 - 1) * u64::from(W::LANES);
    let last_mask = if lanes_in_last == u64::from(W::LANES) {
        W::USED
    } else {
        W::USED & ((1u64 << (lanes_in_last as u32 * W::BITS)) - 1)
    };
    body.chunks_exact(8).enumerate().find_map(|(i, c)| {
        let allowed = if i + 1 == words { last_mask } else { W::USED };
        (word_at(c) & !allowed != 0).then_some(i as u64)
    })
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
    } else if let Some(word) = nonzero_padding::<W>(p.body, p.buckets) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_packed_into_words_in_order() {
        // Slot k of bucket b is lane 4b + k of the table: lane L mod (64 / f)
        // of word L / (64 / f), from bit 0 up.
        for bits in FingerprintBits::ALL
            .into_iter()
            .filter(|b| *b != FingerprintBits::Bits17 && *b != FingerprintBits::Bits9)
        {
            let f = CuckooFilter::with_buckets(6, bits, DefaultHashBuilder::default()).unwrap();
            let fp = 0x25a; // fits every width but 8
            let fp = if bits.bits() == 8 { 0x5a } else { fp };
            for b in 0..6 {
                f.insert_hash(f.table.hash_for(b, fp)).unwrap();
            }
            let bytes = f.to_bytes();
            let lanes = 64 / bits.bits() as usize;
            let body = &bytes[HEADER_LEN..bytes.len() - 4];
            assert_eq!(body.len(), 8 * (24usize).div_ceil(lanes), "{bits:?}");
            let lane = |l: usize| {
                let w = word_at(&body[8 * (l / lanes)..8 * (l / lanes) + 8]);
                (w >> ((l % lanes) as u32 * bits.bits())) & ((1 << bits.bits()) - 1)
            };
            let held: Vec<u64> = (0..24).map(lane).collect();
            let nonzero = held.iter().filter(|&&v| v != 0).count();
            assert_eq!(nonzero, 6, "{bits:?}");
            for b in 0..6 {
                assert!(
                    held[4 * b..4 * b + 4].contains(&u64::from(fp)) || {
                        let alt = f.table.position(f.table.hash_for(b as u64, fp)).i2 as usize;
                        held[4 * alt..4 * alt + 4].contains(&u64::from(fp))
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
    fn padding_must_be_zero() {
        for bits in FingerprintBits::ALL
            .into_iter()
            .filter(|b| *b != FingerprintBits::Bits17 && *b != FingerprintBits::Bits9)
        {
            let f = CuckooFilter::with_buckets(2, bits, DefaultHashBuilder::default()).unwrap();
            let bytes = f.to_bytes();
            let body_len = bytes.len() - HEADER_LEN - 4;
            // Every bit of the body that is in no slot of the 8 lanes.
            let lanes = 64 / bits.bits() as usize;
            for bit in 0..body_len * 8 {
                let (word, at) = (bit / 64, bit % 64);
                let f_bits = bits.bits() as usize;
                let in_slot = at < lanes * f_bits && (word * lanes + at / f_bits) < 8;
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
