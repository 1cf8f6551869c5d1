#!/usr/bin/env python3
"""cuckoo-server against Redis with RedisBloom: the same commands, reply by reply.

    cargo build --release -p cuckoo-server
    python3 server/tests/differential.py [--module PATH] [--server PATH] [-v]

It starts redis-server with the RedisBloom module and cuckoo-server, each on
a free port with a temporary --dir and no saves, runs every case below on
both (a case is a list of commands on a fresh connection, after FLUSHALL),
and prints every reply that differs: the case, the command, Redis's reply
and ours. What it covers: the CF.* commands' grammar, arity and error
words; the key commands (DEL, EXISTS, TYPE, KEYS, SCAN, FLUSHALL, TTL...);
the connection commands (PING, HELLO, CLIENT, SELECT, QUIT, RESET, CONFIG
GET); RESP3 reply types after HELLO 3; inline commands and protocol errors,
including whether the connection is closed after them.

Replies are compared exactly, type included (RESP3 boolean and integer
differ, and so do RESP2's null bulk and null array), except where a step
says what to compare: CF.INFO's field names, value types and the values
that follow from the commands alone (items, bucket size, expansion, max
iterations; sizes differ by design), an id's type, KEYS in any order, the
keys a whole SCAN iteration returns. Differences listed in ALLOWED are by
design and reported as such; any other makes the exit status 1; -v prints
the replies that match too. Without redis-server or the module, it prints
what is missing and exits 0.
"""

import argparse
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (case, command as printed) -> why the two servers answer differently.
# Only differences that follow from a documented choice (server/README.md).
ONLY_FILTERS = "the server holds only cuckoo filters: no strings, no WRONGTYPE"
NO_EXPIRY = "filters do not expire; EXPIRE and PEXPIRE are refused with an error"
DUMP_FORMAT = "dumps are this server's format; its iterators are byte offsets, not RedisBloom's"
SETINFO = "CLIENT SETINFO is Redis 7.2's; the reference redis-server is 7.0"
STRICT = "refused here with an error, where RedisBloom or Redis guesses (unknown options, " \
    "options by their first letter, a negative cursor, bytes after a bulk string)"
MODULES = "no module is loaded: the CF commands are the server's own"
ALLOWED = {
    ("cf.reserve", "CF.INFO f"): "CF.INFO adds the fields Capacity and Error rate",
    **{("another type", c): ONLY_FILTERS for c in ("SET k v", "CF.ADD k x", "TYPE k", "CF.EXISTS k x", "GET k")},
    ("keys", "EXPIRE nokey 100"): NO_EXPIRY,
    ("expire", "EXPIRE f 100"): NO_EXPIRY,
    ("expire", "PEXPIRE f 100000"): NO_EXPIRY,
    ("connection", "SELECT 1"): "one database",
    ("connection", "CONFIG GET databases"): "one database",
    ("connection", "CONFIG GET maxmemory"): "--maxmemory defaults to half the machine's memory",
    **{("connection", "CLIENT SETINFO " + a): SETINFO for a in ("lib-name mylib", "lib-ver 1.0", "bogus x")},
    **{("cf.info, scandump, loadchunk", "CF.LOADCHUNK " + a): DUMP_FORMAT
       for a in ("g 1 garbage", "g 2 garbage", "f 1 garbage", "f 99999 garbage", 'f 2 ""', "g -1 x")},
    # An empty filter dumps as itself (its capacity and rate), where
    # RedisBloom hands out no chunk and a restore creates nothing.
    ("cf.info, scandump, loadchunk", "CF.SCANDUMP f 0"): DUMP_FORMAT,
    ("resp3", "CF.SCANDUMP e 0"): DUMP_FORMAT,
    ("dump and restore", "EXISTS e2"): DUMP_FORMAT,
    ("dump and restore", "KEYS *"): DUMP_FORMAT,
    # Stricter than RedisBloom, with an error that says what is wrong.
    ("cf.reserve", "CF.RESERVE c7 9223372036854775807"): "both refuse; ours says how much it would take",
    ("cf.reserve", "CF.RESERVE unk 1000 FOO 1"): STRICT,
    **{("cf.insert options by first letter", c): STRICT
       for c in ("CF.INSERT q1 I a", "CF.INSERT q2 NOPE ITEMS a", "CF.INSERT q3 CAP 100 ITEMS a",
                 "CF.INSERTNX q4 Include a", "KEYS q*")},
    ("keys", "SCAN -1"): STRICT,
    ("protocol errors", "raw '*1\\r\\n$4\\r\\nPINGxx\\r\\n'"): STRICT,
    # RedisBloom looks for its options among all arguments, the key's too.
    ("cf.reserve", "CF.RESERVE BUCKETSIZE 1000"): "RedisBloom reads the key 'BUCKETSIZE' as the option",
    ("hello", "HELLO"): MODULES,
    ("hello", "HELLO 3 AUTH default wrong"): MODULES,
}


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Closed(Exception):
    pass


SCALAR = {b"+": "simple", b"-": "error", b",": "double"}
BLOB = {b"$": "bulk", b"=": "verbatim", b"!": "error"}
AGGREGATE = {b"*": "array", b"~": "set", b">": "push"}


class Conn:
    """A connection to one server, opened on first use and again after the
    server closes it; replies are tagged tuples: ("int", 1), ("bool", True)."""

    def __init__(self, port):
        self.port, self.sock, self.buf = port, None, b""

    def send(self, data):
        if self.sock is None:
            self.sock, self.buf = socket.create_connection(("127.0.0.1", self.port), timeout=5), b""
        self.sock.sendall(data)

    def drop(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = None

    def reply(self):
        """The next reply, or ("timeout",) or ("closed",), after which the
        connection is dropped (a late reply would be taken for the next)."""
        try:
            return self.read()
        except socket.timeout:
            self.drop()
            return ("timeout",)
        except (Closed, OSError):
            self.drop()
            return ("closed",)

    def _fill(self):
        chunk = self.sock.recv(65536)  # socket.timeout propagates
        if not chunk:
            raise Closed()
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self, timeout=3.0):
        self.sock.settimeout(timeout)
        line = self._line()
        t, rest = line[:1], line[1:].decode("latin-1")
        if t in (b"$", b"*") and rest == "-1" or t == b"_":
            return ("null", t.decode())
        if t in (b":", b"("):
            return ("int" if t == b":" else "bignum", int(rest))
        if t == b"#":
            return ("bool", rest == "t")
        if t in SCALAR:
            return (SCALAR[t], rest)
        if t in BLOB:
            data = self._exact(int(rest))
            return (BLOB[t], data.decode("latin-1") if t == b"!" else data)
        if t in AGGREGATE:
            return (AGGREGATE[t], [self.read(timeout) for _ in range(int(rest))])
        if t == b"%":
            return ("map", [(self.read(timeout), self.read(timeout)) for _ in range(int(rest))])
        if t == b"|":  # an attribute: read and dropped, the reply follows
            [self.read(timeout) for _ in range(2 * int(rest))]
            return self.read(timeout)
        raise ValueError("unparsable reply line %r" % line)

    def closed_soon(self, wait=0.5):
        """Whether the server closes the connection within `wait` seconds."""
        try:
            self.sock.settimeout(wait)
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except socket.timeout:
            return False
        except OSError:
            return True


def show(v):
    t, x = v[0], v[1:] and v[1]
    if t in ("bulk", "verbatim"):
        r = repr(x)[1:]
        return ("=" if t == "verbatim" else "") + (r if len(r) <= 70 else r[:60] + "...(%d bytes)" % len(x))
    if t in ("array", "set", "push"):
        return {"array": "[", "set": "~{", "push": ">["}[t] + ", ".join(map(show, x)) + "]}]"[t == "set"]
    if t == "map":
        return "%{" + ", ".join("%s: %s" % (show(k), show(y)) for k, y in x) + "}"
    if t in ("then", "raw"):
        shown = show(x) if t == "then" else ", ".join(map(show, x)) or "(no reply)"
        return "%s, then connection %s" % (shown, v[2])
    fmt = {"simple": "+%s", "error": "-%s", "int": ":%d", "bignum": "(%d", "double": ",%s",
           "null": "(nil %s)", "type": "<%s>", "bool": "#%s"}.get(t, "(%s)" % t)
    return fmt % ({True: "t", False: "f"}[x] if t == "bool" else x) if "%" in fmt else fmt


class Cmd:
    """A command sent as a RESP array; `norm` maps a reply to what is compared;
    `closes` also records whether the connection is closed after it; `note`
    prints both replies in the report whether they match or not."""

    def __init__(self, args, norm=None, closes=False, note=False):
        self.args = shlex.split(args) if isinstance(args, str) else args
        if norm is None and self.args and self.args[0].upper() == "KEYS":
            norm = sort_array  # in no particular order
        self.norm, self.closes, self.note = norm, closes, note

    def label(self):
        return " ".join(a if a and a.isprintable() and " " not in a and '"' not in a
                        else '"%s"' % repr(a)[1:-1] for a in self.args)

    def run(self, c):
        c.send(encode(self.args))
        v = c.reply()
        if self.closes and v[0] not in ("closed", "timeout"):
            v = ("then", v, "closed" if c.closed_soon() else "open")
            if v[2] == "closed":
                c.drop()
        return v


class Raw(Cmd):
    """Bytes sent as they are; every reply that comes until the server is
    quiet for half a second, and whether the connection is closed then."""

    def __init__(self, data):
        Cmd.__init__(self, [])
        self.data = data

    def label(self):
        return "raw " + repr(self.data)[1:]

    def run(self, c):
        replies = []
        c.send(self.data)
        while True:
            try:
                replies.append(c.read(timeout=0.5))
            except socket.timeout:
                return ("raw", replies, "open")
            except (Closed, OSError):
                c.drop()
                return ("raw", replies, "closed")


class ScanAll(Cmd):
    """SCAN from cursor 0 until it returns 0; the sorted keys, or the error."""

    def run(self, c):
        cursor, keys = "0", set()
        for _ in range(10000):
            c.send(encode(["SCAN", cursor] + self.args[2:]))
            v = c.reply()
            if v[0] != "array":
                return v
            cursor = v[1][0][1].decode()
            keys.update(k[1] for k in v[1][1][1])
            if cursor == "0":
                return ("array", [("bulk", k) for k in sorted(keys)])
        return ("error", "SCAN did not finish")


class DumpRestore(Cmd):
    """CF.SCANDUMP of a filter from iterator 0 until it answers 0, each chunk
    handed to CF.LOADCHUNK for another key: OK, or the first other reply."""

    def __init__(self, src, dst):
        Cmd.__init__(self, ["CF.SCANDUMP+LOADCHUNK", src, dst])

    def run(self, c):
        src, dst, it = self.args[1], self.args[2], "0"
        for _ in range(100000):
            c.send(encode(["CF.SCANDUMP", src, it]))
            v = c.reply()
            if v[0] != "array" or v[1][0][0] != "int":
                return v
            it = str(v[1][0][1])
            if it == "0":
                return ("simple", "OK")
            c.send(encode([b"CF.LOADCHUNK", dst.encode(), it.encode(), v[1][1][1]]))
            w = c.reply()
            if w != ("simple", "OK"):
                return w
        return ("error", "CF.SCANDUMP did not finish")


def types(v):
    """The reply with every scalar replaced by its type."""
    if v[0] in ("array", "set", "push"):
        return (v[0], [types(x) for x in v[1]])
    if v[0] == "map":
        return ("map", [(types(k), types(x)) for k, x in v[1]])
    return ("type", v[0] if v[0] != "null" else "null " + v[1])


def pairs(v):
    return v[1] if v[0] == "map" else list(zip(v[1][0::2], v[1][1::2]))


def fields(keep=(), drop=()):
    """A map (or RESP2 array of pairs): its field names, values' types, and
    the values of the fields in `keep`; fields in `drop` left out."""
    def norm(v):
        if v[0] not in ("map", "array"):
            return v
        out = []
        for k, x in pairs(v):
            name = k[1].decode() if k[0] == "bulk" else k[1]
            if name not in drop:
                out.append((k, x if name in keep else ("type", x[0])))
        return ("map", out) if v[0] == "map" else ("array", [y for kx in out for y in kx])
    return norm


def sort_array(v):
    return ("array", sorted(v[1], key=repr)) if v[0] == "array" else v


# Our CF.INFO adds `Capacity` and `Error rate` (documented); these fields'
# values follow from the commands alone, the others from each layout.
INFO_SAME = ("Number of items inserted", "Number of items deleted", "Bucket size",
             "Expansion rate", "Max iterations")
info = fields(keep=INFO_SAME, drop=("Capacity", "Error rate"))
info_names = fields()
hello = fields(keep=("proto", "server", "mode", "role"))
hello_modules = fields(keep=("proto", "server", "mode", "role", "modules"))


def steps(*items):
    """Steps from Cmd objects and strings of commands separated by ';'."""
    out = []
    for i in items:
        out += [Cmd(c) for c in i.split(";") if c.strip()] if isinstance(i, str) else [i]
    return out


def arity(cmds):
    """Commands with the wrong number of arguments, as given and in lowercase."""
    cmds = cmds.split(";")
    return [Cmd(c) for c in cmds] + [Cmd(c.lower()) for c in cmds]


CASES = [
    ("cf.reserve", steps(
        "CF.RESERVE f 1000; CF.RESERVE f 1000; CF.RESERVE f 2000 BUCKETSIZE 4; CF.RESERVE c0 0",
        "CF.RESERVE c1 -1; CF.RESERVE c2 abc; CF.RESERVE c3 1.5; CF.RESERVE c4 3; CF.RESERVE c5 4",
        "CF.RESERVE c6 9223372036854775808; CF.RESERVE c7 9223372036854775807; CF.RESERVE c8 ''",
        "CF.RESERVE b0 1000 BUCKETSIZE 0; CF.RESERVE b1 1000 BUCKETSIZE 1; CF.RESERVE b4 1000 BUCKETSIZE 4",
        "CF.RESERVE b255 1000 BUCKETSIZE 255; CF.RESERVE b256 1000 BUCKETSIZE 256",
        "CF.RESERVE bx 1000 BUCKETSIZE x; CF.RESERVE bsmall 100 BUCKETSIZE 255",
        "CF.RESERVE b-1 1000 BUCKETSIZE -1; CF.RESERVE m0 1000 MAXITERATIONS 0",
        "CF.RESERVE m1 1000 MAXITERATIONS 1; CF.RESERVE m65535 1000 MAXITERATIONS 65535",
        "CF.RESERVE m65536 1000 MAXITERATIONS 65536; CF.RESERVE mx 1000 MAXITERATIONS x",
        "CF.RESERVE e0 1000 EXPANSION 0; CF.RESERVE e1 1000 EXPANSION 1; CF.RESERVE e2 1000 EXPANSION 2",
        "CF.RESERVE e3 1000 EXPANSION 3; CF.RESERVE e32768 1000 EXPANSION 32768",
        "CF.RESERVE e32769 1000 EXPANSION 32769; CF.RESERVE ehuge 1000 EXPANSION 99999999999999999999",
        "CF.RESERVE e-1 1000 EXPANSION -1; CF.RESERVE all 1000 BUCKETSIZE 4 MAXITERATIONS 50 EXPANSION 2",
        "CF.RESERVE order 1000 EXPANSION 4 MAXITERATIONS 30 BUCKETSIZE 3",
        "CF.RESERVE lower 1000 bucketsize 2 maxiterations 10 expansion 0",
        "CF.RESERVE rep 1000 BUCKETSIZE 2 BUCKETSIZE 4; CF.RESERVE rep2 1000 EXPANSION 1 EXPANSION x",
        "CF.RESERVE unk 1000 FOO 1; CF.RESERVE unk2 1000 FOO; CF.RESERVE rate 1000 ERROR_RATE 0.001",
        "CF.RESERVE miss 1000 BUCKETSIZE; CF.RESERVE miss2 1000 BUCKETSIZE 2 EXPANSION",
        "CF.RESERVE BUCKETSIZE 1000; CF.RESERVE; CF.RESERVE f",
        *[Cmd("CF.INFO " + k, info) for k in ("all", "order", "lower", "rep", "b1", "e0")],
        Cmd("CF.INFO f", info_names, note=True), "KEYS c*")),
    ("cf.add", steps(
        "CF.ADD f a; CF.ADD f a; CF.ADDNX f a; CF.ADDNX f b; CF.ADDNX g a; CF.ADD f ''; CF.EXISTS f ''",
        Cmd(["CF.ADD", "f", "\x00\r\n\xff"]), Cmd(["CF.EXISTS", "f", "\x00\r\n\xff"]),
        Cmd("CF.INFO f", info), Cmd("CF.INFO g", info),
        *arity("CF.ADD;CF.ADD f;CF.ADD f a b;CF.ADDNX f;CF.ADDNX f a b"))),
    ("cf.insert", steps(
        "CF.INSERT f ITEMS a b a; CF.INSERTNX f ITEMS a c c; CF.INSERT g CAPACITY 1000 ITEMS a",
        "CF.INSERT h NOCREATE ITEMS a; CF.INSERTNX h NOCREATE ITEMS a; CF.INSERT f NOCREATE ITEMS z",
        "CF.INSERT h CAPACITY 0 ITEMS a; CF.INSERT h CAPACITY 3 ITEMS a; CF.INSERT h CAPACITY 4 ITEMS a",
        "CF.INSERT h2 CAPACITY x ITEMS a; CF.INSERT h2 CAPACITY -5 ITEMS a",
        "CF.INSERT h3 CAPACITY 100 NOCREATE ITEMS a; CF.INSERT h3 NOCREATE CAPACITY 100 ITEMS a",
        "CF.INSERT h4 CAPACITY 100 CAPACITY 200 ITEMS a; CF.INSERT h5 items a",
        "CF.INSERT h6 nocreate items a; CF.INSERT h7 capacity 100 items ITEMS; CF.INSERT f ITEMS",
        "CF.INSERT f NOCREATE ITEMS; CF.INSERT f CAPACITY; CF.INSERT f CAPACITY 100",
        "CF.INSERT f NOCREATE NOCREATE; CF.INSERT f a b; CF.INSERT f BOGUS ITEMS a; CF.INSERT f",
        "CF.INSERT; CF.INSERTNX f ITEMS; CF.INSERTNX f; cf.insert f ITEMS; CF.INSERT f ITEMS a",
        "CF.INSERTNX f ITEMS a", *[Cmd("CF.INFO " + k, info) for k in ("f", "g", "h4")], "KEYS h*")),
    ("cf.insert options by first letter", steps(
        "CF.INSERT q1 I a; CF.INSERT q2 NOPE ITEMS a; CF.INSERT q3 CAP 100 ITEMS a",
        "CF.INSERTNX q4 Include a; KEYS q*")),
    ("cf.exists, mexists, count, del", steps(
        "CF.ADD f a; CF.ADD f a; CF.ADD f b; CF.EXISTS f a; CF.EXISTS f zz; CF.EXISTS nokey a",
        "CF.MEXISTS f a b zz; CF.MEXISTS nokey a b; CF.MEXISTS f a; CF.COUNT f a; CF.COUNT f b",
        "CF.COUNT f zz; CF.COUNT nokey a; CF.DEL f a; CF.COUNT f a; CF.DEL f a; CF.DEL f a",
        "CF.DEL f zz; CF.DEL nokey a; CF.EXISTS f a", Cmd("CF.INFO f", info),
        *arity("CF.EXISTS;CF.EXISTS f;CF.EXISTS f a b;CF.MEXISTS;CF.MEXISTS f;CF.COUNT f;"
               "CF.COUNT f a b;CF.DEL f;CF.DEL f a b"))),
    ("cf.info, scandump, loadchunk", steps(
        "CF.INFO nokey", *arity("CF.INFO;CF.INFO f x"), "CF.RESERVE f 1000; CF.INFO f x",
        "CF.SCANDUMP f 0; CF.ADD f a", Cmd("CF.SCANDUMP f 0", types), "CF.SCANDUMP nokey 0",
        "CF.SCANDUMP f x; CF.SCANDUMP f -1; CF.SCANDUMP f 1.5",
        *arity("CF.SCANDUMP f;CF.SCANDUMP f 0 0;CF.LOADCHUNK f 1;CF.LOADCHUNK f 1 x y"),
        "CF.LOADCHUNK g 0 x; CF.LOADCHUNK g x x; CF.LOADCHUNK g -1 x; CF.LOADCHUNK g 1 garbage",
        "CF.LOADCHUNK g 2 garbage; CF.LOADCHUNK f 1 garbage; CF.LOADCHUNK f 99999 garbage",
        "CF.LOADCHUNK f 2 ''; KEYS *; CF.COMPACT f; CF.COMPACT nokey; CF.COMPACT",
        Cmd("CF.DEBUG f", types), "CF.DEBUG nokey; CF.DEBUG")),
    ("dump and restore", steps(
        "CF.INSERT f ITEMS a b c", DumpRestore("f", "g"), "CF.EXISTS g a; CF.EXISTS g zz; CF.COUNT g b",
        Cmd("CF.INFO g", info), DumpRestore("f", "g"), DumpRestore("nokey", "h"),
        "CF.RESERVE e 1000 EXPANSION 0", DumpRestore("e", "e2"), "EXISTS e2; KEYS *")),
    ("another type", steps("SET k v; CF.ADD k x; TYPE k; CF.EXISTS k x; GET k")),
    ("keys", steps(
        "CF.ADD fa x; CF.ADD fb x; CF.ADD f1 x; CF.ADD ab x; CF.ADD ba x; CF.ADD c x; CF.ADD a*b x",
        "CF.ADD 'f?x' x; CF.ADD 'h\\x' x; DBSIZE",
        *[Cmd(["KEYS", p]) for p in
          ("*", "f?", "[ab]*", "a\\*b", "a*b", "f\\?x", "[^f]*", "[a-c]*", "h\\\\x", "nomatch", "", "[")],
        *[ScanAll("SCAN 0 " + o) for o in
          ("", "MATCH f*", "MATCH f* COUNT 1", "COUNT 2 MATCH [ab]*", "TYPE MBbloomCF", "TYPE string",
           "TYPE mbbloomcf", "TYPE bogus", "COUNT 1000")],
        "SCAN x; SCAN 0 COUNT 0; SCAN 0 COUNT x; SCAN 0 MATCH; SCAN 0 BOGUS 1; SCAN -1",
        Cmd("TYPE fa", note=True), "TYPE nokey; EXISTS fa fa nokey fb; EXISTS nokey; TOUCH fa nokey fa",
        "DEL fa nokey fb fa; UNLINK f1 nokey; DBSIZE; TTL ab; PTTL ab; TTL nokey; PTTL nokey",
        "PERSIST ab; PERSIST nokey; EXPIRETIME ab; EXPIRE nokey 100; FLUSHALL; RANDOMKEY; DBSIZE",
        "KEYS *; CF.ADD one x; RANDOMKEY",
        *arity("DEL;EXISTS;TYPE;TYPE a b;DBSIZE x;KEYS;KEYS a b;SCAN;RANDOMKEY x;TTL;PERSIST;"
               "TOUCH;UNLINK"))),
    ("expire", steps("CF.ADD f x; EXPIRE f 100; PEXPIRE f 100000")),
    ("flush", steps(
        "CF.ADD a x; FLUSHALL ASYNC; DBSIZE; CF.ADD a x; FLUSHALL SYNC; DBSIZE; CF.ADD a x; FLUSHDB",
        "DBSIZE; CF.ADD a x; FLUSHDB ASYNC; CF.ADD a x; FLUSHDB SYNC; DBSIZE; FLUSHALL bogus",
        "FLUSHALL async; FLUSHALL SYNC ASYNC; FLUSHDB x")),
    ("connection", steps(
        "PING; PING hi; PING a b; ping a b; ECHO hi; ECHO; ECHO a b; echo; SELECT 0; SELECT 1",
        "SELECT x; SELECT -1; SELECT; SELECT 0 1; AUTH x; AUTH default x; AUTH; FOO a b; foo; ''; ' '",
        "CLIENT SETNAME foo; CLIENT GETNAME; CLIENT SETNAME 'a b'; CLIENT SETNAME ''; CLIENT GETNAME",
        "CLIENT SETNAME; CLIENT SETNAME a b; CLIENT GETNAME x", Cmd("CLIENT ID", types),
        "CLIENT ID x; CLIENT SETINFO lib-name mylib; CLIENT SETINFO lib-ver 1.0; CLIENT SETINFO bogus x",
        "CLIENT; CLIENT bogus; client setname", Cmd("COMMAND COUNT", types, note=True),
        "COMMAND COUNT x; CONFIG GET save; CONFIG GET appendonly",
        Cmd("CONFIG GET maxmemory", note=True), Cmd("CONFIG GET databases", note=True),
        "CONFIG GET nosuch; CONFIG GET; CONFIG", Cmd("CONFIG GET save appendonly", sort_array),
        "CONFIG bogus", Cmd("QUIT", closes=True), "PING", Cmd("QUIT x", closes=True))),
    ("hello", steps(
        Cmd("HELLO", hello_modules), Cmd("HELLO 2", hello), "HELLO 4; HELLO 1; HELLO x",
        "HELLO 3 AUTH default wrong; HELLO 3 AUTH default; HELLO 3 SETNAME 'a b'; HELLO 3 BOGUS",
        Cmd("HELLO 2 SETNAME named", hello), "CLIENT GETNAME; HELLO 3 AUTH", Cmd("HELLO 3", hello),
        "PING", Cmd("HELLO 3 SETNAME other", hello), "CLIENT GETNAME", Cmd("RESET", closes=True),
        "CLIENT GETNAME; CF.EXISTS nokey a; SELECT 0; RESET x")),
    ("resp3", steps(
        Cmd("HELLO 3", hello), "CF.ADD f a; CF.ADD f b; CF.ADDNX f a; CF.ADDNX f c; CF.EXISTS f a",
        "CF.EXISTS f zz; CF.EXISTS nokey a; CF.MEXISTS f a zz; CF.MEXISTS nokey a",
        "CF.INSERT f ITEMS a d; CF.INSERTNX f ITEMS a e; CF.INSERT g NOCREATE ITEMS a",
        "CF.COUNT f a; CF.COUNT nokey a", Cmd("CF.INFO f", info),
        "CF.DEL f a; CF.DEL f zz; CF.DEL nokey a; CF.RESERVE e 1000; CF.SCANDUMP e 0",
        Cmd("CF.SCANDUMP f 0", types), "CF.RESERVE f 10; CF.ADD f; EXISTS f f nokey; TYPE f; TTL f",
        "KEYS *", ScanAll("SCAN 0"), Cmd("SCAN 0 COUNT 1000", types),
        "DBSIZE; CLIENT GETNAME; CONFIG GET save; CONFIG GET nosuch; PING; PING x; ECHO x; FOO",
        "DEL f e; RANDOMKEY")),
    ("inline", [Raw(b) for b in (
        b"CF.ADD f a\r\n", b"CF.EXISTS f a\r\n", b'CF.ADD f "a b"\r\n', b"CF.EXISTS f 'a b'\r\n",
        b"CF.EXISTS f a b\r\n", b'ECHO "x\\x41y\\n"\r\n', b"PING\n", b"  PING   hi  \r\n", b"\r\n",
        b"PING\r\nPING x\r\n", b'ECHO ""\r\n', b"cf.add\r\n", b'ECHO "abc\r\n', b"PING\r\n",
        b'ECHO "a"b\r\n')]),
    ("protocol errors", [Raw(b) for b in (
        b"*1\r\n$abc\r\n", b"*x\r\n", b"*-1\r\nPING\r\n", b"*0\r\nPING\r\n", b"*2\r\n$4\r\nECHO\r\n$-1\r\n",
        b"*1\r\nPING\r\n", b"*1\r\n$4\r\nPINGxx\r\n", b"*2\r\n$4\r\nECHO\r\n$9999999999\r\n",
        b"*99999999999\r\n", b"*1\r\n$-5\r\n", b"*1\r\n$\r\n", b"*\r\n", b"*2\r\n$4\r\nPING\r\n:1\r\n")]),
]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    try:  # nothing may answer there already
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        sys.exit("port %d is in use" % port)
    except OSError:
        return port


def start(argv, port, log):
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s:\n%s" % (argv[0], proc.returncode, open(log.name).read()[-2000:]))
        c = Conn(port)
        try:
            c.send(encode(["PING"]))
            if c.read() == ("simple", "PONG"):
                return proc
        except (OSError, Closed):
            time.sleep(0.05)
        finally:
            c.drop()
    raise RuntimeError("%s did not answer on port %d" % (argv[0], port))


def run_case(steps_, ports):
    """Each step's replies from both servers, on a fresh connection each
    after FLUSHALL."""
    conns = [Conn(p) for p in ports]
    for c in conns:
        c.send(encode(["FLUSHALL"]))
        assert c.reply() == ("simple", "OK")
    out = [(st, [st.run(c) for c in conns]) for st in steps_]
    for c in conns:
        c.drop()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--module", default=os.environ.get("REDISBLOOM_MODULE")
                    or os.path.join(os.path.dirname(ROOT), "ext", "redisbloom-v2.6.28.so"))
    ap.add_argument("--server", default=os.path.join(ROOT, "target", "release", "cuckoo-server"))
    ap.add_argument("-v", "--verbose", action="store_true", help="print every step")
    opt = ap.parse_args()
    redis = shutil.which("redis-server")
    missing = [m for m, ok in (("redis-server", redis), ("RedisBloom module " + opt.module,
                                                        os.path.isfile(opt.module))) if not ok]
    if missing:
        print("skipped: no %s" % " and no ".join(missing))
        return 0
    if not os.path.isfile(opt.server):
        sys.exit("no %s: cargo build --release -p cuckoo-server" % opt.server)

    tmp = tempfile.mkdtemp(prefix="cf-differential-")
    procs, logs = [], []
    try:
        ports = [free_port()]
        while len(ports) < 2:
            ports += [p for p in [free_port()] if p not in ports]
        logs += [open(os.path.join(tmp, n + ".log"), "w") for n in ("redis", "ours")]
        dirs = [os.path.join(tmp, n) for n in ("redis", "ours")]
        for d in dirs:
            os.mkdir(d)
        procs.append(start([redis, "--port", str(ports[0]), "--save", "", "--appendonly", "no",
                            "--dir", dirs[0], "--loadmodule", os.path.abspath(opt.module)], ports[0], logs[0]))
        procs.append(start([opt.server, "--port", str(ports[1]), "--save", "", "--dir", dirs[1]],
                           ports[1], logs[1]))
        total, unexpected, allowed, notes = 0, [], [], []
        for name, steps_ in CASES:
            for st, (theirs, ours) in run_case(steps_, ports):
                total += 1
                norm = st.norm or (lambda v: v)
                key = (name, st.label())
                row = "[%s] %s\n    redis: %s\n    ours:  %s" % (name, key[1], show(theirs), show(ours))
                if norm(theirs) != norm(ours):
                    if key in ALLOWED:
                        allowed.append(row + "\n    by design: " + ALLOWED[key])
                    else:
                        unexpected.append(row + ("\n    (compared: %s / %s)" % (show(norm(theirs)), show(norm(ours)))
                                                 if st.norm else ""))
                elif st.note or opt.verbose:
                    notes.append(row)
        for title, rows in (("recorded (same where compared)", notes), ("by design", allowed),
                            ("DIFFERENT", unexpected)):
            if rows:
                print("== %s: %d\n%s\n" % (title, len(rows), "\n".join(rows)))
        print("%d steps, %d differences by design, %d other differences"
              % (total, len(allowed), len(unexpected)))
        for p, log in zip(procs, logs):
            if p.poll() is not None:
                print("a server exited during the run (code %s):\n%s" % (p.returncode, open(log.name).read()[-2000:]))
                return 1
        return 1 if unexpected else 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for log in logs:
            log.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
