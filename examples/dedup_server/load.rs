//! The load generator: clients pipelining keys from one shared key space,
//! with every answer checked.

use std::fmt;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// A client's socket operations (connect, each read, each write) give up
/// after this long. The server is on loopback, so this only tells a dead or
/// hung server: generous, because a busy 2-core CI machine can stall a
/// thread for a while, and a stall is not a failure.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// How long after the end of the run the last answers may still arrive.
/// With [`IO_TIMEOUT`] it bounds a run at `seconds + 10` s, whatever the
/// server does.
const GRACE: Duration = Duration::from_secs(10);

/// At most this many problems are described (all are counted).
const MAX_PROBLEMS: usize = 10;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Connections, each on a thread of its own.
    pub clients: usize,
    /// The key space: keys `prefix0 .. prefix{keys-1}`, shared by all clients.
    pub keys: u32,
    /// Clients stop sending after this long.
    pub duration: Duration,
    /// Requests sent before the client reads their answers.
    pub pipeline: usize,
    /// Clients also stop after this many walks over the key space.
    pub passes: u32,
    /// Keys are `{prefix}{index}`; a fresh prefix gives keys the server has
    /// never seen.
    pub prefix: String,
}

/// The outcome of a run.
#[derive(Debug, Default)]
pub struct Report {
    pub clients: usize,
    /// Requests sent.
    pub requests: u64,
    pub news: u64,
    pub dups: u64,
    /// `new` answers to a request sent after a `new` answer for the same key
    /// had been received: the server forgot a key it had added.
    pub violations: u64,
    /// Requests without a `new` or `dup` answer: `full`, `err ...`, a missing
    /// answer (I/O error, timeout, closed connection), or a connect failure.
    pub failures: u64,
    /// Keys answered `new` more than once. Violations are among them; the
    /// rest were requested by two clients at once and raced in the server,
    /// which `insert_if_absent` allows only when their copies land in
    /// different bucket words.
    pub double_new_keys: u64,
    /// Keys requested but never answered `new`: false positives, when the
    /// server had not seen them before this run (a fresh `prefix`).
    pub never_new_keys: u64,
    pub elapsed: Duration,
    pub problems: Vec<String>,
}

impl Report {
    /// Answered requests per second, all clients together.
    pub fn lines_per_sec(&self) -> f64 {
        (self.news + self.dups) as f64 / self.elapsed.as_secs_f64()
    }

    /// No violation, no failure, some traffic; with `strict`, no key
    /// answered `new` twice either (right once `insert_if_absent` is atomic).
    pub fn passed(&self, strict: bool) -> bool {
        self.violations == 0
            && self.failures == 0
            && self.requests > 0
            && (!strict || self.double_new_keys == 0)
    }
}

impl fmt::Display for Report {
    /// The summary line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "clients={} requests={} seconds={:.2} lines/s={:.0} new={} dup={} violations={} \
             failures={} double_new={} never_new={}",
            self.clients,
            self.requests,
            self.elapsed.as_secs_f64(),
            self.lines_per_sec(),
            self.news,
            self.dups,
            self.violations,
            self.failures,
            self.double_new_keys,
            self.never_new_keys,
        )
    }
}

/// What the clients share: per key, the `new` answers received so far and
/// whether it was requested. Atomics indexed by key rather than a locked set:
/// the client is not under test, but it should not be the bottleneck either.
struct Keys {
    prefix: String,
    news: Vec<AtomicU32>,
    requested: Vec<AtomicBool>,
}

/// Runs `config.clients` clients against `addr` and checks every answer.
pub fn run(addr: SocketAddr, config: &Config) -> Report {
    let keys = Keys {
        prefix: config.prefix.clone(),
        news: (0..config.keys).map(|_| AtomicU32::new(0)).collect(),
        requested: (0..config.keys).map(|_| AtomicBool::new(false)).collect(),
    };
    let start = Instant::now();
    let stop_sending = start + config.duration;
    let mut report = Report {
        clients: config.clients,
        ..Report::default()
    };
    thread::scope(|s| {
        let clients: Vec<_> = (0..config.clients)
            .map(|id| {
                let keys = &keys;
                s.spawn(move || client(id, addr, keys, config, stop_sending))
            })
            .collect();
        for c in clients {
            match c.join() {
                Ok(tally) => report.add(tally),
                Err(_) => report.add(Tally {
                    failures: 1,
                    problems: vec!["a client thread panicked".into()],
                    ..Tally::default()
                }),
            }
        }
    });
    report.elapsed = start.elapsed();
    for (news, requested) in keys.news.iter().zip(&keys.requested) {
        let news = news.load(Ordering::Relaxed);
        report.double_new_keys += u64::from(news >= 2);
        report.never_new_keys += u64::from(news == 0 && requested.load(Ordering::Relaxed));
    }
    report
}

/// One client's counts.
#[derive(Default)]
struct Tally {
    requests: u64,
    news: u64,
    dups: u64,
    violations: u64,
    failures: u64,
    problems: Vec<String>,
}

impl Tally {
    /// Counts `requests` failed requests.
    fn fail(&mut self, requests: usize, problem: impl FnOnce() -> String) {
        self.failures += requests as u64;
        self.note(problem);
    }

    fn note(&mut self, problem: impl FnOnce() -> String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(problem());
        }
    }
}

impl Report {
    fn add(&mut self, t: Tally) {
        self.requests += t.requests;
        self.news += t.news;
        self.dups += t.dups;
        self.violations += t.violations;
        self.failures += t.failures;
        let room = MAX_PROBLEMS.saturating_sub(self.problems.len());
        self.problems.extend(t.problems.into_iter().take(room));
    }
}

/// One connection: walks the whole key space in its own random order, again
/// and again, `pipeline` requests at a time, until `stop_sending` or
/// `passes` walks. Every client asks for every key, so three answers in four
/// (with 4 clients) are `dup` even in the first walk, and clients ask for the
/// same keys at the same time now and then: the races a dedup server exists
/// to get right.
fn client(
    id: usize,
    addr: SocketAddr,
    keys: &Keys,
    config: &Config,
    stop_sending: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let stream = match connect(addr) {
        Ok(stream) => stream,
        Err(e) => {
            tally.fail(1, || format!("client {id}: connect to {addr}: {e}"));
            return tally;
        }
    };
    // Answers must be in by then, however slow the server (see GRACE).
    let hard_stop = stop_sending + GRACE;
    let mut reader = BufReader::new(&stream);
    let mut writer = BufWriter::new(&stream);
    let mut rng = SplitMix64(0x5eed_0000 + id as u64);
    let mut order: Vec<u32> = (0..keys.news.len() as u32).collect();
    // Per request in flight: its key, and whether a `new` answer for that
    // key had been received before the request was sent.
    let mut in_flight: Vec<(u32, bool)> = Vec::with_capacity(config.pipeline);
    let mut answer = String::new();
    'run: for _ in 0..config.passes {
        rng.shuffle(&mut order);
        for batch in order.chunks(config.pipeline) {
            if Instant::now() >= stop_sending {
                break 'run;
            }
            in_flight.clear();
            let sent = batch
                .iter()
                .try_for_each(|&k| {
                    // Read before the request is even buffered, so before it
                    // is sent: `true` means the server had answered `new` for
                    // this key, so had added it, before it reads this request;
                    // it can only answer `dup` (no false negatives). The
                    // Acquire pairs with the Release of the client that
                    // received that `new`.
                    let new_seen = keys.news[k as usize].load(Ordering::Acquire) > 0;
                    keys.requested[k as usize].store(true, Ordering::Relaxed);
                    in_flight.push((k, new_seen));
                    writeln!(writer, "{}{k}", keys.prefix)
                })
                .and_then(|()| writer.flush());
            tally.requests += batch.len() as u64;
            if let Err(e) = sent {
                tally.fail(batch.len(), || format!("client {id}: send: {}", why(&e)));
                break 'run;
            }
            // Bound every read of this batch by `hard_stop`.
            let left = hard_stop.saturating_duration_since(Instant::now());
            let _ = stream.set_read_timeout(Some(left.clamp(Duration::from_millis(1), IO_TIMEOUT)));
            for (i, &(k, new_seen)) in in_flight.iter().enumerate() {
                let missing = in_flight.len() - i;
                answer.clear();
                match reader.read_line(&mut answer) {
                    _ if Instant::now() > hard_stop => {
                        tally.fail(missing, || format!("client {id}: {missing} answers late"));
                        break 'run;
                    }
                    Ok(0) => {
                        tally.fail(missing, || {
                            format!("client {id}: server closed with {missing} answers missing")
                        });
                        break 'run;
                    }
                    Err(e) => {
                        tally.fail(missing, || {
                            format!(
                                "client {id}: receive: {} ({missing} answers missing)",
                                why(&e)
                            )
                        });
                        break 'run;
                    }
                    Ok(_) => {}
                }
                match answer.trim_end() {
                    "new" => {
                        tally.news += 1;
                        keys.news[k as usize].fetch_add(1, Ordering::Release);
                        if new_seen {
                            tally.violations += 1;
                            tally.note(|| {
                                format!(
                                    "client {id}: \"{}{k}\" answered new, but was sent after a \
                                     new answer for it had been received",
                                    keys.prefix
                                )
                            });
                        }
                    }
                    "dup" => tally.dups += 1,
                    other => {
                        let key = format!("{}{k}", keys.prefix);
                        tally.fail(1, || format!("client {id}: {key:?} answered {other:?}"));
                    }
                }
            }
        }
    }
    tally
}

/// An I/O error in words; a socket timeout reads as one (on Unix it is
/// `WouldBlock`, "Resource temporarily unavailable").
fn why(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => "timed out".into(),
        _ => e.to_string(),
    }
}

/// A loopback client socket with every operation bounded in time.
pub fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(stream)
}

/// Asks the server for its `STATS` line, on a connection of its own.
pub fn stats(addr: SocketAddr) -> io::Result<String> {
    let stream = connect(addr)?;
    (&stream).write_all(b"STATS\n")?;
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line)?;
    Ok(line.trim_end().to_owned())
}

/// A small, fast, seedable generator for the key orders (no `rand` crate).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Fisher-Yates (the modulo bias is irrelevant here).
    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}
