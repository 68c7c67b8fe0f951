#include "gradient_check.h"

#include <cmath>

namespace distlab::nn::testing {
namespace {

double probe_loss(Layer& layer, const Matrix& x, const Matrix& probe, const ForwardContext& ctx) {
  Matrix y;
  layer.forward(x, y, ctx);
  return (y.cast<double>().array() * probe.cast<double>().array()).sum();
}

bool close(double a, double n, const GradientCheckOptions& o) {
  return std::fabs(a - n) <=
         o.abs_tolerance + o.rel_tolerance * std::max(std::fabs(a), std::fabs(n));
}

}  // namespace

BoundLayer::BoundLayer(Layer& layer, uint64_t seed) : layer(layer) {
  layer.declare(trainable, state_layout);
  params.resize(trainable.size());
  grads.assign(trainable.size(), 0.0f);
  state.assign(state_layout.size(), 1.0f);
  Rng rng(seed);
  for (float& p : params) p = rng.uniform(-0.5f, 0.5f);
  layer.bind({params.data(), grads.data(), state.data()});
  layer.seed(seed);
}

Matrix random_batch(int rows, Shape shape, uint64_t seed) {
  Rng rng(seed);
  Matrix x(rows, shape.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform(-1.0f, 1.0f);
  return x;
}

std::vector<GradientMismatch> check_gradients(BoundLayer& bound, Matrix x,
                                              const GradientCheckOptions& o) {
  Layer& layer = bound.layer;
  Matrix y;
  layer.forward(x, y, o.context);
  const Matrix probe = random_batch(static_cast<int>(y.rows()), layer.output_shape(), 99)
                           .reshaped<Eigen::RowMajor>(y.rows(), y.cols());
  std::fill(bound.grads.begin(), bound.grads.end(), 0.0f);
  Matrix dx;
  layer.backward(x, y, probe, o.check_input ? &dx : nullptr);

  std::vector<GradientMismatch> bad;
  auto numeric = [&](float& value) {
    const float saved = value;
    value = saved + o.epsilon;
    const double plus = probe_loss(layer, x, probe, o.context);
    value = saved - o.epsilon;
    const double minus = probe_loss(layer, x, probe, o.context);
    value = saved;
    return (plus - minus) / (2.0 * o.epsilon);
  };
  if (o.check_input) {
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      const double n = numeric(x.data()[i]);
      if (!close(dx.data()[i], n, o))
        bad.push_back({"input " + std::to_string(i), dx.data()[i], n});
    }
  }
  for (std::size_t i = 0; i < bound.params.size(); ++i) {
    const double n = numeric(bound.params[i]);
    if (!close(bound.grads[i], n, o)) {
      bad.push_back({"param " + std::to_string(i), bound.grads[i], n});
    }
  }
  return bad;
}

}  // namespace distlab::nn::testing
