// ./train --evaluate: a saved model on the test split of the data it was
// trained on (or of --data), with its own spec (or the one given).
#pragma once

#include "apps/train/options.h"

namespace distlab::train {

// Prints the test loss and accuracy; returns the exit status.
int evaluate(const Options& o);

}  // namespace distlab::train
