//! The key commands clients use around filters: `DEL`, `EXISTS`, `TOUCH`,
//! `TYPE`, `KEYS`, `SCAN`, `RANDOMKEY`, `FLUSHALL`, and the expiry commands,
//! which say that filters do not expire: `TTL` and its kin answer "no
//! expiry" (`-1`) for a filter and "no such key" (`-2`) otherwise, and
//! `EXPIRE` and its kin are refused, so that a client that counts on a key
//! going away is told at once rather than finding it still there.

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

use super::{glob, int, is, Shared};
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

/// `KEYS pattern`.
pub fn keys(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let pattern = args.get(1);
    let keys: Vec<Box<[u8]>> = shared
        .db
        .keys()
        .into_iter()
        .filter(|k| glob(pattern, k))
        .collect();
    reply.array(keys.len());
    for key in keys {
        reply.bulk(&key);
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
    let batch: Vec<&[u8]> = keys[..take]
        .iter()
        .map(|(_, k)| &k[..])
        .filter(|k| type_ok && pattern.is_none_or(|p| glob(p, k)))
        .collect();
    reply.array(2);
    reply.bulk(next.to_string().as_bytes());
    reply.array(batch.len());
    for key in batch {
        reply.bulk(key);
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
