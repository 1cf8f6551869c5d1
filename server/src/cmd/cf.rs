//! RedisBloom's cuckoo filter commands, `CF.*`, with its grammar, replies
//! and error words.
//!
//! Each command looks its filter up and calls it with no lock held. Items
//! are the raw bytes of the arguments. Where RedisBloom's replies differ
//! between RESP2 and RESP3 (booleans), these follow it.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use lockfree_cuckoo_filter::InsertError;

use super::{int, is, off_worker, Session, Shared};
use crate::db::{name_cost, CreateError, Entry, Filter, Held, Params, Spec};
use crate::frame::{Args, Reply};

/// The capacity of a filter that `CF.ADD` or `CF.INSERT` creates: RedisBloom's.
const DEFAULT_CAPACITY: usize = 1024;

/// RedisBloom's limits on the options it accepts.
const MAX_BUCKET_SIZE: i64 = 255;
const MAX_ITERATIONS: i64 = 65535;
const MAX_EXPANSION: i64 = 32768;

/// `CF.SCANDUMP` hands a dump out in chunks of at most this many bytes.
const CHUNK: usize = 8 << 20;

/// A `CF.RESERVE` option's value: an integer in `range`, or RedisBloom's
/// error for it.
fn bounded(name: &str, value: &[u8], range: std::ops::RangeInclusive<i64>) -> Result<u64, String> {
    match int(value) {
        None => Err(format!("Couldn't parse {name}")),
        Some(n) if !range.contains(&n) => Err(format!(
            "{name}: value must be an integer between {} and {}, inclusive.",
            range.start(),
            range.end()
        )),
        Some(n) => Ok(n as u64),
    }
}

/// `CF.RESERVE key capacity [BUCKETSIZE n] [MAXITERATIONS n] [EXPANSION n]
/// [ERROR_RATE r]`.
pub fn reserve(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    if args.len().is_multiple_of(2) {
        return reply.error("ERR wrong number of arguments for 'cf.reserve' command");
    }
    let Some(capacity) = int(args.get(2)) else {
        return reply.error("Bad capacity");
    };
    let mut params = Params::default();
    let mut rate = shared.config.error_rate;
    let mut i = 3;
    // RedisBloom reads the first occurrence of an option and no other.
    let mut seen = [false; 4];
    while i + 1 < args.len() {
        let (option, value) = (args.get(i), args.get(i + 1));
        let known = ["BUCKETSIZE", "MAXITERATIONS", "EXPANSION", "ERROR_RATE"];
        if let Some(k) = known.iter().position(|name| is(option, name)) {
            if std::mem::replace(&mut seen[k], true) {
                i += 2;
                continue;
            }
        }
        let set = if is(option, "BUCKETSIZE") {
            bounded("BUCKETSIZE", value, 1..=MAX_BUCKET_SIZE).map(|n| params.bucket_size = n)
        } else if is(option, "MAXITERATIONS") {
            bounded("MAXITERATIONS", value, 1..=MAX_ITERATIONS).map(|n| params.max_iterations = n)
        } else if is(option, "EXPANSION") {
            bounded("EXPANSION", value, 0..=MAX_EXPANSION).map(|n| params.expansion = n)
        } else if is(option, "ERROR_RATE") {
            std::str::from_utf8(value)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|r| *r > 0.0 && *r < 1.0)
                .map(|r| rate = r)
                .ok_or_else(|| {
                    "ERR ERROR_RATE: value must be a number between 0 and 1, exclusive.".to_string()
                })
        } else {
            Err("Unknown argument received".to_string())
        };
        if let Err(message) = set {
            return reply.error(&message);
        }
        i += 2;
    }
    if capacity < params.bucket_size as i64 * 2 {
        return reply.error("Capacity must be at least (BucketSize * 2)");
    }
    let key = args.get(1);
    if shared.db.contains(key) {
        return reply.error("ERR item exists");
    }
    let spec = Spec {
        capacity: usize::try_from(capacity).unwrap_or(usize::MAX),
        rate,
        params,
    };
    match shared.db.build(&spec, key) {
        Ok(entry) => {
            if shared.db.insert_new(key, entry).1 {
                reply.ok();
            } else {
                reply.error("ERR item exists");
            }
        }
        Err(e) => reply.error(&e.to_string()),
    }
}

/// The filter under `key`, created with `capacity` if there is none and
/// `create`; `Err` with the reply already written otherwise.
fn filter_for_insert(
    shared: &Shared,
    key: &[u8],
    create: bool,
    capacity: usize,
    reply: &mut Reply<'_>,
) -> Result<Arc<Entry>, ()> {
    if let Some(entry) = shared.db.get(key) {
        return Ok(entry);
    }
    if !create {
        reply.error("ERR not found");
        return Err(());
    }
    let spec = Spec {
        capacity,
        rate: shared.config.error_rate,
        params: Params::default(),
    };
    match shared.db.build(&spec, key) {
        Ok(entry) => Ok(shared.db.insert_new(key, entry).0),
        Err(e) => {
            reply.error(&e.to_string());
            Err(())
        }
    }
}

/// The error words for a failed single insert.
fn insert_error(e: InsertError) -> &'static str {
    match e {
        InsertError::AllocationFailed(_) => "Memory allocation failure",
        _ => "Filter is full",
    }
}

/// Redis's error for a command that may take memory while the data set is
/// over `maxmemory`.
const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// Whether inserts into `entry` are refused now: its filter may grow, and
/// the filters are charged more than `--maxmemory` already.
fn refused_for_memory(shared: &Shared, entry: &Entry) -> bool {
    matches!(entry.filter, Filter::Growable(_)) && shared.db.over_memory()
}

/// Adds `item` to `entry`'s filter (unless present, with `nx`); whether it
/// did, or the error words. Growth is charged against the memory limit.
fn add_to(shared: &Shared, entry: &Entry, item: &[u8], nx: bool) -> Result<bool, &'static str> {
    if refused_for_memory(shared, entry) {
        return Err(OOM);
    }
    let result = if nx {
        entry.filter.insert_if_absent(item)
    } else {
        entry.filter.insert(item).map(|()| true)
    };
    shared.db.charge_growth(entry);
    result.map_err(insert_error)
}

/// `CF.ADD key item` and `CF.ADDNX key item`.
pub fn add(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>, nx: bool) {
    let (key, item) = (args.get(1), args.get(2));
    // The common case, a filter that exists, without an `Arc` clone.
    let done = shared.db.with(key, |entry| add_to(shared, entry, item, nx));
    let result = match done {
        Some(result) => result,
        None => {
            let Ok(entry) = filter_for_insert(shared, key, true, DEFAULT_CAPACITY, reply) else {
                return;
            };
            add_to(shared, &entry, item, nx)
        }
    };
    match result {
        Ok(added) => {
            if added {
                shared.db.touch();
            }
            reply.boolean(added);
        }
        Err(words) => reply.error(words),
    }
}

/// `CF.INSERT key [CAPACITY n] [NOCREATE] ITEMS item...` and `CF.INSERTNX`.
pub fn insert(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>, nx: bool) {
    let name = if nx { "cf.insertnx" } else { "cf.insert" };
    let arity = || format!("ERR wrong number of arguments for '{name}' command");
    let mut capacity = DEFAULT_CAPACITY;
    let mut create = true;
    let mut i = 2;
    let items_at = loop {
        if i >= args.len() {
            return reply.error(&arity());
        }
        let option = args.get(i);
        if is(option, "ITEMS") {
            break i + 1;
        } else if is(option, "CAPACITY") {
            if i + 1 >= args.len() {
                return reply.error(&arity());
            }
            match int(args.get(i + 1)) {
                None => return reply.error("Bad capacity"),
                Some(c) if c < 2 * Params::default().bucket_size as i64 => {
                    return reply.error("Capacity must be at least (BucketSize * 2)")
                }
                Some(c) => capacity = usize::try_from(c).unwrap_or(usize::MAX),
            }
            i += 2;
        } else if is(option, "NOCREATE") {
            create = false;
            i += 1;
        } else {
            return reply.error("Unknown argument received");
        }
    };
    if items_at >= args.len() {
        return reply.error(&arity());
    }
    let Ok(entry) = filter_for_insert(shared, args.get(1), create, capacity, reply) else {
        return;
    };
    if refused_for_memory(shared, &entry) {
        return reply.error(OOM);
    }
    reply.array(args.len() - items_at);
    let mut changed = false;
    // An item the memory limit refuses (the filter grew past it during this
    // command) fails as one the filter has no room for. Whether it failed.
    let mut answer = |item: &[u8], reply: &mut Reply<'_>| {
        let result = add_to(shared, &entry, item, nx);
        changed |= result == Ok(true);
        match result {
            // Integers in both protocols, as RedisBloom answers CF.INSERTNX.
            Ok(added) if nx => reply.integer(i64::from(added)),
            Err(_) if nx => reply.integer(-1),
            Ok(_) => reply.boolean(true),
            Err(_) if reply.resp3() => reply.boolean(false),
            Err(_) => reply.integer(-1),
        }
        result.is_err()
    };
    for i in items_at..args.len() {
        // A failed insert searched far for room: the filter is full, or
        // nearly, and each item after it may take as long (tens of
        // microseconds), so the rest run off the worker thread and keep
        // none of its other connections waiting.
        if answer(args.get(i), reply) && i + 1 < args.len() {
            off_worker(|| args.from(i + 1).for_each(|item| _ = answer(item, reply)));
            break;
        }
    }
    if changed {
        shared.db.touch();
    }
}

/// Whether the filter under argument 1 may hold argument 2 (false for a key
/// that holds no filter).
fn may_hold(shared: &Shared, args: Args<'_>) -> bool {
    let (key, item) = (args.get(1), args.get(2));
    shared
        .db
        .with(key, |entry| entry.filter.contains(item))
        .unwrap_or(false)
}

/// `CF.EXISTS key item`: 1 (or true) if the item may be there, 0 if it is not;
/// 0 for a key that holds no filter.
pub fn exists(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    reply.boolean(may_hold(shared, args));
}

/// `CF.MEXISTS key item...`, through one batched lookup.
pub fn mexists(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let items: Vec<&[u8]> = args.from(2).collect();
    let mut found = vec![false; items.len()];
    shared.db.with(args.get(1), |entry| {
        entry.filter.contains_batch(&items, &mut found)
    });
    reply.array(found.len());
    for f in found {
        reply.boolean(f);
    }
}

/// `CF.COUNT key item`: the copies of the item the filter holds (at least
/// those added and not deleted; more by other items' colliding copies); 0
/// for a key that holds no filter.
pub fn count(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let (key, item) = (args.get(1), args.get(2));
    let copies = shared.db.with(key, |entry| entry.filter.count(item));
    reply.integer(i64::try_from(copies.unwrap_or(0)).unwrap_or(i64::MAX));
}

/// `CF.DEL key item`: removes one copy.
pub fn del(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let (key, item) = (args.get(1), args.get(2));
    let removed = shared.db.with(key, |entry| {
        let removed = entry.filter.remove(item);
        if removed {
            entry.deleted.fetch_add(1, Ordering::Relaxed);
        }
        removed
    });
    match removed {
        None => reply.error("Not found"),
        Some(removed) => {
            if removed {
                shared.db.touch();
            }
            reply.boolean(removed);
        }
    }
}

/// `CF.COMPACT key`: nothing to do (no fingerprint needs moving back).
pub fn compact(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    if shared.db.contains(args.get(1)) {
        reply.ok();
    } else {
        reply.error("Cuckoo filter was not found");
    }
}

/// `CF.INFO key`: RedisBloom's eight fields, then this filter's capacity
/// and false-positive bound.
pub fn info(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let Some(entry) = shared.db.get(args.get(1)) else {
        return reply.error("ERR not found");
    };
    let f = &entry.filter;
    reply.map(10);
    for (name, value) in [
        ("Size", f.memory_usage() as i64),
        ("Number of buckets", f.buckets() as i64),
        ("Number of filters", f.tables() as i64),
        ("Number of items inserted", f.len() as i64),
        (
            "Number of items deleted",
            entry.deleted.load(Ordering::Relaxed) as i64,
        ),
        ("Bucket size", entry.params.bucket_size as i64),
        ("Expansion rate", entry.params.expansion as i64),
        ("Max iterations", entry.params.max_iterations as i64),
        ("Capacity", f.capacity() as i64),
    ] {
        reply.simple(name);
        reply.integer(value);
    }
    reply.simple("Error rate");
    reply.double(f.false_positive_rate());
}

/// `CF.DEBUG key`: the same as one line.
pub fn debug(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let Some(entry) = shared.db.get(args.get(1)) else {
        return reply.error("ERR not found");
    };
    let f = &entry.filter;
    let line = format!(
        "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
        entry.params.bucket_size,
        f.buckets(),
        f.len(),
        entry.deleted.load(Ordering::Relaxed),
        f.tables(),
        entry.params.max_iterations,
        entry.params.expansion
    );
    reply.bulk(line.as_bytes());
}

/// A dump `CF.SCANDUMP` is handing out, kept by the connection and charged
/// against the memory limit while it is.
pub struct Dump {
    /// The filter's name.
    name: Vec<u8>,
    /// Its length (8 bytes, little-endian), then its bytes ([`scandump`]
    /// says what they are).
    bytes: Vec<u8>,
    _held: Held,
}

/// What a dump's bytes begin with, after its length: the name and version
/// of this server's dump format.
const DUMP_TAG: &[u8; 8] = b"CFDUMP\0\x01";

/// The bytes of a dump's header: the tag, then the bucket size, the
/// maximum iterations, the expansion and the deletes, a little-endian u64
/// each (the options and counter the save file keeps for a filter).
const DUMP_HEADER: usize = DUMP_TAG.len() + 4 * 8;

/// Appends the header of `entry`'s dump to `out`.
fn dump_header(entry: &Entry, out: &mut Vec<u8>) {
    out.extend_from_slice(DUMP_TAG);
    for n in [
        entry.params.bucket_size,
        entry.params.max_iterations,
        entry.params.expansion,
        entry.deleted.load(Ordering::Relaxed),
    ] {
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// Reads a dump's bytes (after its length): the filter, its options and its
/// deletes; or why they are not a dump this server can load. The options
/// are held to `CF.RESERVE`'s bounds, and the expansion to the filter's
/// kind (0 for a fixed filter, and only for one).
fn read_dump(bytes: &[u8]) -> Result<(Filter, Params, u64), String> {
    let Some((header, body)) = bytes.split_at_checked(DUMP_HEADER) else {
        return Err("the dump is shorter than its header".into());
    };
    let (tag, numbers) = header.split_at(DUMP_TAG.len());
    if tag != DUMP_TAG {
        return Err("not a dump of this server (its header is damaged)".into());
    }
    let mut words = [0u64; 4];
    for (word, bytes) in words.iter_mut().zip(numbers.chunks_exact(8)) {
        *word = u64::from_le_bytes(bytes.try_into().unwrap_or_default());
    }
    let [bucket_size, max_iterations, expansion, deleted] = words;
    let within = |v: u64, range: std::ops::RangeInclusive<i64>| {
        i64::try_from(v).is_ok_and(|v| range.contains(&v))
    };
    if !within(bucket_size, 1..=MAX_BUCKET_SIZE)
        || !within(max_iterations, 1..=MAX_ITERATIONS)
        || !within(expansion, 0..=MAX_EXPANSION)
    {
        return Err("the dump's options are out of bounds (its header is damaged)".into());
    }
    let filter = Filter::from_bytes(body).map_err(|e| e.to_string())?;
    if (expansion == 0) != matches!(filter, Filter::Fixed(_)) {
        return Err("the dump's expansion does not fit its filter (its header is damaged)".into());
    }
    let params = Params {
        bucket_size,
        max_iterations,
        expansion,
    };
    Ok((filter, params, deleted))
}

/// `CF.SCANDUMP key iterator`: the filter's dump in chunks: its length (8
/// bytes, little-endian), so that `CF.LOADCHUNK` knows when the last has
/// come, then a header of this server's ([`DUMP_HEADER`]: the options and
/// deletes `CF.INFO` reports), then the filter in the library's format, not
/// RedisBloom's. Iterator 0 takes a snapshot (kept by the connection, and
/// refused if it would take the filters over the memory limit); each reply
/// gives the next iterator and a chunk, and `[0, nil]` ends the dump.
pub fn scandump(shared: &Shared, session: &mut Session, args: Args<'_>, reply: &mut Reply<'_>) {
    let key = args.get(1);
    let Some(pos) = int(args.get(2)).filter(|&p| p >= 0) else {
        return reply.error("Invalid position");
    };
    let Some(entry) = shared.db.get(key) else {
        return reply.error("ERR not found");
    };
    if pos == 0 {
        // A dump under way on this connection is let go first.
        session.dump = None;
        // The bytes are the table's and little more: reserve that, and a
        // little over, so that the vector is not grown (and copied) on the
        // way.
        let size = entry.filter.memory_usage();
        let reserve = size + size / 64 + 4096 + DUMP_HEADER;
        let held = match shared.db.hold(reserve) {
            Ok(held) => held,
            Err(CreateError::OverMemoryLimit { wanted, left }) => {
                return reply.error(&format!(
                    "ERR Insufficient memory to dump filter: it would take {wanted} bytes, \
                     {left} are left under maxmemory"
                ))
            }
            Err(e) => return reply.error(&e.to_string()),
        };
        let mut bytes = Vec::with_capacity(reserve);
        bytes.extend_from_slice(&[0; 8]);
        dump_header(&entry, &mut bytes);
        entry.filter.append_to(&mut bytes);
        let len = (bytes.len() - 8) as u64;
        bytes[..8].copy_from_slice(&len.to_le_bytes());
        session.dump = Some(Dump {
            name: key.to_vec(),
            bytes,
            _held: held,
        });
    }
    let Some(dump) = session
        .dump
        .as_ref()
        .filter(|d| d.name == key && pos as u64 <= d.bytes.len() as u64)
    else {
        return reply.error("Invalid position");
    };
    let start = pos as usize;
    reply.array(2);
    if start == dump.bytes.len() {
        session.dump = None;
        reply.integer(0);
        reply.null();
        return;
    }
    let end = dump.bytes.len().min(start + CHUNK);
    reply.integer(end as i64);
    reply.bulk(&dump.bytes[start..end]);
}

/// A dump `CF.LOADCHUNK` is receiving: the bytes so far, once its length is
/// known that length (and the name) charged against the memory limit, and
/// the connection that began it, whose end abandons it.
pub struct Load {
    bytes: Vec<u8>,
    held: Option<Held>,
    owner: u64,
}

/// Drops the loads connection `owner` began and did not finish: called when
/// it closes, so that no half-received dump stays charged, or in memory,
/// after it.
pub fn abandon_loads(shared: &Shared, owner: u64) {
    let mut loads = shared.loads.lock().unwrap_or_else(|e| e.into_inner());
    if !loads.is_empty() {
        loads.retain(|_, load| load.owner != owner);
    }
}

/// `CF.LOADCHUNK key iterator data`: a chunk of a `CF.SCANDUMP` dump, in
/// order; the filter appears under `key` once the last chunk has arrived and
/// the whole has been checked. The length the first chunk announces counts
/// against the memory limit until then (or until the load is abandoned: a
/// new load of the name, `FLUSHALL`, or the end of the connection that sent
/// the first chunk; later chunks may come on any connection).
pub fn loadchunk(shared: &Shared, owner: u64, args: Args<'_>, reply: &mut Reply<'_>) {
    let (key, data) = (args.get(1), args.get(3));
    let Some(end) = int(args.get(2)).filter(|&p| p > 0) else {
        return reply.error("Invalid position");
    };
    let Some(start) = (end as u64).checked_sub(data.len() as u64) else {
        return reply.error("Invalid position");
    };
    let mut loads = shared.loads.lock().unwrap_or_else(|e| e.into_inner());
    if start == 0 {
        if shared.db.contains(key) {
            return reply.error("ERR item exists");
        }
        let load = Load {
            bytes: Vec::new(),
            held: None,
            owner,
        };
        loads.insert(key.to_vec(), load);
    }
    let Some(load) = loads.get_mut(key) else {
        // A later chunk with no load under way: for a name that holds a
        // filter, say why rather than that it is not there.
        if shared.db.contains(key) {
            return reply.error("Couldn't load chunk! No dump of this key is being loaded");
        }
        return reply.error("ERR not found");
    };
    if load.bytes.len() as u64 != start {
        loads.remove(key);
        return reply.error("Couldn't load chunk!");
    }
    // The length first: refuse a dump too large before taking its bytes.
    let mut head = [0u8; 8];
    let known = load.bytes.len().min(8);
    head[..known].copy_from_slice(&load.bytes[..known]);
    let take = data.len().min(8 - known);
    head[known..known + take].copy_from_slice(&data[..take]);
    if known + take == 8 {
        let total = u64::from_le_bytes(head);
        let whole = total.saturating_add(8);
        if (load.bytes.len() + data.len()) as u64 > whole {
            loads.remove(key);
            return reply.error("Couldn't load chunk! more bytes than the dump's length");
        }
        if load.held.is_none() {
            // The dump and the name the load is kept under.
            let wanted = usize::try_from(whole)
                .unwrap_or(usize::MAX)
                .saturating_add(name_cost(key));
            match shared.db.hold(wanted) {
                Ok(held) => load.held = Some(held),
                Err(e) => {
                    loads.remove(key);
                    return reply.error(&e.to_string());
                }
            }
            // Under a limit the length is charged, so it is taken at once
            // (no doubling past the charge); without one, as bytes arrive.
            if shared.db.max_memory() > 0 {
                load.bytes
                    .reserve_exact((whole as usize).saturating_sub(load.bytes.len()));
            }
        }
    }
    load.bytes.extend_from_slice(data);
    let received = load.bytes.len() as u64;
    if received < 8 || received < u64::from_le_bytes(head).saturating_add(8) {
        return reply.ok();
    }
    let Some(Load { bytes, held, .. }) = loads.remove(key) else {
        return reply.error("ERR not found");
    };
    drop(loads);
    let decoded = read_dump(&bytes[8..]);
    // The dump's bytes are charged until they are freed; the filter from here.
    drop(bytes);
    drop(held);
    let new = match decoded {
        Ok((filter, params, deleted)) => shared.db.admit(key, filter, params, deleted),
        Err(e) => return reply.error(&format!("Couldn't load chunk! {e}")),
    };
    match new.map(|new| shared.db.insert_new(key, new).1) {
        Ok(true) => reply.ok(),
        Ok(false) => reply.error("ERR item exists"),
        Err(e) => reply.error(&e.to_string()),
    }
}
