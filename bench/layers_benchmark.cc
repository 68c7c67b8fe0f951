// Forward + backward of single layers at the lab models' shapes, batch 128.
// Items per second are examples; the FLOP rate is reported as a counter so
// that kernels can be compared with the machine's peak.
#include <benchmark/benchmark.h>

#include <memory>

#include "nn/layers/batch_norm.h"
#include "nn/layers/conv2d.h"
#include "nn/layers/dense.h"
#include "nn/layers/max_pool2d.h"
#include "nn/threads.h"

namespace {

using namespace distlab::nn;

constexpr int kBatch = 128;

// A layer with its buffers, random parameters and a random input batch.
struct Fixture {
  explicit Fixture(LayerPtr l) : layer(std::move(l)) {
    layer->declare(trainable, state_layout);
    params.assign(trainable.size(), 0.01f);
    grads.assign(trainable.size(), 0.0f);
    state.assign(state_layout.size(), 0.0f);
    layer->bind({params.data(), grads.data(), state.data()});
    Rng rng(1);
    x.resize(kBatch, layer->input_shape().size());
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform(-1, 1);
  }

  void run(benchmark::State& state_, bool input_gradient) {
    set_compute_threads(static_cast<int>(state_.range(0)));
    for (auto _ : state_) {
      layer->forward(x, y, {Phase::kTrain, 0});
      layer->backward(x, y, y, input_gradient ? &dx : nullptr);
      benchmark::DoNotOptimize(grads.data());
    }
    const LayerCost c = layer->cost(kBatch, input_gradient);
    state_.SetItemsProcessed(state_.iterations() * kBatch);
    state_.counters["GFLOP/s"] =
        benchmark::Counter((c.forward_flops + c.backward_flops) * state_.iterations() / 1e9,
                           benchmark::Counter::kIsRate);
  }

  LayerPtr layer;
  ParameterLayout trainable, state_layout;
  std::vector<float> params, grads, state;
  Matrix x, y, dx;
};

void BM_Conv1_28x28x1_to_32(benchmark::State& state) {
  Fixture f(std::make_unique<Conv2D>(
      "c1", Shape{28, 28, 1}, Conv2DOptions{.filters = 32, .activation = Activation::kRelu}));
  f.run(state, false);  // the first layer needs no input gradient
}

void BM_Conv2_13x13x32_to_64(benchmark::State& state) {
  Fixture f(std::make_unique<Conv2D>(
      "c2", Shape{13, 13, 32}, Conv2DOptions{.filters = 64, .activation = Activation::kRelu}));
  f.run(state, true);
}

void BM_Conv3_5x5x64_to_64(benchmark::State& state) {
  Fixture f(std::make_unique<Conv2D>(
      "c3", Shape{5, 5, 64}, Conv2DOptions{.filters = 64, .activation = Activation::kRelu}));
  f.run(state, true);
}

void BM_MaxPool_26x26x32(benchmark::State& state) {
  Fixture f(std::make_unique<MaxPool2D>("p", Shape{26, 26, 32}, MaxPool2DOptions{}));
  f.run(state, true);
}

void BM_Dense_3072_to_300(benchmark::State& state) {
  Fixture f(std::make_unique<Dense>("d1", Shape::flat(3072),
                                    DenseOptions{.units = 300, .activation = Activation::kRelu}));
  f.run(state, false);
}

void BM_Dense_500_to_700(benchmark::State& state) {
  Fixture f(std::make_unique<Dense>("d3", Shape::flat(500),
                                    DenseOptions{.units = 700, .activation = Activation::kRelu}));
  f.run(state, true);
}

void BM_Dense_576_to_64(benchmark::State& state) {
  Fixture f(std::make_unique<Dense>("cnn_d1", Shape::flat(576),
                                    DenseOptions{.units = 64, .activation = Activation::kRelu}));
  f.run(state, true);
}

// The CIFAR-10 MLP's widest and narrowest batch norms.
void BM_BatchNorm_700(benchmark::State& state) {
  Fixture f(std::make_unique<BatchNorm>("bn3", Shape::flat(700), BatchNormOptions{}));
  f.run(state, true);
}

void BM_BatchNorm_300(benchmark::State& state) {
  Fixture f(std::make_unique<BatchNorm>("bn1", Shape::flat(300), BatchNormOptions{}));
  f.run(state, true);
}

}  // namespace

BENCHMARK(BM_Conv1_28x28x1_to_32)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Conv2_13x13x32_to_64)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Conv3_5x5x64_to_64)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MaxPool_26x26x32)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Dense_3072_to_300)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Dense_500_to_700)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Dense_576_to_64)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK(BM_BatchNorm_700)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_BatchNorm_300)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

BENCHMARK_MAIN();
