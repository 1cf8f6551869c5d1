//! What a snapshot of a live filter costs: `write_to` on a filter whose table
//! is 1 GiB or more, quiescent and while two threads run a 90/5/5 mix
//! (lookups, inserts, removes) on it at 90 % load; the writers' throughput
//! and refused inserts while it runs against without; and the memory
//! `write_to` and `read_from` take beyond the table (the process's peak RSS,
//! reset before each). The last round writes the live filter into a file
//! through a writer that cannot seek, reads it back, and checks that every
//! item held throughout is in it.
//!
//! ```sh
//! cargo run --release -p benchmarks --example snapshot -- --table-mib 1024
//! ```
//!
//! Prints one markdown table. The file it writes and reads goes to
//! `--dir` (default: the system's temporary directory) and is removed.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use benchmarks::{capacity_for_mib, fresh_key, key, miss_key, splitmix};
use lockfree_cuckoo_filter::CuckooFilter;
use rayon::prelude::*;

struct Args {
    table_mib: f64,
    dir: PathBuf,
    rounds: usize,
}

fn args() -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;
    let mut a = Args {
        table_mib: 1024.0,
        dir: std::env::temp_dir(),
        rounds: 3,
    };
    let mut p = lexopt::Parser::from_env();
    while let Some(arg) = p.next()? {
        match arg {
            Long("table-mib") => a.table_mib = p.value()?.parse()?,
            Long("dir") => a.dir = p.value()?.into(),
            Long("rounds") => a.rounds = p.value()?.parse()?,
            Long("help") => {
                println!("snapshot [--table-mib N] [--dir PATH] [--rounds N]");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(a)
}

/// A writer that keeps nothing: what `write_to` costs without the disk.
struct Sink;

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        std::hint::black_box(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A file's writer with nothing but `Write`: a stream that cannot seek, as
/// a socket or a pipe is.
struct Stream(BufWriter<File>);

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// A field of /proc/self/status, in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Resets the peak RSS to the current RSS (Linux: `clear_refs` with 5).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Runs `f` and returns its result and how far the peak RSS rose above the
/// RSS when it began, in MiB.
fn peak_above<R>(f: impl FnOnce() -> R) -> (R, f64) {
    reset_peak();
    let before = status_kib("VmRSS:");
    let r = f();
    (
        r,
        (status_kib("VmHWM:").saturating_sub(before)) as f64 / 1024.0,
    )
}

/// Two threads running 90/5/5 on `f` until `stop`; operations done.
fn writers(
    f: &CuckooFilter,
    items: u64,
    stop: &AtomicBool,
    ops: &AtomicU64,
    full: &AtomicU64,
    start: &Barrier,
) {
    std::thread::scope(|s| {
        for t in 0..2u64 {
            s.spawn(move || {
                start.wait();
                // Each thread churns its own fresh keys: inserts one, removes
                // the one it inserted 64 operations of its kind before.
                let mut done = 0u64;
                let mut x = splitmix(t + 1);
                let mut inserted = std::collections::VecDeque::new();
                let mut next = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        x = splitmix(x);
                        match x % 20 {
                            0 => {
                                let k = fresh_key((t << 40) | next);
                                next += 1;
                                if f.insert(&k).is_ok() {
                                    inserted.push_back(k);
                                } else {
                                    full.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                            1 => {
                                if inserted.len() > 64 {
                                    let k = inserted.pop_front().expect("64 held");
                                    std::hint::black_box(f.remove(&k));
                                }
                            }
                            _ => {
                                let k = if x & 64 == 0 {
                                    key(x % items)
                                } else {
                                    miss_key(x)
                                };
                                std::hint::black_box(f.contains(&k));
                            }
                        }
                    }
                    done += 256;
                }
                ops.fetch_add(done, Ordering::Relaxed);
            });
        }
    });
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("snapshot: {e}");
            std::process::exit(2);
        }
    };
    let capacity = capacity_for_mib(a.table_mib);
    let f = CuckooFilter::with_capacity(capacity);
    let items = (f.capacity() as f64 * 0.9) as u64;
    let t = Instant::now();
    f.par_insert_all((0..items).into_par_iter().map(key))
        .expect("room for 90 %");
    let table_mib = f.memory_usage() as f64 / (1 << 20) as f64;
    eprintln!(
        "filled {items} items into {table_mib:.0} MiB in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let mib_s = |d: Duration| table_mib / d.as_secs_f64();

    println!("| what | time | rate | memory beyond the table |");
    println!("|---|--:|--:|--:|");
    for round in 0..a.rounds {
        // Quiescent, into a sink.
        let t = Instant::now();
        let (r, extra) = peak_above(|| f.write_to(Sink));
        r.expect("a sink takes every write");
        let quiet = t.elapsed();
        println!(
            "| round {round}: `write_to`, quiescent, to a sink | {:.2} s | {:.0} MiB/s | {extra:.1} MiB |",
            quiet.as_secs_f64(),
            mib_s(quiet)
        );

        // Writers alone for as long as the quiescent snapshot took, then
        // writers and a snapshot.
        let window = quiet.max(Duration::from_millis(500));
        let (alone, full_alone) = {
            let (stop, ops, full) = (AtomicBool::new(false), AtomicU64::new(0), AtomicU64::new(0));
            let start = Barrier::new(3);
            std::thread::scope(|s| {
                s.spawn(|| writers(&f, items, &stop, &ops, &full, &start));
                start.wait();
                std::thread::sleep(window);
                stop.store(true, Ordering::Relaxed);
            });
            let done = ops.load(Ordering::Relaxed) as f64;
            (done / window.as_secs_f64(), full.load(Ordering::Relaxed))
        };
        let (busy, during, full_during) = {
            let (stop, ops, full) = (AtomicBool::new(false), AtomicU64::new(0), AtomicU64::new(0));
            let start = Barrier::new(3);
            let mut took = Duration::ZERO;
            std::thread::scope(|s| {
                s.spawn(|| writers(&f, items, &stop, &ops, &full, &start));
                start.wait();
                let t = Instant::now();
                f.write_to(Sink).expect("a sink");
                took = t.elapsed();
                stop.store(true, Ordering::Relaxed);
            });
            let done = ops.load(Ordering::Relaxed) as f64;
            (
                took,
                done / took.as_secs_f64(),
                full.load(Ordering::Relaxed),
            )
        };
        println!(
            "| round {round}: `write_to` under 2-thread 90/5/5, to a sink | {:.2} s | {:.0} MiB/s ({:.2}x quiescent) | |",
            busy.as_secs_f64(),
            mib_s(busy),
            quiet.as_secs_f64() / busy.as_secs_f64()
        );
        println!(
            "| round {round}: writers' operations during it, against alone | | {:.1} M/s against {:.1} M/s ({:.2}x); inserts full: {full_during} against {full_alone} | |",
            during / 1e6,
            alone / 1e6,
            during / alone
        );
    }

    // Live, into a file through a writer that cannot seek, and back.
    let path = a
        .dir
        .join(format!("snapshot-bench-{}.lfc", std::process::id()));
    let quiet_len = {
        let mut counted = Counted(0);
        f.write_to(&mut counted)
            .expect("a counter takes every write");
        counted.0
    };
    let (stop, ops, full) = (AtomicBool::new(false), AtomicU64::new(0), AtomicU64::new(0));
    let start = Barrier::new(3);
    let (mut wrote, mut extra) = (Duration::ZERO, 0.0);
    std::thread::scope(|s| {
        s.spawn(|| writers(&f, items, &stop, &ops, &full, &start));
        start.wait();
        let t = Instant::now();
        let (r, e) = peak_above(|| -> io::Result<()> {
            let mut w = Stream(BufWriter::new(File::create(&path)?));
            f.write_to(&mut w)?;
            w.0.into_inner()?.sync_all()
        });
        r.expect("writing the file");
        (wrote, extra) = (t.elapsed(), e);
        stop.store(true, Ordering::Relaxed);
    });
    let live_len = std::fs::metadata(&path).expect("the file").len();
    println!(
        "| `write_to` under 2-thread 90/5/5, a file through a writer that cannot seek, synced | {:.2} s | {:.0} MiB/s | {extra:.1} MiB |",
        wrote.as_secs_f64(),
        mib_s(wrote)
    );
    println!(
        "| its moved list; inserts full meanwhile | | {} entries ({} bytes); {} | |",
        live_len.saturating_sub(quiet_len) / 8,
        live_len.saturating_sub(quiet_len),
        full.load(Ordering::Relaxed)
    );
    drop(f);
    let t = Instant::now();
    let (g, extra) = peak_above(|| {
        CuckooFilter::read_from(BufReader::new(File::open(&path).expect("the file")))
            .expect("a filter")
    });
    let read = t.elapsed();
    let table = g.memory_usage() as f64 / (1 << 20) as f64;
    println!(
        "| `read_from` the file (`BufReader`) | {:.2} s | {:.0} MiB/s | {:.1} MiB |",
        read.as_secs_f64(),
        mib_s(read),
        extra - table
    );
    let lost = (0..items)
        .into_par_iter()
        .filter(|&i| !g.contains(&key(i)))
        .count();
    println!("| items held throughout, missing from the file | | {lost} of {items} | |");
    assert_eq!(lost, 0, "every item held throughout is in the snapshot");
    let _ = std::fs::remove_file(&path);
}

/// A writer that counts the bytes it is given.
struct Counted(u64);

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
