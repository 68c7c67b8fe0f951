#include "calibration/kernel_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <thread>

#include "calibration/measurement.h"
#include "common/config_node.h"
#include "common/error.h"
#include "nn/data/data_source.h"
#include "nn/layer.h"
#include "nn/layer_timing.h"
#include "nn/model.h"
#include "nn/optimizer.h"
#include "nn/threads.h"
#include "sim/compute_model.h"

namespace distlab::calibration {
namespace {

using Clock = std::chrono::steady_clock;
using strategy::OpKind;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Collects every leaf layer pass of the steps it watches: per pass (in the
// order the step runs them), the times of each step.
class PassRecorder : public nn::LayerTimer {
 public:
  void record(const nn::LayerTiming& t) override {
    const std::string kind = t.layer->kind();
    if (kind == "sequential" || kind == "branches") return;  // composites: their leaves count
    if (next_ >= passes_.size()) passes_.push_back({t, {}});
    passes_[next_].seconds.push_back(t.seconds);
    ++next_;
  }
  void begin_step() { next_ = 0; }

  struct Pass {
    nn::LayerTiming first;
    std::vector<double> seconds;
  };
  const std::vector<Pass>& passes() const { return passes_; }

 private:
  std::vector<Pass> passes_;
  std::size_t next_ = 0;
};

// What the probe trains: the lab models, each with data of its input's
// kind, and MLPs that span dense layers from tiny to large.
struct ProbeModel {
  nn::ModelSpec spec;
  std::string data;  // a data source name (nn/data/data_source.h)
  std::vector<int> batches;
};

nn::ModelSpec mlp_spec(int width) {
  const std::string text = fmt::format(
      "name: mlp{0}\ninput: [{0}]\nclasses: 10\nlayers:\n"
      "  - dense: {{units: {0}, activation: relu}}\n"
      "  - dense: {{units: {0}, activation: relu}}\n"
      "  - dense: {{units: 10}}\noptimizer:\n  adam: {{learning_rate: 0.001}}\n",
      width);
  return nn::parse_model_spec(ConfigNode::load_string(text, "mlp" + std::to_string(width)));
}

std::vector<ProbeModel> probe_models(const std::string& models_dir) {
  auto lab = [&](const std::string& name) { return nn::load_model_spec(models_dir + "/" + name); };
  std::vector<ProbeModel> models;
  models.push_back({lab("taxi_wide_deep.yaml"), "synthetic-taxi:2048", {16, 64, 128, 512}});
  models.push_back({lab("mnist_cnn.yaml"), "synthetic:1024", {16, 64, 128}});
  models.push_back({lab("cifar10_mlp.yaml"), "synthetic:1024", {16, 64, 128}});
  models.push_back({lab("cifar10_cnn.yaml"), "synthetic:512", {16, 64}});
  for (int width : {16, 64, 256, 1024}) {
    models.push_back({mlp_spec(width), "synthetic:1024", {8, 32, 128}});
  }
  return models;
}

nn::DataSplits probe_data(const ProbeModel& probe) {
  const nn::DataRequirements needs{probe.spec.input, probe.spec.num_classes};
  return nn::load_data(probe.data, needs, 1);
}

// The first `batch` examples, round the training set.
std::vector<int64_t> batch_indices(const nn::DataSplits& data, int batch) {
  std::vector<int64_t> indices(static_cast<std::size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) indices[static_cast<std::size_t>(i)] = i % data.train.size();
  return indices;
}

// Layer and optimizer samples of one model at one batch size, and its
// whole step time.
// Steps run for `seconds` (at least 5 timed ones), after 2 untimed: what
// a training run sustains, not a burst (a CPU's clock drops under sustained
// AVX-512 work; the first steps of a model also fault its memory in).
void measure_model(const ProbeModel& probe, const nn::DataSplits& data, int batch, double seconds,
                   KernelMeasurement& out) {
  nn::Model model(probe.spec, 1);
  auto optimizer = nn::make_optimizer(probe.spec.optimizer, model.trainable_layout());
  nn::Matrix x;
  std::vector<int32_t> y;
  nn::gather_batch(data.train, batch_indices(data, batch), x, y);

  const std::string name = fmt::format("{}@{}", probe.spec.name, batch);
  PassRecorder recorder;
  std::vector<double> step_seconds, update_seconds;
  const int warmup = 2;
  const auto begin = Clock::now();
  for (int r = 0; r < warmup + 5 || seconds_since(begin) < seconds; ++r) {
    const bool timed = r >= warmup;
    recorder.begin_step();
    nn::set_layer_timer(timed ? &recorder : nullptr);
    const auto start = Clock::now();
    model.compute_gradients(x, y, static_cast<uint64_t>(r));
    const auto mid = Clock::now();
    nn::set_layer_timer(nullptr);
    optimizer->step(model.parameters(), model.gradients());
    // Hundreds of steps on one batch drive Adam's moments of small models
    // towards zero until they are denormal floats, 10-20 times slower to
    // update (measured: 15-27 ns a value against 1.3); a training run on
    // changing batches does not get there in its first thousands of steps.
    // A fresh optimizer every 100 steps keeps the probe away from them.
    if (r % 100 == 99) {
      optimizer = nn::make_optimizer(probe.spec.optimizer, model.trainable_layout());
    }
    if (!timed) continue;
    step_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    update_seconds.push_back(std::chrono::duration<double>(Clock::now() - mid).count());
  }

  for (const PassRecorder::Pass& pass : recorder.passes()) {
    const nn::Layer& layer = *pass.first.layer;
    const bool forward = pass.first.pass == nn::Pass::kForward;
    const nn::LayerCost cost = layer.cost(batch, forward ? false : pass.first.input_gradient);
    KernelSample s{.model = name,
                   .layer = layer.name() + (forward ? " forward" : " backward"),
                   .kind = strategy::op_kind_of_layer(layer.kind()),
                   .flops = forward ? cost.forward_flops : cost.backward_flops,
                   .bytes = forward ? cost.forward_bytes : cost.backward_bytes,
                   .regions = double(forward ? cost.forward_regions : cost.backward_regions),
                   .seconds = median(pass.seconds)};
    if (s.seconds > 0 && (s.flops > 0 || s.bytes > 0)) out.samples.push_back(s);
  }
  // The update: the simulator's description of it.
  const strategy::Work update = strategy::update_work(
      probe.spec.optimizer.kind, static_cast<int64_t>(model.parameters().size()));
  out.samples.push_back({.model = name,
                         .layer = "optimizer update",
                         .kind = OpKind::kElementwise,
                         .flops = update.flops(),
                         .bytes = update.bytes(),
                         .regions = update.items.front().regions,
                         .seconds = median(update_seconds)});
  double layers = 0;
  for (const PassRecorder::Pass& pass : recorder.passes()) layers += median(pass.seconds);
  out.steps.push_back({.model = name,
                       .measured_seconds = median(step_seconds),
                       .predicted_seconds = 0,
                       .layer_seconds = layers + median(update_seconds)});
}

// Keeps `count` cores busy while it lives, each training `probe` on one
// thread at `batch`: the neighbours a task has when the tasks of a run
// outnumber the cores, which train the same model. Their memory traffic
// goes through the caches and the memory the probe uses too (measured:
// the lab CNN's passes at one thread took 20% longer in a real run beside
// another task than beside a core multiplying small matrices).
class CoreLoad {
 public:
  CoreLoad(int count, const ProbeModel& probe, const nn::DataSplits& data, int batch) {
    for (int i = 0; i < count; ++i) {
      workers_.emplace_back([this, &probe, &data, batch, i] {
        nn::set_compute_threads(1);  // this thread's own parallel regions
        nn::Model model(probe.spec, static_cast<uint64_t>(2 + i));
        nn::Matrix x;
        std::vector<int32_t> y;
        nn::gather_batch(data.train, batch_indices(data, batch), x, y);
        auto optimizer = nn::make_optimizer(probe.spec.optimizer, model.trainable_layout());
        for (uint64_t step = 0; !stop_.load(std::memory_order_relaxed); ++step) {
          model.compute_gradients(x, y, step);
          optimizer->step(model.parameters(), model.gradients());
          // As the probe does (below): away from denormal moments.
          if (step % 100 == 99) {
            optimizer = nn::make_optimizer(probe.spec.optimizer, model.trainable_layout());
          }
        }
      });
    }
  }
  ~CoreLoad() {
    stop_ = true;
    for (std::thread& t : workers_) t.join();
  }
  CoreLoad(const CoreLoad&) = delete;
  CoreLoad& operator=(const CoreLoad&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

// A fit as the simulator's rates: a rate no sample gave never binds.
sim::OpRates rates_of(const KindFit& fit) {
  constexpr double kUnbound = std::numeric_limits<double>::infinity();
  return {.op_seconds = fit.op_seconds,
          .region_seconds = fit.region_seconds,
          .flops = fit.flops_rate > 0 ? fit.flops_rate : kUnbound,
          .bytes_per_second = fit.byte_rate > 0 ? fit.byte_rate : kUnbound};
}

// The fitted kinds as a device, timed by the simulator's own model.
sim::ComputeDevice device_of(const std::array<KindFit, strategy::kOpKinds>& kinds) {
  sim::ComputeDevice device{.name = "calibration", .rates = {}, .launch_seconds = 0};
  for (std::size_t k = 0; k < kinds.size(); ++k) device.rates[k] = rates_of(kinds[k]);
  return device;
}

// Seconds of one item on a fitted kind, as sim/compute_model.cc times it.
double predicted_seconds(const strategy::WorkItem& item, const KindFit& fit) {
  sim::ComputeDevice device{.name = "calibration", .rates = {}, .launch_seconds = 0};
  device.rates.fill(rates_of(fit));
  return sim::roofline_seconds(strategy::Work{.label = "sample", .items = {item}}, device);
}

}  // namespace

double predicted_seconds(const KernelSample& sample, const KernelMeasurement& measurement) {
  const strategy::WorkItem item{sample.flops, sample.bytes, 0, sample.kind, 1, sample.regions};
  return predicted_seconds(item, measurement.kinds[static_cast<std::size_t>(sample.kind)]);
}

KindFit fit_kind(const std::vector<KernelSample>& samples, const std::string& what) {
  KindFit fit;
  fit.samples = static_cast<int>(samples.size());
  if (samples.size() < 3) return fit;
  // Start from the additive fit, then let each sample's dominant term
  // decide which rate it informs, until no sample changes sides.
  std::vector<Observation> observations;
  for (const KernelSample& s : samples) {
    // Weighed by time: the relative error of a 10 ms convolution counts
    // more than that of a 3 us activation, as it does in a step's time.
    observations.push_back({{1.0, s.regions, s.flops, s.bytes}, s.seconds, s.seconds});
  }
  LinearFit linear = fit_nonnegative(observations, what);
  std::vector<bool> compute_bound(samples.size(), true);
  for (int round = 0; round < 20; ++round) {
    bool changed = false;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const bool bound =
          samples[i].flops * linear.coefficients[2] >= samples[i].bytes * linear.coefficients[3];
      if (round == 0 || bound != compute_bound[i]) changed = true;
      compute_bound[i] = bound;
    }
    if (!changed) break;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      observations[i].terms = {1.0, samples[i].regions, compute_bound[i] ? samples[i].flops : 0.0,
                               compute_bound[i] ? 0.0 : samples[i].bytes};
    }
    linear = fit_nonnegative(observations, what);
  }
  fit.op_seconds = linear.coefficients[0];
  fit.region_seconds = linear.coefficients[1];
  fit.flops_rate = linear.coefficients[2] > 0 ? 1 / linear.coefficients[2] : 0;
  fit.byte_rate = linear.coefficients[3] > 0 ? 1 / linear.coefficients[3] : 0;
  // Quality of the roofline itself (max of the two terms), not of the
  // linear stand-in.
  std::vector<double> errors;
  for (const KernelSample& s : samples) {
    const strategy::WorkItem item{s.flops, s.bytes, 0, s.kind, 1, s.regions};
    errors.push_back(std::abs(predicted_seconds(item, fit) / s.seconds - 1));
  }
  std::sort(errors.begin(), errors.end());
  fit.quality.median_error = errors[errors.size() / 2];
  fit.quality.worst_error = errors.back();
  return fit;
}

KernelMeasurement measure_kernels(int threads, const std::string& models_dir, double budget_seconds,
                                  const std::function<void(const std::string&)>& progress,
                                  bool busy_cores) {
  if (threads < 1) throw InputError("the kernel probe needs at least one thread");
  nn::set_compute_threads(threads);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int neighbours = busy_cores ? std::max(0, cores - threads) : 0;
  KernelMeasurement out;
  out.threads = threads;
  const auto models = probe_models(models_dir);
  int points = 0;
  for (const ProbeModel& m : models) points += static_cast<int>(m.batches.size());
  // The CPU at its sustained clock before the first sample.
  {
    const nn::DataSplits data = probe_data(models.front());
    const int batch = models.front().batches.back();
    const CoreLoad load(neighbours, models.front(), data, batch);
    measure_model(models.front(), data, batch, budget_seconds / 20, out);
  }
  out = KernelMeasurement{};
  out.threads = threads;
  const auto start = Clock::now();
  int done = 0;
  for (const ProbeModel& m : models) {
    const nn::DataSplits data = probe_data(m);
    for (int batch : m.batches) {
      // An equal share of what is left of the budget.
      const double left = budget_seconds * 0.95 - seconds_since(start);
      const CoreLoad load(neighbours, m, data, batch);
      measure_model(m, data, batch, std::max(0.0, left / (points - done)), out);
      ++done;
    }
    if (progress) progress(fmt::format("{} ({} batch sizes)", m.spec.name, m.batches.size()));
  }

  std::array<std::vector<KernelSample>, strategy::kOpKinds> by_kind;
  for (const KernelSample& s : out.samples) by_kind[static_cast<std::size_t>(s.kind)].push_back(s);
  for (std::size_t k = 0; k < by_kind.size(); ++k) {
    out.kinds[k] = fit_kind(by_kind[k], strategy::op_kind_name(static_cast<OpKind>(k)));
  }

  // Whole steps as the simulator would time them: the model's layers, then
  // the update.
  for (KernelMeasurement::Step& step : out.steps) {
    const auto at = step.model.rfind('@');
    const std::string model_name = step.model.substr(0, at);
    const int batch = std::stoi(step.model.substr(at + 1));
    for (const ProbeModel& m : models) {
      if (m.spec.name != model_name) continue;
      const nn::Model model(m.spec, 1);
      strategy::Work work = strategy::model_step_work(model, batch);
      const auto update = strategy::update_work(m.spec.optimizer.kind,
                                                static_cast<int64_t>(model.parameters().size()));
      work.items.insert(work.items.end(), update.items.begin(), update.items.end());
      step.predicted_seconds = sim::roofline_seconds(work, device_of(out.kinds));
      break;
    }
  }
  return out;
}

}  // namespace distlab::calibration
