// A whole model: deterministic initialisation and training, gradients that
// include the regularisation penalties, evaluation, and costs.
#include "nn/model.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "gradient_check.h"

using namespace distlab::nn;
using namespace distlab::nn::testing;
using Catch::Matchers::WithinAbs;

namespace {

const char* kSmallModel = R"(
name: small
input: [6, 6, 1]
classes: 3
layers:
  - conv2d: {filters: 2, kernel: 3, padding: same, kernel_regularizer: {l2: 0.01}}
  - max_pool2d: {pool: 2}
  - flatten:
  - dense: {units: 5, activation: relu, bias_regularizer: {l1: 0.01}}
  - batch_norm:
  - dropout: {rate: 0.2}
  - dense: {units: 3}
optimizer: {sgd: {learning_rate: 0.1, momentum: 0.9}}
)";

ModelSpec small_spec() {
  return parse_model_spec(distlab::ConfigNode::load_string(kSmallModel, "small.yaml"));
}

// Trains `steps` steps on a fixed random batch and returns the parameters.
std::vector<float> train(uint64_t seed, int steps) {
  Model model(small_spec(), seed);
  auto optimizer = make_optimizer(model.spec().optimizer, model.trainable_layout());
  const Matrix x = random_batch(8, {6, 6, 1}, 3);
  const std::vector<int32_t> y{0, 1, 2, 0, 1, 2, 0, 1};
  for (int s = 0; s < steps; ++s) {
    model.compute_gradients(x, y, s);
    optimizer->step(model.parameters(), model.gradients());
  }
  return {model.parameters().begin(), model.parameters().end()};
}

}  // namespace

TEST_CASE("The same seed gives bit-identical weights, before and after training") {
  CHECK(train(5, 0) == train(5, 0));
  CHECK(train(5, 0) != train(6, 0));
  CHECK(train(5, 10) == train(5, 10));
}

TEST_CASE("Initial weights follow Keras' initialisers") {
  Model model(small_spec(), 1);
  for (const auto& block : model.trainable_layout().blocks()) {
    const auto values = model.parameters().subspan(block.offset, block.size());
    CAPTURE(block.name);
    if (block.init == Init::kGlorotUniform) {
      const float limit = std::sqrt(6.0f / (block.fan_in + block.fan_out));
      float max_abs = 0;
      for (float v : values) max_abs = std::max(max_abs, std::fabs(v));
      CHECK(max_abs <= limit);
      CHECK(max_abs > 0.5f * limit);
    } else if (block.init == Init::kOnes) {
      for (float v : values) REQUIRE(v == 1.0f);
    } else {
      for (float v : values) REQUIRE(v == 0.0f);
    }
  }
  CHECK(model.trainable_layout().block(0).fan_in == 9);    // 3x3 kernel, 1 channel
  CHECK(model.trainable_layout().block(0).fan_out == 18);  // 3x3 kernel, 2 filters
}

TEST_CASE("Model gradients include the penalties and match finite differences") {
  Model model(small_spec(), 2);
  const Matrix x = random_batch(4, {6, 6, 1}, 4);
  const std::vector<int32_t> y{2, 0, 1, 1};
  const auto result = model.compute_gradients(x, y, 9);
  const std::vector<float> analytic(model.gradients().begin(), model.gradients().end());
  auto loss_at = [&] { return model.compute_gradients(x, y, 9).loss; };
  CHECK_THAT(result.loss, WithinAbs(loss_at(), 1e-9));  // repeatable, step-seeded dropout

  const float eps = 1e-3f;
  int mismatches = 0;
  auto params = model.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const float saved = params[i];
    params[i] = saved + eps;
    const double plus = loss_at();
    params[i] = saved - eps;
    const double minus = loss_at();
    params[i] = saved;
    const double numeric = (plus - minus) / (2 * eps);
    if (std::fabs(numeric - analytic[i]) > 2e-3 + 2e-2 * std::fabs(numeric)) {
      ++mismatches;
      UNSCOPED_INFO("param " << i << ": analytic " << analytic[i] << " numeric " << numeric);
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("The forward and backward halves give compute_gradients' very bits") {
  Model whole(small_spec(), 2), halves(small_spec(), 2);
  const Matrix x = random_batch(4, {6, 6, 1}, 4);
  const std::vector<int32_t> y{2, 0, 1, 1};
  for (uint64_t step = 0; step < 3; ++step) {
    const LossResult one = whole.compute_gradients(x, y, step, 8);
    LossResult two = halves.forward_loss(x, y, step, 8);
    const double before_penalties = two.loss;
    halves.backward_gradients(x, two);
    CHECK(two.loss == one.loss);
    CHECK(two.loss != before_penalties);  // the regularizers' share comes with the backward half
    CHECK(
        std::equal(whole.gradients().begin(), whole.gradients().end(), halves.gradients().begin()));
    CHECK(std::equal(whole.state().begin(), whole.state().end(), halves.state().begin()));
  }
  // A backward half without its forward half has no logits to start from.
  LossResult alone;
  CHECK_THROWS_WITH(halves.backward_gradients(x, alone), Catch::Contains("no forward_loss"));
}

TEST_CASE("A backward pass that tells when gradients are final gives the very same bits") {
  Model plain(small_spec(), 2), told(small_spec(), 2);
  const Matrix x = random_batch(4, {6, 6, 1}, 4);
  const std::vector<int32_t> y{2, 0, 1, 1};
  // Layers: conv2d (kernel, bias), max_pool2d, flatten, dense (kernel,
  // bias), batch_norm (gamma, beta), dropout, dense (kernel, bias).
  const std::vector<int64_t> from = told.gradients_final_from();
  REQUIRE(from.size() == 7);
  const auto& blocks = told.trainable_layout().blocks();
  CHECK(from[6] == blocks[6].offset);  // the last dense layer's kernel
  CHECK(from[5] == from[6]);           // dropout has none: the layer after it's
  CHECK(from[4] == blocks[4].offset);  // batch norm's gamma
  CHECK(from[3] == blocks[2].offset);
  CHECK(from[2] == blocks[2].offset);  // flatten and pooling
  CHECK(from[1] == blocks[2].offset);
  CHECK(from[0] == 0);
  for (uint64_t step = 0; step < 2; ++step) {
    LossResult one = plain.forward_loss(x, y, step, 8);
    plain.backward_gradients(x, one);
    LossResult two = told.forward_loss(x, y, step, 8);
    std::vector<int64_t> seen;
    std::vector<float> last_dense;  // its gradients as they were said final
    told.backward_gradients(x, two, [&](int64_t final_from) {
      if (seen.empty()) {
        last_dense.assign(told.gradients().begin() + final_from, told.gradients().end());
      }
      seen.push_back(final_from);
    });
    CHECK(seen == std::vector<int64_t>(from.rbegin(), from.rend()));
    CHECK(two.loss == one.loss);
    CHECK(std::equal(plain.gradients().begin(), plain.gradients().end(), told.gradients().begin()));
    // Final means final: nothing later in the pass changed them.
    CHECK(std::equal(last_dense.begin(), last_dense.end(), plain.gradients().begin() + from[6]));
  }
}

TEST_CASE("Evaluation reports the loss and accuracy of the whole set") {
  Model model(small_spec(), 3);
  Dataset data;
  data.example_shape = {6, 6, 1};
  data.num_classes = 3;
  data.features = random_batch(25, {6, 6, 1}, 5);
  data.labels.assign(25, 0);
  const Evaluation e = model.evaluate(data, 10);  // batches of 10, 10 and 5
  CHECK(e.examples == 25);
  const auto direct = softmax_cross_entropy(model.predict(data.features), data.labels);
  CHECK_THAT(e.loss, WithinAbs(direct.loss, 1e-6));
  CHECK(e.accuracy == static_cast<double>(direct.correct) / 25);
}

TEST_CASE("Layer costs grow with the batch and count the GEMM flops") {
  Model model(small_spec(), 1);
  const auto costs = model.layer_costs(10);
  REQUIRE(costs.size() == 7);
  CHECK(costs[0].kind == "conv2d");
  // conv: 2 * (batch * 36 positions) * 9 * 2 filters, plus bias and activation
  CHECK(costs[0].cost.forward_flops == 2.0 * 360 * 9 * 2 + 2.0 * 360 * 2);
  CHECK(costs[3].cost.forward_flops == 2.0 * 10 * 18 * 5 + 2.0 * 10 * 5);
  // The first layer computes no input gradient; the dense layers after it do.
  CHECK(costs[0].cost.backward_flops == 2.0 * 360 * 9 * 2 + 360 * 2);
  CHECK(costs[3].cost.backward_flops == 4.0 * 10 * 18 * 5 + 10 * 5);
  const LayerCost one = model.total_cost(1), many = model.total_cost(64);
  CHECK(many.forward_flops > 60 * one.forward_flops);
  CHECK(many.backward_flops > 60 * one.backward_flops);
  CHECK(many.forward_bytes > one.forward_bytes);
}
