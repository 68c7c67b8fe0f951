#!/usr/bin/env bash
# An installed copy (cmake --install) finds its machine catalog, scenarios
# and models beside itself, wherever it was moved, and not in the source
# tree it was built from (./simulate, ./train and ./realnet --launch);
# DISTLAB_HOME names another place, and a wrong
# one is refused, naming the variable.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$src/tests/support/check.sh"

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1
check "cmake --install puts the commands and the shipped files in place" \
  test -x "$work/prefix/bin/distlab-simulate" -a -x "$work/prefix/bin/distlab-realnet" \
  -a -x "$work/prefix/bin/distlab-train" -a -x "$work/prefix/bin/distlab-calibrate" \
  -a -f "$work/prefix/share/distlab/scenarios/machines.yaml" \
  -a -f "$work/prefix/share/distlab/scenarios/models/mnist_cnn.yaml"
check "... but not this machine's calibration" \
  test ! -e "$work/prefix/share/distlab/scenarios/machines.local.yaml"

mv "$work/prefix" "$work/moved"
share=$work/moved/share/distlab
simulate=$work/moved/bin/distlab-simulate
cd "$work"
"$simulate" "$share/scenarios/ps_4workers.yaml" --set training.epochs=1 --quiet \
  --out "$work/run" >"$work/out" 2>"$work/err"
check "the moved copy simulates a shipped scenario" test $? -eq 0 -a -f "$work/run/summary.json"
"$work/moved/bin/distlab-train" --data synthetic:256 --steps 2 --quiet --out "$work/train" \
  >"$work/out" 2>"$work/err"
check "the moved ./train finds its default model" test $? -eq 0 -a -f "$work/train/summary.json"
"$work/moved/bin/distlab-realnet" --launch "$share/scenarios/ps_4workers.yaml" \
  --set data=synthetic-taxi:2000 --set training.epochs=1 --quiet --out "$work/real" \
  >"$work/out" 2>"$work/err"
check "the moved ./realnet --launch runs a shipped scenario's tasks" \
  test $? -eq 0 -a -f "$work/real/summary.json"

# Its own catalog, not the source tree's: a broken copy of it is what fails.
echo "machines: [" >>"$share/scenarios/machines.yaml"
"$simulate" "$share/scenarios/ps_4workers.yaml" --quiet --out "$work/broken" \
  >"$work/out" 2>"$work/err"
check "the moved copy reads the catalog beside it" \
  grep -q "$share/scenarios/machines.yaml" "$work/err"

DISTLAB_HOME=$src "$simulate" "$share/scenarios/ps_4workers.yaml" --set training.epochs=1 \
  --quiet --out "$work/home" >"$work/out" 2>"$work/err"
check "DISTLAB_HOME names the folder of the shipped files instead" \
  test $? -eq 0 -a -f "$work/home/summary.json"
DISTLAB_HOME=$work/nowhere "$simulate" "$src/scenarios/ps_4workers.yaml" --quiet \
  --out "$work/nowhere-run" >"$work/out" 2>"$work/err"
status=$?
check "a DISTLAB_HOME without scenarios/ exits 2, naming the variable" \
  test $status -eq 2 -a -n "$(grep "DISTLAB_HOME=$work/nowhere: no scenarios/machines.yaml" "$work/err")"
exit $failures
