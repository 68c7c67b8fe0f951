// libFuzzer target: the readers of a scenario and of the model spec it
// names, fed arbitrary text. The first byte chooses the reader:
//   0 (mod 3)  a model spec alone (nn::load_model_spec, as ./train reads
//              one);
//   1, 2       a scenario (run::load_scenario, as ./simulate and ./realnet
//              read one), then its model spec if it names the one beside
//              it; with the shipped machine types to check names against
//              (1, as ./simulate) or none (2, as ./realnet).
// For a scenario the rest is up to three parts split by NUL bytes: the
// scenario's text, the text of model.yaml beside it, and --set/--unset
// overrides, one a line ("KEY=VALUE", or "-KEY" to unset). Each reader
// must return or refuse its input with a distlab::Error; a scenario that
// is read must name a cluster with a replica. Anything else (another
// exception, a sanitizer report, a trap) is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "nn/model_spec.h"
#include "run/fuzz/scratch_folder.h"
#include "run/scenario.h"

using namespace distlab;

namespace {

namespace fs = std::filesystem;

// scenario.yaml and the model.yaml that its `model: model.yaml` names.
const fs::path& scratch() {
  static const fuzz::ScratchFolder folder("scenario-fuzz");
  return folder.path();
}

using fuzz::write_file;

// The next part of `rest` up to a NUL (or its end), removed from it.
std::string_view take_part(std::string_view& rest) {
  const std::size_t end = rest.find('\0');
  const std::string_view part = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return part;
}

void read_model_spec(std::string_view text) {
  const fs::path path = scratch() / "model.yaml";
  write_file(path, text);
  try {
    nn::load_model_spec(path.string());
  } catch (const Error&) {
  }
}

// What --set and --unset pass to load_scenario, one line each.
std::vector<run::Override> read_overrides(std::string_view text) {
  std::vector<run::Override> overrides;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string line(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty()) continue;
    overrides.push_back(line[0] == '-' ? run::parse_unset(line.substr(1))
                                       : run::parse_override(line));
  }
  return overrides;
}

void read_scenario(std::string_view rest, bool with_machine_types) {
  // A few of the shipped catalog's types (scenarios/machines.yaml): enough
  // for names to be checked and misspellings matched.
  static const std::vector<std::string> kMachineTypes = {"n1-standard-4", "n1-standard-16",
                                                         "n1-highmem-8", "complex_model_m_gpu",
                                                         "complex_model_m_v100"};
  const fs::path scenario_path = scratch() / "scenario.yaml";
  const fs::path model_path = scratch() / "model.yaml";
  write_file(scenario_path, take_part(rest));
  write_file(model_path, take_part(rest));
  run::Scenario scenario;
  try {
    const std::vector<run::Override> overrides = read_overrides(take_part(rest));
    scenario = run::load_scenario(scenario_path.string(), overrides,
                                  with_machine_types ? kMachineTypes : std::vector<std::string>{});
  } catch (const Error&) {
    return;
  }
  if (scenario.cluster.spec.replicas() < 1) __builtin_trap();
  // The model is read next, as every backend does (run/training_inputs.cc);
  // only the one in the scratch folder: a scenario may name any file.
  if (fs::path(scenario.model_path) != model_path) return;
  try {
    nn::load_model_spec(scenario.model_path);
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      read_model_spec(rest);
      break;
    case 1:
      read_scenario(rest, true);
      break;
    default:
      read_scenario(rest, false);
      break;
  }
  return 0;
}
