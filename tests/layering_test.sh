#!/usr/bin/env bash
# Dependencies go one way: the NN core, the strategies and what both
# backends share (common/, run/) never see a backend; each backend sees
# only its own (SimGrid in sim/, Boost.Asio in net/).
# Usage: layering_test.sh SOURCE_DIR
cd "$1" || exit 2
status=0
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
refuse 'simgrid|boost/asio|asio|net/' nn strategy common run
refuse 'boost/asio|asio|net/' sim
refuse 'simgrid|sim/' net
[ $status -eq 0 ] && echo "ok: nn/, strategy/, common/ and run/ include no backend; sim/ and net/ only their own"
exit $status
