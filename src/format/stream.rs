//! The byte format through `std::io`: [`CuckooFilter::write_to`] and
//! [`CuckooFilter::read_from`], and the same for
//! [`GrowableCuckooFilter`](crate::GrowableCuckooFilter).

use std::fmt;
use std::io::{self, Read};

use super::identity::{default_with_seed, exactly};
use super::table::read_table;
use super::{check_magic, HasherIdentity};
use crate::error::{AllocError, DecodeError};
use crate::hasher::DefaultHashBuilder;
use crate::CuckooFilter;

/// Why [`read_from`](CuckooFilter::read_from) (or
/// [`GrowableCuckooFilter::read_from`](crate::GrowableCuckooFilter::read_from)) gave no filter: the reader failed, or
/// what it gave is not a filter.
///
/// ```
/// use lockfree_cuckoo_filter::{CuckooFilter, DecodeError, ReadError};
///
/// let err = CuckooFilter::read_from(&b"LFCUCKOO"[..]).unwrap_err();
/// assert!(matches!(err, ReadError::Decode(DecodeError::Truncated { .. })));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The reader returned an error (other than ending early, which is
    /// [`DecodeError::Truncated`], whether the reader returned 0 bytes or
    /// an [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) error), or
    /// claimed more bytes than the buffer it was given
    /// ([`InvalidData`](io::ErrorKind::InvalidData)).
    Io(io::Error),
    /// The bytes are not a filter: the reason, as
    /// [`from_bytes`](CuckooFilter::from_bytes) gives it.
    Decode(DecodeError),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "reading a filter failed: {e}"),
            Self::Decode(e) => write!(f, "{e}"),
        }
    }
}

/// The message includes the reader's error, or is the decoder's, so the
/// source is what lies under that error (as for every error of this crate:
/// a report that prints the chain prints each message once).
impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => e.source(),
            Self::Decode(e) => e.source(),
        }
    }
}

impl From<DecodeError> for ReadError {
    fn from(e: DecodeError) -> Self {
        Self::Decode(e)
    }
}

impl From<AllocError> for ReadError {
    fn from(e: AllocError) -> Self {
        Self::Decode(e.into())
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// A reader of an encoding: counts the bytes it gave and keeps their
/// CRC-32C, and reports an input that ends early as
/// [`DecodeError::Truncated`] (every other read error as [`ReadError::Io`]).
pub(super) struct Source<R> {
    reader: R,
    /// Bytes read so far.
    read: u64,
    /// CRC-32C of the bytes read since it was last taken.
    crc: u32,
}

impl<R: Read> Source<R> {
    pub(super) fn new(reader: R) -> Self {
        Self {
            reader,
            read: 0,
            crc: 0,
        }
    }

    /// Bytes read so far.
    pub(super) fn position(&self) -> u64 {
        self.read
    }

    /// The CRC-32C of the bytes read since the last call, and starts again.
    pub(super) fn take_crc(&mut self) -> u32 {
        std::mem::take(&mut self.crc)
    }

    /// Continues from `crc` (a CRC-32C taken with [`Self::take_crc`] and
    /// extended by the caller).
    pub(super) fn resume_crc(&mut self, crc: u32) {
        self.crc = crc;
    }

    /// Reads as much of `buf` as the input holds: fewer bytes only at its end.
    ///
    /// The input ends where the reader returns 0, or an `UnexpectedEof`
    /// error (what `read_exact` and some decompressors give when their own
    /// input runs out): both are a short input, reported by the caller as
    /// [`DecodeError::Truncated`]. A reader that says it returned more
    /// bytes than `buf` had room for breaks `Read`'s contract: its bytes
    /// cannot be trusted, and that is an `InvalidData` error.
    pub(super) fn fill_partial(&mut self, buf: &mut [u8]) -> Result<usize, ReadError> {
        let mut got = 0;
        while got < buf.len() {
            match self.reader.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) if n <= buf.len() - got => got += n,
                Ok(n) => {
                    return Err(ReadError::Io(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "the reader returned {n} bytes into a buffer of {}",
                            buf.len() - got
                        ),
                    )))
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
        self.crc = crc32c::crc32c_append(self.crc, &buf[..got]);
        self.read += got as u64;
        Ok(got)
    }

    /// Reads a header that starts with `magic` into `head`: the magic first,
    /// so that another kind of input is told from a short one as
    /// [`check_magic`] tells them, then the rest. `least` is the length the
    /// input must have at least (from its start), for `Truncated`.
    pub(super) fn header(
        &mut self,
        head: &mut [u8],
        magic: &[u8; 8],
        least: u64,
    ) -> Result<(), ReadError> {
        let got = self.fill_partial(&mut head[..magic.len()])?;
        check_magic(&head[..got], magic)?;
        self.fill(&mut head[got..], least)
    }

    /// Reads all of `buf`; an input that ends first is truncated, against
    /// an expected length of `expected` bytes from its start.
    pub(super) fn fill(&mut self, buf: &mut [u8], expected: u64) -> Result<(), ReadError> {
        if self.fill_partial(buf)? < buf.len() {
            return Err(ReadError::Decode(DecodeError::Truncated {
                expected,
                actual: self.read,
            }));
        }
        Ok(())
    }
}

impl<S: HasherIdentity> CuckooFilter<S> {
    /// Reads a filter written by [`write_to`](Self::write_to) or
    /// [`to_bytes`](Self::to_bytes) with `hasher`, as
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher) does.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder};
    ///
    /// let h = DefaultHashBuilder::with_seed(3);
    /// let f = CuckooFilter::builder().capacity(100).hasher(h).build()?;
    /// f.insert(&1u8)?;
    /// let g = CuckooFilter::read_from_with_hasher(&f.to_bytes()[..], h)?;
    /// assert!(g.contains(&1u8));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_from_with_hasher<R: Read>(reader: R, hasher: S) -> Result<Self, ReadError> {
        read_table(&mut Source::new(reader), None, |id, seed| {
            exactly(hasher, id, seed)
        })
    }
}

impl CuckooFilter<DefaultHashBuilder> {
    /// Reads a filter written by [`write_to`](Self::write_to) or
    /// [`to_bytes`](Self::to_bytes) with the default hasher, as
    /// [`from_bytes`](Self::from_bytes) does.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    ///
    /// let f = CuckooFilter::with_capacity(100);
    /// f.insert("x")?;
    /// let g = CuckooFilter::read_from(&f.to_bytes()[..])?;
    /// assert!(g.contains("x"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_from<R: Read>(reader: R) -> Result<Self, ReadError> {
        read_table(&mut Source::new(reader), None, default_with_seed)
    }
}
