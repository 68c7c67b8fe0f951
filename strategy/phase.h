// Where a task's time goes, in one vocabulary for both backends: every step
// of steps.csv is split into these phases, measured by the Runtime above
// the backends (runtime.h), so that a simulated step and a real one can be
// compared phase by phase, and an error located rather than guessed.
#pragma once

#include <array>
#include <string_view>

namespace distlab::strategy {

enum class Phase {
  kInput,          // the batch: waiting for the input pipeline, gathering its rows
  kForward,        // the forward pass and the loss
  kBackward,       // the backward pass and the penalties' gradients
  kOptimizer,      // the update of the parameters
  kPacking,        // the gradients around the wire: encoding, decoding, a collective's sums
  kCommunication,  // messages on their way: handed off, or arriving
  kWaiting,        // blocked before a peer had sent
  kEvaluation,     // the chief's evaluation on the test set
  kCheckpoint,     // writing or reading checkpoints
  kOther,          // the rest of the step: computing named by none of the above, and
                   // whatever the Runtime did not see (bookkeeping, the scheduler)
};
inline constexpr int kPhases = 10;

// Seconds per phase, indexed by Phase.
using PhaseSeconds = std::array<double, kPhases>;

// "input", "forward", ... "other": the column names of steps.csv without
// their "_seconds".
std::string_view phase_name(Phase phase);

constexpr int index_of(Phase phase) {
  return static_cast<int>(phase);
}

}  // namespace distlab::strategy
