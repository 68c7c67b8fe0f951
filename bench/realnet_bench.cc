#include "realnet_bench.h"

#include <algorithm>

#include "common/error.h"
#include "strategy/ring_allreduce.h"

namespace distlab::bench {

using strategy::FloatRange;
using strategy::TaskId;

Size parse_size(const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw InputError("--sizes: '" + text + "' is not a size (1KB, 1MB, 25MB, 100MB, or bytes)");
  }
  const std::string unit = text.substr(used);
  int shift = 0;
  if (unit == "KB" || unit == "K") {
    shift = 10;
  } else if (unit == "MB" || unit == "M") {
    shift = 20;
  } else if (unit == "GB" || unit == "G") {
    shift = 30;
  } else if (!unit.empty() && unit != "B") {
    throw InputError("--sizes: unknown unit in '" + text + "' (KB, MB, GB)");
  }
  const int64_t bytes = static_cast<int64_t>(value) << shift;
  if (bytes < 4 || bytes % 4 != 0) {
    throw InputError("--sizes: '" + text + "' is not a positive multiple of 4 bytes");
  }
  return {text, bytes};
}

int iters_for(int64_t bytes, double scale) {
  const int base = bytes <= (64 << 10)   ? 200
                   : bytes <= (4 << 20)  ? 40
                   : bytes <= (32 << 20) ? 12
                                         : 6;
  return std::max(3, static_cast<int>(base * scale));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void barrier(strategy::Runtime& runtime, const std::vector<TaskId>& ring, int rank, int64_t& step) {
  std::vector<float> token(ring.size(), 1.0f);
  strategy::ring_allreduce(runtime, ring, rank, FloatRange(token), step++);
}

}  // namespace distlab::bench
