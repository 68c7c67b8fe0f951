// libFuzzer target: the Keras importer (nn/keras_model.h) through the model
// reader every program uses (nn::load_model_spec), fed arbitrary bytes. The
// first byte chooses the file: even, model.json (the text of
// model.to_json()); odd, model.keras (a zip whose config.json holds it,
// read by nn/zip_member.h). The reader must return a spec or refuse the
// input with a distlab::Error; anything else (another exception, a
// sanitizer report, a trap) is a finding.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "common/error.h"
#include "nn/model_spec.h"
#include "run/fuzz/scratch_folder.h"

using namespace distlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const fuzz::ScratchFolder scratch("keras-model-fuzz");
  const std::filesystem::path path =
      scratch.path() / (data[0] % 2 == 0 ? "model.json" : "model.keras");
  fuzz::write_file(path, {reinterpret_cast<const char*>(data) + 1, size - 1});
  try {
    nn::load_model_spec(path.string());
  } catch (const Error&) {
  }
  return 0;
}
