#include "run/provenance.h"

#include <fstream>
#include <string>
#include <thread>

#include "common/version.h"
#include "nn/kernels/kernels.h"

namespace distlab::run {

std::string shell_quote(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "@%+=:,./_-") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";  // close, an escaped quote, reopen
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string shell_command(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) line += ' ';
    line += shell_quote(argv[i]);
  }
  return line;
}

namespace {

// The value of the first "key : value" line of a /proc file, or "".
std::string proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

}  // namespace

MachineFacts this_machine() {
  std::string cpu = proc_field("/proc/cpuinfo", "model name");
  if (cpu.empty()) cpu = "unknown CPU";
  MachineFacts facts{
      .name = "this machine: " + cpu,
      .description = std::string("measured here (/proc); kernels ") + nn::kernels::kernels().level,
      .figures = {}};
  facts.figures.emplace_back("vcpus", std::thread::hardware_concurrency());
  const std::string memory = proc_field("/proc/meminfo", "MemTotal");  // "24576000 kB"
  if (!memory.empty()) {
    facts.figures.emplace_back("memory_gib", std::stod(memory) * 1024.0 / (1024.0 * 1024 * 1024));
  }
  return facts;
}

Provenance provenance_here(int argc, const char* const* argv) {
  return {.command = shell_command(argc, argv), .version = version(), .machines = {this_machine()}};
}

}  // namespace distlab::run
