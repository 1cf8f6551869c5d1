//! The key commands clients use around filters: `DEL`, `EXISTS`, `TOUCH`,
//! `TYPE`, `KEYS`, `SCAN`, `RANDOMKEY`, `FLUSHALL`, and the expiry commands,
//! which say that filters do not expire: `TTL` and its kin answer "no
//! expiry" (`-1`) for a filter and "no such key" (`-2`) otherwise, and
//! `EXPIRE` and its kin are refused, so that a client that counts on a key
//! going away is told at once rather than finding it still there.

use std::collections::BinaryHeap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::atomic::Ordering;

use super::glob::{Glob, TooComplex, Work};
use super::{int, is, off_worker, Session, Shared};
use crate::db::Held;
use crate::frame::{Args, Reply};

/// The type name `TYPE` gives a filter: RedisBloom's.
const TYPE_NAME: &str = "MBbloomCF";

/// `DEL key...` (and `UNLINK`): how many were there.
pub fn del(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let removed = args.from(1).filter(|key| shared.db.remove(key)).count();
    reply.integer(removed as i64);
}

/// `EXISTS key...` (and `TOUCH`): how many of them exist (a key named twice
/// counts twice).
pub fn exists(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let found = args.from(1).filter(|key| shared.db.contains(key)).count();
    reply.integer(found as i64);
}

/// `TTL`, `PTTL`, `EXPIRETIME`, `PEXPIRETIME key`: `-1` (no expiry) for a
/// filter, `-2` where there is none.
pub fn ttl(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    reply.integer(if shared.db.contains(args.get(1)) {
        -1
    } else {
        -2
    });
}

/// `PERSIST key`: 0, as Redis answers for a key without an expiry (or none).
pub fn persist(reply: &mut Reply<'_>) {
    reply.integer(0);
}

/// `EXPIRE`, `PEXPIRE`, `EXPIREAT`, `PEXPIREAT`: refused; filters stay until
/// they are deleted.
pub fn expire(args: Args<'_>, reply: &mut Reply<'_>) {
    reply.error(&format!(
        "ERR filters do not expire here: '{}' is not supported (delete a filter with DEL)",
        String::from_utf8_lossy(args.get(0)).to_ascii_uppercase()
    ));
}

/// `RANDOMKEY`: a name drawn at random, or nil when there is none. It walks
/// the names up to the one drawn, copying none of them.
pub fn randomkey(shared: &Shared, reply: &mut Reply<'_>) {
    let len = shared.db.len();
    if len == 0 {
        return reply.null();
    }
    // A fresh random seed per call (the standard library's per-map keys).
    let draw = std::hash::RandomState::new().hash_one(len) % len as u64;
    let pick = |reply: &mut Reply<'_>| {
        shared.db.with_keys(|names| {
            // The drawn one, or the last there is if names went meanwhile.
            let mut last = None;
            for (i, name) in names.enumerate() {
                last = Some(name);
                if i as u64 == draw {
                    break;
                }
            }
            match last {
                Some(name) => reply.bulk(name),
                None => reply.null(),
            }
        })
    };
    if len <= INLINE_NAMES {
        pick(reply)
    } else {
        off_worker(|| pick(reply))
    }
}

/// `TYPE key`.
pub fn type_of(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    reply.simple(if shared.db.contains(args.get(1)) {
        TYPE_NAME
    } else {
        "none"
    });
}

/// Work (in [`Work`]'s units) a command does on its worker thread before
/// it moves off it ([`off_worker`]): a few hundred microseconds.
const INLINE_WORK: u64 = 1 << 18;

/// Names a command walks on its worker thread; one that walks more does it
/// off the worker.
const INLINE_NAMES: usize = 16 * 1024;

/// Pattern bytes compiled on the worker thread; a longer pattern, whose
/// compiling and matching take time in proportion to it, is compiled and
/// matched off it.
const INLINE_PATTERN: usize = 4096;

/// Names [`Warmed`] reads ahead.
const AHEAD: usize = 64;

/// `names` in their order, the first byte of each of the next [`AHEAD`]
/// read before the first of them is handed out. The names lie apart in
/// memory, each a cache miss away; loads that do not wait on each other
/// overlap their misses, where a loop that matches or hashes each name
/// before it loads the next would wait for them one at a time.
struct Warmed<'k, 'i> {
    names: &'i mut dyn Iterator<Item = &'k [u8]>,
    batch: [&'k [u8]; AHEAD],
    at: usize,
    len: usize,
}

impl<'k, 'i> Warmed<'k, 'i> {
    fn new(names: &'i mut dyn Iterator<Item = &'k [u8]>) -> Self {
        Warmed {
            names,
            batch: [&[]; AHEAD],
            at: 0,
            len: 0,
        }
    }
}

impl<'k> Iterator for Warmed<'k, '_> {
    type Item = &'k [u8];

    fn next(&mut self) -> Option<&'k [u8]> {
        if self.at == self.len {
            self.len = 0;
            for (slot, name) in self.batch.iter_mut().zip(&mut *self.names) {
                *slot = name;
                self.len += 1;
            }
            self.at = 0;
            let first = self.batch[..self.len]
                .iter()
                .fold(0u8, |x, name| x ^ name.first().copied().unwrap_or(0));
            std::hint::black_box(first);
        }
        let name = self.batch.get(self.at).filter(|_| self.at < self.len)?;
        self.at += 1;
        Some(name)
    }
}

/// The names among `names` that `glob` matches (all of them without one),
/// in their order, within [`Work::LIMIT`]; and whether the work grew past
/// [`INLINE_WORK`], so that it went on [`off_worker`].
fn matching<'k>(
    glob: Option<&Glob>,
    names: &mut dyn Iterator<Item = &'k [u8]>,
) -> (Result<Vec<&'k [u8]>, TooComplex>, bool) {
    let Some(glob) = glob else {
        return (Ok(names.collect()), false);
    };
    let mut work = Work::new(Work::LIMIT);
    let mut found = Vec::new();
    let mut keep = |name: &'k [u8]| {
        if glob.matches(name, &mut work)? {
            found.push(name);
        }
        Ok(())
    };
    let mut inline = INLINE_WORK;
    while let Some(name) = names.next() {
        let cost = glob.cost(name);
        if cost > inline {
            let rest = off_worker(|| std::iter::once(name).chain(names).try_for_each(&mut keep));
            return (rest.map(|()| found), true);
        }
        inline -= cost;
        if let Err(e) = keep(name) {
            return (Err(e), false);
        }
    }
    (Ok(found), false)
}

/// `KEYS pattern`. The names are matched where they lie in the map, and
/// only those that match are copied, into the reply; a long walk goes on
/// off the worker thread.
pub fn keys(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let pattern = args.get(1);
    let run = |reply: &mut Reply<'_>| {
        let glob = Glob::new(pattern);
        shared.db.with_keys(|names| {
            let (found, moved) = matching(Some(&glob), &mut Warmed::new(names));
            let answer = |reply: &mut Reply<'_>| match found {
                Ok(found) => {
                    reply.array(found.len());
                    for name in found {
                        reply.bulk(name);
                    }
                }
                Err(TooComplex) => reply.error(TooComplex::MESSAGE),
            };
            if moved {
                off_worker(|| answer(reply))
            } else {
                answer(reply)
            }
        })
    };
    if pattern.len() <= INLINE_PATTERN {
        run(reply)
    } else {
        off_worker(|| run(reply))
    }
}

/// The order `SCAN` walks the keys in: a fixed hash of each name, the same
/// in every call and on every connection, so that a cursor (the hash to go
/// on from) stays valid as keys come and go.
fn scan_hash(key: &[u8]) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(key)
}

/// Bytes a connection's [`ScanCache`] may take (names, and 16 bytes more
/// each), charged against the memory limit while it is kept.
const CACHE_BYTES: usize = 256 * 1024;

/// What a name costs in a [`ScanCache`].
fn cache_cost(name: &[u8]) -> usize {
    name.len() + 16
}

/// The names a connection's next `SCAN` calls return: those the walk of its
/// last uncached call found past what that call returned, sorted by hash,
/// as many as [`CACHE_BYTES`] holds. A later call is served from it,
/// without walking the map again, while its cursor lies within the hashes
/// the walk covered and no iteration started since
/// ([`Shared::scans_started`]): then every iteration under way began before
/// that walk, so a key present for all of such an iteration was in the map
/// for all of the walk, and was seen. Names deleted after the walk may
/// still be returned from it, and names added after it are not: SCAN allows
/// both for keys that are not present for the whole iteration.
pub struct ScanCache {
    /// The names' hashes, ascending.
    hashes: Vec<u64>,
    /// Where each name ends in `names`.
    ends: Vec<usize>,
    /// The names, end to end.
    names: Vec<u8>,
    /// The cursors it answers: from its first hash up to `limit`, the first
    /// hash the walk left out (`None`: none, it holds the rest of the order).
    limit: Option<u64>,
    /// [`Shared::scans_started`] before its walk began.
    started: u64,
    /// Its bytes, charged against the memory limit.
    _held: Held,
}

impl ScanCache {
    /// Whether it answers `cursor`, where `scans_started` is
    /// [`Shared::scans_started`] now.
    fn answers(&self, cursor: u64, scans_started: u64) -> bool {
        self.started == scans_started
            && self.hashes.first().is_some_and(|&h| h <= cursor)
            && self.limit.is_none_or(|limit| cursor < limit)
    }

    /// Name `i`.
    fn name(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.names[start..self.ends[i]]
    }
}

/// How many of `hashes` (ascending) a call returns: `count`, and every one
/// that ties the last of them, so that the next cursor is past them all.
fn batch_len(hashes: impl Iterator<Item = u64>, count: usize) -> usize {
    let mut taken = 0;
    let mut last = None;
    for h in hashes {
        if taken >= count && last != Some(h) {
            break;
        }
        taken += 1;
        last = Some(h);
    }
    taken
}

/// One walk over the names and their hashes: those hashed from `cursor`
/// on, sorted, the `count` smallest (with any that tie the last) and as
/// many after them as [`CACHE_BYTES`] holds; and the first hash left out,
/// if any was. A bounded heap of the smallest, so that the walk copies
/// nothing and costs `O(names · log kept)`.
fn walk<'k>(
    hashed: impl Iterator<Item = (u64, &'k [u8])>,
    cursor: u64,
    count: usize,
) -> (Vec<(u64, &'k [u8])>, Option<u64>) {
    let mut heap: BinaryHeap<(u64, &[u8])> = BinaryHeap::new();
    let mut bytes = 0;
    let mut limit = None;
    for (h, name) in hashed {
        if h < cursor || limit.is_some_and(|limit| h >= limit) {
            continue;
        }
        heap.push((h, name));
        bytes += cache_cost(name);
        // Over the bound: drop the greatest hash with all that tie it, so
        // that what is kept covers every hash below the new limit, unless
        // that would leave fewer than this call returns.
        while heap.len() > count && bytes > CACHE_BYTES {
            let Some(greatest) = heap.pop() else { break };
            // Ties are rare (a 64-bit hash): collected only when there are.
            let mut ties = Vec::new();
            while let Some(entry) = heap.peek().filter(|e| e.0 == greatest.0).copied() {
                heap.pop();
                ties.push(entry);
            }
            if heap.len() < count {
                heap.push(greatest);
                heap.extend(ties);
                break;
            }
            bytes -= cache_cost(greatest.1) + ties.iter().map(|e| cache_cost(e.1)).sum::<usize>();
            limit = Some(greatest.0);
        }
    }
    (heap.into_sorted_vec(), limit)
}

/// `SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]`. Every key present
/// from the first call (cursor 0) to the last is returned; keys added or
/// deleted meanwhile may be returned or not. A call walks every name once
/// (or none, served from the connection's [`ScanCache`]), and copies only
/// those it returns or caches.
pub fn scan(shared: &Shared, session: &mut Session, args: Args<'_>, reply: &mut Reply<'_>) {
    let Some(cursor) = std::str::from_utf8(args.get(1))
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        return reply.error("ERR invalid cursor");
    };
    let mut pattern: Option<&[u8]> = None;
    let mut count = 10usize;
    let mut type_ok = true;
    let mut i = 2;
    while i < args.len() {
        if i + 1 >= args.len() {
            return reply.error("ERR syntax error");
        }
        let value = args.get(i + 1);
        if is(args.get(i), "MATCH") {
            pattern = Some(value);
        } else if is(args.get(i), "COUNT") {
            match int(value) {
                Some(n) if n >= 1 => count = n as usize,
                Some(_) => return reply.error("ERR syntax error"),
                None => return reply.error("ERR value is not an integer or out of range"),
            }
        } else if is(args.get(i), "TYPE") {
            type_ok = value.eq_ignore_ascii_case(TYPE_NAME.as_bytes());
        } else {
            return reply.error("ERR syntax error");
        }
        i += 2;
    }
    if cursor == 0 {
        shared.scans_started.fetch_add(1, Ordering::SeqCst);
    }
    let scans_started = shared.scans_started.load(Ordering::SeqCst);
    if !session
        .scan
        .as_ref()
        .is_some_and(|c| c.answers(cursor, scans_started))
    {
        session.scan = None;
    }
    let walks = session.scan.is_none() && shared.db.len() > INLINE_NAMES;
    let mut run = |reply: &mut Reply<'_>| {
        let glob = pattern.map(Glob::new);
        let glob = glob.as_ref();
        if let Some(cache) = &session.scan {
            let start = cache.hashes.partition_point(|&h| h < cursor);
            let end = start + batch_len(cache.hashes[start..].iter().copied(), count);
            let next = match cache.hashes.get(end) {
                Some(&h) => h,
                None => cache.limit.unwrap_or(0),
            };
            let names = &mut (start..end).map(|i| cache.name(i)).filter(|_| type_ok);
            answer(reply, next, matching(glob, names));
            if end == cache.hashes.len() {
                session.scan = None;
            }
            return;
        }
        let started = shared.scans_started.load(Ordering::SeqCst);
        shared.db.with_keys(|names| {
            let hashed = Warmed::new(names).map(|name| (scan_hash(name), name));
            let (sorted, limit) = walk(hashed, cursor, count);
            let end = batch_len(sorted.iter().map(|e| e.0), count);
            let next = match sorted.get(end) {
                Some(&(h, _)) => h,
                None => limit.unwrap_or(0),
            };
            let names = &mut sorted[..end].iter().map(|e| e.1).filter(|_| type_ok);
            answer(reply, next, matching(glob, names));
            let rest = &sorted[end..];
            if rest.is_empty() {
                return;
            }
            // Kept only where the memory limit has room for it.
            let bytes: usize = rest.iter().map(|e| cache_cost(e.1)).sum();
            if let Ok(held) = shared.db.hold(bytes) {
                let mut ends = Vec::with_capacity(rest.len());
                let mut all = Vec::with_capacity(bytes - 16 * rest.len());
                for (_, name) in rest {
                    all.extend_from_slice(name);
                    ends.push(all.len());
                }
                session.scan = Some(ScanCache {
                    hashes: rest.iter().map(|e| e.0).collect(),
                    ends,
                    names: all,
                    limit,
                    started,
                    _held: held,
                });
            }
        })
    };
    if walks || pattern.is_some_and(|p| p.len() > INLINE_PATTERN) {
        off_worker(|| run(reply))
    } else {
        run(reply)
    }
}

/// Writes `SCAN`'s reply: the next cursor and the batch (or the error).
fn answer(reply: &mut Reply<'_>, next: u64, batch: (Result<Vec<&[u8]>, TooComplex>, bool)) {
    let write = |reply: &mut Reply<'_>| match batch.0 {
        Ok(names) => {
            reply.array(2);
            reply.bulk(next.to_string().as_bytes());
            reply.array(names.len());
            for name in names {
                reply.bulk(name);
            }
        }
        Err(TooComplex) => reply.error(TooComplex::MESSAGE),
    };
    if batch.1 {
        off_worker(|| write(reply))
    } else {
        write(reply)
    }
}

/// `FLUSHALL [ASYNC|SYNC]` and `FLUSHDB`.
pub fn flush(shared: &Shared, session: &mut Session, args: Args<'_>, reply: &mut Reply<'_>) {
    if args.len() > 2 || args.from(1).any(|a| !is(a, "ASYNC") && !is(a, "SYNC")) {
        return reply.error("ERR syntax error");
    }
    session.scan = None;
    shared.db.clear();
    shared
        .loads
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
    reply.ok();
}

#[cfg(test)]
mod tests {
    use super::{batch_len, cache_cost, off_worker, walk, CACHE_BYTES};

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) % n
        }
    }

    /// A whole iteration as `SCAN` runs it over a fixed set: a walk, its
    /// batch, then the rest of what it kept in batches (the cache), then a
    /// walk from its limit. Hashes drawn from a small range tie often, and
    /// names long enough that a walk keeps only some of them: every entry
    /// comes back once, and what a walk keeps stays within its bound.
    #[test]
    fn walks_return_every_entry_once_ties_included() {
        let mut rng = Rng(7);
        for round in 0..200 {
            let n = rng.below(300) as usize;
            let entries: Vec<(u64, Vec<u8>)> = (0..n)
                .map(|i| {
                    let len = rng.below(if round % 2 == 0 { 40_000 } else { 50 }) as usize;
                    (1 + rng.below(100), format!("{i:>len$}").into_bytes())
                })
                .collect();
            let count = 1 + rng.below(20) as usize;
            let mut returned = Vec::new();
            let mut cursor = 0;
            loop {
                let (kept, limit) = walk(entries.iter().map(|(h, k)| (*h, &k[..])), cursor, count);
                assert!(kept.windows(2).all(|w| w[0].0 <= w[1].0));
                // Everything from the cursor below the limit, nothing past.
                let due = entries
                    .iter()
                    .filter(|(h, _)| *h >= cursor && limit.is_none_or(|l| *h < l))
                    .count();
                assert_eq!(kept.len(), due);
                let first = batch_len(kept.iter().map(|e| e.0), count);
                let bytes: usize = kept.iter().map(|e| cache_cost(e.1)).sum();
                assert!(bytes <= CACHE_BYTES || kept.len() == first, "{bytes}");
                let mut at = 0;
                while at < kept.len() {
                    let take = batch_len(kept[at..].iter().map(|e| e.0), count);
                    assert!(take >= count.min(kept.len() - at));
                    returned.extend(kept[at..at + take].iter().map(|e| e.1.to_vec()));
                    at += take;
                }
                match limit {
                    Some(l) => cursor = l,
                    None => break,
                }
            }
            let mut expected: Vec<Vec<u8>> = entries.into_iter().map(|e| e.1).collect();
            expected.sort();
            returned.sort();
            assert_eq!(returned, expected, "round {round}");
        }
    }

    /// In place without a runtime (the fuzz target) and on a current-thread
    /// runtime; off the worker on a multi-thread one.
    #[test]
    fn off_worker_runs_wherever_it_is_called() {
        assert_eq!(off_worker(|| 1), 1);
        let current = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(current.block_on(async { off_worker(|| 2) }), 2);
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let on_worker = multi.spawn(async { off_worker(|| 3) });
        assert_eq!(multi.block_on(on_worker).unwrap(), 3);
    }
}
