//! Saving the filter to a file while serving, and loading it at start.
//!
//! A save writes the filter with `CuckooFilter::write_to` into a temporary
//! file in the same directory as the snapshot file, through a `BufWriter`,
//! flushes it and `sync_all`s it, renames it over the snapshot file, and
//! then syncs the directory, so that the rename itself survives a crash. The
//! snapshot file is therefore always a whole save: a save cut short (the
//! process killed, the disk full) leaves the previous one in place, and at
//! most a stale temporary file, which the next start removes.
//!
//! The saver thread saves every `--every` seconds while connection threads
//! keep inserting: `write_to` reads the live filter, and every key whose
//! insert returned before the save began is in it (the library's guarantee
//! for a snapshot of a live filter; a dedup server never removes). Keys
//! added during the save may or may not be in it; the next save has them.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use lockfree_cuckoo_filter::CuckooFilter;

/// Saves begun and saves completed, for `STATS`. A save's number is the
/// value of `started` once it has been counted: a key whose insert returned
/// before `STATS` read `saves_started=S` is in every save numbered above S.
#[derive(Default, Debug)]
pub struct Saves {
    pub started: AtomicU64,
    pub completed: AtomicU64,
}

/// The temporary file a save writes before the rename: next to `path`, so
/// that the rename stays within one file system.
fn temporary(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.saving"))
}

/// The directory that holds `path` (`.` for a bare file name).
fn directory(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// The filter saved at `path`, `None` if there is no such file, or an error
/// that says what is wrong with the file. Removes the temporary file of a
/// save that was cut short.
pub fn load(path: &Path) -> Result<Option<CuckooFilter>, String> {
    let _ = fs::remove_file(temporary(path));
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot open {}: {e}", path.display())),
    };
    CuckooFilter::read_from(BufReader::new(file))
        .map(Some)
        .map_err(|e| format!("{} is not a saved filter: {e}", path.display()))
}

/// Saves `filter` to `path` atomically (see the module documentation);
/// returns the size of the file written.
pub fn save(filter: &CuckooFilter, path: &Path) -> io::Result<u64> {
    let tmp = temporary(path);
    let written = (|| {
        let mut writer = BufWriter::new(File::create(&tmp)?);
        filter.write_to(&mut writer)?;
        let file = writer.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        let bytes = file.metadata()?.len();
        drop(file);
        fs::rename(&tmp, path)?;
        Ok(bytes)
    })();
    match written {
        Ok(bytes) => {
            sync_directory(directory(path))?;
            Ok(bytes)
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Makes a rename in `dir` durable: on Unix, a directory is synced through a
/// handle opened on it. Elsewhere the rename is left to the file system.
fn sync_directory(dir: &Path) -> io::Result<()> {
    if cfg!(unix) {
        File::open(dir)?.sync_all()
    } else {
        Ok(())
    }
}

/// The thread that saves every so often.
pub struct Saver {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: JoinHandle<()>,
}

impl Saver {
    /// Saves `filter` to `path` every `every`, counting in `saves`, and
    /// prints a line `saved #N: ...` on stdout after each save completes
    /// (the self-test reads it).
    pub fn start(
        filter: Arc<CuckooFilter>,
        path: PathBuf,
        every: Duration,
        saves: Arc<Saves>,
    ) -> io::Result<Saver> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let thread = thread::Builder::new().name("saver".into()).spawn({
            let stop = Arc::clone(&stop);
            move || {
                let (stopped, wake) = &*stop;
                let mut stopped = stopped.lock().unwrap();
                loop {
                    stopped = wake.wait_timeout(stopped, every).unwrap().0;
                    if *stopped {
                        return;
                    }
                    if let Err(e) = save_counted(&filter, &path, &saves) {
                        eprintln!("dedup_server: {}: {e}", path.display());
                    }
                }
            }
        })?;
        Ok(Saver { stop, thread })
    }

    /// Stops the thread, after the save under way if any.
    pub fn stop(self) {
        *self.stop.0.lock().unwrap() = true;
        self.stop.1.notify_all();
        let _ = self.thread.join();
    }
}

/// One save, counted in `saves` and reported on stdout; a failure is
/// returned (the saver thread reports it and tries again at the next save).
pub fn save_counted(filter: &CuckooFilter, path: &Path, saves: &Saves) -> io::Result<()> {
    let n = saves.started.fetch_add(1, Ordering::SeqCst) + 1;
    // Orders the count before the save's reads of the filter (the `STATS`
    // side has the other fence): a `STATS` that read a count below `n`
    // came, with every insert answered before it, before this save began.
    fence(Ordering::SeqCst);
    let len = filter.len();
    let start = Instant::now();
    match save(filter, path) {
        Ok(bytes) => {
            saves.completed.store(n, Ordering::SeqCst);
            println!(
                "saved #{n}: {bytes} bytes to {} in {:.1} ms (len={len} when it began)",
                path.display(),
                start.elapsed().as_secs_f64() * 1e3
            );
            Ok(())
        }
        Err(e) => Err(io::Error::new(e.kind(), format!("save #{n}: {e}"))),
    }
}
