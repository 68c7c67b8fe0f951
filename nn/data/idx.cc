#include "nn/data/idx.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "nn/data/file_bytes.h"

namespace distlab::nn {
namespace {

constexpr uint8_t kTypeUnsignedByte = 0x08;
constexpr int kMnistClasses = 10;

std::string type_name(uint8_t code) {
  switch (code) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
    default:
      return "unknown";
  }
}

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string dims_text(const std::vector<int64_t>& dims) {
  return fmt::format("{}", fmt::join(dims, "x"));
}

// What a header promises, in words a user can check against the file name:
// "60000 images of 28x28" or "60000 labels".
std::string promise_text(const std::vector<int64_t>& dims) {
  if (dims.size() == 3) return fmt::format("{} images of {}x{}", dims[0], dims[1], dims[2]);
  if (dims.size() == 1) return fmt::format("{} labels", dims[0]);
  return "an array of " + dims_text(dims);
}

std::vector<int64_t> parse_header(std::span<const uint8_t> bytes, const std::string& path) {
  if (bytes.size() < 4) {
    throw DataError(path, fmt::format("not an IDX file: {} bytes, shorter than the 4-byte magic",
                                      bytes.size()));
  }
  if (bytes[0] != 0 || bytes[1] != 0) {
    throw DataError(path, fmt::format("not an IDX file: magic starts {:02x} {:02x}, expected 00 00",
                                      bytes[0], bytes[1]));
  }
  if (bytes[2] != kTypeUnsignedByte) {
    throw DataError(path, fmt::format("IDX type code 0x{:02x} ({}) is not supported: only 0x08 "
                                      "(unsigned byte) is read",
                                      bytes[2], type_name(bytes[2])));
  }
  const int ndims = bytes[3];
  if (ndims == 0) throw DataError(path, "IDX header has 0 dimensions");
  const std::size_t header = 4 + 4 * std::size_t(ndims);
  if (bytes.size() < header) {
    throw DataError(path, fmt::format("truncated: header of {} dimensions needs {} bytes, file "
                                      "holds {}",
                                      ndims, header, bytes.size()));
  }
  std::vector<int64_t> dims(ndims);
  for (int i = 0; i < ndims; ++i) dims[i] = big_endian_u32(&bytes[4 + 4 * i]);
  return dims;
}

}  // namespace

IdxArray parse_idx(std::vector<uint8_t> bytes, const std::string& path) {
  IdxArray array;
  array.dims = parse_header(bytes, path);
  const std::size_t header = 4 + 4 * array.dims.size();
  // Each dimension is below 2^32 and there are at most 255 of them: detect
  // products past what any file could hold instead of overflowing.
  unsigned __int128 expected = 1;
  for (int64_t d : array.dims)
    expected = std::min<unsigned __int128>(expected * d, uint64_t{1} << 62);
  const std::size_t payload = bytes.size() - header;
  if (expected > payload) {
    throw DataError(path, fmt::format("truncated: header says {}, file holds {} bytes of payload",
                                      promise_text(array.dims), payload));
  }
  if (expected < payload) {
    throw DataError(
        path, fmt::format("trailing garbage: header says {} ({} bytes), file holds {} "
                          "bytes of payload",
                          promise_text(array.dims), static_cast<uint64_t>(expected), payload));
  }
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(header));
  array.data = std::move(bytes);
  return array;
}

IdxArray read_idx(const std::string& path) {
  return parse_idx(read_file_bytes(path), path);
}

Dataset load_idx_dataset(const std::string& images_path, const std::string& labels_path,
                         const std::string& name) {
  const IdxArray images = read_idx(images_path);
  if (images.dims.size() != 3) {
    throw DataError(images_path, fmt::format("expected 3 dimensions (images, rows, cols), header "
                                             "has {}: {}",
                                             images.dims.size(), dims_text(images.dims)));
  }
  constexpr int64_t kMaxSide = 1 << 15;  // keeps the Shape's ints far from overflow
  if (images.dims[1] == 0 || images.dims[2] == 0 || images.dims[1] > kMaxSide ||
      images.dims[2] > kMaxSide) {
    throw DataError(images_path, "images of " + dims_text(images.dims) +
                                     ": rows and columns must be in 1-32768");
  }
  const IdxArray labels = read_idx(labels_path);
  if (labels.dims.size() != 1) {
    throw DataError(labels_path, fmt::format("expected 1 dimension (labels), header has {}: {}",
                                             labels.dims.size(), dims_text(labels.dims)));
  }
  if (labels.dims[0] != images.dims[0]) {
    throw DataError(labels_path, fmt::format("holds {} labels but {} holds {} images",
                                             labels.dims[0], images_path, images.dims[0]));
  }
  Dataset data;
  data.name = name;
  data.example_shape = {static_cast<int>(images.dims[1]), static_cast<int>(images.dims[2]), 1};
  data.num_classes = kMnistClasses;
  data.labels.resize(labels.data.size());
  for (std::size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] >= kMnistClasses) {
      throw DataError(labels_path,
                      fmt::format("label {} of example {} is not in 0-9", labels.data[i], i));
    }
    data.labels[i] = labels.data[i];
  }
  data.features.resize(images.dims[0], data.example_shape.size());
  std::transform(images.data.begin(), images.data.end(), data.features.data(),
                 [](uint8_t v) { return static_cast<float>(v) / 255.0f; });
  return data;
}

namespace {

// "dir/name.gz", or "dir/name" when only the unpacked file is there (people
// often gunzip the downloads); errors then name the .gz the package ships.
std::string idx_file(const std::string& dir, const std::string& name) {
  const std::filesystem::path base(dir);
  const auto gz = base / (name + ".gz");
  std::error_code ec;
  if (!std::filesystem::exists(gz, ec) && std::filesystem::exists(base / name, ec)) {
    return (base / name).string();
  }
  return gz.string();
}

}  // namespace

Dataset load_fashion_mnist(const std::string& dir, bool train) {
  const std::string prefix = train ? "train" : "t10k";
  return load_idx_dataset(idx_file(dir, prefix + "-images-idx3-ubyte"),
                          idx_file(dir, prefix + "-labels-idx1-ubyte"),
                          train ? "fashion-mnist/train" : "fashion-mnist/test");
}

}  // namespace distlab::nn
