//! The byte format through `std::io`: [`CuckooFilter::write_to`] and
//! [`CuckooFilter::read_from`], and the same for [`GrowableCuckooFilter`].

use std::fmt;
use std::io::{self, Read, Seek, Write};

use super::HasherIdentity;
use crate::error::DecodeError;
use crate::hasher::DefaultHashBuilder;
use crate::{CuckooFilter, GrowableCuckooFilter};

/// Why [`read_from`](CuckooFilter::read_from) (or
/// [`GrowableCuckooFilter::read_from`]) gave no filter: the reader failed, or
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
    /// [`DecodeError::Truncated`]).
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

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::Decode(e) => Some(e),
        }
    }
}

impl From<DecodeError> for ReadError {
    fn from(e: DecodeError) -> Self {
        Self::Decode(e)
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

impl<S: HasherIdentity> CuckooFilter<S> {
    /// Writes the filter to `writer` in [`to_bytes`](Self::to_bytes)'s format,
    /// reading the table as it writes: no copy of the table is made.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use lockfree_cuckoo_filter::CuckooFilter;
    ///
    /// let f = CuckooFilter::with_capacity(1000);
    /// f.insert("apple")?;
    /// let mut file = Cursor::new(Vec::new());
    /// f.write_to(&mut file)?;
    /// let g = CuckooFilter::read_from(&file.get_ref()[..])?;
    /// assert!(g.contains("apple"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<X: Write + Seek>(&self, mut writer: X) -> io::Result<()> {
        writer.write_all(&self.to_bytes())
    }

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
    pub fn read_from_with_hasher<R: Read>(mut reader: R, hasher: S) -> Result<Self, ReadError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        Ok(Self::from_bytes_with_hasher(&bytes, hasher)?)
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
    pub fn read_from<R: Read>(mut reader: R) -> Result<Self, ReadError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        Ok(Self::from_bytes(&bytes)?)
    }
}

impl<S: HasherIdentity> GrowableCuckooFilter<S> {
    /// Writes the filter to `writer` in [`to_bytes`](Self::to_bytes)'s format.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    ///
    /// let f = GrowableCuckooFilter::with_capacity(10);
    /// f.insert("apple")?;
    /// let mut file = Cursor::new(Vec::new());
    /// f.write_to(&mut file)?;
    /// let g = GrowableCuckooFilter::read_from(&file.get_ref()[..])?;
    /// assert!(g.contains("apple"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<X: Write + Seek>(&self, mut writer: X) -> io::Result<()> {
        writer.write_all(&self.to_bytes())
    }

    /// Reads a growable filter written with `hasher`.
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
    pub fn read_from_with_hasher<R: Read>(mut reader: R, hasher: S) -> Result<Self, ReadError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        Ok(Self::from_bytes_with_hasher(&bytes, hasher)?)
    }
}

impl GrowableCuckooFilter<DefaultHashBuilder> {
    /// Reads a growable filter written with the default hasher.
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
    pub fn read_from<R: Read>(mut reader: R) -> Result<Self, ReadError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        Ok(Self::from_bytes(&bytes)?)
    }
}
