//! `write_to` and `read_from`: the byte format through `std::io`, checked
//! against the in-memory forms (`to_bytes`, `from_bytes`) byte for byte and
//! error for error, with writers that cannot seek, readers that misbehave,
//! and the first version's bytes (`tests/fixtures/`, written by the crate
//! before the item count moved behind the table).

mod common;

use std::io::{self, Read, Write};
use std::sync::mpsc;
use std::thread;

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

/// What `write_to` gives a writer that takes one byte a call and cannot
/// seek.
fn written(f: &CuckooFilter) -> Vec<u8> {
    let mut out = ByteByByte(Vec::new());
    f.write_to(&mut out).unwrap();
    out.0
}

/// A writer that takes one byte a call.
struct ByteByByte(Vec<u8>);

impl Write for ByteByByte {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend(buf.first());
        Ok(buf.len().min(1))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The write end of a pipe to another thread: each write a message.
struct Pipe(mpsc::SyncSender<Vec<u8>>);

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .send(buf.to_vec())
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The read end: the messages as one stream.
struct PipeEnd {
    rx: mpsc::Receiver<Vec<u8>>,
    held: Vec<u8>,
    at: usize,
}

impl Read for PipeEnd {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.held.len() {
            match self.rx.recv() {
                Ok(next) => (self.held, self.at) = (next, 0),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.held.len() - self.at);
        buf[..n].copy_from_slice(&self.held[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A pipe whose writer is handed to `write` on this thread while another
/// thread reads the filter from the other end with `read`.
fn through_pipe<T: Send + 'static>(
    write: impl FnOnce(Pipe) -> io::Result<()>,
    read: impl FnOnce(PipeEnd) -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::sync_channel(4);
    let reader = thread::spawn(move || {
        read(PipeEnd {
            rx,
            held: Vec::new(),
            at: 0,
        })
    });
    write(Pipe(tx)).unwrap();
    reader.join().unwrap()
}

#[test]
fn write_to_writes_to_bytes_at_every_width() {
    for bits in FingerprintBits::ALL {
        for (buckets, items) in [(2, 3), (1000, 2500), (300_002, 1_000_000)] {
            // At most 80 % of the slots (buckets of three hold fewer).
            let items = items.min(buckets * u64::from(bits.slots_per_bucket()) * 4 / 5);
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
fn write_to_writes_where_the_writer_is() {
    let f = filled(FingerprintBits::Bits12, 1000, 2000);
    let mut out = b"prefix".to_vec();
    f.write_to(&mut out).unwrap();
    out.write_all(b"suffix").unwrap();
    let all = out;
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
    let mut out = ByteByByte(Vec::new());
    f.write_to(&mut out).unwrap();
    assert_eq!(out.0, bytes);
    let through = through_pipe(
        |pipe| f.write_to(pipe),
        |end| GrowableCuckooFilter::read_from(end).unwrap().to_bytes(),
    );
    assert_eq!(through, bytes);
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
                } else {
                    assert!(
                        CuckooFilter::from_bytes(&damaged).is_err(),
                        "{bits:?} bit {bit}"
                    );
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

/// A report that prints an error and its sources names the error it wraps
/// (the reader's, or the decoder's) once: the message includes it, so the
/// source is what lies under it.
#[test]
fn a_read_errors_chain_names_the_wrapped_error_once() {
    let bytes = filled(FingerprintBits::Bits16, 1000, 3000).to_bytes();
    let failed = CuckooFilter::read_from(Failing {
        bytes: &bytes,
        left: 100,
    })
    .unwrap_err();
    let truncated = CuckooFilter::read_from(&bytes[..100]).unwrap_err();
    for err in [failed, truncated] {
        let mut report = err.to_string();
        let mut source = std::error::Error::source(&err);
        while let Some(e) = source {
            report += &format!(": {e}");
            source = e.source();
        }
        let wrapped = match &err {
            ReadError::Io(e) => e.to_string(),
            ReadError::Decode(e) => e.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(report.matches(&wrapped).count(), 1, "{report}");
    }
}

/// A writer that fails after `left` bytes.
struct Full {
    out: Vec<u8>,
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

#[test]
fn a_failing_writer_returns_its_error() {
    let f = filled(FingerprintBits::Bits16, 1 << 17, 100_000);
    for left in [0, 10, 56, 100_000, 1 << 20] {
        let err = f
            .write_to(Full {
                out: Vec::new(),
                left,
            })
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
    }
}

#[test]
fn a_growable_filter_fails_with_its_writer() {
    let f = GrowableCuckooFilter::with_capacity(100);
    for i in 0..5_000u64 {
        f.insert_hash(mix(i)).unwrap();
    }
    let len = f.to_bytes().len();
    for left in [0, 10, 24, 100, len / 2, len - 1] {
        let err = f
            .write_to(Full {
                out: Vec::new(),
                left,
            })
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{left}");
    }
}

/// A filter written into a pipe while other threads insert, remove and move
/// items (a table at 90 % load with a steady churn) decodes on the other
/// end with every item the writers left alone.
#[test]
fn a_live_filter_streams_through_a_pipe() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    for bits in [FingerprintBits::Bits16, FingerprintBits::Bits8] {
        let f = Arc::new(filled(bits, 1 << 14, 0));
        let slots = f.slots() as u64;
        let held = slots * 8 / 10;
        for i in 0..held {
            f.insert_hash(mix(i)).unwrap();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let churn: Vec<_> = (0..2u64)
            .map(|t| {
                let (f, stop) = (Arc::clone(&f), Arc::clone(&stop));
                thread::spawn(move || {
                    // Each writer keeps a window of its own keys: 10 % of
                    // the slots between them, one in and one out a step.
                    // (Near full, a snapshot may leave an insert no path:
                    // a refused key is simply not held.)
                    let base = (1 << 40) * (t + 1);
                    let window = (slots / 20) as usize;
                    let mut held = std::collections::VecDeque::new();
                    let mut next = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        if held.len() >= window {
                            let old = held.pop_front().unwrap();
                            assert!(f.remove_hash(mix(old)));
                        }
                        if f.insert_hash(mix(base + next)).is_ok() {
                            held.push_back(base + next);
                        }
                        next += 1;
                    }
                })
            })
            .collect();
        for _ in 0..20 {
            let g = through_pipe(
                |pipe| f.write_to(pipe),
                |end| CuckooFilter::read_from(end).unwrap(),
            );
            assert!((0..held).all(|i| g.contains_hash(mix(i))), "{bits:?}");
            assert!(g.len() >= held as usize);
        }
        stop.store(true, Ordering::Relaxed);
        for t in churn {
            t.join().unwrap();
        }
    }
}

/// Bytes of the first version (item count in the header, no moved list,
/// growable tables behind their lengths) still load, answer as written,
/// and are written again in the current version.
#[test]
fn first_version_bytes_still_load() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for bits in [8, 9, 12, 16, 17, 21, 32] {
        let old = std::fs::read(dir.join(format!("v1-bits{bits}.bin"))).unwrap();
        assert_eq!(u16::from_le_bytes([old[8], old[9]]), 1);
        let f = CuckooFilter::from_bytes(&old).unwrap();
        assert_eq!(f.fingerprint_bits().bits(), bits);
        assert!((0..150u32).all(|i| f.contains(&i)), "{bits}");
        assert_eq!(f.len(), 150);
        let g = CuckooFilter::read_from(&old[..]).unwrap();
        assert_eq!(g.to_bytes(), f.to_bytes());
        let new = f.to_bytes();
        assert_eq!(u16::from_le_bytes([new[8], new[9]]), 2);
        assert_eq!(new.len(), old.len() + 16);
        assert_eq!(&new[56..new.len() - 20], &old[56..old.len() - 4]);
        // Every prefix and flip of the old bytes: the two readers agree.
        agree_on_damage(
            &old,
            |b| CuckooFilter::from_bytes(b).map(|f| f.to_bytes()),
            |b| CuckooFilter::read_from(b).map(|f| f.to_bytes()),
        );
    }
    let old = std::fs::read(dir.join("v1-growable.bin")).unwrap();
    let f = GrowableCuckooFilter::from_bytes(&old).unwrap();
    assert_eq!(f.table_count(), 3);
    assert!((0..1000u32).all(|i| f.contains(&i)));
    let g = GrowableCuckooFilter::read_from(&old[..]).unwrap();
    assert_eq!(g.to_bytes(), f.to_bytes());
    assert_eq!(
        GrowableCuckooFilter::from_bytes(&f.to_bytes())
            .unwrap()
            .len(),
        1000
    );
}

/// Every prefix and every one-bit flip of a growable filter's bytes (with
/// and without its checksum mended) gives `from_bytes` and `read_from` the
/// same answer.
#[test]
fn a_growable_filters_readers_agree() {
    let f = GrowableCuckooFilter::builder()
        .initial_capacity(8)
        .seed(DEFAULT_SEED)
        .build()
        .unwrap();
    for i in 0..40u64 {
        f.insert_hash(mix(i)).unwrap();
    }
    assert!(f.table_count() >= 2);
    let bytes = f.to_bytes();
    agree_on_damage(
        &bytes,
        |b| GrowableCuckooFilter::from_bytes(b).map(|f| f.to_bytes()),
        |b| GrowableCuckooFilter::read_from(b).map(|f| f.to_bytes()),
    );
}

/// Checks that `from_bytes` and `read_from` give the same answer for every
/// prefix of `bytes`, and for every one-bit flip of it with its checksum
/// as it is and mended; every prefix is an error.
fn agree_on_damage(
    bytes: &[u8],
    from_bytes: impl Fn(&[u8]) -> Result<Vec<u8>, DecodeError>,
    read_from: impl Fn(&[u8]) -> Result<Vec<u8>, ReadError>,
) {
    let same = |input: &[u8], what: &str| match (read_from(input), from_bytes(input)) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{what}"),
        (Err(ReadError::Decode(a)), Err(b)) => {
            // A damaged length makes the input's length wrong for
            // `from_bytes`; a stream just reads on.
            let length = matches!(
                b,
                DecodeError::Truncated { .. } | DecodeError::TrailingBytes { .. }
            );
            if !length {
                assert_eq!(a, b, "{what}");
            }
        }
        (a, b) => panic!("{what}: {a:?} against {b:?}"),
    };
    for cut in 0..bytes.len() {
        assert!(from_bytes(&bytes[..cut]).is_err(), "cut {cut}");
        same(&bytes[..cut], &format!("cut {cut}"));
    }
    for bit in 0..8 * (bytes.len() - 4) {
        let mut damaged = bytes.to_vec();
        damaged[bit / 8] ^= 1 << (bit % 8);
        assert!(
            from_bytes(&damaged).is_err(),
            "bit {bit} flipped, checksum not mended"
        );
        same(&damaged, &format!("bit {bit}"));
        let n = damaged.len();
        let crc = crc32c(&damaged[..n - 4]);
        damaged[n - 4..].copy_from_slice(&crc.to_le_bytes());
        same(&damaged, &format!("bit {bit} mended"));
    }
}

/// A reader that ends with an `UnexpectedEof` error, as `read_exact` and
/// decompressors do: a truncated input, not an I/O failure.
struct EndsInError<'a>(&'a [u8]);

impl Read for EndsInError<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.0.is_empty() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "no more"));
        }
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// A reader that says it read more than the buffer it was given.
struct Boastful;

impl Read for Boastful {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(buf.len() + 1)
    }
}

#[test]
fn a_reader_that_ends_or_lies_gets_an_answer_not_a_panic() {
    let bytes = filled(FingerprintBits::Bits16, 1000, 3000).to_bytes();
    for cut in [0, 7, 56, 57, 1000, bytes.len() - 1] {
        let got = CuckooFilter::read_from(EndsInError(&bytes[..cut])).unwrap_err();
        let expected = CuckooFilter::from_bytes(&bytes[..cut]).unwrap_err();
        match got {
            ReadError::Decode(e) => assert_eq!(e, expected, "{cut}"),
            other => panic!("{cut}: {other:?}"),
        }
    }
    assert!(CuckooFilter::read_from(EndsInError(&bytes)).is_ok());
    for err in [
        CuckooFilter::read_from(Boastful).map(drop).unwrap_err(),
        GrowableCuckooFilter::read_from(Boastful)
            .map(drop)
            .unwrap_err(),
    ] {
        match err {
            ReadError::Io(e) => assert_eq!(e.kind(), io::ErrorKind::InvalidData),
            other => panic!("{other:?}"),
        }
    }
}
