#!/usr/bin/env bash
# ctest registers each Catch2 test by its name, and CMake cuts a name at a
# semicolon (its list separator): a test named "a; b" becomes two ctest
# entries whose filters match no test, and Catch2 passes a filter that
# matches nothing. A name that starts with "--" is read as an option. So
# neither may appear in a TEST_CASE's name.
# Usage: test_names_test.sh SOURCE_DIR
cd "$1" || exit 2
found=$(grep -rnE 'TEST_CASE\("([^"]*;|--)' --include='*.cc' tests)
if [ -n "$found" ]; then
  echo "test names that ctest would cut or read as options:"
  echo "$found"
  exit 1
fi
echo "ok: every test name reaches ctest whole"
