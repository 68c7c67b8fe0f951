// The kernels' table for scenario_fuzz, in place of nn/kernels/dispatch.cc:
// clang 14's __builtin_cpu_supports knows no x86-64-vN levels, and the fuzz
// build compiles the kernels at the baseline level alone, so there is
// nothing to choose. The readers never run a kernel; layers reach this
// table through their vtables.
#include "nn/kernels/kernels.h"

namespace distlab::nn::kernels {

namespace x86_64 {
const Kernels& table();
}

const Kernels& kernels() {
  return x86_64::table();
}

}  // namespace distlab::nn::kernels
