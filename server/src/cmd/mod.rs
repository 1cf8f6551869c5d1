//! The commands, one module per family, and the table that dispatches them.
//!
//! [`execute`] runs one request to the end on the thread that parsed it
//! and writes its reply; only what must wait for the disk (`SAVE`,
//! `SHUTDOWN`) is handed back to the connection as an [`Action`], so that it
//! waits on a blocking thread and no other connection waits with it.

mod cf;
mod conn;
mod glob;
mod keys;
mod server;

use std::collections::HashMap;
use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::clients::{Client, Clients};
use crate::config::Config;
use crate::db::Db;
use crate::frame::{Args, Reply};
use crate::persist::Store;
pub(crate) use glob::glob;

pub use cf::abandon_loads;

/// What every connection shares.
pub struct Shared {
    /// The filters.
    pub db: Arc<Db>,
    /// The save file.
    pub store: Arc<Store>,
    /// The options the server started with.
    pub config: Config,
    /// When it started.
    pub started: Instant,
    /// Connections open now.
    pub clients: AtomicUsize,
    /// Connections accepted since start (and the source of client ids).
    pub connections: AtomicU64,
    /// The connections open now, for `CLIENT LIST`.
    pub connected: Clients,
    /// Dumps being loaded by `CF.LOADCHUNK`, by name. Only `CF.LOADCHUNK`
    /// takes this lock, and `FLUSHALL` and a closing connection, which drop
    /// loads ([`abandon_loads`]).
    pub loads: Mutex<HashMap<Vec<u8>, cf::Load>>,
    /// Notified when a client's `SHUTDOWN` (and its save) is done.
    pub shutdown: tokio::sync::Notify,
    /// The stops under way ([`Shared::begin_stop`]): how many are not yet
    /// decided, and [`COMMITTED`] once one has decided to stop. While it is
    /// not 0 no reply is sent, so that no write is acknowledged that the
    /// final save may miss.
    stopping: AtomicUsize,
    /// Changed whenever a stop is decided (cancelled or committed): what
    /// connections holding their replies wait on.
    stop_decided: tokio::sync::watch::Sender<u64>,
    /// `SCAN 0` calls (iterations started) on every connection: a
    /// connection's `SCAN` cache serves only while this is what it was when
    /// the cache's walk began.
    pub scans_started: AtomicU64,
}

impl Shared {
    /// The state of a server that started at `started`, with no connection
    /// yet and no dump being loaded.
    pub fn new(db: Arc<Db>, store: Arc<Store>, config: Config, started: Instant) -> Shared {
        Shared {
            db,
            store,
            config,
            started,
            clients: 0.into(),
            connections: 0.into(),
            connected: Clients::default(),
            loads: Mutex::new(HashMap::new()),
            shutdown: tokio::sync::Notify::new(),
            stopping: AtomicUsize::new(0),
            stop_decided: tokio::sync::watch::Sender::new(0),
            scans_started: 0.into(),
        }
    }

    /// Begins a stop; call it before the final save reads the filters. From
    /// here until the stop is decided ([`Stop::commit`], or the [`Stop`]
    /// dropped, which cancels it) and while any other stop is undecided,
    /// connections hold their replies; once one is committed, they send no
    /// more.
    ///
    /// A write whose reply a connection sends while the server keeps
    /// running and then stops is in the final save: the connection runs
    /// the write, then [`may_reply`]; if its fence comes first in the
    /// single order of SeqCst fences, the save's reads, which follow this
    /// fence, see the write; if this one comes first, its load sees the
    /// stop, and the reply waits until the stop is decided. Each stop is
    /// counted, so that one cancelled does not release another's hold.
    ///
    /// [`may_reply`]: Shared::may_reply
    pub fn begin_stop(&self) -> Stop<'_> {
        self.stopping.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        Stop {
            shared: self,
            decided: false,
        }
    }

    /// Whether a connection may send the replies of the requests it has
    /// run: at once while no stop is under way; while one is undecided,
    /// once every stop under way is cancelled (waiting, on no thread, for
    /// that); never once a stop is committed (see
    /// [`begin_stop`](Shared::begin_stop)).
    pub async fn may_reply(&self) -> bool {
        let mut decided = None;
        loop {
            fence(Ordering::SeqCst);
            match self.stopping.load(Ordering::Relaxed) {
                0 => return true,
                state if state & COMMITTED != 0 => return false,
                _ => {}
            }
            match &mut decided {
                // Watch first, then look again: a decision made after the
                // look wakes the wait below.
                None => decided = Some(self.stop_decided.subscribe()),
                Some(decided) => {
                    // The sender lives as long as `self`.
                    if decided.changed().await.is_err() {
                        return false;
                    }
                }
            }
        }
    }

    /// Wakes the connections holding their replies, to look again.
    fn stop_decided(&self) {
        self.stop_decided.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// The bit of [`Shared::stopping`] set once a stop is committed; the bits
/// below count the stops not yet decided.
const COMMITTED: usize = 1 << (usize::BITS - 1);

/// A stop under way ([`Shared::begin_stop`]): committed by
/// [`commit`](Stop::commit), cancelled when dropped undecided (its save
/// failed, and the server goes on, as Redis does).
pub struct Stop<'a> {
    shared: &'a Shared,
    decided: bool,
}

impl Stop<'_> {
    /// Decides to stop: no connection sends a reply from here on.
    pub fn commit(mut self) {
        self.decided = true;
        self.shared.stopping.fetch_or(COMMITTED, Ordering::SeqCst);
        self.shared.stop_decided();
    }
}

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        if !self.decided {
            self.shared.stopping.fetch_sub(1, Ordering::SeqCst);
            self.shared.stop_decided();
        }
    }
}

/// One connection's state.
pub struct Session {
    /// Its id, for `CLIENT ID`.
    pub id: u64,
    /// Whether it speaks RESP3 (after `HELLO 3`).
    pub resp3: bool,
    /// Whether it may run commands (always, without `--requirepass`).
    pub authenticated: bool,
    /// `CLIENT SETNAME`'s name.
    pub name: Option<Vec<u8>>,
    /// `CLIENT SETINFO LIB-NAME` and `LIB-VER`.
    pub lib: [Option<Vec<u8>>; 2],
    /// Its record in [`Shared::connected`] (none in tests that run
    /// commands without a connection).
    pub client: Option<Arc<Client>>,
    /// The snapshot `CF.SCANDUMP` is handing out: the filter's name and bytes.
    pub dump: Option<cf::Dump>,
    /// The names its next `SCAN` calls come from, if its last one left some.
    pub scan: Option<keys::ScanCache>,
}

impl Session {
    /// A new connection's state: RESP2, no name, no dump under way.
    pub fn new(id: u64, authenticated: bool) -> Session {
        Session {
            id,
            resp3: false,
            authenticated,
            name: None,
            lib: [None, None],
            client: None,
            dump: None,
            scan: None,
        }
    }

    /// Publishes its name, library and protocol in its record, if it has
    /// one: after a command that may have changed them.
    pub fn republish(&mut self, shared: &Shared) {
        if let Some(old) = &self.client {
            let [lib_name, lib_ver] = self.lib.clone();
            let new = Arc::new(old.with(self.name.clone(), lib_name, lib_ver, self.resp3));
            shared.connected.publish(Arc::clone(&new));
            self.client = Some(new);
        }
    }
}

/// What the connection must do after a command's reply.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Go on reading requests.
    Continue,
    /// Send what is written, then close.
    Close,
    /// Save on a blocking thread, then reply `+OK` (or the error).
    Save,
    /// Save (if `save`) and stop the server.
    Shutdown {
        /// Whether to save first.
        save: bool,
        /// Whether to stop even if the save fails (`FORCE`).
        force: bool,
    },
}

/// How a command is named and checked before it runs: Redis's arity (a
/// positive count is exact, a negative one a minimum, both counting the
/// name), and its flags, for `COMMAND`.
pub struct Spec {
    /// Lower-case name.
    pub name: &'static str,
    /// Redis's arity.
    pub arity: i64,
    /// Redis's flags: `write`, `readonly`, `fast`, ...
    pub flags: &'static [&'static str],
    /// Index of the first key argument (0: none).
    pub first_key: i64,
    /// Index of the last key argument (-1: the last argument).
    pub last_key: i64,
}

macro_rules! spec {
    ($name:literal, $arity:expr, [$($flag:literal),*], $first:expr, $last:expr) => {
        Spec { name: $name, arity: $arity, flags: &[$($flag),*], first_key: $first, last_key: $last }
    };
}

/// Every command the server knows.
pub static COMMANDS: &[Spec] = &[
    spec!("cf.reserve", -3, ["write", "denyoom"], 1, 1),
    spec!("cf.add", 3, ["write", "denyoom", "fast"], 1, 1),
    spec!("cf.addnx", 3, ["write", "denyoom", "fast"], 1, 1),
    spec!("cf.insert", -4, ["write", "denyoom"], 1, 1),
    spec!("cf.insertnx", -4, ["write", "denyoom"], 1, 1),
    spec!("cf.exists", 3, ["readonly", "fast"], 1, 1),
    spec!("cf.mexists", -3, ["readonly", "fast"], 1, 1),
    spec!("cf.count", 3, ["readonly", "fast"], 1, 1),
    spec!("cf.del", 3, ["write", "fast"], 1, 1),
    spec!("cf.compact", 2, ["write"], 1, 1),
    spec!("cf.info", 2, ["readonly", "fast"], 1, 1),
    spec!("cf.debug", 2, ["readonly", "fast"], 1, 1),
    spec!("cf.scandump", 3, ["readonly"], 1, 1),
    spec!("cf.loadchunk", 4, ["write", "denyoom"], 1, 1),
    spec!("del", -2, ["write"], 1, -1),
    spec!("unlink", -2, ["write", "fast"], 1, -1),
    spec!("exists", -2, ["readonly", "fast"], 1, -1),
    spec!("touch", -2, ["readonly", "fast"], 1, -1),
    spec!("ttl", 2, ["readonly", "fast"], 1, 1),
    spec!("pttl", 2, ["readonly", "fast"], 1, 1),
    spec!("expiretime", 2, ["readonly", "fast"], 1, 1),
    spec!("pexpiretime", 2, ["readonly", "fast"], 1, 1),
    spec!("persist", 2, ["write", "fast"], 1, 1),
    spec!("expire", -3, ["write", "fast"], 1, 1),
    spec!("pexpire", -3, ["write", "fast"], 1, 1),
    spec!("expireat", -3, ["write", "fast"], 1, 1),
    spec!("pexpireat", -3, ["write", "fast"], 1, 1),
    spec!("randomkey", 1, ["readonly"], 0, 0),
    spec!("type", 2, ["readonly", "fast"], 1, 1),
    spec!("dbsize", 1, ["readonly", "fast"], 0, 0),
    spec!("keys", 2, ["readonly"], 0, 0),
    spec!("scan", -2, ["readonly"], 0, 0),
    spec!("flushall", -1, ["write"], 0, 0),
    spec!("flushdb", -1, ["write"], 0, 0),
    spec!("ping", -1, ["fast", "stale"], 0, 0),
    spec!("echo", 2, ["fast"], 0, 0),
    spec!(
        "hello",
        -1,
        ["noscript", "loading", "stale", "fast", "no_auth"],
        0,
        0
    ),
    spec!(
        "auth",
        -2,
        ["noscript", "loading", "stale", "fast", "no_auth"],
        0,
        0
    ),
    spec!("client", -2, ["loading", "stale"], 0, 0),
    spec!("select", 2, ["loading", "stale", "fast"], 0, 0),
    spec!("quit", -1, ["fast", "no_auth"], 0, 0),
    spec!("reset", 1, ["fast", "no_auth"], 0, 0),
    spec!("command", -1, ["loading", "stale"], 0, 0),
    spec!("config", -2, ["admin", "loading", "stale"], 0, 0),
    spec!("info", -1, ["loading", "stale"], 0, 0),
    spec!("memory", -2, [], 0, 0),
    spec!("time", 1, ["loading", "stale", "fast"], 0, 0),
    spec!("role", 1, ["noscript", "loading", "stale", "fast"], 0, 0),
    spec!("save", 1, ["admin", "noscript"], 0, 0),
    spec!("bgsave", -1, ["admin", "noscript"], 0, 0),
    spec!("lastsave", 1, ["fast", "loading", "stale"], 0, 0),
    spec!(
        "shutdown",
        -1,
        ["admin", "noscript", "loading", "stale"],
        0,
        0
    ),
];

/// The command's name in lower case, if it is short enough to be one.
fn lower(name: &[u8], buf: &mut [u8; 16]) -> Option<usize> {
    if name.len() > buf.len() {
        return None;
    }
    for (d, s) in buf.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    Some(name.len())
}

/// Whether `argc` arguments (the name included) fit `arity`.
fn arity_ok(arity: i64, argc: usize) -> bool {
    if arity >= 0 {
        argc as i64 == arity
    } else {
        argc as i64 >= -arity
    }
}

/// Runs one request, writing its reply to `out`.
pub fn execute(
    shared: &Shared,
    session: &mut Session,
    args: Args<'_>,
    out: &mut Vec<u8>,
) -> Action {
    let mut reply = Reply::new(out, session.resp3);
    let mut name_buf = [0u8; 16];
    let name = args.get(0);
    let Some(spec) = lower(name, &mut name_buf).and_then(|n| {
        COMMANDS
            .iter()
            .find(|c| c.name.as_bytes() == &name_buf[..n])
    }) else {
        unknown(&mut reply, args);
        return Action::Continue;
    };
    if !session.authenticated && !spec.flags.contains(&"no_auth") {
        reply.error("NOAUTH Authentication required.");
        return Action::Continue;
    }
    if !arity_ok(spec.arity, args.len()) {
        reply.error(&format!(
            "ERR wrong number of arguments for '{}' command",
            spec.name
        ));
        return Action::Continue;
    }
    match spec.name {
        "cf.reserve" => cf::reserve(shared, args, &mut reply),
        "cf.add" => cf::add(shared, args, &mut reply, false),
        "cf.addnx" => cf::add(shared, args, &mut reply, true),
        "cf.insert" => cf::insert(shared, args, &mut reply, false),
        "cf.insertnx" => cf::insert(shared, args, &mut reply, true),
        "cf.exists" => cf::exists(shared, args, &mut reply),
        "cf.mexists" => cf::mexists(shared, args, &mut reply),
        "cf.count" => cf::count(shared, args, &mut reply),
        "cf.del" => cf::del(shared, args, &mut reply),
        "cf.compact" => cf::compact(shared, args, &mut reply),
        "cf.info" => cf::info(shared, args, &mut reply),
        "cf.debug" => cf::debug(shared, args, &mut reply),
        "cf.scandump" => cf::scandump(shared, session, args, &mut reply),
        "cf.loadchunk" => cf::loadchunk(shared, session.id, args, &mut reply),
        "del" | "unlink" => keys::del(shared, args, &mut reply),
        "exists" | "touch" => keys::exists(shared, args, &mut reply),
        "ttl" | "pttl" | "expiretime" | "pexpiretime" => keys::ttl(shared, args, &mut reply),
        "persist" => keys::persist(&mut reply),
        "expire" | "pexpire" | "expireat" | "pexpireat" => keys::expire(args, &mut reply),
        "randomkey" => keys::randomkey(shared, &mut reply),
        "type" => keys::type_of(shared, args, &mut reply),
        "dbsize" => reply.integer(shared.db.len() as i64),
        "keys" => keys::keys(shared, args, &mut reply),
        "scan" => keys::scan(shared, session, args, &mut reply),
        "flushall" | "flushdb" => keys::flush(shared, session, args, &mut reply),
        "ping" => conn::ping(args, &mut reply),
        "echo" => reply.bulk(args.get(1)),
        "hello" => {
            conn::hello(shared, session, args, &mut reply);
            session.republish(shared);
        }
        "auth" => conn::auth(shared, session, args, &mut reply),
        "client" => conn::client(shared, session, args, &mut reply),
        "select" => conn::select(args, &mut reply),
        "quit" => {
            reply.ok();
            return Action::Close;
        }
        "reset" => {
            session.resp3 = false;
            session.name = None;
            session.dump = None;
            session.scan = None;
            session.authenticated = shared.config.requirepass.is_none();
            session.republish(shared);
            reply.set_resp3(false);
            reply.simple("RESET");
        }
        "command" => server::command(args, &mut reply),
        "config" => server::config(shared, args, &mut reply),
        "info" => server::info(shared, args, &mut reply),
        "memory" => server::memory(shared, args, &mut reply),
        "time" => server::time(&mut reply),
        "role" => server::role(&mut reply),
        "save" => return Action::Save,
        "bgsave" => server::bgsave(shared, &mut reply),
        "lastsave" => reply.integer(shared.store.last_save()),
        "shutdown" => return server::shutdown(shared, args, &mut reply),
        _ => unknown(&mut reply, args),
    }
    Action::Continue
}

/// Redis's answer to a command it does not know: each argument quoted and
/// followed by a space, while what is shown stays under 128 bytes.
fn unknown(reply: &mut Reply<'_>, args: Args<'_>) {
    let mut rest = String::new();
    for arg in args.from(1) {
        if rest.len() >= 128 {
            break;
        }
        rest += &format!("'{}' ", shown(arg, 128 - rest.len()));
    }
    reply.error(&format!(
        "ERR unknown command '{}', with args beginning with: {rest}",
        shown(args.get(0), 128),
    ));
}

/// At most `room` bytes of a client's argument, as an error message shows it.
fn shown(arg: &[u8], room: usize) -> String {
    String::from_utf8_lossy(&arg[..arg.len().min(room)]).into_owned()
}

/// Redis's answer to a subcommand of `command` it does not run: a known one
/// (in `known`, lowercase) with the wrong number of arguments, or one it
/// does not know.
pub(crate) fn bad_subcommand(reply: &mut Reply<'_>, command: &str, known: &[&str], sub: &[u8]) {
    let sub_text = shown(sub, 128);
    if known.iter().any(|k| is(sub, k)) {
        reply.error(&format!(
            "ERR wrong number of arguments for '{command}|{}' command",
            sub_text.to_ascii_lowercase()
        ));
    } else {
        reply.error(&format!(
            "ERR unknown subcommand '{sub_text}'. Try {} HELP.",
            command.to_ascii_uppercase()
        ));
    }
}

/// Runs `f`, a long piece of work, where it keeps no other connection
/// waiting: on tokio's multi-thread runtime (the server's), inside
/// `block_in_place`, which first hands this worker's other tasks to another
/// thread; elsewhere (a current-thread runtime, or none, as in the fuzz
/// target, which calls `execute` directly) in place.
pub(crate) fn off_worker<R>(f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// Whether `arg` is `word`, ignoring ASCII case.
pub(crate) fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

/// `arg` as a decimal integer, as Redis reads one.
pub(crate) fn int(arg: &[u8]) -> Option<i64> {
    std::str::from_utf8(arg).ok()?.parse().ok()
}
