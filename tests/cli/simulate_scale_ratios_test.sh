#!/usr/bin/env bash
# bench/simulate_scale.sh gives three ratios simulate / bare ring: of the
# median wall times, the median of each round's own ratio, and of the
# median CPU times (simulate's from summary.json's simulation_cpu_seconds).
# Usage: simulate_scale_ratios_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$src/tests/support/check.sh"

scale() {
  "$src/bench/simulate_scale.sh" --no-build --build-dir "$build" --rounds 2 --steps 1 4 \
    2>"$work/err" >"$work/out"
}
check "a small ring runs two rounds" scale
tail -n 1 "$work/out" >"$work/figures.json"
check "the rounds' ratios are each round's own, and their median is the ratio given" \
  /usr/bin/python3 - "$work/figures.json" <<'PY'
import json, statistics, sys
row = json.load(open(sys.argv[1]))["sizes"][0]
b, s = row["bare"], row["simulate"]
pairs = [x / y for x, y in zip(s["wall_seconds_per_step_all"], b["wall_seconds_per_step_all"])]
assert len(row["round_ratios"]) == 2, row
assert sorted(round(r, 9) for r in row["round_ratios"]) == sorted(round(r, 9) for r in pairs), row
assert abs(row["median_round_ratio"] - statistics.median(pairs)) < 1e-9, row
PY
check "both programs' CPU times are measured, and their ratio given" \
  /usr/bin/python3 - "$work/figures.json" <<'PY'
import json, sys
row = json.load(open(sys.argv[1]))["sizes"][0]
b, s = row["bare"]["cpu_seconds_per_step"], row["simulate"]["cpu_seconds_per_step"]
assert b > 0 and s > 0, row
assert abs(row["cpu_ratio"] - s / b) < 1e-9, row
PY
check "the table has the three ratios" grep -q "median of rounds' ratios | CPU time ratio" "$work/out"
exit "$failures"
