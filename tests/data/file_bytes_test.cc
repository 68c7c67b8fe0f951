#include "nn/data/file_bytes.h"

#include <catch2/catch.hpp>

#include "common/error.h"
#include "tests/data/test_files.h"

using namespace distlab::nn;
using Catch::Matchers::Contains;
using distlab::DataError;
using distlab::test::TempDir;

namespace {

std::vector<uint8_t> sample_bytes(std::size_t n) {
  std::vector<uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>((i * 7919) >> 3);
  return bytes;
}

}  // namespace

TEST_CASE("A plain file is read byte for byte") {
  TempDir dir;
  const auto bytes = sample_bytes(200000);
  distlab::test::write_bytes(dir.file("plain.bin"), bytes);
  CHECK(read_file_bytes(dir.file("plain.bin")) == bytes);
}

TEST_CASE("An empty file reads as no bytes") {
  TempDir dir;
  distlab::test::write_bytes(dir.file("empty"), {});
  CHECK(read_file_bytes(dir.file("empty")).empty());
}

TEST_CASE("A gzip file is decompressed transparently") {
  TempDir dir;
  const auto bytes = sample_bytes(3 << 20);  // bigger than one inflate buffer
  distlab::test::write_gzip(dir.file("data.gz"), bytes);
  CHECK(read_file_bytes(dir.file("data.gz")) == bytes);
}

TEST_CASE("Concatenated gzip members are joined") {
  TempDir dir;
  distlab::test::write_gzip(dir.file("a.gz"), {1, 2, 3});
  distlab::test::write_gzip(dir.file("b.gz"), {4, 5});
  auto both = distlab::test::read_bytes(dir.file("a.gz"));
  const auto b = distlab::test::read_bytes(dir.file("b.gz"));
  both.insert(both.end(), b.begin(), b.end());
  distlab::test::write_bytes(dir.file("ab.gz"), both);
  CHECK(read_file_bytes(dir.file("ab.gz")) == std::vector<uint8_t>{1, 2, 3, 4, 5});
}

TEST_CASE("A missing file is a data error naming it") {
  TempDir dir;
  const std::string path = dir.file("nope.bin");
  CHECK_THROWS_MATCHES(
      read_file_bytes(path), DataError,
      Catch::Matchers::Predicate<DataError>([&](const DataError& e) { return e.path() == path; },
                                            "error names the file"));
  CHECK_THROWS_WITH(read_file_bytes(path), Contains("nope.bin") && Contains("cannot open"));
}

TEST_CASE("A directory is refused as a data file") {
  TempDir dir;
  CHECK_THROWS_WITH(read_file_bytes(dir.path().string()), Contains("is a directory"));
}

TEST_CASE("A truncated gzip stream is refused") {
  TempDir dir;
  distlab::test::write_gzip(dir.file("full.gz"), sample_bytes(100000));
  auto gz = distlab::test::read_bytes(dir.file("full.gz"));
  gz.erase(gz.begin() + gz.size() / 2, gz.end());
  distlab::test::write_bytes(dir.file("half.gz"), gz);
  CHECK_THROWS_WITH(read_file_bytes(dir.file("half.gz")),
                    Contains("half.gz") && Contains("truncated gzip"));
}

TEST_CASE("A gzip stream cut just before its trailer is refused") {
  TempDir dir;
  distlab::test::write_gzip(dir.file("full.gz"), sample_bytes(1000));
  auto gz = distlab::test::read_bytes(dir.file("full.gz"));
  gz.erase(gz.end() - 4, gz.end());  // drop the length field of the trailer
  distlab::test::write_bytes(dir.file("cut.gz"), gz);
  CHECK_THROWS_WITH(read_file_bytes(dir.file("cut.gz")), Contains("truncated gzip"));
}

TEST_CASE("A corrupt gzip stream is refused") {
  TempDir dir;
  distlab::test::write_gzip(dir.file("full.gz"), sample_bytes(100000));
  auto gz = distlab::test::read_bytes(dir.file("full.gz"));
  for (std::size_t i = 20; i < 60; ++i) gz[i] ^= 0x5a;
  distlab::test::write_bytes(dir.file("bad.gz"), gz);
  CHECK_THROWS_WITH(read_file_bytes(dir.file("bad.gz")), Contains("bad.gz") && Contains("gzip"));
}

TEST_CASE("A wrong checksum in the gzip trailer is refused") {
  TempDir dir;
  distlab::test::write_gzip(dir.file("full.gz"), sample_bytes(1000));
  auto gz = distlab::test::read_bytes(dir.file("full.gz"));
  gz[gz.size() - 8] ^= 0xff;  // first byte of the CRC-32
  distlab::test::write_bytes(dir.file("crc.gz"), gz);
  CHECK_THROWS_WITH(read_file_bytes(dir.file("crc.gz")), Contains("corrupt gzip"));
}

TEST_CASE("Bytes after the gzip stream are refused as trailing garbage") {
  TempDir dir;
  distlab::test::write_gzip(dir.file("full.gz"), {1, 2, 3});
  auto gz = distlab::test::read_bytes(dir.file("full.gz"));
  gz.push_back('x');
  distlab::test::write_bytes(dir.file("tail.gz"), gz);
  CHECK_THROWS_WITH(read_file_bytes(dir.file("tail.gz")), Contains("trailing garbage"));
}
