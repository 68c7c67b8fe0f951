// libFuzzer target: the Keras importer (nn/keras_model.h) through the model
// reader every program uses (nn::load_model_spec), fed arbitrary bytes. The
// first byte chooses the file: even, model.json (the text of
// model.to_json()); odd, model.keras (a zip whose config.json holds it,
// read by nn/zip_member.h). The reader must return a spec or refuse the
// input with a distlab::Error; anything else (another exception, a
// sanitizer report, a trap) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/error.h"
#include "nn/model_spec.h"

using namespace distlab;

namespace {

namespace fs = std::filesystem;

// The reader takes a path: the bytes go into a folder of this process's
// own, removed as the process ends.
struct ScratchFolder {
  fs::path path;
  ScratchFolder() {
    const char* dir = std::getenv("TMPDIR");
    path = fs::path(dir && *dir ? dir : "/tmp") /
           ("distlab-keras-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const ScratchFolder scratch;
  const fs::path path = scratch.path / (data[0] % 2 == 0 ? "model.json" : "model.keras");
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) std::abort();  // the scratch folder is this process's own
  std::fwrite(data + 1, 1, size - 1, out);
  std::fclose(out);
  try {
    nn::load_model_spec(path.string());
  } catch (const Error&) {
  }
  return 0;
}
