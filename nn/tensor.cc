#include "nn/tensor.h"

namespace distlab::nn {

std::string Shape::to_string() const {
  if (is_flat()) return "(" + std::to_string(channels) + ")";
  return "(" + std::to_string(height) + ", " + std::to_string(width) + ", " +
         std::to_string(channels) + ")";
}

}  // namespace distlab::nn
