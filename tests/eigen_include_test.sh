#!/usr/bin/env bash
# nn/eigen.h is the one file that includes Eigen: it silences GCC 12's false
# AVX-512 warnings (GCC bug 105593) only while it reads Eigen's headers
# first. A file that included Eigen itself before it would bring the
# warnings back on AVX-512 builds.
# Usage: eigen_include_test.sh SOURCE_DIR
cd "$1" || exit 2
found=$(grep -rnE '#include *[<"](Eigen|unsupported/Eigen)/' --include='*.h' --include='*.cc' \
  common nn strategy run sim net bench tests | grep -v '^nn/eigen.h:')
if [ -n "$found" ]; then
  echo "Eigen included directly (include \"nn/eigen.h\" or \"nn/tensor.h\" instead):"
  echo "$found"
  exit 1
fi
echo "ok: only nn/eigen.h includes Eigen"
