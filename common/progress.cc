#include "common/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace distlab {
namespace {

using Clock = std::chrono::steady_clock;

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace

Progress::Progress(std::string label, int64_t total, std::FILE* out, bool enabled)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 1)),
      out_(out),
      enabled_(enabled),
      terminal_(isatty(fileno(out)) != 0),
      start_(Clock::now()),
      last_draw_(start_) {}

void Progress::update(int64_t done, const std::string& status) {
  if (!enabled_) return;
  const auto now = Clock::now();
  const auto interval = terminal_ ? std::chrono::milliseconds(200) : std::chrono::seconds(5);
  if (now - last_draw_ < interval) return;
  last_draw_ = now;
  draw(done, status, false);
}

void Progress::finish(const std::string& status) {
  if (!enabled_) return;
  draw(total_, status, true);
}

void Progress::note(const std::string& line) {
  if (!enabled_) return;
  std::fprintf(out_, "%s%s\n", terminal_ ? "\r\033[K" : "", line.c_str());
  std::fflush(out_);
  last_draw_ = {};  // redraw at the next update
}

void Progress::draw(int64_t done, const std::string& status, bool final) {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double fraction = std::clamp(static_cast<double>(done) / total_, 0.0, 1.0);
  const double rate = elapsed > 0 ? done / elapsed : 0.0;
  const std::string timing =
      final ? format_duration(elapsed)
            : (rate > 0 ? format_duration((total_ - done) / rate) + " left" : "");
  std::string line;
  if (terminal_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    line = fmt::format("\r{} [{}{}] {}/{} {} {}", label_, std::string(filled, '#'),
                       std::string(kWidth - filled, '.'), done, total_, timing, status);
    std::fprintf(out_, "%s\033[K%s", line.c_str(), final ? "\n" : "");
  } else {
    line = fmt::format("{} {}/{} ({:.0f}%) {} {}\n", label_, done, total_, 100 * fraction, timing,
                       status);
    std::fputs(line.c_str(), out_);
  }
  std::fflush(out_);
}

}  // namespace distlab
