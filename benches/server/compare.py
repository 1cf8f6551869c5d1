#!/usr/bin/env python3
"""cuckoo-server against Redis with RedisBloom, on this machine, in one run.

    cargo build --release -p cuckoo-server
    bash benches/server/build-redisbloom.sh          # once; prints the module
    python3 benches/server/compare.py [--module PATH] [--quick]

Each measurement runs on both servers, one after the other, alternating which
goes first, so that both see the same machine. What it measures:

* the matrix: redis-benchmark's requests per second for CF.ADD, CF.EXISTS of
  items present (hits) and absent (misses), and CF.MEXISTS of 100 items
  (reported in items per second), with 1, 4, 16 and 50 clients, pipelines of
  1 and 16; and for each cell the server's CPU time (utime + stime from
  /proc/PID/stat), as operations per server CPU-second; each cell runs
  --rounds times on each server (alternating) and shows the median;
* memory per item: 10^7 distinct items added to `CF.RESERVE mem 10000000`,
  the filter's size (CF.INFO Size) over the items, and the false-positive
  rate measured with 10^6 items never added;
* a probe client's latency (one PING at a time, each after an INFO on a
  second connection) for --probe-seconds (30) with no save, and as long
  while BGSAVE runs back to back, in one-second slices that alternate
  between the two, over the 10^7-item filter; three runs each; and how
  long each save took.

Without redis-server or the module, the comparison is skipped with a
message and only cuckoo-server is measured. Needs redis-benchmark
(apt-get install redis-tools) and Python 3; no Python packages.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

# The range of redis-benchmark's __rand_int__ (12 digits, zero-padded), and
# how many of those the hit/miss filter holds: all of them.
KEYSPACE = 1_000_000


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Client:
    """A minimal RESP2 client: enough to load items and read replies."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return int(rest) if kind == b":" else rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 20)
            data, self.buf = self.buf[:n], self.buf[n + 2 :]
            return data
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        raise RuntimeError("unexpected reply %r" % line)

    def call(self, *args):
        self.sock.sendall(resp(*args))
        return self.read()

    def pipeline(self, commands):
        self.sock.sendall(b"".join(resp(*c) for c in commands))
        return [self.read() for _ in commands]


class Server:
    def __init__(self, name, argv, port, cwd):
        self.name, self.port = name, port
        self.log = open(os.path.join(cwd, name + ".log"), "w")
        self.proc = subprocess.Popen(argv, cwd=cwd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while True:
            try:
                Client(port).call("PING")
                break
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("%s did not start (see %s)" % (name, self.log.name))
                time.sleep(0.05)
        self.client = Client(port)

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def stop(self):
        try:
            self.client.sock.sendall(resp("SHUTDOWN", "NOSAVE"))
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def key(i):
    return b"%012d" % i


def load(server, filter_name, keys, batch=1000):
    """Adds `keys` through pipelined CF.INSERT ... ITEMS."""
    c = server.client
    commands = []
    for start in range(0, len(keys), batch):
        commands.append(("CF.INSERT", filter_name, "NOCREATE", "ITEMS", *keys[start : start + batch]))
        if len(commands) == 16:
            c.pipeline(commands)
            commands = []
    if commands:
        c.pipeline(commands)


def bench(server, args, requests, clients, pipeline, keyspace):
    """redis-benchmark's requests per second, and the server's CPU seconds."""
    cpu = server.cpu_seconds()
    out = subprocess.run(
        ["redis-benchmark", "-p", str(server.port), "-c", str(clients), "-P", str(pipeline),
         "-n", str(requests), "-r", str(keyspace), "--csv", *args],
        capture_output=True, text=True, check=True,
    ).stdout
    cpu = server.cpu_seconds() - cpu
    line = [l for l in out.splitlines() if l and not l.startswith('"test"')][-1]
    rps = float(line.split(",")[1].strip('"'))
    return rps, cpu


# (label, command, items per request, keyspace). CF.ADD draws from a range
# a hundred times larger than its requests, so that few items are added
# twice (a filter holds at most 8 copies of one item).
MATRIX_COMMANDS = [
    ("CF.ADD", ["CF.ADD", "adds", "__rand_int__"], 1, 100 * KEYSPACE),
    ("CF.EXISTS hit", ["CF.EXISTS", "f", "__rand_int__"], 1, KEYSPACE),
    ("CF.EXISTS miss", ["CF.EXISTS", "f", "miss:__rand_int__"], 1, KEYSPACE),
    ("CF.MEXISTS 100", ["CF.MEXISTS", "f"] + ["__rand_int__"] * 100, 100, KEYSPACE),
]


def requests_for(clients, pipeline, items, quick):
    n = {1: 40_000, 4: 80_000, 16: 100_000, 50: 100_000}[clients]
    n *= 8 if pipeline > 1 else 1
    n //= 20 if items > 1 else 1
    return n // (5 if quick else 1)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def probe(server, seconds, slice_seconds=1.0):
    """PINGs one at a time, in slices of `slice_seconds` that alternate
    between no save and BGSAVEs back to back on another connection (a
    saving slice ends when its last save does), until each kind has run
    `seconds`. Latencies in ms without a save and during saves, and the
    saves' durations in ms.

    The slices alternate so that both kinds see the same machine: on a
    shared machine the tail of a quiet window moves severalfold from one
    half-minute to the next, and two windows run one after the other
    measure that drift as much as the save. Both kinds send the same
    requests but for the BGSAVEs: an `INFO persistence` on the other
    connection before each PING (it tells a saving slice when a save
    ended)."""
    c = Client(server.port)
    admin = Client(server.port)
    latencies = {False: [], True: []}
    spent = {False: 0.0, True: 0.0}
    saves = []
    saving = False
    while min(spent.values()) < seconds:
        start = time.time()
        end = start + slice_seconds
        save_started = None
        while time.time() < end or save_started is not None:
            if saving and save_started is None and time.time() < end:
                try:
                    admin.call("BGSAVE")
                    save_started = time.time()
                except RuntimeError:
                    pass
            else:
                info = admin.call("INFO", "persistence")
                if save_started is not None and b"rdb_bgsave_in_progress:0" in info:
                    saves.append((time.time() - save_started) * 1e3)
                    save_started = None
            t = time.perf_counter()
            c.call("PING")
            latencies[saving].append((time.perf_counter() - t) * 1e3)
            time.sleep(0.0005)
        spent[saving] += time.time() - start
        saving = not saving
    return latencies[False], latencies[True], saves


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default=os.path.join(os.path.dirname(ROOT), "ext", "redisbloom-v2.6.28.so"))
    ap.add_argument("--server", default=os.path.join(ROOT, "target", "release", "cuckoo-server"))
    ap.add_argument("--quick", action="store_true", help="fewer requests and items (a smoke run)")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs of each matrix cell per server, alternating; the median is shown")
    ap.add_argument("--probe-seconds", type=float, default=30,
                    help="seconds of probing of each kind, without and during saves (default "
                         "30: about 37 000 PINGs each, so that p99.9 is not a few stray samples)")
    ap.add_argument("--parts", default="matrix,memory,probe",
                    help="which measurements, comma-separated (default: all three)")
    opts = ap.parse_args()
    if not shutil.which("redis-benchmark"):
        sys.exit("redis-benchmark is not installed (apt-get install redis-tools)")
    work = tempfile.mkdtemp(prefix="cuckoo-compare-")
    servers = [Server("cuckoo-server", [opts.server, "--port", "7101", "--save", "", "--dir", work], 7101, work)]
    if shutil.which("redis-server") and os.path.exists(opts.module):
        servers.append(Server("redis+redisbloom",
                              ["redis-server", "--port", "7102", "--save", "", "--dir", work,
                               "--loadmodule", opts.module], 7102, work))
    else:
        print("note: redis-server or %s is missing: only cuckoo-server is measured "
              "(build the module with benches/server/build-redisbloom.sh)" % opts.module)
    results = {"machine": os.uname().nodename, "cores": os.cpu_count(), "matrix": [], "memory": {}, "probe": {}}
    try:
        run(servers, opts, results)
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)


def run(servers, opts, results):
    for s in servers:
        for name in ("f", "adds", "mem"):
            s.client.call("CF.RESERVE", name, 10_000_000)
        load(s, "f", [key(i) for i in range(KEYSPACE)])
    parts = opts.parts.split(",")
    if "matrix" in parts:
        matrix(servers, opts, results)
    if "memory" in parts:
        memory(servers, opts, results)
    if "probe" in parts:
        probes(servers, results, opts.probe_seconds)


def matrix(servers, opts, results):
    print("\n## Matrix (requests/s; CF.MEXISTS: items/s; ops per server CPU-second; "
          "median of %d runs each)\n" % opts.rounds)
    names = [s.name for s in servers]
    header = "| command | clients | pipeline | " + " | ".join(
        "%s ops/s | %s ops/CPU-s" % (n, n) for n in names)
    if len(servers) == 2:
        header += " | ratio ops/s | ratio ops/CPU-s"
    print(header + " |")
    print("|---|--:|--:|" + "--:|" * (2 * len(names) + (2 if len(servers) == 2 else 0)))
    flip = False
    for label, args, items, keyspace in MATRIX_COMMANDS:
        for clients in (1, 4, 16, 50):
            for pipeline in (1, 16):
                n = requests_for(clients, pipeline, items, opts.quick)
                runs = {s.name: [] for s in servers}
                for _ in range(opts.rounds):
                    order = servers[::-1] if flip else servers
                    flip = not flip
                    for s in order:
                        rps, cpu = bench(s, args, n, clients, pipeline, keyspace)
                        runs[s.name].append((rps * items, n * items / cpu if cpu > 0 else float("inf")))
                # The median round of each server, by rate and by CPU apart.
                row = {name: (percentile([r[0] for r in rs], 0.5), percentile([r[1] for r in rs], 0.5))
                       for name, rs in runs.items()}
                results["matrix"].append({"command": label, "clients": clients, "pipeline": pipeline,
                                          "requests": n, "rounds": runs, "median": row})
                cells = " | ".join("%.0f | %.0f" % row[name] for name in names)
                line = "| %s | %d | %d | %s" % (label, clients, pipeline, cells)
                if len(servers) == 2:
                    a, b = row[names[0]], row[names[1]]
                    line += " | %.2f | %.2f" % (a[0] / b[0], a[1] / b[1])
                print(line + " |", flush=True)



def memory(servers, opts, results):
    items_mem = 1_000_000 if opts.quick else 10_000_000
    print("\n## Memory per item (%d distinct items into CF.RESERVE 10000000)\n" % items_mem)
    print("| server | filter | items | bytes (CF.INFO Size) | bits/item | filters | false positives |")
    print("|---|---|--:|--:|--:|--:|--:|")
    keys = [b"m%d" % i for i in range(items_mem)]
    absent = [b"absent%d" % i for i in range(1_000_000)]
    for s in servers:
        variants = [("mem", "CF.RESERVE mem 10000000")]
        if s.name == "cuckoo-server":
            # The fixed-size filter at RedisBloom's rate: the layout the rate picks.
            s.client.call("CF.RESERVE", "mem_fixed", 10_000_000, "EXPANSION", 0, "ERROR_RATE", 0.01)
            variants.append(("mem_fixed", "... EXPANSION 0 ERROR_RATE 0.01"))
        for name, label in variants:
            load(s, name, keys)
            info = s.client.call("CF.INFO", name)
            fields = dict(zip([x if isinstance(x, str) else x.decode() for x in info[::2]], info[1::2]))
            hits = 0
            for start in range(0, len(absent), 1000):
                hits += sum(s.client.call("CF.MEXISTS", name, *absent[start : start + 1000]))
            size, items = fields["Size"], fields["Number of items inserted"]
            results["memory"]["%s %s" % (s.name, label)] = {
                "items": items, "bytes": size, "bits_per_item": size * 8 / items,
                "filters": fields["Number of filters"], "fp_rate": hits / len(absent)}
            print("| %s | `%s` | %d | %d | %.1f | %d | %.3f %% |" % (
                s.name, label, items, size, size * 8 / items, fields["Number of filters"],
                100 * hits / len(absent)), flush=True)



def probes(servers, results, seconds):
    print("\n## Probe latency (ms, one PING at a time; %g s of each kind in alternating 1 s slices; "
          "over the filters above)\n" % seconds)
    print("| server | run | p50 | p99 | p99.9 | max | p50 saving | p99 saving | p99.9 saving | max saving | saves | save ms (median) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for run_no in range(1, 4):
        for s in (servers if run_no % 2 else servers[::-1]):
            quiet, busy, saves = probe(s, seconds)
            stats = [percentile(quiet, p) for p in (0.5, 0.99, 0.999)] + [max(quiet)]
            stats += [percentile(busy, p) for p in (0.5, 0.99, 0.999)] + [max(busy)]
            median_save = percentile(saves, 0.5) if saves else float("nan")
            results["probe"].setdefault(s.name, []).append({"quiet": stats[:4], "saving": stats[4:],
                                                           "saves": len(saves), "save_ms": saves})
            print("| %s | %d | %s | %d | %.0f |" % (s.name, run_no, " | ".join("%.3f" % x for x in stats),
                                                   len(saves), median_save), flush=True)


if __name__ == "__main__":
    main()
