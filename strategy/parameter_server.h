// Parameter-server training (Li et al., OSDI 2014; TensorFlow's
// ParameterServerStrategy): the parameter buffer is cut into k contiguous
// byte ranges, one per PS task, each with its own optimizer state. Every
// step a worker pulls every shard, computes a gradient on its batch and
// pushes each shard of it back.
//
//   async: a PS applies each gradient as it arrives and records its
//          staleness, the updates applied to the shard between the worker's
//          pull and the push;
//   sync:  a PS waits for one gradient from every worker, sums them in
//          worker order (bit-reproducible), applies one update, and only
//          then answers the pulls of the next step.
//
// Workers, chief included, train; the chief also evaluates and, after every
// worker has stopped, pulls the final weights.
#pragma once

#include "strategy/checkpointing.h"
#include "strategy/replica.h"
#include "strategy/runtime.h"
#include "strategy/training_setup.h"

namespace distlab::strategy {

// What a worker asks of a PS (the `op` field of a kToParameterServer message).
enum class PsRequest : int32_t {
  kPull = 0,   // send me your shard now (async) or once my last push is applied (sync)
  kPush = 1,   // here is my gradient of your shard, computed from the version I pulled
  kStop = 2,   // I take no more steps
  kFinal = 3,  // send me your shard once every worker has stopped
  // The chief's, for a checkpoint: send me your shard and its optimizer
  // state (async: now; sync: once my last push is applied).
  kCheckpoint = 4,
  // A worker restarted after a failure (ps:0 only): how many of my steps
  // have you received? I go on from there.
  kRejoin = 5,
  // The chief (replica 0) has the final weights and has evaluated them: the
  // PS may stop. Until then it keeps serving, so that a chief that fails at
  // the very end can come back and ask again.
  kDone = 6,
  // The chief, at an epoch's end: the rate its plateau schedule set (one
  // float), for every update after that epoch's.
  kLearningRate = 7,
};

TaskOutcome train_with_parameter_servers(Runtime& runtime, const TrainingSetup& setup);
TaskOutcome serve_parameters(Runtime& runtime, const TrainingSetup& setup);

// The chief pulls every shard with its optimizer state for a checkpoint; a
// restore sends each PS its shard and each worker the step. Under async, a
// worker that fails is restarted alone and asks ps:0 how many of its steps
// arrived; it goes on from there, with the weights it pulls (the step it
// was computing is lost). A PS's failure, and any failure under sync, rolls
// every task back to the last checkpoint.
//
// Consistency: under sync, a PS answers the chief's request only once the
// chief's last push is applied, and the next update waits for the chief's
// next push, so every shard is read after the same step: the checkpoint is
// the state the run had after that step. Under async, each PS answers when
// the request arrives, and other workers' updates go on meanwhile: shards
// may be read a few updates apart, as TensorFlow's saver reads each
// variable from its PS in turn. The file records the chief's step; a
// resumed run restarts every worker from it.
CheckpointHooks parameter_server_checkpoint_hooks();

}  // namespace distlab::strategy
