#include "nn/layers/branches.h"

#include <algorithm>

#include "common/error.h"

namespace distlab::nn {
namespace {

Shape combined_output(const std::string& name,
                      const std::vector<std::unique_ptr<Sequential>>& paths, Combine combine) {
  if (paths.empty()) throw Error("branches '" + name + "': no paths");
  int64_t total = 0;
  for (const auto& p : paths) {
    const int64_t size = p->output_shape().size();
    if (combine == Combine::kSum && size != paths.front()->output_shape().size()) {
      throw Error("branches '" + name + "': summed paths must have equal output sizes, got " +
                  std::to_string(paths.front()->output_shape().size()) + " and " +
                  std::to_string(size));
    }
    total += size;
  }
  if (combine == Combine::kSum) return paths.front()->output_shape();
  return Shape::flat(static_cast<int>(total));
}

}  // namespace

Branches::Branches(std::string name, Shape input, std::vector<std::unique_ptr<Sequential>> paths,
                   Combine combine)
    : Layer(name, input, combined_output(name, paths, combine)),
      paths_(std::move(paths)),
      combine_(combine),
      outputs_(paths_.size()) {}

void Branches::declare(ParameterLayout& trainable, ParameterLayout& state) {
  for (auto& p : paths_) p->declare(trainable, state);
}

bool Branches::has_parameters() const {
  return std::any_of(paths_.begin(), paths_.end(),
                     [](const auto& p) { return p->has_parameters(); });
}

void Branches::bind(const ParameterBuffers& buffers) {
  for (auto& p : paths_) p->bind(buffers);
}

void Branches::seed(uint64_t seed) {
  for (std::size_t i = 0; i < paths_.size(); ++i) paths_[i]->seed(derive_seed(seed, {i}));
}

void Branches::forward(const Matrix& x, Matrix& y, const ForwardContext& ctx) {
  for (std::size_t p = 0; p < paths_.size(); ++p) outputs_[p] = &paths_[p]->run(x, ctx);
  y.resize(x.rows(), output_shape().size());
  if (combine_ == Combine::kSum) {
    y = *outputs_[0];
    for (std::size_t p = 1; p < paths_.size(); ++p) y += *outputs_[p];
    return;
  }
  Eigen::Index col = 0;
  for (const Matrix* out : outputs_) {
    y.middleCols(col, out->cols()) = *out;
    col += out->cols();
  }
}

void Branches::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  Eigen::Index col = 0;
  for (std::size_t p = 0; p < paths_.size(); ++p) {
    const Matrix* dy_p = &dy;  // a sum passes dy to every path unchanged
    if (combine_ == Combine::kConcat) {
      dy_part_ = dy.middleCols(col, outputs_[p]->cols());
      col += outputs_[p]->cols();
      dy_p = &dy_part_;
    }
    // dx is the sum of every path's input gradient.
    Matrix* dx_p = !dx ? nullptr : p == 0 ? dx : &dx_part_;
    paths_[p]->backward(x, *outputs_[p], *dy_p, dx_p);
    if (dx && p > 0) *dx += dx_part_;
  }
}

LayerCost Branches::cost(int batch, bool input_gradient) const {
  LayerCost total;
  for (const auto& p : paths_) total += p->cost(batch, input_gradient);
  return total;
}

void Branches::collect_costs(int batch, bool input_gradient,
                             std::vector<LayerCostEntry>& out) const {
  for (const auto& p : paths_) p->collect_costs(batch, input_gradient, out);
}

}  // namespace distlab::nn
