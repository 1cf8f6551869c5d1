//! `--snapshot`: writers churn a filter near full while another thread takes
//! snapshots of it again and again, and every snapshot is checked against
//! what the writers held while it was taken.
//!
//! `--threads N` runs N - 1 writers and one snapshot thread. Each writer owns
//! its keys and keeps about `load` of the table's slots filled, inserting and
//! removing (fresh keys each time, so that the churn keeps relocating
//! fingerprints). The snapshot thread takes `to_bytes()`, every fourth round
//! `write_to` into a `Vec<u8>` (a writer that cannot seek) instead, decodes
//! the bytes (`from_bytes` / `read_from`), and checks the restored filter:
//!
//! * every key held throughout the snapshot (its insert returned before the
//!   snapshot began, and no remove of it started before the snapshot ended)
//!   is found by `contains`: a miss is a lost item;
//! * `len()` is at least the number of keys held throughout, and at most the
//!   keys that may have been in the filter at some moment of the snapshot
//!   (the most the writers hold at once, plus every insert started during
//!   it) plus one per writer, for a copy whose relocation was under way when
//!   its buckets were read;
//! * `len()` equals the fingerprints the restored table holds.
//!
//! **Deciding "held throughout".** A counter `seq` is odd while a snapshot
//! runs: the snapshot thread sets it to `2k + 1` before snapshot `k` and to
//! `2k + 2` after it. Each key has a record (one `AtomicU64`: its generation,
//! and two values of `seq`): a writer reads `seq` after its insert returned
//! and stores it as the insert's value, and reads `seq` before its remove
//! starts, stores it as the remove's value, and only then removes. Every one
//! of these accesses is `SeqCst`, with a `SeqCst` fence between the filter
//! call and the harness's own access on each side, so that the single total
//! order of `SeqCst` operations and fences also orders the filter's own
//! accesses (the fence rules of the C++20 / Rust memory model). After the
//! snapshot ends, the snapshot thread reads every record once. A record with
//! insert value at most `2k` read `seq` before the snapshot began, so the
//! insert returned before it; a remove value of `2k + 2` or more, or none yet
//! (the record was read before the remove's own store), means the remove
//! started after the snapshot ended. Both are exact for the record's current
//! key; a key whose record was reused since is simply not checked.
//!
//! **Extra copies.** The restored filter may hold one extra copy of an item
//! whose relocation was under way as its buckets were read. They are
//! estimated for the plain filter (past 2^18 keys on every fourth snapshot
//! only, as the estimate costs more than the rest of the check): per bucket
//! pair and fingerprint of the keys the records name right after the
//! snapshot, the fingerprints the restored table holds there beyond the
//! number of those keys. A free record is reused only after every other free
//! one (a queue), so a key the snapshot may hold is almost always still
//! named; one that is not, and that shares a pair and a fingerprint with a
//! named key (about 1 in 10⁴ at 16 bits), counts as extra, and a named key
//! whose remove finished before the snapshot hides one: an estimate, which
//! `--bits 32` makes nearly free of collisions.
//!
//! **Writers' throughput and refusals.** The snapshot thread waits through
//! the first fifth of the run (at most 2 s); the writers' rate then is
//! reported beside their rate while snapshots run, and so are the inserts
//! refused (`Full`) in each phase. Near full, a snapshot leaves an insert
//! fewer paths (moves across its front are left out), and an insert that
//! finds none puts its item into the table's stash instead: the run fails
//! if more inserts are refused while snapshots run than before (none, if
//! none were before; at most twice the rate otherwise).
//!
//! With `--growable`, the filter is a `GrowableCuckooFilter` starting at
//! capacity/1024 and the writers only insert (see `growable.rs` for why no
//! removes), at a pace that spreads `capacity * load` inserts over the run,
//! so that the chain grows while snapshots are taken; they look up their own
//! keys between inserts. Snapshots start at once.

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::io::Write as _;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use lockfree_cuckoo_filter::test_hooks::TableHooks;
use lockfree_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter, InsertError};

use super::{own_key, Config, Rng};

/// A record: generation (16 bits) | insert's `seq` (24) | remove's `seq` (24).
const NONE: u64 = (1 << 24) - 1;

fn pack(generation: u16, inserted: u64, removed: u64) -> u64 {
    (u64::from(generation) << 48) | (inserted << 24) | removed
}

fn unpack(record: u64) -> (u16, u64, u64) {
    ((record >> 48) as u16, (record >> 24) & NONE, record & NONE)
}

/// A key's id: generation above the record's index, so that each insert
/// into a record is a key never used before (until the generation wraps).
fn key_of(writer: usize, slot: usize, generation: u16) -> u64 {
    own_key(writer, (u64::from(generation) << 24) | slot as u64)
}

/// Every `WRITE_TO_EVERY`-th snapshot goes through `write_to` / `read_from`.
const WRITE_TO_EVERY: u64 = 4;

enum Filter {
    Plain(CuckooFilter),
    Growable(GrowableCuckooFilter),
}

impl Filter {
    fn insert(&self, key: u64) -> Result<(), InsertError> {
        match self {
            Filter::Plain(f) => f.insert(&key),
            Filter::Growable(f) => f.insert(&key),
        }
    }

    fn remove(&self, key: u64) -> bool {
        match self {
            Filter::Plain(f) => f.remove(&key),
            Filter::Growable(f) => f.remove(&key),
        }
    }

    fn contains(&self, key: u64) -> bool {
        match self {
            Filter::Plain(f) => f.contains(&key),
            Filter::Growable(f) => f.contains(&key),
        }
    }

    fn len(&self) -> usize {
        match self {
            Filter::Plain(f) => f.len(),
            Filter::Growable(f) => f.len(),
        }
    }

    fn load_factor(&self) -> f64 {
        match self {
            Filter::Plain(f) => f.load_factor(),
            Filter::Growable(f) => f.load_factor(),
        }
    }

    /// Takes a snapshot: `to_bytes`, or with `streamed` `write_to` into a
    /// `Vec` (a writer that cannot seek).
    fn snapshot(&self, streamed: bool) -> Vec<u8> {
        if !streamed {
            return match self {
                Filter::Plain(f) => f.to_bytes(),
                Filter::Growable(f) => f.to_bytes(),
            };
        }
        let mut out = Vec::new();
        match self {
            Filter::Plain(f) => f.write_to(&mut out),
            Filter::Growable(f) => f.write_to(&mut out),
        }
        .expect("write_to a Vec<u8>");
        out
    }

    /// Decodes a snapshot the way it was taken.
    fn restore(&self, bytes: &[u8], streamed: bool) -> Result<Filter, String> {
        match (self, streamed) {
            (Filter::Plain(_), false) => CuckooFilter::from_bytes(bytes)
                .map(Filter::Plain)
                .map_err(|e| e.to_string()),
            (Filter::Plain(_), true) => CuckooFilter::read_from(bytes)
                .map(Filter::Plain)
                .map_err(|e| e.to_string()),
            (Filter::Growable(_), false) => GrowableCuckooFilter::from_bytes(bytes)
                .map(Filter::Growable)
                .map_err(|e| e.to_string()),
            (Filter::Growable(_), true) => GrowableCuckooFilter::read_from(bytes)
                .map(Filter::Growable)
                .map_err(|e| e.to_string()),
        }
    }
}

/// What the writers and the snapshot thread share.
struct Shared<'a> {
    cfg: &'a Config,
    filter: &'a Filter,
    /// `2k + 1` while snapshot `k` runs, `2k + 2` after it.
    seq: AtomicU64,
    /// One record per key slot, `slots` per writer (see [`pack`]).
    records: Vec<AtomicU64>,
    slots: usize,
    /// Per writer, inserts started (stored before each insert).
    started: Vec<Padded>,
    /// Per writer, inserts refused (`Full`).
    refused: Vec<Padded>,
    /// Per writer, operations done.
    ops: Vec<Padded>,
    stop: AtomicBool,
    violations: AtomicU64,
    first_violation: Mutex<Option<String>>,
    start: Instant,
}

#[derive(Default)]
#[repr(align(128))]
struct Padded(AtomicU64);

impl Shared<'_> {
    fn violation(&self, who: &str, what: String) {
        if self.violations.fetch_add(1, SeqCst) == 0 {
            let at = self.start.elapsed().as_secs_f64();
            *self.first_violation.lock().unwrap() = Some(format!(
                "{who}, seed {}, at {at:.3} s: {what}",
                self.cfg.seed
            ));
        }
        if !self.cfg.keep_going {
            self.stop.store(true, SeqCst);
        }
    }

    /// Inserts started and inserts refused so far, all writers.
    fn inserts(&self) -> (u64, u64) {
        let sum = |v: &[Padded]| v.iter().map(|p| p.0.load(SeqCst)).sum();
        (sum(&self.started), sum(&self.refused))
    }

    fn ops(&self) -> u64 {
        self.ops.iter().map(|p| p.0.load(SeqCst)).sum()
    }
}

/// How many keys each writer keeps.
#[derive(Clone, Copy)]
struct Quota {
    lo: usize,
    hi: usize,
}

/// Runs the snapshot stress test; true if no violation was found.
pub(crate) fn run(cfg: &Config) -> bool {
    if cfg.threads < 2 {
        eprintln!(
            "stress: --snapshot needs --threads 2 or more (writers plus one snapshot thread)"
        );
        return false;
    }
    let writers = cfg.threads - 1;
    let built = if cfg.growable {
        GrowableCuckooFilter::builder()
            .initial_capacity((cfg.capacity / 1024).max(64))
            .false_positive_rate(1e-3)
            .seed(cfg.seed)
            .build()
            .map(Filter::Growable)
    } else {
        CuckooFilter::builder()
            .capacity(cfg.capacity)
            .fingerprint_bits(cfg.bits)
            .seed(cfg.seed)
            .build()
            .map(Filter::Plain)
    };
    let filter = match built {
        Ok(f) => f,
        Err(e) => {
            eprintln!("stress: cannot build the filter: {e}");
            return false;
        }
    };
    let target_total = match &filter {
        Filter::Plain(f) => (cfg.load * f.slots() as f64) as usize,
        Filter::Growable(_) => (cfg.load * cfg.capacity as f64) as usize,
    };
    let target = target_total / writers;
    let slack = (target / 2000).max(1);
    let quota = Quota {
        lo: target.saturating_sub(slack),
        hi: target + slack,
    };
    let slots = 2 * quota.hi + 64;
    if slots >= 1 << 24 {
        eprintln!("stress: --snapshot holds at most 2^23 keys per writer; use more threads");
        return false;
    }
    println!(
        "snapshot: {writers} writers + 1 snapshot thread, {} s, {} filter, capacity {}, load {}, \
         seed {}; each writer holds {}..{} keys{}",
        cfg.seconds,
        if cfg.growable { "growable" } else { "plain" },
        cfg.capacity,
        cfg.load,
        cfg.seed,
        quota.lo,
        quota.hi,
        if cfg.growable {
            " (inserts only, paced over the run)"
        } else {
            ""
        }
    );
    let shared = Shared {
        cfg,
        filter: &filter,
        seq: AtomicU64::new(0),
        records: (0..writers * slots)
            .map(|_| AtomicU64::new(pack(0, NONE, NONE)))
            .collect(),
        slots,
        started: (0..writers).map(|_| Padded::default()).collect(),
        refused: (0..writers).map(|_| Padded::default()).collect(),
        ops: (0..writers).map(|_| Padded::default()).collect(),
        stop: AtomicBool::new(false),
        violations: AtomicU64::new(0),
        first_violation: Mutex::new(None),
        start: Instant::now(),
    };
    let barrier = Barrier::new(cfg.threads);
    let prefill = Instant::now();
    let (stats, writer_stats) = thread::scope(|s| {
        let handles: Vec<_> = (0..writers)
            .map(|t| {
                let (shared, barrier) = (&shared, &barrier);
                thread::Builder::new()
                    .name(format!("writer-{t}"))
                    .spawn_scoped(s, move || writer(t, shared, quota, barrier))
                    .expect("spawn a writer")
            })
            .collect();
        barrier.wait();
        if !cfg.quiet {
            eprintln!("prefill: {:.2} s", prefill.elapsed().as_secs_f64());
        }
        // The writers stop when the snapshots do, even if the snapshot
        // thread panics (else the scope would wait for them forever).
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, SeqCst);
            }
        }
        let stop = StopOnDrop(&shared.stop);
        let stats = snapshotter(&shared, quota, writers);
        drop(stop);
        let writer_stats: Vec<WriterStats> = handles
            .into_iter()
            .map(|h| h.join().expect("a writer panicked"))
            .collect();
        (stats, writer_stats)
    });
    if !cfg.quiet {
        eprintln!();
    }
    report(&shared, &stats, &writer_stats)
}

#[derive(Default)]
struct WriterStats {
    inserts: u64,
    full: u64,
    removes: u64,
}

/// A writer's records: the live ones (removes pick one at random), and the
/// free ones in the order they were freed (inserts take the oldest), so that
/// a record is reused as late as possible and the keys a snapshot may hold
/// are still named by the records when the snapshot thread reads them.
struct Slots {
    live: Vec<u32>,
    /// Where each live record is in `live`.
    index: Vec<u32>,
    free: VecDeque<u32>,
}

impl Slots {
    fn new(n: usize) -> Self {
        Slots {
            live: Vec::new(),
            index: vec![0; n],
            free: (0..n as u32).collect(),
        }
    }

    fn take_free(&mut self) -> u32 {
        self.free.pop_front().expect("more records than keys held")
    }

    fn add(&mut self, slot: u32) {
        self.index[slot as usize] = self.live.len() as u32;
        self.live.push(slot);
    }

    /// A record whose insert failed goes back to the end of the queue.
    fn give_back(&mut self, slot: u32) {
        self.free.push_back(slot);
    }

    fn drop_at(&mut self, i: usize) -> u32 {
        let slot = self.live.swap_remove(i);
        if let Some(&moved) = self.live.get(i) {
            self.index[moved as usize] = i as u32;
        }
        self.free.push_back(slot);
        slot
    }
}

/// A writer's own view of its keys.
struct Keys<'a> {
    t: usize,
    shared: &'a Shared<'a>,
    records: &'a [AtomicU64],
    generation: Vec<u16>,
    inserted_at: Vec<u64>,
    own: Slots,
    rng: Rng,
    stats: WriterStats,
}

impl Keys<'_> {
    fn key(&self, slot: usize) -> u64 {
        key_of(self.t, slot, self.generation[slot])
    }

    /// Inserts a fresh key into a free record; whether it went in.
    fn insert(&mut self) -> bool {
        let slot = self.own.take_free() as usize;
        let g = self.generation[slot].wrapping_add(1).max(1);
        self.generation[slot] = g;
        // The key is named before its insert starts, so that an insert in
        // flight is a known key to the extra-copy estimate.
        self.records[slot].store(pack(g, NONE, NONE), SeqCst);
        self.shared.started[self.t].0.fetch_add(1, SeqCst);
        match self.shared.filter.insert(key_of(self.t, slot, g)) {
            Ok(()) => {
                fence(SeqCst);
                let e = self.shared.seq.load(SeqCst);
                self.records[slot].store(pack(g, e, NONE), SeqCst);
                self.inserted_at[slot] = e;
                self.own.add(slot as u32);
                self.stats.inserts += 1;
                true
            }
            Err(InsertError::Full) => {
                self.own.give_back(slot as u32);
                self.stats.full += 1;
                self.shared.refused[self.t].0.fetch_add(1, SeqCst);
                false
            }
            Err(e) => panic!("unexpected insert error {e:?}"),
        }
    }

    /// Removes the live key at `index` of the live list: records the remove
    /// first, then removes; whether the filter found it.
    fn remove(&mut self, index: usize) -> (u64, bool) {
        let slot = self.own.drop_at(index) as usize;
        let e = self.shared.seq.load(SeqCst);
        let g = self.generation[slot];
        self.records[slot].store(pack(g, self.inserted_at[slot], e), SeqCst);
        fence(SeqCst);
        self.stats.removes += 1;
        let key = self.key(slot);
        (key, self.shared.filter.remove(key))
    }
}

fn writer(t: usize, shared: &Shared<'_>, quota: Quota, barrier: &Barrier) -> WriterStats {
    let cfg = shared.cfg;
    let who = format!("writer {t}");
    let growable = matches!(shared.filter, Filter::Growable(_));
    let mut keys = Keys {
        t,
        shared,
        records: &shared.records[t * shared.slots..(t + 1) * shared.slots],
        generation: vec![0; shared.slots],
        inserted_at: vec![NONE; shared.slots],
        own: Slots::new(shared.slots),
        rng: Rng::new(cfg.seed, t as u64 + 1),
        stats: WriterStats::default(),
    };

    // Prefill (plain filter): to the quota, giving up after many failures in
    // a row near full load.
    let mut fails_in_a_row = 0;
    while !growable && keys.own.live.len() < quota.lo && fails_in_a_row < 1000 {
        if keys.insert() {
            fails_in_a_row = 0;
        } else {
            fails_in_a_row += 1;
        }
    }
    barrier.wait();
    let start = Instant::now();
    let pace = cfg.seconds * 0.8;

    let mut n = 0u64;
    while !shared.stop.load(SeqCst) {
        for _ in 0..64 {
            n += 1;
            let live = keys.own.live.len();
            if growable {
                // Inserts spread over 80 % of the run; lookups between them.
                let due = (quota.hi as f64 * (start.elapsed().as_secs_f64() / pace))
                    .min(quota.hi as f64) as usize;
                if live < due {
                    if !keys.insert() {
                        shared.violation(&who, "a growable filter's insert failed".into());
                    }
                } else if live > 0 {
                    let slot = keys.own.live[keys.rng.index(live)] as usize;
                    let key = keys.key(slot);
                    if !shared.filter.contains(key) {
                        shared.violation(
                            &who,
                            format!("contains(key {key:#x}) = false for a live key"),
                        );
                    }
                }
                continue;
            }
            let insert = if live < quota.lo {
                true
            } else if live >= quota.hi {
                false
            } else {
                keys.rng.next() & 1 == 0
            };
            if insert {
                keys.insert();
            } else {
                let index = keys.rng.index(live);
                let (key, found) = keys.remove(index);
                if !found {
                    shared.violation(&who, format!("remove(key {key:#x}) = false for a live key"));
                }
            }
        }
        shared.ops[t].0.store(n, SeqCst);
    }
    keys.stats
}

#[derive(Default)]
struct SnapshotStats {
    taken: u64,
    streamed: u64,
    /// Time inside `to_bytes` / `write_to`.
    snapshot_time: Duration,
    max_snapshot_time: Duration,
    /// Decoding and checking.
    check_time: Duration,
    bytes: u64,
    held_checked: u64,
    lost: u64,
    extra_copies: u64,
    snapshots_with_extra: u64,
    /// Snapshots whose extra copies were estimated.
    estimated: u64,
    /// Restored `len()` beyond the keys held throughout, summed.
    len_over_held: u64,
    /// Writers' operations and seconds before the first snapshot, and while
    /// snapshots ran.
    quiet_ops: u64,
    quiet_secs: f64,
    /// Writers' inserts started and refused before the first snapshot, and
    /// while snapshots ran.
    quiet_inserts: (u64, u64),
    busy_inserts: (u64, u64),
    busy_ops: u64,
    busy_secs: f64,
}

fn snapshotter(shared: &Shared<'_>, quota: Quota, writers: usize) -> SnapshotStats {
    let cfg = shared.cfg;
    let filter = shared.filter;
    let who = "snapshot thread";
    let mut stats = SnapshotStats::default();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(cfg.seconds);
    let max_held = writers * quota.hi;
    let mut last_print = Instant::now();

    // Writers alone first, for their throughput without snapshots.
    if !matches!(filter, Filter::Growable(_)) {
        let quiet = Duration::from_secs_f64(cfg.seconds / 5.0).min(Duration::from_secs(2));
        let inserts0 = shared.inserts();
        thread::sleep(quiet);
        stats.quiet_ops = shared.ops();
        stats.quiet_secs = start.elapsed().as_secs_f64();
        let inserts1 = shared.inserts();
        stats.quiet_inserts = (inserts1.0 - inserts0.0, inserts1.1 - inserts0.1);
    }
    let busy_start = Instant::now();
    let busy_ops0 = shared.ops();
    let busy_inserts0 = shared.inserts();

    let mut k = 0u64;
    while Instant::now() < deadline && !shared.stop.load(SeqCst) {
        if 2 * k + 2 >= NONE {
            break; // the records' 24-bit fields would overflow
        }
        let streamed = k % WRITE_TO_EVERY == WRITE_TO_EVERY - 1;
        let started_before: u64 = shared.started.iter().map(|p| p.0.load(SeqCst)).sum();
        shared.seq.store(2 * k + 1, SeqCst);
        fence(SeqCst);
        let t0 = Instant::now();
        let bytes = filter.snapshot(streamed);
        let took = t0.elapsed();
        fence(SeqCst);
        shared.seq.store(2 * k + 2, SeqCst);
        let started_after: u64 = shared.started.iter().map(|p| p.0.load(SeqCst)).sum();
        // The records as they are right after the snapshot: each read once.
        let records: Vec<u64> = shared.records.iter().map(|r| r.load(SeqCst)).collect();

        stats.taken += 1;
        stats.streamed += u64::from(streamed);
        stats.snapshot_time += took;
        stats.max_snapshot_time = stats.max_snapshot_time.max(took);
        stats.bytes = bytes.len() as u64;
        let how = if streamed { "write_to" } else { "to_bytes" };
        let check = Instant::now();
        let restored = match filter.restore(&bytes, streamed) {
            Ok(r) => r,
            Err(e) => {
                shared.violation(who, format!("snapshot {k} ({how}) does not decode: {e}"));
                break;
            }
        };

        // Every key held throughout is in the restored filter.
        let mut held = 0u64;
        let mut lost = 0u64;
        for (i, &record) in records.iter().enumerate() {
            let (g, ins, rem) = unpack(record);
            if ins > 2 * k || (rem != NONE && rem < 2 * k + 2) {
                continue;
            }
            held += 1;
            let (t, slot) = (i / shared.slots, i % shared.slots);
            let key = key_of(t, slot, g);
            if !restored.contains(key) {
                lost += 1;
                if lost == 1 {
                    shared.violation(
                        who,
                        format!(
                            "snapshot {k} ({how}): key {key:#x} of writer {t}, inserted before \
                             the snapshot began (seq {ins}) and not removed before it ended \
                             ({}), is not in the restored filter",
                            if rem == NONE {
                                "not removed".to_string()
                            } else {
                                format!("remove started at seq {rem}")
                            }
                        ),
                    );
                }
            }
        }
        stats.held_checked += held;
        stats.lost += lost;

        // The restored length: at least the keys held throughout, at most
        // those that may have been present at some moment of the snapshot,
        // plus one extra copy per writer.
        let len = restored.len() as u64;
        let upper = max_held as u64 + (started_after - started_before) + writers as u64;
        if len < held || len > upper {
            shared.violation(
                who,
                format!(
                    "snapshot {k} ({how}): restored len() = {len}, expected between {held} \
                     (keys held throughout) and {upper} (keys that may have been present, \
                     plus {writers})"
                ),
            );
        }
        stats.len_over_held += len - held.min(len);
        if let Filter::Plain(r) = &restored {
            let fingerprints = r.fingerprints();
            if fingerprints.len() as u64 != len {
                shared.violation(
                    who,
                    format!(
                        "snapshot {k} ({how}): restored len() = {len}, but its table holds {} \
                         fingerprints",
                        fingerprints.len()
                    ),
                );
            }
            if records.len() <= 1 << 18 || k % 4 == 0 {
                let extra = extra_copies(shared.slots, &records, r, &fingerprints);
                stats.estimated += 1;
                stats.extra_copies += extra;
                stats.snapshots_with_extra += u64::from(extra > 0);
            }
        }
        stats.check_time += check.elapsed();
        k += 1;

        if !cfg.quiet && last_print.elapsed() >= Duration::from_secs(1) {
            last_print = Instant::now();
            eprint!(
                "\r[{:6.1} s / {} s] snapshots {:6}  mean {:8.3} ms  load {:.4}  len {:9}  lost {}   ",
                start.elapsed().as_secs_f64(),
                cfg.seconds,
                stats.taken,
                stats.snapshot_time.as_secs_f64() * 1e3 / stats.taken as f64,
                filter.load_factor(),
                filter.len(),
                stats.lost,
            );
            let _ = std::io::stderr().flush();
        }
    }
    stats.busy_ops = shared.ops() - busy_ops0;
    let busy_inserts1 = shared.inserts();
    stats.busy_inserts = (
        busy_inserts1.0 - busy_inserts0.0,
        busy_inserts1.1 - busy_inserts0.1,
    );
    stats.busy_secs = busy_start.elapsed().as_secs_f64();
    stats
}

/// The estimate of extra copies in a restored plain filter (see the module
/// documentation): per bucket pair and fingerprint of a key the records name,
/// the fingerprints held there beyond the named keys that share them.
/// `fingerprints` is in bucket order, as `TableHooks::fingerprints` gives it.
fn extra_copies(
    slots: usize,
    records: &[u64],
    restored: &CuckooFilter,
    fingerprints: &[(u64, u32)],
) -> u64 {
    // Where each bucket's fingerprints begin, and so end.
    let buckets = fingerprints.last().map_or(0, |&(b, _)| b as usize + 1);
    let mut begin = vec![0u32; buckets + 1];
    for &(b, _) in fingerprints {
        begin[b as usize + 1] += 1;
    }
    for i in 0..buckets {
        begin[i + 1] += begin[i];
    }
    let held_at = |bucket: u64, fp: u32| {
        let Some(&[from, to]) = begin.get(bucket as usize..bucket as usize + 2) else {
            return 0; // past the last bucket that holds a fingerprint
        };
        fingerprints[from as usize..to as usize]
            .iter()
            .filter(|&&(_, f)| f == fp)
            .count() as u64
    };
    let mut named: Vec<(u64, u64, u32)> = records
        .iter()
        .enumerate()
        .filter_map(|(i, &record)| {
            let (g, _, _) = unpack(record);
            // Generation 0: a record never used.
            (g != 0).then(|| {
                let key = key_of(i / slots, i % slots, g);
                let (a, b, fp) = restored.position(restored.hasher().hash_one(key));
                (a.min(b), a.max(b), fp)
            })
        })
        .collect();
    named.sort_unstable();
    named
        .chunk_by(|x, y| x == y)
        .map(|keys| {
            let (a, b, fp) = keys[0];
            let there = held_at(a, fp) + if a == b { 0 } else { held_at(b, fp) };
            there.saturating_sub(keys.len() as u64)
        })
        .sum()
}

fn report(shared: &Shared<'_>, s: &SnapshotStats, writers: &[WriterStats]) -> bool {
    let cfg = shared.cfg;
    let inserts: u64 = writers.iter().map(|w| w.inserts).sum();
    let full: u64 = writers.iter().map(|w| w.full).sum();
    let removes: u64 = writers.iter().map(|w| w.removes).sum();
    let mean_ms = |d: Duration, n: u64| d.as_secs_f64() * 1e3 / n.max(1) as f64;
    println!(
        "snapshots: {} taken ({} through write_to), {:.1} KiB each at the end; mean {:.3} ms, \
         max {:.3} ms to take; decoding and checking {:.3} ms each",
        s.taken,
        s.streamed,
        s.bytes as f64 / 1024.0,
        mean_ms(s.snapshot_time, s.taken),
        s.max_snapshot_time.as_secs_f64() * 1e3,
        mean_ms(s.check_time, s.taken),
    );
    println!(
        "writers: {inserts} inserts ({full} full), {removes} removes; {:.3} Mops/s while \
         snapshots ran ({:.1} s){}",
        s.busy_ops as f64 / s.busy_secs.max(1e-9) / 1e6,
        s.busy_secs,
        if s.quiet_secs > 0.0 {
            format!(
                ", {:.3} Mops/s before the first ({:.1} s)",
                s.quiet_ops as f64 / s.quiet_secs / 1e6,
                s.quiet_secs
            )
        } else {
            String::new()
        }
    );
    println!(
        "checks: {} lookups of keys held throughout a snapshot, {} lost; restored len() over \
         the keys held throughout: {:.1} per snapshot on average",
        s.held_checked,
        s.lost,
        s.len_over_held as f64 / s.taken.max(1) as f64
    );
    if s.quiet_secs > 0.0 {
        let ((qi, qf), (bi, bf)) = (s.quiet_inserts, s.busy_inserts);
        let per_million = |f: u64, i: u64| f as f64 * 1e6 / i.max(1) as f64;
        println!(
            "refused inserts: {qf} of {qi} before the first snapshot ({:.1} per 10^6), {bf} of \
             {bi} while snapshots ran ({:.1} per 10^6, {:.3} per snapshot)",
            per_million(qf, qi),
            per_million(bf, bi),
            bf as f64 / s.taken.max(1) as f64
        );
        // A snapshot must refuse no insert the filter would take without
        // it: none if none were refused before, and otherwise (a table
        // truly full at times) no more than twice the rate before.
        if bf > 0 && per_million(bf, bi) > 2.0 * per_million(qf, qi) {
            shared.violation(
                "writers",
                format!(
                "{bf} inserts refused while snapshots ran, {qf} before (per 10^6: {:.1} against \
                 {:.1})",
                per_million(bf, bi),
                per_million(qf, qi)
            ),
            );
        }
    }
    if let Filter::Plain(_) = shared.filter {
        println!(
            "extra copies (estimate, see stress/src/snapshot.rs): {} in {} of {} snapshots",
            s.extra_copies, s.snapshots_with_extra, s.estimated
        );
    } else if let Filter::Growable(f) = shared.filter {
        println!(
            "growable: {} items in {} tables at the end",
            f.len(),
            f.table_count()
        );
    }
    let violations = shared.violations.load(SeqCst);
    if violations == 0 && s.taken > 0 {
        println!("OK: no violations");
        true
    } else {
        let first = shared
            .first_violation
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(|| "no snapshot was taken".into());
        println!("FAILED: {violations} violation(s); first: {first}");
        println!(
            "reproduce: cargo run --release -p stress -- --snapshot{} --threads {} --seconds {} \
             --capacity {} --load {} --bits {} --seed {}",
            if cfg.growable { " --growable" } else { "" },
            cfg.threads,
            cfg.seconds,
            cfg.capacity,
            cfg.load,
            crate::bits_arg(cfg.bits),
            cfg.seed
        );
        false
    }
}
