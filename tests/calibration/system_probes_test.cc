// The probes of the machine, on small budgets: they must return figures in
// a plausible range (loose bounds: the tests run on small, noisy machines),
// cover their sizes, leave nothing behind and fail with a clear message.
#include "calibration/system_probes.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "common/error.h"
#include "support/error_message.h"

using namespace distlab;
using namespace distlab::calibration;
using distlab::testing::message_of;
namespace fs = std::filesystem;

namespace {

constexpr double kBudget = 0.5;
constexpr double kMiB = 1 << 20;

fs::path scratch() {
  std::random_device entropy;
  const fs::path dir = fs::temp_directory_path() / ("distlab-disk-" + std::to_string(entropy()));
  fs::create_directories(dir);
  return dir;
}

void check_samples(const std::vector<Sample>& samples, double smallest, double largest) {
  REQUIRE(!samples.empty());
  CHECK(samples.front().size == Approx(smallest).epsilon(1e-6));
  CHECK(samples.back().size == Approx(largest).epsilon(1e-6));
  for (std::size_t k = 0; k < samples.size(); ++k) {
    CHECK(std::isfinite(samples[k].seconds));
    CHECK(samples[k].seconds > 0);
    if (k > 0) CHECK(samples[k].size > samples[k - 1].size);
  }
}

}  // namespace

TEST_CASE("the memory probe streams 16 to 256 MiB and reports the large figure") {
  const MemoryMeasurement m = measure_memory(2, kBudget);
  REQUIRE(m.samples.size() == 3);
  // Read plus written bytes of three arrays of whole floats.
  check_samples(m.samples, 16 * kMiB, 256 * kMiB);
  CHECK(std::isfinite(m.bandwidth));
  CHECK(m.bandwidth > 100e6);
  CHECK(m.bandwidth == Approx(m.samples.back().size / m.samples.back().seconds));
}

TEST_CASE("the memory probe refuses no threads and no budget") {
  CHECK_THAT(message_of<Error>([] { measure_memory(0, kBudget); }),
             Catch::Contains("memory probe") && Catch::Contains("threads"));
  CHECK_THAT(message_of<Error>([] { measure_memory(1, 0); }), Catch::Contains("budget"));
}

TEST_CASE("the loopback probe ping-pongs 8 bytes to 16 MiB through two TcpRuntimes") {
  const LinkMeasurement link = measure_loopback(kBudget);
  REQUIRE(link.samples.size() == 7);
  check_samples(link.samples, 8, 16 * kMiB);
  // Moving 16 MiB takes longer than moving 8 bytes, on any machine.
  CHECK(link.samples.back().seconds > link.samples.front().seconds);
  CHECK(std::isfinite(link.latency_seconds));
  CHECK(link.latency_seconds >= 0);
  CHECK(link.latency_seconds < 10e-3);
  CHECK(std::isfinite(link.bandwidth));
  CHECK(link.bandwidth > 10e6);
  CHECK(std::isfinite(link.quality.worst_error));
  CHECK(link.quality.median_error <= link.quality.worst_error);
  // The CPU a message costs, both sides: more for 16 MiB than for 8 bytes,
  // and some for every message (a system call on each side at least).
  REQUIRE(link.cpu_samples.size() == 7);
  check_samples(link.cpu_samples, 8, 16 * kMiB);
  CHECK(link.cpu_samples.back().seconds > link.cpu_samples.front().seconds);
  CHECK(link.cpu_samples.front().seconds > 0);
  CHECK(std::isfinite(link.cpu_seconds));
  CHECK(link.cpu_seconds >= 0);
  CHECK(link.cpu_bandwidth > 10e6);
  CHECK(link.cpu_quality.median_error <= link.cpu_quality.worst_error);
}

TEST_CASE("the loopback probe can run twice in one process") {
  CHECK(measure_loopback(0.1).bandwidth > 0);
  CHECK(measure_loopback(0.1).bandwidth > 0);
}

TEST_CASE("the disk probe writes 64 KiB to 32 MiB files and removes them") {
  const fs::path dir = scratch();
  const DiskMeasurement disk = measure_disk(dir.string(), kBudget);
  REQUIRE(disk.samples.size() == 4);
  check_samples(disk.samples, 64 * 1024, 32 * kMiB);
  CHECK(std::isfinite(disk.file_seconds));
  CHECK(disk.file_seconds >= 0);
  CHECK(std::isfinite(disk.write_bandwidth));
  CHECK(disk.write_bandwidth > 1e6);
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST_CASE("the disk probe names a folder it cannot write into") {
  const fs::path dir = scratch();
  const std::string missing = (dir / "no-such-folder").string();
  CHECK_THAT(message_of<Error>([&] { measure_disk(missing, kBudget); }),
             Catch::Contains("disk probe") && Catch::Contains(missing) &&
                 Catch::Contains("no such folder"));
  const std::string file = (dir / "a-file").string();
  std::ofstream(file) << "x";
  CHECK_THAT(message_of<Error>([&] { measure_disk(file, kBudget); }),
             Catch::Contains(file) && Catch::Contains("not a folder"));
  CHECK_THAT(message_of<Error>([&] { measure_disk(dir.string(), -1); }), Catch::Contains("budget"));
  // A folder that takes no files: read-only to its owner, or /proc for root,
  // who writes anywhere else.
  const bool root = ::geteuid() == 0;
  const fs::path locked = root ? fs::path("/proc") : dir / "read-only";
  if (!root) {
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  }
  CHECK_THAT(message_of<Error>([&] { measure_disk(locked.string(), kBudget); }),
             Catch::Contains(locked.string()) && Catch::Contains("cannot create"));
  if (!root) {
    fs::permissions(locked, fs::perms::owner_all);
    CHECK(fs::is_empty(locked));
  }
  fs::remove_all(dir);
}
