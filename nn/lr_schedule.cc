#include "nn/lr_schedule.h"

#include <algorithm>

namespace distlab::nn {

float ReduceLrOnPlateau::observe(double value, float learning_rate) {
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    waited_ = 0;
  }
  if (value < best_ - opt_.min_delta) {
    best_ = value;
    waited_ = 0;
    return learning_rate;
  }
  if (cooldown_left_ > 0 || ++waited_ < opt_.patience) return learning_rate;
  waited_ = 0;
  cooldown_left_ = opt_.cooldown;
  return std::max(learning_rate * opt_.factor, opt_.min_lr);
}

}  // namespace distlab::nn
