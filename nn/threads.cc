#include "nn/threads.h"

#include <omp.h>

namespace distlab::nn {

void set_compute_threads(int threads) {
  // Eigen itself never threads (EIGEN_DONT_PARALLELIZE, CMakeLists.txt).
  omp_set_num_threads(threads);
}

}  // namespace distlab::nn
