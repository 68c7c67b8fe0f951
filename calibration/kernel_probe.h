// The NN core's own speed on this machine, by kind of operation: trains
// the lab models (and MLPs of several widths) at several batch sizes, times
// every layer's forward and backward pass as the training step runs it
// (nn/layer_timing.h), and fits each kind's fixed cost per pass and per
// parallel region, FLOP rate and byte rate (a roofline per kind, compute_model.h's terms) to
// those times, against the FLOPs and bytes the layers' cost functions
// give. The optimizer's update over the whole parameter buffer is timed
// too, as an element-wise operation.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "calibration/least_squares.h"
#include "strategy/work.h"

namespace distlab::calibration {

// One layer pass (or optimizer update) as measured.
struct KernelSample {
  std::string model;  // "mnist_cnn@128"
  std::string layer;  // "conv2d_1 forward"
  strategy::OpKind kind = strategy::OpKind::kElementwise;
  double flops = 0;
  double bytes = 0;
  double regions = 0;  // parallel regions it opens, as its cost function says
  double seconds = 0;  // median over the timed steps
};

// A kind's fitted terms: seconds = op_seconds + regions * region_seconds
// + max(flops / flops_rate, bytes / byte_rate). A rate the data gave no
// evidence of (every sample bound by the other term) is 0.
struct KindFit {
  double op_seconds = 0;
  double region_seconds = 0;
  double flops_rate = 0;  // FLOP/s
  double byte_rate = 0;   // bytes/s
  FitQuality quality;
  int samples = 0;
};

struct KernelMeasurement {
  int threads = 0;
  std::array<KindFit, strategy::kOpKinds> kinds;
  std::vector<KernelSample> samples;
  // Whole training steps: measured, and predicted by the fitted kinds from
  // the model's own work description (what the simulator times).
  struct Step {
    std::string model;
    double measured_seconds = 0;
    double predicted_seconds = 0;
    double layer_seconds = 0;  // the medians of its layer passes and update, added up
  };
  std::vector<Step> steps;
};

// Fits a roofline with a fixed cost to samples of one kind: least squares
// on relative error, each sample assigned to the bound (arithmetic or
// memory) that its current fit says dominates, until the assignment holds.
KindFit fit_kind(const std::vector<KernelSample>& samples, const std::string& what);

// What the measurement's fitted kind predicts of one of its samples.
double predicted_seconds(const KernelSample& sample, const KernelMeasurement& measurement);

// Runs the probe at `threads` compute threads. With `busy_cores`, the
// cores the probe does not use train the same model at the same batch
// meanwhile, one thread each: a core's speed when every core works beside
// tasks like it (the vCPUs of a VM may be hyperthreads of one physical
// core, and a thread alone runs much faster than beside a busy sibling:
// measured here, the lab CNN's step at one thread took 24 ms alone and
// 35 ms beside another; and neighbours share the caches and the memory),
// as tasks that outnumber the cores see it. `models_dir` holds the lab
// models (scenarios/models). `progress` is called with a line per model.
KernelMeasurement measure_kernels(int threads, const std::string& models_dir, double budget_seconds,
                                  const std::function<void(const std::string&)>& progress,
                                  bool busy_cores = false);

}  // namespace distlab::calibration
