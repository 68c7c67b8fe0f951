#!/usr/bin/env bash
# bench/simulate_scale.sh --no-build times the binaries as they are, so it
# warns when a source they are built from changed after them (an edit, or
# a checkout that undid one), and only then.
# Usage: simulate_scale_stale_test.sh BARE_RING SOURCE_DIR
set -euo pipefail
bare_ring=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$src/tests/support/check.sh"

mkdir -p "$work/build/bench"
cp "$bare_ring" "$work/build/bench/bare_ring"
scale() {
  "$src/bench/simulate_scale.sh" --no-build --build-dir "$work/build" --bare-only --rounds 1 \
    --steps 1 --bytes 4096 4 2>"$work/err" >"$work/out"
}

touch -d '2000-01-01' "$work/build/bench/bare_ring"
check "an older binary runs" scale
check "an older binary is named in a warning, with the newer source" \
  grep -q "warning: $work/build/bench/bare_ring is older than bench/bare_ring.cc" "$work/err"

touch -d 'tomorrow' "$work/build/bench/bare_ring"
check "a binary newer than its sources runs" scale
check "a binary newer than its sources has no warning" bash -c "! grep -q warning '$work/err'"
check "and its figures are printed" grep -q '"benchmark": "simulate_scale"' "$work/out"
exit "$failures"
