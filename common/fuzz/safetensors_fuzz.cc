// libFuzzer target: arbitrary bytes as a safetensors file (a checkpoint or
// model.safetensors a user got from elsewhere). decode must return a File
// or refuse the bytes with a distlab::Error; a File that comes out must
// hold tensors whose data lies inside the bytes and matches their shapes,
// and must encode to bytes that decode to the same tensors and metadata.
// Anything else (another exception, a sanitizer report, a trap) is a
// finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/error.h"
#include "common/safetensors.h"

namespace safetensors = distlab::safetensors;

namespace {

bool same_tensors(const safetensors::File& a, const safetensors::File& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    const auto& x = a.tensors[i];
    const auto& y = b.tensors[i];
    if (x.name != y.name || x.dtype != y.dtype || x.shape != y.shape ||
        !std::equal(x.data.begin(), x.data.end(), y.data.begin(), y.data.end())) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  safetensors::File file;
  try {
    file = safetensors::decode(bytes, "fuzz.safetensors");
  } catch (const distlab::Error&) {
    return 0;
  }
  for (const auto& tensor : file.tensors) {
    if (tensor.data.size() != static_cast<std::size_t>(tensor.byte_size())) __builtin_trap();
    if (!tensor.data.empty() &&
        (tensor.data.data() < bytes.data() ||
         tensor.data.data() + tensor.data.size() > bytes.data() + bytes.size())) {
      __builtin_trap();
    }
  }
  const std::vector<std::byte> again = safetensors::encode(file.tensors, file.metadata);
  if (!same_tensors(file, safetensors::decode(again, "again.safetensors"))) __builtin_trap();
  return 0;
}
