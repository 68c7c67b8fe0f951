#include "nn/data/cifar10.h"

#include <catch2/catch.hpp>

#include "common/error.h"
#include "tests/data/test_files.h"

using namespace distlab::nn;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using distlab::test::TempDir;

namespace {

// Records whose pixel bytes are (channel * 50 + row + col + record) % 256,
// so every value says where it came from.
std::vector<uint8_t> cifar_records(const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> out;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    out.push_back(labels[r]);
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < 32; ++y) {
        for (int x = 0; x < 32; ++x)
          out.push_back(static_cast<uint8_t>((c * 50 + y + x + r) % 256));
      }
    }
  }
  return out;
}

float expected_pixel(int record, int y, int x, int c) {
  return static_cast<float>((c * 50 + y + x + record) % 256) / 255.0f;
}

}  // namespace

TEST_CASE("CIFAR-10 records become NHWC images with their labels") {
  TempDir dir;
  distlab::test::write_bytes(dir.file("a.bin"), cifar_records({3, 9}));
  distlab::test::write_bytes(dir.file("b.bin"), cifar_records({0}));
  const Dataset d = load_cifar10_batches({dir.file("a.bin"), dir.file("b.bin")}, "tiny");
  CHECK(d.name == "tiny");
  CHECK(d.size() == 3);
  CHECK(d.example_shape == Shape{32, 32, 3});
  CHECK(d.num_classes == 10);
  CHECK(d.labels == std::vector<int32_t>{3, 9, 0});
  const auto spot = GENERATE(table<int, int, int, int>(
      {{0, 0, 0, 0}, {0, 5, 7, 2}, {1, 31, 0, 1}, {1, 12, 31, 2}, {2, 31, 31, 0}}));
  const auto [record, y, x, c] = spot;
  CAPTURE(record, y, x, c);
  const int column = (y * 32 + x) * 3 + c;
  // b.bin's only record was generated as record 0 of its file.
  const int generated_as = record == 2 ? 0 : record;
  CHECK_THAT(d.features(record, column), WithinAbs(expected_pixel(generated_as, y, x, c), 1e-7));
}

TEST_CASE("A CIFAR-10 file that is not whole records is refused with the count") {
  TempDir dir;
  auto bytes = cifar_records({1, 2});
  bytes.erase(bytes.end() - 100, bytes.end());
  distlab::test::write_bytes(dir.file("cut.bin"), bytes);
  CHECK_THROWS_WITH(load_cifar10_batches({dir.file("cut.bin")}, "x"),
                    Contains("cut.bin") && Contains("1 records and 2973 leftover bytes"));
}

TEST_CASE("A CIFAR-10 label over 9 is refused naming the record") {
  TempDir dir;
  distlab::test::write_bytes(dir.file("bad.bin"), cifar_records({1, 2, 10}));
  CHECK_THROWS_WITH(load_cifar10_batches({dir.file("bad.bin")}, "x"),
                    Contains("bad.bin") && Contains("record 2") && Contains("label 10"));
}

TEST_CASE("An empty CIFAR-10 file is refused") {
  TempDir dir;
  distlab::test::write_bytes(dir.file("empty.bin"), {});
  CHECK_THROWS_WITH(load_cifar10_batches({dir.file("empty.bin")}, "x"), Contains("empty file"));
}

TEST_CASE("A missing CIFAR-10 batch is a data error naming it") {
  TempDir dir;
  distlab::test::write_bytes(dir.file("data_batch_1.bin"), cifar_records({1}));
  CHECK_THROWS_WITH(load_cifar10(dir.path().string(), true), Contains("data_batch_2.bin"));
  CHECK_THROWS_WITH(load_cifar10(dir.path().string(), false), Contains("test_batch.bin"));
}

TEST_CASE("The CIFAR-10 test batch loads from its directory by name") {
  TempDir dir;
  distlab::test::write_bytes(dir.file("test_batch.bin"), cifar_records({4, 5}));
  const Dataset d = load_cifar10(dir.path().string(), false);
  CHECK(d.name == "cifar10/test");
  CHECK(d.labels == std::vector<int32_t>{4, 5});
}
