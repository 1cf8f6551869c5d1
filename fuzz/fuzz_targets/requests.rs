//! Any bytes a client can send, through the server's request loop as a
//! connection runs it: the bytes arrive in pieces (their size set by the
//! input's last byte); parse one request at the front of what has arrived,
//! run it, go on with the rest, and parse again once as many bytes are there
//! as the parser asked for; a protocol error ends the input, as it closes a
//! connection. Nothing panics or hangs (libFuzzer's timeout), every parse
//! either moves forward within the buffer or asks for more than it has, a
//! parse that went on from where the pieces before left it finds what a
//! fresh parse of the same bytes finds, and every request but `SAVE` and
//! `SHUTDOWN` gets its reply at once.
//!
//! One server state serves every input (built once, as a server starts);
//! each input starts from an empty database and a fresh session. `SAVE` and
//! `SHUTDOWN`, which a connection hands to a blocking thread, are not run;
//! `BGSAVE` is, on its own thread, into a scratch directory.

#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use cuckoo_server::cmd::{execute, Action, Session, Shared};
use cuckoo_server::config::Config;
use cuckoo_server::db::Db;
use cuckoo_server::frame::{Args, Parsed, Parser};
use cuckoo_server::persist::Store;
use libfuzzer_sys::fuzz_target;

/// A server's shared state over a scratch directory, with limits small
/// enough that inputs reach them: 16 MiB of filters, 64 KiB arguments.
fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cuckoo-fuzz-requests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        let args: Vec<String> = [
            "--dir",
            dir.to_str().expect("a UTF-8 path"),
            "--maxmemory",
            "16mb",
            "--proto-max-bulk-len",
            "64kb",
            "--save",
            "",
        ]
        .map(String::from)
        .to_vec();
        let config = Config::from_args(&args).expect("valid options");
        let db = Arc::new(Db::new(config.maxmemory));
        let (store, _) = Store::open(config.path(), Arc::clone(&db)).expect("the store opens");
        Shared::new(db, Arc::new(store), config, Instant::now())
    })
}

/// What a fresh parser makes of `bytes`: the outcome, and the bytes of the
/// request's arguments (inline ones unescaped).
fn fresh(bytes: &[u8], shared: &Shared) -> (Parsed, Vec<Vec<u8>>) {
    let mut bytes = bytes.to_vec();
    let mut parser = Parser::new();
    let parsed = parser.parse(&mut bytes, &shared.config.limits);
    let args = parser
        .spans()
        .iter()
        .map(|s| bytes[s.clone()].to_vec())
        .collect();
    (parsed, args)
}

fuzz_target!(|data: &[u8]| {
    let shared = shared();
    shared.db.clear();
    shared.loads.lock().unwrap().clear();
    let mut session = Session::new(1, true);
    let mut parser = Parser::new();
    let mut out = Vec::new();
    let step = data.last().map_or(1, |&b| usize::from(b % 16) + 1);
    // The bytes as they arrived, before inline requests are unescaped in
    // place, as in a connection's buffer.
    let sent = data;
    let data = &mut data.to_vec();
    // What has arrived; where the unparsed bytes start; how many the parser
    // needs before it can go on.
    let (mut arrived, mut at, mut need) = (0, 0, 1);
    loop {
        if arrived - at < need {
            if arrived == data.len() {
                // All is here, and the parser waits for more: so would a
                // fresh one.
                if at < arrived {
                    let (parsed, _) = fresh(&sent[at..arrived], shared);
                    assert!(matches!(parsed, Parsed::Incomplete { .. }), "{parsed:?}");
                }
                break;
            }
            arrived = data.len().min(arrived + step);
            continue;
        }
        let rest = &mut data[at..arrived];
        let parsed = parser.parse(rest, &shared.config.limits);
        if !matches!(parsed, Parsed::Incomplete { .. }) {
            let args: Vec<Vec<u8>> = parser
                .spans()
                .iter()
                .map(|s| rest[s.clone()].to_vec())
                .collect();
            let (fresh_parsed, fresh_args) = fresh(&sent[at..arrived], shared);
            assert!(
                parsed == fresh_parsed && args == fresh_args,
                "resumed: {parsed:?} {args:?}; fresh: {fresh_parsed:?} {fresh_args:?}"
            );
        }
        match parsed {
            Parsed::Request(len) => {
                assert!(len > 0 && len <= rest.len(), "a request of {len} bytes");
                let spans = parser.spans();
                assert!(spans.iter().all(|s| s.start <= s.end && s.end <= len));
                if !spans.is_empty() {
                    let action = execute(shared, &mut session, Args::new(rest, spans), &mut out);
                    // `SAVE` and `SHUTDOWN` are answered by the connection,
                    // after the disk; every other request here.
                    let later = matches!(action, Action::Save | Action::Shutdown { .. });
                    assert!(later || !out.is_empty(), "every request gets a reply");
                    if action == Action::Close {
                        break;
                    }
                }
                out.clear();
                at += len;
                need = 1;
            }
            Parsed::Incomplete { need: more } => {
                assert!(
                    more > rest.len(),
                    "incomplete, yet it has the {more} bytes it needs"
                );
                need = more;
            }
            Parsed::Error(_) => break,
        }
    }
});
