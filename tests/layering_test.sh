#!/usr/bin/env bash
# The house has floors, and an include may only look down (or across its
# own folder):
#   common <- nn <- checkpoint <- strategy <- run <- sim | net <- calibration
#   <- apps
# with net/ in layers of its own (wire, cluster <- runtime), and each
# backend's library alone in seeing its backend: SimGrid in sim/, Boost.Asio
# in net/runtime/. Programs (apps/<command>/) see every library and no
# other program. tests/ and bench/ may include anything.
# Usage: layering_test.sh SOURCE_DIR
cd "$1" || exit 2
status=0

# The project folders a folder may include from, its own first.
allowed_for() {
  local below_run="common nn checkpoint strategy run"
  case $1 in
    common) echo "common" ;;
    nn) echo "nn common" ;;
    checkpoint) echo "checkpoint nn common" ;;
    strategy) echo "strategy checkpoint nn common" ;;
    run) echo "$below_run" ;;
    sim) echo "sim $below_run" ;;
    net/wire) echo "net/wire $below_run" ;;
    net/cluster) echo "net/cluster $below_run" ;;
    net/runtime) echo "net/runtime net/wire net/cluster $below_run" ;;
    calibration) echo "calibration sim net $below_run" ;;
    apps/*) echo "$1 calibration sim net $below_run" ;;
  esac
}

# "folder/file.h" includes of every source under FOLDER that name a
# project folder, checked against what FOLDER may see.
check_floor() {
  local folder=$1 allowed
  allowed=$(allowed_for "$folder")
  while IFS= read -r hit; do
    local included=${hit#*#include \"}
    included=${included%%\"*}
    local ok=0
    for prefix in $allowed; do
      case $included in "$prefix"/*) ok=1 ;; esac
    done
    # Includes of headers beside the file, or of third-party headers in
    # quotes, name no project folder.
    case $included in */*) ;; *) ok=1 ;; esac
    local top=${included%%/*}
    [ -d "$top" ] || ok=1
    if [ $ok -eq 0 ]; then
      echo "up a floor: $hit"
      status=1
    fi
  done < <(grep -rnE '^#include "' "$folder" --include='*.h' --include='*.cc' 2>/dev/null)
}

for folder in common nn checkpoint strategy run sim net/wire net/cluster net/runtime calibration \
  apps/*; do
  check_floor "$folder"
done

# Backend headers, anywhere but their own library.
refuse() {  # pattern, folders...
  local pattern=$1
  shift
  local found
  found=$(grep -rnE "#include *[<\"]($pattern)" "$@" 2>/dev/null)
  if [ -n "$found" ]; then
    echo "backend headers included where they must not be:"
    echo "$found"
    status=1
  fi
}
refuse 'simgrid|boost/asio|asio' common nn checkpoint strategy run net/wire net/cluster calibration \
  apps
refuse 'boost/asio|asio' sim
refuse 'simgrid' net

[ $status -eq 0 ] && echo "ok: every include looks down a floor; SimGrid only in sim/, Asio only in net/runtime/"
exit $status
