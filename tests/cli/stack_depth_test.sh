#!/usr/bin/env bash
# bench/stack_depth.sh measures, under gdb, the stack from the ring walk's
# frame to each SimGrid context switch, in ./simulate and in the bare ring:
# the bare ring's member calls SimGrid from the walk itself (no bytes of
# its own where it sends), ./simulate's goes through the Runtime (some),
# and both programs block at the same kinds of point.
# With --sanitized (BUILD_DIR is a sanitizer build, whose frames carry
# redzones), that the script refuses it, saying why.
# Usage: stack_depth_test.sh BUILD_DIR SOURCE_DIR [--sanitized]
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$src/tests/support/check.sh"

if [ "${3:-}" = --sanitized ]; then
  check "a sanitizer build is refused" \
    bash -c "! '$src/bench/stack_depth.sh' --no-build --build-dir '$build' 2>'$work/err'"
  check "and why" grep -q "is a sanitizer build; its frames are not the Release build's" "$work/err"
  exit "$failures"
fi

check "it runs on a Release build" \
  bash -c "'$src/bench/stack_depth.sh' --no-build --build-dir '$build' --workers 4 >'$work/out' 2>'$work/err'"
# The row of a blocking point in one program's table: "| `POINT` | switches |
# own bytes | SimGrid bytes | totals |".
row() { sed -n "\\#^$1\$#,/^The program/p" "$work/out" | grep -F "| \`$2\`" || true; }
own_bytes() { row "$1" "$2" | awk -F'|' '{gsub(/ /, "", $4); print $4}'; }
send=simgrid::s4u::Mailbox::put_async
check "the bare ring's sends have no frame of its own below the walk" \
  test "$(own_bytes 'bare SimGrid ring' $send)" = 0
simulate_send=$(own_bytes ./simulate $send)
check "./simulate's sends go through frames of its own ($simulate_send bytes)" \
  test "${simulate_send%%/*}" -gt 0
check "both programs block in the addition's sleep" \
  test "$(grep -c '^| `simgrid::s4u::this_actor::sleep_for`' "$work/out")" = 2
check "the frames are named, the Runtime's among them" grep -q 'Runtime::send_borrowed' "$work/out"

check "a size below 2 is refused" bash -c "! '$src/bench/stack_depth.sh' --no-build --workers 1 2>'$work/err'"
check "and named" grep -q -- "--workers: an integer >= 2, not 1" "$work/err"
exit "$failures"
