// libFuzzer target: the readers of where a cluster's tasks are, fed
// arbitrary text. The first byte chooses the reader (even: TF_CONFIG's
// JSON, odd: a cluster file's YAML); the rest is the text. Each must
// return or refuse the text with a distlab::Error. A TF_CONFIG that is
// read must write back (tf_config_json) to text that reads as the same
// task of the same cluster; a cluster file that is read must name a task
// that trains. Anything else (another exception, a sanitizer report, a
// trap) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "net/cluster/cluster_config.h"

using namespace distlab::net;

namespace {

// The cluster file's text goes into a file of this process's own (the
// reader takes a path, as ./realnet --cluster does), removed as the
// process ends.
struct ScratchFile {
  std::string path;
  ScratchFile() {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/distlab-cluster-fuzz-" +
           std::to_string(::getpid()) + ".yaml";
  }
  ~ScratchFile() { std::remove(path.c_str()); }
};

const std::string& cluster_file_path() {
  static const ScratchFile file;
  return file.path;
}

void read_tf_config(const std::string& text) {
  TaskAssignment assignment;
  try {
    assignment = parse_tf_config(text);
  } catch (const distlab::Error&) {
    return;
  }
  if (!(parse_tf_config(tf_config_json(assignment)) == assignment)) __builtin_trap();
}

void read_cluster_file(const std::string& text) {
  const std::string& path = cluster_file_path();
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) return;
  std::fwrite(text.data(), 1, text.size(), out);
  std::fclose(out);
  try {
    const ClusterAddresses cluster = load_cluster_file(path);
    if (cluster.spec().replicas() < 1) __builtin_trap();
  } catch (const distlab::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    read_tf_config(text);
  } else {
    read_cluster_file(text);
  }
  return 0;
}
