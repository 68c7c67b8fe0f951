// What tasks send each other: a few header fields and a run of floats
// (parameters or gradients). In timing fidelity a message carries no values
// but keeps its exact size on the wire, so that a simulation of thousands of
// workers moves sizes, not data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strategy/task.h"

namespace distlab::strategy {

// Distinguishes the conversations between two tasks. Messages from one task
// with one tag are received in the order they were sent.
enum class Tag : uint16_t {
  kRing = 1,           // chunks of a ring all-reduce
  kToParameterServer,  // worker -> ps: pull, push, stop, final (see `op`)
  kParameters,         // ps -> worker: a shard of the parameters
  kRestore,            // chief -> every task of a resumed run: its part of the checkpoint
  kShardState,         // ps -> chief: a shard and its optimizer state, for a checkpoint
  // Every other task -> the chief, after training: the task's report
  // (run/task_report.h) as text, so that the chief of a real cluster can
  // write the run directory (see text_message).
  kTaskReport,
  // The chief -> every other replica of a synchronous run, at an epoch's
  // end: the rate its plateau schedule set (one float).
  kLearningRate,
  kLast = kLearningRate,
};
const char* tag_name(Tag tag);

struct Message {
  TaskId from;  // filled in by the runtime
  Tag tag = Tag::kRing;
  int32_t op = 0;         // what the message asks, where its tag has several meanings
  int64_t step = 0;       // the sender's step
  int64_t version = 0;    // a PS shard's version (updates applied), where it applies
  uint64_t sequence = 0;  // per (sender, receiver, tag), filled in by the runtime
  // Which lives of the sender and of the receiver (as the sender knows it)
  // the message belongs to; a task restarted after a failure is a new
  // incarnation (runtime.h). Filled in by the runtime.
  uint32_t from_incarnation = 0;
  uint32_t to_incarnation = 0;
  // The payload, in 4-byte words: floats, or words a sender packed that
  // the transport moves without computing with them (text_message below;
  // half-precision gradients, gradient_wire.h). Empty in timing fidelity.
  std::vector<float> values;
  uint64_t bytes = 0;  // payload size on the wire in both fidelities
  // Set by a backend that read the payload straight into the floats of a
  // posted receive (Runtime::post_recv); values is then empty.
  bool delivered = false;

  // Set by the receiving backend: when the message began to arrive, on the
  // receiver's clock. Time blocked before it is waiting, after it transfer.
  double available_at = 0;
};

// A message of `count` floats, holding `values` (full fidelity) or nothing.
Message make_message(Tag tag, int64_t step, int64_t count, const float* values);

// The rate of a learning-rate message (Tag::kLearningRate, or
// PsRequest::kLearningRate to a server): its one float. Throws Error naming
// `receiver` and the sender for any other payload.
float learning_rate_in(const Message& message, const std::string& receiver);

// A message that carries text rather than floats: the bytes are copied into
// the floats as they are (the last float padded with spaces) and `version`
// says how many of them are text. Floats are only ever copied on the way,
// never computed with, so every bit arrives as it left. The text travels in
// both fidelities (it is not a model's numbers).
Message text_message(Tag tag, const std::string& text);
// The text of a text_message. Throws Error when `version` does not fit the
// payload (a message that is not one).
std::string message_text(const Message& message);

}  // namespace distlab::strategy
