// The safetensors file format (Hugging Face), which NumPy, PyTorch, JAX and
// the `safetensors` package read: an 8-byte little-endian header length, a
// JSON header naming every tensor's dtype, shape and byte range, and the
// tensors' bytes, packed without holes. String metadata goes in the header
// under "__metadata__". https://github.com/huggingface/safetensors
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace distlab::safetensors {

enum class DType { kF32, kI64 };

// A tensor to write, or one read: its bytes live elsewhere (the caller's
// buffer, or the decoded file's bytes).
struct Tensor {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::span<const std::byte> data;  // row-major, little-endian

  int64_t elements() const;
  int64_t byte_size() const;  // elements x the dtype's size
};

using Metadata = std::map<std::string, std::string>;

// The whole file. Tensors are laid out in the order given; each one's data
// must hold byte_size() bytes. Throws Error on a tensor whose data does not
// match its shape, or on a name given twice.
std::vector<std::byte> encode(const std::vector<Tensor>& tensors, const Metadata& metadata);

// The size encode() would produce; tensors' data may be empty (only their
// shapes count), so that a simulation can size a file it does not write.
uint64_t encoded_size(const std::vector<Tensor>& tensors, const Metadata& metadata);

struct File {
  Metadata metadata;
  std::vector<Tensor> tensors;  // in file order; data points into the bytes decoded

  const Tensor* find(const std::string& name) const;  // nullptr when absent
};

// Reads a file's bytes, which must outlive the result. Anything that is not
// a well-formed file (truncated, a header that is not JSON or names an
// unknown dtype, byte ranges that overlap, leave holes or run past the end)
// is a DataError naming `path` and what is wrong.
File decode(std::span<const std::byte> bytes, const std::string& path);

}  // namespace distlab::safetensors
