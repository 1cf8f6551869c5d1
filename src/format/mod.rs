//! The byte format: a filter saved on one machine loads on any other.
//!
//! Little-endian throughout, versioned, checksummed with CRC-32C; described
//! byte by byte in `docs/FORMAT.md`. Two layouts share a frame (magic bytes,
//! a version, fields, a CRC-32C of everything before it): a filter's table
//! ([`table`]) and a growable filter's chain of tables ([`chain`]). The hasher
//! a filter was built with is recorded by its [identity](HasherIdentity), and
//! with the `serde` feature, `serde.rs` serializes either as its byte string.
//!
//! Decoding never panics: any byte string yields a filter or a
//! [`DecodeError`].

mod chain;
mod identity;
#[cfg(feature = "serde")]
mod serde;
mod stream;
mod table;

use std::io::{self, Write};

use crate::error::DecodeError;

pub use identity::HasherIdentity;
pub use stream::ReadError;

/// The format version this crate writes (both layouts): the item count and
/// the moved list after the table, so that a writer need not seek.
const VERSION: u16 = 2;

/// The first version, still read: the item count in the header.
const VERSION_1: u16 = 1;

/// Bytes of the trailing checksum.
const CHECKSUM_LEN: usize = 4;

/// The first eight bytes of every encoded single filter (and of each table in
/// a chain).
const TABLE_MAGIC: [u8; 8] = *b"LFCUCKOO";

/// The first eight bytes of an encoded growable filter.
const CHAIN_MAGIC: [u8; 8] = *b"LFCUCKCH";

/// An error unless `bytes` starts with `magic` (one of the two above):
/// `WrongFilterType` if they start with the other one, `BadMagic` otherwise.
/// An input shorter than the magic passes if it is a prefix of it: it is then
/// reported as truncated, by the length check that follows.
fn check_magic(bytes: &[u8], magic: &[u8; 8]) -> Result<(), DecodeError> {
    let prefix = bytes.len().min(magic.len());
    if bytes[..prefix] == magic[..prefix] {
        return Ok(());
    }
    let growable = *magic == TABLE_MAGIC;
    let other = if growable { CHAIN_MAGIC } else { TABLE_MAGIC };
    if bytes.starts_with(&other) {
        return Err(DecodeError::WrongFilterType { growable });
    }
    Err(DecodeError::BadMagic)
}

/// `UnsupportedVersion` unless `version` is one this crate reads.
fn check_version(version: u16) -> Result<(), DecodeError> {
    if version != VERSION && version != VERSION_1 {
        return Err(DecodeError::UnsupportedVersion { version });
    }
    Ok(())
}

/// A writer that passes everything on to another and keeps the CRC-32C of
/// what that one took: how both layouts checksum a stream they write once,
/// front to back.
struct Summed<'a, X: ?Sized> {
    inner: &'a mut X,
    crc: u32,
}

impl<'a, X: Write + ?Sized> Summed<'a, X> {
    fn new(inner: &'a mut X) -> Self {
        Self { inner, crc: 0 }
    }

    /// Writes the CRC-32C of everything written so far, closing the
    /// encoding; returns it.
    fn close(self) -> io::Result<u32> {
        self.inner.write_all(&self.crc.to_le_bytes())?;
        Ok(self.crc)
    }
}

impl<X: Write + ?Sized> Write for Summed<'_, X> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        // A writer that claims more than it was given breaks `Write`'s
        // contract; counting only what it was given keeps this from
        // slicing past the buffer.
        let n = n.min(buf.len());
        self.crc = crc32c::crc32c_append(self.crc, &buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `ChecksumMismatch` unless `stored` is the CRC-32C of `content`.
fn check_checksum(content: &[u8], stored: &[u8; CHECKSUM_LEN]) -> Result<(), DecodeError> {
    check_checksum_value(u32::from_le_bytes(*stored), crc32c::crc32c(content))
}

/// `ChecksumMismatch` unless the checksum `stored` is the one `computed`.
fn check_checksum_value(stored: u32, computed: u32) -> Result<(), DecodeError> {
    if stored != computed {
        return Err(DecodeError::ChecksumMismatch { stored, computed });
    }
    Ok(())
}

/// The little-endian reader of both headers: their fields, in order.
///
/// Made only over a header whose length was checked against the fields read
/// from it, so reading past its end is a bug in this module, not bad input.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn new(header: &'a [u8]) -> Self {
        Self { rest: header }
    }

    /// The next `N` bytes.
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let (field, rest) = self
            .rest
            .split_first_chunk::<N>()
            .expect("every field lies inside the header, whose length was checked");
        self.rest = rest;
        *field
    }

    fn u8(&mut self) -> u8 {
        u8::from_le_bytes(self.bytes())
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.bytes())
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.bytes())
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.bytes())
    }
}
