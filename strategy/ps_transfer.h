// How a parameter server's shard and the gradients pushed to it travel: as
// messages of at most `segment_floats` floats (strategy.segment_bytes), cut
// into near-equal segments as the ring cuts its chunks, so that a large
// model's transfer is a stream of messages whose buffers the transport
// reuses, never one allocation of the whole shard. Pulled parameters land
// straight in the worker's parameters and a float32 push's segments straight
// in the server's gradient buffer (receives posted before the data comes);
// a float32 push is sent from the worker's gradient without a copy.
//
// The first segment carries the request's fields (op, step, version); the
// receiver derives the count from the sizes, and the segments of one
// transfer follow each other, since a task sends nothing else to that peer
// with that tag in between.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strategy/float_range.h"
#include "strategy/gradient_wire.h"
#include "strategy/runtime.h"

namespace distlab::strategy {

// Worker: receives of a shard of parameters from `ps`, posted into `into`
// before the worker asks for it.
std::vector<PostedReceive> post_parameters(Runtime& runtime, TaskId ps, FloatRange into,
                                           int64_t segment_floats);
// Worker: waits for the shard; returns its version (updates applied).
int64_t wait_parameters(Runtime& runtime, std::vector<PostedReceive>& receives);
// Server: sends `shard`, at `version`, to `to` (copies: the server goes on
// updating it).
void send_parameters(Runtime& runtime, TaskId to, int64_t step, int64_t version, FloatRange shard,
                     int64_t segment_floats);

// Worker: pushes `gradient` (a shard's part) to `ps` in the wire's format,
// the encoding costed as the worker's compute. A float32 push borrows
// `gradient`: the worker changes it only after wait_sends() (a pull that
// follows the push on every server has seen it arrive there).
void push_gradient(Runtime& runtime, TaskId ps, int64_t step, int64_t version, FloatRange gradient,
                   GradientType wire, int64_t segment_floats);
// Server: the gradient of the push whose first segment is `first`, in
// float32, into `into` (the decoding costed as the server's compute).
// Throws Error, naming `what`, for a push of the wrong size.
void receive_gradient(Runtime& runtime, const Message& first, FloatRange into, GradientType wire,
                      int64_t segment_floats, const std::string& what);

}  // namespace distlab::strategy
