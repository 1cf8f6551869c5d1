#!/usr/bin/env bash
# Miri and ThreadSanitizer runs for lockfree-cuckoo-filter.
#
# A local tool, deliberately not part of CI: both need a nightly toolchain with
# the `miri` and `rust-src` components. Where those are missing the script says
# what is missing and how to get it, and exits 0. It exits non-zero only when a
# run it could start fails.
#
#   stress/sanitizers.sh            # Miri, then ThreadSanitizer
#   stress/sanitizers.sh miri       # only Miri
#   stress/sanitizers.sh tsan       # only ThreadSanitizer
#
# Environment: TOOLCHAIN (default nightly), MIRI_SEEDS (schedules per Miri
# stress run, default 4), TSAN_SECONDS (default 5). MIRIFLAGS, RUSTFLAGS and
# TSAN_OPTIONS are appended to, not replaced.
#
# What runs:
# * Miri, the library's unit tests (`--lib`), under strict provenance: checks
#   the unsafe allocation of the table (alloc_zeroed + Box::from_raw) and every
#   bit-twiddling path for UB. Ten tests are skipped, each too long under
#   Miri (the two timed were unfinished after 12 and 25 minutes) and checking
#   nothing Miri sees that the others do not:
#   `zero_lanes_is_exact` (300 000 iterations of integer arithmetic),
#   `grown_from_1000_to_4m_items` (4 M inserts), `grows_and_keeps_everything`
#   (100 000 inserts; unfinished after 25 minutes), and the two many-threaded
#   counting tests (`concurrent_growth_loses_nothing...`, 12 minutes and
#   unfinished; `owned_and_shared_shards...`, 27 threads) and the count's
#   `threads_that_come_and_go...` (320 threads, 8 M counts), and the three
#   tests of the growable filter's summary that grow a filter to seven tables
#   or build tables of up to 270 000 buckets, and the partial covering's test
#   (nine tables; over 10 minutes); the stress runs
#   below are Miri's concurrent check. Without the rayon feature:
#   crossbeam-epoch (under rayon's deque) casts integers to pointers, which
#   strict provenance refuses, and breaks Stacked Borrows; the bulk-loading
#   tests, which use rayon, run after, under Tree Borrows (as crossbeam's own
#   Miri runs do).
# * Miri, a tiny stress run (3 threads, an 88-slot table held at 95 % load, so
#   inserts relocate), with 16- and 8-bit fingerprints (8-bit: two buckets share
#   a word), over MIRI_SEEDS schedules: Miri's data-race detector and its
#   weak-memory emulation see every atomic access of the protocol, and the
#   stress checker checks the answers.
# * ThreadSanitizer: the stress binary, std rebuilt with TSan (-Zbuild-std),
#   4 threads for TSAN_SECONDS seconds on a 100 000-item table, then its
#   growable mode (a filter grown to 190 000 items: growth and covering), then
#   its collision mode for 15 s (one pass over its 144 kinds of round:
#   colliding keys, batch lookups, insert_if_absent, clears). Separate target
#   directory (target/tsan), so normal builds are not invalidated.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

TOOLCHAIN=${TOOLCHAIN:-nightly}
WHAT=${1:-all}
case "$WHAT" in
    all | miri | tsan) ;;
    -h | --help)
        sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: $0 [all|miri|tsan]" >&2
        exit 2
        ;;
esac

note() { printf 'sanitizers.sh: %s\n' "$*"; }
skip_all() {
    note "$*"
    note "nothing run (not an error)."
    exit 0
}

command -v rustup >/dev/null 2>&1 ||
    skip_all "rustup not found: Miri and ThreadSanitizer need a rustup-managed nightly toolchain."
rustup run "$TOOLCHAIN" rustc --version >/dev/null 2>&1 ||
    skip_all "no '$TOOLCHAIN' toolchain; install one with: rustup toolchain install nightly --component miri,rust-src"
installed=$(rustup +"$TOOLCHAIN" component list --installed 2>/dev/null)
have() { grep -q "^$1" <<<"$installed"; }
host=$(rustc +"$TOOLCHAIN" -vV | sed -n 's/^host: //p')
note "toolchain: $(rustc +"$TOOLCHAIN" --version), host $host"

ran=()
skipped=()
failed=()

run_step() { # name, command...
    local name=$1
    shift
    note "== $name"
    if "$@"; then
        ran+=("$name: ok")
    else
        ran+=("$name: FAILED")
        failed+=("$name")
    fi
}

miri() {
    if ! have miri || ! have rust-src; then
        skipped+=("Miri: the '$TOOLCHAIN' toolchain lacks the miri and/or rust-src component (rustup +$TOOLCHAIN component add miri rust-src)")
        return
    fi
    # Strict provenance and Stacked Borrows without rayon: rayon's deque pins
    # crossbeam-epoch, whose tagged pointers are integers cast back to
    # pointers (refused by strict provenance), and whose intrusive list breaks
    # Stacked Borrows (crossbeam-rs/crossbeam#545; crossbeam's own CI runs
    # Miri with Tree Borrows). The rayon tests (bulk loading) then run on
    # their own, as crossbeam's do.
    local flags="-Zmiri-strict-provenance ${MIRIFLAGS:-}"
    run_step "miri: library unit tests (no rayon, strict provenance)" env MIRIFLAGS="$flags" \
        cargo +"$TOOLCHAIN" miri test -p lockfree-cuckoo-filter --lib --no-default-features \
        -- --skip zero_lanes_is_exact --skip grown_from_1000_to_4m_items \
        --skip grows_and_keeps_everything --skip concurrent_growth_loses_nothing \
        --skip owned_and_shared_shards_lose_no_count --skip threads_that_come_and_go_lose_no_count \
        --skip older_tables_behind_the_summary_miss_nothing --skip an_insert_into_a_covered_table \
        --skip an_entry_records_its_items_key \
        --skip a_reading_that_cannot_be_believed_ends_the_covering_there
    run_step "miri: library unit tests of bulk loading (rayon, Tree Borrows)" \
        env MIRIFLAGS="-Zmiri-tree-borrows ${MIRIFLAGS:-}" \
        cargo +"$TOOLCHAIN" miri test -p lockfree-cuckoo-filter --lib -- bulk::
    local seeds=${MIRI_SEEDS:-4}
    for bits in 16 8; do
        run_step "miri: stress, $bits-bit fingerprints, $seeds schedules" \
            env MIRIFLAGS="-Zmiri-many-seeds=0..$seeds ${MIRIFLAGS:-}" \
            cargo +"$TOOLCHAIN" miri run -p stress -- --threads 3 --ops 300 --capacity 64 \
            --load 0.95 --bits "$bits" --shared-pct 20 --fpr-probes 1000 --seconds 100000 --quiet
    done
}

tsan() {
    case "$host" in
        x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu | x86_64-apple-darwin | aarch64-apple-darwin) ;;
        *)
            skipped+=("ThreadSanitizer: not supported by rustc on $host")
            return
            ;;
    esac
    if ! have rust-src; then
        skipped+=("ThreadSanitizer: needs -Zbuild-std, hence the rust-src component (rustup +$TOOLCHAIN component add rust-src)")
        return
    fi
    run_step "tsan: stress, 4 threads, ${TSAN_SECONDS:-5} s" \
        env RUSTFLAGS="-Zsanitizer=thread ${RUSTFLAGS:-}" \
        TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
        cargo +"$TOOLCHAIN" run -Zbuild-std --target "$host" --target-dir target/tsan --release \
        -p stress -- --threads 4 --seconds "${TSAN_SECONDS:-5}" --capacity 100000 --quiet
    run_step "tsan: growable stress (growth and covering), 4 threads, ${TSAN_SECONDS:-5} s" \
        env RUSTFLAGS="-Zsanitizer=thread ${RUSTFLAGS:-}" \
        TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
        cargo +"$TOOLCHAIN" run -Zbuild-std --target "$host" --target-dir target/tsan --release \
        -p stress -- --growable --threads 4 --seconds "${TSAN_SECONDS:-5}" --capacity 200000 --quiet
    run_step "tsan: collision stress (every call, clears, several stripes), 4 threads, 15 s" \
        env RUSTFLAGS="-Zsanitizer=thread ${RUSTFLAGS:-}" \
        TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
        cargo +"$TOOLCHAIN" run -Zbuild-std --target "$host" --target-dir target/tsan --release \
        -p stress -- --collision --threads 4 --seconds 15
}

[[ $WHAT == all || $WHAT == miri ]] && miri
[[ $WHAT == all || $WHAT == tsan ]] && tsan

note "== summary"
for r in "${ran[@]}"; do note "  ran     $r"; done
for s in "${skipped[@]}"; do note "  skipped $s"; done
if ((${#ran[@]} == 0)); then
    note "nothing could run here (not an error)."
    exit 0
fi
if ((${#failed[@]} > 0)); then
    note "FAILED: ${failed[*]}"
    exit 1
fi
note "all runs passed."
