//! The server: an accept thread, a thread per connection, one shared filter.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use lockfree_cuckoo_filter::{CuckooFilter, InsertError};

use crate::persist::Saves;

/// The longest key accepted, in bytes, not counting a trailing `\r`.
pub const MAX_KEY: usize = 1024;

/// How long a connection thread waits in `read` before it looks at the
/// shutdown flag again. Blocking std sockets cannot be woken from another
/// thread, so an idle connection polls; 10 wake-ups a second cost nothing.
const POLL: Duration = Duration::from_millis(100);

/// A client that has not taken its answers for this long is dropped.
/// Without it, a client that sends and never reads would leave its thread
/// blocked in `write` for good, once both socket buffers are full.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long shutdown waits for connection threads to end. Idle ones end
/// within [`POLL`], busy ones after their current batch; one still running
/// after this is stuck (in the filter, or writing to a client that does not
/// read), and is reported and left behind rather than waited for.
const STOP_WAIT: Duration = Duration::from_secs(1);

/// Read and write buffer per connection: a pipelined burst of a few thousand
/// short keys is taken in by one `read` and answered by one `write`.
const BUF_SIZE: usize = 64 * 1024;

/// The one place the server asks the filter "was this key new?".
///
/// `Ok(true)`: the key was absent and has been added (answer `new`);
/// `Ok(false)`: it was present, or a false positive, and nothing was added
/// (answer `dup`); `Err(Full)`: no room could be made (answer `full`).
pub fn insert_if_absent(filter: &CuckooFilter, key: &str) -> Result<bool, InsertError> {
    // One atomic step: two threads given the same key at once cannot both
    // answer `new` when their copies meet in one bucket word (the usual case),
    // and never lose the key. The load generator still counts keys answered
    // `new` twice while both requests were in flight (`double_new`), and
    // `--strict` fails on any.
    filter.insert_if_absent(key)
}

/// What the accept thread and every connection thread share.
struct Shared {
    filter: Arc<CuckooFilter>,
    shutdown: AtomicBool,
    /// Connection threads running now (STATS reports it; the cap checks it).
    live: AtomicUsize,
    max_connections: usize,
    /// Saves begun and completed (`STATS` reports them; all 0 without
    /// `--snapshot`).
    saves: Arc<Saves>,
}

/// A running server: its address, and the handle that stops it.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// Returns the number of connection threads that did not stop in time.
    accept: JoinHandle<usize>,
}

impl Server {
    /// Binds `addr` (port 0 picks a free port; see [`Server::addr`]) and
    /// starts accepting connections on a thread of its own. `saves` is what
    /// `STATS` reports of the saver's work.
    pub fn start(
        addr: impl ToSocketAddrs,
        filter: Arc<CuckooFilter>,
        max_connections: usize,
        saves: Arc<Saves>,
    ) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            filter,
            shutdown: AtomicBool::new(false),
            live: AtomicUsize::new(0),
            max_connections,
            saves,
        });
        let accept = thread::Builder::new().name("accept".into()).spawn({
            let shared = Arc::clone(&shared);
            move || accept_loop(listener, &shared)
        })?;
        Ok(Server {
            addr,
            shared,
            accept,
        })
    }

    /// The address the server listens on, with the port actually bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Blocks while the server runs, which is until the process ends: only
    /// [`Server::shutdown`] stops it, and that takes the server.
    pub fn wait(self) -> thread::Result<()> {
        self.accept.join().map(drop)
    }

    /// Stops accepting, lets every connection thread finish its current
    /// batch of answers, and joins them. `Err` if the accept thread panicked
    /// or a connection thread did not stop within [`STOP_WAIT`].
    pub fn shutdown(self) -> Result<(), String> {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        // `accept` blocks and std offers no way to interrupt it, so connect
        // once: the accept thread wakes up, sees the flag and stops.
        if let Err(e) = TcpStream::connect_timeout(&wake_addr(self.addr), Duration::from_secs(1)) {
            eprintln!("server: could not wake the accept thread: {e}");
        }
        match self.accept.join() {
            Ok(0) => Ok(()),
            Ok(stuck) => Err(format!(
                "{stuck} connection threads still running {} ms after shutdown",
                STOP_WAIT.as_millis()
            )),
            Err(_) => Err("the accept thread panicked".into()),
        }
    }
}

/// Where to connect to reach a listener bound to `addr`: a listener on the
/// unspecified address (`0.0.0.0`, `::`) is reachable on loopback.
fn wake_addr(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V4(a) if a.ip().is_unspecified() => (Ipv4Addr::LOCALHOST, a.port()).into(),
        SocketAddr::V6(a) if a.ip().is_unspecified() => (Ipv6Addr::LOCALHOST, a.port()).into(),
        _ => addr,
    }
}

/// Accepts connections until shutdown; returns how many connection threads
/// were still running [`STOP_WAIT`] after it.
fn accept_loop(listener: TcpListener, shared: &Arc<Shared>) -> usize {
    let mut connections: Vec<JoinHandle<()>> = Vec::new();
    for stream in listener.incoming() {
        if shared.shutdown.load(Ordering::SeqCst) {
            break; // the wake-up connection, or one that came in after it
        }
        let stream = match stream {
            Ok(stream) => stream,
            Err(e) => {
                // Out of file descriptors, a connection reset before it was
                // accepted...: log, and do not spin if it persists.
                eprintln!("server: accept: {e}");
                thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        connections.retain(|c| !c.is_finished());
        // Only this thread increments `live`, so the check cannot be raced
        // past the cap; connection threads only decrement it.
        if shared.live.load(Ordering::SeqCst) >= shared.max_connections {
            let busy = format!("err busy: {} connections\n", shared.max_connections);
            let _ = (&stream).write_all(busy.as_bytes());
            continue; // dropping the stream closes it
        }
        shared.live.fetch_add(1, Ordering::SeqCst);
        let conn = Arc::clone(shared);
        let spawned = thread::Builder::new()
            .name("connection".into())
            .spawn(move || {
                let _live = Live(&conn.live);
                if let Err(e) = serve_connection(&stream, &conn) {
                    // A client that hangs up without reading its last
                    // answers is its own business; anything else is logged.
                    if !matches!(
                        e.kind(),
                        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                    ) {
                        let peer = stream.peer_addr().map(|a| a.to_string());
                        eprintln!("server: {}: {e}", peer.unwrap_or_default());
                    }
                }
            });
        match spawned {
            Ok(handle) => connections.push(handle),
            Err(e) => {
                eprintln!("server: cannot start a connection thread: {e}");
                shared.live.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
    let deadline = Instant::now() + STOP_WAIT;
    while connections.iter().any(|c| !c.is_finished()) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    let (finished, stuck): (Vec<_>, Vec<_>) =
        connections.into_iter().partition(|c| c.is_finished());
    for c in finished {
        // A connection thread that panicked has already printed why; the
        // others are unaffected (the filter holds no lock to poison).
        let _ = c.join();
    }
    // Dropping a handle detaches its thread; it ends with the process.
    stuck.len()
}

/// Counts a connection thread as live until it ends, panics included.
struct Live<'a>(&'a AtomicUsize);

impl Drop for Live<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers the requests of one connection, in order, until the client hangs
/// up or the server shuts down.
fn serve_connection(stream: &TcpStream, shared: &Shared) -> io::Result<()> {
    // Answers are already written in batches (below), so Nagle's algorithm
    // would only delay the last answer of each batch.
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(POLL))?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    // `&TcpStream` is `Read` and `Write`: one socket, two buffers, no clone.
    let mut reader = BufReader::with_capacity(BUF_SIZE, stream);
    let mut writer = BufWriter::with_capacity(BUF_SIZE, stream);
    let mut line = Vec::with_capacity(MAX_KEY + 1);
    while let Some(request) = read_request(&mut reader, &mut line, &shared.shutdown)? {
        answer(request, &line, shared, &mut writer)?;
        // Flush only when no complete request is left in the read buffer:
        // the next one needs a `read`, which may block, and the client may be
        // waiting for these answers before it sends more. A pipelined burst
        // is thus answered by one `write`; a one-at-a-time client still gets
        // each answer at once.
        if !reader.buffer().contains(&b'\n') {
            writer.flush()?;
            if shared.shutdown.load(Ordering::Relaxed) {
                break; // a client that never pauses still lets us stop
            }
        }
    }
    writer.flush()
}

/// What [`read_request`] found.
enum Request {
    /// A line, now in the caller's buffer without its `\n`.
    Line,
    /// A line longer than [`MAX_KEY`] (+ 1 for a `\r`), read and discarded.
    TooLong,
}

/// Reads the next request line into `line`, keeping at most `MAX_KEY + 1`
/// bytes of it, so that a client sending a gigabyte without a newline costs
/// no memory. `None` at end of stream, or when the server shuts down while
/// the connection is idle.
fn read_request(
    reader: &mut BufReader<&TcpStream>,
    line: &mut Vec<u8>,
    shutdown: &AtomicBool,
) -> io::Result<Option<Request>> {
    line.clear();
    let mut too_long = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // POLL passed without data (WouldBlock on Unix, TimedOut on
            // Windows). Partial lines are safe: what was read is in `line`.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if shutdown.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            // End of stream. A last line without `\n` is still a request.
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Some(Request::TooLong),
                (false, true) => None,
                (false, false) => Some(Request::Line),
            });
        }
        let (chunk, used, complete) = match buf.iter().position(|&b| b == b'\n') {
            Some(end) => (&buf[..end], end + 1, true),
            None => (buf, buf.len(), false),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_KEY + 1 {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if complete {
            return Ok(Some(if too_long {
                Request::TooLong
            } else {
                Request::Line
            }));
        }
    }
}

/// Writes the answer to one request (into the connection's write buffer).
fn answer(request: Request, line: &[u8], shared: &Shared, out: &mut impl Write) -> io::Result<()> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if matches!(request, Request::TooLong) || line.len() > MAX_KEY {
        return writeln!(out, "err key longer than {MAX_KEY} bytes");
    }
    let reply: &[u8] = match std::str::from_utf8(line) {
        Err(_) => b"err key is not UTF-8\n",
        Ok("") => b"err empty key\n",
        Ok("STATS") => return writeln!(out, "{}", stats(shared)),
        Ok(key) => match insert_if_absent(&shared.filter, key) {
            Ok(true) => b"new\n",
            Ok(false) => b"dup\n",
            Err(InsertError::Full) => b"full\n",
            // `InsertError` is `#[non_exhaustive]`.
            Err(e) => return writeln!(out, "err {e}"),
        },
    };
    out.write_all(reply)
}

/// The answer to `STATS`. `fpr_bound` is the filter's false-positive rate
/// bound at its current load: the most a never-seen key is answered `dup`.
/// `saves_started` is read after every request before it on this connection
/// was answered, so each key those requests added is in every save numbered
/// above it (see `persist::Saves`).
fn stats(shared: &Shared) -> String {
    let filter = &shared.filter;
    // Pairs with the fence after the saver counts a save: if this reads a
    // count from before that save, the inserts before it are in the save.
    fence(Ordering::SeqCst);
    format!(
        "len={} capacity={} load_factor={:.6} fpr_bound={:.3e} connections={} \
         saves_started={} saves_completed={}",
        filter.len(),
        filter.capacity(),
        filter.load_factor(),
        filter.false_positive_rate(),
        shared.live.load(Ordering::Relaxed),
        shared.saves.started.load(Ordering::SeqCst),
        shared.saves.completed.load(Ordering::SeqCst),
    )
}
