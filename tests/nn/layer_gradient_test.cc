// Every layer's backward against finite differences, on inputs and parameters.
#include <catch2/catch.hpp>

#include "gradient_check.h"
#include "nn/layers/average_pool2d.h"
#include "nn/layers/batch_norm.h"
#include "nn/layers/branches.h"
#include "nn/layers/columns.h"
#include "nn/layers/conv2d.h"
#include "nn/layers/dense.h"
#include "nn/layers/dropout.h"
#include "nn/layers/embedding.h"
#include "nn/layers/flatten.h"
#include "nn/layers/global_average_pool2d.h"
#include "nn/layers/max_pool2d.h"
#include "nn/layers/pad_channels.h"
#include "nn/layers/relu.h"
#include "nn/layers/sequential.h"

using namespace distlab::nn;
using namespace distlab::nn::testing;

namespace {

std::string describe(const std::vector<GradientMismatch>& bad) {
  std::string out = std::to_string(bad.size()) + " mismatches";
  for (std::size_t i = 0; i < bad.size() && i < 5; ++i) {
    out += "\n  " + bad[i].what + ": analytic " + std::to_string(bad[i].analytic) + ", numeric " +
           std::to_string(bad[i].numeric);
  }
  return out;
}

void require_gradients_match(Layer& layer, const Matrix& x, GradientCheckOptions options = {}) {
  BoundLayer bound(layer);
  const auto bad = check_gradients(bound, x, options);
  INFO(describe(bad));
  REQUIRE(bad.empty());
}

}  // namespace

TEST_CASE("Dense gradients match finite differences") {
  const auto activation = GENERATE(Activation::kNone, Activation::kRelu);
  const bool use_bias = GENERATE(true, false);
  CAPTURE(to_string(activation), use_bias);
  Dense dense("d", Shape::flat(5), {.units = 4, .activation = activation, .use_bias = use_bias});
  require_gradients_match(dense, random_batch(3, Shape::flat(5), 1));
}

TEST_CASE("Conv2D gradients match finite differences") {
  using Row = std::tuple<int, int, int, Padding, Activation>;  // channels, kernel, stride
  const auto [channels, kernel, stride, padding, activation] =
      GENERATE(table<int, int, int, Padding, Activation>({
          Row{1, 3, 1, Padding::kValid, Activation::kNone},
          Row{2, 3, 1, Padding::kSame, Activation::kRelu},
          Row{3, 2, 2, Padding::kSame, Activation::kNone},
          Row{2, 3, 2, Padding::kValid, Activation::kRelu},
          Row{2, 3, 2, Padding::kFixed, Activation::kNone},
      }));
  CAPTURE(channels, kernel, stride, static_cast<int>(padding));
  const Shape in{5, 6, channels};
  Conv2D conv("c", in,
              {.filters = 3,
               .kernel_h = kernel,
               .kernel_w = kernel,
               .stride_h = stride,
               .stride_w = stride,
               .padding = padding,
               .activation = activation});
  require_gradients_match(conv, random_batch(2, in, 2));
}

TEST_CASE("MaxPool2D gradients match finite differences") {
  const auto padding = GENERATE(Padding::kValid, Padding::kSame);
  const int stride = GENERATE(1, 2);  // stride 1: windows overlap, gradients add up
  CAPTURE(padding == Padding::kSame, stride);
  const Shape in{5, 5, 2};
  MaxPool2D pool(
      "p", in,
      {.pool_h = 2, .pool_w = 2, .stride_h = stride, .stride_w = stride, .padding = padding});
  require_gradients_match(pool, random_batch(2, in, 3));
}

TEST_CASE("AveragePool2D gradients match finite differences") {
  const auto padding = GENERATE(Padding::kValid, Padding::kSame);
  const int stride = GENERATE(1, 2);  // stride 1: windows overlap, gradients add up
  CAPTURE(padding == Padding::kSame, stride);
  const Shape in{5, 5, 2};
  AveragePool2D pool(
      "p", in,
      {.pool_h = 3, .pool_w = 2, .stride_h = stride, .stride_w = stride, .padding = padding});
  require_gradients_match(pool, random_batch(2, in, 3));
}

TEST_CASE("Global average pooling and channel padding gradients match finite differences") {
  const Shape in{3, 4, 3};
  GlobalAveragePool2D pool("g", in);
  CHECK(pool.output_shape() == Shape::flat(3));
  require_gradients_match(pool, random_batch(2, in, 4));
  PadChannels pad("pad", in, 2, 1);
  CHECK(pad.output_shape() == Shape{3, 4, 6});
  require_gradients_match(pad, random_batch(2, in, 5));
}

TEST_CASE("A residual block with an identity or a widening shortcut passes gradients") {
  // The CIFAR ResNet's block: conv-BN-ReLU-conv-BN beside the shortcut,
  // summed; where the block halves the image and doubles the channels, the
  // shortcut averages 2x2 and pads the new channels with zeros.
  const bool widens = GENERATE(false, true);
  CAPTURE(widens);
  const Shape in{4, 4, 2};
  const int filters = widens ? 4 : 2;
  const int stride = widens ? 2 : 1;
  const Shape mid{4 / stride, 4 / stride, filters};
  std::vector<LayerPtr> body;
  body.push_back(std::make_unique<Conv2D>("c1", in,
                                          Conv2DOptions{.filters = filters,
                                                        .stride_h = stride,
                                                        .stride_w = stride,
                                                        .padding = Padding::kFixed,
                                                        .use_bias = false}));
  body.push_back(std::make_unique<BatchNorm>("bn1", mid, BatchNormOptions{}));
  body.push_back(std::make_unique<Conv2D>(
      "c2", mid, Conv2DOptions{.filters = filters, .padding = Padding::kSame, .use_bias = false}));
  body.push_back(std::make_unique<BatchNorm>("bn2", mid, BatchNormOptions{}));
  std::vector<LayerPtr> shortcut;
  if (widens) {
    shortcut.push_back(std::make_unique<AveragePool2D>("avg", in, AveragePool2DOptions{}));
    shortcut.push_back(std::make_unique<PadChannels>("pad", Shape{2, 2, 2}, 1, 1));
  }
  std::vector<std::unique_ptr<Sequential>> paths;
  paths.push_back(std::make_unique<Sequential>("body", in, std::move(body)));
  paths.push_back(std::make_unique<Sequential>("shortcut", in, std::move(shortcut)));
  Branches block("block", in, std::move(paths), Combine::kSum);
  CHECK(block.output_shape() == mid);
  GradientCheckOptions options;
  options.epsilon = 1e-3f;  // batch statistics curve sharply (see the stack below)
  require_gradients_match(block, random_batch(4, in, 10), options);
}

TEST_CASE("Flatten and ReLU gradients match finite differences") {
  const Shape in{2, 3, 2};
  Flatten flatten("f", in);
  require_gradients_match(flatten, random_batch(2, in, 4));
  Relu relu("r", in);
  require_gradients_match(relu, random_batch(2, in, 5));
}

TEST_CASE("BatchNorm gradients match finite differences in both modes") {
  const auto phase = GENERATE(Phase::kTrain, Phase::kInfer);
  const Shape in = GENERATE(Shape::flat(4), Shape{3, 3, 2});
  CAPTURE(phase == Phase::kTrain, in.to_string());
  BatchNorm bn("bn", in, {});
  GradientCheckOptions options;
  options.context.phase = phase;
  require_gradients_match(bn, random_batch(6, in, 6), options);
}

TEST_CASE("Dropout gradients match finite differences for a fixed step") {
  Dropout dropout("drop", Shape::flat(20), 0.3f);
  require_gradients_match(dropout, random_batch(4, Shape::flat(20), 7));
}

TEST_CASE("Embedding gradients match finite differences on the table") {
  const auto combine = GENERATE(Combine::kConcat, Combine::kSum);
  Embedding emb("e", Shape::flat(4),
                {.first_column = 1, .vocab = {3, 5}, .dim = 2, .combine = combine});
  const Matrix ids{{9.0f, 2, 4, 9.0f}, {9.0f, 0, 4, 9.0f}, {9.0f, 1, 0, 9.0f}};
  GradientCheckOptions options;
  options.check_input = false;  // ids are not differentiable
  require_gradients_match(emb, ids, options);
}

TEST_CASE("Columns and Branches gradients match finite differences") {
  const auto combine = GENERATE(Combine::kConcat, Combine::kSum);
  const Shape in = Shape::flat(6);
  std::vector<std::unique_ptr<Sequential>> paths;
  for (int p = 0; p < 2; ++p) {
    std::vector<LayerPtr> layers;
    layers.push_back(std::make_unique<Columns>("cols", in, p * 2, 3));
    layers.push_back(std::make_unique<Dense>("d", Shape::flat(3), DenseOptions{.units = 2}));
    paths.push_back(std::make_unique<Sequential>("path", in, std::move(layers)));
  }
  Branches branches("b", in, std::move(paths), combine);
  CHECK(branches.output_shape().size() == (combine == Combine::kSum ? 2 : 4));
  require_gradients_match(branches, random_batch(3, in, 8));
}

TEST_CASE("A sequential stack passes gradients through every layer") {
  const Shape in{6, 6, 1};
  std::vector<LayerPtr> layers;
  // No ReLU here: its kink, followed by pooling and batch statistics, puts
  // some weights within epsilon of a non-differentiable point.
  layers.push_back(
      std::make_unique<Conv2D>("c", in, Conv2DOptions{.filters = 2, .kernel_h = 3, .kernel_w = 3}));
  layers.push_back(std::make_unique<MaxPool2D>("p", Shape{4, 4, 2}, MaxPool2DOptions{}));
  layers.push_back(std::make_unique<Flatten>("f", Shape{2, 2, 2}));
  layers.push_back(std::make_unique<BatchNorm>("bn", Shape::flat(8), BatchNormOptions{}));
  layers.push_back(std::make_unique<Dense>("d", Shape::flat(8), DenseOptions{.units = 3}));
  Sequential net("net", in, std::move(layers));
  // Batch statistics over 4 examples curve sharply: a smaller step keeps
  // the central difference's truncation error below the tolerance.
  GradientCheckOptions options;
  options.epsilon = 1e-3f;
  require_gradients_match(net, random_batch(4, in, 9), options);
}

// A flatten passes values through: the chain hands its input on and the
// gradient back without calling it, so the layers around it read and
// write the buffers it would have filled (and the gradient buffers no
// longer alternate by layer index).
TEST_CASE("A sequential stack hands values through flattens first, between and last") {
  const Shape in{2, 3, 2};
  std::vector<LayerPtr> layers;
  layers.push_back(std::make_unique<Flatten>("f0", in));
  layers.push_back(std::make_unique<Flatten>("f1", Shape::flat(12)));
  layers.push_back(std::make_unique<Dense>("d0", Shape::flat(12), DenseOptions{.units = 5}));
  layers.push_back(std::make_unique<Flatten>("f2", Shape::flat(5)));
  layers.push_back(std::make_unique<Dense>("d1", Shape::flat(5), DenseOptions{.units = 4}));
  layers.push_back(std::make_unique<Flatten>("f3", Shape::flat(4)));
  layers.push_back(std::make_unique<Dense>("d2", Shape::flat(4), DenseOptions{.units = 3}));
  layers.push_back(std::make_unique<Flatten>("f4", Shape::flat(3)));
  Sequential net("net", in, std::move(layers));
  require_gradients_match(net, random_batch(3, in, 10));
}
