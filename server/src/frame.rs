//! RESP, the Redis protocol: requests in, replies out.
//!
//! A request is an array of bulk strings, `*2\r\n$6\r\nCF.ADD\r\n...`, or,
//! typed by hand (`nc`, `telnet`), an inline line of words, `PING\r\n`.
//! [`parse`] finds one complete request at the front of the read buffer and
//! returns where each argument lies in it ([`Args`]): the arguments are never
//! copied out, so a command runs on the bytes as they were read.
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

/// The largest request [`parse`] accepts, in its parts.
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

/// What [`parse`] found at the front of the buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A request of this many bytes; its arguments are in the `Vec` given to
    /// `parse` (none for an empty request, which Redis ignores).
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

/// Parses one request at the front of `buf`, putting where each argument
/// lies in `buf` into `spans`.
pub fn parse(buf: &mut [u8], limits: &Limits, spans: &mut Vec<Range<usize>>) -> Parsed {
    spans.clear();
    match buf.first() {
        None => Parsed::Incomplete { need: 1 },
        Some(b'*') => parse_array(buf, limits, spans),
        Some(_) => parse_inline(buf, spans),
    }
}

/// The line that starts at `at`: its end (the index of its `\r`), or
/// `Err` with the parse outcome when it is not whole or too long.
fn line_end(buf: &[u8], at: usize) -> Result<usize, Parsed> {
    let window = &buf[at..buf.len().min(at + MAX_LINE + 2)];
    match window.iter().position(|&b| b == b'\n') {
        Some(nl) if nl > 0 && window[nl - 1] == b'\r' => Ok(at + nl - 1),
        Some(_) => Err(Parsed::Error("Protocol error: expected '\\r\\n'".into())),
        None if window.len() > MAX_LINE + 1 => {
            Err(Parsed::Error("Protocol error: too big request line".into()))
        }
        None => Err(Parsed::Incomplete {
            need: buf.len() + 1,
        }),
    }
}

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

fn parse_array(buf: &[u8], limits: &Limits, spans: &mut Vec<Range<usize>>) -> Parsed {
    let end = match line_end(buf, 0) {
        Ok(end) => end,
        Err(outcome) => return outcome,
    };
    let count = match parse_int(&buf[1..end]) {
        // `*0` and `*-1` are empty requests: Redis reads and ignores them.
        Some(n) if n <= 0 => return Parsed::Request(end + 2),
        Some(n) if n as u64 <= limits.max_args as u64 => n as usize,
        _ => return Parsed::Error("Protocol error: invalid multibulk length".into()),
    };
    // Room for the spans as they are found, not for what the header claims.
    spans.reserve(count.min(1024));
    let mut at = end + 2;
    for _ in 0..count {
        if at >= buf.len() {
            return Parsed::Incomplete { need: at + 1 };
        }
        if buf[at] != b'$' {
            return Parsed::Error(format!(
                "Protocol error: expected '$', got '{}'",
                char::from(buf[at])
            ));
        }
        let end = match line_end(buf, at) {
            Ok(end) => end,
            Err(outcome) => return outcome,
        };
        let len = match parse_int(&buf[at + 1..end]) {
            Some(n) if n >= 0 && n as u64 <= limits.max_bulk as u64 => n as usize,
            _ => return Parsed::Error("Protocol error: invalid bulk length".into()),
        };
        let start = end + 2;
        let need = start + len + 2;
        if need > limits.max_request {
            return Parsed::Error("Protocol error: request over the query buffer limit".into());
        }
        if buf.len() < need {
            return Parsed::Incomplete { need };
        }
        if &buf[start + len..need] != b"\r\n" {
            return Parsed::Error("Protocol error: expected '\\r\\n' after a bulk string".into());
        }
        spans.push(start..start + len);
        at = need;
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
/// in place, front to back, and its span points there.
fn parse_inline(buf: &mut [u8], spans: &mut Vec<Range<usize>>) -> Parsed {
    let window = &buf[..buf.len().min(MAX_LINE + 1)];
    let Some(nl) = window.iter().position(|&b| b == b'\n') else {
        if window.len() > MAX_LINE {
            return Parsed::Error("Protocol error: too big inline request".into());
        }
        return Parsed::Incomplete {
            need: buf.len() + 1,
        };
    };
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
    /// The arguments `spans` of `buf` (as [`parse`] found them).
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

    fn args_of(input: &[u8]) -> (Parsed, Vec<Vec<u8>>) {
        let mut spans = Vec::new();
        let input = &mut input.to_vec();
        let parsed = parse(input, &Limits::default(), &mut spans);
        let args = spans.iter().map(|r| input[r.clone()].to_vec()).collect();
        (parsed, args)
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
        let mut spans = Vec::new();
        assert!(matches!(
            parse(&mut b"*4\r\n".to_vec(), &limits, &mut spans),
            Parsed::Error(_)
        ));
        assert!(matches!(
            parse(&mut b"*1\r\n$11\r\n".to_vec(), &limits, &mut spans),
            Parsed::Error(_)
        ));
        assert_eq!(
            parse(&mut b"*1\r\n$10\r\n".to_vec(), &limits, &mut spans),
            Parsed::Incomplete { need: 21 }
        );
        assert!(matches!(
            parse(&mut b"*1\r\n$-1\r\n".to_vec(), &limits, &mut spans),
            Parsed::Error(_)
        ));
        assert!(matches!(
            parse(&mut b"*1\r\n:1\r\n".to_vec(), &limits, &mut spans),
            Parsed::Error(_)
        ));
        assert!(matches!(
            parse(&mut b"*x\r\n".to_vec(), &limits, &mut spans),
            Parsed::Error(_)
        ));
        assert!(matches!(
            parse(&mut b"*1\r\n$1\r\nabc".to_vec(), &limits, &mut spans),
            Parsed::Error(_)
        ));
        let mut long = vec![b'a'; MAX_LINE + 10];
        assert!(matches!(
            parse(&mut long, &limits, &mut spans),
            Parsed::Error(_)
        ));
        let mut long = b"*".to_vec();
        long.extend(vec![b'1'; MAX_LINE + 10]);
        assert!(matches!(
            parse(&mut long, &limits, &mut spans),
            Parsed::Error(_)
        ));
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
