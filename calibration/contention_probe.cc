#include "calibration/contention_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

#include "calibration/measurement.h"
#include "common/error.h"
#include "nn/data/data_source.h"
#include "nn/model.h"
#include "nn/optimizer.h"
#include "nn/threads.h"

namespace distlab::calibration {
namespace {

// The steps the probe times: a convolutional model, an MLP and a model of
// small embedding and dense layers, at the batch sizes of the labs'
// distributed scenarios.
struct ProbeStep {
  const char* file;
  const char* data;
  int batch;
};
constexpr ProbeStep kSteps[] = {{"mnist_cnn.yaml", "synthetic:256", 64},
                                {"cifar10_mlp.yaml", "synthetic:256", 64},
                                {"taxi_wide_deep.yaml", "synthetic-taxi:1024", 128}};

std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Starts `count` workers at once and returns each one's lines, parsed.
std::vector<std::map<std::string, double>> run_workers(const std::string& self, int threads,
                                                       int steps, int count) {
  const std::string command = fmt::format("{} --contention-worker --threads {} --steps {}",
                                          shell_quote(self), threads, steps);
  std::vector<FILE*> pipes;
  for (int i = 0; i < count; ++i) {
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) throw Error("contention probe: cannot start " + self);
    pipes.push_back(pipe);
  }
  std::vector<std::map<std::string, double>> results;
  for (FILE* pipe : pipes) {
    std::map<std::string, double> lines;
    char name[128];
    double seconds = 0;
    while (std::fscanf(pipe, "%127s %lf", name, &seconds) == 2) lines[name] = seconds;
    const int status = pclose(pipe);
    if (status != 0)
      throw Error("contention probe: a worker failed (status " + std::to_string(status) + ")");
    results.push_back(std::move(lines));
  }
  return results;
}

}  // namespace

int run_contention_worker(int threads, const std::string& models_dir, int steps) {
  nn::set_compute_threads(threads);
  for (const ProbeStep& p : kSteps) {
    const nn::ModelSpec spec = nn::load_model_spec(models_dir + "/" + p.file);
    const nn::DataSplits data = nn::load_data(p.data, {spec.input, spec.num_classes}, 1);
    nn::Model model(spec, 1);
    auto optimizer =
        nn::make_optimizer(spec.optimizer, static_cast<int64_t>(model.parameters().size()));
    std::vector<int64_t> indices(static_cast<std::size_t>(p.batch));
    for (int64_t i = 0; i < p.batch; ++i)
      indices[static_cast<std::size_t>(i)] = i % data.train.size();
    nn::Matrix x;
    std::vector<int32_t> y;
    nn::gather_batch(data.train, indices, x, y);
    auto step = [&](int i) {
      model.compute_gradients(x, y, static_cast<uint64_t>(i));
      optimizer->step(model.parameters(), model.gradients());
    };
    for (int i = 0; i < 2; ++i) step(i);
    // Small models take many more steps, so that every model runs for a
    // similar time and the processes overlap throughout.
    const auto start = std::chrono::steady_clock::now();
    std::vector<double> times;
    for (int i = 0; i < steps; ++i) {
      const auto before = std::chrono::steady_clock::now();
      step(i);
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count());
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(3)) break;
    }
    std::printf("%s@%d %.9f\n", spec.name.c_str(), p.batch, median(times));
    std::fflush(stdout);
  }
  return 0;
}

ContentionMeasurement measure_contention(const std::string& self, int threads, int processes,
                                         int steps) {
  if (processes < 2) throw InputError("the contention probe needs at least 2 processes");
  ContentionMeasurement m;
  m.processes = processes;
  m.threads = threads;
  m.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto alone = run_workers(self, threads, steps, 1).front();
  const auto together = run_workers(self, threads, steps, processes);
  const double share = std::max(1.0, double(processes) * threads / m.cores);
  double log_sum = 0;
  for (const auto& [name, seconds] : alone) {
    std::vector<double> shared;
    for (const auto& run : together) {
      auto found = run.find(name);
      if (found != run.end()) shared.push_back(found->second);
    }
    if (shared.empty() || !(seconds > 0)) continue;
    ContentionMeasurement::Model model{.name = name, .alone = seconds, .shared = median(shared)};
    model.factor = model.shared / (seconds * share);
    log_sum += std::log(model.factor);
    m.models.push_back(model);
  }
  if (m.models.empty()) throw Error("contention probe: the workers measured nothing");
  m.factor = std::max(1.0, std::exp(log_sum / static_cast<double>(m.models.size())));
  return m;
}

}  // namespace distlab::calibration
