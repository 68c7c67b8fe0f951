// What a strategy needs to know to train: which algorithm and its options,
// and how long and how to train. Scenarios (run/scenario.h) hold these.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace distlab::strategy {

enum class GradientType { kFloat32, kFloat16, kBFloat16 };

// The number format of a training step's products and activations, as
// Keras' dtype policies name it (training.precision): float32, or mixed
// precision, whose products and activations are float16 or bfloat16 while
// the weights and their updates stay float32. The NN core always computes
// in float32: precision changes how the simulator times the step, not the
// weights.
enum class Precision { kFloat32, kFloat16, kBFloat16 };
const char* precision_name(Precision precision);  // "float32", "mixed_float16", ...
std::vector<std::string> precision_names();
Precision precision_named(const std::string& name);  // throws Error for another name

enum class StrategyKind { kLocal, kAllReduce, kParameterServer, kMirrored };
enum class PsMode { kAsync, kSync };
enum class Fidelity : uint8_t {  // a byte: the Runtime keeps it in its first cache line
  kFull,                         // the real math runs in every task: losses, accuracies, weights
  kTiming,                       // the math is skipped; message sizes and compute times are exact
};

const char* strategy_name(StrategyKind kind);  // "local", "allreduce", ...
const char* fidelity_name(Fidelity fidelity);  // "full", "timing"

// The bucket of an overlapped all-reduce when bucket_bytes leaves it
// whole: PyTorch DDP's default (bucket_cap_mb, 25 MiB).
inline constexpr int64_t kOverlapBucketBytes = int64_t{25} << 20;

struct StrategyConfig {
  StrategyKind kind = StrategyKind::kLocal;
  PsMode mode = PsMode::kAsync;  // parameter_server only
  // Async parameter servers, stale-synchronous (ps-lite's and Petuum's
  // bounded delay): a replica's pull for step k is answered once every
  // other replica still training has pushed its step k - 1 - bound, so no
  // replica runs more than `bound` steps ahead of the slowest. -1: no bound.
  int64_t staleness_bound = -1;
  // Sync parameter servers with backup workers (TensorFlow's
  // SyncReplicasOptimizer): a step applies the average of the first this
  // many pushes computed on the current weights and drops the rest. 0: all
  // replicas'.
  int replicas_to_aggregate = 0;
  // allreduce and parameter_server: gradients travel while the backward
  // pass goes on, as DDP's and Horovod's do: each bucket (allreduce; of
  // bucket_bytes, kOverlapBucketBytes when that is 0) or each server's shard
  // (parameter_server) as soon as the backward pass has made it final,
  // from the last layers' down.
  bool overlap = false;
  // allreduce and mirrored: the gradient is reduced in consecutive buckets
  // of at most this many bytes, one ring each; 0 reduces it in one ring.
  int64_t bucket_bytes = 0;
  // Each ring message holds at most this many bytes of a chunk, so that a
  // round's sending overlaps the previous round's arrival (allreduce and
  // mirrored, ring_allreduce.h); and parameters and pushes travel to and
  // from parameter servers in messages of at most this many bytes
  // (ps_transfer.h). 0 sends every chunk or shard whole.
  int64_t segment_bytes = int64_t{1} << 20;
  int devices = 0;  // mirrored: devices of the host (0: all its GPUs)
  // The format gradients travel in (gradient_wire.h): ring messages, and
  // pushes to parameter servers. Bucket and segment sizes above count the
  // float32 gradient they cut, so every format cuts it the same way.
  GradientType gradient_type = GradientType::kFloat32;

  // segment_bytes as the float32 values a segment holds (0: whole), the
  // unit the ring and the parameter servers cut in.
  int64_t segment_floats() const { return segment_bytes / int64_t{sizeof(float)}; }
};

// What the input pipeline does to each example before a step can use it
// (tf.data's map: decoding, resizing, augmenting), on the CPU of the task's
// host, with the next batch prepared while a step runs (prefetch). The
// simulator times it and shows when a worker waits on its input; a real
// backend's input is the batch it gathers anyway, so it adds nothing.
struct InputPipeline {
  // Microseconds per example on one core of a CPU clocked at measured_ghz
  // (bench/input_pipeline_cost.py measures them), by stage.
  std::map<std::string, double> stages;
  double measured_ghz = 0;  // 0: not given, the stages are taken at the host's clock
  // Stages done ahead of training, when the records were written (the
  // lab's preprocessed TFRecords): they cost nothing when `preprocessed`.
  std::vector<std::string> offline;
  bool preprocessed = false;
  int threads = 0;       // parallel calls (num_parallel_calls); 0: every vCPU of the host
  bool prefetch = true;  // the next batch is prepared while the step runs

  bool enabled() const { return !stages.empty(); }
  // One core's microseconds per example at measured_ghz, offline stages
  // left out when preprocessed.
  double microseconds_per_example() const {
    double total = 0;
    for (const auto& [stage, microseconds] : stages) {
      const bool ahead = std::find(offline.begin(), offline.end(), stage) != offline.end();
      if (!(preprocessed && ahead)) total += microseconds;
    }
    return total;
  }
};

struct TrainingConfig {
  // Global for synchronous strategies (split among the replicas), per worker
  // for parameter servers (TrainingSetup::batch_scope()); 0 takes the model's.
  int64_t batch_size = 0;
  int64_t epochs = 1;          // passes over the training set...
  int64_t steps = 0;           // ...or, when above 0, this many steps per replica
  int64_t eval_every = 0;      // chief steps between evaluations; 0: at the end only
  int64_t eval_examples = 0;   // test examples per evaluation; 0: the whole test set
  int64_t train_examples = 0;  // first examples of the training set; 0: all
  Precision precision = Precision::kFloat32;
  InputPipeline input;  // none: batches cost nothing to prepare
};

// When the chief writes checkpoints (the scenario's `checkpoint` section).
struct CheckpointConfig {
  int64_t every_steps = 0;   // 0: not by steps
  double every_seconds = 0;  // on the run's clock (simulated or wall); 0: not by time
  int keep = 3;              // the newest files kept; older ones are deleted

  bool enabled() const { return every_steps > 0 || every_seconds > 0; }
};

}  // namespace distlab::strategy
