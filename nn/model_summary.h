// A model's layers as Keras' model.summary() shows them: each top-level
// layer's name, kind, output shape and parameters (branches as one row of
// all their paths' parameters), then the totals, trainable and not (batch
// norm's moving statistics). ./train and ./simulate print it for a model
// that is not one of the shipped specs (an imported Keras model).
#pragma once

#include <string>

#include "nn/layers/sequential.h"

namespace distlab::nn {

std::string model_summary(const std::string& name, const Sequential& network);

}  // namespace distlab::nn
