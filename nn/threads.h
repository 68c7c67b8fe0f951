// How many threads the NN core may use. All parallel work is the core's own
// OpenMP loops over fixed plans (chunks of a convolution, column blocks of a
// product), so the thread count changes speed only, never results; Eigen's
// own threading, which would change results, is switched off.
//
// OpenMP keeps this setting per thread: call it on every thread that runs
// models (once is enough where one thread runs them all, as in a simulation).
#pragma once

namespace distlab::nn {

void set_compute_threads(int threads);

}  // namespace distlab::nn
