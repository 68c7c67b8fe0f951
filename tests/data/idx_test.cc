#include "nn/data/idx.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "common/error.h"
#include "tests/data/test_files.h"

using namespace distlab::nn;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using distlab::DataError;
using distlab::test::TempDir;

namespace {

std::vector<uint8_t> idx_bytes(uint8_t type, std::vector<uint32_t> dims,
                               const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out{0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(d >> shift));
  }
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

// n images of 2x3 whose pixel p of image i is 10 * i + p, and labels i % 10.
struct SmallIdx {
  std::vector<uint8_t> images;
  std::vector<uint8_t> labels;
};

SmallIdx small_idx(uint32_t n) {
  std::vector<uint8_t> pixels, labels;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t p = 0; p < 6; ++p) pixels.push_back(static_cast<uint8_t>(10 * i + p));
    labels.push_back(static_cast<uint8_t>(i % 10));
  }
  return {idx_bytes(0x08, {n, 2, 3}, pixels), idx_bytes(0x08, {n}, labels)};
}

}  // namespace

TEST_CASE("A small IDX pair loads as scaled images and labels") {
  TempDir dir;
  const auto gzipped = GENERATE(false, true);
  CAPTURE(gzipped);
  const SmallIdx idx = small_idx(12);
  const std::string images = dir.file(gzipped ? "img.gz" : "img");
  const std::string labels = dir.file(gzipped ? "lbl.gz" : "lbl");
  if (gzipped) {
    distlab::test::write_gzip(images, idx.images);
    distlab::test::write_gzip(labels, idx.labels);
  } else {
    distlab::test::write_bytes(images, idx.images);
    distlab::test::write_bytes(labels, idx.labels);
  }
  const Dataset d = load_idx_dataset(images, labels, "small");
  CHECK(d.name == "small");
  CHECK(d.size() == 12);
  CHECK(d.example_shape == Shape{2, 3, 1});
  CHECK(d.num_classes == 10);
  CHECK(d.features.cols() == 6);
  CHECK(d.labels[11] == 1);
  CHECK_THAT(d.features(11, 4), WithinAbs(114.0 / 255.0, 1e-7));
  CHECK_THAT(d.features(0, 0), WithinAbs(0.0, 1e-7));
}

TEST_CASE("An IDX array keeps its dimensions and payload") {
  const IdxArray a = parse_idx(idx_bytes(0x08, {2, 2}, {1, 2, 3, 4}), "a");
  CHECK(a.dims == std::vector<int64_t>{2, 2});
  CHECK(a.data == std::vector<uint8_t>{1, 2, 3, 4});
}

TEST_CASE("A truncated IDX payload is refused with the promised and actual sizes") {
  auto bytes = small_idx(5).images;
  bytes.erase(bytes.end() - 7, bytes.end());
  CHECK_THROWS_WITH(parse_idx(bytes, "train-images.gz"),
                    Contains("train-images.gz: truncated: header says 5 images of 2x3") &&
                        Contains("file holds 23 bytes"));
}

TEST_CASE("A truncated IDX header is refused") {
  CHECK_THROWS_WITH(parse_idx({0, 0, 8, 3, 0, 0}, "h"), Contains("truncated") && Contains("16"));
  CHECK_THROWS_WITH(parse_idx({0, 0}, "h"), Contains("not an IDX file"));
}

TEST_CASE("Bytes after the IDX payload are refused as trailing garbage") {
  auto bytes = small_idx(5).labels;
  bytes.push_back(0);
  CHECK_THROWS_WITH(parse_idx(bytes, "labels"),
                    Contains("trailing garbage") && Contains("5 labels"));
}

TEST_CASE("A wrong IDX magic is refused") {
  auto bytes = small_idx(2).images;
  bytes[0] = 0x1f;
  bytes[1] = 0x8c;
  CHECK_THROWS_WITH(parse_idx(bytes, "x"), Contains("not an IDX file"));
}

TEST_CASE("IDX type codes other than unsigned byte are refused by name") {
  const auto bytes = idx_bytes(0x0D, {1}, {0, 0, 0, 0});
  CHECK_THROWS_WITH(parse_idx(bytes, "x"), Contains("0x0d (float32) is not supported"));
}

TEST_CASE("Image and label files with different counts are refused") {
  TempDir dir;
  distlab::test::write_bytes(dir.file("img"), small_idx(5).images);
  distlab::test::write_bytes(dir.file("lbl"), small_idx(4).labels);
  CHECK_THROWS_WITH(load_idx_dataset(dir.file("img"), dir.file("lbl"), "x"),
                    Contains("holds 4 labels") && Contains("holds 5 images"));
}

TEST_CASE("A label of 10 or more is refused naming the example") {
  TempDir dir;
  auto idx = small_idx(5);
  idx.labels.back() = 10;
  distlab::test::write_bytes(dir.file("img"), idx.images);
  distlab::test::write_bytes(dir.file("lbl"), idx.labels);
  CHECK_THROWS_WITH(load_idx_dataset(dir.file("img"), dir.file("lbl"), "x"),
                    Contains("label 10 of example 4 is not in 0-9"));
}

TEST_CASE("Files of the wrong rank are refused") {
  TempDir dir;
  const auto idx = small_idx(3);
  distlab::test::write_bytes(dir.file("img"), idx.images);
  distlab::test::write_bytes(dir.file("lbl"), idx.labels);
  CHECK_THROWS_WITH(load_idx_dataset(dir.file("lbl"), dir.file("lbl"), "x"),
                    Contains("expected 3 dimensions"));
  CHECK_THROWS_WITH(load_idx_dataset(dir.file("img"), dir.file("img"), "x"),
                    Contains("expected 1 dimension"));
}

TEST_CASE("A missing Fashion-MNIST directory is a data error naming the file") {
  CHECK_THROWS_WITH(load_fashion_mnist("/nonexistent-distlab-dir", true),
                    Contains("train-images-idx3-ubyte.gz"));
}

TEST_CASE("The real Fashion-MNIST loads with its published sizes") {
  INFO("Fashion-MNIST comes from the Debian package dataset-fashion-mnist (./setup)");
  REQUIRE(std::filesystem::exists(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz"));
  const auto train = GENERATE(true, false);
  CAPTURE(train);
  const Dataset d = load_fashion_mnist(kFashionMnistDir, train);
  CHECK(d.size() == (train ? 60000 : 10000));
  CHECK(d.name == (train ? "fashion-mnist/train" : "fashion-mnist/test"));
  CHECK(d.example_shape == Shape{28, 28, 1});
  CHECK(d.features.rows() == d.size());
  CHECK(d.features.cols() == 784);
  CHECK(d.features.minCoeff() == 0.0f);
  CHECK(d.features.maxCoeff() == 1.0f);
  const std::set<int32_t> classes(d.labels.begin(), d.labels.end());
  CHECK(classes == std::set<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  // Fashion-MNIST is balanced: every class has a tenth of the examples.
  CHECK(std::count(d.labels.begin(), d.labels.end(), 3) == d.size() / 10);
}

TEST_CASE("Images without pixels are refused") {
  TempDir dir;
  distlab::test::write_bytes(dir.file("img"), idx_bytes(0x08, {0, 0, 70000}, {}));
  distlab::test::write_bytes(dir.file("lbl"), idx_bytes(0x08, {0}, {}));
  CHECK_THROWS_WITH(load_idx_dataset(dir.file("img"), dir.file("lbl"), "x"),
                    Contains("rows and columns must be in 1-32768"));
}
