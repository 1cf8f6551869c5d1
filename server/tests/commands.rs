//! Every command, through a real client (redis-rs), in RESP2 and RESP3.

mod common;

use common::{error_text, Server, TempDir};
use redis::{cmd, Connection, Value};

fn q<T: redis::FromRedisValue>(con: &mut Connection, args: &[&[u8]]) -> T {
    let mut c = cmd(std::str::from_utf8(args[0]).unwrap());
    for a in &args[1..] {
        c.arg(*a);
    }
    c.query(con).unwrap_or_else(|e| {
        panic!(
            "{:?}: {e}",
            String::from_utf8_lossy(&args.concat()[..args.concat().len().min(80)])
        )
    })
}

fn err(con: &mut Connection, args: &[&str]) -> String {
    let mut c = cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    match c.query::<Value>(con) {
        Ok(v) => panic!("{args:?} answered {v:?}, not an error"),
        Err(e) => error_text(&e),
    }
}

macro_rules! q {
    ($con:expr, $($arg:expr),+) => { q($con, &[$(AsRef::<[u8]>::as_ref(&$arg)),+]) };
}

fn info_field(con: &mut Connection, key: &str, field: &str) -> i64 {
    let info: Vec<Value> = q!(con, "CF.INFO", key);
    let at = info
        .iter()
        .position(|v| matches!(v, Value::SimpleString(s) if s == field))
        .unwrap_or_else(|| panic!("no {field} in {info:?}"));
    match &info[at + 1] {
        Value::Int(n) => *n,
        other => panic!("{field}: {other:?}"),
    }
}

#[test]
fn cf_commands_resp2() {
    let dir = TempDir::new("cf2");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();

    let ok: String = q!(con, "CF.RESERVE", "f", "1000");
    assert_eq!(ok, "OK");
    // Refused, with RedisBloom's words (or Redis's for the arity).
    let refused: &[(&[&str], &str)] = &[
        (&["CF.RESERVE", "f", "1000"], "ERR item exists"),
        (&["CF.RESERVE", "g", "x"], "Bad capacity"),
        (
            &["CF.RESERVE", "g", "3"],
            "Capacity must be at least (BucketSize * 2)",
        ),
        (
            &["CF.RESERVE", "g", "100", "BUCKETSIZE"],
            "ERR wrong number of arguments for 'cf.reserve' command",
        ),
        (
            &["CF.RESERVE", "g", "100", "BUCKETSIZE", "x"],
            "Couldn't parse BUCKETSIZE",
        ),
        (
            &["CF.RESERVE", "g", "100", "BUCKETSIZE", "256"],
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (
            &["CF.RESERVE", "g", "100", "MAXITERATIONS", "0"],
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            &["CF.RESERVE", "g", "100", "EXPANSION", "-1"],
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
        (
            &["CF.RESERVE", "g", "100", "ERROR_RATE", "1.5"],
            "ERR ERROR_RATE: value must be a number between 0 and 1, exclusive.",
        ),
        (
            &["CF.RESERVE", "g", "100", "COLOUR", "blue"],
            "Unknown argument received",
        ),
        (
            &["CF.ADD", "f"],
            "ERR wrong number of arguments for 'cf.add' command",
        ),
    ];
    for (args, error) in refused {
        assert_eq!(err(con, args), *error, "{args:?}");
    }
    let exists: i64 = q!(con, "EXISTS", "g");
    assert_eq!(exists, 0, "a refused CF.RESERVE creates nothing");
    // An option given twice: the first counts, as in RedisBloom.
    let ok: String = q!(
        con,
        "CF.RESERVE",
        "twice",
        "1000",
        "BUCKETSIZE",
        "2",
        "BUCKETSIZE",
        "x"
    );
    assert_eq!(ok, "OK");
    assert_eq!(info_field(con, "twice", "Bucket size"), 2);
    let _: i64 = q!(con, "DEL", "twice");

    // Add, look up, remove.
    let added: i64 = q!(con, "CF.ADD", "f", "apple");
    assert_eq!(added, 1);
    let added: i64 = q!(con, "CF.ADD", "f", "apple");
    assert_eq!(added, 1, "CF.ADD adds a copy");
    let added: i64 = q!(con, "CF.ADDNX", "f", "apple");
    assert_eq!(added, 0);
    let added: i64 = q!(con, "CF.ADDNX", "f", "pear");
    assert_eq!(added, 1);
    let found: i64 = q!(con, "CF.EXISTS", "f", "apple");
    assert_eq!(found, 1);
    let found: i64 = q!(con, "CF.EXISTS", "f", "plum");
    assert_eq!(found, 0);
    let found: i64 = q!(con, "CF.EXISTS", "nothing", "plum");
    assert_eq!(found, 0, "a missing key holds nothing");
    let found: Vec<i64> = q!(con, "CF.MEXISTS", "f", "apple", "plum", "pear");
    assert_eq!(found, [1, 0, 1]);
    let found: Vec<i64> = q!(con, "CF.MEXISTS", "nothing", "apple");
    assert_eq!(found, [0]);
    let count: i64 = q!(con, "CF.COUNT", "f", "pear");
    assert_eq!(count, 1);
    let count: i64 = q!(con, "CF.COUNT", "f", "apple");
    assert_eq!(count, 2, "added twice");
    let count: i64 = q!(con, "CF.COUNT", "nothing", "apple");
    assert_eq!(count, 0, "a missing key holds nothing");
    assert_eq!(info_field(con, "f", "Number of items inserted"), 3);
    let removed: i64 = q!(con, "CF.DEL", "f", "apple");
    assert_eq!(removed, 1);
    let count: i64 = q!(con, "CF.COUNT", "f", "apple");
    assert_eq!(count, 1, "one copy is left");
    let found: i64 = q!(con, "CF.EXISTS", "f", "apple");
    assert_eq!(found, 1, "one copy is left");
    let removed: i64 = q!(con, "CF.DEL", "f", "apple");
    assert_eq!(removed, 1);
    let removed: i64 = q!(con, "CF.DEL", "f", "apple");
    assert_eq!(removed, 0);
    let found: i64 = q!(con, "CF.EXISTS", "f", "apple");
    assert_eq!(found, 0);
    assert_eq!(err(con, &["CF.DEL", "nothing", "x"]), "Not found");
    assert_eq!(info_field(con, "f", "Number of items deleted"), 2);
    assert_eq!(info_field(con, "f", "Number of items inserted"), 1);
    assert_eq!(info_field(con, "f", "Number of filters"), 1);
    assert_eq!(info_field(con, "f", "Expansion rate"), 1);
    assert_eq!(info_field(con, "f", "Bucket size"), 2);
    assert_eq!(info_field(con, "f", "Max iterations"), 20);
    assert!(info_field(con, "f", "Capacity") >= 1000);
    assert_eq!(err(con, &["CF.INFO", "nothing"]), "ERR not found");
    let ok: String = q!(con, "CF.COMPACT", "f");
    assert_eq!(ok, "OK");
    assert_eq!(
        err(con, &["CF.COMPACT", "nothing"]),
        "Cuckoo filter was not found"
    );
    let debug: String = q!(con, "CF.DEBUG", "f");
    assert!(debug.starts_with("bktsize:2 buckets:"), "{debug}");

    // CF.ADD creates a growable filter.
    let added: i64 = q!(con, "CF.ADD", "auto", "x");
    assert_eq!(added, 1);
    for i in 0..5000 {
        let _: i64 = q!(con, "CF.ADD", "auto", format!("item{i}"));
    }
    assert!(info_field(con, "auto", "Number of filters") > 1, "it grew");
    let found: Vec<i64> = q(
        con,
        &[&b"CF.MEXISTS"[..], b"auto", b"item0", b"item4999", b"x"],
    );
    assert_eq!(found, [1, 1, 1]);

    // CF.INSERT and CF.INSERTNX.
    let r: Vec<i64> = q!(con, "CF.INSERT", "ins", "ITEMS", "a", "b", "a");
    assert_eq!(r, [1, 1, 1]);
    let r: Vec<i64> = q!(
        con,
        "CF.INSERTNX",
        "ins",
        "CAPACITY",
        "1000",
        "ITEMS",
        "a",
        "c"
    );
    assert_eq!(r, [0, 1]);
    assert_eq!(info_field(con, "ins", "Number of items inserted"), 4);
    assert_eq!(
        err(con, &["CF.INSERT", "new", "NOCREATE", "ITEMS", "a"]),
        "ERR not found"
    );
    assert_eq!(
        err(con, &["CF.INSERT", "new", "CAPACITY", "x", "ITEMS", "a"]),
        "Bad capacity"
    );
    assert_eq!(
        err(con, &["CF.INSERT", "new", "CAPACITY", "2", "ITEMS", "a"]),
        "Capacity must be at least (BucketSize * 2)"
    );
    assert_eq!(
        err(con, &["CF.INSERT", "new", "WHAT", "ITEMS", "a"]),
        "Unknown argument received"
    );
    assert_eq!(
        err(con, &["CF.INSERT", "new", "ITEMS"]),
        "ERR wrong number of arguments for 'cf.insert' command"
    );
    assert_eq!(
        err(con, &["CF.INSERT", "new", "CAPACITY", "100", "NOCREATE"]),
        "ERR wrong number of arguments for 'cf.insert' command"
    );
    let r: Vec<i64> = q!(con, "CF.INSERT", "new", "CAPACITY", "100000", "ITEMS", "z");
    assert_eq!(r, [1]);
    assert!(info_field(con, "new", "Capacity") >= 100_000);

    // A fixed filter (EXPANSION 0) fills up: errors as RedisBloom's.
    let _: String = q!(con, "CF.RESERVE", "small", "4", "EXPANSION", "0");
    let mut full_at = None;
    for i in 0..1000 {
        match cmd("CF.ADD").arg("small").arg(i).query::<i64>(con) {
            Ok(1) => {}
            Ok(other) => panic!("CF.ADD answered {other}"),
            Err(e) => {
                assert_eq!(error_text(&e), "Filter is full");
                full_at = Some(i);
                break;
            }
        }
    }
    let full_at = full_at.expect("a fixed filter of 4 items fills up");
    assert_eq!(info_field(con, "small", "Number of filters"), 1);
    assert_eq!(
        info_field(con, "small", "Number of items inserted"),
        full_at
    );
    let r: Vec<i64> = q!(con, "CF.INSERT", "small", "ITEMS", "more");
    assert_eq!(r, [-1]);
    let r: Vec<i64> = q!(con, "CF.INSERTNX", "small", "ITEMS", "more");
    assert_eq!(r, [-1]);

    // ERROR_RATE picks the layout: a lower rate takes more memory.
    let _: String = q!(con, "CF.RESERVE", "loose", "100000", "ERROR_RATE", "0.05");
    let _: String = q!(con, "CF.RESERVE", "tight", "100000", "ERROR_RATE", "0.0001");
    let (loose, tight) = (
        info_field(con, "loose", "Size"),
        info_field(con, "tight", "Size"),
    );
    assert!(tight > loose * 3 / 2, "{tight} {loose}");

    // Binary items and names.
    let weird: &[u8] = b"\x00\r\n\xff*1\r\n";
    let added: i64 = q(con, &[&b"CF.ADD"[..], weird, weird]);
    assert_eq!(added, 1);
    let found: i64 = q(con, &[&b"CF.EXISTS"[..], weird, weird]);
    assert_eq!(found, 1);
    let found: i64 = q(con, &[&b"CF.EXISTS"[..], weird, b"\x00"]);
    assert_eq!(found, 0);
}

#[test]
fn cf_commands_resp3() {
    let dir = TempDir::new("cf3");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect3();
    let v: Value = q!(con, "CF.ADD", "f", "a");
    assert_eq!(v, Value::Boolean(true));
    let v: Value = q!(con, "CF.ADDNX", "f", "a");
    assert_eq!(v, Value::Boolean(false));
    let v: Value = q!(con, "CF.EXISTS", "f", "a");
    assert_eq!(v, Value::Boolean(true));
    let v: Value = q!(con, "CF.EXISTS", "none", "a");
    assert_eq!(v, Value::Boolean(false));
    let v: Value = q!(con, "CF.MEXISTS", "f", "a", "b");
    assert_eq!(
        v,
        Value::Array(vec![Value::Boolean(true), Value::Boolean(false)])
    );
    let v: Value = q!(con, "CF.INSERT", "f", "ITEMS", "b");
    assert_eq!(v, Value::Array(vec![Value::Boolean(true)]));
    let v: Value = q!(con, "CF.INSERTNX", "f", "ITEMS", "b", "c");
    assert_eq!(v, Value::Array(vec![Value::Int(0), Value::Int(1)]));
    let v: Value = q!(con, "CF.COUNT", "f", "a");
    assert_eq!(v, Value::Int(1));
    let v: Value = q!(con, "CF.DEL", "f", "a");
    assert_eq!(v, Value::Boolean(true));
    let v: Value = q!(con, "CF.INFO", "f");
    let Value::Map(fields) = v else {
        panic!("{v:?}")
    };
    assert!(fields.contains(&(
        Value::SimpleString("Number of items inserted".into()),
        Value::Int(2)
    )));
    assert!(matches!(fields.last(), Some((_, Value::Double(r))) if *r > 0.0 && *r < 0.01));
    let _: Value = q!(con, "CF.RESERVE", "full", "4", "EXPANSION", "0");
    let mut last = Value::Nil;
    for i in 0..100 {
        last = q!(con, "CF.INSERT", "full", "ITEMS", format!("{i}"));
    }
    assert_eq!(
        last,
        Value::Array(vec![Value::Boolean(false)]),
        "full: false in RESP3"
    );
    // The end of a dump is [0, null].
    let mut iter = 0i64;
    loop {
        let v: Value = q!(con, "CF.SCANDUMP", "f", iter.to_string());
        let Value::Array(parts) = v else {
            panic!("{v:?}")
        };
        match parts.as_slice() {
            [Value::Int(0), Value::Nil] => break,
            [Value::Int(next), Value::BulkString(_)] => iter = *next,
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn scandump_and_loadchunk() {
    let dir = TempDir::new("dump");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    // A fixed filter, a growable one that grew, and one large enough for
    // several chunks.
    let _: String = q!(con, "CF.RESERVE", "fixed", "1000", "EXPANSION", "0");
    let _: String = q!(con, "CF.RESERVE", "grown", "100");
    let _: String = q!(
        con,
        "CF.RESERVE",
        "large",
        "6000000",
        "ERROR_RATE",
        "0.0001"
    );
    for i in 0..2000 {
        let item = format!("i{i}");
        if i < 900 {
            let _: i64 = q!(con, "CF.ADD", "fixed", item);
        }
        let _: i64 = q!(con, "CF.ADD", "grown", item);
        let _: i64 = q!(con, "CF.ADD", "large", item);
    }
    assert!(info_field(con, "grown", "Number of filters") > 1);
    for key in ["fixed", "grown", "large"] {
        let mut chunks: Vec<(i64, Vec<u8>)> = Vec::new();
        let mut iter = 0i64;
        loop {
            let (next, data): (i64, Option<Vec<u8>>) =
                q!(con, "CF.SCANDUMP", key, iter.to_string());
            if next == 0 {
                assert!(data.is_none());
                break;
            }
            chunks.push((next, data.unwrap()));
            iter = next;
        }
        if key == "large" {
            assert!(chunks.len() > 1, "several chunks");
        }
        let items = info_field(con, key, "Number of items inserted");
        let tables = info_field(con, key, "Number of filters");
        let _: i64 = q!(con, "DEL", key);
        for (i, (iter, data)) in chunks.iter().enumerate() {
            // Until the last chunk, the filter is not there.
            let exists: i64 = q!(con, "EXISTS", key);
            assert_eq!(exists, 0, "{key} before chunk {i}");
            let ok: String = q(
                con,
                &[
                    &b"CF.LOADCHUNK"[..],
                    key.as_bytes(),
                    iter.to_string().as_bytes(),
                    data,
                ],
            );
            assert_eq!(ok, "OK");
        }
        assert_eq!(info_field(con, key, "Number of items inserted"), items);
        assert_eq!(info_field(con, key, "Number of filters"), tables);
        let n = if key == "fixed" { 900 } else { 2000 };
        for i in 0..n {
            let found: i64 = q!(con, "CF.EXISTS", key, format!("i{i}"));
            assert_eq!(found, 1, "{key} i{i}");
        }
    }
    // A chunk out of order within a load under way ends the load.
    let chunks = dump(con, "large");
    assert!(chunks.len() >= 3);
    let load_chunk = |con: &mut Connection, (iter, data): &(i64, Vec<u8>)| {
        cmd("CF.LOADCHUNK")
            .arg("skipped")
            .arg(*iter)
            .arg(data)
            .query::<Value>(con)
    };
    assert_eq!(load_chunk(con, &chunks[0]).unwrap(), Value::Okay);
    let e = load_chunk(con, &chunks[2]).unwrap_err();
    assert_eq!(error_text(&e), "Couldn't load chunk!");
    let e = load_chunk(con, &chunks[1]).unwrap_err();
    assert_eq!(error_text(&e), "ERR not found", "the load was dropped");
    let exists: i64 = q!(con, "EXISTS", "skipped");
    assert_eq!(exists, 0);
    // Loading over an existing filter, out of order, or damaged bytes.
    let (next, data): (i64, Vec<u8>) = q!(con, "CF.SCANDUMP", "fixed", "0");
    let e = cmd("CF.LOADCHUNK")
        .arg("fixed")
        .arg(next)
        .arg(&data)
        .query::<Value>(con)
        .unwrap_err();
    assert_eq!(error_text(&e), "ERR item exists");
    let e = cmd("CF.LOADCHUNK")
        .arg("fixed")
        .arg(next + 5)
        .arg(&data)
        .query::<Value>(con)
        .unwrap_err();
    assert_eq!(
        error_text(&e),
        "Couldn't load chunk! No dump of this key is being loaded"
    );
    let e = cmd("CF.LOADCHUNK")
        .arg("other")
        .arg(next + 5)
        .arg(&data)
        .query::<Value>(con)
        .unwrap_err();
    assert_eq!(error_text(&e), "ERR not found");
    let mut bad = data.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let e = cmd("CF.LOADCHUNK")
        .arg("other")
        .arg(next)
        .arg(&bad)
        .query::<Value>(con)
        .unwrap_err();
    assert!(error_text(&e).starts_with("Couldn't load chunk!"), "{e}");
    let e = cmd("CF.LOADCHUNK")
        .arg("other")
        .arg(0)
        .arg(&data)
        .query::<Value>(con)
        .unwrap_err();
    assert_eq!(error_text(&e), "Invalid position");
    assert_eq!(
        err(con, &["CF.SCANDUMP", "fixed", "-1"]),
        "Invalid position"
    );
    assert_eq!(err(con, &["CF.SCANDUMP", "nothing", "0"]), "ERR not found");
    let exists: i64 = q!(con, "EXISTS", "other");
    assert_eq!(exists, 0);
}

/// A filter's dump, chunk by chunk: `(iterator, data)` for `CF.LOADCHUNK`.
fn dump(con: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut iter = 0i64;
    loop {
        let (next, data): (i64, Option<Vec<u8>>) = q!(con, "CF.SCANDUMP", key, iter.to_string());
        match data {
            Some(data) => chunks.push((next, data)),
            None => return chunks,
        }
        iter = next;
    }
}

fn load(con: &mut Connection, key: &str, chunks: &[(i64, Vec<u8>)]) -> redis::RedisResult<()> {
    for (iter, data) in chunks {
        cmd("CF.LOADCHUNK")
            .arg(key)
            .arg(*iter)
            .arg(data)
            .query::<()>(con)?;
    }
    Ok(())
}

/// `CF.INFO`'s fields but `Size` (a decoded growable filter may size its
/// side structures differently), and `CF.DEBUG`'s line.
fn described(con: &mut Connection, key: &str) -> (Vec<Value>, String) {
    let info: Vec<Value> = q!(con, "CF.INFO", key);
    let info = info
        .chunks(2)
        .filter(|p| p[0] != Value::SimpleString("Size".into()))
        .flat_map(|p| p.to_vec())
        .collect();
    (info, q!(con, "CF.DEBUG", key))
}

/// A dump holds the filter's options (`BUCKETSIZE`, `MAXITERATIONS`,
/// `EXPANSION`, fixed or growable) and its count of deletes, as the save
/// file does: `CF.INFO` and `CF.DEBUG` say the same after a round trip, and
/// after a restart from a save. A dump whose header is damaged, or says a
/// fixed filter's options for a growable one, is refused.
#[test]
fn a_dump_keeps_the_filters_options_and_deletes() {
    let dir = TempDir::new("dump-options");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    let _: String = q!(
        con,
        "CF.RESERVE",
        "fixed",
        "1000",
        "BUCKETSIZE",
        "4",
        "MAXITERATIONS",
        "50",
        "EXPANSION",
        "0"
    );
    let _: String = q!(
        con,
        "CF.RESERVE",
        "grows",
        "100",
        "BUCKETSIZE",
        "3",
        "MAXITERATIONS",
        "30",
        "EXPANSION",
        "2"
    );
    for key in ["fixed", "grows"] {
        for i in 0..300 {
            let _: i64 = q!(con, "CF.ADD", key, format!("i{i}"));
        }
        for i in 0..7 {
            let removed: i64 = q!(con, "CF.DEL", key, format!("i{i}"));
            assert_eq!(removed, 1);
        }
    }
    let mut before = Vec::new();
    for key in ["fixed", "grows"] {
        let was = described(con, key);
        let chunks = dump(con, key);
        let _: i64 = q!(con, "DEL", key);
        load(con, key, &chunks).unwrap();
        assert_eq!(described(con, key), was, "{key} after a dump and a load");
        before.push(was);
    }
    assert_eq!(info_field(con, "fixed", "Expansion rate"), 0);
    assert_eq!(info_field(con, "fixed", "Number of items deleted"), 7);
    assert_eq!(info_field(con, "grows", "Expansion rate"), 2);
    // The save file keeps the same.
    let _ = cmd("SHUTDOWN").arg("SAVE").query::<Value>(con);
    drop(server);
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    for (key, was) in ["fixed", "grows"].into_iter().zip(before) {
        assert_eq!(described(con, key), was, "{key} after a restart");
    }
    // Damaged headers.
    let whole: Vec<u8> = dump(con, "grows")
        .into_iter()
        .flat_map(|(_, d)| d)
        .collect();
    let try_load = |con: &mut Connection, bytes: &[u8]| {
        cmd("CF.LOADCHUNK")
            .arg("copy")
            .arg(bytes.len())
            .arg(bytes)
            .query::<Value>(con)
            .map_err(|e| error_text(&e))
    };
    assert_eq!(try_load(con, &whole), Ok(Value::Okay));
    let _: i64 = q!(con, "DEL", "copy");
    let mut cases = Vec::new();
    let mut magic = whole.clone();
    magic[8] ^= 1;
    cases.push(magic);
    let mut fixed_options = whole.clone();
    // Expansion, the third option after the length and the tag.
    fixed_options[32..40].copy_from_slice(&0u64.to_le_bytes());
    cases.push(fixed_options);
    let mut no_bucket = whole.clone();
    no_bucket[16..24].copy_from_slice(&0u64.to_le_bytes());
    cases.push(no_bucket);
    let mut short = 20u64.to_le_bytes().to_vec();
    short.extend_from_slice(&whole[8..28]);
    cases.push(short);
    for bytes in cases {
        let e = try_load(con, &bytes).unwrap_err();
        assert!(e.starts_with("Couldn't load chunk!"), "{e}");
        let exists: i64 = q!(con, "EXISTS", "copy");
        assert_eq!(exists, 0);
    }
}

#[test]
fn key_commands() {
    let dir = TempDir::new("keys");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    for i in 0..250 {
        let _: i64 = q!(con, "CF.ADD", format!("key:{i}"), "x");
    }
    let _: i64 = q!(con, "CF.ADD", "other", "x");
    let n: i64 = q!(con, "DBSIZE");
    assert_eq!(n, 251);
    let t: String = q!(con, "TYPE", "other");
    assert_eq!(t, "MBbloomCF");
    let t: String = q!(con, "TYPE", "nothing");
    assert_eq!(t, "none");
    let n: i64 = q!(con, "EXISTS", "other", "other", "nothing", "key:1");
    assert_eq!(n, 3);
    let mut keys: Vec<String> = q!(con, "KEYS", "key:1?");
    keys.sort();
    assert_eq!(
        keys,
        (10..20).map(|i| format!("key:{i}")).collect::<Vec<_>>()
    );
    let all: Vec<String> = q!(con, "KEYS", "*");
    assert_eq!(all.len(), 251);
    // SCAN returns every key once, in pieces.
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    let mut calls = 0;
    loop {
        let (next, batch): (String, Vec<String>) =
            q!(con, "SCAN", cursor, "MATCH", "key:*", "COUNT", "20");
        seen.extend(batch);
        calls += 1;
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    seen.sort();
    let mut expected: Vec<String> = (0..250).map(|i| format!("key:{i}")).collect();
    expected.sort();
    assert_eq!(seen, expected);
    assert!(calls > 5, "{calls}");
    let (_, none): (String, Vec<String>) = q!(con, "SCAN", "0", "TYPE", "string", "COUNT", "1000");
    assert!(none.is_empty());
    assert_eq!(err(con, &["SCAN", "x"]), "ERR invalid cursor");
    let n: i64 = q!(con, "TOUCH", "other", "nothing", "key:1");
    assert_eq!(n, 2);
    // Filters do not expire: TTL says so, EXPIRE is refused.
    for ttl in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        let (there, gone): (i64, i64) = (q!(con, ttl, "other"), q!(con, ttl, "nothing"));
        assert_eq!((there, gone), (-1, -2), "{ttl}");
    }
    let n: i64 = q!(con, "PERSIST", "other");
    assert_eq!(n, 0);
    for expire in ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"] {
        let e = err(con, &[expire, "other", "100"]);
        assert!(
            e.starts_with("ERR filters do not expire here") && e.contains(expire),
            "{e}"
        );
    }
    let ttl: i64 = q!(con, "TTL", "other");
    assert_eq!(ttl, -1, "a refused EXPIRE set nothing");
    let drawn: String = q!(con, "RANDOMKEY");
    assert!(drawn == "other" || drawn.starts_with("key:"), "{drawn}");
    let n: i64 = q!(con, "DEL", "key:1", "key:2", "nothing");
    assert_eq!(n, 2);
    let n: i64 = q!(con, "UNLINK", "key:3");
    assert_eq!(n, 1);
    let n: i64 = q!(con, "DBSIZE");
    assert_eq!(n, 248);
    let ok: String = q!(con, "FLUSHDB");
    assert_eq!(ok, "OK");
    let _: i64 = q!(con, "CF.ADD", "again", "x");
    let ok: String = q!(con, "FLUSHALL", "ASYNC");
    assert_eq!(ok, "OK");
    let n: i64 = q!(con, "DBSIZE");
    assert_eq!(n, 0);
    let found: i64 = q!(con, "CF.EXISTS", "again", "x");
    assert_eq!(found, 0);
    let v: Value = q!(con, "RANDOMKEY");
    assert_eq!(v, Value::Nil);
}

/// Creates a filter under each of `names`, in one pipeline.
fn reserve_all(con: &mut Connection, names: impl IntoIterator<Item = String>) {
    let mut pipe = redis::pipe();
    for name in names {
        pipe.cmd("CF.RESERVE").arg(name).arg(10).ignore();
    }
    pipe.query::<()>(con).unwrap();
}

/// The names one `SCAN` call returns, and the next cursor.
fn scan_once(con: &mut Connection, cursor: &str, count: usize) -> (String, Vec<String>) {
    q!(con, "SCAN", cursor, "COUNT", count.to_string())
}

/// Names long enough that a connection's SCAN cache holds about a
/// thousand: an iteration over a few thousand walks the map several times.
fn long_name(kind: &str, i: usize) -> String {
    format!("{kind}:{i:0>200}")
}

#[test]
fn scan_returns_every_key_present_throughout() {
    let dir = TempDir::new("scan-all");
    let server = Server::start(dir.path(), &[]);
    let cons = &mut [server.connect(), server.connect()];
    reserve_all(&mut cons[0], (0..3000).map(|i| long_name("stay", i)));
    reserve_all(&mut cons[0], (0..500).map(|i| long_name("gone", i)));
    let mut seen = std::collections::HashSet::new();
    let (mut cursor, mut calls, mut added) = ("0".to_string(), 0, 0);
    loop {
        // The cursor passes from one connection to the other now and then.
        let con = &mut cons[calls / 40 % 2];
        let (next, batch) = scan_once(con, &cursor, 7);
        assert!(batch.len() <= 8, "{}", batch.len());
        seen.extend(batch);
        calls += 1;
        cursor = next;
        if cursor == "0" {
            break;
        }
        // Keys come and go meanwhile.
        if calls % 25 == 0 {
            reserve_all(con, (added..added + 20).map(|i| long_name("new", i)));
            added += 20;
            let gone = long_name("gone", calls / 25);
            let _: i64 = q!(con, "DEL", gone);
        }
    }
    for i in 0..3000 {
        assert!(seen.contains(&long_name("stay", i)), "stay:{i} missed");
    }
    assert!(seen
        .iter()
        .all(|k| k.starts_with("stay:") || k.starts_with("gone:") || k.starts_with("new:")));
    assert!((3000 / 7..=4500 / 7).contains(&calls), "{calls} calls");
}

/// A connection's SCAN cache serves only the iterations that began before
/// it was filled: a cursor of a later iteration, from another connection,
/// sees the keys added since.
#[test]
fn scan_cache_does_not_serve_a_later_iteration() {
    let dir = TempDir::new("scan-later");
    let server = Server::start(dir.path(), &[]);
    let (a, b) = (&mut server.connect(), &mut server.connect());
    reserve_all(a, (0..1000).map(|i| long_name("old", i)));
    // `a` walks the map and caches what follows its first key.
    let (cached_from, first) = scan_once(a, "0", 1);
    assert_eq!(first.len(), 1);
    // Keys added past the cache's start (SCAN's order: the hash of the
    // name, std's `DefaultHasher` with its fixed keys), so that the later
    // iteration's cursor is one the cache holds names for.
    let hash = |name: &String| {
        std::hash::BuildHasher::hash_one(
            &std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default(),
            name.as_bytes(),
        )
    };
    let cached_from: u64 = cached_from.parse().unwrap();
    let new: Vec<String> = (0..2000)
        .map(|i| long_name("new", i))
        .filter(|name| hash(name) > cached_from)
        .collect();
    reserve_all(a, new.iter().cloned());
    // A new iteration, begun on `b`, goes on on `a`.
    let (mut cursor, mut seen) = scan_once(b, "0", 1);
    assert_eq!((&cursor.parse().unwrap(), &seen), (&cached_from, &first));
    while cursor != "0" {
        let (next, batch) = scan_once(a, &cursor, 50);
        seen.extend(batch);
        cursor = next;
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 1000 + new.len());
}

#[test]
fn flushall_and_reset_drop_the_scan_cache() {
    let dir = TempDir::new("scan-flush");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    for reset in ["FLUSHALL", "RESET"] {
        let _: () = q!(con, "FLUSHALL");
        reserve_all(con, (0..100).map(|i| format!("before:{i}")));
        let (cursor, _) = scan_once(con, "0", 1);
        // The names cached are deleted, on another connection for RESET.
        let _: String = q!(con, reset);
        if reset == "RESET" {
            let _: () = q!(&mut server.connect(), "FLUSHALL");
        }
        reserve_all(con, (0..100).map(|i| format!("after:{i}")));
        let (_, batch) = scan_once(con, &cursor, 1000);
        assert!(
            batch.iter().all(|k| k.starts_with("after:")),
            "{reset}: {batch:?}"
        );
    }
}

/// RANDOMKEY walks to the name it draws: over many draws, each comes up.
#[test]
fn randomkey_draws_every_key() {
    let dir = TempDir::new("randomkey");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    reserve_all(con, (0..5).map(|i| format!("k{i}")));
    let mut drawn = std::collections::HashSet::new();
    for _ in 0..500 {
        let name: String = q!(con, "RANDOMKEY");
        drawn.insert(name);
    }
    let mut drawn: Vec<String> = drawn.into_iter().collect();
    drawn.sort();
    assert_eq!(drawn, ["k0", "k1", "k2", "k3", "k4"]);
}

#[test]
fn connection_and_server_commands() {
    let dir = TempDir::new("conn");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    let pong: String = q!(con, "PING");
    assert_eq!(pong, "PONG");
    let echo: Vec<u8> = q!(con, "PING", "hi");
    assert_eq!(echo, b"hi");
    let echo: Vec<u8> = q!(con, "ECHO", "a\r\nb");
    assert_eq!(echo, b"a\r\nb");
    let ok: String = q!(con, "SELECT", "0");
    assert_eq!(ok, "OK");
    assert_eq!(err(con, &["SELECT", "1"]), "ERR DB index is out of range");
    let ok: String = q!(con, "CLIENT", "SETNAME", "me");
    assert_eq!(ok, "OK");
    let name: String = q!(con, "CLIENT", "GETNAME");
    assert_eq!(name, "me");
    let ok: String = q!(con, "CLIENT", "SETINFO", "LIB-NAME", "test");
    assert_eq!(ok, "OK");
    let id: i64 = q!(con, "CLIENT", "ID");
    assert!(id > 0);
    let n: i64 = q!(con, "COMMAND", "COUNT");
    let all: Vec<Value> = q!(con, "COMMAND");
    assert_eq!(all.len() as i64, n);
    let info: Vec<Value> = q!(con, "COMMAND", "INFO", "cf.add", "nothing");
    assert!(
        matches!(&info[0], Value::Array(f) if f[0] == Value::BulkString(b"cf.add".to_vec()) && f[1] == Value::Int(3))
    );
    assert_eq!(info[1], Value::Nil);
    let _: Value = q!(con, "COMMAND", "DOCS");
    let config: Vec<String> = q!(con, "CONFIG", "GET", "save");
    assert_eq!(config, ["save", ""]);
    let config: Vec<String> = q!(con, "CONFIG", "GET", "appendonly", "proto*");
    assert_eq!(
        config,
        ["appendonly", "no", "proto-max-bulk-len", "536870912"]
    );
    let text: String = q!(con, "INFO");
    for field in [
        "redis_version:",
        "tcp_port:",
        "connected_clients:",
        "rdb_last_save_time:",
        "used_memory:",
    ] {
        assert!(text.contains(field), "{field} in {text}");
    }
    let text: String = q!(con, "INFO", "keyspace");
    assert!(!text.contains("redis_version"));
    // The fields `redis-cli --stat` reads: commands of every connection,
    // those that ended included.
    let stat = |con: &mut Connection, field: &str| -> u64 {
        let text: String = q!(con, "INFO");
        let prefix = format!("{field}:");
        text.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("no {field} in {text}"))
            .parse()
            .unwrap()
    };
    assert_eq!(stat(con, "blocked_clients"), 0);
    let text: String = q!(con, "INFO", "replication");
    assert!(text.contains("role:master\r\n"), "{text}");
    let role: (String, i64, Vec<String>) = q!(con, "ROLE");
    assert_eq!(role, ("master".into(), 0, vec![]));
    let before = stat(con, "total_commands_processed");
    {
        let other = &mut server.connect();
        for _ in 0..10 {
            let _: String = q!(other, "PING");
        }
    }
    let after = stat(con, "total_commands_processed");
    assert!(after > before + 10, "{before} then {after}");
    // MEMORY USAGE, as `redis-cli --memkeys` and key browsers ask it.
    let ok: String = q!(con, "CF.RESERVE", "m", "100000", "EXPANSION", "0");
    assert_eq!(ok, "OK");
    let bytes: i64 = q!(con, "MEMORY", "USAGE", "m");
    let size = info_field(con, "m", "Size");
    assert!(bytes >= size && bytes < size + 1024, "{bytes} for {size}");
    let same: i64 = q!(con, "MEMORY", "USAGE", "m", "SAMPLES", "5");
    assert_eq!(same, bytes);
    let v: Value = q!(con, "MEMORY", "USAGE", "nothing");
    assert_eq!(v, Value::Nil);
    assert_eq!(
        err(con, &["MEMORY", "USAGE", "m", "SAMPLE", "5"]),
        "ERR syntax error"
    );
    assert!(err(con, &["MEMORY", "STATS"]).contains("Try MEMORY HELP"));
    let help: Vec<String> = q!(con, "MEMORY", "HELP");
    assert!(help.iter().any(|l| l.starts_with("USAGE")), "{help:?}");
    let (secs, micros): (String, String) = q!(con, "TIME");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(secs.parse::<u64>().unwrap().abs_diff(now) < 60, "{secs}");
    assert!(micros.parse::<u32>().unwrap() < 1_000_000, "{micros}");
    assert_eq!(
        err(con, &["GET", "x", "y"]),
        "ERR unknown command 'GET', with args beginning with: 'x' 'y' "
    );
    // Subcommands: Redis 7's words for a known one with the wrong number of
    // arguments, and for an unknown one.
    for (request, error) in [
        (
            &["CLIENT", "SETNAME"][..],
            "ERR wrong number of arguments for 'client|setname' command",
        ),
        (
            &["client", "GETNAME", "x"],
            "ERR wrong number of arguments for 'client|getname' command",
        ),
        (
            &["CONFIG", "GET"],
            "ERR wrong number of arguments for 'config|get' command",
        ),
        (
            &["COMMAND", "COUNT", "x"],
            "ERR wrong number of arguments for 'command|count' command",
        ),
        (
            &["CLIENT", "bogus"],
            "ERR unknown subcommand 'bogus'. Try CLIENT HELP.",
        ),
        (
            &["config", "bogus"],
            "ERR unknown subcommand 'bogus'. Try CONFIG HELP.",
        ),
    ] {
        assert_eq!(err(con, request), error, "{request:?}");
    }
    assert_eq!(
        err(con, &["ECHO"]),
        "ERR wrong number of arguments for 'echo' command"
    );
    let v: Value = q!(con, "HELLO", "3");
    assert!(matches!(v, Value::Map(_)), "{v:?}");
    let v: Value = q!(con, "CF.EXISTS", "x", "y");
    assert_eq!(v, Value::Boolean(false), "RESP3 after HELLO 3");
    let v: Value = q!(con, "HELLO", "2");
    assert!(matches!(v, Value::Array(_)), "{v:?}");
    assert_eq!(
        err(con, &["HELLO", "4"]),
        "NOPROTO unsupported protocol version"
    );
    // A name CLIENT SETNAME refuses is refused here too, and the protocol
    // stays as it was.
    assert_eq!(
        err(con, &["HELLO", "3", "SETNAME", "a b"]),
        "ERR Client names cannot contain spaces, newlines or special characters."
    );
    let v: Value = q!(con, "CF.EXISTS", "x", "y");
    assert_eq!(v, Value::Int(0), "still RESP2 after a refused HELLO 3");
    let v: Value = q!(con, "HELLO", "3", "SETNAME", "three");
    assert!(matches!(v, Value::Map(_)), "{v:?}");
    let info: String = q!(con, "CLIENT", "INFO");
    assert!(
        info.contains("name=three") && info.contains("resp=3"),
        "{info}"
    );
    // CLIENT LIST: every connection, by id, with what each set.
    let other = &mut server.connect();
    let ok: String = q!(other, "CLIENT", "SETINFO", "LIB-VER", "1.2");
    assert_eq!(ok, "OK");
    let other_id: i64 = q!(other, "CLIENT", "ID");
    let list: String = q!(con, "CLIENT", "LIST");
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    assert!(
        lines[0].contains(" name=three ")
            && lines[0].contains(" resp=3 ")
            && lines[0].contains(" lib-name=test "),
        "{list}"
    );
    assert!(
        lines[1].starts_with(&format!("id={other_id} addr=127.0.0.1:"))
            && lines[1].contains(" resp=2 ")
            && lines[1].ends_with(" lib-ver=1.2"),
        "{list}"
    );
    let one: String = q!(
        con,
        "CLIENT",
        "LIST",
        "TYPE",
        "normal",
        "ID",
        other_id.to_string()
    );
    assert_eq!(one.lines().collect::<Vec<_>>(), [lines[1]]);
    let none: String = q!(con, "CLIENT", "LIST", "TYPE", "pubsub");
    assert_eq!(none, "");
    assert_eq!(
        err(con, &["CLIENT", "LIST", "ID", "x"]),
        "ERR Invalid client ID"
    );
    assert_eq!(
        err(con, &["CLIENT", "SETINFO", "colour", "x"]),
        "ERR Unrecognized option 'colour'"
    );
    assert!(err(con, &["CLIENT", "KILL", "ID", "1"]).contains("not supported"));
    let ok: String = q!(other, "QUIT");
    assert_eq!(ok, "OK");
    // Its record leaves the list when the connection ends.
    let mut left = false;
    for _ in 0..100 {
        let list: String = q!(con, "CLIENT", "LIST");
        if list.lines().count() == 1 {
            left = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(left, "the closed connection is still listed");
    // RESET: back to RESP2, no name.
    let v: Value = q!(con, "RESET");
    assert_eq!(v, Value::SimpleString("RESET".into()));
    let v: Value = q!(con, "CF.EXISTS", "x", "y");
    assert_eq!(v, Value::Int(0));
    let v: Value = q!(con, "CLIENT", "GETNAME");
    assert_eq!(v, Value::Nil);
    let ok: String = q!(con, "QUIT");
    assert_eq!(ok, "OK");
}

#[test]
fn password() {
    let dir = TempDir::new("auth");
    let server = Server::start(dir.path(), &["--requirepass", "s3cret"]);
    let client = redis::Client::open(server.url()).unwrap();
    let con = &mut client.get_connection().unwrap();
    assert_eq!(
        err(con, &["CF.ADD", "f", "x"]),
        "NOAUTH Authentication required."
    );
    assert_eq!(
        err(con, &["AUTH", "wrong"]),
        "WRONGPASS invalid username-password pair or user is disabled."
    );
    assert!(err(con, &["HELLO", "3"]).starts_with("NOAUTH"));
    let ok: String = q!(con, "AUTH", "s3cret");
    assert_eq!(ok, "OK");
    let added: i64 = q!(con, "CF.ADD", "f", "x");
    assert_eq!(added, 1);
    // The client's own AUTH, from the URL, in RESP3 (HELLO 3 AUTH ...).
    let url = format!("redis://:s3cret@127.0.0.1:{}/?protocol=resp3", server.port);
    let con = &mut redis::Client::open(url).unwrap().get_connection().unwrap();
    let v: Value = q!(con, "CF.EXISTS", "f", "x");
    assert_eq!(v, Value::Boolean(true));
    let dir2 = TempDir::new("noauth");
    let open = Server::start(dir2.path(), &[]);
    let con = &mut open.connect();
    assert!(err(con, &["AUTH", "x"]).starts_with("ERR AUTH <password> called without any password"));
    // Without a password the default user takes any, as in Redis: clients
    // configured with a user and password still connect; no other user exists.
    let ok: String = q!(con, "AUTH", "default", "anything");
    assert_eq!(ok, "OK");
    assert!(err(con, &["AUTH", "admin", "x"]).starts_with("WRONGPASS"));
    let v: Value = q!(con, "HELLO", "3", "AUTH", "default", "anything");
    assert!(matches!(v, Value::Map(_)), "{v:?}");
    let url = format!("redis://default:anything@127.0.0.1:{}/", open.port);
    let con = &mut redis::Client::open(url).unwrap().get_connection().unwrap();
    let added: i64 = q!(con, "CF.ADD", "f", "x");
    assert_eq!(added, 1);
    // With one, only the default user and that password.
    let con = &mut server.connect();
    assert!(err(con, &["AUTH", "admin", "s3cret"]).starts_with("WRONGPASS"));
    let ok: String = q!(con, "AUTH", "default", "s3cret");
    assert_eq!(ok, "OK");
    // RESET forgets the authentication.
    let _: String = q!(con, "RESET");
    assert_eq!(
        err(con, &["CF.ADD", "f", "x"]),
        "NOAUTH Authentication required."
    );
    // HELLO's AUTH checks the password like AUTH does.
    let con = &mut server.connect();
    assert!(err(con, &["HELLO", "3", "AUTH", "default", "wrong"]).starts_with("WRONGPASS"));
    assert_eq!(
        err(con, &["CF.ADD", "f", "x"]),
        "NOAUTH Authentication required."
    );
}

#[test]
fn memory_limit() {
    let dir = TempDir::new("maxmemory");
    let server = Server::start(dir.path(), &["--maxmemory", "4mb"]);
    let con = &mut server.connect();
    let e = err(con, &["CF.RESERVE", "huge", "100000000000"]);
    assert!(
        e.starts_with("ERR Insufficient memory to create filter"),
        "{e}"
    );
    let e = err(
        con,
        &["CF.INSERT", "huge", "CAPACITY", "100000000", "ITEMS", "x"],
    );
    assert!(
        e.starts_with("ERR Insufficient memory to create filter"),
        "{e}"
    );
    let ok: String = q!(con, "CF.RESERVE", "fits", "1000000");
    assert_eq!(ok, "OK");
    let e = err(con, &["CF.RESERVE", "second", "1000000"]);
    assert!(
        e.starts_with("ERR Insufficient memory"),
        "the limit counts all filters: {e}"
    );
    let _: i64 = q!(con, "DEL", "fits");
    let ok: String = q!(con, "CF.RESERVE", "second", "1000000");
    assert_eq!(ok, "OK", "a deleted filter frees its share");
    // A dump whose first chunk announces more than the limit leaves.
    let huge = (1u64 << 40).to_le_bytes();
    let e = cmd("CF.LOADCHUNK")
        .arg("dump")
        .arg(8)
        .arg(&huge[..])
        .query::<Value>(con)
        .unwrap_err();
    assert!(error_text(&e).starts_with("ERR Insufficient memory"), "{e}");
    let e = err(con, &["CF.RESERVE", "neg", "-5"]);
    assert_eq!(e, "Capacity must be at least (BucketSize * 2)");
    // Names count against the limit too: small filters under names of 256
    // KiB stop at the limit (uncounted, forty would fit).
    let ok: String = q!(con, "FLUSHALL");
    assert_eq!(ok, "OK");
    let (mut made, mut refused) = (0, String::new());
    for i in 0..40 {
        let name = format!("{i}:{}", "n".repeat(262_144));
        let added = if i % 2 == 0 {
            cmd("CF.RESERVE").arg(&name).arg(100).query::<Value>(con)
        } else {
            cmd("CF.ADD").arg(&name).arg("x").query::<Value>(con)
        };
        match added {
            Ok(_) => made += 1,
            Err(e) => {
                refused = error_text(&e);
                break;
            }
        }
    }
    assert!(
        (12..=16).contains(&made),
        "{made} names of 256 KiB under 4 MiB"
    );
    assert!(refused.starts_with("ERR Insufficient memory"), "{refused}");
    let used: String = q!(con, "INFO", "memory");
    let used: usize = used
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(used >= made * 262144 && used <= 4 << 20, "{used}");
}

#[test]
fn growth_counts_against_the_memory_limit() {
    let dir = TempDir::new("growth");
    let server = Server::start(dir.path(), &["--maxmemory", "1mb"]);
    let con = &mut server.connect();
    let ok: String = q!(con, "CF.RESERVE", "g", "1000");
    assert_eq!(ok, "OK");
    // Batches of distinct items until the limit refuses one: a growable
    // filter grows past its size at creation, and its growth is charged.
    let mut added = 0u64;
    let refused = loop {
        assert!(added < 4_000_000, "no refusal after {added} items");
        let mut c = cmd("CF.INSERT");
        c.arg("g").arg("ITEMS");
        for i in added..added + 1000 {
            c.arg(format!("item{i}"));
        }
        match c.query::<Vec<i64>>(con) {
            Ok(results) => {
                assert_eq!(results.len(), 1000);
                let ok = results.iter().take_while(|&&r| r == 1).count() as u64;
                added += ok;
                if ok < 1000 {
                    assert!(results[ok as usize..].iter().all(|&r| r == -1));
                    break "an item";
                }
            }
            Err(e) => {
                assert!(error_text(&e).starts_with("OOM "), "{e}");
                break "the command";
            }
        }
    };
    assert!(
        added > 100_000,
        "refused ({refused}) after only {added} items"
    );
    let size = info_field(con, "g", "Size");
    assert!(
        size <= 4 << 20,
        "{size} bytes after {added} items: one growth past 1 MiB at most"
    );
    let e = err(con, &["CF.ADD", "g", "one more"]);
    assert_eq!(e, "OOM command not allowed when used memory > 'maxmemory'.");
    let e = err(con, &["CF.INSERT", "g", "ITEMS", "one more"]);
    assert_eq!(e, "OOM command not allowed when used memory > 'maxmemory'.");
    // What was acknowledged is there; lookups and deletes go on.
    let mut c = cmd("CF.MEXISTS");
    c.arg("g");
    for i in (0..added).step_by(97) {
        c.arg(format!("item{i}"));
    }
    let found: Vec<i64> = c.query(con).unwrap();
    assert!(found.iter().all(|&f| f == 1));
    let deleted: i64 = q!(con, "CF.DEL", "g", "item0");
    assert_eq!(deleted, 1);
    // Deleting the filter frees all it was charged, growth included.
    let _: i64 = q!(con, "DEL", "g");
    let ok: String = q!(con, "CF.RESERVE", "again", "100000");
    assert_eq!(ok, "OK");
    let added: i64 = q!(con, "CF.ADD", "g", "item");
    assert_eq!(added, 1);
}

#[test]
fn dumps_being_handed_out_count_against_the_memory_limit() {
    let dir = TempDir::new("dump-memory");
    let server = Server::start(dir.path(), &["--maxmemory", "4mb"]);
    let con = &mut server.connect();
    let ok: String = q!(con, "CF.RESERVE", "f", "1000000", "EXPANSION", "0");
    assert_eq!(ok, "OK");
    let size = info_field(con, "f", "Size") as usize;
    assert!((1 << 20..3 << 20).contains(&size), "{size}");
    // Each connection's dump holds a copy of the filter until it is read
    // to its end: as many as fit beside the filter under the limit.
    let fit = (4 << 20) / size - 1;
    let mut cons: Vec<Connection> = (0..=fit).map(|_| server.connect()).collect();
    let mut first = Vec::new();
    for (i, c) in cons.iter_mut().enumerate() {
        let started = cmd("CF.SCANDUMP")
            .arg("f")
            .arg(0)
            .query::<(i64, Vec<u8>)>(c);
        match started {
            Ok((next, chunk)) => {
                assert!(i < fit, "dump {i} of a {size}-byte filter fit");
                assert!(next > 0 && !chunk.is_empty());
                first.push((next, chunk));
            }
            Err(e) => {
                assert_eq!(i, fit, "{e}");
                assert!(
                    error_text(&e).starts_with("ERR Insufficient memory to dump filter"),
                    "{e}"
                );
            }
        }
    }
    assert_eq!(first.len(), fit);
    // The first connection reads its dump to the end: its copy is let go,
    // and another connection's dump fits.
    let (mut next, _) = first[0].clone();
    while next != 0 {
        let (n, _): (i64, Option<Vec<u8>>) = q!(&mut cons[0], "CF.SCANDUMP", "f", next.to_string());
        next = n;
    }
    let (next, _): (i64, Vec<u8>) = q!(&mut cons[fit], "CF.SCANDUMP", "f", "0");
    assert!(next > 0);
    // A connection that closes mid-dump lets its copy go too.
    drop(cons.remove(1));
    let fitted = soon(100, || {
        cmd("CF.SCANDUMP")
            .arg("f")
            .arg(0)
            .query::<(i64, Vec<u8>)>(con)
            .is_ok()
    });
    assert!(fitted, "a closed connection's dump still held");
}

/// Whether `attempt` succeeds within `tries` tries 10 ms apart: for what a
/// closing connection gives back once the server has seen it close.
fn soon(tries: usize, mut attempt: impl FnMut() -> bool) -> bool {
    (0..tries).any(|_| {
        attempt() || {
            std::thread::sleep(std::time::Duration::from_millis(10));
            false
        }
    })
}

#[test]
fn loads_being_received_count_against_the_memory_limit() {
    let dir = TempDir::new("load-memory");
    let server = Server::start(dir.path(), &["--maxmemory", "4mb"]);
    let con = &mut server.connect();
    // A load whose first chunk announces 3 MB holds them until it ends.
    let announced = (3_000_000u64).to_le_bytes();
    let ok: String = cmd("CF.LOADCHUNK")
        .arg("incoming")
        .arg(8)
        .arg(&announced[..])
        .query(con)
        .unwrap();
    assert_eq!(ok, "OK");
    let e = err(con, &["CF.RESERVE", "f", "1000000"]);
    assert!(e.starts_with("ERR Insufficient memory"), "{e}");
    // FLUSHALL drops the loads under way with the filters.
    let ok: String = q!(con, "FLUSHALL");
    assert_eq!(ok, "OK");
    let ok: String = q!(con, "CF.RESERVE", "f", "1000000");
    assert_eq!(ok, "OK");
    let e = cmd("CF.LOADCHUNK")
        .arg("incoming")
        .arg(16)
        .arg(&[0u8; 8][..])
        .query::<Value>(con)
        .unwrap_err();
    assert_eq!(error_text(&e), "ERR not found");
    // A load whose connection closes is dropped with it, and its charge.
    let ok: String = q!(con, "FLUSHALL");
    assert_eq!(ok, "OK");
    {
        let other = &mut server.connect();
        let ok: String = cmd("CF.LOADCHUNK")
            .arg("left")
            .arg(8)
            .arg(&announced[..])
            .query(other)
            .unwrap();
        assert_eq!(ok, "OK");
        let e = err(con, &["CF.RESERVE", "f", "1000000"]);
        assert!(e.starts_with("ERR Insufficient memory"), "{e}");
    }
    let fitted = soon(200, || {
        cmd("CF.RESERVE")
            .arg("f")
            .arg(1_000_000)
            .query::<String>(con)
            .is_ok()
    });
    assert!(fitted, "a closed connection's load still held");
}

/// `--maxclients N`: the connection past N is told so and closed.
#[test]
fn maxclients_refuses_the_connection_past_the_limit() {
    use std::io::{Read, Write};
    let dir = TempDir::new("maxclients");
    let server = Server::start(dir.path(), &["--maxclients", "2"]);
    let (mut a, mut b) = (server.raw(), server.raw());
    for s in [&mut a, &mut b] {
        s.write_all(b"PING\r\n").unwrap();
        let mut pong = [0u8; 7];
        s.read_exact(&mut pong).unwrap();
        assert_eq!(&pong, b"+PONG\r\n");
    }
    let mut c = server.raw();
    let mut refused = String::new();
    c.read_to_string(&mut refused).unwrap();
    assert_eq!(refused, "-ERR max number of clients reached\r\n");
}
