// ./train: single-process training of a model spec on a data set, with the
// test accuracy after every epoch. The baseline of every distributed run, and
// the quick start's first command.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/cli.h"
#include "common/error.h"
#include "common/progress.h"
#include "nn/data/data_source.h"
#include "nn/kernels/kernels.h"
#include "nn/threads.h"
#include "nn/trainer.h"

namespace {

using namespace distlab;
using namespace distlab::nn;

struct Options {
  // The default model is found from the checkout, wherever ./train runs.
  std::string model = DISTLAB_SOURCE_DIR "/scenarios/models/mnist_cnn.yaml";
  std::string data = "fashion-mnist";
  int epochs = 2;
  int64_t train_examples = 0;  // 0: all
  int batch_size = 0;          // 0: the spec's
  uint64_t seed = 0;
  int threads = 2;
  std::string out;
  bool quiet = false;
};

std::string timestamp() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", std::localtime(&now));
  return text;
}

void write_summary(const std::filesystem::path& dir, const Options& o, const Model& model,
                   const std::vector<nlohmann::json>& epochs, double wall_seconds) {
  nlohmann::json summary = {{"model", model.spec().name},
                            {"data", o.data},
                            {"seed", o.seed},
                            {"threads", o.threads},
                            {"isa", kernels::kernels().level},
                            {"batch_size", model.spec().batch_size},
                            {"parameters", model.parameter_count()},
                            {"epochs", epochs},
                            {"wall_seconds", wall_seconds}};
  if (!epochs.empty()) {
    summary["final_loss"] = epochs.back()["test_loss"];
    summary["final_accuracy"] = epochs.back()["test_accuracy"];
  }
  std::ofstream(dir / "summary.json") << summary.dump(2) << "\n";
}

int run(const Options& o) {
  set_compute_threads(o.threads);
  ModelSpec spec = load_model_spec(o.model);
  if (o.batch_size > 0) spec.batch_size = o.batch_size;
  DataSplits data = load_data(o.data, {spec.input, spec.num_classes}, o.seed);
  if (o.train_examples > 0) data.train = data.train.head(o.train_examples);

  const std::filesystem::path dir =
      o.out.empty() ? "runs/train-" + spec.name + "-" + timestamp() : o.out;
  std::filesystem::create_directories(dir);
  std::ofstream curve(dir / "curve.csv");
  curve << "epoch,step,seconds,train_loss,train_accuracy,test_loss,test_accuracy,"
           "learning_rate,examples_per_second\n";

  Model model(spec, o.seed);
  Trainer trainer(model, data.train, o.seed);
  if (!o.quiet) {
    std::printf(
        "training %s (%lld parameters) on %s: %lld examples, batch %d, %d epochs, %s kernels\n",
        spec.name.c_str(), static_cast<long long>(model.parameter_count()), o.data.c_str(),
        static_cast<long long>(data.train.size()), spec.batch_size, o.epochs,
        kernels::kernels().level);
  }
  std::vector<nlohmann::json> epochs;
  double elapsed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int e = 0; e < o.epochs; ++e) {
    Progress progress("epoch " + std::to_string(e + 1), trainer.steps_per_epoch(), stderr,
                      !o.quiet);
    const EpochResult r = trainer.train_epoch([&](int64_t step, int64_t, double loss) {
      progress.update(step, fmt::format("loss {:.4f}", loss));
    });
    progress.finish();
    const Evaluation test = model.evaluate(data.test);
    const float lr = trainer.end_epoch(test.loss);
    elapsed += r.seconds;
    const double rate = static_cast<double>(r.examples) / r.seconds;
    curve << e + 1 << "," << trainer.global_step() << "," << elapsed << "," << r.train_loss << ","
          << r.train_accuracy << "," << test.loss << "," << test.accuracy << "," << r.learning_rate
          << "," << rate << std::endl;
    epochs.push_back({{"epoch", e + 1},
                      {"train_loss", r.train_loss},
                      {"train_accuracy", r.train_accuracy},
                      {"test_loss", test.loss},
                      {"test_accuracy", test.accuracy},
                      {"examples_per_second", rate},
                      {"learning_rate", r.learning_rate}});
    if (!o.quiet) {
      std::printf(
          "epoch %d: train loss %.4f, test loss %.4f, test accuracy %.4f, %.0f examples/s%s\n",
          e + 1, r.train_loss, test.loss, test.accuracy, rate,
          lr != r.learning_rate ? (", learning rate now " + std::to_string(lr)).c_str() : "");
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_summary(dir, o, model, epochs, wall);
  if (!o.quiet) std::printf("wrote %s/{summary.json,curve.csv}\n", dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app(
      "Trains a model spec on one process and reports test accuracy after every epoch.\n"
      "Writes curve.csv (one row per epoch) and summary.json to the run directory.");
  app.footer(
      "Examples:\n"
      "  ./train                                         the lab CNN on Fashion-MNIST, 2 epochs\n"
      "  ./train --epochs 10 --seed 3\n"
      "  ./train scenarios/models/cifar10_mlp.yaml --data synthetic:20000\n"
      "  ./train scenarios/models/taxi_wide_deep.yaml --data synthetic-taxi:50000\n"
      "Data sources: fashion-mnist[:DIR], cifar10:DIR, synthetic[:N], taxi:FILE.csv,\n"
      "synthetic-taxi[:N].\n" +
      distlab::nn::kernels::isa_help());
  app.name("./train");
  app.add_option("model", o.model,
                 "model spec (YAML); default: the lab CNN, scenarios/models/mnist_cnn.yaml");
  app.add_option("--data", o.data, "data source (see below)")->capture_default_str();
  app.add_option("--epochs", o.epochs, "passes over the training set")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--train-examples", o.train_examples,
                 "train on the first N examples only (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--batch", o.batch_size, "batch size (default: the spec's)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", o.seed, "seed of weights, shuffling, dropout and synthetic data")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "compute threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--out", o.out, "run directory (default: runs/train-<model>-<time>)");
  app.add_flag("--quiet", o.quiet, "print nothing but errors");
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  return run_reporting_errors([&] {
    distlab::nn::kernels::kernels();  // a wrong DISTLAB_ISA is refused before any work
    return run(o);
  });
}
