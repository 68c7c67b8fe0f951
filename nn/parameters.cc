#include "nn/parameters.h"

namespace distlab::nn {

int ParameterLayout::add(ParamBlock block) {
  constexpr int64_t kAlign = 16;
  block.offset = (size_ + kAlign - 1) / kAlign * kAlign;
  size_ = block.offset + block.size();
  blocks_.push_back(std::move(block));
  return static_cast<int>(blocks_.size()) - 1;
}

}  // namespace distlab::nn
