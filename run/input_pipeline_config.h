// The scenario's `input_pipeline` section: what the input pipeline does to
// each example on the host's CPU (strategy::InputPipeline).
//
//   input_pipeline:
//     measured_ghz: 2.45        # clock of the core that measured the stages
//     stages:                   # microseconds per example on that core
//       decode_jpeg: 1283
//       resize: 1140
//       augment: 1326
//       cast: 172
//     offline: [decode_jpeg, resize, augment]   # what preprocessed records hold done
//     preprocessed: false       # true: those stages cost nothing
//     threads: 0                # parallel calls; 0: every vCPU of the host
//     prefetch: true            # the next batch is prepared while a step runs
#pragma once

#include "common/config_node.h"
#include "strategy/config.h"

namespace distlab::run {

// Reads the section from the scenario's root; none gives a pipeline that
// costs nothing. Errors are ConfigErrors with file, line and key.
strategy::InputPipeline parse_input_pipeline(const ConfigNode& root);

}  // namespace distlab::run
