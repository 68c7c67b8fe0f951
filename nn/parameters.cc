#include "nn/parameters.h"

#include "common/error.h"

namespace distlab::nn {

int ParameterLayout::add(ParamBlock block) {
  if (block.rows <= 0 || block.cols <= 0 || block.size() > kMaxParameters - size_) {
    throw Error("parameter block " + block.name + " of " + std::to_string(block.rows) + "x" +
                std::to_string(block.cols) + " would take the model past " +
                std::to_string(kMaxParameters) + " values");
  }
  block.offset = (size_ + kBlockAlignFloats - 1) / kBlockAlignFloats * kBlockAlignFloats;
  size_ = block.offset + block.size();
  count_ += block.size();
  blocks_.push_back(std::move(block));
  return static_cast<int>(blocks_.size()) - 1;
}

}  // namespace distlab::nn
