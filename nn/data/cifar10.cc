#include "nn/data/cifar10.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/error.h"
#include "nn/data/file_bytes.h"

namespace distlab::nn {
namespace {

constexpr int64_t kPlane = kCifar10Side * kCifar10Side;

void check_record_count(const std::vector<uint8_t>& bytes, const std::string& path) {
  if (bytes.empty()) throw DataError(path, "empty file: no CIFAR-10 records");
  const auto size = static_cast<int64_t>(bytes.size());
  if (size % kCifar10RecordBytes != 0) {
    throw DataError(path, fmt::format("size {} bytes is not a whole number of {}-byte CIFAR-10 "
                                      "records: {} records and {} leftover bytes",
                                      size, kCifar10RecordBytes, size / kCifar10RecordBytes,
                                      size % kCifar10RecordBytes));
  }
}

// Appends the file's records at row `first` of data: planes (C, H, W) in
// the file become interleaved (H, W, C) in the row.
void decode_records(const std::vector<uint8_t>& bytes, const std::string& path, Dataset& data,
                    int64_t first) {
  const int64_t records = static_cast<int64_t>(bytes.size()) / kCifar10RecordBytes;
  for (int64_t r = 0; r < records; ++r) {
    const uint8_t* record = bytes.data() + r * kCifar10RecordBytes;
    if (record[0] >= kCifar10Classes) {
      throw DataError(path, fmt::format("record {} (byte offset {}): label {} is not in 0-9", r,
                                        r * kCifar10RecordBytes, record[0]));
    }
    data.labels[first + r] = record[0];
    const uint8_t* pixels = record + 1;
    float* row = data.features.row(first + r).data();
    for (int64_t p = 0; p < kPlane; ++p) {
      for (int c = 0; c < kCifar10Channels; ++c) {
        row[p * kCifar10Channels + c] = static_cast<float>(pixels[c * kPlane + p]) / 255.0f;
      }
    }
  }
}

}  // namespace

Dataset load_cifar10_batches(const std::vector<std::string>& files, const std::string& name) {
  if (files.empty()) throw DataError(name, "no CIFAR-10 batch files given");
  // Read every file first so that the features are allocated once.
  std::vector<std::vector<uint8_t>> contents;
  int64_t total = 0;
  for (const auto& path : files) {
    contents.push_back(read_file_bytes(path));
    check_record_count(contents.back(), path);
    total += static_cast<int64_t>(contents.back().size()) / kCifar10RecordBytes;
  }
  Dataset data;
  data.name = name;
  data.example_shape = {kCifar10Side, kCifar10Side, kCifar10Channels};
  data.num_classes = kCifar10Classes;
  data.features.resize(total, kCifar10PixelBytes);
  data.labels.resize(total);
  int64_t first = 0;
  for (std::size_t f = 0; f < files.size(); ++f) {
    decode_records(contents[f], files[f], data, first);
    first += static_cast<int64_t>(contents[f].size()) / kCifar10RecordBytes;
    contents[f] = {};  // free as we go: the five training batches are 150 MB
  }
  return data;
}

Dataset load_cifar10(const std::string& dir, bool train) {
  const std::filesystem::path base(dir);
  std::vector<std::string> files;
  if (train) {
    for (int i = 1; i <= 5; ++i)
      files.push_back((base / fmt::format("data_batch_{}.bin", i)).string());
  } else {
    files.push_back((base / "test_batch.bin").string());
  }
  return load_cifar10_batches(files, train ? "cifar10/train" : "cifar10/test");
}

}  // namespace distlab::nn
