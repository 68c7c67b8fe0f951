#include "common/cpu_clock.h"

#include <time.h>

namespace distlab {

double process_cpu_seconds() {
  timespec t{};
  // Cannot fail for this clock on Linux; a zero reading would only make a
  // CPU figure zero, never a wrong wall time.
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace distlab
