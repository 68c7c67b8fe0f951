// The backward pass as a whole: skipping input gradients changes nothing
// that training reads, a batch's gradient is the sum of its examples', and
// an empty batch or a global divisor give what a synchronous strategy needs.
#include <catch2/catch.hpp>

#include "gradient_check.h"
#include "nn/data/data_source.h"
#include "nn/layers/conv2d.h"
#include "nn/model.h"

using namespace distlab::nn;
using namespace distlab::nn::testing;

namespace {

std::string model_path(const char* name) {
  return std::string(DISTLAB_SOURCE_DIR) + "/scenarios/models/" + name;
}

std::vector<float> gradients_of(Model& model) {
  return {model.gradients().begin(), model.gradients().end()};
}

}  // namespace

TEST_CASE("Skipping input gradients leaves the parameter gradients unchanged") {
  const char* file = GENERATE("cifar10_mlp.yaml", "taxi_wide_deep.yaml", "mnist_cnn.yaml");
  CAPTURE(file);
  const ModelSpec spec = load_model_spec(model_path(file));
  const std::string source = spec.input == Shape::flat(17) ? "synthetic-taxi:64" : "synthetic:64";
  const DataSplits data = load_data(source, {spec.input, spec.num_classes}, 2);
  Model model(spec, 2);
  const Matrix& x = data.train.features;
  const Matrix& logits = const_cast<Sequential&>(model.network()).run(x, {Phase::kTrain, 1});
  Matrix dlogits;
  softmax_cross_entropy(logits, data.train.labels, dlogits);

  // The network's own pass without dx, then one asked for dx.
  auto& network = const_cast<Sequential&>(model.network());
  std::fill(model.gradients().begin(), model.gradients().end(), 0.0f);
  network.backward(x, logits, dlogits, nullptr);
  const auto skipped = gradients_of(model);
  std::fill(model.gradients().begin(), model.gradients().end(), 0.0f);
  Matrix dx;
  network.backward(x, logits, dlogits, &dx);
  CHECK(gradients_of(model) == skipped);
  CHECK(dx.rows() == x.rows());
  CHECK(std::any_of(skipped.begin(), skipped.end(), [](float g) { return g != 0.0f; }));
}

TEST_CASE("A convolution's chunked batch gradient is the sum of its examples'") {
  // 40 images of 28x28: 40 * 676 * 9 patch values make four chunks, the
  // last one shorter, so chunk edges, col2im and the in-order sum are used.
  const Shape in{28, 28, 1};
  Conv2D conv("c", in,
              {.filters = 6, .kernel_h = 3, .kernel_w = 3, .activation = Activation::kRelu});
  BoundLayer bound(conv);
  const Matrix x = random_batch(40, in, 3);
  Matrix y;
  conv.forward(x, y, {});
  const Matrix dy = random_batch(40, conv.output_shape(), 4);
  Matrix dx;
  std::fill(bound.grads.begin(), bound.grads.end(), 0.0f);
  conv.backward(x, y, dy, &dx);
  const std::vector<float> batch_grads = bound.grads;

  std::vector<double> summed(bound.grads.size(), 0.0);
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    const Matrix xn = x.row(n), dyn = dy.row(n);
    Matrix yn, dxn;
    conv.forward(xn, yn, {});
    CHECK(yn == y.row(n));  // chunking does not change a forward value
    std::fill(bound.grads.begin(), bound.grads.end(), 0.0f);
    conv.backward(xn, yn, dyn, &dxn);
    CHECK(dxn == dx.row(n));  // nor an input gradient
    for (std::size_t i = 0; i < summed.size(); ++i) summed[i] += bound.grads[i];
  }
  for (std::size_t i = 0; i < summed.size(); ++i) {
    CAPTURE(i);
    CHECK_THAT(batch_grads[i],
               Catch::Matchers::WithinAbs(summed[i], 1e-3 + 1e-4 * std::fabs(summed[i])));
  }
}

TEST_CASE("Gradients divided by a global batch add up to the global mean") {
  const ModelSpec spec = load_model_spec(model_path("mnist_cnn.yaml"));
  const DataSplits data = load_data("synthetic:48", {spec.input, spec.num_classes}, 5);
  Model model(spec, 5);
  const Matrix& x = data.train.features;  // 40 examples
  const std::vector<int32_t>& y = data.train.labels;
  const LossResult whole = model.compute_gradients(x, y, 0);
  const auto whole_grads = gradients_of(model);

  // Two "workers" with 25 and 15 examples, each dividing by the 40.
  const Matrix x1 = x.topRows(25), x2 = x.bottomRows(15);
  const std::vector<int32_t> y1(y.begin(), y.begin() + 25), y2(y.begin() + 25, y.end());
  const LossResult first = model.compute_gradients(x1, y1, 0, 40);
  const auto g1 = gradients_of(model);
  const LossResult second = model.compute_gradients(x2, y2, 0, 40);
  const auto g2 = gradients_of(model);
  CHECK_THAT(first.loss + second.loss, Catch::Matchers::WithinRel(whole.loss, 1e-5));
  for (std::size_t i = 0; i < g1.size(); ++i) {
    REQUIRE_THAT(g1[i] + g2[i], Catch::Matchers::WithinAbs(whole_grads[i], 1e-5));
  }
}

TEST_CASE("An empty batch gives zero gradients and no NaN in the statistics") {
  const ModelSpec spec = load_model_spec(model_path("cifar10_mlp.yaml"));
  Model model(spec, 1);
  const Matrix empty(0, spec.input.size());
  const LossResult r = model.compute_gradients(empty, {}, 0, 128);
  const auto grads = gradients_of(model);
  // Only the regularisers' gradients remain, and the loss is their penalty.
  CHECK(std::isfinite(r.loss));
  CHECK(r.correct == 0);
  CHECK(std::all_of(model.state().begin(), model.state().end(),
                    [](float v) { return std::isfinite(v); }));
  const auto& bn_gamma = model.trainable_layout().block(2);
  CHECK(bn_gamma.name == "batch_norm_1/gamma");
  for (int64_t i = 0; i < bn_gamma.size(); ++i) REQUIRE(grads[bn_gamma.offset + i] == 0.0f);
}

TEST_CASE("Replicas share weights but draw their own dropout masks per stream") {
  const ModelSpec spec = load_model_spec(model_path("cifar10_mlp.yaml"));
  Model a(spec, 3), b(spec, 3);
  CHECK(std::equal(a.parameters().begin(), a.parameters().end(), b.parameters().begin()));
  const DataSplits data = load_data("synthetic:24", {spec.input, spec.num_classes}, 3);
  a.compute_gradients(data.train.features, data.train.labels, 0);
  b.compute_gradients(data.train.features, data.train.labels, 0);
  CHECK(gradients_of(a) == gradients_of(b));  // stream 0 on both
  b.seed_randomness(1);
  b.compute_gradients(data.train.features, data.train.labels, 0);
  CHECK(gradients_of(a) != gradients_of(b));
  b.seed_randomness(0);
  b.compute_gradients(data.train.features, data.train.labels, 0);
  CHECK(gradients_of(a) == gradients_of(b));
}
