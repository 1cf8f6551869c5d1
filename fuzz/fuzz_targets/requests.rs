//! Any bytes a client can send, through the server's request loop as a
//! connection runs it: parse one request at the front of the buffer, run it,
//! go on with the rest; a protocol error ends the input, as it closes a
//! connection. Nothing panics or hangs (libFuzzer's timeout), every parse
//! either moves forward within the buffer or asks for more than it has, and
//! every request but `SAVE` and `SHUTDOWN` gets its reply at once.
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
use cuckoo_server::frame::{parse, Args, Parsed};
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

fuzz_target!(|data: &[u8]| {
    let shared = shared();
    shared.db.clear();
    shared.loads.lock().unwrap().clear();
    let mut session = Session::new(1, true);
    let mut spans = Vec::new();
    let mut out = Vec::new();
    // Inline requests are unescaped in place, as in a connection's buffer.
    let data = &mut data.to_vec();
    let mut at = 0;
    while at < data.len() {
        let rest = &mut data[at..];
        match parse(rest, &shared.config.limits, &mut spans) {
            Parsed::Request(len) => {
                assert!(len > 0 && len <= rest.len(), "a request of {len} bytes");
                assert!(spans.iter().all(|s| s.start <= s.end && s.end <= len));
                if !spans.is_empty() {
                    let action = execute(shared, &mut session, Args::new(rest, &spans), &mut out);
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
            }
            Parsed::Incomplete { need } => {
                assert!(
                    need > rest.len(),
                    "incomplete, yet it has the {need} bytes it needs"
                );
                break;
            }
            Parsed::Error(_) => break,
        }
    }
});
