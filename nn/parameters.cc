#include "nn/parameters.h"

namespace distlab::nn {

int ParameterLayout::add(ParamBlock block) {
  block.offset = (size_ + kBlockAlignFloats - 1) / kBlockAlignFloats * kBlockAlignFloats;
  size_ = block.offset + block.size();
  count_ += block.size();
  blocks_.push_back(std::move(block));
  return static_cast<int>(blocks_.size()) - 1;
}

}  // namespace distlab::nn
