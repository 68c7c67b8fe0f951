// The safetensors codec: what it writes is what the format's reference
// reader expects (checked byte by byte here), and whatever is not a
// well-formed file is refused with the file's name and the reason.
#include "common/safetensors.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/error.h"

using namespace distlab;
using safetensors::DType;
using safetensors::Tensor;

namespace {

std::span<const std::byte> bytes_of(const std::vector<float>& v) {
  return std::as_bytes(std::span<const float>(v));
}

uint64_t header_length(const std::vector<std::byte>& file) {
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  return n;
}

nlohmann::json header_of(const std::vector<std::byte>& file) {
  const uint64_t n = header_length(file);
  return nlohmann::json::parse(std::string(reinterpret_cast<const char*>(file.data() + 8), n));
}

std::string refusal(std::span<const std::byte> bytes) {
  try {
    safetensors::decode(bytes, "model.safetensors");
  } catch (const DataError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::vector<std::byte> with_header(const std::string& header, std::size_t data_bytes) {
  std::vector<std::byte> file(8 + header.size() + data_bytes);
  const uint64_t n = header.size();
  std::memcpy(file.data(), &n, 8);
  std::memcpy(file.data() + 8, header.data(), header.size());
  return file;
}

}  // namespace

TEST_CASE("safetensors: a file holds its tensors and metadata, and reads back the same") {
  const std::vector<float> kernel = {1, 2, 3, 4, 5, 6};
  const std::vector<float> bias = {-1.5f, 0.25f};
  const std::vector<int64_t> steps = {7, 9};
  const std::vector<Tensor> tensors = {
      {"dense/kernel", DType::kF32, {3, 2}, bytes_of(kernel)},
      {"dense/bias", DType::kF32, {2}, bytes_of(bias)},
      {"steps", DType::kI64, {2}, std::as_bytes(std::span<const int64_t>(steps))}};
  const std::vector<std::byte> file = safetensors::encode(tensors, {{"format", "test"}});

  // The layout the format prescribes: length, JSON header, data from an
  // 8-byte aligned offset, tensors packed in the order given.
  const uint64_t n = header_length(file);
  CHECK((8 + n) % 8 == 0);
  const nlohmann::json header = header_of(file);
  CHECK(header["__metadata__"]["format"] == "test");
  CHECK(header["dense/kernel"]["dtype"] == "F32");
  CHECK(header["dense/kernel"]["shape"] == nlohmann::json({3, 2}));
  CHECK(header["dense/kernel"]["data_offsets"] == nlohmann::json({0, 24}));
  CHECK(header["dense/bias"]["data_offsets"] == nlohmann::json({24, 32}));
  CHECK(header["steps"]["dtype"] == "I64");
  CHECK(file.size() == 8 + n + 24 + 8 + 16);
  CHECK(safetensors::encoded_size(tensors, {{"format", "test"}}) == file.size());

  const safetensors::File read = safetensors::decode(file, "x");
  CHECK(read.metadata.at("format") == "test");
  REQUIRE(read.tensors.size() == 3);
  const Tensor* b = read.find("dense/bias");
  REQUIRE(b != nullptr);
  CHECK(b->shape == std::vector<int64_t>{2});
  std::vector<float> back(2);
  std::memcpy(back.data(), b->data.data(), 8);
  CHECK(back == bias);
  CHECK(read.find("nothing") == nullptr);
}

TEST_CASE("safetensors: the size of a file can be known without its values") {
  std::vector<Tensor> shapes = {{"a", DType::kF32, {1000, 3}, {}}, {"b", DType::kI64, {1}, {}}};
  const std::vector<float> a(3000, 1.0f);
  const std::vector<int64_t> b = {1};
  std::vector<Tensor> full = shapes;
  full[0].data = bytes_of(a);
  full[1].data = std::as_bytes(std::span<const int64_t>(b));
  CHECK(safetensors::encoded_size(shapes, {{"k", "v"}}) ==
        safetensors::encode(full, {{"k", "v"}}).size());
}

TEST_CASE("safetensors: a tensor whose bytes do not match its shape is not written") {
  const std::vector<float> three = {1, 2, 3};
  CHECK_THROWS_AS(safetensors::encode({{"t", DType::kF32, {2, 2}, bytes_of(three)}}, {}), Error);
  CHECK_THROWS_AS(
      safetensors::encode(
          {{"t", DType::kF32, {3}, bytes_of(three)}, {"t", DType::kF32, {3}, bytes_of(three)}}, {}),
      Error);
}

TEST_CASE("safetensors: a malformed file is refused with its name and what is wrong") {
  const std::vector<float> values = {1, 2, 3, 4};
  const std::vector<std::byte> good =
      safetensors::encode({{"t", DType::kF32, {4}, bytes_of(values)}}, {});
  const std::span<const std::byte> all(good);

  CHECK_THAT(refusal(all.first(5)), Catch::Contains("model.safetensors: truncated"));
  CHECK_THAT(refusal(all.first(good.size() - 1)), Catch::Contains("truncated: tensor t ends"));
  CHECK_THAT(refusal(with_header("{not json", 0)), Catch::Contains("not valid JSON"));
  CHECK_THAT(refusal(with_header("[1, 2]", 0)), Catch::Contains("not a JSON object"));
  CHECK_THAT(
      refusal(with_header(R"({"t": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})", 4)),
      Catch::Contains("dtype F16"));
  CHECK_THAT(
      refusal(with_header(R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", 4)),
      Catch::Contains("its shape needs 8"));
  CHECK_THAT(refusal(with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                     "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
                                 12)),
             Catch::Contains("overlap or hole"));
  CHECK_THAT(
      refusal(with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 8)),
      Catch::Contains("4 bytes after the last tensor"));
  CHECK_THAT(refusal(with_header(R"({"a": {"dtype": "F32", "shape": [1]}})", 4)),
             Catch::Contains("malformed safetensors header"));
  // Numbers that are not whole and 0 or more: a fraction or a negative one
  // was converted without a word, and one beyond an integer's range was
  // undefined behaviour (found by fuzzing).
  const std::pair<std::string, std::string> not_whole[] = {
      {R"("shape": [2.3e44], "data_offsets": [0, 4])",
       "tensor t: shape holds 2.3e+44, not a whole number"},
      {R"("shape": [1.5], "data_offsets": [0, 4])", "tensor t: shape holds 1.5"},
      {R"("shape": [1], "data_offsets": [-4, 4])",
       "tensor t: data_offsets holds -4, not a whole number"},
  };
  for (const auto& [fields, expected] : not_whole) {
    const std::string header = R"({"t": {"dtype": "F32", )" + fields + "}}";
    CHECK_THAT(refusal(with_header(header, 4)), Catch::Contains(expected));
  }
  std::vector<std::byte> huge = good;
  const uint64_t claim = uint64_t{1} << 40;
  std::memcpy(huge.data(), &claim, 8);
  CHECK_THAT(refusal(huge), Catch::Contains("the header claims"));
}
