#include "run/input_pipeline_config.h"

#include <algorithm>

namespace distlab::run {

strategy::InputPipeline parse_input_pipeline(const ConfigNode& root) {
  strategy::InputPipeline input;
  const auto found = root.find("input_pipeline");
  if (!found) return input;
  const ConfigNode& node = *found;
  node.allow_only({"measured_ghz", "stages", "offline", "preprocessed", "threads", "prefetch"});
  const ConfigNode stages = node.at("stages");
  if (!stages.is_map() || stages.yaml().size() == 0) {
    stages.fail("expected the stages, each with its microseconds per example",
                "for instance {decode_jpeg: 1283, resize: 1140}");
  }
  for (const auto& entry : stages.yaml()) {
    // as<std::string>() would throw yaml-cpp's BadConversion for a key that
    // is a list or null.
    if (!entry.first.IsScalar()) {
      stages.fail("a stage's name must be a plain name", "for instance decode_jpeg");
    }
    const std::string name = entry.first.Scalar();
    // Above zero: a stage that costs nothing is not a stage (offline and
    // preprocessed are how a stage is left out).
    const ConfigNode stage = stages.at(name);
    input.stages[name] = stage.as_double(0, 1e9);
    if (input.stages[name] <= 0) {
      stage.fail("must be above 0, got 0",
                 "list it as offline and set preprocessed: true to leave it out");
    }
  }
  // Left out: the stages are taken at the host's clock. Given: above zero;
  // the stages scale by measured_ghz over the host's clock, and an explicit
  // 0 was quietly taken as "no scaling".
  if (auto ghz = node.find("measured_ghz")) {
    input.measured_ghz = ghz->as_double(0, 10);
    if (input.measured_ghz <= 0) {
      ghz->fail("must be above 0, got 0",
                "leave measured_ghz out to take the stages at the host's clock");
    }
  }
  if (auto offline = node.find("offline")) {
    if (!offline->is_sequence()) offline->fail("expected a list of stage names");
    for (std::size_t i = 0; i < offline->size(); ++i) {
      const ConfigNode item = (*offline)[i];
      const std::string name = item.as_string();
      if (!input.stages.contains(name)) {
        std::vector<std::string> names;
        for (const auto& [stage, microseconds] : input.stages) names.push_back(stage);
        const std::string guess = closest_match(name, names);
        item.fail("no stage named '" + name + "'",
                  guess.empty() ? "name one of the stages" : "did you mean '" + guess + "'?");
      }
      input.offline.push_back(name);
    }
  }
  input.preprocessed = node.get_bool("preprocessed", false);
  if (input.preprocessed && input.offline.empty()) {
    node.at("preprocessed").fail("no stage is listed as offline", "list them: offline: [...]");
  }
  input.threads = static_cast<int>(node.get_int("threads", 0, 0, 4096));
  input.prefetch = node.get_bool("prefetch", true);
  return input;
}

}  // namespace distlab::run
