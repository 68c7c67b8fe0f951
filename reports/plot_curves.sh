#!/usr/bin/env bash
# Plots the test accuracy and loss of one or more runs against the epoch,
# from each run directory's curve.csv, into a PNG (or SVG/PDF by extension).
#   reports/plot_curves.sh OUT.png RUN_DIR[=label] [RUN_DIR[=label] ...]
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
out=$1
shift
command -v gnuplot >/dev/null || { echo "plot_curves: gnuplot is missing (./setup installs it)" >&2; exit 1; }
case "$out" in
  *.png) terminal="pngcairo size 1000,420 font 'sans,10'" ;;
  *.svg) terminal="svg size 1000,420" ;;
  *.pdf) terminal="pdfcairo size 10in,4.2in" ;;
  *) echo "plot_curves: $out: use .png, .svg or .pdf" >&2; exit 2 ;;
esac
accuracy=() loss=()
for arg in "$@"; do
  dir=${arg%%=*}
  label=${arg#*=}
  [ "$label" = "$arg" ] && label=$(basename "$dir")
  [ -f "$dir/curve.csv" ] || { echo "plot_curves: $dir/curve.csv: no such file" >&2; exit 2; }
  accuracy+=("'$dir/curve.csv' using 'epoch':'test_accuracy' with linespoints title '$label'")
  loss+=("'$dir/curve.csv' using 'epoch':'test_loss' with linespoints title '$label'")
done
join() { local IFS=,; echo "$*"; }
gnuplot <<PLOT
set terminal $terminal
set output '$out'
set datafile separator ','
set key autotitle columnhead bottom right
set grid
set multiplot layout 1,2
set title 'test accuracy'
set xlabel 'epoch'
plot $(join "${accuracy[@]}")
set title 'test loss'
set key top right
plot $(join "${loss[@]}")
unset multiplot
PLOT
echo "wrote $out"
