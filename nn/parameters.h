// The parameter layout of a model. Every trainable tensor is a block of one
// contiguous float buffer, gradients use a second buffer with the same
// layout, and non-trainable state (BatchNorm running statistics) a third:
// strategies send, average and apply whole spans, never layer by layer.
#pragma once

#include <cstdint>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "nn/regularizer.h"
#include "nn/tensor.h"

namespace distlab::nn {

// How a block is initialised (Keras defaults for the kind of tensor).
enum class Init { kGlorotUniform, kZeros, kOnes, kEmbeddingUniform };

struct ParamBlock {
  ParamBlock() = default;
  // A (rows, cols) block; Glorot's fans default to (rows, cols), which is
  // right for dense kernels; convolutions set them from the receptive field.
  ParamBlock(std::string name, int rows, int cols, Init init, Regularizer regularizer = {})
      : name(std::move(name)),
        rows(rows),
        cols(cols),
        init(init),
        regularizer(regularizer),
        fan_in(rows),
        fan_out(cols) {}

  std::string name;    // "dense_1/kernel"
  int64_t offset = 0;  // in floats, into its buffer
  int rows = 0;
  int cols = 0;
  Init init = Init::kZeros;
  Regularizer regularizer;  // trainable blocks only
  int fan_in = 0;           // for Glorot: inputs and outputs of one unit
  int fan_out = 0;

  int64_t size() const { return int64_t{rows} * cols; }
};

// Blocks start on 64-byte boundaries of a 64-byte aligned buffer. Besides
// whole cache lines per block, this makes results reproducible: Eigen picks
// its vectorised or scalar path for a view from the view's address, and the
// two can round differently, so every replica must see the same alignment.
inline constexpr int64_t kBlockAlignFloats = 16;

// A model's buffers hold at most this many values (8 GiB of floats); a spec
// that needs more is refused, as are empty blocks.
inline constexpr int64_t kMaxParameters = int64_t{1} << 31;

class ParameterLayout {
 public:
  // Appends a block at the next aligned offset and returns its index.
  int add(ParamBlock block);
  const ParamBlock& block(int index) const { return blocks_[index]; }
  const std::vector<ParamBlock>& blocks() const { return blocks_; }
  // Floats in the buffer, padding between blocks included (always zero).
  int64_t size() const { return size_; }
  // Parameters proper: the sum of the block sizes.
  int64_t count() const { return count_; }

 private:
  std::vector<ParamBlock> blocks_;
  int64_t size_ = 0;
  int64_t count_ = 0;
};

// std::allocator with 64-byte alignment, for the flat buffers.
template <typename T>
struct CacheAlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};

  CacheAlignedAllocator() = default;
  template <typename U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U>&) {}

  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlignment); }
  bool operator==(const CacheAlignedAllocator&) const = default;
};

using FloatBuffer = std::vector<float, CacheAlignedAllocator<float>>;

// The three buffers a layer reads and writes, bound once after allocation.
struct ParameterBuffers {
  float* params = nullptr;  // trainable values
  float* grads = nullptr;   // their gradients, same layout
  float* state = nullptr;   // non-trainable values (own layout)
};

}  // namespace distlab::nn
