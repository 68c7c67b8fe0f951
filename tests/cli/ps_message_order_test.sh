#!/usr/bin/env bash
# On a crowded one_host (more threads than cores), a simulated parameter
# server takes the messages that arrived while it was busy in turn by
# sender, as ./realnet's I/O thread reads them: other workers' pushes come
# between a worker's push and its pull. bench/ps_message_order.py reads
# that order from a run's timeline (in arrival order, about 95% of the
# pulls would come right after their own push).
# Usage: ps_message_order_test.sh SIMULATE SOURCE_DIR
set -euo pipefail
simulate=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$src/tests/support/check.sh"
order="$src/bench/ps_message_order.py"

# `local` as the catalog has it before ./calibrate: 2 vCPUs, every task
# on all of them.
"$simulate" "$src/scenarios/ps_4workers.yaml" --machines "$src/scenarios/machines.yaml" \
  --set cluster.machine=local --set cluster.placement=one_host --set training.epochs=1 \
  --fidelity timing --quiet --out "$work/crowded" >/dev/null
/usr/bin/python3 "$order" "$work/crowded" >"$work/table"
cat "$work/table"
# | run | server | pulls | right after own push | after 1 other | 2 | 3 or more |
right_after() { awk -F'|' '$3 ~ /ps:0/ { gsub(/[ %]/, "", $5); print $5 }' "$work/table"; }
check "the server's row counts its workers' pulls" \
  awk -F'|' '$3 ~ /ps:0/ && $4 + 0 >= 150 { found = 1 } END { exit !found }' "$work/table"
check "most pulls come after other workers' pushes, taken in turn" [ "$(right_after)" -lt 50 ]
check "the shares add up to all the pulls" \
  awk -F'|' '$3 ~ /ps:0/ { s = $5 + $6 + $7 + $8; exit !(s >= 98 && s <= 102) }' "$work/table"

set +e
/usr/bin/python3 "$order" "$work/nowhere" 2>"$work/err"
status=$?
/usr/bin/python3 "$order" 2>"$work/usage"
usage_status=$?
set -e
check "a directory without a timeline: exit 1" [ "$status" -eq 1 ]
check "... naming the file" grep -q "$work/nowhere/timeline.json: cannot read the timeline" "$work/err"
check "no directory: the usage, exit 2" [ "$usage_status" -eq 2 ]
check "... which says what it prints" grep -q "Usage: bench/ps_message_order.py RUN_DIR" "$work/usage"
exit "$failures"
