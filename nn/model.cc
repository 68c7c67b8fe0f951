#include "nn/model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "nn/kernels/kernels.h"

namespace distlab::nn {
namespace {

void fill_block(std::span<float> values, const ParamBlock& block, Rng& rng) {
  switch (block.init) {
    case Init::kZeros:
      std::fill(values.begin(), values.end(), 0.0f);
      break;
    case Init::kOnes:
      std::fill(values.begin(), values.end(), 1.0f);
      break;
    case Init::kGlorotUniform: {
      const float limit = std::sqrt(6.0f / static_cast<float>(block.fan_in + block.fan_out));
      for (float& v : values) v = rng.uniform(-limit, limit);
      break;
    }
    case Init::kEmbeddingUniform:  // Keras' default for Embedding
      for (float& v : values) v = rng.uniform(-0.05f, 0.05f);
      break;
  }
}

}  // namespace

Model::Model(ModelSpec spec, uint64_t seed)
    : spec_(std::move(spec)), seed_(seed), network_(build_network(spec_)) {
  network_->declare(trainable_, state_layout_);
  params_.assign(trainable_.size(), 0.0f);
  grads_.assign(trainable_.size(), 0.0f);
  state_.assign(state_layout_.size(), 0.0f);
  network_->bind({params_.data(), grads_.data(), state_.data()});
  initialize();
}

void Model::initialize() {
  // One stream per block: adding a layer leaves the others' values alone.
  const auto& blocks = trainable_.blocks();
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    Rng rng(derive_seed(seed_, SeedUse::kWeights, {i}));
    fill_block(std::span(params_).subspan(blocks[i].offset, blocks[i].size()), blocks[i], rng);
  }
  for (const auto& block : state_layout_.blocks()) {
    Rng unused(0);
    fill_block(std::span(state_).subspan(block.offset, block.size()), block, unused);
  }
  seed_randomness(0);
}

void Model::seed_randomness(uint64_t stream) {
  network_->seed(derive_seed(seed_, SeedUse::kDropout, {stream}));
}

// A lab MLP's gradients are 5.8 MB: a serial stretch of every step if one
// thread wrote them.
void Model::zero_gradients() {
  const auto n = static_cast<int64_t>(grads_.size());
  float* g = grads_.data();
#pragma omp parallel for simd schedule(static) if (n > kernels::kOptimizerParallelValues)
  for (int64_t i = 0; i < n; ++i) g[i] = 0.0f;
}

LossResult Model::compute_gradients(const Matrix& x, std::span<const int32_t> labels, uint64_t step,
                                    int64_t divisor) {
  LossResult result = forward_loss(x, labels, step, divisor);
  backward_gradients(x, result);
  return result;
}

LossResult Model::forward_loss(const Matrix& x, std::span<const int32_t> labels, uint64_t step,
                               int64_t divisor) {
  zero_gradients();
  // An empty batch (a worker's share of an epoch's last step) has no data
  // gradient; running it would divide BatchNorm's statistics by zero.
  if (x.rows() == 0) return {};
  logits_ = &network_->run(x, {Phase::kTrain, step});
  return softmax_cross_entropy(*logits_, labels, dlogits_, divisor > 0 ? divisor : x.rows());
}

void Model::backward_gradients(const Matrix& x, LossResult& result, const GradientsReady& ready) {
  const std::vector<int64_t> from = gradients_final_from();
  const auto& blocks = trainable_.blocks();
  // Each layer's penalties as its pass ends, added to the loss afterwards
  // in block order, as backward_gradients adds them.
  std::vector<double> penalties(blocks.size(), 0.0);
  auto finish_layer = [&](std::size_t layer) {
    for (std::size_t b = network_->first_block(layer); b < network_->end_block(layer); ++b) {
      const ParamBlock& block = blocks[b];
      if (!block.regularizer.active()) continue;
      penalties[b] = block.regularizer.apply(
          std::span<const float>(params_).subspan(block.offset, block.size()),
          std::span(grads_).subspan(block.offset, block.size()));
    }
    ready(from[layer]);
  };
  if (x.rows() > 0) {
    if (logits_ == nullptr) throw Error("backward_gradients: no forward_loss on this batch");
    network_->backward_layers(x, dlogits_, finish_layer);
    logits_ = nullptr;
  } else {
    for (std::size_t layer = network_->layers().size(); layer-- > 0;) finish_layer(layer);
  }
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].regularizer.active()) result.loss += penalties[b];
  }
}

std::vector<int64_t> Model::gradients_final_from() const {
  const std::size_t layers = network_->layers().size();
  std::vector<int64_t> from(layers, 0);
  int64_t next = trainable_.size();
  for (std::size_t layer = layers; layer-- > 0;) {
    const std::size_t first = network_->first_block(layer);
    if (first < network_->end_block(layer)) next = trainable_.blocks()[first].offset;
    from[layer] = next;
  }
  return from;
}

void Model::backward_gradients(const Matrix& x, LossResult& result) {
  if (x.rows() > 0) {
    if (logits_ == nullptr) throw Error("backward_gradients: no forward_loss on this batch");
    network_->backward(x, *logits_, dlogits_, nullptr);
    logits_ = nullptr;
  }
  add_penalties(result.loss);
}

void Model::add_penalties(double& loss) {
  for (const auto& block : trainable_.blocks()) {
    if (!block.regularizer.active()) continue;
    loss +=
        block.regularizer.apply(std::span<const float>(params_).subspan(block.offset, block.size()),
                                std::span(grads_).subspan(block.offset, block.size()));
  }
}

const Matrix& Model::predict(const Matrix& x) {
  return network_->run(x, {Phase::kInfer, 0});
}

Evaluation Model::evaluate(const Dataset& data, int batch_size) {
  if (batch_size <= 0) throw Error("evaluate: the batch size must be positive");
  Evaluation result;
  double loss_sum = 0;
  int64_t correct = 0;
  std::vector<int64_t> indices;
  for (int64_t begin = 0; begin < data.size(); begin += batch_size) {
    const int64_t end = std::min<int64_t>(begin + batch_size, data.size());
    indices.resize(end - begin);
    std::iota(indices.begin(), indices.end(), begin);
    gather_batch(data, indices, eval_x_, eval_y_);
    const LossResult r = softmax_cross_entropy(predict(eval_x_), eval_y_);
    loss_sum += r.loss * static_cast<double>(end - begin);
    correct += r.correct;
  }
  result.examples = data.size();
  if (data.size() > 0) {
    result.loss = loss_sum / static_cast<double>(data.size());
    result.accuracy = static_cast<double>(correct) / static_cast<double>(data.size());
  }
  return result;
}

std::vector<std::vector<LayerCostEntry>> Model::layer_costs_by_layer(int batch) const {
  std::vector<std::vector<LayerCostEntry>> out(network_->layers().size());
  for (std::size_t layer = 0; layer < out.size(); ++layer) {
    network_->collect_layer_costs(layer, batch, out[layer]);
  }
  return out;
}

std::vector<LayerCostEntry> Model::layer_costs(int batch) const {
  std::vector<LayerCostEntry> out;
  network_->collect_costs(batch, false, out);
  return out;
}

}  // namespace distlab::nn
