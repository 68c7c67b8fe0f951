#include "calibration/system_probes.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <span>
#include <thread>

#include "common/atomic_file.h"
#include "common/cpu_clock.h"
#include "common/error.h"
#include "net/cluster/cluster_config.h"
#include "net/runtime/loopback_ports.h"
#include "net/runtime/tcp_runtime.h"
#include "strategy/message.h"

namespace distlab::calibration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMiB = std::size_t{1} << 20;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `f` and turns whatever it throws into an Error that names the probe.
template <typename F>
auto probing(const std::string& probe, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    throw Error(probe + ": out of memory");
  } catch (const std::exception& e) {
    throw Error(probe + ": " + e.what());
  }
}

void check_budget(double budget_seconds) {
  if (!(budget_seconds > 0) || !std::isfinite(budget_seconds)) {
    throw Error("the time budget must be a positive number of seconds, not " +
                std::to_string(budget_seconds));
  }
}

// Shares what is left of a probe's budget among the sizes still to measure,
// so that time a size did not use goes to the next ones.
class Budget {
 public:
  explicit Budget(double seconds) : seconds_(seconds), start_(Clock::now()) {}
  double share(std::size_t sizes_left) const {
    const double left = seconds_ - seconds_since(start_);
    return left > 0 && sizes_left > 0 ? left / static_cast<double>(sizes_left) : 0;
  }

 private:
  double seconds_;
  Clock::time_point start_;
};

// The median of the times `once` returns: at least `min_reps` of them, then
// more while `share` seconds have not passed, up to `max_reps`.
template <typename F>
double median_of_repetitions(F&& once, double share, int min_reps, int max_reps) {
  std::vector<double> times;
  const auto start = Clock::now();
  while (static_cast<int>(times.size()) < max_reps &&
         (static_cast<int>(times.size()) < min_reps || seconds_since(start) < share)) {
    times.push_back(once());
  }
  return median(std::move(times));
}

// a = b + s·c over n floats: 2 floats read and 1 written an element.
void triad(float* a, const float* b, const float* c, std::int64_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
}

}  // namespace

// Samples: size = bytes read plus written by one triad over the three
// arrays (together 16 to 256 MiB), seconds = the median pass.
MemoryMeasurement measure_memory(int threads, double budget_seconds) {
  return probing("memory probe", [&] {
    check_budget(budget_seconds);
    if (threads < 1) throw Error("threads must be at least 1, not " + std::to_string(threads));
    const Budget budget(budget_seconds);
    const std::vector<std::size_t> totals = {16 * kMiB, 64 * kMiB, 256 * kMiB};
    const std::int64_t largest = static_cast<std::int64_t>(totals.back() / (3 * sizeof(float)));
    const std::unique_ptr<float[]> a(new float[largest]);
    const std::unique_ptr<float[]> b(new float[largest]);
    const std::unique_ptr<float[]> c(new float[largest]);
    // Touched by the threads that stream them, so that no page fault is
    // timed and each page sits near the thread that uses it.
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < largest; ++i) {
      a[i] = 0.0f;
      b[i] = 1.0f;
      c[i] = 2.0f;
    }
    MemoryMeasurement result;
    for (std::size_t k = 0; k < totals.size(); ++k) {
      const std::int64_t n = static_cast<std::int64_t>(totals[k] / (3 * sizeof(float)));
      triad(a.get(), b.get(), c.get(), n, threads);  // warm-up
      const double seconds = median_of_repetitions(
          [&] {
            const auto start = Clock::now();
            triad(a.get(), b.get(), c.get(), n, threads);
            return seconds_since(start);
          },
          budget.share(totals.size() - k), 3, 100);
      result.samples.push_back({static_cast<double>(n) * 3 * sizeof(float), seconds});
    }
    // Reading the result keeps the stores; a wrong one is a broken kernel.
    if (a[0] != 7.0f || a[largest - 1] != 7.0f) throw Error("the triad computed wrong values");
    const Sample& large = result.samples.back();
    if (!(large.seconds > 0)) throw Error("the clock did not advance over a 256 MiB pass");
    result.bandwidth = large.size / large.seconds;
    return result;
  });
}

// Chief 0 sends, worker 0 echoes each message back until one asks it to
// stop; both are TcpRuntimes in this process, connected over 127.0.0.1 as
// the tasks of a ./realnet run are.
LinkMeasurement measure_loopback(double budget_seconds) {
  return probing("loopback probe", [&] {
    check_budget(budget_seconds);
    const Budget budget(budget_seconds);
    constexpr strategy::Tag kTag = strategy::Tag::kRing;
    constexpr int32_t kEcho = 0, kStop = 1;
    const strategy::ClusterSpec spec{.chiefs = 1, .workers = 1, .ps = 0};
    const strategy::TaskId chief_id = spec.task_at(0), worker_id = spec.task_at(1);
    const net::ClusterAddresses addresses =
        net::loopback_cluster(spec, net::free_loopback_ports(2));
    net::TcpOptions options;
    options.connect_deadline = std::chrono::seconds(10);
    options.receive_timeout = std::chrono::seconds(30);

    std::exception_ptr echo_failure;
    std::thread echo([&] {
      try {
        net::TcpRuntime worker(worker_id, addresses, options);
        worker.set_span_limit(0);
        worker.connect();
        for (;;) {
          strategy::Message message = worker.recv(chief_id, kTag);
          if (message.op == kStop) break;
          worker.send(chief_id, std::move(message));
        }
        worker.disconnect();
      } catch (...) {
        echo_failure = std::current_exception();
      }
    });

    const std::vector<std::size_t> sizes = {8,       1 << 10, 16 << 10, 256 << 10,
                                            1 << 20, 4 << 20, 16 << 20};
    LinkMeasurement result;
    std::exception_ptr chief_failure;
    try {
      // Closed before the join: if the chief fails, its connection goes and
      // the echo's receive fails rather than waiting.
      net::TcpRuntime chief(chief_id, addresses, options);
      chief.set_span_limit(0);
      chief.connect();
      int64_t step = 0;
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        const int64_t floats = static_cast<int64_t>(sizes[k] / sizeof(float));
        const std::vector<float> payload(static_cast<std::size_t>(floats), 1.0f);
        auto one_way = [&] {
          strategy::Message message = strategy::make_message(kTag, step++, floats, payload.data());
          message.op = kEcho;
          const auto start = Clock::now();
          chief.send(worker_id, std::move(message));
          const strategy::Message back = chief.recv(worker_id, kTag);
          const double seconds = seconds_since(start) / 2;
          if (static_cast<int64_t>(back.values.size()) != floats) {
            throw Error("a message of " + std::to_string(floats) + " floats came back with " +
                        std::to_string(back.values.size()));
          }
          return seconds;
        };
        for (int i = 0; i < 2; ++i) one_way();  // warm-up: connections, buffers
        // The process does nothing else meanwhile: its CPU time is what the
        // messages cost, the sender's and the receiver's sides together.
        const int64_t first_step = step;
        const double cpu_start = process_cpu_seconds();
        const double seconds =
            median_of_repetitions(one_way, budget.share(sizes.size() - k), 3, 500);
        const double messages = 2.0 * static_cast<double>(step - first_step);  // there and back
        result.samples.push_back({static_cast<double>(sizes[k]), seconds});
        result.cpu_samples.push_back(
            {static_cast<double>(sizes[k]), (process_cpu_seconds() - cpu_start) / messages});
      }
      const float nothing = 0.0f;
      strategy::Message stop = strategy::make_message(kTag, step++, 1, &nothing);
      stop.op = kStop;
      chief.send(worker_id, std::move(stop));
      chief.disconnect();
    } catch (...) {
      chief_failure = std::current_exception();
    }
    echo.join();
    if (chief_failure) std::rethrow_exception(chief_failure);
    if (echo_failure) std::rethrow_exception(echo_failure);

    const AffineFit fit = fit_affine(result.samples, "loopback one-way time");
    result.latency_seconds = fit.fixed_seconds;
    result.bandwidth = fit.rate;
    result.quality = fit.quality;
    const AffineFit cpu = fit_affine(result.cpu_samples, "loopback CPU time per message");
    result.cpu_seconds = cpu.fixed_seconds;
    result.cpu_bandwidth = cpu.rate;
    result.cpu_quality = cpu.quality;
    return result;
  });
}

// Each file is written by write_file_atomically, as a checkpoint is
// (temporary file, fsync, rename, fsync of the folder), under a new name as
// each checkpoint is, and removed after its time is taken.
DiskMeasurement measure_disk(const std::string& folder, double budget_seconds) {
  return probing("disk probe in " + folder, [&] {
    check_budget(budget_seconds);
    const Budget budget(budget_seconds);
    std::error_code error;
    if (!fs::is_directory(folder, error)) {
      throw Error(fs::exists(folder, error) ? "not a folder" : "no such folder");
    }
    const std::vector<std::size_t> sizes = {64 << 10, 1 * kMiB, 8 * kMiB, 32 * kMiB};
    // Bytes that no file system compresses away.
    std::vector<std::byte> data(sizes.back());
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (std::byte& byte : data) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      byte = static_cast<std::byte>(state >> 56);
    }
    const std::string path =
        (fs::path(folder) / ("distlab-disk-probe-" + std::to_string(::getpid()) + ".bin")).string();
    struct RemoveOnExit {
      const std::string& path;
      ~RemoveOnExit() {
        std::error_code ignored;
        fs::remove(path, ignored);
      }
    } remove_on_exit{path};
    auto write_once = [&](std::size_t bytes) {
      const auto start = Clock::now();
      write_file_atomically(path, std::span<const std::byte>(data.data(), bytes));
      const double seconds = seconds_since(start);
      fs::remove(path);
      return seconds;
    };
    // Untimed: fails at once, naming the reason, where the folder takes no files.
    write_once(sizes.front());

    DiskMeasurement result;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const double seconds = median_of_repetitions([&] { return write_once(sizes[k]); },
                                                   budget.share(sizes.size() - k), 2, 20);
      result.samples.push_back({static_cast<double>(sizes[k]), seconds});
    }
    const AffineFit fit = fit_affine(result.samples, "file write time");
    result.file_seconds = fit.fixed_seconds;
    result.write_bandwidth = fit.rate;
    result.quality = fit.quality;
    return result;
  });
}

}  // namespace distlab::calibration
