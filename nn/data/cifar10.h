// Reader for CIFAR-10's binary batches (the "binary version" of the data
// set): each record is one label byte (0-9) and 3072 pixel bytes, the red,
// green and blue planes of a 32x32 image in turn, each row-major. Images
// come out NHWC in [0, 1], like every image data set here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/data/dataset.h"

namespace distlab::nn {

inline constexpr int kCifar10Side = 32;
inline constexpr int kCifar10Channels = 3;
inline constexpr int kCifar10Classes = 10;
inline constexpr int64_t kCifar10PixelBytes = kCifar10Side * kCifar10Side * kCifar10Channels;
inline constexpr int64_t kCifar10RecordBytes = 1 + kCifar10PixelBytes;  // 3073

// The records of `files`, in order, as one data set of (32, 32, 3) images.
// Files may be gzipped. Throws DataError naming the file for a size that is
// not a whole number of records, a label over 9, or an empty file.
Dataset load_cifar10_batches(const std::vector<std::string>& files, const std::string& name);

// dir/data_batch_1.bin .. data_batch_5.bin (50,000 images, "cifar10/train")
// or dir/test_batch.bin (10,000, "cifar10/test").
Dataset load_cifar10(const std::string& dir, bool train);

}  // namespace distlab::nn
