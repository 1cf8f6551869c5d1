//! What clients send on connect and around their commands: `PING`, `HELLO`,
//! `AUTH`, `CLIENT`, `SELECT`.

use super::{bad_subcommand, int, is, Session, Shared};
use crate::frame::{Args, Reply};

/// The Redis version the server says it speaks the protocol of: clients
/// read it to choose what to send.
pub const REDIS_VERSION: &str = "7.4.0";

/// `PING [message]`.
pub fn ping(args: Args<'_>, reply: &mut Reply<'_>) {
    match args.len() {
        1 => reply.simple("PONG"),
        2 => reply.bulk(args.get(1)),
        _ => reply.error("ERR wrong number of arguments for 'ping' command"),
    }
}

/// Checks a user and password as Redis's ACL does with only its `default`
/// user: without `--requirepass` that user takes any password, with it only
/// that one; no other user exists.
fn check_password(shared: &Shared, user: &[u8], password: &[u8]) -> Result<(), &'static str> {
    match &shared.config.requirepass {
        _ if user != b"default" => Err(WRONGPASS),
        Some(wanted) if wanted.as_bytes() != password => Err(WRONGPASS),
        _ => Ok(()),
    }
}

/// Redis's words for a refused user or password.
const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// `AUTH [username] password`.
pub fn auth(shared: &Shared, session: &mut Session, args: Args<'_>, reply: &mut Reply<'_>) {
    let (user, password) = match args.len() {
        // A password alone with none configured is refused, as Redis
        // refuses it, to tell a misconfigured client so.
        2 if shared.config.requirepass.is_none() => {
            return reply.error(
                "ERR AUTH <password> called without any password configured for the default \
                 user. Are you sure your configuration is correct?",
            )
        }
        2 => (&b"default"[..], args.get(1)),
        3 => (args.get(1), args.get(2)),
        _ => return reply.error("ERR syntax error"),
    };
    match check_password(shared, user, password) {
        Ok(()) => {
            session.authenticated = true;
            reply.ok();
        }
        Err(e) => reply.error(e),
    }
}

/// `HELLO [protover [AUTH username password] [SETNAME name]]`.
pub fn hello(shared: &Shared, session: &mut Session, args: Args<'_>, reply: &mut Reply<'_>) {
    let mut resp3 = session.resp3;
    let mut i = 1;
    if args.len() > 1 {
        match int(args.get(1)) {
            Some(2) => resp3 = false,
            Some(3) => resp3 = true,
            Some(_) => return reply.error("NOPROTO unsupported protocol version"),
            None => return reply.error("ERR Protocol version is not an integer or out of range"),
        }
        i = 2;
    }
    let mut name = None;
    while i < args.len() {
        if is(args.get(i), "AUTH") && i + 2 < args.len() {
            if let Err(e) = check_password(shared, args.get(i + 1), args.get(i + 2)) {
                return reply.error(e);
            }
            session.authenticated = true;
            i += 3;
        } else if is(args.get(i), "SETNAME") && i + 1 < args.len() {
            name = Some(args.get(i + 1).to_vec());
            i += 2;
        } else {
            return reply.error(&format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(args.get(i))
            ));
        }
    }
    if !session.authenticated {
        return reply.error(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and \
             select the RESP protocol version at the same time",
        );
    }
    if let Some(name) = name {
        // Checked after AUTH and before anything changes, as Redis does: a
        // refused name leaves the protocol as it was.
        if !plain(&name) {
            return reply.error(NAME_ERROR);
        }
        session.name = (!name.is_empty()).then_some(name);
    }
    session.resp3 = resp3;
    reply.set_resp3(resp3);
    reply.map(7);
    reply.bulk(b"server");
    reply.bulk(b"redis");
    reply.bulk(b"version");
    reply.bulk(REDIS_VERSION.as_bytes());
    reply.bulk(b"proto");
    reply.integer(if resp3 { 3 } else { 2 });
    reply.bulk(b"id");
    reply.integer(session.id as i64);
    reply.bulk(b"mode");
    reply.bulk(b"standalone");
    reply.bulk(b"role");
    reply.bulk(b"master");
    reply.bulk(b"modules");
    reply.array(0);
}

/// `CLIENT SETNAME|GETNAME|SETINFO|ID|INFO|LIST`: what clients send on
/// connect, and what tools ask of the connections.
pub fn client(shared: &Shared, session: &mut Session, args: Args<'_>, reply: &mut Reply<'_>) {
    let sub = args.get(1);
    if is(sub, "SETNAME") && args.len() == 3 {
        let name = args.get(2);
        if !plain(name) {
            return reply.error(NAME_ERROR);
        }
        session.name = (!name.is_empty()).then(|| name.to_vec());
        session.republish(shared);
        reply.ok();
    } else if is(sub, "GETNAME") && args.len() == 2 {
        match &session.name {
            Some(name) => reply.bulk(name),
            None => reply.null(),
        }
    } else if is(sub, "ID") && args.len() == 2 {
        reply.integer(session.id as i64);
    } else if is(sub, "SETINFO") && args.len() == 4 {
        let value = args.get(3);
        if !plain(value) {
            return reply.error(&format!(
                "ERR {} cannot contain spaces, newlines or special characters.",
                String::from_utf8_lossy(args.get(2)).to_ascii_lowercase()
            ));
        }
        let value = (!value.is_empty()).then(|| value.to_vec());
        if is(args.get(2), "LIB-NAME") {
            session.lib[0] = value;
        } else if is(args.get(2), "LIB-VER") {
            session.lib[1] = value;
        } else {
            return reply.error(&format!(
                "ERR Unrecognized option '{}'",
                String::from_utf8_lossy(args.get(2))
            ));
        }
        session.republish(shared);
        reply.ok();
    } else if (is(sub, "NO-EVICT") || is(sub, "NO-TOUCH") || is(sub, "REPLY")) && args.len() == 3 {
        reply.ok();
    } else if is(sub, "INFO") && args.len() == 2 {
        // Its own line: the record is published anew at every change.
        match &session.client {
            Some(client) => reply.bulk(client.line().as_bytes()),
            None => reply.bulk(format!("id={}\n", session.id).as_bytes()),
        }
    } else if is(sub, "LIST") {
        list(shared, args, reply);
    } else if is(sub, "KILL") {
        reply.error("ERR CLIENT KILL is not supported: a client ends its own connection (QUIT)");
    } else {
        let known = [
            "setname", "getname", "id", "setinfo", "no-evict", "no-touch", "reply", "info",
        ];
        bad_subcommand(reply, "client", &known, sub);
    }
}

/// Redis's words for a name [`plain`] refuses.
const NAME_ERROR: &str = "ERR Client names cannot contain spaces, newlines or special characters.";

/// Whether `text` may be a client's name or library: printable ASCII, no
/// spaces (`CLIENT LIST` separates its fields by spaces).
fn plain(text: &[u8]) -> bool {
    text.iter().all(|&b| b > b' ' && b <= b'~')
}

/// `CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id...]`: a line per
/// connection, by id; every connection is of type `normal`.
fn list(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let mut ids: Option<Vec<u64>> = None;
    let mut normal = true;
    let mut i = 2;
    while i < args.len() {
        if is(args.get(i), "TYPE") && i + 1 < args.len() {
            let kind = args.get(i + 1);
            if !["normal", "master", "replica", "pubsub"]
                .iter()
                .any(|k| is(kind, k))
            {
                return reply.error(&format!(
                    "ERR Unknown client type '{}'",
                    String::from_utf8_lossy(kind)
                ));
            }
            normal = is(kind, "normal");
            i += 2;
        } else if is(args.get(i), "ID") && i + 1 < args.len() {
            let mut wanted = Vec::new();
            for arg in args.from(i + 1) {
                match int(arg) {
                    Some(id) if id > 0 => wanted.push(id as u64),
                    _ => return reply.error("ERR Invalid client ID"),
                }
            }
            ids = Some(wanted);
            i = args.len();
        } else {
            return reply.error("ERR syntax error");
        }
    }
    let mut text = String::new();
    for client in shared.connected.list() {
        if normal && ids.as_ref().is_none_or(|ids| ids.contains(&client.id)) {
            text.push_str(&client.line());
        }
    }
    reply.bulk(text.as_bytes());
}

/// `SELECT index`: there is one database, 0.
pub fn select(args: Args<'_>, reply: &mut Reply<'_>) {
    match int(args.get(1)) {
        Some(0) => reply.ok(),
        Some(_) => reply.error("ERR DB index is out of range"),
        None => reply.error("ERR value is not an integer or out of range"),
    }
}
