#include "apps/train/evaluate.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/checkpoint_store.h"
#include "common/atomic_file.h"
#include "common/config_node.h"
#include "nn/data/data_source.h"
#include "nn/model.h"

namespace distlab::train {

int evaluate(const Options& o) {
  using nn::Model;
  std::filesystem::path path = o.evaluate;
  if (std::filesystem::is_directory(path)) path /= "model.safetensors";
  const std::vector<std::byte> bytes = read_file_bytes(path.string());
  const checkpoint::LoadedModel header = checkpoint::read_model_header(bytes, path.string());
  const nn::ModelSpec spec = o.model_given ? nn::load_model_spec(o.model)
                                           : nn::parse_model_spec(ConfigNode::load_string(
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
  const nn::DataSplits data = nn::load_data(data_source, {spec.input, spec.num_classes}, seed);
  const nn::Evaluation test = model.evaluate(data.test);
  if (!o.quiet) {
    std::printf("%s: %s after %lld steps of %s (%s, %s)\n", path.c_str(), spec.name.c_str(),
                static_cast<long long>(loaded.info.step), run.scenario.c_str(),
                run.strategy.c_str(), run.backend.c_str());
  }
  std::printf("test loss %.4f, test accuracy %.4f on the %lld test examples of %s\n", test.loss,
              test.accuracy, static_cast<long long>(data.test.size()), data_source.c_str());
  return 0;
}

}  // namespace distlab::train
