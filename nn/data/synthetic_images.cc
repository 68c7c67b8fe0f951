#include "nn/data/synthetic_images.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "nn/random.h"

namespace distlab::nn {
namespace {

// Separate streams for prototypes and examples, so that neither depends on
// how much of the other was drawn.
constexpr uint64_t kPrototypeStream = 1;
constexpr uint64_t kExampleStream = 2;

void check_options(const SyntheticImageOptions& o) {
  const auto fail = [&](const std::string& what) {
    throw Error("synthetic images '" + o.name + "': " + what);
  };
  if (o.shape.height < 1 || o.shape.width < 1 || o.shape.channels < 1) {
    fail("shape " + o.shape.to_string() + " must be positive in every dimension");
  }
  if (o.num_classes < 1) fail(fmt::format("num_classes must be at least 1, got {}", o.num_classes));
  if (o.examples < 0) fail(fmt::format("examples must not be negative, got {}", o.examples));
  if (!(o.noise >= 0.0f)) fail(fmt::format("noise must not be negative, got {}", o.noise));
}

}  // namespace

Matrix synthetic_image_prototypes(const SyntheticImageOptions& options) {
  check_options(options);
  Rng rng(derive_seed(options.seed, SeedUse::kSyntheticImages, {kPrototypeStream}));
  Matrix prototypes(options.num_classes, options.shape.size());
  for (Eigen::Index i = 0; i < prototypes.size(); ++i) prototypes.data()[i] = rng.uniform();
  return prototypes;
}

Dataset make_synthetic_images(const SyntheticImageOptions& options) {
  const Matrix prototypes = synthetic_image_prototypes(options);
  Dataset data;
  data.name = options.name;
  data.example_shape = options.shape;
  data.num_classes = options.num_classes;
  data.features.resize(options.examples, options.shape.size());
  data.labels.resize(options.examples);
  Rng rng(derive_seed(options.seed, SeedUse::kSyntheticImages, {kExampleStream}));
  for (int64_t i = 0; i < options.examples; ++i) {
    const auto label = static_cast<int32_t>(rng.below(options.num_classes));
    data.labels[i] = label;
    float* row = data.features.row(i).data();
    const float* prototype = prototypes.row(label).data();
    for (int64_t p = 0; p < options.shape.size(); ++p) {
      row[p] = std::clamp(prototype[p] + options.noise * rng.normal(), 0.0f, 1.0f);
    }
  }
  return data;
}

}  // namespace distlab::nn
