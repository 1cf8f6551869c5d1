//! Saves and restarts: a clean restart, SIGTERM (with saves scheduled, and
//! during a background save), stopping under writes, damaged and foreign
//! files, the lock, and SIGKILL in the middle of a load.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{error_text, Server, TempDir};
use redis::{cmd, Connection};

fn exists_all(con: &mut Connection, key: &str, items: impl Iterator<Item = String>) -> Vec<String> {
    let items: Vec<String> = items.collect();
    let mut missing = Vec::new();
    for chunk in items.chunks(1000) {
        let found: Vec<i64> = cmd("CF.MEXISTS").arg(key).arg(chunk).query(con).unwrap();
        missing.extend(
            chunk
                .iter()
                .zip(found)
                .filter(|(_, f)| *f != 1)
                .map(|(k, _)| k.clone()),
        );
    }
    missing
}

fn info(con: &mut Connection, key: &str) -> std::collections::HashMap<String, redis::Value> {
    let v: Vec<redis::Value> = cmd("CF.INFO").arg(key).query(con).unwrap();
    v.chunks(2)
        .map(|p| match &p[0] {
            redis::Value::SimpleString(s) => (s.clone(), p[1].clone()),
            other => panic!("{other:?}"),
        })
        // A decoded growable filter may size its side structures differently.
        .filter(|(name, _)| name != "Size")
        .collect()
}

#[test]
fn restart_from_a_save() {
    let dir = TempDir::new("restart");
    let mut server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    let _: () = cmd("CF.RESERVE")
        .arg("fixed")
        .arg(10_000)
        .arg("EXPANSION")
        .arg(0)
        .query(con)
        .unwrap();
    let _: () = cmd("CF.RESERVE").arg("grows").arg(100).query(con).unwrap();
    for i in 0..3000 {
        let _: i64 = cmd("CF.ADD")
            .arg("fixed")
            .arg(format!("f{i}"))
            .query(con)
            .unwrap();
        let _: i64 = cmd("CF.ADD")
            .arg("grows")
            .arg(format!("g{i}"))
            .query(con)
            .unwrap();
    }
    let _: i64 = cmd("CF.DEL").arg("fixed").arg("f0").query(con).unwrap();
    let before = (info(con, "fixed"), info(con, "grows"));
    let t0: i64 = cmd("LASTSAVE").query(con).unwrap();
    // SHUTDOWN SAVE saves, then the server exits.
    let _ = cmd("SHUTDOWN").arg("SAVE").query::<redis::Value>(con);
    assert!(server.wait(Duration::from_secs(20)).success());

    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    assert_eq!((info(con, "fixed"), info(con, "grows")), before);
    assert!(exists_all(con, "fixed", (1..3000).map(|i| format!("f{i}"))).is_empty());
    assert!(exists_all(con, "grows", (0..3000).map(|i| format!("g{i}"))).is_empty());
    let t1: i64 = cmd("LASTSAVE").query(con).unwrap();
    assert!(t1 >= t0);
    // SAVE and BGSAVE; a SAVE moves LASTSAVE on.
    std::thread::sleep(Duration::from_millis(1100));
    let ok: String = cmd("SAVE").query(con).unwrap();
    assert_eq!(ok, "OK");
    let t2: i64 = cmd("LASTSAVE").query(con).unwrap();
    assert!(t2 > t1, "LASTSAVE {t2} after a SAVE, {t1} before");
    let started: String = cmd("BGSAVE").query(con).unwrap();
    assert_eq!(started, "Background saving started");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text: String = cmd("INFO").arg("persistence").query(con).unwrap();
        if text.contains("rdb_bgsave_in_progress:0") && text.contains("rdb_saves:2") {
            break;
        }
        assert!(Instant::now() < deadline, "{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // FLUSHALL then a restart without a save: the file still has the filters.
    let _: () = cmd("FLUSHALL").query(con).unwrap();
    drop(server);
    let server = Server::start(dir.path(), &[]);
    let n: i64 = cmd("DBSIZE").query(&mut server.connect()).unwrap();
    assert_eq!(n, 2);
}

#[test]
fn sigterm_saves_when_saves_are_scheduled() {
    let dir = TempDir::new("sigterm");
    let server = Server::start(dir.path(), &["--save", "3600"]);
    let con = &mut server.connect();
    for i in 0..100 {
        let _: i64 = cmd("CF.ADD").arg("f").arg(i).query(con).unwrap();
    }
    let server = terminate_and_restart(server, dir.path());
    let con = &mut server.connect();
    assert!(exists_all(con, "f", (0..100).map(|i| i.to_string())).is_empty());
}

/// Clients add keys, unpipelined and pipelined, until the server stops under
/// them, by `SHUTDOWN SAVE` from another client or by SIGTERM: every key
/// whose `CF.ADD` was answered is found after the restart (the final save
/// runs while writes go on, so no reply may be sent once it begins).
#[test]
fn stopping_loses_no_acknowledged_write() {
    for by_signal in [false, true] {
        let dir = TempDir::new("stop-under-load");
        let mut server = Server::start(dir.path(), &["--save", "3600"]);
        let url = server.url();
        let acked = [AtomicUsize::new(0), AtomicUsize::new(0)];
        std::thread::scope(|scope| {
            for (t, acked) in acked.iter().enumerate() {
                let url = url.clone();
                scope.spawn(move || {
                    let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
                    let batch = [1, 16][t];
                    let mut next = 0;
                    loop {
                        let mut pipe = redis::pipe();
                        for i in next..next + batch {
                            pipe.cmd("CF.ADD").arg(format!("f{t}")).arg(i);
                        }
                        match pipe.query::<Vec<i64>>(&mut con) {
                            Ok(r) => {
                                assert!(r.iter().all(|&x| x == 1), "{r:?}");
                                next += batch;
                                acked.store(next, Ordering::SeqCst);
                            }
                            Err(_) => break, // stopped
                        }
                    }
                });
            }
            while acked.iter().any(|a| a.load(Ordering::SeqCst) < 5000) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if by_signal {
                terminate(&server);
            } else {
                let _ = cmd("SHUTDOWN")
                    .arg("SAVE")
                    .query::<redis::Value>(&mut server.connect());
            }
            assert!(server.wait(Duration::from_secs(20)).success());
        });
        let server = Server::start(dir.path(), &[]);
        let con = &mut server.connect();
        for (t, acked) in acked.iter().enumerate() {
            let n = acked.load(Ordering::SeqCst);
            let missing = exists_all(con, &format!("f{t}"), (0..n).map(|i| i.to_string()));
            assert!(
                missing.is_empty(),
                "stopped by {}: {} of {n} acknowledged keys missing",
                if by_signal {
                    "SIGTERM"
                } else {
                    "SHUTDOWN SAVE"
                },
                missing.len()
            );
        }
    }
}

/// Sends SIGTERM to `server`.
fn terminate(server: &Server) {
    let status = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(server.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Sends SIGTERM to `server`, waits for it to stop cleanly, and starts a new
/// server on the same directory.
fn terminate_and_restart(mut server: Server, dir: &std::path::Path) -> Server {
    terminate(&server);
    assert!(server.wait(Duration::from_secs(20)).success());
    Server::start(dir, &[])
}

/// A server stopped by SIGTERM while a `BGSAVE` runs lets the save end: the
/// file it leaves holds what was acknowledged before the `BGSAVE`.
#[test]
fn sigterm_lets_a_background_save_end() {
    let dir = TempDir::new("sigterm-bgsave");
    let server = Server::start(dir.path(), &["--save", ""]);
    let con = &mut server.connect();
    // About 100 MB of table, so that the save is still running when the
    // signal arrives.
    let _: String = cmd("CF.RESERVE")
        .arg("big")
        .arg(50_000_000)
        .arg("EXPANSION")
        .arg(0)
        .query(con)
        .unwrap();
    for i in 0..100 {
        let _: i64 = cmd("CF.ADD").arg("f").arg(i).query(con).unwrap();
    }
    let started: String = cmd("BGSAVE").query(con).unwrap();
    assert_eq!(started, "Background saving started");
    let server = terminate_and_restart(server, dir.path());
    let con = &mut server.connect();
    assert!(exists_all(con, "f", (0..100).map(|i| i.to_string())).is_empty());
    let kind: String = cmd("TYPE").arg("big").query(con).unwrap();
    assert_eq!(kind, "MBbloomCF");
}

#[test]
fn damaged_or_foreign_files_stop_the_start_untouched() {
    let dir = TempDir::new("damaged");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    for i in 0..100 {
        let _: i64 = cmd("CF.ADD").arg("f").arg(i).query(con).unwrap();
    }
    let _: String = cmd("SAVE").query(con).unwrap();
    drop(server);
    let file = dir.path().join("dump.cuckoo");
    let good = std::fs::read(&file).unwrap();
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x10;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"REDIS0011\xfa\x09redis-ver".to_vec(),
            "not a save file of this server",
        ),
        (good[..good.len() - 3].to_vec(), "truncated"),
        (
            [&good[..], b"\n"].concat(),
            "bytes follow the saved filters",
        ),
        (flipped, "damaged"),
        (Vec::new(), "truncated"),
    ];
    for (bytes, says) in cases {
        std::fs::write(&file, &bytes).unwrap();
        let err = Server::try_start(dir.path(), &[]).err().expect("refused");
        assert!(err.contains(says), "{says}: {err}");
        assert!(err.contains("exit status: 1"), "{err}");
        assert_eq!(std::fs::read(&file).unwrap(), bytes, "left as it was");
    }
    std::fs::write(&file, &good).unwrap();
    let server = Server::start(dir.path(), &[]);
    assert!(exists_all(&mut server.connect(), "f", (0..100).map(|i| i.to_string())).is_empty());
}

#[test]
fn a_second_server_on_the_same_file_is_refused() {
    let dir = TempDir::new("lock");
    let first = Server::start(dir.path(), &[]);
    let err = Server::try_start(dir.path(), &[]).err().expect("refused");
    assert!(err.contains("another server is using"), "{err}");
    drop(first);
    // Once the first is gone (even killed), the lock is free.
    let _second = Server::start(dir.path(), &[]);
}

/// Two clients add fresh keys, pipelined, while a third calls SAVE in a
/// loop (and the schedule saves every 50 ms besides); the server is killed
/// with SIGKILL in the middle. Every key whose CF.ADD was answered before
/// the last SAVE that returned OK was sent must be found after a restart.
#[test]
fn sigkill_in_the_middle_of_a_load_loses_no_saved_key() {
    let dir = TempDir::new("sigkill");
    let mut server = Server::start(dir.path(), &["--save", "0.05"]);
    let con = &mut server.connect();
    // A fixed filter that fills to about 85 %, and a growable one that grows
    // during the saves.
    let _: () = cmd("CF.RESERVE")
        .arg("fixed")
        .arg(300_000)
        .arg("EXPANSION")
        .arg(0)
        .query(con)
        .unwrap();
    let _: () = cmd("CF.RESERVE").arg("grows").arg(1000).query(con).unwrap();
    const KEYS: usize = 250_000;
    let acked = [AtomicUsize::new(0), AtomicUsize::new(0)];
    let stop = AtomicBool::new(false);
    let saved = std::sync::Mutex::new((0usize, [0usize; 2]));
    let port = server.port;
    let url = server.url();
    let start = Instant::now();
    std::thread::scope(|scope| {
        for (t, key) in ["fixed", "grows"].into_iter().enumerate() {
            let (acked, stop, url) = (&acked[t], &stop, url.clone());
            scope.spawn(move || {
                let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
                let mut next = 0;
                while !stop.load(Ordering::Relaxed) && next < KEYS {
                    let mut pipe = redis::pipe();
                    for i in next..(next + 64).min(KEYS) {
                        pipe.cmd("CF.ADD").arg(key).arg(format!("{key}-{i}"));
                    }
                    match pipe.query::<Vec<i64>>(&mut con) {
                        Ok(r) => {
                            assert!(r.iter().all(|&x| x == 1), "{r:?}");
                            next += r.len();
                            acked.store(next, Ordering::SeqCst);
                        }
                        Err(_) => break, // killed
                    }
                    // Paced, so that the load outlasts the kill on any machine.
                    std::thread::sleep(Duration::from_micros(300));
                }
            });
        }
        let (acked, stop, saved, url) = (&acked, &stop, &saved, url.clone());
        scope.spawn(move || {
            let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
            while !stop.load(Ordering::Relaxed) {
                let before = [
                    acked[0].load(Ordering::SeqCst),
                    acked[1].load(Ordering::SeqCst),
                ];
                match cmd("SAVE").query::<String>(&mut con) {
                    Ok(_) => {
                        let mut s = saved.lock().unwrap();
                        s.0 += 1;
                        s.1 = before;
                    }
                    Err(_) => break,
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        // Kill once a few saves have completed and the load is well under way.
        while start.elapsed() < Duration::from_secs(30) {
            let saves = saved.lock().unwrap().0;
            if saves >= 3 && start.elapsed() > Duration::from_millis(1500) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        server.kill();
        stop.store(true, Ordering::Relaxed);
    });
    let _ = port;
    let (saves, last) = *saved.lock().unwrap();
    assert!(saves >= 3, "only {saves} saves completed");
    assert!(last[0] > 0 && last[1] > 0, "{last:?}");
    let acked_at_kill = [
        acked[0].load(Ordering::SeqCst),
        acked[1].load(Ordering::SeqCst),
    ];
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    for (t, key) in ["fixed", "grows"].into_iter().enumerate() {
        let missing = exists_all(con, key, (0..last[t]).map(|i| format!("{key}-{i}")));
        assert!(
            missing.is_empty(),
            "{key}: {} of {} keys saved before the kill are missing, e.g. {:?}",
            missing.len(),
            last[t],
            &missing[..missing.len().min(5)]
        );
    }
    println!(
        "killed after {saves} SAVEs; {:?} keys acknowledged by the last, {acked_at_kill:?} by the kill",
        last
    );
    let e = cmd("CF.ADD")
        .arg("fixed")
        .arg("x")
        .arg("extra")
        .query::<i64>(con)
        .unwrap_err();
    assert!(error_text(&e).contains("wrong number of arguments"));
}

/// Makes every save into `dir` fail until [`let_saves_succeed`]: a
/// directory where the save file goes makes the rename over it fail (it
/// fails whoever runs the test, root included).
fn make_saves_fail(dir: &std::path::Path) {
    std::fs::create_dir(dir.join("dump.cuckoo")).unwrap();
}

fn let_saves_succeed(dir: &std::path::Path) {
    std::fs::remove_dir(dir.join("dump.cuckoo")).unwrap();
}

/// A signal whose save fails does not stop the server: it says why on
/// stderr and goes on serving; the next signal saves and stops.
#[test]
fn a_failed_save_on_a_signal_keeps_the_server_serving() {
    let dir = TempDir::new("sigterm-fails");
    let mut server = Server::start(dir.path(), &["--save", "3600"]);
    let con = &mut server.connect();
    for i in 0..100 {
        let _: i64 = cmd("CF.ADD").arg("f").arg(i).query(con).unwrap();
    }
    make_saves_fail(dir.path());
    terminate(&server);
    let logged = server.stderr_line("Is a directory", Duration::from_secs(20));
    assert!(
        server.running(),
        "the server stopped though its save failed; stderr: {}",
        server.stderr()
    );
    let line = logged.expect("the failed save is logged");
    assert!(line.starts_with("cuckoo-server: "), "{line}");
    for i in 100..200 {
        let added: i64 = cmd("CF.ADD").arg("f").arg(i).query(con).unwrap();
        assert_eq!(added, 1);
    }
    let_saves_succeed(dir.path());
    let server = terminate_and_restart(server, dir.path());
    let con = &mut server.connect();
    assert!(exists_all(con, "f", (0..200).map(|i| i.to_string())).is_empty());
}

/// A client adding keys `0, 1, ...` to one filter, one request at a time,
/// from [`Writer::run`] until [`Writer::stop`]: what it was answered, and
/// how often its connection ended under it.
#[derive(Default)]
struct Writer {
    /// Keys whose `CF.ADD` was answered: `0..acked`.
    acked: AtomicUsize,
    /// Connections that ended with an error (after each it connects again).
    errors: AtomicUsize,
    stop: AtomicBool,
}

impl Writer {
    fn run(&self, url: &str, key: &str) {
        let client = redis::Client::open(url).unwrap();
        let mut next = 0usize;
        'connect: while !self.stop.load(Ordering::SeqCst) {
            let Ok(mut con) = client.get_connection() else {
                // Refused while the server stops, or it is gone.
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            while !self.stop.load(Ordering::SeqCst) {
                match cmd("CF.ADD").arg(key).arg(next).query::<i64>(&mut con) {
                    Ok(1) => {
                        next += 1;
                        self.acked.store(next, Ordering::SeqCst);
                    }
                    Ok(other) => panic!("CF.ADD answered {other}"),
                    Err(_) => {
                        self.errors.fetch_add(1, Ordering::SeqCst);
                        continue 'connect;
                    }
                }
            }
        }
    }

    fn acked(&self) -> usize {
        self.acked.load(Ordering::SeqCst)
    }

    fn errors(&self) -> usize {
        self.errors.load(Ordering::SeqCst)
    }

    /// Waits until `n` keys were answered.
    fn wait_for(&self, n: usize) {
        while self.acked() < n {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// A server on a directory of its own (`args` its options) holding a
/// filter of about 100 MB, so that a save takes a while, and whose saves
/// fail until [`let_saves_succeed`].
fn large_server_whose_saves_fail(name: &str, args: &[&str]) -> (TempDir, Server) {
    let dir = TempDir::new(name);
    let server = Server::start(dir.path(), args);
    let _: String = cmd("CF.RESERVE")
        .arg("big")
        .arg(50_000_000)
        .arg("EXPANSION")
        .arg(0)
        .query(&mut server.connect())
        .unwrap();
    make_saves_fail(dir.path());
    (dir, server)
}

/// A `SHUTDOWN SAVE` whose save fails leaves the other clients connected:
/// one writing all the while gets every reply, none late of an error.
#[test]
fn a_failed_shutdown_disconnects_no_other_client() {
    let (_dir, mut server) = large_server_whose_saves_fail("shutdown-fails", &[]);
    let con = &mut server.connect();
    let url = server.url();
    let writer = Writer::default();
    std::thread::scope(|scope| {
        scope.spawn(|| writer.run(&url, "w"));
        writer.wait_for(100);
        let e = cmd("SHUTDOWN")
            .arg("SAVE")
            .query::<String>(con)
            .unwrap_err();
        assert_eq!(error_text(&e), "ERR Errors trying to SHUTDOWN. Check logs.");
        let after = writer.acked();
        while writer.acked() < after + 100 {
            assert!(writer.errors() == 0, "the writer was cut off");
            std::thread::sleep(Duration::from_millis(5));
        }
        writer.stop();
    });
    assert_eq!(writer.errors(), 0, "connections the failed SHUTDOWN closed");
    assert!(server.running());
    let n = writer.acked();
    assert!(exists_all(con, "w", (0..n).map(|i| i.to_string())).is_empty());
}

/// Two stops at once, one failing: a `SHUTDOWN SAVE` whose save fails, and
/// SIGTERM while it runs, whose save comes next and succeeds. The failed
/// stop's end does not let replies out while the other's save runs: every
/// write answered is found after the restart.
#[test]
fn a_failed_stop_does_not_release_another() {
    let (dir, mut server) = large_server_whose_saves_fail("overlapping-stops", &["--save", "3600"]);
    let url = server.url();
    let writer = Writer::default();
    let temporary = dir.path().join(".dump.cuckoo.saving");
    std::thread::scope(|scope| {
        scope.spawn(|| writer.run(&url, "w"));
        writer.wait_for(100);
        let shutdown = scope.spawn(|| {
            let mut con = redis::Client::open(url.as_str())
                .unwrap()
                .get_connection()
                .unwrap();
            cmd("SHUTDOWN").arg("SAVE").query::<String>(&mut con)
        });
        // The signal once the SHUTDOWN's save is writing.
        let deadline = Instant::now() + Duration::from_secs(20);
        while !temporary.exists() {
            assert!(Instant::now() < deadline, "the SHUTDOWN's save never began");
            std::thread::sleep(Duration::from_millis(1));
        }
        terminate(&server);
        let e = shutdown.join().unwrap().unwrap_err();
        assert_eq!(error_text(&e), "ERR Errors trying to SHUTDOWN. Check logs.");
        // The signal's save waits for the first; it can succeed now.
        let_saves_succeed(dir.path());
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut signalled_again = false;
        while server.running() {
            // Had the signal's save reached its rename first, it failed and
            // the server went on: signal again.
            if !signalled_again && server.stderr().contains("can't exit") {
                terminate(&server);
                signalled_again = true;
            }
            assert!(Instant::now() < deadline, "the server did not stop");
            std::thread::sleep(Duration::from_millis(10));
        }
        writer.stop();
    });
    assert!(server.wait(Duration::from_secs(1)).success());
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    let n = writer.acked();
    let missing = exists_all(con, "w", (0..n).map(|i| i.to_string()));
    assert!(
        missing.is_empty(),
        "{} of {n} acknowledged keys missing, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
}

/// `SAVE` and `SHUTDOWN` that fail say why on stderr; `SHUTDOWN SAVE FORCE`
/// stops even though its save fails.
#[test]
fn failed_saves_are_logged_and_force_stops_anyway() {
    let dir = TempDir::new("force");
    let mut server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    let _: i64 = cmd("CF.ADD").arg("f").arg(1).query(con).unwrap();
    make_saves_fail(dir.path());
    let e = cmd("SAVE").query::<String>(con).unwrap_err();
    assert!(error_text(&e).starts_with("ERR saving failed"), "{e}");
    let line = server.stderr_line("SAVE", Duration::from_secs(5));
    let line = line.unwrap_or_else(|| panic!("SAVE's failure not logged: {}", server.stderr()));
    assert!(
        line.starts_with("cuckoo-server: ") && line.contains("Is a directory"),
        "{line}"
    );
    let e = cmd("SHUTDOWN")
        .arg("SAVE")
        .query::<String>(con)
        .unwrap_err();
    assert_eq!(error_text(&e), "ERR Errors trying to SHUTDOWN. Check logs.");
    let line = server.stderr_line("SHUTDOWN", Duration::from_secs(5));
    let line = line.unwrap_or_else(|| panic!("SHUTDOWN's failure not logged: {}", server.stderr()));
    assert!(line.contains("Is a directory"), "{line}");
    assert!(server.running());
    let _ = cmd("SHUTDOWN")
        .arg("SAVE")
        .arg("FORCE")
        .query::<redis::Value>(con);
    assert!(server.wait(Duration::from_secs(20)).success());
    assert!(server.stderr().contains("FORCE"), "{}", server.stderr());
}

/// `--dbfilename` names a file in `--dir`: `.`, `..` and names with a `/`
/// are refused at start, and nothing is made outside the directory.
#[test]
fn a_dbfilename_outside_the_directory_is_refused() {
    let outer = TempDir::new("dbfilename");
    let dir = outer.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    for name in [".", "..", "a/b", "../x", ""] {
        let err = Server::try_start(&dir, &["--dbfilename", name])
            .err()
            .expect("refused");
        assert!(err.contains("--dbfilename"), "{name:?}: {err}");
        assert!(err.contains("exit status: 2"), "{name:?}: {err}");
        let made: Vec<_> = std::fs::read_dir(outer.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(made, ["d"], "{name:?}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{name:?}");
    }
}

/// A server whose directory is removed and made again under it, and a
/// second server started there, does not save over the second's file: its
/// saves fail, and say so.
#[test]
fn a_server_whose_lock_was_replaced_does_not_save() {
    let outer = TempDir::new("lock-replaced");
    let dir = outer.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let first = Server::start(&dir, &[]);
    let con = &mut first.connect();
    let _: i64 = cmd("CF.ADD").arg("first").arg(1).query(con).unwrap();
    let _: String = cmd("SAVE").query(con).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir(&dir).unwrap();
    let second = Server::start(&dir, &[]);
    let con2 = &mut second.connect();
    let _: i64 = cmd("CF.ADD").arg("second").arg(1).query(con2).unwrap();
    let _: String = cmd("SAVE").query(con2).unwrap();
    let e = cmd("SAVE").query::<String>(con).unwrap_err();
    assert!(
        error_text(&e).starts_with("ERR saving failed") && error_text(&e).contains("lock"),
        "{e}"
    );
    let started: String = cmd("BGSAVE").query(con).unwrap();
    assert_eq!(started, "Background saving started");
    let line = first.stderr_line("background save", Duration::from_secs(10));
    assert!(
        line.is_some_and(|l| l.contains("lock")),
        "{}",
        first.stderr()
    );
    let text: String = cmd("INFO").arg("persistence").query(con).unwrap();
    assert!(text.contains("rdb_last_bgsave_status:err"), "{text}");
    drop(second);
    drop(first);
    let server = Server::start(&dir, &[]);
    let con = &mut server.connect();
    let names: Vec<String> = cmd("KEYS").arg("*").query(con).unwrap();
    assert_eq!(names, ["second"]);
}
