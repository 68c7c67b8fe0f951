// Readers for the IDX format of MNIST and Fashion-MNIST: a 4-byte magic
// (0, 0, type code, number of dimensions), big-endian 32-bit dimensions, then
// the payload. Only unsigned bytes (type 0x08) occur in these data sets, so
// only they are read; anything else is refused by name.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nn/data/dataset.h"

namespace distlab::nn {

// Where Debian's package dataset-fashion-mnist installs the data.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// One IDX array of unsigned bytes.
struct IdxArray {
  std::vector<int64_t> dims;  // from the header, outermost first
  std::vector<uint8_t> data;  // row-major, exactly product(dims) bytes
};

// Parses a whole IDX file held in memory; `path` names it in errors. Refuses
// a bad magic, a type other than unsigned byte, and a payload that is not
// exactly the size the header promises (truncated or trailing garbage).
IdxArray parse_idx(std::vector<uint8_t> bytes, const std::string& path);

// Reads (and gunzips if needed) an IDX file.
IdxArray read_idx(const std::string& path);

// An image file (N, rows, cols) and a label file (N) into a data set of
// (rows, cols, 1) images scaled to [0, 1] and 10 classes.
Dataset load_idx_dataset(const std::string& images_path, const std::string& labels_path,
                         const std::string& name);

// Fashion-MNIST from `dir` (e.g. kFashionMnistDir): train-*-idx?-ubyte.gz
// (60,000 examples) or t10k-*-idx?-ubyte.gz (10,000), named
// "fashion-mnist/train" or "fashion-mnist/test". The unpacked files (no .gz)
// are read when only they are there.
Dataset load_fashion_mnist(const std::string& dir, bool train);

}  // namespace distlab::nn
