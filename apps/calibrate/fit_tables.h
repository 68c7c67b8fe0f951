// What ./calibrate prints of its measurements: each fit beside what it
// measured; and the --samples CSV.
#pragma once

#include <string>
#include <vector>

#include "calibration/overlay.h"

namespace distlab::calibrate {

// The tables of every measurement (`threads`: those of the memory probe).
void print_fit_tables(const calibration::MachineFigures& figures, int threads);

// Every layer pass measured, with what the fitted kind predicts of it.
void write_samples(const std::string& path,
                   const std::vector<calibration::KernelMeasurement>& measurements);

}  // namespace distlab::calibrate
