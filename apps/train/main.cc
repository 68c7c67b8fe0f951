// ./train: single-process training of a model spec on a data set, with the
// test accuracy after every epoch. The baseline of every distributed run, and
// the quick start's first command.
#include <CLI/CLI.hpp>

#include "apps/train/evaluate.h"
#include "apps/train/options.h"
#include "apps/train/training.h"
#include "common/cli.h"
#include "common/shipped_files.h"
#include "nn/kernels/kernels.h"
#include "run/provenance.h"

namespace {

using namespace distlab;
using train::Options;

void add_options(CLI::App& app, Options& o) {
  app.add_option("model", o.model,
                 "model spec (YAML), or a Keras model: keras:PATH, the JSON of model.to_json()\n"
                 "or a .keras file (its layers are printed as model.summary() prints them);\n"
                 "default: the lab CNN, scenarios/models/mnist_cnn.yaml");
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
  app.add_option("--out", o.out,
                 "run directory (default: runs/train-<model>-<time>): a new or empty folder, or\n"
                 "the one --resume names, which the run then continues in place");
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
      "  ./train keras:my_model.json --epochs 1         a Keras model as it is\n"
      "  ./train --epochs 1 --checkpoint-every 1 --out runs/t && ./train --resume runs/t --out "
      "runs/t\n"
      "  ./train --evaluate runs/t                       the saved model on its test split\n"
      "Data sources: fashion-mnist[:DIR], cifar10:DIR, synthetic[:N], taxi:FILE.csv,\n"
      "synthetic-taxi[:N].\n" +
      distlab::nn::kernels::isa_help());
  app.name("./train");
  add_options(app, o);
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  o.command = distlab::run::shell_command(argc, argv);
  o.model_given = app.count("model") > 0;
  o.data_given = app.count("--data") > 0;
  o.seed_given = app.count("--seed") > 0;
  return run_reporting_errors([&] {
    distlab::nn::kernels::kernels();  // a wrong DISTLAB_ISA is refused before any work
    if (o.model.empty()) o.model = distlab::shipped_scenarios_folder() + "/models/mnist_cnn.yaml";
    return o.evaluate.empty() ? train::train(o) : train::evaluate(o);
  });
}
