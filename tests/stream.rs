//! `write_to` and `read_from`: the byte format through `std::io`, checked
//! against the in-memory forms (`to_bytes`, `from_bytes`) byte for byte and
//! error for error.

mod common;

use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};

use common::mix;
use lockfree_cuckoo_filter::test_hooks;
use lockfree_cuckoo_filter::{
    CuckooFilter, DecodeError, DefaultHashBuilder, FingerprintBits, GrowableCuckooFilter,
    ReadError, DEFAULT_SEED,
};

fn filled(bits: FingerprintBits, buckets: u64, items: u64) -> CuckooFilter {
    let f = test_hooks::with_buckets(buckets, bits, DefaultHashBuilder::with_seed(DEFAULT_SEED))
        .unwrap();
    for i in 0..items {
        f.insert_hash(mix(i)).unwrap();
    }
    f
}

fn written(f: &CuckooFilter) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    f.write_to(&mut out).unwrap();
    out.into_inner()
}

#[test]
fn write_to_writes_to_bytes_at_every_width() {
    for bits in FingerprintBits::ALL {
        for (buckets, items) in [(2, 3), (1000, 2500), (300_002, 1_000_000)] {
            let f = filled(bits, buckets, items);
            let bytes = f.to_bytes();
            assert_eq!(written(&f), bytes, "{bits:?} {buckets}");
            let g = CuckooFilter::read_from(&bytes[..]).unwrap();
            assert_eq!(g.to_bytes(), bytes, "{bits:?} {buckets}");
            assert_eq!(g.len(), f.len());
        }
    }
}

#[test]
fn write_to_starts_where_the_writer_is() {
    let f = filled(FingerprintBits::Bits12, 1000, 2000);
    let mut out = Cursor::new(b"prefix".to_vec());
    out.seek(SeekFrom::End(0)).unwrap();
    f.write_to(&mut out).unwrap();
    out.write_all(b"suffix").unwrap();
    let all = out.into_inner();
    assert_eq!(&all[6..all.len() - 6], &f.to_bytes()[..]);
    // `read_from` reads the filter and no further.
    let mut reader = &all[6..];
    let g = CuckooFilter::read_from(&mut reader).unwrap();
    assert_eq!(reader, b"suffix");
    assert_eq!(g.len(), 2000);
}

#[test]
fn a_growable_filter_streams_as_its_bytes() {
    let f = GrowableCuckooFilter::with_capacity(100);
    for i in 0..50_000u64 {
        f.insert_hash(mix(i)).unwrap();
    }
    assert!(f.table_count() > 3);
    let bytes = f.to_bytes();
    let mut out = Cursor::new(Vec::new());
    f.write_to(&mut out).unwrap();
    assert_eq!(out.get_ref(), &bytes);
    let g = GrowableCuckooFilter::read_from(&bytes[..]).unwrap();
    assert_eq!(g.to_bytes(), bytes);
    assert!((0..50_000u64).all(|i| g.contains_hash(mix(i))));
    // Every way the input can end early is a truncation.
    for cut in (0..bytes.len()).step_by(997).chain([bytes.len() - 1]) {
        match GrowableCuckooFilter::read_from(&bytes[..cut]) {
            Err(ReadError::Decode(DecodeError::Truncated { actual, .. })) => {
                assert_eq!(actual, cut as u64)
            }
            Err(ReadError::Decode(DecodeError::BadMagic)) if cut == 0 => {}
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
}

/// Every prefix and every one-bit flip of a small filter's bytes (the
/// checksum mended, so that the flip reaches the checks behind it) gives
/// `read_from` the answer `from_bytes` gives.
#[test]
fn read_from_answers_as_from_bytes() {
    for bits in FingerprintBits::ALL {
        let bytes = filled(bits, 6, 9).to_bytes();
        for cut in 0..bytes.len() {
            let expected = CuckooFilter::from_bytes(&bytes[..cut]).unwrap_err();
            match CuckooFilter::read_from(&bytes[..cut]) {
                Err(ReadError::Decode(got)) => assert_eq!(got, expected, "{bits:?} cut {cut}"),
                other => panic!("{bits:?} cut {cut}: {other:?}"),
            }
        }
        for bit in 0..8 * (bytes.len() - 4) {
            let mut damaged = bytes.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            for mend in [false, true] {
                if mend {
                    let n = damaged.len();
                    let crc = crc32c(&damaged[..n - 4]);
                    damaged[n - 4..].copy_from_slice(&crc.to_le_bytes());
                }
                let expected = CuckooFilter::from_bytes(&damaged).map(|f| f.to_bytes());
                let got = CuckooFilter::read_from(&damaged[..]).map(|f| f.to_bytes());
                match (got, expected) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b),
                    (Err(ReadError::Decode(a)), Err(b)) => {
                        // A damaged length field makes the input's length
                        // wrong for `from_bytes`; a stream just reads on.
                        let length = matches!(
                            b,
                            DecodeError::Truncated { .. } | DecodeError::TrailingBytes { .. }
                        );
                        if !length {
                            assert_eq!(a, b, "{bits:?} bit {bit} mended {mend}");
                        }
                    }
                    (a, b) => panic!("{bits:?} bit {bit}: {a:?} against {b:?}"),
                }
            }
        }
    }
}

/// CRC-32C, bit by bit: the tests mend checksums without the crate's
/// dependency.
fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0x82f6_3b78 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// A reader that fails once it has given `left` bytes.
struct Failing<'a> {
    bytes: &'a [u8],
    left: usize,
}

impl Read for Failing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::new(io::ErrorKind::ConnectionReset, "gone"));
        }
        let n = buf.len().min(self.left).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        self.left -= n;
        Ok(n)
    }
}

#[test]
fn a_failing_reader_is_an_io_error_not_a_format_error() {
    let bytes = filled(FingerprintBits::Bits16, 1000, 3000).to_bytes();
    for left in [0, 7, 56, 57, bytes.len() - 1] {
        let err = CuckooFilter::read_from(Failing {
            bytes: &bytes,
            left,
        })
        .unwrap_err();
        match err {
            ReadError::Io(e) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset),
            other => panic!("{left}: {other:?}"),
        }
    }
}

/// A writer that fails after `left` bytes, seeking as a cursor does.
struct Full {
    out: Cursor<Vec<u8>>,
    left: usize,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        self.out.write(&buf[..n])
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Full {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.out.seek(to)
    }
}

#[test]
fn a_failing_writer_returns_its_error() {
    let f = filled(FingerprintBits::Bits16, 1 << 17, 100_000);
    for left in [0, 10, 56, 100_000, 1 << 20] {
        let err = f
            .write_to(Full {
                out: Cursor::new(Vec::new()),
                left,
            })
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
    }
}
