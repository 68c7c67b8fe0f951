// The largest values a scenario's keys take (docs/scenarios.md, "Ranges"),
// shared by the files that read its sections.
#pragma once

#include <cstdint>

namespace distlab::run {

inline constexpr int64_t kMaxTasks = 10000;             // per role
inline constexpr int64_t kMaxCount = int64_t{1} << 40;  // steps, examples, bytes
inline constexpr int64_t kMaxDevices = 1024;

}  // namespace distlab::run
