// CPU time, as the kernel counts it: what a process (all its threads) has
// used so far. Wall time says how long something took; CPU time says what
// it cost the machine's cores, which is what tasks sharing a machine pay
// for one another.
#pragma once

namespace distlab {

// User plus system seconds of every thread of this process since it began.
double process_cpu_seconds();

}  // namespace distlab
