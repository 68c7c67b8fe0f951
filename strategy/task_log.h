// What every task did, step by step and span by span: the raw material of
// steps.csv, timeline.json and summary.json. The Runtime fills it as the
// strategy sends, receives and computes, the same way on every backend, so
// a simulated run and a real one are described by one schema.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strategy/phase.h"
#include "strategy/span_label.h"
#include "strategy/task.h"

namespace distlab::strategy {

// A span of a task's time, for the timeline.
enum class SpanKind {
  kCompute,  // forward/backward, optimizer updates, evaluation
  kSend,     // handing a message off (zero-length on buffered backends)
  kReceive,  // the message was on its way: transfer time
  kWait,     // nothing had been sent yet: waiting for a peer
  kCheckpoint,
  kInput,  // the input pipeline had not prepared the next batch yet
  // Computing beside the task's communication (the backward pass while its
  // gradients are reduced): a lane of its own on the timeline.
  kBackground,
};
const char* span_kind_name(SpanKind kind);

struct Span {
  SpanKind kind;
  double start = 0;  // seconds on the task's clock (simulated or wall)
  double end = 0;
  SpanLabel label;  // "forward+backward", "ring reduce-scatter", "push ps:0"...
};

// One training step of one task (a PS logs one "step" per update applied).
struct StepRecord {
  int64_t step = 0;
  double start = 0;
  double end = 0;
  double compute_seconds = 0;
  double communication_seconds = 0;
  double waiting_seconds = 0;
  double checkpoint_seconds = 0;
  double input_seconds = 0;  // waiting for the input pipeline
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  int64_t staleness = -1;  // parameter-server updates only; -1 where it does not apply
  double loss = 0;         // training loss of the step's batch (NaN in timing fidelity)
  // The step's time by phase (phase.h); they add up to end - start, the
  // rest of it in Phase::kOther.
  PhaseSeconds phases{};
  // The CPU time the task used in each phase (Runtime::cpu_now): beside
  // the wall time, whether a phase computed or waited for a core.
  PhaseSeconds phase_cpu{};
};

// A point of the learning curve: the chief's evaluation on the test set.
struct CurvePoint {
  double seconds = 0;
  int64_t step = 0;
  double train_loss = 0;
  double test_loss = 0;
  double test_accuracy = 0;
};

struct TaskLog {
  TaskId task;
  std::string host;  // where it ran: a simulated host name or a real address
  // The ISA level of the NN kernels its process ran (nn/kernels/kernels.h):
  // replicas compute the same bits only on the same level.
  std::string isa;
  std::vector<StepRecord> steps;
  std::vector<Span> spans;
  std::vector<CurvePoint> curve;  // the chief's only

  // Totals over the whole run, including time outside steps (start-up,
  // final evaluation): steps hold only what happened within them.
  double compute_seconds = 0;
  double communication_seconds = 0;
  double waiting_seconds = 0;
  double checkpoint_seconds = 0;
  double input_seconds = 0;  // waiting for the input pipeline (not in waiting_seconds)
  // The extra compute time of the task's slowdown (slowdown.h), in
  // compute_seconds.
  double slowdown_seconds = 0;
  // Communication and waiting while a background computation ran (the
  // backward pass that gradient communication overlaps), hidden behind it:
  // counted here, not in communication_seconds or waiting_seconds, which
  // hold what the task's time exposed.
  double hidden_communication_seconds = 0;
  // By phase, as the steps' but outside them too; kOther holds only the
  // computing that no other phase names. And the CPU time of each.
  PhaseSeconds phases{};
  PhaseSeconds phase_cpu{};
  // Examples trained on, in every life of the task: work done again after a
  // rollback counts again, as the machines did it.
  int64_t examples = 0;
  uint64_t checkpoints = 0;  // checkpoint files written or read
  uint64_t checkpoint_bytes = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
  // Of those, the payloads this task copied straight from the sender's
  // memory rather than reading them from a socket (./realnet
  // --same-host-reads); 0 in a simulation.
  uint64_t payloads_read_in_place = 0;
  double finished_at = 0;
};

// Adds what a later incarnation of the same task logged (runtime.h): its
// steps and spans after the earlier ones', its totals to theirs.
void append_log(TaskLog& into, TaskLog&& later);

}  // namespace distlab::strategy
