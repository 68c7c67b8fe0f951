#!/usr/bin/env bash
# The NN core and the strategies never see a backend: no SimGrid, no Asio.
# Usage: layering_test.sh SOURCE_DIR
cd "$1" || exit 2
found=$(grep -rnE '#include *[<"](simgrid|boost/asio|asio)' nn strategy common 2>/dev/null)
if [ -n "$found" ]; then
  echo "backend headers included where they must not be:"
  echo "$found"
  exit 1
fi
echo "ok: nn/, strategy/ and common/ include no backend header"
