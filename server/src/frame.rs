//! RESP, the Redis protocol: requests in, replies out.
//!
//! A request is an array of bulk strings, `*2\r\n$6\r\nCF.ADD\r\n...`, or,
//! typed by hand (`nc`, `telnet`), an inline line of words, `PING\r\n`.
//! A [`Parser`] finds one complete request at the front of the read buffer
//! and where each argument lies in it ([`Args`]): the arguments are never
//! copied out, so a command runs on the bytes as they were read. A request
//! that arrives in many reads is parsed as it comes, each byte once: the
//! parser keeps its place between reads.
//!
//! Replies are written with [`Reply`] straight into the connection's write
//! buffer, in RESP2 or, after `HELLO 3`, RESP3 (where maps, booleans and
//! null have types of their own; in RESP2 they are arrays, integers and the
//! null bulk string).
//!
//! Limits are checked from the headers, before the body arrives: an argument
//! count or a bulk length over [`Limits`] is a protocol error at once, so no
//! buffer ever grows toward a size a client merely announced.

use std::ops::Range;

/// The largest request a [`Parser`] accepts, in its parts.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The most arguments in one request (Redis: no limit below 2^31;
    /// the default here is 1,048,576).
    pub max_args: usize,
    /// The longest argument, in bytes (Redis's `proto-max-bulk-len`,
    /// 512 MB by default).
    pub max_bulk: usize,
    /// The longest request, in bytes (Redis's `client-query-buffer-limit`,
    /// 1 GB by default).
    pub max_request: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_args: 1 << 20,
            max_bulk: 512 << 20,
            max_request: 1 << 30,
        }
    }
}

/// The longest line of a header or of an inline request: Redis's limit too.
const MAX_LINE: usize = 64 * 1024;

/// The most spans [`Parser::shrink`] leaves room for: 1 MiB of them.
const SPANS_KEPT: usize = 1 << 16;

/// What [`Parser::parse`] found at the front of the buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A request of this many bytes; where its arguments lie is in
    /// [`Parser::spans`] (none for an empty request, which Redis ignores).
    Request(usize),
    /// Not a whole request yet. `need` is the buffer length it needs at least,
    /// when a header has said so: the caller need not parse again before.
    Incomplete {
        /// Bytes the buffer must hold before a request can be complete.
        need: usize,
    },
    /// Not RESP: the connection must be closed after this error is sent.
    Error(String),
}

/// Parses requests, one at a time, out of the front of a read buffer, and
/// keeps how far it got into one that has not all arrived, so that each byte
/// of a request is looked at once however many reads it comes in: a parse
/// goes on where the last one stopped, never back over the arguments and
/// header lines already read.
///
/// What it keeps is relative to the start of the request, which is the
/// front of the buffer each call is given.
#[derive(Debug, Default)]
pub struct Parser {
    /// Where each argument read so far lies, from the request's start.
    spans: Vec<Range<usize>>,
    /// The arguments the array's header announced; 0 while no header is read.
    count: usize,
    /// Where parsing goes on: the next argument's header, or, once that is
    /// read, its body.
    at: usize,
    /// The length of the argument whose header is read and whose body is
    /// awaited at `at`.
    bulk: Option<usize>,
    /// Where the search for the end of the line that starts at `at` (or of
    /// the inline request) goes on: the bytes from `at` to here hold no `\n`.
    scanned: usize,
}

impl Parser {
    /// A parser with nothing read.
    pub fn new() -> Self {
        Parser::default()
    }

    /// Parses one request at the front of `buf`. After
    /// [`Incomplete`](Parsed::Incomplete), the next call must be given the
    /// same bytes at the front, with what has arrived since after them: it
    /// reads only those. After a [`Request`](Parsed::Request) (whose
    /// arguments [`spans`](Self::spans) gives) or an
    /// [`Error`](Parsed::Error), the next call starts a new request.
    ///
    /// An inline request's words are unescaped in place, in `buf`.
    pub fn parse(&mut self, buf: &mut [u8], limits: &Limits) -> Parsed {
        debug_assert!(buf.len() >= self.at.max(self.scanned), "a shorter buffer");
        if self.count == 0 {
            // No argument of an array read yet: what spans holds, if any, is
            // the last request's.
            self.spans.clear();
        }
        let parsed = match buf.first() {
            None => Parsed::Incomplete { need: 1 },
            Some(b'*') => self.parse_array(buf, limits),
            Some(_) => self.parse_inline(buf),
        };
        if !matches!(parsed, Parsed::Incomplete { .. }) {
            self.count = 0;
            self.at = 0;
            self.bulk = None;
            self.scanned = 0;
        }
        parsed
    }

    /// Where each argument of the request the last [`parse`](Self::parse)
    /// returned lies in its buffer.
    pub fn spans(&self) -> &[Range<usize>] {
        &self.spans
    }

    /// Gives back the room that the spans of a request of many arguments
    /// took (16 bytes each), unless a request is part-read: between
    /// requests, once the last one's spans are no longer needed (they are
    /// gone after it).
    pub fn shrink(&mut self) {
        if self.count == 0 && self.spans.capacity() > SPANS_KEPT {
            self.spans = Vec::new();
        }
    }

    /// An array of bulk strings, from where the last call stopped.
    fn parse_array(&mut self, buf: &[u8], limits: &Limits) -> Parsed {
        if self.count == 0 {
            let end = match line_end(buf, 0, &mut self.scanned) {
                Ok(end) => end,
                Err(outcome) => return outcome,
            };
            self.count = match parse_int(&buf[1..end]) {
                // `*0` and `*-1` are empty requests: Redis reads and ignores them.
                Some(n) if n <= 0 => return Parsed::Request(end + 2),
                Some(n) if n as u64 <= limits.max_args as u64 => n as usize,
                _ => return Parsed::Error("Protocol error: invalid multibulk length".into()),
            };
            // Room for the spans as they are found, not for what the header claims.
            self.spans.reserve(self.count.min(1024));
            self.at = end + 2;
        }
        // In locals while the arguments come whole; saved when one has not
        // all arrived.
        let (count, mut at, mut bulk) = (self.count, self.at, self.bulk.take());
        while self.spans.len() < count {
            let len = match bulk {
                Some(len) => len,
                None => {
                    if at >= buf.len() {
                        self.at = at;
                        return Parsed::Incomplete { need: at + 1 };
                    }
                    examined(1);
                    if buf[at] != b'$' {
                        return Parsed::Error(format!(
                            "Protocol error: expected '$', got '{}'",
                            char::from(buf[at])
                        ));
                    }
                    let end = match line_end(buf, at, &mut self.scanned) {
                        Ok(end) => end,
                        Err(outcome) => {
                            self.at = at;
                            return outcome;
                        }
                    };
                    let len = match parse_int(&buf[at + 1..end]) {
                        Some(n) if n >= 0 && n as u64 <= limits.max_bulk as u64 => n as usize,
                        _ => return Parsed::Error("Protocol error: invalid bulk length".into()),
                    };
                    if end + 2 + len + 2 > limits.max_request {
                        return Parsed::Error(
                            "Protocol error: request over the query buffer limit".into(),
                        );
                    }
                    at = end + 2;
                    len
                }
            };
            let need = at + len + 2;
            if buf.len() < need {
                (self.at, self.bulk) = (at, Some(len));
                return Parsed::Incomplete { need };
            }
            examined(2);
            if &buf[at + len..need] != b"\r\n" {
                return Parsed::Error(
                    "Protocol error: expected '\\r\\n' after a bulk string".into(),
                );
            }
            self.spans.push(at..at + len);
            at = need;
            bulk = None;
        }
        Parsed::Request(at)
    }

    /// An inline request: a line ended by `\n` (a `\r` before it is dropped),
    /// split into words as Redis splits it (`sdssplitargs`), so that what works
    /// typed at Redis works here. Words are separated by spaces; a word may hold
    /// double-quoted text, with the escapes `\n`, `\r`, `\t`, `\b`, `\a` and
    /// `\xHH` (a backslash before any other byte stands for that byte), or
    /// single-quoted text, where only `\'` is an escape; a closing quote must
    /// end its word.
    ///
    /// A word is never longer than its text, so each is written over the line
    /// in place, front to back, and its span points there. Nothing is written
    /// before the whole line has arrived.
    fn parse_inline(&mut self, buf: &mut [u8]) -> Parsed {
        let limit = buf.len().min(MAX_LINE + 1);
        let Some(nl) = find_newline(buf, self.scanned, limit) else {
            if limit > MAX_LINE {
                return Parsed::Error("Protocol error: too big inline request".into());
            }
            self.scanned = limit;
            return Parsed::Incomplete {
                need: buf.len() + 1,
            };
        };
        split_inline(buf, nl, &mut self.spans)
    }
}

/// The end (the index of the `\r`) of the line that starts at `at`, or
/// `Err` with the parse outcome when it is not whole or too long. Bytes up
/// to `scanned`, searched by an earlier call, are not searched again; when
/// the line is not whole, `scanned` moves to where the search stopped.
///
/// Inlined into its two callers: it runs for every header line, most of
/// them a few bytes long, where a call costs as much as the search.
#[inline(always)]
fn line_end(buf: &[u8], at: usize, scanned: &mut usize) -> Result<usize, Parsed> {
    let limit = buf.len().min(at + MAX_LINE + 2);
    match find_newline(buf, at.max(*scanned), limit) {
        Some(nl) if nl > at && buf[nl - 1] == b'\r' => Ok(nl - 1),
        Some(_) => Err(Parsed::Error("Protocol error: expected '\\r\\n'".into())),
        None if limit - at > MAX_LINE + 1 => {
            Err(Parsed::Error("Protocol error: too big request line".into()))
        }
        None => {
            *scanned = limit;
            Err(Parsed::Incomplete {
                need: buf.len() + 1,
            })
        }
    }
}

/// The first `\n` in `buf[from..to]`.
fn find_newline(buf: &[u8], from: usize, to: usize) -> Option<usize> {
    let found = buf[from..to].iter().position(|&b| b == b'\n');
    examined(found.map_or(to - from, |i| i + 1));
    found.map(|i| from + i)
}

/// Counts bytes the parser looks at, in unit tests, which check that a
/// request read in many pieces is looked at once, not again with each piece.
#[cfg(test)]
fn examined(n: usize) {
    tests::EXAMINED.with(|count| count.set(count.get() + n));
}

/// Counts bytes the parser looks at: only in unit tests.
#[cfg(not(test))]
#[inline(always)]
fn examined(_: usize) {}

/// A decimal integer as RESP writes lengths: optional `-`, digits.
fn parse_int(digits: &[u8]) -> Option<i64> {
    let (negative, digits) = match digits.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, digits),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(d - b'0');
    }
    Some(if negative { -value } else { value })
}

/// Splits the inline request whose line ends with the `\n` at `nl` into its
/// words (see [`Parser::parse_inline`]), writing them over the line and
/// their spans into `spans`.
fn split_inline(buf: &mut [u8], nl: usize, spans: &mut Vec<Range<usize>>) -> Parsed {
    let end = if nl > 0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    // Redis splits the line as a C string: a NUL byte ends it.
    let end = buf[..end].iter().position(|&b| b == 0).unwrap_or(end);
    // C's `isspace`, which Redis uses between words and after a quote.
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let unbalanced = || Parsed::Error("Protocol error: unbalanced quotes in request".into());
    let (mut read, mut write) = (0, 0);
    loop {
        while read < end && space(buf[read]) {
            read += 1;
        }
        if read == end {
            return Parsed::Request(nl + 1);
        }
        let start = write;
        let mut quote = None;
        while read < end {
            let b = buf[read];
            let next = (read + 1 < end).then(|| buf[read + 1]);
            let byte = match (quote, b, next) {
                // Each byte that ends a word is one the skip above passes,
                // so every round moves on.
                (None, b' ' | b'\t' | b'\r', _) => break,
                (None, b'"' | b'\'', _) => {
                    quote = Some(b);
                    read += 1;
                    continue;
                }
                (Some(q), _, _) if b == q => {
                    if next.is_some_and(|n| !space(n)) {
                        return unbalanced();
                    }
                    read += 1;
                    quote = None;
                    break;
                }
                (Some(b'"'), b'\\', Some(escaped)) => {
                    let hex = |i: usize| (i < end).then(|| char::from(buf[i]).to_digit(16));
                    match (escaped, hex(read + 2).flatten(), hex(read + 3).flatten()) {
                        (b'x', Some(hi), Some(lo)) => {
                            read += 4;
                            (hi * 16 + lo) as u8
                        }
                        _ => {
                            read += 2;
                            match escaped {
                                b'n' => b'\n',
                                b'r' => b'\r',
                                b't' => b'\t',
                                b'b' => 0x08,
                                b'a' => 0x07,
                                other => other,
                            }
                        }
                    }
                }
                (Some(b'\''), b'\\', Some(b'\'')) => {
                    read += 2;
                    b'\''
                }
                _ => {
                    read += 1;
                    b
                }
            };
            buf[write] = byte;
            write += 1;
        }
        if quote.is_some() {
            return unbalanced();
        }
        spans.push(start..write);
    }
}

/// The arguments of one request: the command name first.
#[derive(Clone, Copy)]
pub struct Args<'a> {
    buf: &'a [u8],
    spans: &'a [Range<usize>],
}

impl<'a> Args<'a> {
    /// The arguments `spans` of `buf` (as [`Parser::parse`] found them).
    pub fn new(buf: &'a [u8], spans: &'a [Range<usize>]) -> Self {
        Args { buf, spans }
    }

    /// How many, the command name included.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are none (an empty request).
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Argument `i` (0 is the command name).
    ///
    /// # Panics
    ///
    /// If `i` is not below [`len`](Self::len): commands check their arity first.
    pub fn get(&self, i: usize) -> &'a [u8] {
        &self.buf[self.spans[i].clone()]
    }

    /// The arguments from `i` on.
    pub fn from(&self, i: usize) -> impl ExactSizeIterator<Item = &'a [u8]> + 'a {
        let buf = self.buf;
        self.spans[i.min(self.spans.len())..]
            .iter()
            .map(move |r| &buf[r.clone()])
    }
}

/// Writes replies into a connection's write buffer, in the protocol version
/// the connection speaks.
pub struct Reply<'a> {
    out: &'a mut Vec<u8>,
    resp3: bool,
}

impl<'a> Reply<'a> {
    /// Replies appended to `out`, in RESP3 if `resp3`, else RESP2.
    pub fn new(out: &'a mut Vec<u8>, resp3: bool) -> Self {
        Reply { out, resp3 }
    }

    /// Whether the connection speaks RESP3.
    pub fn resp3(&self) -> bool {
        self.resp3
    }

    /// Switches the protocol of this reply and those after it (`HELLO`).
    pub fn set_resp3(&mut self, resp3: bool) {
        self.resp3 = resp3;
    }

    /// `+OK`
    pub fn ok(&mut self) {
        self.out.extend_from_slice(b"+OK\r\n");
    }

    /// A simple string (no `\r` or `\n` in it).
    pub fn simple(&mut self, s: &str) {
        self.out.push(b'+');
        self.out.extend_from_slice(s.as_bytes());
        self.out.extend_from_slice(b"\r\n");
    }

    /// An error. `message` starts with its code (`ERR`, `WRONGTYPE`), or,
    /// for RedisBloom's words, with none; line breaks become spaces.
    pub fn error(&mut self, message: &str) {
        self.out.push(b'-');
        self.out.extend(
            message
                .bytes()
                .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        );
        self.out.extend_from_slice(b"\r\n");
    }

    /// An integer.
    pub fn integer(&mut self, n: i64) {
        match n {
            0 => self.out.extend_from_slice(b":0\r\n"),
            1 => self.out.extend_from_slice(b":1\r\n"),
            _ => {
                self.out.push(b':');
                self.decimal(n);
                self.out.extend_from_slice(b"\r\n");
            }
        }
    }

    /// A boolean: `#t`/`#f` in RESP3, 1/0 in RESP2.
    pub fn boolean(&mut self, b: bool) {
        self.out.extend_from_slice(match (self.resp3, b) {
            (true, true) => b"#t\r\n",
            (true, false) => b"#f\r\n",
            (false, true) => b":1\r\n",
            (false, false) => b":0\r\n",
        });
    }

    /// A bulk string.
    pub fn bulk(&mut self, bytes: &[u8]) {
        self.header(b'$', bytes.len());
        self.out.extend_from_slice(bytes);
        self.out.extend_from_slice(b"\r\n");
    }

    /// Null: `_` in RESP3, the null bulk string in RESP2.
    pub fn null(&mut self) {
        self.out
            .extend_from_slice(if self.resp3 { b"_\r\n" } else { b"$-1\r\n" });
    }

    /// The header of an array of `n` replies, which follow.
    pub fn array(&mut self, n: usize) {
        self.header(b'*', n);
    }

    /// The header of a map of `n` key-value pairs, which follow: `%` in
    /// RESP3, an array of `2n` in RESP2.
    pub fn map(&mut self, n: usize) {
        if self.resp3 {
            self.header(b'%', n);
        } else {
            self.header(b'*', 2 * n);
        }
    }

    /// A double: `,` in RESP3, a bulk string in RESP2.
    pub fn double(&mut self, x: f64) {
        let text = x.to_string();
        if self.resp3 {
            self.out.push(b',');
            self.out.extend_from_slice(text.as_bytes());
            self.out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(text.as_bytes());
        }
    }

    fn header(&mut self, kind: u8, n: usize) {
        self.out.push(kind);
        self.decimal(n as i64);
        self.out.extend_from_slice(b"\r\n");
    }

    fn decimal(&mut self, n: i64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = n.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        if n < 0 {
            self.out.push(b'-');
        }
        self.out.extend_from_slice(&digits[at..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Bytes the parser has looked at on this thread (see [`examined`]).
        pub(super) static EXAMINED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// What a fresh parser makes of `input`, and the arguments it found.
    fn args_of(input: &[u8]) -> (Parsed, Vec<Vec<u8>>) {
        args_within(input, &Limits::default())
    }

    /// What a fresh parser makes of `input` under `limits`, and the
    /// arguments it found.
    fn args_within(input: &[u8], limits: &Limits) -> (Parsed, Vec<Vec<u8>>) {
        let input = &mut input.to_vec();
        let mut parser = Parser::new();
        let parsed = parser.parse(input, limits);
        (parsed, args_in(&parser, input))
    }

    /// The arguments `parser` found in `buf`, copied out.
    fn args_in(parser: &Parser, buf: &[u8]) -> Vec<Vec<u8>> {
        parser
            .spans()
            .iter()
            .map(|r| buf[r.clone()].to_vec())
            .collect()
    }

    #[test]
    fn arrays_inline_and_pieces() {
        let req = b"*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n";
        assert_eq!(
            args_of(req),
            (
                Parsed::Request(req.len()),
                vec![b"PING".to_vec(), b"hi".to_vec()]
            )
        );
        for cut in 0..req.len() {
            assert!(
                matches!(args_of(&req[..cut]).0, Parsed::Incomplete { .. }),
                "{cut}"
            );
        }
        assert_eq!(
            args_of(b"  ECHO  a b\r\nrest"),
            (
                Parsed::Request(13),
                vec![b"ECHO".to_vec(), b"a".to_vec(), b"b".to_vec()]
            )
        );
        assert_eq!(args_of(b"*0\r\n").0, Parsed::Request(4));
        assert_eq!(args_of(b"*1\r\n$0\r\n\r\n").1, vec![Vec::<u8>::new()]);
    }

    #[test]
    fn inline_words_are_split_as_redis_splits_them() {
        let words = |line: &[u8]| match args_of(line) {
            (Parsed::Request(_), args) => Ok(args),
            (other, _) => Err(other),
        };
        let w = |list: &[&[u8]]| Ok(list.iter().map(|a| a.to_vec()).collect());
        assert_eq!(
            words(b"CF.ADD f \"a b\"\r\n"),
            w(&[b"CF.ADD", b"f", b"a b"])
        );
        assert_eq!(words(b"ECHO 'a b' ''\n"), w(&[b"ECHO", b"a b", b""]));
        assert_eq!(
            words(b"ECHO \"x\\x41y\\n\\\\\\\"\\q\"\r\n"),
            w(&[b"ECHO", b"xAy\n\\\"q"])
        );
        assert_eq!(
            words(b"ECHO 'it\\'s' \"\\x4\"\n"),
            w(&[b"ECHO", b"it's", b"x4"])
        );
        // A quote may open inside a word; a closing one must end it.
        assert_eq!(words(b"ECHO a\"b c\"\n"), w(&[b"ECHO", b"ab c"]));
        let unbalanced = Err(Parsed::Error(
            "Protocol error: unbalanced quotes in request".into(),
        ));
        for line in [
            &b"ECHO \"abc\r\n"[..],
            b"ECHO \"a\"b\n",
            b"ECHO 'a'b\n",
            b"ECHO 'abc\n",
            b"ECHO \"a\\\"\n",
        ] {
            assert_eq!(
                words(line),
                unbalanced,
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
        assert_eq!(words(b" \t\r\n"), w(&[]));
        assert_eq!(words(b"ECHO a\0b c\n"), w(&[b"ECHO", b"a"]));
        assert_eq!(words(b"\0ECHO\n"), w(&[]));
    }

    #[test]
    fn limits_are_checked_from_the_headers() {
        let limits = Limits {
            max_args: 3,
            max_bulk: 10,
            max_request: 40,
        };
        let parse = |buf: &mut Vec<u8>, limits: &Limits| Parser::new().parse(buf, limits);
        assert!(matches!(
            parse(&mut b"*4\r\n".to_vec(), &limits),
            Parsed::Error(_)
        ));
        assert!(matches!(
            parse(&mut b"*1\r\n$11\r\n".to_vec(), &limits),
            Parsed::Error(_)
        ));
        assert_eq!(
            parse(&mut b"*1\r\n$10\r\n".to_vec(), &limits),
            Parsed::Incomplete { need: 21 }
        );
        assert!(matches!(
            parse(&mut b"*1\r\n$-1\r\n".to_vec(), &limits),
            Parsed::Error(_)
        ));
        assert!(matches!(
            parse(&mut b"*1\r\n:1\r\n".to_vec(), &limits),
            Parsed::Error(_)
        ));
        assert!(matches!(
            parse(&mut b"*x\r\n".to_vec(), &limits),
            Parsed::Error(_)
        ));
        assert!(matches!(
            parse(&mut b"*1\r\n$1\r\nabc".to_vec(), &limits),
            Parsed::Error(_)
        ));
        let mut long = vec![b'a'; MAX_LINE + 10];
        assert!(matches!(parse(&mut long, &limits), Parsed::Error(_)));
        let mut long = b"*".to_vec();
        long.extend(vec![b'1'; MAX_LINE + 10]);
        assert!(matches!(parse(&mut long, &limits), Parsed::Error(_)));
    }

    /// A multibulk request of `n` one-byte arguments after `PING`.
    fn many_args(n: usize) -> Vec<u8> {
        let mut req = format!("*{}\r\n$4\r\nPING\r\n", n + 1).into_bytes();
        for _ in 0..n {
            req.extend_from_slice(b"$1\r\nx\r\n");
        }
        req
    }

    /// Feeds `req` to one parser a byte at a time, parsing after every byte
    /// (with `every`) or, as a connection does, only once the buffer holds
    /// what the last parse said it needs; returns the outcome, the
    /// arguments and the bytes the parser looked at.
    fn trickle(req: &[u8], every: bool) -> (Parsed, Vec<Vec<u8>>, usize) {
        let mut buf = req.to_vec();
        let mut parser = Parser::new();
        let before = EXAMINED.with(|e| e.get());
        let mut need = 1;
        for len in 1..=buf.len() {
            if !every && len < need {
                continue;
            }
            match parser.parse(&mut buf[..len], &Limits::default()) {
                Parsed::Incomplete { need: more } => need = more,
                done => {
                    let looked = EXAMINED.with(|e| e.get()) - before;
                    return (done, args_in(&parser, &buf), looked);
                }
            }
        }
        let looked = EXAMINED.with(|e| e.get()) - before;
        (Parsed::Incomplete { need }, Vec::new(), looked)
    }

    #[test]
    fn a_request_in_pieces_is_looked_at_once() {
        let req = many_args(2000);
        for every in [false, true] {
            let (parsed, args, looked) = trickle(&req, every);
            assert_eq!(parsed, Parsed::Request(req.len()));
            assert_eq!(args.len(), 2001);
            assert_eq!(args[0], b"PING");
            assert!(args[1..].iter().all(|a| a == b"x"));
            // Each header byte is searched once for its line's end, and the
            // `$` and the `\r\n` after a body checked once more: parsing from
            // the start again with each byte would look at ~10^7.
            assert!(looked <= 2 * req.len(), "{looked} of {} bytes", req.len());
        }
        // A long inline line, and a long argument, arriving a byte at a time.
        let mut line = b"ECHO ".to_vec();
        line.extend(std::iter::repeat_n(b'a', 60_000));
        line.extend_from_slice(b"\r\n");
        let mut bulk = b"*2\r\n$4\r\nECHO\r\n$60000\r\n".to_vec();
        bulk.extend(std::iter::repeat_n(b'b', 60_000));
        bulk.extend_from_slice(b"\r\n");
        for req in [line, bulk] {
            let (parsed, args, looked) = trickle(&req, true);
            assert_eq!(parsed, Parsed::Request(req.len()));
            assert_eq!(args[1].len(), 60_000);
            assert!(looked <= req.len(), "{looked} of {} bytes", req.len());
        }
    }

    #[test]
    fn a_resumed_parse_does_not_look_back() {
        let req = b"*3\r\n$4\r\nECHO\r\n$5\r\nhello\r\n$5\r\nworld\r\n";
        let mut buf = req.to_vec();
        let mut parser = Parser::new();
        let cut = req.len() - 5;
        assert_eq!(
            parser.parse(&mut buf[..cut], &Limits::default()),
            Parsed::Incomplete { need: req.len() }
        );
        // What the parser has read already (all but the `*` that says this
        // is an array) is no longer looked at: spoiling it changes nothing.
        let read = req.len() - 11;
        buf[1..read].fill(b'!');
        assert_eq!(
            parser.parse(&mut buf, &Limits::default()),
            Parsed::Request(req.len())
        );
        let args = args_in(&parser, &buf);
        assert_eq!(args.len(), 3);
        assert_eq!(args[2], b"world");
        // The next request starts afresh.
        let mut next = b"*1\r\n$4\r\nPING\r\n".to_vec();
        assert_eq!(
            parser.parse(&mut next, &Limits::default()),
            Parsed::Request(next.len())
        );
        assert_eq!(args_in(&parser, &next), vec![b"PING".to_vec()]);
    }

    #[test]
    fn the_spans_of_a_request_of_many_arguments_are_given_back() {
        let mut parser = Parser::new();
        let req = many_args(100_000);
        let mut buf = req.clone();
        let cut = req.len() - 3;
        assert!(matches!(
            parser.parse(&mut buf[..cut], &Limits::default()),
            Parsed::Incomplete { .. }
        ));
        // Not while the request is part-read.
        parser.shrink();
        assert_eq!(parser.spans().len(), 100_000);
        assert_eq!(
            parser.parse(&mut buf, &Limits::default()),
            Parsed::Request(req.len())
        );
        assert_eq!(parser.spans().len(), 100_001);
        parser.shrink();
        assert_eq!(parser.spans.capacity(), 0);
        // A request of a few arguments keeps its room.
        let mut small = many_args(10);
        assert_eq!(
            parser.parse(&mut small, &Limits::default()),
            Parsed::Request(small.len())
        );
        parser.shrink();
        assert_eq!(parser.spans().len(), 11);
    }

    #[test]
    fn pieces_parse_as_the_whole_does() {
        let limits = Limits {
            max_args: 4,
            max_bulk: 10,
            max_request: 40,
        };
        let mut cases: Vec<Vec<u8>> = [
            &b"*3\r\n$4\r\nECHO\r\n$0\r\n\r\n$10\r\n0123456789\r\nPING\r\n"[..],
            b"*0\r\n",
            b"*-1\r\n",
            b"  ECHO \"a\\x41 b\" 'c\\'d'\r\n",
            b"ECHO \"a\"b\r\n",
            b"\r\n",
            b"*5\r\n",
            b"*x\r\n",
            b"*2\r\n$4\r\nECHO\r\n$11\r\n",
            b"*2\r\n$4\r\nECHO\r\n$-1\r\n",
            b"*2\r\n$4\r\nECHO\r\n:1\r\n",
            b"*2\r\n$4\r\nECHO\r\n$2\r\nabc\r\n",
            b"*2\r\n$4\r\nECHO\r\n$3\r\nabc\n",
            b"*4\r\n$10\r\n0123456789\r\n$10\r\n0123456789\r\n",
        ]
        .iter()
        .map(|c| c.to_vec())
        .collect();
        let mut long = b"*1\r\n$".to_vec();
        long.extend(std::iter::repeat_n(b'1', MAX_LINE + 10));
        cases.push(long);
        let mut long = b"ECHO ".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_LINE + 10));
        cases.push(long);
        for case in &cases {
            let mut buf = case.clone();
            let mut parser = Parser::new();
            // Every cut of a short case; of a long one, enough to pass its
            // line's limit in steps (a fresh parse of each cut is slow).
            let cuts = (1..=case.len()).filter(|&len| {
                case.len() < 1000 || len < 30 || len % 1009 == 0 || len + 20 > MAX_LINE
            });
            for len in cuts {
                let parsed = parser.parse(&mut buf[..len], &limits);
                let args = args_in(&parser, &buf[..len]);
                assert_eq!(
                    (parsed, args),
                    args_within(&case[..len], &limits),
                    "{:?} cut at {len}",
                    String::from_utf8_lossy(case)
                );
                if !matches!(
                    args_within(&case[..len], &limits).0,
                    Parsed::Incomplete { .. }
                ) {
                    break;
                }
            }
        }
    }

    #[test]
    fn replies() {
        let mut out = Vec::new();
        let mut r = Reply::new(&mut out, false);
        r.integer(-12);
        r.integer(1234567890123);
        r.boolean(true);
        r.null();
        r.map(1);
        r.error("ERR a\r\nb");
        assert_eq!(
            out,
            b":-12\r\n:1234567890123\r\n:1\r\n$-1\r\n*2\r\n-ERR a  b\r\n"
        );
        let mut out = Vec::new();
        let mut r = Reply::new(&mut out, true);
        r.boolean(false);
        r.null();
        r.map(2);
        r.integer(i64::MIN + 1);
        assert_eq!(out, b"#f\r\n_\r\n%2\r\n:-9223372036854775807\r\n");
    }
}
