#!/usr/bin/env bash
# ctest registers each Catch2 test by its name. CMake cuts a name at a
# semicolon (its list separator), and a "[" in a name (a tag to Catch2, a
# bracket argument to CMake) runs the rest of the executable's names into
# one entry whose filter matches no test; Catch2 passes such a filter
# without running anything. A name that starts with "--" is read as an
# option. So none of these may appear in a TEST_CASE's name: the sources
# are searched, and so are the names ctest registered for Catch2's tests
# (a name written over several lines escapes the first search, not the
# second).
# Usage: test_names_test.sh SOURCE_DIR BUILD_DIR
cd "$1" || exit 2
found=$(grep -rnE 'TEST_CASE\("([^"]*[;[]|--)' --include='*.cc' tests)
registered=$(cd "$2" && ctest -N | grep -E '^ *Test +#[0-9]+: test_[a-z_]+:.*[;[]')
if [ -n "$found$registered" ]; then
  echo "test names that ctest would cut, run together or read as options:"
  echo "$found"
  echo "$registered"
  exit 1
fi
echo "ok: every test name reaches ctest whole"
