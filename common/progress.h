// A progress display for long work. On a terminal: one line redrawn in place
// (bar, count, rate, time left, a status text). Into a file or pipe: a plain
// line at most every few seconds, so logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace distlab {

class Progress {
 public:
  Progress(std::string label, int64_t total, std::FILE* out = stderr, bool enabled = true);

  // Reports that `done` of `total` units are finished; draws at most a few
  // times a second, so it may be called on every step.
  void update(int64_t done, const std::string& status = "");
  // Draws the final state and ends the line.
  void finish(const std::string& status = "");
  // Prints a line of its own (an event) above the display, which the next
  // update redraws.
  void note(const std::string& line);

 private:
  void draw(int64_t done, const std::string& status, bool final);

  std::string label_;
  int64_t total_;
  std::FILE* out_;
  bool enabled_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace distlab
