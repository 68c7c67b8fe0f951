// Where the real runs that measured a model on this machine are kept
// (./calibrate --scenario), and where ./simulate finds them: beside the
// catalog overlay of this machine (scenarios/machines.local.yaml), in
// profiles/<model>-<fingerprint>/, one run directory per shape (ring-2,
// ps-2). The fingerprint is the model spec's SHA-256: a changed model is
// a model not yet measured.
#pragma once

#include <string>
#include <vector>

namespace distlab::sim {

// The folder of `model_path`'s profile; "" when there is no overlay path
// (DISTLAB_MACHINES_OVERLAY set to nothing) to put it beside. Throws
// InputError when the model file cannot be read.
std::string profile_folder(const std::string& model_path);

// The profile's run directories that hold a run (a summary.json), in name
// order; none when the model was never measured here.
std::vector<std::string> profile_runs(const std::string& model_path);

}  // namespace distlab::sim
