// Chooses the kernels' ISA level once per process (see kernels.h).
#include <cstdlib>

#include "common/error.h"
#include "nn/kernels/kernels.h"

// levels.inc is written by cmake/IsaKernels.cmake, one line per level built,
// best first: DISTLAB_LEVEL(namespace, "name", whether this CPU runs it).
#define DISTLAB_LEVEL(ns, name, runs_here) \
  namespace distlab::nn::kernels::ns {     \
  const Kernels& table();                  \
  }
#include "nn/kernels/levels.inc"
#undef DISTLAB_LEVEL

namespace distlab::nn::kernels {
namespace {

struct Level {
  const char* name;
  const Kernels& (*table)();
  bool runs_here;
};

std::vector<Level> levels() {
  __builtin_cpu_init();
  return {
#define DISTLAB_LEVEL(ns, name, runs_here) {name, ns::table, static_cast<bool>(runs_here)},
#include "nn/kernels/levels.inc"
#undef DISTLAB_LEVEL
  };
}

// The levels' names joined by `separator`: all of them, or those this CPU
// runs.
std::string names(const char* separator, bool runnable_only = false) {
  std::string joined;
  for (const Level& level : levels()) {
    if (runnable_only && !level.runs_here) continue;
    joined += (joined.empty() ? "" : separator) + std::string(level.name);
  }
  return joined;
}

}  // namespace

const Kernels& choose_kernels(const char* wanted) {
  if (wanted && *wanted) {
    for (const Level& level : levels()) {
      if (level.name != std::string_view(wanted)) continue;
      if (!level.runs_here) {
        throw InputError(std::string("DISTLAB_ISA=") + wanted + ": this CPU (" + cpu_level() +
                         ") cannot run that level; it runs " + names(", ", true));
      }
      return level.table();
    }
    throw InputError(std::string("DISTLAB_ISA=") + wanted +
                     " is not a level of this build (built: " + names(", ") + ")");
  }
  for (const Level& level : levels()) {
    if (level.runs_here) return level.table();
  }
  throw Error("this CPU runs none of the ISA levels this binary was built for (" + names(", ") +
              ")");
}

const Kernels& kernels() {
  static const Kernels& chosen = choose_kernels(std::getenv("DISTLAB_ISA"));
  return chosen;
}

std::vector<const Kernels*> runnable_levels() {
  std::vector<const Kernels*> tables;
  for (const Level& level : levels()) {
    if (level.runs_here) tables.push_back(&level.table());
  }
  return tables;
}

std::vector<std::string> built_levels() {
  std::vector<std::string> names;
  for (const Level& level : levels()) names.emplace_back(level.name);
  return names;
}

std::string isa_help() {
  const auto runnable = runnable_levels();
  return "Environment: DISTLAB_ISA=" + names("|") +
         " runs the NN kernels of that ISA level\n"
         "instead of the best this CPU runs (" +
         (runnable.empty() ? "none" : runnable.front()->level) +
         " here). Replicas compute the same bits only\n"
         "on the same level; summary.json's isa says which ran.";
}

std::string build_arch() {
  return DISTLAB_ARCH;
}

std::string cpu_level() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
  if (__builtin_cpu_supports("x86-64-v2")) return "x86-64-v2";
  return "x86-64";
}

}  // namespace distlab::nn::kernels
