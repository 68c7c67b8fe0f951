#include "nn/threads.h"

#include <omp.h>

#include "nn/eigen.h"

namespace distlab::nn {

void set_compute_threads(int threads) {
  omp_set_num_threads(threads);
  Eigen::setNbThreads(1);
}

}  // namespace distlab::nn
