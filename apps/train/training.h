// ./train's training: the model on the training split an epoch at a time,
// with the test accuracy after every epoch, to a run directory (curve.csv,
// summary.json, model.safetensors, checkpoints/).
#pragma once

#include "apps/train/options.h"

namespace distlab::train {

// Trains as the options say; returns the exit status.
int train(const Options& o);

}  // namespace distlab::train
