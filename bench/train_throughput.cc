// Training throughput of a model spec on this machine, measured the way
// ../shared/peers/torch_train.py measures PyTorch: batches of the spec's
// size, a warm-up, then the wall time of each training step (forward, loss,
// backward, optimizer) over the timed steps. Prints a line per model and a
// final `RESULT {json}` line for bench/compare_torch.py.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_map>

#include "common/cli.h"
#include "common/error.h"
#include "nn/data/idx.h"
#include "nn/data/sharding.h"
#include "nn/kernels/kernels.h"
#include "nn/layer_timing.h"
#include "nn/model.h"
#include "nn/threads.h"

using namespace distlab;
using namespace distlab::nn;

namespace {

struct Options {
  std::vector<std::string> models;
  int threads = 2;
  int warmup = 20;
  int steps = 200;
  uint64_t seed = 0;
  bool profile = false;
};

// Fashion-MNIST for a 28x28x1 model (what the peer trains on), otherwise
// Gaussian noise of the model's shape (the peer's MLP data are randn too).
Dataset data_for(const ModelSpec& spec, int64_t examples) {
  if (spec.input == Shape{28, 28, 1}) return load_fashion_mnist(kFashionMnistDir, true);
  Dataset d;
  d.name = "noise";
  d.example_shape = spec.input;
  d.num_classes = spec.num_classes;
  d.features.resize(examples, spec.input.size());
  d.labels.resize(examples);
  Rng rng(7);
  for (Eigen::Index i = 0; i < d.features.size(); ++i) d.features.data()[i] = rng.normal();
  for (auto& y : d.labels) y = static_cast<int32_t>(rng.below(spec.num_classes));
  return d;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Sums the passes of each top-level layer of a network; nested layers
// (inside a composite) are counted in their composite's pass.
class TopLevelTimes : public LayerTimer {
 public:
  explicit TopLevelTimes(const std::vector<LayerPtr>& layers)
      : fwd(layers.size(), 0), bwd(layers.size(), 0) {
    for (std::size_t i = 0; i < layers.size(); ++i) index_[layers[i].get()] = i;
  }
  void record(const LayerTiming& t) override {
    const auto it = index_.find(t.layer);
    if (it == index_.end()) return;
    (t.pass == Pass::kForward ? fwd : bwd)[it->second] += t.seconds;
  }
  std::vector<double> fwd, bwd;

 private:
  std::unordered_map<const Layer*, std::size_t> index_;
};

double sum(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}

// Runs training steps as compute_gradients does (forward_loss, then
// backward_gradients) with a LayerTimer installed, so that each top-level
// layer is timed as a step runs it (a flatten hands its input on; the
// backward pass stops at the first layer with parameters). What each half
// takes beyond its layers is the loss and zeroing, and the regularizers.
// Prints a table of the shares, the optimizer's too.
void profile_layers(Model& model, Optimizer& optimizer, const Matrix& x,
                    const std::vector<int32_t>& y, int steps) {
  const auto& layers = model.network().layers();
  const size_t n = layers.size();
  size_t first = 0;
  while (first < n && !layers[first]->has_parameters()) ++first;
  TopLevelTimes times(layers);
  double loss_seconds = 0, regularizer_seconds = 0, optimizer_seconds = 0;
  set_layer_timer(&times);
  for (int s = 0; s < steps; ++s) {
    double layers_before = sum(times.fwd);
    auto start = std::chrono::steady_clock::now();
    LossResult result = model.forward_loss(x, y, uint64_t(s));
    loss_seconds += seconds_since(start) - (sum(times.fwd) - layers_before);
    layers_before = sum(times.bwd);
    start = std::chrono::steady_clock::now();
    model.backward_gradients(x, result);
    regularizer_seconds += seconds_since(start) - (sum(times.bwd) - layers_before);
    start = std::chrono::steady_clock::now();
    optimizer.step(model.parameters(), model.gradients());
    optimizer_seconds += seconds_since(start);
  }
  set_layer_timer(nullptr);
  const std::vector<double>& fwd = times.fwd;
  const std::vector<double>& bwd = times.bwd;
  const int batch = static_cast<int>(x.rows());
  std::printf("%-16s %-12s %9s %9s %9s\n", "layer", "kind", "fwd ms", "bwd ms", "GFLOP/s");
  double total = loss_seconds + regularizer_seconds + optimizer_seconds;
  for (size_t i = 0; i < n; ++i) {
    const LayerCost c = layers[i]->cost(batch, i > first);
    total += fwd[i] + bwd[i];
    std::printf("%-16s %-12s %9.3f %9.3f %9.1f\n", layers[i]->name().c_str(),
                layers[i]->kind().c_str(), 1e3 * fwd[i] / steps, 1e3 * bwd[i] / steps,
                (c.forward_flops + c.backward_flops) / (fwd[i] + bwd[i]) * steps / 1e9);
  }
  std::printf("%-29s %9.3f\n%-29s %9.3f\n%-29s %9.3f\n%-29s %9.3f\n", "loss and zeroing",
              1e3 * loss_seconds / steps, "regularizers", 1e3 * regularizer_seconds / steps,
              "optimizer", 1e3 * optimizer_seconds / steps, "total", 1e3 * total / steps);
}

nlohmann::json measure(const std::string& path, const Options& o) {
  const ModelSpec spec = load_model_spec(path);
  const Dataset data = data_for(spec, int64_t{spec.batch_size} * 64);
  Model model(spec, o.seed);
  auto optimizer = make_optimizer(spec.optimizer, model.trainable_layout());
  BatchSampler sampler(data.size(), spec.batch_size, o.seed, 0, 1);
  Matrix x;
  std::vector<int32_t> y;
  std::vector<double> step_seconds;
  double loss = 0;
  for (int s = 0; s < o.warmup + o.steps; ++s) {
    const int64_t step = s % sampler.steps_per_epoch(), epoch = s / sampler.steps_per_epoch();
    gather_batch(data, sampler.batch(epoch, step), x, y);  // batching is not timed, as in the peer
    const auto start = std::chrono::steady_clock::now();
    loss = model.compute_gradients(x, y, s).loss;
    optimizer->step(model.parameters(), model.gradients());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s >= o.warmup) step_seconds.push_back(seconds);
  }
  if (o.profile) profile_layers(model, *optimizer, x, y, o.steps);
  const double total = std::accumulate(step_seconds.begin(), step_seconds.end(), 0.0);
  std::vector<double> sorted = step_seconds;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const double median = sorted[sorted.size() / 2];
  const double steady = spec.batch_size * step_seconds.size() / total;
  std::printf(
      "[%s] params=%lld: steady %.1f ex/s over %zu steps (median step %.2f ms), loss %.4f\n",
      spec.name.c_str(), static_cast<long long>(model.parameter_count()), steady,
      step_seconds.size(), median * 1e3, loss);
  std::fflush(stdout);
  return {{"model", spec.name},
          {"params", model.parameter_count()},
          {"steps_timed", step_seconds.size()},
          {"steady_ex_per_s", steady},
          {"median_step_ms", median * 1e3},
          {"median_ex_per_s", spec.batch_size / median}};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app(
      "Training throughput of distlab's NN core (examples per second at the spec's batch)");
  app.add_option("models", o.models, "model specs (YAML)")->required()->check(CLI::ExistingFile);
  app.add_option("--threads", o.threads, "compute threads")->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed steps first")->capture_default_str();
  app.add_option("--steps", o.steps, "timed steps")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", o.seed, "initialisation and shuffling seed")->capture_default_str();
  app.add_flag("--profile", o.profile, "also time each top-level layer's forward and backward");
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  return run_reporting_errors([&] {
    set_compute_threads(o.threads);
    nlohmann::json result = {{"threads", o.threads},
                             {"isa", kernels::kernels().level},
                             {"build", kernels::build_arch()},
                             {"models", nlohmann::json::array()}};
    for (const auto& m : o.models) result["models"].push_back(measure(m, o));
    std::printf("RESULT %s\n", result.dump().c_str());
    return 0;
  });
}
