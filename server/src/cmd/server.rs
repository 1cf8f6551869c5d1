//! The server's own commands: `COMMAND`, `CONFIG GET`, `INFO`, `MEMORY
//! USAGE`, `TIME`, `ROLE`, and the persistence commands `BGSAVE`, `SHUTDOWN`
//! (`SAVE` and `LASTSAVE` are answered by the dispatcher and the
//! connection).

use std::fmt::Write;
use std::sync::atomic::Ordering;

use super::{bad_subcommand, glob, is, Action, Shared, COMMANDS};
use crate::db::name_cost;
use crate::frame::{Args, Reply};

/// `COMMAND`, `COMMAND COUNT`, `COMMAND INFO name...`, `COMMAND DOCS`:
/// enough for `redis-cli` and for clients that read the command table.
pub fn command(args: Args<'_>, reply: &mut Reply<'_>) {
    if args.len() == 1 {
        reply.array(COMMANDS.len());
        for spec in COMMANDS {
            describe(spec, reply);
        }
        return;
    }
    let sub = args.get(1);
    if is(sub, "COUNT") && args.len() == 2 {
        reply.integer(COMMANDS.len() as i64);
    } else if is(sub, "INFO") {
        reply.array(args.len() - 2);
        for name in args.from(2) {
            match COMMANDS.iter().find(|c| is(name, c.name)) {
                Some(spec) => describe(spec, reply),
                None => reply.null(),
            }
        }
    } else if is(sub, "DOCS") {
        // No documentation: `redis-cli` falls back on its own hints.
        reply.map(0);
    } else if is(sub, "LIST") {
        reply.array(COMMANDS.len());
        for spec in COMMANDS {
            reply.bulk(spec.name.as_bytes());
        }
    } else {
        bad_subcommand(reply, "command", &["count", "info", "docs", "list"], sub);
    }
}

/// One command as `COMMAND INFO` describes it (Redis 7's ten fields).
fn describe(spec: &super::Spec, reply: &mut Reply<'_>) {
    reply.array(10);
    reply.bulk(spec.name.as_bytes());
    reply.integer(spec.arity);
    reply.array(spec.flags.len());
    for flag in spec.flags {
        reply.simple(flag);
    }
    reply.integer(spec.first_key);
    reply.integer(spec.last_key);
    reply.integer(i64::from(spec.first_key != 0));
    reply.array(0); // ACL categories
    reply.array(0); // tips
    reply.array(0); // key specifications
    reply.array(0); // subcommands
}

/// The parameters `CONFIG GET` knows, with their values.
fn parameters(shared: &Shared) -> Vec<(&'static str, String)> {
    let c = &shared.config;
    vec![
        ("port", c.port.to_string()),
        ("bind", c.bind.join(" ")),
        ("requirepass", c.requirepass.clone().unwrap_or_default()),
        ("dir", c.dir.display().to_string()),
        ("dbfilename", c.dbfilename.clone()),
        (
            "save",
            c.save
                .map_or(String::new(), |d| format!("{} 1", d.as_secs().max(1))),
        ),
        ("appendonly", "no".into()),
        ("databases", "1".into()),
        ("maxmemory", shared.db.max_memory().to_string()),
        ("maxclients", c.maxclients.to_string()),
        ("proto-max-bulk-len", c.limits.max_bulk.to_string()),
        ("max-multibulk-len", c.limits.max_args.to_string()),
        (
            "client-query-buffer-limit",
            c.limits.max_request.to_string(),
        ),
        ("cf-error-rate", c.error_rate.to_string()),
    ]
}

/// `CONFIG GET pattern...`; `CONFIG SET` is refused, `CONFIG RESETSTAT` accepted.
pub fn config(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let sub = args.get(1);
    if is(sub, "GET") && args.len() >= 3 {
        let found: Vec<(&str, String)> = parameters(shared)
            .into_iter()
            .filter(|(name, _)| {
                args.from(2)
                    .any(|p| glob(&p.to_ascii_lowercase(), name.as_bytes()))
            })
            .collect();
        reply.map(found.len());
        for (name, value) in found {
            reply.bulk(name.as_bytes());
            reply.bulk(value.as_bytes());
        }
    } else if is(sub, "RESETSTAT") && args.len() == 2 {
        reply.ok();
    } else if is(sub, "SET") {
        reply.error("ERR CONFIG SET is not supported: restart the server with the option");
    } else {
        bad_subcommand(reply, "config", &["get", "resetstat"], sub);
    }
}

/// `INFO [section...]`: the fields of Redis's sections that apply.
pub fn info(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let wanted = |section: &str| {
        args.len() == 1
            || args
                .from(1)
                .any(|a| is(a, section) || is(a, "all") || is(a, "everything") || is(a, "default"))
    };
    let mut text = String::new();
    let c = &shared.config;
    if wanted("server") {
        let _ = write!(
            text,
            "# Server\r\nredis_version:{}\r\ncuckoo_server_version:{}\r\nredis_mode:standalone\r\n\
             os:{}\r\narch_bits:{}\r\nmultiplexing_api:tokio\r\nprocess_id:{}\r\ntcp_port:{}\r\n\
             uptime_in_seconds:{}\r\nexecutable:{}\r\n\r\n",
            super::conn::REDIS_VERSION,
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            usize::BITS,
            std::process::id(),
            c.port,
            shared.started.elapsed().as_secs(),
            std::env::current_exe().map_or(String::new(), |p| p.display().to_string()),
        );
    }
    if wanted("clients") {
        let _ = write!(
            text,
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:0\r\n\r\n",
            shared.clients.load(Ordering::Relaxed),
            c.maxclients
        );
    }
    if wanted("memory") {
        let used = shared.db.memory_usage();
        let _ = write!(
            text,
            "# Memory\r\nused_memory:{used}\r\nused_memory_human:{}\r\n\
             used_memory_dataset:{used}\r\nmaxmemory:{}\r\n\r\n",
            human(used),
            shared.db.max_memory()
        );
    }
    if wanted("persistence") {
        let store = &shared.store;
        let _ = write!(
            text,
            "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:{}\r\n\
             rdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\n\
             rdb_saves:{}\r\naof_enabled:0\r\n\r\n",
            u8::from(shared.db.is_dirty()),
            u8::from(store.background_running()),
            store.last_save(),
            if store.last_failed() { "err" } else { "ok" },
            store.saves(),
        );
    }
    if wanted("stats") {
        let _ = write!(
            text,
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\r\n",
            shared.connections.load(Ordering::Relaxed),
            shared.connected.commands()
        );
    }
    if wanted("replication") {
        text.push_str("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n");
    }
    if wanted("cluster") {
        text.push_str("# Cluster\r\ncluster_enabled:0\r\n\r\n");
    }
    if wanted("keyspace") {
        text.push_str("# Keyspace\r\n");
        let keys = shared.db.len();
        if keys > 0 {
            let _ = write!(text, "db0:keys={keys},expires=0,avg_ttl=0\r\n");
        }
    }
    // Sections end with an empty line; the reply ends with the last field's.
    let end = text.trim_end().len();
    text.truncate(end);
    text.push_str("\r\n");
    reply.bulk(text.as_bytes());
}

/// `MEMORY USAGE key [SAMPLES count]`: the bytes a filter takes (its tables,
/// its name and its entry), or nil where there is none; `SAMPLES` is
/// accepted and has nothing to sample. `MEMORY HELP` lists that.
pub fn memory(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) {
    let sub = args.get(1);
    if is(sub, "USAGE") && (args.len() == 3 || args.len() == 5) {
        if args.len() == 5 && (!is(args.get(3), "SAMPLES") || super::int(args.get(4)).is_none()) {
            return reply.error("ERR syntax error");
        }
        let key = args.get(2);
        match shared.db.with(key, |e| e.filter.memory_usage()) {
            Some(bytes) => reply.integer((bytes + name_cost(key)) as i64),
            None => reply.null(),
        }
    } else if is(sub, "HELP") && args.len() == 2 {
        let lines = [
            "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value.",
            "HELP",
            "    Print this help.",
        ];
        reply.array(lines.len());
        for line in lines {
            reply.simple(line);
        }
    } else {
        bad_subcommand(reply, "memory", &["usage", "help"], sub);
    }
}

/// `TIME`: the seconds and microseconds since the Unix epoch.
pub fn time(reply: &mut Reply<'_>) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    reply.array(2);
    reply.bulk(now.as_secs().to_string().as_bytes());
    reply.bulk(now.subsec_micros().to_string().as_bytes());
}

/// `ROLE`: a primary with no replicas, at offset 0.
pub fn role(reply: &mut Reply<'_>) {
    reply.array(3);
    reply.bulk(b"master");
    reply.integer(0);
    reply.array(0);
}

/// Bytes as Redis's `used_memory_human` writes them: `1.50M`.
fn human(bytes: usize) -> String {
    let units = ["B", "K", "M", "G", "T"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes}B")
    } else {
        format!("{value:.2}{}", units[unit])
    }
}

/// `BGSAVE [SCHEDULE]`.
pub fn bgsave(shared: &Shared, reply: &mut Reply<'_>) {
    if shared.store.background_save() {
        reply.simple("Background saving started");
    } else {
        reply.error("ERR Background save already in progress");
    }
}

/// `SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE]`: saves (when saves are
/// scheduled, or with `SAVE`), then stops; a save that fails leaves the
/// server running unless `FORCE` is given. `NOW` is accepted (there are no
/// replicas to wait for).
pub fn shutdown(shared: &Shared, args: Args<'_>, reply: &mut Reply<'_>) -> Action {
    let mut save = shared.config.save.is_some();
    let mut force = false;
    for arg in args.from(1) {
        if is(arg, "NOSAVE") {
            save = false;
        } else if is(arg, "SAVE") {
            save = true;
        } else if is(arg, "FORCE") {
            force = true;
        } else if !is(arg, "NOW") {
            reply.error("ERR syntax error");
            return Action::Continue;
        }
    }
    Action::Shutdown { save, force }
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn sizes_read_as_redis_writes_them() {
        assert_eq!(human(0), "0B");
        assert_eq!(human(1023), "1023B");
        assert_eq!(human(1536), "1.50K");
        assert_eq!(human(3 << 20), "3.00M");
        assert_eq!(human(5 << 30), "5.00G");
    }
}
