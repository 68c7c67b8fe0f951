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

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/checkpoint_store.h"
#include "common/atomic_file.h"
#include "common/cli.h"
#include "common/config_node.h"
#include "common/error.h"
#include "common/progress.h"
#include "common/sha256.h"
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
  int64_t steps = 0;           // > 0: train this many steps instead of `epochs`
  int64_t train_examples = 0;  // 0: all
  int batch_size = 0;          // 0: the spec's
  uint64_t seed = 0;
  int threads = 2;
  std::string out;
  int checkpoint_every = 0;  // epochs; 0: no checkpoints
  std::string resume;
  std::string evaluate;  // a model file or run directory to evaluate instead of training
  bool quiet = false;
  // Which of these the command line gave (--evaluate takes the others from
  // the model file).
  bool model_given = false, data_given = false, seed_given = false;
};

std::string timestamp() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", std::localtime(&now));
  return text;
}

// The parameters' and the moving statistics' SHA-256, as the distributed
// runs report it: equal for a run and the same run resumed.
std::string weights_sha256(const Model& model) {
  Sha256 hash;
  hash.update(std::as_bytes(model.parameters()));
  hash.update(std::as_bytes(model.state()));
  return hash.hex_digest();
}

// Checkpoints of ./train are at epoch ends, in the same file format as the
// distributed runs' (strategy/checkpoint_file.h), with the learning rate and
// the plateau schedule's counters (TrainingState::schedule).

checkpoint::RunFacts facts_of(const Options& o, const ModelSpec& spec) {
  return {.scenario = "train-" + spec.name,
          .strategy = "local",
          .data = o.data,
          .backend = "train",
          .seed = o.seed,
          .batch_size = spec.batch_size,
          .replicas = 1,
          .ps = 0};
}

void save(const std::filesystem::path& dir, const Options& o, Model& model, Trainer& trainer) {
  checkpoint::TrainingState state;
  const Trainer::Position at = trainer.position();
  state.step = at.step;
  state.parameters.assign(model.parameters().begin(), model.parameters().end());
  state.model_state.assign(model.state().begin(), model.state().end());
  for (const auto slot : trainer.optimizer().state())
    state.optimizer_slots.emplace_back(slot.begin(), slot.end());
  state.optimizer_steps = {trainer.optimizer().steps()};
  state.schedule =
      checkpoint::ScheduleState{.learning_rate = at.learning_rate, .plateau = at.plateau};
  const checkpoint::CheckpointInfo info{.step = at.step,
                                        .epoch = at.epoch,
                                        .batch_in_epoch = at.batch,
                                        .facts = facts_of(o, model.spec())};
  checkpoint::save_checkpoint(
      (dir / "checkpoints").string(), at.step,
      checkpoint::encode_checkpoint(checkpoint::CheckpointLayout(model), state, info), 3);
}

// Puts the model, its optimizer and the trainer where a checkpoint says.
std::string restore(const Options& o, Model& model, Trainer& trainer) {
  checkpoint::ResumeChoice choice =
      checkpoint::choose_checkpoint(o.resume, checkpoint::CheckpointLayout(model));
  for (const std::string& skipped : choice.skipped) {
    if (!o.quiet) std::fprintf(stderr, "skipped %s\n", skipped.c_str());
  }
  const checkpoint::LoadedCheckpoint& c = choice.checkpoint;
  if (c.info.facts.backend != "train") {
    throw InputError("--resume " + c.path + ": a checkpoint of a distributed run (" +
                     c.info.facts.backend + "); ./train resumes its own");
  }
  for (const std::string& line :
       checkpoint::resume_differences(c.info.facts, facts_of(o, model.spec()))) {
    if (!o.quiet) std::fprintf(stderr, "this run differs: %s\n", line.c_str());
  }
  std::copy(c.state.parameters.begin(), c.state.parameters.end(), model.parameters().begin());
  std::copy(c.state.model_state.begin(), c.state.model_state.end(), model.state().begin());
  const auto slots = trainer.optimizer().state();
  for (std::size_t i = 0; i < slots.size(); ++i) {
    std::copy(c.state.optimizer_slots[i].begin(), c.state.optimizer_slots[i].end(),
              slots[i].begin());
  }
  trainer.optimizer().set_steps(c.state.optimizer_steps.front());
  if (!c.state.schedule) throw InputError("--resume " + c.path + ": no learning rate in it");
  trainer.restore({.epoch = c.info.epoch,
                   .batch = c.info.batch_in_epoch,
                   .step = c.info.step,
                   .learning_rate = c.state.schedule->learning_rate,
                   .plateau = c.state.schedule->plateau});
  if (!o.quiet) {
    std::printf("resuming from %s (epoch %lld, step %lld)\n", c.path.c_str(),
                static_cast<long long>(c.info.epoch), static_cast<long long>(c.info.step));
  }
  return c.path;
}

// The final weights beside summary.json, with the spec they were trained
// with (strategy/checkpoint_file.h: a model file).
void save_model(const std::filesystem::path& dir, const Options& o, Model& model,
                const Trainer& trainer) {
  const Trainer::Position at = trainer.position();
  checkpoint::save_model_file((dir / "model.safetensors").string(), model,
                              {.step = at.step,
                               .epoch = at.epoch,
                               .batch_in_epoch = at.batch,
                               .facts = facts_of(o, model.spec())},
                              read_file_text(o.model));
}

// --evaluate: a saved model on the test split of the data it was trained
// on (or of --data), with its own spec (or the one given).
int evaluate(const Options& o) {
  std::filesystem::path path = o.evaluate;
  if (std::filesystem::is_directory(path)) path /= "model.safetensors";
  const std::vector<std::byte> bytes = read_file_bytes(path.string());
  const checkpoint::LoadedModel header = checkpoint::read_model_header(bytes, path.string());
  const ModelSpec spec = o.model_given ? load_model_spec(o.model)
                                       : parse_model_spec(ConfigNode::load_string(
                                             header.spec_yaml, path.string() + ": model_spec"));
  Model model(spec, 0);
  const checkpoint::LoadedModel loaded =
      checkpoint::decode_model(bytes, path.string(), checkpoint::CheckpointLayout(model));
  std::copy(loaded.weights.parameters.begin(), loaded.weights.parameters.end(),
            model.parameters().begin());
  std::copy(loaded.weights.model_state.begin(), loaded.weights.model_state.end(),
            model.state().begin());
  const checkpoint::RunFacts& run = loaded.info.facts;
  const std::string data_source = o.data_given ? o.data : run.data;
  const uint64_t seed = o.seed_given ? o.seed : run.seed;
  const DataSplits data = load_data(data_source, {spec.input, spec.num_classes}, seed);
  const Evaluation test = model.evaluate(data.test);
  if (!o.quiet) {
    std::printf("%s: %s after %lld steps of %s (%s, %s)\n", path.c_str(), spec.name.c_str(),
                static_cast<long long>(loaded.info.step), run.scenario.c_str(),
                run.strategy.c_str(), run.backend.c_str());
  }
  std::printf("test loss %.4f, test accuracy %.4f on the %lld test examples of %s\n", test.loss,
              test.accuracy, static_cast<long long>(data.test.size()), data_source.c_str());
  return 0;
}

void write_summary(const std::filesystem::path& dir, const Options& o, const Model& model,
                   const std::vector<nlohmann::json>& epochs, double wall_seconds,
                   const std::string& resumed_from) {
  nlohmann::json summary = {{"model", model.spec().name},
                            {"data", o.data},
                            {"seed", o.seed},
                            {"threads", o.threads},
                            {"isa", kernels::kernels().level},
                            {"batch_size", model.spec().batch_size},
                            {"parameters", model.parameter_count()},
                            {"epochs", epochs},
                            {"wall_seconds", wall_seconds},
                            {"weights_sha256", weights_sha256(model)},
                            {"resumed_from", resumed_from.empty() ? nlohmann::json(nullptr)
                                                                  : nlohmann::json(resumed_from)}};
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
  const bool by_steps = o.steps > 0;
  if (!o.quiet) {
    std::printf("training %s (%lld parameters) on %s: %lld examples, batch %d, %s, %s kernels\n",
                spec.name.c_str(), static_cast<long long>(model.parameter_count()), o.data.c_str(),
                static_cast<long long>(data.train.size()), spec.batch_size,
                by_steps ? fmt::format("{} steps", o.steps).c_str()
                         : fmt::format("{} epochs", o.epochs).c_str(),
                kernels::kernels().level);
    if (by_steps) {
      std::printf(
          "note: --steps %lld replaces the epochs: %.2f passes over the %lld examples, "
          "%lld steps each\n",
          static_cast<long long>(o.steps),
          static_cast<double>(o.steps) / static_cast<double>(trainer.steps_per_epoch()),
          static_cast<long long>(data.train.size()),
          static_cast<long long>(trainer.steps_per_epoch()));
    }
  }
  const std::string resumed_from = o.resume.empty() ? "" : restore(o, model, trainer);
  std::vector<nlohmann::json> epochs;
  double elapsed = 0;
  const auto start = std::chrono::steady_clock::now();
  // An epoch at a time; with --steps, the last one may stop part way.
  const auto more = [&] {
    return by_steps ? trainer.global_step() < o.steps : trainer.epochs_done() < o.epochs;
  };
  while (more()) {
    const int e = static_cast<int>(trainer.epochs_done());
    int64_t steps = trainer.steps_per_epoch() - trainer.position().batch;
    if (by_steps) steps = std::min(steps, o.steps - trainer.global_step());
    Progress progress("epoch " + std::to_string(e + 1), steps, stderr, !o.quiet);
    const EpochResult r = trainer.train_epoch(
        [&](int64_t step, int64_t, double loss) {
          progress.update(step, fmt::format("loss {:.4f}", loss));
        },
        by_steps ? o.steps : 0);
    progress.finish();
    const Evaluation test = model.evaluate(data.test);
    // The plateau schedule watches whole epochs only.
    const float lr = r.complete ? trainer.end_epoch(test.loss) : r.learning_rate;
    const bool last = !more();
    elapsed += r.seconds;
    const double rate = static_cast<double>(r.examples) / r.seconds;
    curve << e + 1 << "," << trainer.global_step() << "," << elapsed << "," << r.train_loss << ","
          << r.train_accuracy << "," << test.loss << "," << test.accuracy << "," << r.learning_rate
          << "," << rate << std::endl;
    epochs.push_back({{"epoch", e + 1},
                      {"step", trainer.global_step()},
                      {"complete", r.complete},
                      {"train_loss", r.train_loss},
                      {"train_accuracy", r.train_accuracy},
                      {"test_loss", test.loss},
                      {"test_accuracy", test.accuracy},
                      {"examples_per_second", rate},
                      {"learning_rate", r.learning_rate}});
    if (!o.quiet) {
      const std::string part = r.complete
                                   ? ""
                                   : fmt::format(" ({} of {} steps)", trainer.position().batch,
                                                 trainer.steps_per_epoch());
      std::printf(
          "epoch %d%s: train loss %.4f, test loss %.4f, test accuracy %.4f, %.0f examples/s%s\n",
          e + 1, part.c_str(), r.train_loss, test.loss, test.accuracy, rate,
          lr != r.learning_rate ? (", learning rate now " + std::to_string(lr)).c_str() : "");
    }
    if (o.checkpoint_every > 0 && ((r.complete && (e + 1) % o.checkpoint_every == 0) || last)) {
      save(dir, o, model, trainer);
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_summary(dir, o, model, epochs, wall, resumed_from);
  save_model(dir, o, model, trainer);
  if (!o.quiet) {
    std::printf("wrote %s/{summary.json,curve.csv,model.safetensors}%s\n", dir.c_str(),
                o.checkpoint_every > 0 ? " and checkpoints/" : "");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app(
      "Trains a model spec on one process and reports test accuracy after every epoch.\n"
      "Writes curve.csv (one row per epoch), summary.json and the final weights\n"
      "(model.safetensors) to the run directory.");
  app.footer(
      "Examples:\n"
      "  ./train                                         the lab CNN on Fashion-MNIST, 2 epochs\n"
      "  ./train --epochs 10 --seed 3\n"
      "  ./train --steps 1000                            1000 batches, as --train-steps=1000\n"
      "  ./train scenarios/models/cifar10_mlp.yaml --data synthetic:20000\n"
      "  ./train scenarios/models/taxi_wide_deep.yaml --data synthetic-taxi:50000\n"
      "  ./train --epochs 1 --checkpoint-every 1 --out runs/t && ./train --resume runs/t\n"
      "  ./train --evaluate runs/t                       the saved model on its test split\n"
      "Data sources: fashion-mnist[:DIR], cifar10:DIR, synthetic[:N], taxi:FILE.csv,\n"
      "synthetic-taxi[:N].\n" +
      distlab::nn::kernels::isa_help());
  app.name("./train");
  app.add_option("model", o.model,
                 "model spec (YAML); default: the lab CNN, scenarios/models/mnist_cnn.yaml");
  app.add_option("--data", o.data, "data source (see below)")->capture_default_str();
  auto* epochs = app.add_option("--epochs", o.epochs, "passes over the training set")
                     ->capture_default_str()
                     ->check(CLI::Range(1, 100000));
  app.add_option("--steps", o.steps,
                 "train this many steps (batches) instead, as TensorFlow's --train-steps; "
                 "the last epoch may stop part way")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->excludes(epochs);
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
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "write a checkpoint every N epochs, and at the end, to <out>/checkpoints/")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--resume", o.resume,
                 "go on from a checkpoint of ./train (a run directory or a file) up to --epochs "
                 "or --steps");
  app.add_option("--evaluate", o.evaluate,
                 "evaluate a saved model (model.safetensors, or a run directory holding one) on "
                 "the test split of the data and seed it was trained with, or --data and --seed; "
                 "its own spec unless a model is given");
  app.add_flag("--quiet", o.quiet, "print nothing but errors");
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  o.model_given = app.count("model") > 0;
  o.data_given = app.count("--data") > 0;
  o.seed_given = app.count("--seed") > 0;
  return run_reporting_errors([&] {
    distlab::nn::kernels::kernels();  // a wrong DISTLAB_ISA is refused before any work
    return o.evaluate.empty() ? run(o) : evaluate(o);
  });
}
