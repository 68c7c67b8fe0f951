#include "strategy/phase.h"

namespace distlab::strategy {

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::kInput:
      return "input";
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kOptimizer:
      return "optimizer";
    case Phase::kPacking:
      return "packing";
    case Phase::kCommunication:
      return "communication";
    case Phase::kWaiting:
      return "waiting";
    case Phase::kEvaluation:
      return "evaluation";
    case Phase::kCheckpoint:
      return "checkpoint";
    case Phase::kOther:
      return "other";
  }
  return "other";
}

}  // namespace distlab::strategy
