// Per-layer timing, for ./calibrate: while a timer is installed on a
// thread, every Sequential that runs on that thread times each of its
// layers' passes and reports them. Composite layers (a Sequential inside
// Branches) are reported too, around the leaves they contain; a timer
// that wants leaves only skips them by kind. Without a timer the cost is
// one thread-local load per layer pass.
#pragma once

namespace distlab::nn {

class Layer;

enum class Pass { kForward, kBackward };

struct LayerTiming {
  const Layer* layer = nullptr;
  Pass pass = Pass::kForward;
  bool input_gradient = false;  // backward: whether it computed dL/dx
  double seconds = 0;
};

class LayerTimer {
 public:
  virtual ~LayerTimer() = default;
  virtual void record(const LayerTiming& timing) = 0;
};

// Installs `timer` on the calling thread (null removes it).
void set_layer_timer(LayerTimer* timer);
LayerTimer* layer_timer();

}  // namespace distlab::nn
