#!/usr/bin/env bash
# Runs the loom models of the filter's concurrency protocol (loom-tests/tests).
#
#   loom-tests/run.sh [extra cargo test args, e.g. --test path, or -- a name filter]
#
# Environment (all optional):
#   LOOM_MAX_PREEMPTIONS  preemption bound (default 2, the CI setting; 3 is
#                         slower but fine locally)
#   CARGO_TARGET_DIR      default target/loom: the cfg changes how the filter
#                         is built, so it must not share the normal target dir
#   LOOM_LOG, LOOM_LOCATION, LOOM_CHECKPOINT_FILE, ...  see loom's docs
#
# The cfg is the crate's own, `lockfree_cuckoo_filter_loom` (as crossbeam has
# `crossbeam_loom`), not a bare `loom`: that one would also switch every other
# crate in the build that reads it (e.g. sharded-slab, under loom's own
# tracing) to its loom mode.
#
# Release mode, with debug assertions on, so that the crate's own
# `debug_assert!`s (e.g. that a move's destination is its source's alternate) are
# checked in every execution loom explores.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }--cfg lockfree_cuckoo_filter_loom"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
export CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true
export CARGO_PROFILE_BENCH_DEBUG_ASSERTIONS=true

echo "loom: LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS CARGO_TARGET_DIR=$CARGO_TARGET_DIR" >&2
# The models are `test = false` (loom-tests/Cargo.toml): select them all by
# name, unless the arguments name some with --test.
targets=(--test '*')
for arg in "$@"; do
    [[ $arg == -- ]] && break
    [[ $arg == --test || $arg == --test=* ]] && targets=()
done
exec cargo test -p loom-tests --release ${targets[@]+"${targets[@]}"} "$@"
