//! Saving every filter into one file, and loading it at start.
//!
//! # The file
//!
//! ```text
//! "CFSERVER" version:u32            the header
//! per filter:
//!   kind:u8 (1 fixed, 2 growable)
//!   name length:u32, name
//!   bucket size, max iterations, expansion, deletes: u64 each
//!   the filter, in the library's byte format (its own checksum)
//! 0xFF, filters:u64, crc32c:u32     the end: a count, and the CRC-32C of
//!                                   every byte above that is not a filter's
//! ```
//!
//! Integers are little-endian. Nothing may follow the end: a file with more
//! bytes, too few, a wrong checksum, or any other damage stops the start with
//! an error that says what is wrong, and is left as it is.
//!
//! # A save
//!
//! A save writes a temporary file beside the target, reading each filter
//! while connections go on changing it (`write_to` takes a live snapshot:
//! every item added before the save began and not removed is in it; nothing
//! waits for the save), with direct I/O where the file system allows it, so
//! that the kernel's writeback does not compete with the connections for
//! the cores (the `direct` module says how). Then it syncs the file, renames
//! it over the target, and syncs the directory, so that the target is always
//! one whole save, whatever moment the process or the machine stops at. A
//! background save runs on a thread of its own at a lower priority, `SAVE`
//! on the runtime's blocking pool: never on the threads that serve
//! connections. A server that stops lets a background save under way end.
//!
//! # The lock
//!
//! A server holds an advisory lock (`flock`) on `<dbfilename>.lock` in its
//! directory for its whole life: a second server started on the same file
//! is refused. The lock guards only those that look at the same lock file:
//! if the directory is removed and made again, a second server starts there
//! on a new one. So each save checks, before it makes its temporary file and
//! again before the rename, that the file at the lock path is still the one
//! the server holds (device and inode), and fails if it is not: two servers
//! never overwrite each other's saves.

use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use lockfree_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter, ReadError};

use crate::db::{Db, Entry, Filter, Params};
use crate::direct::DirectFile;

const MAGIC: &[u8; 8] = b"CFSERVER";
const VERSION: u32 = 1;
const FIXED: u8 = 1;
const GROWABLE: u8 = 2;
const END: u8 = 0xFF;

/// The save file of a server, and what its saves have done.
pub struct Store {
    path: PathBuf,
    db: Arc<Db>,
    /// Held by the save under way: saves run one at a time.
    saving: Mutex<()>,
    /// The thread of the last background save started: the save is under
    /// way while it has not finished, and the server joins it before it
    /// stops ([`Store::finish_background_save`]).
    background: Mutex<Option<JoinHandle<()>>>,
    /// Unix time of the last save that completed (or of the load at start).
    last_save: AtomicI64,
    /// Saves completed since start.
    saves: AtomicU64,
    /// Whether the last save failed.
    last_failed: AtomicBool,
    /// The lock on `<path>.lock`, held while the store lives; each save
    /// checks that it is still the file at that path ([`check_lock`]).
    lock: File,
}

/// Why the save file could not be used at start.
#[derive(Debug)]
pub struct OpenError(pub String);

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OpenError {}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The temporary file a save writes: beside the target, so that the rename
/// stays within one file system.
fn temporary(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.saving"))
}

fn lock_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!("{name}.lock"))
}

fn directory(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

impl Store {
    /// Takes the lock on `path`, loads the filters saved there (if the file
    /// exists) into `db`, and returns the store and how many filters it loaded.
    pub fn open(path: PathBuf, db: Arc<Db>) -> Result<(Store, usize), OpenError> {
        let lock_file = lock_path(&path);
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_file)
            .map_err(|e| OpenError(format!("cannot open {}: {e}", lock_file.display())))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(OpenError(format!(
                    "another server is using {} (it holds the lock on {})",
                    path.display(),
                    lock_file.display()
                )))
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(OpenError(format!(
                    "cannot lock {}: {e}",
                    lock_file.display()
                )))
            }
        }
        // A save cut short left this; the lock says no other server writes it.
        let _ = fs::remove_file(temporary(&path));
        let loaded = match File::open(&path) {
            Ok(file) => load(BufReader::with_capacity(1 << 20, file), &db).map_err(|e| {
                OpenError(format!(
                    "{} is not a save file this server can load: {e}; it was left as it is \
                     (move it away to start empty)",
                    path.display()
                ))
            })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
            Err(e) => return Err(OpenError(format!("cannot open {}: {e}", path.display()))),
        };
        db.take_dirty();
        Ok((
            Store {
                path,
                db,
                saving: Mutex::new(()),
                background: Mutex::new(None),
                last_save: AtomicI64::new(now()),
                saves: AtomicU64::new(0),
                last_failed: AtomicBool::new(false),
                lock,
            },
            loaded,
        ))
    }

    /// The file saves go to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// [`Self::save`] on one of the runtime's blocking threads, for a caller
    /// on a worker, which goes on serving other connections meanwhile; a
    /// save that panicked is an error like any other.
    pub async fn save_off_worker(self: &Arc<Self>) -> io::Result<SaveReport> {
        let store = Arc::clone(self);
        tokio::task::spawn_blocking(move || store.save())
            .await
            .map_err(|e| io::Error::other(e.to_string()))?
    }

    /// Saves now, on this thread, after any save under way. Blocking: call it
    /// from a blocking thread.
    pub fn save(&self) -> io::Result<SaveReport> {
        let _one_at_a_time = self.saving.lock().unwrap_or_else(|e| e.into_inner());
        self.db.take_dirty();
        let start = Instant::now();
        let result = write_file(&self.path, &self.db, &self.lock);
        match &result {
            Ok(_) => {
                self.last_save.store(now(), Ordering::SeqCst);
                self.saves.fetch_add(1, Ordering::SeqCst);
                self.last_failed.store(false, Ordering::SeqCst);
            }
            Err(_) => {
                // What this save missed must be saved by the next one.
                self.db.touch();
                self.last_failed.store(true, Ordering::SeqCst);
            }
        }
        result.map(|(filters, bytes)| SaveReport {
            filters,
            bytes,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// Starts a save on a thread of its own unless one is started already;
    /// whether it started one.
    ///
    /// The thread runs at a lower priority than the threads that serve
    /// connections (nice 10, on Linux): a save is a few hundred milliseconds
    /// of reading and writing that nobody waits for, and where the machine
    /// has fewer cores than busy threads, a request that wakes a worker
    /// should not queue behind it.
    pub fn background_save(self: &Arc<Self>) -> bool {
        // Held while the save starts, so that two saves never start at once
        // and a stop waiting for saves ([`Store::finish_background_save`])
        // finds the handle of every save that started before it looked.
        let mut slot = self.background.lock().unwrap_or_else(|e| e.into_inner());
        if running(&slot) {
            return false;
        }
        let store = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("cuckoo-save".into())
            .spawn(move || {
                lower_priority();
                match store.save() {
                    Ok(report) => eprintln!("cuckoo-server: {report}"),
                    Err(e) => eprintln!(
                        "cuckoo-server: background save to {} failed: {e}",
                        store.path.display()
                    ),
                }
            });
        match spawned {
            Ok(thread) => {
                // The thread before it, if any, has finished: its handle is
                // dropped.
                *slot = Some(thread);
                true
            }
            Err(e) => {
                eprintln!("cuckoo-server: cannot start a background save: {e}");
                false
            }
        }
    }

    /// Waits for the background save under way, if any, to end: a server
    /// stopping does not cut short a save it started. Blocking: call it
    /// from a blocking thread.
    pub fn finish_background_save(&self) {
        let thread = self
            .background
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }

    /// Whether a background save is started or running.
    pub fn background_running(&self) -> bool {
        running(&self.background.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Unix time of the last completed save (or of the start).
    pub fn last_save(&self) -> i64 {
        self.last_save.load(Ordering::SeqCst)
    }

    /// Saves completed since start.
    pub fn saves(&self) -> u64 {
        self.saves.load(Ordering::SeqCst)
    }

    /// Whether the last save failed.
    pub fn last_failed(&self) -> bool {
        self.last_failed.load(Ordering::SeqCst)
    }
}

/// Whether the background save whose thread `slot` holds, if any, is
/// still under way.
fn running(slot: &Option<JoinHandle<()>>) -> bool {
    slot.as_ref().is_some_and(|thread| !thread.is_finished())
}

/// Lowers the calling thread's scheduling priority to nice 10. On Linux a
/// thread has its own nice value, which `setpriority` on its thread id
/// sets; elsewhere, and if the call fails, the thread keeps its priority.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 10);
}

/// What a save wrote.
#[derive(Clone, Copy, Debug)]
pub struct SaveReport {
    /// Filters saved.
    pub filters: u64,
    /// Bytes of the file.
    pub bytes: u64,
    /// How long it took.
    pub seconds: f64,
}

impl std::fmt::Display for SaveReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "saved {} filters, {} bytes, in {:.1} ms",
            self.filters,
            self.bytes,
            self.seconds * 1e3
        )
    }
}

/// A writer that keeps the CRC-32C of the framing bytes written through
/// [`Framing::put`].
struct Framing<W> {
    out: W,
    crc: u32,
}

impl<W: Write> Framing<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.out.write_all(bytes)
    }
}

/// Checks that the file at `path`'s lock path is the one `held` opened
/// (the same device and inode). The lock keeps a second server off the
/// file only while both look at one lock file: if `--dir` is removed and
/// made again, a server started there takes a new lock file and sees no
/// other, and the two would save over each other. A server whose lock file
/// is no longer at its path does not save.
fn check_lock(path: &Path, held: &File) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let lock_file = lock_path(path);
    let ours = held.metadata()?;
    let why = match fs::metadata(&lock_file) {
        Ok(now) if now.dev() == ours.dev() && now.ino() == ours.ino() => return Ok(()),
        Ok(_) => "is another file than the one this server locked",
        Err(e) if e.kind() == io::ErrorKind::NotFound => "is gone",
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot check the lock file {}: {e}", lock_file.display()),
            ))
        }
    };
    Err(io::Error::other(format!(
        "the lock file {} {why} (was the directory removed or replaced?): \
         not saving, lest another server's file be overwritten",
        lock_file.display()
    )))
}

/// Writes every filter of `db` to a temporary file and renames it over
/// `path`, if the lock `held` is still the one at the lock path (looked at
/// before the temporary file is made and again before the rename); the
/// filters written and the file's length.
fn write_file(path: &Path, db: &Db, held: &File) -> io::Result<(u64, u64)> {
    // Before the temporary file is made: it may be another server's.
    check_lock(path, held)?;
    let tmp = temporary(path);
    let written = (|| {
        let mut out = Framing {
            out: DirectFile::create(&tmp)?,
            crc: 0,
        };
        out.put(MAGIC)?;
        out.put(&VERSION.to_le_bytes())?;
        let mut count = 0u64;
        for (key, entry) in db.entries() {
            let kind = match entry.filter {
                Filter::Fixed(_) => FIXED,
                Filter::Growable(_) => GROWABLE,
            };
            let name_len = u32::try_from(key.len())
                .map_err(|_| io::Error::other("a name longer than 4 GiB"))?;
            out.put(&[kind])?;
            out.put(&name_len.to_le_bytes())?;
            out.put(&key)?;
            for n in [
                entry.params.bucket_size,
                entry.params.max_iterations,
                entry.params.expansion,
                entry.deleted.load(Ordering::Relaxed),
            ] {
                out.put(&n.to_le_bytes())?;
            }
            match &entry.filter {
                Filter::Fixed(f) => f.write_to(&mut out.out)?,
                Filter::Growable(f) => f.write_to(&mut out.out)?,
            }
            count += 1;
        }
        out.put(&[END])?;
        out.put(&count.to_le_bytes())?;
        let crc = out.crc;
        out.out.write_all(&crc.to_le_bytes())?;
        let file = out.out.finish()?;
        file.sync_all()?;
        let bytes = file.metadata()?.len();
        drop(file);
        check_lock(path, held)?;
        fs::rename(&tmp, path)?;
        Ok((count, bytes))
    })();
    match written {
        Ok(done) => {
            File::open(directory(path))?.sync_all()?;
            Ok(done)
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A reader that keeps the CRC-32C of the framing bytes read through
/// [`Source::take`].
struct Source<R> {
    input: R,
    crc: u32,
}

impl<R: Read> Source<R> {
    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let mut bytes = [0u8; N];
        self.input
            .read_exact(&mut bytes)
            .map_err(|e| read_failure(e, what))?;
        self.crc = crc32c::crc32c_append(self.crc, &bytes);
        Ok(bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        self.take::<8>(what).map(u64::from_le_bytes)
    }
}

fn read_failure(e: io::Error, what: &str) -> String {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        format!("it ends before {what} (truncated)")
    } else {
        format!("reading {what}: {e}")
    }
}

/// Loads every filter of a save file into `db`; how many.
fn load<R: Read>(input: R, db: &Db) -> Result<usize, String> {
    let mut src = Source { input, crc: 0 };
    let magic: [u8; 8] = src.take("the header")?;
    if &magic != MAGIC {
        return Err("it does not start with CFSERVER (not a save file of this server)".into());
    }
    let version = u32::from_le_bytes(src.take("the header")?);
    if version != VERSION {
        return Err(format!(
            "format version {version}; this server reads version {VERSION}"
        ));
    }
    let mut loaded = Vec::new();
    loop {
        let [kind] = src.take::<1>("the next filter or the end")?;
        if kind == END {
            break;
        }
        if kind != FIXED && kind != GROWABLE {
            return Err(format!(
                "filter {} has an unknown kind {kind} (damaged)",
                loaded.len() + 1
            ));
        }
        let name_len = u32::from_le_bytes(src.take("a filter's name")?) as u64;
        let mut name = Vec::new();
        (&mut src.input)
            .take(name_len)
            .read_to_end(&mut name)
            .map_err(|e| read_failure(e, "a filter's name"))?;
        if name.len() as u64 != name_len {
            return Err("it ends inside a filter's name (truncated)".into());
        }
        src.crc = crc32c::crc32c_append(src.crc, &name);
        let shown = String::from_utf8_lossy(&name[..name.len().min(64)]).into_owned();
        let params = Params {
            bucket_size: src.u64("a filter's options")?,
            max_iterations: src.u64("a filter's options")?,
            expansion: src.u64("a filter's options")?,
        };
        let deleted = src.u64("a filter's options")?;
        let filter = if kind == FIXED {
            CuckooFilter::read_from(&mut src.input).map(Filter::Fixed)
        } else {
            GrowableCuckooFilter::read_from(&mut src.input).map(Filter::Growable)
        }
        .map_err(|e| match e {
            ReadError::Io(e) => format!("reading filter {shown:?}: {e}"),
            e => format!("filter {shown:?} is damaged: {e}"),
        })?;
        loaded.push((name, Entry::new(filter, params, deleted)));
    }
    let count = src.u64("the end")?;
    let expected = src.crc;
    let mut crc = [0u8; 4];
    src.input
        .read_exact(&mut crc)
        .map_err(|e| read_failure(e, "the checksum"))?;
    if count != loaded.len() as u64 {
        return Err(format!(
            "its end says {count} filters, but {} were read (damaged)",
            loaded.len()
        ));
    }
    if u32::from_le_bytes(crc) != expected {
        return Err("its checksum does not match (damaged)".into());
    }
    let mut extra = [0u8; 1];
    match src.input.read(&mut extra) {
        Ok(0) => {}
        Ok(_) => return Err("bytes follow the saved filters (damaged or appended to)".into()),
        Err(e) => return Err(format!("reading past the end: {e}")),
    }
    let n = loaded.len();
    for (name, entry) in loaded {
        db.replace(&name, entry);
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Spec;

    /// A background save's thread runs at nice 10; the thread that asked
    /// keeps its own priority.
    #[cfg(target_os = "linux")]
    #[test]
    fn lower_priority_lowers_only_the_calling_thread() {
        // Field 19 of /proc/thread-self/stat is the thread's nice value (the
        // command name before it, in parentheses, has no spaces here).
        fn nice() -> i32 {
            let stat = fs::read_to_string("/proc/thread-self/stat").unwrap();
            let after_name = &stat[stat.rfind(')').unwrap() + 2..];
            after_name.split(' ').nth(16).unwrap().parse().unwrap()
        }
        let before = nice();
        let inside = std::thread::spawn(|| {
            lower_priority();
            nice()
        })
        .join()
        .unwrap();
        // (A thread already above 10 may keep its nice value: lowering it
        // needs privilege.)
        assert!(
            inside == 10 || (before > 10 && inside == before),
            "the save thread's nice value: {inside}"
        );
        assert_eq!(nice(), before, "the calling thread's");
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("cuckoo-server-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn filled() -> Arc<Db> {
        let db = Arc::new(Db::new(0));
        for (name, expansion) in [(&b"fixed"[..], 0), (b"grows", 1)] {
            let spec = Spec {
                capacity: 1000,
                rate: 0.01,
                params: Params {
                    expansion,
                    ..Params::default()
                },
            };
            let (entry, _) = db.insert_new(name, db.build(&spec, name).unwrap());
            for i in 0..500u32 {
                entry.filter.insert(&i.to_le_bytes()).unwrap();
            }
        }
        db
    }

    #[test]
    fn saves_load_and_damage_is_refused() {
        let d = dir("persist");
        let path = d.join("dump.cuckoo");
        let db = filled();
        let (store, n) = Store::open(path.clone(), Arc::clone(&db)).unwrap();
        assert_eq!(n, 0);
        let report = store.save().unwrap();
        assert_eq!(report.filters, 2);
        // The lock: a second store on the same file is refused.
        let err = Store::open(path.clone(), Arc::new(Db::new(0)))
            .err()
            .unwrap();
        assert!(err.0.contains("another server"), "{err}");
        drop(store);

        let again = Arc::new(Db::new(0));
        let (_store, n) = Store::open(path.clone(), Arc::clone(&again)).unwrap();
        assert_eq!(n, 2);
        for name in [&b"fixed"[..], b"grows"] {
            let e = again.get(name).unwrap();
            assert!((0..500u32).all(|i| e.filter.contains(&i.to_le_bytes())));
            assert_eq!(e.filter.len(), 500);
        }
        drop(_store);

        let good = fs::read(&path).unwrap();
        let mut cases: Vec<(Vec<u8>, &str)> = vec![
            (b"not a save file".to_vec(), "does not start"),
            (good[..good.len() - 1].to_vec(), "truncated"),
            ([&good[..], b"x"].concat(), "bytes follow"),
            (good[..40].to_vec(), "truncated"),
        ];
        let mut flipped = good.clone();
        flipped[18] ^= 1; // in the first name
        cases.push((flipped, "checksum"));
        let mut flipped = good.clone();
        let mid = good.len() / 2;
        flipped[mid] ^= 0x40; // in a filter
        cases.push((flipped, "damaged"));
        for (bytes, says) in cases {
            fs::write(&path, &bytes).unwrap();
            let err = Store::open(path.clone(), Arc::new(Db::new(0)))
                .err()
                .unwrap();
            assert!(err.0.contains(says), "{says}: {err}");
            assert_eq!(fs::read(&path).unwrap(), bytes, "left as it is");
        }
        fs::remove_dir_all(&d).unwrap();
    }
}
