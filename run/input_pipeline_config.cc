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
    const std::string name = entry.first.as<std::string>();
    input.stages[name] = stages.at(name).as_double(0, 1e9);
  }
  input.measured_ghz = node.get_double("measured_ghz", 0, 0, 10);
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
