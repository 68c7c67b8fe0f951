// Atomic writes: a file is whole under its name or absent, no temporary is
// left behind, and failures name the file and the system's reason.
#include "common/atomic_file.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <string>

#include "common/error.h"

using namespace distlab;
namespace fs = std::filesystem;

namespace {

fs::path scratch() {
  std::random_device entropy;
  const fs::path dir = fs::temp_directory_path() / ("distlab-atomic-" + std::to_string(entropy()));
  fs::create_directories(dir);
  return dir;
}

std::vector<std::byte> text(const std::string& s) {
  const auto bytes = std::as_bytes(std::span<const char>(s));
  return {bytes.begin(), bytes.end()};
}

}  // namespace

TEST_CASE("an atomic write leaves the new content under the name and nothing else") {
  const fs::path dir = scratch();
  const std::string path = (dir / "file.bin").string();
  write_file_atomically(path, text("first"));
  CHECK(read_file_bytes(path) == text("first"));
  write_file_atomically(path, text("second, longer"));
  CHECK(read_file_bytes(path) == text("second, longer"));
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    CHECK(entry.path().filename() == "file.bin");
    ++entries;
  }
  CHECK(entries == 1);
  fs::remove_all(dir);
}

TEST_CASE("an atomic write that cannot happen names the file and leaves nothing") {
  const fs::path dir = scratch();
  const std::string missing = (dir / "no-such-folder" / "file.bin").string();
  try {
    write_file_atomically(missing, text("x"));
    FAIL("wrote into a folder that does not exist");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("no-such-folder") && Catch::Contains("cannot create"));
  }
  CHECK_THROWS_AS(read_file_bytes(missing), DataError);
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}
