// Synchronous data parallelism: every replica computes the gradient of its
// share of the global batch, the gradients are summed by a ring all-reduce,
// and every replica applies the same update to the same weights. `local` is
// its one-replica case (no messages), `allreduce` spans hosts, `mirrored`
// spans the devices of one host; the algorithm is the same.
#pragma once

#include "strategy/checkpointing.h"
#include "strategy/replica.h"
#include "strategy/runtime.h"
#include "strategy/training_setup.h"

namespace distlab::strategy {

TaskOutcome train_synchronously(Runtime& runtime, const TrainingSetup& setup);

// The chief's replica holds the run's whole state; a restore sends every
// other replica a copy of it.
CheckpointHooks synchronous_checkpoint_hooks();

}  // namespace distlab::strategy
