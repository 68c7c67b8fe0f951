// The catalog overlay ./calibrate writes: a `cpus` entry for this CPU and a
// `machines` entry `local` whose compute, memory, loopback and disk
// figures are the ones just measured, with a comment saying when, where
// and how. MachineCatalog::load_default() reads it over machines.yaml.
#pragma once

#include <string>

#include "calibration/kernel_probe.h"
#include "calibration/system_probes.h"
#include "sim/core_sharing.h"

namespace distlab::calibration {

struct MachineFigures {
  // The layer passes at each thread count measured, fewest threads first
  // (the last is the threads a task uses).
  std::vector<KernelMeasurement> kernels;
  MemoryMeasurement memory;
  LinkMeasurement loopback;
  DiskMeasurement disk;
  sim::CoreSharing core_sharing;  // how unevenly the cores are shared (none: not measured)
  std::string version;            // distlab's, of the build that measured
};

// The overlay's text.
std::string overlay_text(const MachineFigures& figures);

// Writes the overlay atomically and reads it back over the shipped catalog
// (an overlay the catalog refuses is never left behind).
void write_overlay(const std::string& path, const MachineFigures& figures);

// Throws InputError when `path` cannot be written (its folder is missing
// or read-only).
void check_writable(const std::string& path);

// Where load_default() looks: sim::MachineCatalog::default_overlay_path().
std::string default_overlay_path();

}  // namespace distlab::calibration
