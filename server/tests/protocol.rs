//! The wire: pipelining, inline requests, malformed frames, limits, and
//! clients that send garbage.

mod common;

use std::io::Write;
use std::time::Duration;

use common::{closed, exchange, read_n, Server, TempDir};

#[test]
fn pipelined_requests_are_answered_in_order() {
    let dir = TempDir::new("pipeline");
    let server = Server::start(dir.path(), &[]);
    let mut s = server.raw();
    let mut request = Vec::new();
    let mut expected = Vec::new();
    for i in 0..2000 {
        let item = format!("item{i}");
        request.extend_from_slice(
            format!(
                "*3\r\n$6\r\nCF.ADD\r\n$1\r\nf\r\n${}\r\n{item}\r\n",
                item.len()
            )
            .as_bytes(),
        );
        expected.extend_from_slice(b":1\r\n");
        request.extend_from_slice(
            format!("*2\r\n$4\r\nECHO\r\n${}\r\n{item}\r\n", item.len()).as_bytes(),
        );
        expected.extend_from_slice(format!("${}\r\n{item}\r\n", item.len()).as_bytes());
        request.extend_from_slice(
            format!(
                "*3\r\n$9\r\nCF.EXISTS\r\n$1\r\nf\r\n${}\r\n{item}\r\n",
                item.len()
            )
            .as_bytes(),
        );
        expected.extend_from_slice(b":1\r\n");
    }
    // Sent in pieces that cut requests anywhere.
    for piece in request.chunks(777) {
        s.write_all(piece).unwrap();
    }
    let got = read_n(&mut s, expected.len());
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&expected)
    );

    // Inline requests, as typed by hand, and empty requests (ignored).
    let got = exchange(
        &mut s,
        b"PING\r\n*0\r\n  ECHO   hello \nCF.EXISTS f item7\r\n",
        22,
    );
    assert_eq!(got, b"+PONG\r\n$5\r\nhello\r\n:1\r\n");
    // Quoted words, as redis-cli's users and Redis's docs write them.
    let got = exchange(
        &mut s,
        b"CF.ADD f \"two words\"\r\nCF.EXISTS f 'two words'\r\nECHO \"a\\x41\\n\"\r\n",
        17,
    );
    assert_eq!(got, b":1\r\n:1\r\n$3\r\naA\n\r\n");
}

#[test]
fn large_requests_sent_in_tiny_pieces_get_their_replies() {
    let dir = TempDir::new("pieces");
    let server = Server::start(dir.path(), &[]);
    let mut s = server.raw();
    s.set_nodelay(true).unwrap();
    let got = exchange(&mut s, b"CF.ADD f a\r\nCF.ADD f b\r\n", 8);
    assert_eq!(got, b":1\r\n:1\r\n");
    // One request of 30,000 arguments after a short one, an argument of
    // 100 kB, and a long inline request, in pieces of 3 bytes (so that each
    // header and argument arrives over several reads).
    let n = 30_000;
    let mut request =
        format!("PING\r\n*{}\r\n$10\r\nCF.MEXISTS\r\n$1\r\nf\r\n", n + 2).into_bytes();
    let mut expected = format!("+PONG\r\n*{n}\r\n").into_bytes();
    for i in 0..n {
        let (item, found) = [("a", 1), ("zz", 0), ("b", 1)][i % 3];
        request.extend_from_slice(format!("${}\r\n{item}\r\n", item.len()).as_bytes());
        expected.extend_from_slice(format!(":{found}\r\n").as_bytes());
    }
    let long = "x".repeat(100_000);
    request.extend_from_slice(format!("*2\r\n$4\r\nECHO\r\n$100000\r\n{long}\r\n").as_bytes());
    expected.extend_from_slice(format!("$100000\r\n{long}\r\n").as_bytes());
    let words = "y".repeat(60_000);
    request.extend_from_slice(format!("ECHO {words}\r\n").as_bytes());
    expected.extend_from_slice(format!("$60000\r\n{words}\r\n").as_bytes());
    // Replies are read as they come, so that neither side waits on a full
    // socket buffer.
    let mut reader = s.try_clone().unwrap();
    let len = expected.len();
    let replies = std::thread::spawn(move || read_n(&mut reader, len));
    for (i, piece) in request.chunks(3).enumerate() {
        s.write_all(piece).unwrap();
        // Now and then a pause, so that the server reads the request so far.
        if i % 2000 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let got = replies.join().unwrap();
    assert!(
        got == expected,
        "{} bytes of reply, {} expected",
        got.len(),
        expected.len()
    );
    // The connection goes on as usual.
    assert_eq!(exchange(&mut s, b"PING\r\n", 7), b"+PONG\r\n");
}

#[test]
fn malformed_frames_close_the_connection_with_an_error() {
    let dir = TempDir::new("malformed");
    let server = Server::start(
        dir.path(),
        &[
            "--proto-max-bulk-len",
            "1kb",
            "--max-multibulk-len",
            "16",
            "--client-query-buffer-limit",
            "1500",
        ],
    );
    // Arguments within their limit, but a request over its own.
    let over = [
        &b"*3\r\n$4\r\nECHO\r\n$1000\r\n"[..],
        &[b'a'; 1000],
        b"\r\n$1000\r\n",
    ]
    .concat();
    let cases: &[(&[u8], &str)] = &[
        (
            &over,
            "-ERR Protocol error: request over the query buffer limit\r\n",
        ),
        (
            b"*1\r\n$x\r\n",
            "-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*1\r\n$-5\r\n",
            "-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*x\r\n",
            "-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*2\r\n:1\r\n",
            "-ERR Protocol error: expected '$', got ':'\r\n",
        ),
        (
            b"*1\r\n$2\r\nabcd\r\n",
            "-ERR Protocol error: expected '\\r\\n' after a bulk string\r\n",
        ),
        // Over the limits: refused from the header alone, before any body.
        (
            b"*2\r\n$4\r\nECHO\r\n$1025\r\n",
            "-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*17\r\n",
            "-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*1\r\n$99999999999999999999\r\n",
            "-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"ECHO \"a\"b\r\n",
            "-ERR Protocol error: unbalanced quotes in request\r\n",
        ),
    ];
    for (request, error) in cases {
        let mut s = server.raw();
        // A good request first: its reply comes before the error.
        let got = exchange(
            &mut s,
            &[&b"PING\r\n"[..], request].concat(),
            7 + error.len(),
        );
        assert_eq!(
            String::from_utf8_lossy(&got),
            format!("+PONG\r\n{error}"),
            "{request:?}"
        );
        assert!(closed(&mut s), "{request:?}: closed after the error");
    }
    // A header line that never ends.
    let mut s = server.raw();
    let mut line = b"*1\r\n$".to_vec();
    line.extend(std::iter::repeat_n(b'1', 70_000));
    s.write_all(&line).unwrap();
    let got = read_n(&mut s, 10);
    assert!(
        got.starts_with(b"-ERR Protocol error"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    // The limits leave the largest allowed requests alone.
    let mut s = server.raw();
    let big = vec![b'z'; 1024];
    let mut request = b"*2\r\n$4\r\nECHO\r\n$1024\r\n".to_vec();
    request.extend_from_slice(&big);
    request.extend_from_slice(b"\r\n");
    let got = exchange(&mut s, &request, 1024 + 9);
    assert!(got.ends_with(&big[..10]) || got.len() == 1024 + 9);
    let mut request = b"*16\r\n$9\r\nCF.MEXISTS\r\n".to_vec();
    request.truncate(5);
    request.extend_from_slice(b"$10\r\nCF.MEXISTS\r\n$1\r\nf\r\n");
    for _ in 0..14 {
        request.extend_from_slice(b"$1\r\nx\r\n");
    }
    let got = exchange(&mut s, &request, 5 + 14 * 4);
    assert!(
        got.starts_with(b"*14\r\n:0\r\n"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
}

/// Deterministic pseudo-random bytes (xorshift).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly protocol characters, so that the noise gets past headers.
            match x % 8 {
                0 => b'*',
                1 => b'$',
                2 => b'\r',
                3 => b'\n',
                4 => b'0' + (x >> 8) as u8 % 10,
                5 => b'-',
                _ => (x >> 16) as u8,
            }
        })
        .collect()
}

#[test]
fn garbage_from_some_clients_harms_no_other() {
    let dir = TempDir::new("garbage");
    let server = Server::start(dir.path(), &[]);
    let con = &mut server.connect();
    let keep: Vec<String> = (0..500).map(|i| format!("keep{i}")).collect();
    for k in &keep {
        let _: i64 = redis::cmd("CF.ADD")
            .arg("precious")
            .arg(k)
            .query(con)
            .unwrap();
    }
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let port = server.port;
            scope.spawn(move || {
                for round in 0..50u64 {
                    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                    s.set_read_timeout(Some(Duration::from_millis(200)))
                        .unwrap();
                    let bytes = noise(t * 1000 + round + 1, 4096);
                    let _ = s.write_all(&bytes);
                    // Whatever comes back, or nothing: the server must not hang
                    // or fall over; the connection is dropped either way.
                    let mut buf = [0u8; 4096];
                    let _ = std::io::Read::read(&mut s, &mut buf);
                }
            });
        }
    });
    // Still serving, and nothing lost.
    let found: Vec<i64> = {
        let mut c = redis::cmd("CF.MEXISTS");
        c.arg("precious");
        for k in &keep {
            c.arg(k);
        }
        c.query(con).unwrap()
    };
    assert!(found.iter().all(|&f| f == 1));
    let pong: String = redis::cmd("PING").query(&mut server.connect()).unwrap();
    assert_eq!(pong, "PONG");
}
