#include "nn/parameters.h"

namespace distlab::nn {

int ParameterLayout::add(ParamBlock block) {
  block.offset = size_;
  size_ += block.size();
  blocks_.push_back(std::move(block));
  return static_cast<int>(blocks_.size()) - 1;
}

}  // namespace distlab::nn
