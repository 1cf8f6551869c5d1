//! Starting the server as a child process, and talking to it.

#![allow(dead_code)] // each test file uses a part

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A directory of its own, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "cuckoo-server-{name}-{}-{nanos:x}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running server, killed (SIGKILL) when dropped.
pub struct Server {
    pub child: Child,
    pub port: u16,
    /// Its stdout lines after the `ready` line.
    pub lines: Receiver<String>,
    /// What it has written to stderr so far.
    errors: Arc<Mutex<String>>,
}

pub const EXE: &str = env!("CARGO_BIN_EXE_cuckoo-server");

impl Server {
    /// Starts a server on a free port, saving in `dir`, with `args` after
    /// the defaults (`--save ""` unless `args` say otherwise).
    pub fn start(dir: &Path, args: &[&str]) -> Server {
        Server::try_start(dir, args).unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn try_start(dir: &Path, args: &[&str]) -> Result<Server, String> {
        let mut command = Command::new(EXE);
        command.args(["--port", "0", "--dir"]).arg(dir);
        if !args.contains(&"--save") {
            command.args(["--save", ""]);
        }
        let mut child = command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {EXE}: {e}"))?;
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let errors = Arc::new(Mutex::new(String::new()));
        let gathered = Arc::clone(&errors);
        let stderr_done = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut text = gathered.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(addr) = line.strip_prefix("ready to accept connections on ") {
                        let port = addr.rsplit(':').next().unwrap().parse().unwrap();
                        return Ok(Server {
                            child,
                            port,
                            lines,
                            errors,
                        });
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    let status = child.wait().map_err(|e| e.to_string())?;
                    let _ = stderr_done.join();
                    let text = errors.lock().unwrap().clone();
                    return Err(format!(
                        "the server did not start: {status}; stderr: {text}"
                    ));
                }
            }
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A RESP2 connection.
    pub fn connect(&self) -> redis::Connection {
        let client = redis::Client::open(self.url()).unwrap();
        let con = client
            .get_connection_with_timeout(Duration::from_secs(10))
            .unwrap();
        con.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        con
    }

    /// A RESP3 connection (the client sends `HELLO 3`).
    pub fn connect3(&self) -> redis::Connection {
        let client = redis::Client::open(format!("{}?protocol=resp3", self.url())).unwrap();
        let con = client
            .get_connection_with_timeout(Duration::from_secs(10))
            .unwrap();
        con.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        con
    }

    /// A raw socket.
    pub fn raw(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    /// Kills it with SIGKILL and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// What it has written to stderr so far.
    pub fn stderr(&self) -> String {
        self.errors.lock().unwrap().clone()
    }

    /// Waits up to `limit` for a line of its stderr that holds `needle`;
    /// that line, or none.
    pub fn stderr_line(&self, needle: &str, limit: Duration) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            let text = self.stderr();
            if let Some(line) = text.lines().find(|l| l.contains(needle)) {
                return Some(line.to_string());
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits for it to exit by itself; its status.
    pub fn wait(&mut self, limit: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends `request` on `s` and reads until `expected_len` bytes came or the
/// connection closed; what came.
pub fn exchange(s: &mut TcpStream, request: &[u8], expected_len: usize) -> Vec<u8> {
    s.write_all(request).unwrap();
    read_n(s, expected_len)
}

pub fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    while got.len() < n {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => got.extend_from_slice(&buf[..k]),
            Err(e) => panic!("read: {e} after {:?}", String::from_utf8_lossy(&got)),
        }
    }
    got
}

/// Whether the server closed `s` (a read returns end of stream).
pub fn closed(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(s.read(&mut buf), Ok(0) | Err(_))
}

/// The error text of a failed query, as the server wrote it (code and detail).
pub fn error_text(e: &redis::RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_string(),
        _ => e.to_string(),
    }
}
