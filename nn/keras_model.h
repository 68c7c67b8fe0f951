// Keras models as they are: the JSON that Keras' model.to_json() writes
// (Keras 2 as TensorFlow 1.x and 2.x ship it, and Keras 3), or a .keras
// file (Keras 3's model.save(): a zip whose config.json is that JSON,
// with the compile settings), Sequential or
// Functional, made into a distlab model spec (model_spec.h) of the same
// layers, shapes and parameter counts. Supported:
//   InputLayer; Dense, Conv2D (square kernels, padding valid or same,
//   strides), MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D;
//   BatchNormalization, Dropout, Flatten, Activation and ReLU (relu, and
//   linear); Embedding (of one column); Add and Concatenate, where the
//   branches they join part from one layer (a residual block, an inception
//   cell); L1, L2 and L1L2 regularizers; and compile settings when the
//   document has them (Keras 3's compile_config, Keras 2's
//   training_config: SGD, Adam, Adagrad or Ftrl, and a cross-entropy
//   loss). A softmax is allowed only on the output: distlab's loss applies
//   it. Anything else is refused, naming the file, the layer, its class
//   and its position: nothing is approximated.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace distlab::nn {

// Whether a scenario's model names a Keras model: "keras:PATH", or a path
// ending in .json or .keras.
bool names_keras_model(const std::string& model);
// "keras:PATH" -> "PATH"; other text as it is.
std::string keras_model_path(const std::string& model);

// The distlab spec of the Keras model in `path`, as a YAML document of
// model_spec.h's shape. Throws InputError naming the file and what it
// cannot take. Without compile settings the model trains with SGD at
// Keras' default rate of 0.01, and says so in its description.
YAML::Node keras_model_spec(const std::string& path);

}  // namespace distlab::nn
