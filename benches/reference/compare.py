#!/usr/bin/env python3
"""This crate beside the paper's C++ reference (efficient/cuckoofilter) on the
reference's own benchmark, bulk-insert-and-query, on this machine, in one run.

    git clone https://github.com/efficient/cuckoofilter ../ext/cuckoofilter   # once
    python3 benches/reference/compare.py [--source DIR] [--rounds N] [--quick]

Builds, outside the repository (in a temporary folder):

* the reference's benchmarks/bulk-insert-and-query.cc with g++ -O3
  -march=native, as its Makefile does but for the CPU flag and warnings. The file and its
  timed code are used as they are; the one edit is to a copy of
  benchmarks/random.h, whose keys and query shuffles draw from
  std::random_device: here that is a hardware random instruction (RDRAND or
  RDSEED) per 32 bits, and a run of 1 M keys spends minutes in it (untimed,
  but slow to sit through). The copy draws from a std::mt19937 seeded by
  std::random_device instead: the same 32-bit draws.
* this crate's `bulk_insert_and_query` example, with -C target-cpu=native
  and LTO, into target/native.

Then for 1 M keys (the reference's Cuckoo16 and Cuckoo8 rows beside ours at
16 and 8 bits) and 30 M keys (Cuckoo16 and 16 bits; --quick: 1 M only) it
runs the two binaries --rounds times, alternating which goes first, and
prints the medians and ours / C++ as a markdown table: inserts, and
`contains` and `contains_batch` at each share of present keys (the C++
filter has one lookup; both of ours are set beside it). This machine's
timings move from run to run; compare the ratios.

Without a checkout of the reference, or without g++ or OpenSSL's headers
(the reference's hashutil.cc includes them), it says so and exits 0 having
measured nothing.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARES = ["0 %", "25 %", "50 %", "75 %", "100 %"]
# Keys, and the fingerprint widths compared at that many keys.
CONFIGS = [(1_000_000, (16, 8)), (30_000_000, (16,))]

RANDOM_DEVICE = "::std::random_device random;"
SEEDED = "::std::random_device seed; ::std::mt19937 random(seed());"


def skip(why):
    print("reference comparison skipped: " + why)
    sys.exit(0)


def build_reference(source, work):
    """Builds the reference's benchmark with the seeded random.h; its path."""
    bench = os.path.join(source, "benchmarks")
    for name in ("bulk-insert-and-query.cc", "timing.h"):
        shutil.copy(os.path.join(bench, name), work)
    with open(os.path.join(bench, "random.h")) as f:
        text = f.read()
    if text.count(RANDOM_DEVICE) != 2:
        sys.exit("%s: random.h is not the one this script knows (two %r)" % (bench, RANDOM_DEVICE))
    with open(os.path.join(work, "random.h"), "w") as f:
        f.write(text.replace(RANDOM_DEVICE, SEEDED))
    exe = os.path.join(work, "bulk-insert-and-query")
    cmd = [os.environ.get("CXX", "g++"), "-fno-strict-aliasing", "-std=c++11", "-O3", "-DNDEBUG",
           "-march=native", "-w", "-I" + work, "-I" + os.path.join(source, "src"),
           os.path.join(work, "bulk-insert-and-query.cc"), os.path.join(source, "src", "hashutil.cc"),
           "-o", exe, "-lssl", "-lcrypto"]
    subprocess.run(cmd, check=True)
    return exe


def build_ours():
    env = dict(os.environ, RUSTFLAGS="-C target-cpu=native", CARGO_PROFILE_RELEASE_LTO="true",
               CARGO_TARGET_DIR=os.path.join(ROOT, "target", "native"))
    subprocess.run(["cargo", "build", "--release", "-p", "benchmarks", "--example",
                    "bulk_insert_and_query"], cwd=ROOT, env=env, check=True)
    return os.path.join(ROOT, "target", "native", "release", "examples", "bulk_insert_and_query")


def run_reference(exe, items):
    """{bits: {'adds': M/s, '0 %': M/s, ...}} from the Cuckoo16 and Cuckoo8 rows."""
    out = subprocess.run([exe, str(items)], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        fields = line.split()
        # CuckooB  adds  find0 .. find100  ε%  bits/item  optimal  wasted%
        if fields and fields[0] in ("Cuckoo16", "Cuckoo8"):
            row = {"adds": float(fields[1])}
            row.update({s: float(v) for s, v in zip(SHARES, fields[2:7])})
            row["fpr"] = float(fields[7].rstrip("%")) / 100
            row["bits/item"] = float(fields[8])
            rows[int(fields[0][len("Cuckoo"):])] = row
    return rows


def run_ours(exe, items, widths):
    """{bits: {'adds': M/s, '0 %': contains M/s, '0 % batch': M/s, ...}} from our rows."""
    rows = {}
    for bits in widths:
        out = subprocess.run([exe, "--items", str(items), "--bits", str(bits)],
                             capture_output=True, text=True, check=True).stdout
        line = [l for l in out.splitlines() if l.startswith("| %d |" % items)][-1]
        cells = [c.strip() for c in line.strip("|").split("|")]
        # items | fingerprint | adds | 0 % .. 100 % (contains / batch) | fpr % | bits/item
        row = {"adds": float(cells[2])}
        for s, c in zip(SHARES, cells[3:8]):
            plain, batch = c.split("/")
            row[s] = float(plain)
            row[s + " batch"] = float(batch)
        row["fpr"] = float(cells[8].rstrip(" %")) / 100
        row["bits/item"] = float(cells[9])
        rows[bits] = row
    return rows


def span(values, fmt, dash):
    """'least<dash>most' of `values`, each formatted by `fmt`."""
    return fmt % min(values) + dash + fmt % max(values)


def medians(rows):
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default=os.path.join(os.path.dirname(ROOT), "ext", "cuckoofilter"),
                    help="a checkout of efficient/cuckoofilter (default: ../ext/cuckoofilter)")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each binary per configuration")
    ap.add_argument("--quick", action="store_true", help="1 M keys only")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")

    if not os.path.isfile(os.path.join(args.source, "benchmarks", "bulk-insert-and-query.cc")):
        skip("no checkout of efficient/cuckoofilter at %s (--source DIR, or git clone "
             "https://github.com/efficient/cuckoofilter there)" % args.source)
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        skip("no C++ compiler (g++, or CXX)")
    if not any(os.path.isfile(os.path.join(d, "openssl", "evp.h"))
               for d in ("/usr/include", "/usr/local/include")):
        skip("no OpenSSL headers (apt-get install libssl-dev): the reference's hashutil.cc includes them")

    ours = build_ours()
    with tempfile.TemporaryDirectory(prefix="cuckoo-reference-") as work:
        reference = build_reference(os.path.abspath(args.source), work)
        configs = CONFIGS[:1] if args.quick else CONFIGS
        results = []
        for items, widths in configs:
            theirs, mine = [], []
            for r in range(args.rounds):
                print("%d keys: round %d of %d" % (items, r + 1, args.rounds), file=sys.stderr)
                pair = [lambda: theirs.append(run_reference(reference, items)),
                        lambda: mine.append(run_ours(ours, items, widths))]
                for run in pair if r % 2 == 0 else reversed(pair):
                    run()
            for bits in widths:
                results.append((items, bits, medians([t[bits] for t in theirs]),
                                medians([m[bits] for m in mine])))

    print("Ours / C++ (medians of %d alternated runs each; millions of operations per second "
          "in brackets, ours then C++):\n" % args.rounds)
    print("| | inserts | `contains` | `contains_batch` |")
    print("|---|--:|--:|--:|")

    def rates(values):
        return span(values, "%.0f", "–")

    for items, bits, c, o in results:
        plain = [o[s] for s in SHARES]
        batch = [o[s + " batch"] for s in SHARES]
        theirs = [c[s] for s in SHARES]

        def ratios(ours):
            return span([a / b for a, b in zip(ours, theirs)], "%.2f", " – ")

        print("| %d-bit, %s keys | %.2f (%.1f / %.1f) | %s (%s / %s) | %s (%s) |" % (
            bits, "{:,}".format(items).replace(",", " "), o["adds"] / c["adds"], o["adds"],
            c["adds"], ratios(plain), rates(plain), rates(theirs), ratios(batch), rates(batch)))
    print()
    for items, bits, c, o in results:
        print("%d-bit, %d keys: false positives %.4f %% ours, %.4f %% C++; bits per item %.2f ours, "
              "%.2f C++" % (bits, items, 100 * o["fpr"], 100 * c["fpr"], o["bits/item"], c["bits/item"]))


if __name__ == "__main__":
    main()
