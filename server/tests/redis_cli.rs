//! `redis-cli` against the server, if it is installed (skipped otherwise).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{Server, TempDir};

fn redis_cli(port: u16, args: &[&str], stdin: &str) -> Option<String> {
    let mut child = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(stdin.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn redis_cli_reaches_the_server() {
    let dir = TempDir::new("redis-cli");
    let server = Server::start(dir.path(), &[]);
    let Some(out) = redis_cli(server.port, &["PING"], "") else {
        println!(
            "redis-cli is not installed: this test checks nothing (apt-get install redis-tools)"
        );
        return;
    };
    assert_eq!(out, "PONG\n");
    let out = redis_cli(
        server.port,
        &["CF.RESERVE", "f", "1000", "ERROR_RATE", "0.001"],
        "",
    )
    .unwrap();
    assert_eq!(out, "OK\n");
    // Commands on stdin, as a script pipes them.
    let out = redis_cli(
        server.port,
        &[],
        "CF.ADD f apple\nCF.EXISTS f apple\nCF.MEXISTS f apple pear\nCF.DEL nothing x\nTYPE f\n",
    )
    .unwrap();
    // (redis-cli prints an error in raw mode with an empty line after it.)
    assert_eq!(out, "1\n1\n1\n0\nNot found\n\nMBbloomCF\n");
    // RESP3, as `redis-cli -3` speaks it.
    let out = redis_cli(server.port, &["-3", "CF.EXISTS", "f", "apple"], "").unwrap();
    assert_eq!(out, "(true)\n");
    let out = redis_cli(server.port, &["--no-raw", "CF.INFO", "f"], "").unwrap();
    assert!(out.contains(") Number of items inserted\n"), "{out}");
    // Its key survey, which asks SCAN, TYPE and MEMORY USAGE of every key.
    let out = redis_cli(server.port, &["--memkeys"], "").unwrap();
    assert!(
        out.contains("Biggest MBbloomCF found '\"f\"' has ") && !out.contains("failed"),
        "{out}"
    );
}
