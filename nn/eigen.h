// The one place the project includes Eigen. GCC 12 reports false
// -Wmaybe-uninitialized warnings from its own AVX-512 intrinsics whenever
// Eigen's AVX-512 paths are inlined (-march=x86-64-v4 or native on an
// AVX-512 CPU): the intrinsics pass a deliberately undefined merge operand
// (`__m512 __Y = __Y;`) with an all-ones mask. GCC bug 105593, fixed in
// GCC 13. The warning is reported at the intrinsic's line in
// avx512fintrin.h, so ignoring it while that header is first read silences
// exactly these and nothing in the project's own code.
// tests/eigen_include_test.sh holds that no other file includes Eigen.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <Eigen/Core>
#pragma GCC diagnostic pop
#else
#include <Eigen/Core>
#endif
