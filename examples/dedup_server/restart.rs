//! The self-test's persistence phase: kill a saving server in the middle of
//! a load, restart it from its file, and check that it remembers.
//!
//! A `serve --snapshot FILE --every 0.05` child process is loaded by two
//! clients, each sending batches of fresh keys followed by `STATS`, paced to
//! last past the kill, filling the filter to about 88 % (and, once it has
//! sent them, the same keys again). The
//! server answers in order, so its `STATS` answer comes after the inserts of
//! the keys before it returned, and its `saves_started=S` says that every
//! key of the batch answered `new` is in every save numbered above S (see
//! `persist::Saves`). The child prints `saved #N` once save N is renamed
//! into place. Once two saves have completed and 0.6 s have passed, the
//! child is killed with
//! SIGKILL (`Child::kill` on Unix) while the clients are still sending. With
//! N the last save it reported, every key answered `new` in a batch whose
//! `STATS` said S < N must be answered `dup` by a server restarted from the
//! file (a lost key that is a false positive of the restored filter, about
//! 1 in 10⁴, would still pass). Keys answered later may or may not be there;
//! how many were is reported. Last, a file that is not a filter must make `serve` exit with
//! an error.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use crate::load;

/// Seconds between saves of the child server: short, so that many saves run
/// while keys are being inserted.
const EVERY: &str = "0.05";

/// Keys per batch before its `STATS`.
const BATCH: usize = 64;

/// Fresh keys per client, sent at most at `KEYS / FRESH_FOR` a second, so
/// that inserts go on past the kill however fast the machine; after them a
/// client asks for its keys again (all `dup`), so that the load goes on
/// within the child's capacity, however slow the saves are.
const KEYS: usize = 110_000;
const FRESH_FOR: Duration = Duration::from_millis(900);

/// The child's capacity: the two clients' fresh keys fill it to about 88 %,
/// and to more than half by the kill, so that inserts relocate fingerprints
/// while the saves read the table.
const CAPACITY: &str = "250000";

/// The load runs at least this long before the kill, and then until two
/// saves have completed, but no longer than `MAX_LOAD`.
const MIN_LOAD: Duration = Duration::from_millis(600);
const MAX_LOAD: Duration = Duration::from_secs(8);

/// How long to wait for the child to say it is serving.
const START_WAIT: Duration = Duration::from_secs(10);

/// A directory of its own under the system's temporary directory, removed
/// with everything in it when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "dedup_server-selftest-{}-{nanos:x}",
            std::process::id()
        ));
        fs::create_dir(&dir)?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A child server, killed (SIGKILL on Unix) and reaped when dropped.
struct ChildServer {
    child: Child,
    addr: SocketAddr,
    /// The child's stdout lines after its `serving on` line.
    lines: Receiver<String>,
    /// Its lines before that one.
    preamble: Vec<String>,
}

impl ChildServer {
    fn start(file: &Path) -> Result<ChildServer, String> {
        let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
        let mut child = Command::new(exe)
            .args(["serve", "--addr", "127.0.0.1:0", "--capacity", CAPACITY])
            // A bound on its life, should this process end without killing it.
            .args(["--threads", "8", "--seconds", "30", "--every", EVERY])
            .arg("--snapshot")
            .arg(file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the server: {e}"))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (send, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = ChildServer {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            lines,
            preamble: Vec::new(),
        };
        let deadline = Instant::now() + START_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = server
                .lines
                .recv_timeout(left)
                .map_err(|_| "the server did not say it is serving".to_string())?;
            if let Some(rest) = line.strip_prefix("serving on ") {
                let addr = rest.split_once(": ").map_or(rest, |(a, _)| a);
                server.addr = addr
                    .parse()
                    .map_err(|e| format!("server address {addr:?}: {e}"))?;
                return Ok(server);
            }
            server.preamble.push(line);
        }
    }

    /// Kills the child; returns the number of the last save it reported.
    fn kill(&mut self, mut last_saved: u64) -> u64 {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The reader thread ends at the end of the pipe.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            last_saved = last_saved.max(saved_number(&line).unwrap_or(0));
        }
        last_saved
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// N of a `saved #N: ...` line.
fn saved_number(line: &str) -> Option<u64> {
    line.strip_prefix("saved #")?
        .split(':')
        .next()?
        .parse()
        .ok()
}

/// What one client of the load saw.
#[derive(Default)]
struct Seen {
    /// Keys answered `new`, each with the `saves_started` of its batch.
    news: Vec<(String, u64)>,
    /// Keys answered `new` whose batch's `STATS` answer never came.
    unconfirmed: Vec<String>,
    /// Keys answered `full`: not added, so not expected after the restart
    /// either. Counted and reported, not a failure of persistence.
    full: u64,
    /// Answers other than `new`, `dup`, `full` and `STATS` lines.
    odd: Vec<String>,
}

/// Sends batches of fresh keys, each followed by `STATS`, until `stop` or
/// until the connection fails (as it does when the server is killed).
fn client(id: usize, addr: SocketAddr, stop: &AtomicBool) -> Seen {
    let mut seen = Seen::default();
    let Ok(stream) = load::connect(addr) else {
        seen.odd.push(format!("client {id}: cannot connect"));
        return seen;
    };
    let mut reader = BufReader::new(&stream);
    let mut answer = String::new();
    let mut next = 0;
    let start = Instant::now();
    let pace = KEYS as f64 / FRESH_FOR.as_secs_f64();
    'run: while !stop.load(Ordering::Relaxed) {
        if next < KEYS && next as f64 > pace * start.elapsed().as_secs_f64() {
            thread::sleep(Duration::from_millis(1));
            continue;
        }
        let keys: Vec<String> = (next..next + BATCH)
            .map(|i| format!("persist-{id}-{}", i % KEYS))
            .collect();
        next += BATCH;
        let mut request = keys.join("\n");
        request.push_str("\nSTATS\n");
        if (&stream).write_all(request.as_bytes()).is_err() {
            break;
        }
        let mut news = Vec::new();
        for key in keys {
            answer.clear();
            if !matches!(reader.read_line(&mut answer), Ok(n) if n > 0) {
                seen.unconfirmed.extend(news);
                break 'run;
            }
            match answer.trim_end() {
                "new" => news.push(key),
                "dup" => {} // a false positive
                "full" => seen.full += 1,
                other => seen.odd.push(format!("{key:?} answered {other:?}")),
            }
        }
        answer.clear();
        let started = match reader.read_line(&mut answer) {
            Ok(n) if n > 0 => answer
                .split_whitespace()
                .find_map(|field| field.strip_prefix("saves_started="))
                .and_then(|s| s.parse::<u64>().ok()),
            _ => None,
        };
        match started {
            Some(s) => seen.news.extend(news.into_iter().map(|k| (k, s))),
            None => {
                if !answer.is_empty() {
                    seen.odd
                        .push(format!("STATS answered {:?}", answer.trim_end()));
                }
                seen.unconfirmed.extend(news);
                break;
            }
        }
    }
    seen
}

/// Asks `addr` for every key of `keys`, pipelined; returns the keys answered
/// something other than `dup`, with the answer.
fn ask(addr: SocketAddr, keys: &[&str]) -> Result<Vec<(String, String)>, String> {
    let stream = load::connect(addr).map_err(|e| format!("connect: {e}"))?;
    let mut reader = BufReader::new(&stream);
    let mut not_dup = Vec::new();
    let mut answer = String::new();
    for chunk in keys.chunks(1024) {
        let mut request = chunk.join("\n");
        request.push('\n');
        (&stream)
            .write_all(request.as_bytes())
            .map_err(|e| format!("send: {e}"))?;
        for key in chunk {
            answer.clear();
            match reader.read_line(&mut answer) {
                Ok(n) if n > 0 => {}
                Ok(_) => return Err("the server closed the connection".into()),
                Err(e) => return Err(format!("receive: {e}")),
            }
            if answer.trim_end() != "dup" {
                not_dup.push((key.to_string(), answer.trim_end().to_string()));
            }
        }
    }
    Ok(not_dup)
}

/// Runs the phase; what went wrong goes into `problems`.
pub fn check(problems: &mut Vec<String>) {
    if let Err(e) = run(problems) {
        problems.push(format!("persistence: {e}"));
    }
}

fn run(problems: &mut Vec<String>) -> Result<(), String> {
    let dir = TempDir::new().map_err(|e| format!("temporary directory: {e}"))?;
    let file = dir.0.join("filter.bin");
    let mut server = ChildServer::start(&file)?;
    let addr = server.addr;

    // The load, and the kill in the middle of it.
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let (seen, last_saved) = thread::scope(|s| {
        let clients: Vec<_> = (0..2)
            .map(|id| {
                let stop = &stop;
                s.spawn(move || client(id, addr, stop))
            })
            .collect();
        let mut saved = 0;
        while start.elapsed() < MAX_LOAD && (saved < 2 || start.elapsed() < MIN_LOAD) {
            if let Ok(line) = server.lines.recv_timeout(Duration::from_millis(20)) {
                saved = saved.max(saved_number(&line).unwrap_or(0));
            }
        }
        let last_saved = server.kill(saved);
        stop.store(true, Ordering::Relaxed);
        let seen: Vec<Seen> = clients
            .into_iter()
            .map(|c| c.join().unwrap_or_default())
            .collect();
        (seen, last_saved)
    });
    let killed_at = start.elapsed();
    for odd in seen.iter().flat_map(|s| &s.odd) {
        problems.push(format!("persistence: {odd}"));
    }
    if last_saved == 0 {
        return Err(format!(
            "no save completed in {:.1} s",
            killed_at.as_secs_f64()
        ));
    }
    let news: Vec<&(String, u64)> = seen.iter().flat_map(|s| &s.news).collect();
    let saved: Vec<&str> = news
        .iter()
        .filter(|(_, started)| *started < last_saved)
        .map(|(key, _)| key.as_str())
        .collect();
    let later: Vec<&str> = news
        .iter()
        .filter(|(_, started)| *started >= last_saved)
        .map(|(key, _)| key.as_str())
        .chain(seen.iter().flat_map(|s| &s.unconfirmed).map(String::as_str))
        .collect();
    if saved.is_empty() {
        return Err(format!(
            "no key was answered new before save #{last_saved} began"
        ));
    }
    let bytes = fs::metadata(&file).map_or(0, |m| m.len());
    let full: u64 = seen.iter().map(|s| s.full).sum();
    if full > 0 {
        println!("note: {full} keys of the persistence load were answered full");
    }

    // The restart.
    let restarted = ChildServer::start(&file)?;
    if !restarted.preamble.iter().any(|l| l.starts_with("loaded ")) {
        problems.push(format!(
            "persistence: the restarted server did not load {}",
            file.display()
        ));
    }
    let forgotten = ask(restarted.addr, &saved)?;
    let later_kept = later.len() - ask(restarted.addr, &later)?.len();
    drop(restarted);
    for (key, answer) in forgotten.iter().take(5) {
        problems.push(format!(
            "persistence: {key:?} was answered new before save #{last_saved} began, \
             but {answer:?} after the restart"
        ));
    }

    // A file that is not a filter.
    fs::write(&file, b"not a filter\n").map_err(|e| format!("write: {e}"))?;
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let refused = Command::new(exe)
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--seconds",
            "1",
            "--snapshot",
        ])
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let stderr = String::from_utf8_lossy(&refused.stderr);
    if refused.status.success() || !stderr.contains("is not a saved filter") {
        problems.push(format!(
            "persistence: serve on a file that is not a filter: {}, stderr {:?}",
            refused.status,
            stderr.trim_end()
        ));
    }

    println!(
        "persistence: killed the server after {:.2} s and {last_saved} saves ({bytes} bytes); \
         restarted from the file: {} of {} keys answered new before save #{last_saved} began \
         are dup ({} of {} later ones kept); a file that is not a filter: {}",
        killed_at.as_secs_f64(),
        saved.len() - forgotten.len(),
        saved.len(),
        later_kept,
        later.len(),
        if refused.status.success() {
            "accepted".to_string()
        } else {
            format!("refused ({})", stderr.trim_end())
        }
    );
    Ok(())
}
