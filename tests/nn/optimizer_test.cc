// Optimizer steps and the plateau schedule against values computed by hand.
#include "nn/optimizer.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "nn/lr_schedule.h"

using namespace distlab::nn;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("SGD with momentum accumulates a velocity") {
  Sgd sgd(2, {.learning_rate = 0.1f, .momentum = 0.9f});
  std::vector<float> w{1.0f, -2.0f};
  const std::vector<float> g{0.5f, 1.0f};
  sgd.step(w, g);  // v = -0.05, -0.1
  CHECK_THAT(w[0], WithinAbs(0.95, 1e-7));
  CHECK_THAT(w[1], WithinAbs(-2.1, 1e-7));
  sgd.step(w, g);  // v = 0.9 * -0.05 - 0.05 = -0.095; 0.9 * -0.1 - 0.1 = -0.19
  CHECK_THAT(w[0], WithinAbs(0.855, 1e-6));
  CHECK_THAT(w[1], WithinAbs(-2.29, 1e-6));
  CHECK(sgd.steps() == 2);
}

TEST_CASE("Nesterov SGD looks ahead by one momentum step") {
  Sgd sgd(1, {.learning_rate = 0.1f, .momentum = 0.9f, .nesterov = true});
  std::vector<float> w{1.0f};
  const std::vector<float> g{1.0f};
  sgd.step(w, g);  // v = -0.1; w += 0.9 * -0.1 - 0.1 = -0.19
  CHECK_THAT(w[0], WithinAbs(0.81, 1e-6));
}

TEST_CASE("Adam takes bias-corrected steps") {
  Adam adam(1, {.learning_rate = 0.01f});
  std::vector<float> w{1.0f};
  // First step: m_hat = g, v_hat = g^2, so the step is lr * g / (|g| + eps).
  adam.step(w, std::vector<float>{2.0f});
  CHECK_THAT(w[0], WithinAbs(1.0 - 0.01 * 2.0 / (2.0 + 1e-7), 1e-7));
  // Second step with g = 1, from m = 0.2 and v = 0.004:
  // m = 0.9 * 0.2 + 0.1 * 1 = 0.28, v = 0.999 * 0.004 + 0.001 * 1 = 0.004996,
  // m_hat = m / (1 - 0.9^2), v_hat = v / (1 - 0.999^2).
  adam.step(w, std::vector<float>{1.0f});
  const double m_hat = 0.28 / 0.19, v_hat = 0.004996 / (1 - 0.999 * 0.999);
  const double expected =
      1.0 - 0.01 * 2.0 / (2.0 + 1e-7) - 0.01 * m_hat / (std::sqrt(v_hat) + 1e-7);
  CHECK_THAT(w[0], WithinAbs(expected, 1e-6));
}

TEST_CASE("Adagrad divides by the root of the summed squared gradients") {
  Adagrad adagrad(1, {.learning_rate = 0.1f});  // accumulator from 0.1, epsilon 1e-7
  std::vector<float> w{1.0f};
  adagrad.step(w, std::vector<float>{2.0f});  // accumulator 0.1 + 4 = 4.1
  const double first = 1.0 - 0.1 * 2.0 / (std::sqrt(4.1) + 1e-7);
  CHECK_THAT(w[0], WithinAbs(first, 1e-6));
  adagrad.step(w, std::vector<float>{-1.0f});  // accumulator 5.1
  CHECK_THAT(w[0], WithinAbs(first + 0.1 / (std::sqrt(5.1) + 1e-7), 1e-6));
  CHECK_THAT(adagrad.state()[0][0], WithinAbs(5.1, 1e-6));
  CHECK(adagrad.state_names() == std::vector<std::string>{"accumulator"});
}

TEST_CASE("FTRL-proximal solves for the weight from its linear term, zero within l1") {
  // One step from w = 0.5, accumulator 0.1, with g = 2 and lr = 0.1:
  //   n = 4.1, sigma = (sqrt(4.1) - sqrt(0.1)) / 0.1,
  //   z = 2 - sigma * 0.5,  w = -z / (sqrt(4.1) / 0.1 + 2 * l2)   (|z| > l1).
  const double sigma = (std::sqrt(4.1) - std::sqrt(0.1)) / 0.1;
  const double z = 2 - sigma * 0.5;  // about -6.543
  auto one_step = [](FtrlOptions options) {
    Ftrl ftrl(1, options);
    std::vector<float> w{0.5f};
    ftrl.step(w, std::vector<float>{2.0f});
    return std::pair{w[0], ftrl.state()[1][0]};
  };
  const auto [plain, linear] = one_step({.learning_rate = 0.1f});
  CHECK_THAT(plain, WithinRel(-z / (std::sqrt(4.1) / 0.1), 1e-5));
  CHECK_THAT(linear, WithinRel(z, 1e-5));
  // l2 adds 2 * l2 to the denominator; l1 pulls z towards 0 by l1...
  CHECK_THAT(one_step({.learning_rate = 0.1f, .l2 = 0.5f}).first,
             WithinRel(-z / (std::sqrt(4.1) / 0.1 + 1.0), 1e-5));
  CHECK_THAT(one_step({.learning_rate = 0.1f, .l1 = 1.0f}).first,
             WithinRel((-1.0 - z) / (std::sqrt(4.1) / 0.1), 1e-5));
  // ...and a weight whose |z| is within l1 is exactly 0.
  CHECK(one_step({.learning_rate = 0.1f, .l1 = 7.0f}).first == 0.0f);
  // Another power takes powers, not roots: n^0.25 here.
  const double root_old = std::pow(0.1, 0.25), root_new = std::pow(4.1, 0.25);
  const double z4 = 2 - (root_new - root_old) / 0.1 * 0.5;
  CHECK_THAT(one_step({.learning_rate = 0.1f, .learning_rate_power = -0.25f}).first,
             WithinRel(-z4 / (root_new / 0.1), 1e-5));
}

TEST_CASE("A per-layer optimizer updates each part's ranges with its own optimizer") {
  // Values 0-1 and 4-5 are FTRL's, 2-3 Adagrad's; 6 belongs to neither
  // (padding between blocks).
  auto make = [] {
    std::vector<PerLayerOptimizer::Part> parts;
    parts.push_back(
        {std::make_unique<Ftrl>(7, FtrlOptions{.learning_rate = 0.1f}), {{0, 2}, {4, 2}}});
    parts.push_back(
        {std::make_unique<Adagrad>(7, AdagradOptions{.learning_rate = 0.1f}), {{2, 2}}});
    return PerLayerOptimizer(std::move(parts));
  };
  PerLayerOptimizer both = make();
  CHECK(both.name() == "ftrl+adagrad");
  CHECK(both.state_names() ==
        std::vector<std::string>{"ftrl/accumulator", "ftrl/linear", "adagrad/accumulator"});
  const std::vector<float> g{1, -2, 3, -4, 5, -6, 7};
  std::vector<float> w{0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f};
  both.step(w, g);
  both.step(w, g);
  CHECK(both.steps() == 2);

  // The same as each optimizer alone on its values.
  Ftrl ftrl(4, {.learning_rate = 0.1f});
  Adagrad adagrad(2, {.learning_rate = 0.1f});
  std::vector<float> wf{0.1f, 0.2f, 0.5f, 0.6f}, wa{0.3f, 0.4f};
  const std::vector<float> gf{1, -2, 5, -6}, ga{3, -4};
  for (int s = 0; s < 2; ++s) {
    ftrl.step(wf, gf);
    adagrad.step(wa, ga);
  }
  CHECK(std::vector<float>{w[0], w[1], w[4], w[5]} == wf);
  CHECK(std::vector<float>{w[2], w[3]} == wa);
  CHECK(w[6] == 0.7f);  // nobody's

  // A parameter server's shard of it, [3, 6), steps as the whole does there.
  std::vector<PerLayerOptimizer::Part> shard_parts;
  shard_parts.push_back({std::make_unique<Ftrl>(3, FtrlOptions{.learning_rate = 0.1f}), {{1, 2}}});
  shard_parts.push_back(
      {std::make_unique<Adagrad>(3, AdagradOptions{.learning_rate = 0.1f}), {{0, 1}}});
  PerLayerOptimizer shard(std::move(shard_parts));
  std::vector<float> ws{0.4f, 0.5f, 0.6f};
  const std::vector<float> gs{-4, 5, -6};
  shard.step(ws, gs);
  shard.step(ws, gs);
  CHECK(ws == std::vector<float>{w[3], w[4], w[5]});
}

TEST_CASE("Optimizers refuse spans of the wrong size") {
  Sgd sgd(3, {});
  std::vector<float> w(2), g(2);
  CHECK_THROWS(sgd.step(w, g));
}

TEST_CASE("The plateau schedule cuts the rate after patience observations") {
  ReduceLrOnPlateau plateau(
      {.factor = 0.5f, .patience = 2, .min_delta = 0.01f, .cooldown = 1, .min_lr = 0.2f});
  // Each row: the observed loss and the learning rate that must follow.
  const std::vector<std::pair<double, float>> trace{
      {1.0, 1.0f},    // first value: the best so far
      {0.995, 1.0f},  // not better by min_delta: wait 1
      {0.999, 0.5f},  // wait 2 = patience: cut, then cool down for 1
      {2.0, 0.5f},    // the cooldown ends and, as in Keras, this counts as wait 1
      {2.0, 0.25f},   // wait 2: cut
      {0.5, 0.25f},   // a real improvement resets the wait
      {0.5, 0.25f},   // wait 1
      {0.5, 0.2f},    // wait 2: cut to 0.125, floored at min_lr
  };
  float lr = 1.0f;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    lr = plateau.observe(trace[i].first, lr);
    CAPTURE(i);
    CHECK(lr == trace[i].second);
  }
}

TEST_CASE("Restoring an optimizer's state and step count resumes its trajectory") {
  const auto kind = GENERATE(as<std::string>{}, "sgd", "adam", "adagrad", "ftrl");
  CAPTURE(kind);
  auto make = [&]() -> std::unique_ptr<Optimizer> {
    if (kind == "sgd")
      return std::make_unique<Sgd>(3, SgdOptions{.learning_rate = 0.1f, .momentum = 0.9f});
    if (kind == "adagrad")
      return std::make_unique<Adagrad>(3, AdagradOptions{.learning_rate = 0.1f});
    if (kind == "ftrl")
      return std::make_unique<Ftrl>(3, FtrlOptions{.learning_rate = 0.1f, .l1 = 0.01f, .l2 = 0.1f});
    return std::make_unique<Adam>(3, AdamOptions{.learning_rate = 0.1f});
  };
  const std::vector<std::vector<float>> grads{{1, -2, 3}, {0.5f, 0, -1}, {2, 2, 2}, {-1, 1, 0}};
  auto original = make();
  std::vector<float> w{1, 2, 3};
  for (int s = 0; s < 3; ++s) original->step(w, grads[s]);

  // A checkpoint: the parameters, the optimizer's state and its step count.
  auto resumed = make();
  std::vector<float> w_resumed = w;
  const auto from = original->state();
  const auto to = resumed->state();
  REQUIRE(from.size() == to.size());
  for (std::size_t i = 0; i < from.size(); ++i)
    std::copy(from[i].begin(), from[i].end(), to[i].begin());
  resumed->set_steps(original->steps());

  original->step(w, grads[3]);
  resumed->step(w_resumed, grads[3]);
  CHECK(w_resumed == w);
  CHECK(resumed->steps() == 4);
}
