//! The key commands clients use around filters: `DEL`, `EXISTS`, `TOUCH`,
//! `TYPE`, `KEYS`, `SCAN`, `RANDOMKEY`, `FLUSHALL`, and the expiry commands,
//! which say that filters do not expire: `TTL` and its kin answer "no
//! expiry" (`-1`) for a filter and "no such key" (`-2`) otherwise, and
//! `EXPIRE` and its kin are refused, so that a client that counts on a key
//! going away is told at once rather than finding it still there.

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

use super::glob::{Glob, TooComplex, Work};
use super::{int, is, Shared};
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
    let found = args
        .from(1)
        .filter(|key| shared.db.with(key, |_| ()).is_some())
        .count();
    reply.integer(found as i64);
}

/// `TTL`, `PTTL`, `EXPIRETIME`, `PEXPIRETIME key`: `-1` (no expiry) for a
/// filter, `-2` where there is none.
pub fn ttl(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    match shared.db.with(args.get(1), |_| ()) {
        Some(()) => reply.integer(-1),
        None => reply.integer(-2),
    }
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

/// `RANDOMKEY`: a name drawn at random, or nil when there is none.
pub fn randomkey(shared: &Shared, reply: &mut Reply<'_>) {
    let keys = shared.db.keys();
    if keys.is_empty() {
        return reply.null();
    }
    // A fresh random seed per call (the standard library's per-map keys).
    let draw = std::hash::RandomState::new().hash_one(keys.len());
    reply.bulk(&keys[(draw % keys.len() as u64) as usize]);
}

/// `TYPE key`.
pub fn type_of(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    match shared.db.with(args.get(1), |_| ()) {
        Some(()) => reply.simple(TYPE_NAME),
        None => reply.simple("none"),
    }
}

/// Work (in [`Work`]'s units) a command does on its worker thread before
/// it moves off it ([`off_worker`]): a few hundred microseconds.
const INLINE_WORK: u64 = 1 << 18;

/// Pattern bytes compiled on the worker thread; a longer pattern (whose
/// tables can take milliseconds to build) is compiled and matched off it.
const INLINE_PATTERN: usize = 4096;

/// Runs `f`, a long piece of work, where it keeps no other connection
/// waiting: on tokio's multi-thread runtime (the server's), inside
/// `block_in_place`, which first hands this worker's other tasks to another
/// thread; elsewhere (a current-thread runtime, or none, as in the fuzz
/// target, which calls `execute` directly) in place.
fn off_worker<R>(f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

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
    glob: Option<&Glob<'_>>,
    names: &mut dyn Iterator<Item = &'k [u8]>,
) -> (Result<Vec<&'k [u8]>, TooComplex>, bool) {
    let Some(glob) = glob else {
        return (Ok(names.collect()), false);
    };
    let mut work = Work::new(Work::LIMIT);
    let mut found = Vec::new();
    let mut inline = INLINE_WORK;
    while let Some(name) = names.next() {
        let cost = glob.cost(name);
        if cost > inline {
            let rest = off_worker(|| {
                for name in std::iter::once(name).chain(names) {
                    if glob.matches(name, &mut work)? {
                        found.push(name);
                    }
                }
                Ok(())
            });
            return (rest.map(|()| found), true);
        }
        inline -= cost;
        match glob.matches(name, &mut work) {
            Ok(true) => found.push(name),
            Ok(false) => {}
            Err(e) => return (Err(e), false),
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
/// in every call, so that a cursor (the hash to go on from) stays valid as
/// keys come and go.
fn scan_hash(key: &[u8]) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(key)
}

/// `SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]`. Every key present
/// from the first call to the last is returned, once; keys added or deleted
/// meanwhile may be returned or not.
pub fn scan(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
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
    let mut keys: Vec<(u64, Box<[u8]>)> = shared
        .db
        .keys()
        .into_iter()
        .map(|k| (scan_hash(&k), k))
        .filter(|(h, _)| *h >= cursor)
        .collect();
    keys.sort_unstable();
    // `count` keys, and every key that shares a hash with the last of them,
    // so that the next cursor starts past them all.
    let mut take = keys.len().min(count);
    while take < keys.len() && take > 0 && keys[take].0 == keys[take - 1].0 {
        take += 1;
    }
    let next = keys.get(take).map_or(0, |(h, _)| *h);
    let glob = pattern.map(Glob::new);
    let names = &mut keys[..take].iter().map(|(_, k)| &k[..]).filter(|_| type_ok);
    answer(reply, next, matching(glob.as_ref(), names));
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
pub fn flush(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    if args.len() > 2 || args.from(1).any(|a| !is(a, "ASYNC") && !is(a, "SYNC")) {
        return reply.error("ERR syntax error");
    }
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
    use super::off_worker;

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
