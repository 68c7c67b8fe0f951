// Seeded synthetic image data of any shape and class count, for scenarios
// that time training and need no real content (CIFAR-10 is not available
// offline). Each class has a random prototype image; an example is its
// class's prototype plus Gaussian noise, clamped to [0, 1], so the data are
// learnable and a model's accuracy still means something.
#pragma once

#include <cstdint>
#include <string>

#include "nn/data/dataset.h"

namespace distlab::nn {

struct SyntheticImageOptions {
  int64_t examples = 1000;
  Shape shape{32, 32, 3};
  int num_classes = 10;
  float noise = 0.3f;  // standard deviation of the per-pixel noise
  uint64_t seed = 1;
  std::string name = "synthetic-images";
};

// Same options, bit-identical data on every platform (nn/random.h). The
// prototypes depend on the seed and shape only, and example i on the seed
// and i only, so a larger `examples` extends a smaller one. Labels are drawn
// uniformly. Throws distlab::Error for a non-positive shape or class count,
// negative examples or noise.
Dataset make_synthetic_images(const SyntheticImageOptions& options);

// The class prototypes that make_synthetic_images draws for these options:
// (num_classes, shape.size()), values in [0, 1].
Matrix synthetic_image_prototypes(const SyntheticImageOptions& options);

}  // namespace distlab::nn
