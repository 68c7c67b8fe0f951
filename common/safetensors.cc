#include "common/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"

namespace distlab::safetensors {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors is little-endian");

// The reference implementation refuses headers above 100 MB.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Headers are padded with spaces so that the data starts 8-byte aligned.
constexpr uint64_t kAlignment = 8;

const char* dtype_name(DType dtype) {
  return dtype == DType::kF32 ? "F32" : "I64";
}

int64_t dtype_size(DType dtype) {
  return dtype == DType::kF32 ? 4 : 8;
}

std::string header_text(const std::vector<Tensor>& tensors, const Metadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__" || !names.insert(t.name).second) {
      throw Error("safetensors: tensor name '" + t.name + "' is empty, reserved or given twice");
    }
    const int64_t end = offset + t.byte_size();
    header[t.name] = {
        {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  const uint64_t padded = (8 + text.size() + kAlignment - 1) / kAlignment * kAlignment - 8;
  text.resize(padded, ' ');
  return text;
}

uint64_t data_size(const std::vector<Tensor>& tensors) {
  uint64_t size = 0;
  for (const Tensor& t : tensors) size += static_cast<uint64_t>(t.byte_size());
  return size;
}

// A header number that must be a whole number, 0 or more. nlohmann's get<>
// would convert a fraction or a negative number without a word, and a
// number beyond the integer's range is undefined behaviour (found by
// fuzzing: a shape of 2.3e44).
uint64_t whole_number(const nlohmann::json& value, const std::string& path,
                      const std::string& what) {
  if (!value.is_number_unsigned()) {
    throw DataError(path, what + " holds " + value.dump() + ", not a whole number of 0 or more");
  }
  return value.get<uint64_t>();
}

}  // namespace

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

int64_t Tensor::byte_size() const {
  return elements() * dtype_size(dtype);
}

uint64_t encoded_size(const std::vector<Tensor>& tensors, const Metadata& metadata) {
  return 8 + header_text(tensors, metadata).size() + data_size(tensors);
}

std::vector<std::byte> encode(const std::vector<Tensor>& tensors, const Metadata& metadata) {
  const std::string header = header_text(tensors, metadata);
  std::vector<std::byte> out(8 + header.size() + data_size(tensors));
  const uint64_t length = header.size();
  std::memcpy(out.data(), &length, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  std::size_t at = 8 + header.size();
  for (const Tensor& t : tensors) {
    if (t.data.size() != static_cast<std::size_t>(t.byte_size())) {
      throw Error("safetensors: tensor " + t.name + " has " + std::to_string(t.data.size()) +
                  " bytes for " + std::to_string(t.byte_size()));
    }
    if (!t.data.empty()) std::memcpy(out.data() + at, t.data.data(), t.data.size());
    at += t.data.size();
  }
  return out;
}

const Tensor* File::find(const std::string& name) const {
  for (const Tensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

// One tensor's entry of the header: its dtype, shape and bytes, which must
// lie within `data` and match the shape.
Tensor read_tensor(const std::string& name, const nlohmann::json& entry,
                   std::span<const std::byte> data, const std::string& path) {
  const std::string dtype = entry.at("dtype").get<std::string>();
  Tensor t;
  t.name = name;
  if (dtype == "F32") {
    t.dtype = DType::kF32;
  } else if (dtype == "I64") {
    t.dtype = DType::kI64;
  } else {
    throw DataError(path, "tensor " + name + " has dtype " + dtype + "; distlab reads F32 and I64");
  }
  const auto limit = static_cast<uint64_t>(data.size());
  uint64_t elements = 1;
  for (const auto& d : entry.at("shape")) {
    const uint64_t dim = whole_number(d, path, "tensor " + name + ": shape");
    if (dim > limit || (dim > 0 && elements > limit / dim)) {
      throw DataError(path, "tensor " + name + " has an impossible shape");
    }
    elements *= dim;
    t.shape.push_back(static_cast<int64_t>(dim));
  }
  const auto& offsets = entry.at("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2) {
    throw DataError(path, "tensor " + name + ": data_offsets is not [begin, end]");
  }
  const std::string where = "tensor " + name + ": data_offsets";
  const uint64_t begin = whole_number(offsets[0], path, where);
  const uint64_t end = whole_number(offsets[1], path, where);
  if (begin > end || end > data.size()) {
    throw DataError(path, "truncated: tensor " + name + " ends at byte " + std::to_string(end) +
                              " of " + std::to_string(data.size()));
  }
  if (static_cast<int64_t>(end - begin) != t.byte_size()) {
    throw DataError(path, "tensor " + name + " holds " + std::to_string(end - begin) +
                              " bytes, its shape needs " + std::to_string(t.byte_size()));
  }
  t.data = data.subspan(begin, end - begin);
  return t;
}

// The tensors, in the order of their bytes, must tile `data` exactly: no
// overlap, no hole, no tail.
void check_tiling(const std::vector<Tensor>& tensors, std::span<const std::byte> data,
                  const std::string& path) {
  uint64_t at = 0;
  for (const Tensor& t : tensors) {
    const auto begin = static_cast<uint64_t>(t.data.data() - data.data());
    if (begin != at) {
      throw DataError(path, "tensor " + t.name + " starts at byte " + std::to_string(begin) +
                                " where " + std::to_string(at) + " was expected (overlap or hole)");
    }
    at = begin + t.data.size();
  }
  if (at != data.size()) {
    throw DataError(path, std::to_string(data.size() - at) + " bytes after the last tensor");
  }
}

}  // namespace

File decode(std::span<const std::byte> bytes, const std::string& path) {
  if (bytes.size() < 8) {
    throw DataError(path, "truncated: " + std::to_string(bytes.size()) +
                              " bytes, not even the 8-byte header length of a safetensors file");
  }
  uint64_t length = 0;
  std::memcpy(&length, bytes.data(), 8);
  if (length > kMaxHeaderBytes || length > bytes.size() - 8) {
    throw DataError(path, "truncated or not a safetensors file: the header claims " +
                              std::to_string(length) + " bytes, the file has " +
                              std::to_string(bytes.size() - 8) + " after the length");
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8), length);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path, std::string("the safetensors header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw DataError(path, "the safetensors header is not a JSON object");
  const std::span<const std::byte> data = bytes.subspan(8 + length);

  File file;
  try {
    for (const auto& [name, entry] : header.items()) {
      if (name != "__metadata__") {
        file.tensors.push_back(read_tensor(name, entry, data, path));
        continue;
      }
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) throw DataError(path, "metadata " + key + " is not a string");
        file.metadata[key] = value.get<std::string>();
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path, std::string("malformed safetensors header: ") + e.what());
  }
  std::stable_sort(file.tensors.begin(), file.tensors.end(),
                   [](const Tensor& a, const Tensor& b) { return a.data.data() < b.data.data(); });
  check_tiling(file.tensors, data, path);
  return file;
}

}  // namespace distlab::safetensors
