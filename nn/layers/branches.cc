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
    // Equal shapes, not only sizes: (2, 2, 8) and (4, 4, 2) have as many
    // values, but adding them would add unrelated pixels.
    if (combine == Combine::kSum && p->output_shape() != paths.front()->output_shape()) {
      throw Error("branches '" + name + "': summed paths must give the same shape, got " +
                  paths.front()->output_shape().to_string() + " and " +
                  p->output_shape().to_string());
    }
    total += p->output_shape().size();
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

LayerCost Branches::combine_cost(int batch, bool input_gradient) const {
  const double out = double{1} * batch * output_shape().size();
  const double in = double{1} * batch * input_shape().size();
  const double more_paths = static_cast<double>(paths_.size() - 1);
  LayerCost c;
  c.forward_kernels = 1;  // TensorFlow's AddN or ConcatV2
  if (combine_ == Combine::kSum) {
    c.forward_flops = more_paths * out;
    c.forward_bytes = kFloatBytes * (more_paths + 2) * out;
  } else {
    c.forward_bytes = kFloatBytes * 2 * out;
    c.backward_bytes = kFloatBytes * 2 * out;  // dy cut into the paths' shares
    c.backward_kernels = static_cast<int>(paths_.size());
  }
  if (input_gradient && more_paths > 0) {  // the paths' input gradients summed
    c.backward_flops += more_paths * in;
    c.backward_bytes += kFloatBytes * (more_paths + 2) * in;
    c.backward_kernels += 1;
  }
  return c;
}

LayerCost Branches::cost(int batch, bool input_gradient) const {
  LayerCost total = combine_cost(batch, input_gradient);
  for (const auto& p : paths_) total += p->cost(batch, input_gradient);
  return total;
}

void Branches::collect_costs(int batch, bool input_gradient,
                             std::vector<LayerCostEntry>& out) const {
  for (const auto& p : paths_) p->collect_costs(batch, input_gradient, out);
  out.push_back(
      {name(), combine_ == Combine::kSum ? "add" : "concat", combine_cost(batch, input_gradient)});
}

}  // namespace distlab::nn
