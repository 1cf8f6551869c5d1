//! Writing a file around the page cache.
//!
//! A save writes tens of MiB in one burst. Written through the page cache,
//! those bytes become dirty pages that the kernel's writeback workers push to
//! the disk later, on threads of their own at normal priority, each running
//! for milliseconds at a time on the cores that serve connections: the
//! save's I/O lands on the requests' latency. A file opened `O_DIRECT` is
//! written from the save's own buffer, in the save's own thread (which runs
//! at a lower priority), and leaves no dirty page behind but those of its
//! last part MiB.
//!
//! A direct write must start at an address, a file offset and a length that
//! are multiples of the device's logical block size. [`DirectFile`] writes
//! whole chunks (1 MiB) from a buffer aligned to 4 KiB, and the last part
//! chunk through the page cache. A file system that refuses `O_DIRECT` at
//! open, or one that refuses a write with `EINVAL` (a block size above
//! 4 KiB), makes the file a plain buffered one from there on; the bytes
//! written are the same either way, and nothing is written twice.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// Bytes a direct write carries.
const CHUNK: usize = 1 << 20;

/// The alignment of the buffer and of every direct write's length and
/// offset: the logical block size of nearly every device.
const ALIGN: usize = 4096;

/// Where a [`DirectFile`] writes: a file, or in tests a stand-in.
pub(crate) trait Sink: Write {
    /// Makes every later write go through the page cache.
    fn end_direct(&mut self) -> io::Result<()>;
}

impl Sink for File {
    fn end_direct(&mut self) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
            let flags = fcntl_getfl(&*self)?;
            fcntl_setfl(&*self, flags - OFlags::DIRECT)?;
        }
        Ok(())
    }
}

/// A writer that sends whole aligned chunks to its sink with direct I/O and
/// the rest through the page cache.
///
/// [`Write::flush`] writes nothing (a part chunk cannot go out directly);
/// [`DirectFile::finish`] writes what is held and gives the sink back. Bytes
/// not yet finished are not in the file.
pub(crate) struct DirectFile<S: Sink = File> {
    sink: S,
    /// `chunk + ALIGN` bytes, of which `start..start + chunk` are aligned
    /// and used. Never resized, so its address never moves.
    buf: Vec<u8>,
    start: usize,
    chunk: usize,
    /// Bytes held at `start`.
    held: usize,
    /// Whether the sink still takes direct writes.
    direct: bool,
}

impl DirectFile<File> {
    /// Creates (or truncates) the file at `path` for writing, with direct
    /// I/O where its file system allows it.
    pub(crate) fn create(path: &Path) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let mut options = File::options();
            options.write(true).create(true).truncate(true);
            let direct = rustix::fs::OFlags::DIRECT.bits() as i32;
            match options.custom_flags(direct).open(path) {
                Ok(file) => return Ok(DirectFile::new(file, true, CHUNK)),
                Err(e) if refused(&e) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(DirectFile::new(File::create(path)?, false, CHUNK))
    }
}

/// Whether `e` is the refusal of a direct open or write (`EINVAL`), after
/// which the same bytes may go through the page cache.
#[cfg(target_os = "linux")]
fn refused(e: &io::Error) -> bool {
    rustix::io::Errno::from_io_error(e) == Some(rustix::io::Errno::INVAL)
}

/// Elsewhere no file is opened for direct I/O, so nothing is refused.
#[cfg(not(target_os = "linux"))]
fn refused(_: &io::Error) -> bool {
    false
}

impl<S: Sink> DirectFile<S> {
    fn new(sink: S, direct: bool, chunk: usize) -> Self {
        debug_assert!(chunk > 0 && chunk.is_multiple_of(ALIGN));
        let buf = vec![0u8; chunk + ALIGN];
        let start = buf.as_ptr().align_offset(ALIGN);
        DirectFile {
            sink,
            buf,
            start,
            chunk,
            held: 0,
            direct,
        }
    }

    /// Whether the sink still takes direct writes.
    #[cfg(test)]
    fn is_direct(&self) -> bool {
        self.direct
    }

    /// From here on the sink takes every write through the page cache.
    fn end_direct(&mut self) -> io::Result<()> {
        if self.direct {
            self.sink.end_direct()?;
            self.direct = false;
        }
        Ok(())
    }

    /// Writes the bytes held: a whole chunk directly while the sink allows
    /// it; a part chunk, or what follows a refusal, through the page cache.
    fn write_held(&mut self) -> io::Result<()> {
        if self.held < self.chunk {
            self.end_direct()?;
        }
        let mut done = 0;
        while done < self.held {
            let from = self.start + done;
            match self.sink.write(&self.buf[from..self.start + self.held]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A refused direct write wrote nothing (after a short one the
                // rest may not be aligned): the rest goes through the page
                // cache.
                Err(e) if self.direct && refused(&e) => self.end_direct()?,
                Err(e) => return Err(e),
            }
        }
        self.held = 0;
        Ok(())
    }

    /// Writes every byte held and gives the sink back.
    pub(crate) fn finish(mut self) -> io::Result<S> {
        self.write_held()?;
        Ok(self.sink)
    }
}

impl<S: Sink> Write for DirectFile<S> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.held == self.chunk {
            self.write_held()?;
        }
        let n = bytes.len().min(self.chunk - self.held);
        let at = self.start + self.held;
        self.buf[at..at + n].copy_from_slice(&bytes[..n]);
        self.held += n;
        Ok(n)
    }

    /// Writes nothing: a part chunk waits for the rest of its bytes or for
    /// [`DirectFile::finish`].
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that behaves as a direct-I/O file does: in direct mode it
    /// refuses (`EINVAL`) a write whose address, offset or length is not
    /// aligned, and where told refuses one at a given offset, or writes
    /// only part of one.
    struct Device {
        bytes: Vec<u8>,
        direct: bool,
        /// Refuse the direct write at this offset.
        refuse_at: Option<usize>,
        /// Direct writes carry at most this many bytes.
        short: Option<usize>,
        direct_writes: usize,
        plain_writes: usize,
    }

    impl Device {
        fn new(refuse_at: Option<usize>, short: Option<usize>) -> Self {
            Device {
                bytes: Vec::new(),
                direct: true,
                refuse_at,
                short,
                direct_writes: 0,
                plain_writes: 0,
            }
        }
    }

    impl Write for Device {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if self.direct {
                let aligned = (b.as_ptr() as usize).is_multiple_of(ALIGN)
                    && self.bytes.len().is_multiple_of(ALIGN)
                    && b.len().is_multiple_of(ALIGN);
                if !aligned || self.refuse_at == Some(self.bytes.len()) {
                    return Err(io::Error::from_raw_os_error(22)); // EINVAL
                }
                self.direct_writes += 1;
            } else {
                self.plain_writes += 1;
            }
            let n = match self.short {
                Some(s) if self.direct => b.len().min(s),
                _ => b.len(),
            };
            self.bytes.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink for Device {
        fn end_direct(&mut self) -> io::Result<()> {
            assert!(self.direct, "direct I/O ended twice");
            self.direct = false;
            Ok(())
        }
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 131 % 251) as u8).collect()
    }

    /// Writes `data` in uneven pieces, as the save does, and flushes
    /// between them.
    fn write_in_pieces<W: Write>(out: &mut W, data: &[u8]) {
        let mut rest = data;
        let mut piece = 1;
        while !rest.is_empty() {
            let n = piece.min(rest.len());
            out.write_all(&rest[..n]).unwrap();
            out.flush().unwrap();
            rest = &rest[n..];
            piece = piece * 3 + 7;
        }
    }

    const SMALL: usize = 2 * ALIGN;

    #[cfg(target_os = "linux")]
    #[test]
    fn every_length_lands_whole_in_aligned_direct_writes() {
        for len in [0, 1, SMALL - 1, SMALL, SMALL + 1, 3 * SMALL + 17, 5 * SMALL] {
            let mut out = DirectFile::new(Device::new(None, None), true, SMALL);
            write_in_pieces(&mut out, &pattern(len));
            let device = out.finish().unwrap();
            assert_eq!(device.bytes, pattern(len), "{len} bytes");
            assert_eq!(device.direct_writes, len / SMALL, "{len} bytes");
            assert_eq!(device.plain_writes, usize::from(len % SMALL != 0));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_refused_or_short_direct_write_goes_on_through_the_page_cache() {
        let len = 4 * SMALL + 5;
        for (refuse_at, short) in [
            (Some(0), None),
            (Some(2 * SMALL), None),
            (None, Some(ALIGN + 100)),
            (None, Some(ALIGN)),
        ] {
            let mut out = DirectFile::new(Device::new(refuse_at, short), true, SMALL);
            write_in_pieces(&mut out, &pattern(len));
            assert!(!out.is_direct() || short == Some(ALIGN));
            let device = out.finish().unwrap();
            assert_eq!(device.bytes, pattern(len), "{refuse_at:?} {short:?}");
            assert!(!device.direct);
            if let Some(at) = refuse_at {
                assert_eq!(device.direct_writes, at / SMALL);
            }
        }
    }

    #[test]
    fn a_real_file_holds_the_bytes() {
        let dir = std::env::temp_dir().join(format!("cuckoo-direct-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for len in [0, 5, CHUNK - 1, CHUNK, 2 * CHUNK + 4097] {
            let path = dir.join("file");
            let mut out = DirectFile::create(&path).unwrap();
            write_in_pieces(&mut out, &pattern(len));
            out.finish().unwrap().sync_all().unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), pattern(len), "{len} bytes");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
