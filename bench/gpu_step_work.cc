// The work of one training step as the simulator times it, operation by
// operation, for bench/fit_gpu_model.py: a model spec, a batch size and a
// precision in, one JSON line per operation out (its pass, kind, FLOPs,
// bytes, kernels and precision).
// It is what ./simulate charges a GPU replica of a `local` strategy, read
// from the same TrainingSetup, so a fit of the GPU model sees exactly the
// operations the simulator will time with it.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "nn/data/synthetic_images.h"
#include "nn/model_spec.h"
#include "strategy/training_setup.h"

namespace {

using distlab::strategy::Work;

void print_items(const std::string& pass, const Work& work) {
  for (const auto& item : work.items) {
    nlohmann::json row = {{"pass", pass},
                          {"kind", distlab::strategy::op_kind_name(item.kind)},
                          {"flops", item.flops},
                          {"bytes", item.bytes},
                          {"kernels", item.kernels},
                          {"precision", distlab::strategy::precision_name(item.precision)}};
    std::cout << row.dump() << '\n';
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Prints the operations of one training step of a model, as the simulator "
      "times them on a GPU: one JSON line each."};
  std::string model_path, precision = "float32";
  int64_t batch = 0;
  app.add_option("--model", model_path, "model spec (YAML)")->required()->check(CLI::ExistingFile);
  app.add_option("--batch", batch, "batch size (default: the spec's)")->check(CLI::PositiveNumber);
  app.add_option("--precision", precision, "float32, mixed_float16 or mixed_bfloat16");
  CLI11_PARSE(app, argc, argv);
  try {
    const distlab::nn::ModelSpec spec = distlab::nn::load_model_spec(model_path);
    const distlab::nn::Dataset data = distlab::nn::make_synthetic_images(
        {.examples = 16, .shape = spec.input, .num_classes = spec.num_classes});
    distlab::strategy::TrainingConfig training;
    training.batch_size = batch > 0 ? batch : spec.batch_size;
    training.steps = 1;
    training.precision = distlab::strategy::precision_named(precision);
    const distlab::strategy::TrainingSetup setup(spec, data, data, {}, training, 1,
                                                 distlab::strategy::Fidelity::kTiming);
    const auto& passes = setup.training_passes(setup.batch_size());
    print_items("forward", passes.forward);
    print_items("backward", passes.backward);
    print_items("update", setup.replica_update_work());
    return 0;
  } catch (const distlab::Error& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  }
}
