#include "nn/layer_timing.h"

namespace distlab::nn {
namespace {
thread_local LayerTimer* installed = nullptr;
}  // namespace

void set_layer_timer(LayerTimer* timer) {
  installed = timer;
}

LayerTimer* layer_timer() {
  return installed;
}

}  // namespace distlab::nn
