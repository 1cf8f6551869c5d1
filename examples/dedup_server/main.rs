//! A TCP dedup service: many connections, one shared lock-free cuckoo filter.
//! Clients send keys; the server answers whether each one is new.
//!
//! ```text
//! cargo run --release --example dedup_server -- serve --addr 127.0.0.1:7878 --capacity 10000000 [--threads 256] [--seconds S] [--snapshot FILE [--every SECS]]
//! cargo run --release --example dedup_server -- load --addr 127.0.0.1:7878 --clients 4 --keys 200000 --seconds 5 --pipeline 64 [--strict]
//! cargo run --release --example dedup_server -- selftest --seconds 3 [--strict]
//! ```
//!
//! `serve` runs the server until it is killed (or for `--seconds`); with
//! `--snapshot FILE` it starts from FILE if it exists, saves to it once
//! before serving and then every `--every` seconds (default 60) while
//! serving (see Persistence). `load`
//! runs the load generator against a running server and prints a summary
//! line. `selftest` does both in one process, over loopback, and exits
//! non-zero if anything went wrong: CI runs it.
//!
//! # Protocol
//!
//! Newline-delimited text. Each request line is a key (a `\r` before the `\n`
//! is dropped, so `nc -C` and telnet work). The server answers one line per
//! request, in request order:
//!
//! * `new`: the key was absent and has been added;
//! * `dup`: the key was present, or is a false positive (at most the
//!   `fpr_bound` of `STATS`, about 10⁻⁴ for a full filter); nothing added;
//! * `full`: the filter found no room for it; nothing added;
//! * `err <reason>`: an empty key, one over 1024 bytes, or one that is not
//!   UTF-8; nothing added, the connection stays usable.
//!
//! The line `STATS` is a command, not a key. Its answer is
//! `len=… capacity=… load_factor=… fpr_bound=… connections=… saves_started=…
//! saves_completed=…` (the saves are 0 without `--snapshot`).
//!
//! Clients may pipeline: send many lines before reading any answer. The
//! server writes its answers into a buffer and flushes it only when no
//! complete request is left in its read buffer. So a burst of 64 requests
//! gets its 64 answers in one `write`, and a client that sends one line at
//! a time still gets each answer at once.
//!
//! # Why `insert_if_absent`
//!
//! The obvious dedup is `if !filter.contains(k) { filter.insert(k) }`. Each
//! call is atomic, but the pair is not. Two connection threads given the same
//! key at the same moment can both find it absent, and both insert it. Both
//! clients are then told `new`, and the key takes two slots. An
//! insert-if-absent does the check and the insert as one step, so racing
//! requests are answered `new` twice only rarely (see below).
//!
//! The server calls the filter through one function, `server::insert_if_absent`,
//! which is `CuckooFilter::insert_if_absent`: one atomic step, so racing
//! duplicates are answered `new` twice only in the rare case that their copies
//! land in different bucket words (0 to 0.004 % of keys measured). The load
//! generator counts such keys as `double_new`, and fails on them only with
//! `--strict`.
//!
//! # Threads and sharing
//!
//! The filter is one `Arc<CuckooFilter>`, and every connection thread calls
//! it through `&self`. It takes no lock: threads contend only on the cache
//! lines of the buckets they touch. The server itself shares nothing else
//! per request (no counters, no locks).
//!
//! The server runs an accept thread plus one thread per connection, up to
//! `--threads` connections at once. A further connection gets
//! `err busy: N connections` and is closed. There is no fixed pool. With
//! blocking std sockets, a connection ties up its thread for as long as it
//! is open, so a pool of N threads would also serve only N connections. The
//! difference is what happens to connection N + 1: a pool would leave it
//! queued and silent, while this server says so at once. Spawning a thread
//! costs a few microseconds, once per connection, and dedup clients keep
//! their connections open.
//!
//! Shutdown (`selftest`, `serve --seconds`) works like this. A flag is set,
//! and the server connects to itself once, to wake the blocked `accept`.
//! Idle connection threads notice the flag within 100 ms (their reads time
//! out to look at it); busy ones notice it after their current batch.
//!
//! # Persistence
//!
//! With `--snapshot FILE`, a saver thread writes the filter to FILE every
//! `--every` seconds while the connection threads go on inserting
//! (`CuckooFilter::write_to`, which reads the live filter: every key whose
//! insert returned before the save began is in the save). Each save goes to
//! a temporary file in FILE's directory, through a `BufWriter`, is flushed
//! and synced, renamed over FILE, and the directory is synced: FILE is always
//! one whole save, whatever moment the process dies at. After each save the
//! server prints `saved #N: …` on stdout. At start, an existing FILE is read
//! (`CuckooFilter::read_from`) and served, with the capacity it was saved
//! with; a FILE that is not a saved filter is an error (exit status 2), never
//! silently replaced. `serve --seconds` saves once more after it stops
//! serving. Keys answered `new` after the last completed save are lost by a
//! crash: saving more often narrows that window, at the cost of a pass over
//! the filter per save (about 2 MB per million keys of capacity).
//!
//! # What `load` and `selftest` check
//!
//! Each of `--clients` connections walks the same `--keys` keys, every client
//! in its own random order, `--pipeline` requests at a time. It keeps going
//! until `--seconds` have passed. After the first walk, every answer should
//! be `dup`. Even in the first walk, with 4 clients, three requests in four
//! are repeats, and now and then two clients ask for the same key at the
//! same moment. The checks are:
//!
//! * **no violation**: no request answered `new` when it was sent after a
//!   `new` answer for the same key had been received. That earlier answer
//!   means the insert had completed. A filter has no false negatives, so
//!   every later lookup must find the key. Two requests that were in flight
//!   together may both get `new` (rarely: see above); they are counted
//!   (`double_new`) but are not violations;
//! * **no failure**: every request gets `new` or `dup`, with no `full`, no
//!   `err`, no I/O error and no timeout.
//!
//! `selftest` also checks four more things. First, the protocol's edge
//! cases on one pipelined connection: `\r\n`, empty and over-long keys (one
//! of 200 KB), bytes that are not UTF-8, `STATS`, and a last line with no
//! `\n`. Second, that every answer arrives in order and nothing extra comes
//! back. Third, after shutdown, that `filter.len()` equals the number of
//! `new` answers given (each `new` is exactly one insert). Fourth,
//! persistence (see `restart.rs`): a `serve --snapshot` child process saving
//! every 0.05 s is killed with SIGKILL in the middle of a load and restarted
//! from its file, and every key answered `new` before the last completed save
//! began must then be answered `dup`; a file that is not a filter must be
//! refused. This adds about a second.
//!
//! Every client socket operation times out after 10 s. Answers still
//! missing 10 s after `--seconds` count as failures, and a watchdog ends
//! `selftest` with an error if it is not done after `--seconds` + 25 s. A
//! hung server therefore fails the run; it cannot hang CI. The margins are
//! wide: they tell a hung server, not a slow machine.

mod load;
mod persist;
mod restart;
mod server;

use std::error::Error;
use std::fmt::Display;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, SystemTime};

use lockfree_cuckoo_filter::{BuildError, CuckooFilter};

use load::Config;
use persist::{Saver, Saves};
use server::{Server, MAX_KEY};

const USAGE: &str = "\
usage: dedup_server serve    [--addr 127.0.0.1:7878] [--capacity 10000000] [--threads 256] [--seconds S]
                             [--snapshot FILE [--every 60]]
       dedup_server load     [--addr 127.0.0.1:7878] [--clients 4] [--keys 200000] [--seconds 5]
                             [--pipeline 64] [--passes 1000] [--prefix P] [--strict]
       dedup_server selftest [--seconds 3] [--clients 4] [--keys 200000] [--pipeline 64]
                             [--passes 1000] [--capacity 10000000] [--threads 64] [--strict]
";

/// Seconds between saves with `--snapshot` and no `--every`.
const DEFAULT_EVERY: f64 = 60.0;

/// How much longer than `--seconds` the self-test may take before the
/// watchdog fails it.
const WATCHDOG_MARGIN: Duration = Duration::from_secs(25);

/// `Ok(passed)`, or an error that kept the mode from running (bad flags,
/// address in use, ...). `Send` so the self-test can run on a thread.
type Outcome = Result<bool, Box<dyn Error + Send + Sync>>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, flags) = args
        .split_first()
        .map_or(("help", &[][..]), |(m, f)| (m.as_str(), f));
    let outcome = match mode {
        "serve" => serve(flags),
        "load" => load(flags),
        "selftest" => selftest(flags),
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(true)
        }
        other => Err(format!("unknown mode {other:?}\n{USAGE}").into()),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("dedup_server: {e}");
            ExitCode::from(2)
        }
    }
}

fn serve(args: &[String]) -> Outcome {
    let flags = Flags::parse(
        args,
        &[
            "addr", "capacity", "threads", "seconds", "snapshot", "every",
        ],
        &[],
    )?;
    let addr: String = flags.get("addr", "127.0.0.1:7878".into())?;
    let capacity = flags.get("capacity", 10_000_000)?;
    let threads = flags.get("threads", 256)?;
    let seconds = flags.seconds("seconds", None)?;
    let snapshot = flags.value("snapshot").map(PathBuf::from);
    let every = flags
        .seconds("every", Some(DEFAULT_EVERY))?
        .unwrap_or_default();
    if threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    if snapshot.is_none() && flags.value("every").is_some() {
        return Err("--every needs --snapshot FILE".into());
    }
    let loaded = match &snapshot {
        Some(path) => persist::load(path)?,
        None => None,
    };
    let filter = Arc::new(match loaded {
        Some(filter) => {
            println!(
                "loaded {}: len={} ({}; --capacity is not used)",
                snapshot
                    .as_ref()
                    .map_or(String::new(), |p| p.display().to_string()),
                filter.len(),
                describe(&filter)
            );
            filter
        }
        None => build_filter(capacity)?,
    });
    let saves = Arc::new(Saves::default());
    if let Some(path) = &snapshot {
        // A first save before serving: a FILE that cannot be written is an
        // error now, not at the first save.
        persist::save_counted(&filter, path, &saves)
            .map_err(|e| format!("cannot save to {}: {e}", path.display()))?;
    }
    let server = Server::start(
        addr.as_str(),
        Arc::clone(&filter),
        threads,
        Arc::clone(&saves),
    )?;
    println!(
        "serving on {}: {}, up to {threads} connections",
        server.addr(),
        describe(&filter)
    );
    let saver = match &snapshot {
        Some(path) => {
            println!(
                "saving to {} every {:.1} s",
                path.display(),
                every.as_secs_f64()
            );
            Some(Saver::start(
                Arc::clone(&filter),
                path.clone(),
                every,
                Arc::clone(&saves),
            )?)
        }
        None => None,
    };
    let Some(seconds) = seconds else {
        // Until the process is killed: the accept loop ends only on shutdown.
        server.wait().map_err(|_| "the accept thread panicked")?;
        return Ok(true);
    };
    thread::sleep(seconds);
    server.shutdown()?;
    if let (Some(saver), Some(path)) = (saver, &snapshot) {
        // A last save once no connection inserts any more: it holds every key.
        saver.stop();
        persist::save_counted(&filter, path, &saves)?;
    }
    println!(
        "stopped after {:.1} s: len={} load_factor={:.6}",
        seconds.as_secs_f64(),
        filter.len(),
        filter.load_factor()
    );
    Ok(true)
}

fn load(args: &[String]) -> Outcome {
    let flags = Flags::parse(
        args,
        &[
            "addr", "clients", "keys", "seconds", "pipeline", "passes", "prefix",
        ],
        &["strict"],
    )?;
    let addr: String = flags.get("addr", "127.0.0.1:7878".into())?;
    let addr = addr
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| format!("{addr:?} resolves to no address"))?;
    // A prefix of its own per run, so that the keys are new to a server that
    // has seen earlier runs, and `never_new` counts false positives.
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let prefix = format!("{:x}-", nanos ^ std::process::id().rotate_left(16));
    let config = load_config(&flags, 5.0, prefix)?;
    println!(
        "load: {} clients, {} keys, pipeline {}, {:.1} s against {addr}",
        config.clients,
        config.keys,
        config.pipeline,
        config.duration.as_secs_f64()
    );
    let report = load::run(addr, &config);
    println!("{report}");
    for problem in &report.problems {
        println!("  problem: {problem}");
    }
    match load::stats(addr) {
        Ok(stats) => println!("server: {stats}"),
        Err(e) => println!("server: STATS failed: {e}"),
    }
    Ok(report.passed(flags.switch("strict")))
}

fn selftest(args: &[String]) -> Outcome {
    let flags = Flags::parse(
        args,
        &[
            "seconds", "clients", "keys", "pipeline", "passes", "capacity", "threads",
        ],
        &["strict"],
    )?;
    let config = load_config(&flags, 3.0, "key".into())?;
    let capacity = flags.get("capacity", 10_000_000)?;
    let threads = flags.get("threads", 64)?;
    let strict = flags.switch("strict");
    if threads <= config.clients {
        // One more for the protocol check's connection.
        return Err("--threads must be more than --clients".into());
    }
    // The watchdog. The self-test runs on a thread of its own; if it has not
    // finished in time, the process ends without waiting for it.
    let limit = config.duration + WATCHDOG_MARGIN;
    let (done, finished) = mpsc::channel();
    thread::Builder::new()
        .name("selftest".into())
        .spawn(move || done.send(run_selftest(&config, capacity, threads, strict)))?;
    match finished.recv_timeout(limit) {
        Ok(outcome) => outcome,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            println!(
                "selftest: FAILED: not finished after {:.1} s",
                limit.as_secs_f64()
            );
            std::process::exit(3)
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Err("the self-test thread panicked".into()),
    }
}

fn run_selftest(config: &Config, capacity: usize, threads: usize, strict: bool) -> Outcome {
    let filter = Arc::new(build_filter(capacity)?);
    let server = Server::start("127.0.0.1:0", Arc::clone(&filter), threads, Arc::default())?;
    let addr = server.addr();
    println!(
        "selftest: server on {addr} ({}); {} clients, {} keys, pipeline {}, {:.1} s",
        describe(&filter),
        config.clients,
        config.keys,
        config.pipeline,
        config.duration.as_secs_f64()
    );
    let mut problems = Vec::new();
    let protocol_news = check_protocol(addr, &mut problems);
    let report = load::run(addr, config);
    println!("{report}");
    match load::stats(addr) {
        Ok(stats) => println!("server: {stats}"),
        Err(e) => problems.push(format!("STATS: {e}")),
    }
    if let Err(e) = server.shutdown() {
        problems.push(format!("shutdown: {e}"));
    }
    // Every `new` answer is one successful insert, and nothing else inserts.
    // Once shutdown has joined every thread, `len` is exact.
    let news = report.news + protocol_news;
    if filter.len() as u64 != news {
        problems.push(format!(
            "filter.len() is {}, but {news} new answers were given",
            filter.len()
        ));
    }
    // Persistence: a saving server killed and restarted, as a child process.
    restart::check(&mut problems);
    for problem in report.problems.iter().chain(&problems) {
        println!("  problem: {problem}");
    }
    if report.double_new_keys > 0 && report.violations == 0 {
        println!(
            "note: {} keys were answered new twice, by requests in flight together: \
             racing copies that landed in different bucket words{}",
            report.double_new_keys,
            if strict {
                ""
            } else {
                " (allowed without --strict)"
            }
        );
    }
    let passed = report.passed(strict) && problems.is_empty();
    println!("selftest: {}", if passed { "passed" } else { "FAILED" });
    Ok(passed)
}

/// Sends the protocol's edge cases as one pipelined burst on one connection,
/// then checks each answer, in order, and that nothing more comes back.
/// Returns the number of `new` answers (each one a key added to the filter).
fn check_protocol(addr: SocketAddr, problems: &mut Vec<String>) -> u64 {
    let line = |bytes: &[u8]| [bytes, b"\n"].concat();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (line(b"protocol-a"), "new"),
        (line(b"protocol-a"), "dup"),
        (line(b"protocol-b\r"), "new"), // the `\r` of `\r\n` is not part of the key
        (line(b"protocol-b"), "dup"),
        (line(b""), "err empty key"),
        (line(b"\r"), "err empty key"),
        (line(&[b'y'; MAX_KEY]), "new"), // the longest key accepted
        (line(&[b'x'; MAX_KEY + 1]), "err key longer than"),
        (line(&[b'z'; 200_000]), "err key longer than"), // several reads long
        (line(b"protocol-c"), "new"),                    // still in step after it
        (line(b"\xff\xfe"), "err key is not UTF-8"),
        (line(b"STATS"), "len=4 "),
        (b"protocol-d".to_vec(), "new"), // a last line without `\n`
    ];
    let mut news = 0;
    let mut problem = |p: String| problems.push(format!("protocol: {p}"));
    let stream = match load::connect(addr) {
        Ok(stream) => stream,
        Err(e) => {
            problem(format!("connect: {e}"));
            return news;
        }
    };
    let burst = cases
        .iter()
        .flat_map(|(request, _)| request)
        .copied()
        .collect::<Vec<u8>>();
    if let Err(e) = (&stream)
        .write_all(&burst)
        .and_then(|()| stream.shutdown(Shutdown::Write))
    {
        problem(format!("send: {e}"));
        return news;
    }
    let mut reader = BufReader::new(&stream);
    let mut answer = String::new();
    for (request, expected) in &cases {
        answer.clear();
        if let Err(e) = reader.read_line(&mut answer) {
            problem(format!("receive: {e}"));
            return news;
        }
        let answer = answer.trim_end();
        news += u64::from(answer == "new");
        if !answer.starts_with(expected) {
            let request = String::from_utf8_lossy(&request[..request.len().min(24)]);
            problem(format!(
                "{request:?}: expected {expected:?}, got {answer:?}"
            ));
        }
    }
    answer.clear();
    match reader.read_line(&mut answer) {
        Ok(0) => println!("protocol: {} cases answered", cases.len()),
        Ok(_) => problem(format!("an answer too many: {:?}", answer.trim_end())),
        Err(e) => problem(format!("waiting for the end of stream: {e}")),
    }
    news
}

fn build_filter(capacity: usize) -> Result<CuckooFilter, BuildError> {
    CuckooFilter::builder()
        .capacity(capacity)
        .false_positive_rate(1e-4)
        .build()
}

fn describe(filter: &CuckooFilter) -> String {
    format!(
        "capacity {} items, {}-bit fingerprints, {:.1} MiB",
        filter.capacity(),
        filter.fingerprint_bits().bits(),
        filter.memory_usage() as f64 / (1 << 20) as f64
    )
}

/// The load generator's flags, shared by `load` and `selftest`.
fn load_config(flags: &Flags, default_seconds: f64, prefix: String) -> Result<Config, String> {
    let config = Config {
        clients: flags.get("clients", 4)?,
        keys: flags.get("keys", 200_000)?,
        duration: flags
            .seconds("seconds", Some(default_seconds))?
            .unwrap_or_default(),
        pipeline: flags.get("pipeline", 64)?,
        passes: flags.get("passes", 1000)?,
        prefix: flags.get("prefix", prefix)?,
    };
    if config.clients == 0 || config.keys == 0 || config.pipeline == 0 || config.passes == 0 {
        return Err("--clients, --keys, --pipeline and --passes must be at least 1".into());
    }
    if config.clients > 1000 {
        return Err("--clients: at most 1000".into());
    }
    Ok(config)
}

/// Flags: `--name value` (or `--name=value`) and bare `--switch`es, checked
/// against those the mode takes. The last of a repeated flag wins.
struct Flags {
    values: Vec<(String, String)>,
    switches: Vec<String>,
}

impl Flags {
    fn parse(args: &[String], valued: &[&str], switches: &[&str]) -> Result<Flags, String> {
        let mut flags = Flags {
            values: Vec::new(),
            switches: Vec::new(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let flag = arg
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected argument {arg:?}\n{USAGE}"))?;
            let (name, inline) = match flag.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (flag, None),
            };
            if valued.contains(&name) {
                let value = match inline {
                    Some(value) => value,
                    None => args
                        .next()
                        .ok_or_else(|| format!("--{name} needs a value"))?
                        .clone(),
                };
                flags.values.push((name.to_owned(), value));
            } else if switches.contains(&name) && inline.is_none() {
                flags.switches.push(name.to_owned());
            } else {
                return Err(format!("unknown flag {arg:?} for this mode\n{USAGE}"));
            }
        }
        Ok(flags)
    }

    /// The value of `--name`, if given.
    fn value(&self, name: &str) -> Option<&str> {
        let last = self.values.iter().rev().find(|(n, _)| n == name);
        last.map(|(_, value)| value.as_str())
    }

    fn get<T: FromStr>(&self, name: &str, default: T) -> Result<T, String>
    where
        T::Err: Display,
    {
        match self.value(name) {
            None => Ok(default),
            Some(value) => value
                .parse()
                .map_err(|e| format!("--{name} {value:?}: {e}")),
        }
    }

    /// A duration in (possibly fractional) seconds, more than 0.
    fn seconds(&self, name: &str, default: Option<f64>) -> Result<Option<Duration>, String> {
        let Some(seconds) = self
            .value(name)
            .map(str::to_owned)
            .or(default.map(|d| d.to_string()))
        else {
            return Ok(None);
        };
        match seconds.parse().map(Duration::try_from_secs_f64) {
            Ok(Ok(d)) if !d.is_zero() => Ok(Some(d)),
            _ => Err(format!(
                "--{name} {seconds:?}: not a number of seconds above 0"
            )),
        }
    }

    fn switch(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s == name)
    }
}
