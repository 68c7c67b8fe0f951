// Optimizers as one flat loop over the model's parameter buffer: a strategy
// that has averaged the gradient buffer (or a parameter server that owns a
// byte range of it) applies the update to any span, with state to match.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace distlab::nn {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;

  // params -= update(grads). Both spans hold the `size` floats given at
  // construction: the whole model, or the shard a parameter server owns.
  virtual void step(std::span<float> params, std::span<const float> grads);
  // The current step's update of the values [offset, offset + n) of what
  // this optimizer was made for, n being the spans' size (steps() already
  // counts the step): how a PerLayerOptimizer applies its parts.
  virtual void apply(std::span<float> params, std::span<const float> grads, int64_t offset) = 0;
  // Floats it was made for.
  virtual int64_t size() const = 0;

  float learning_rate() const { return learning_rate_; }
  void set_learning_rate(float lr) { learning_rate_ = lr; }
  // Per-parameter state (momentum, Adam moments) and the step count, for
  // checkpoints: restoring them resumes the same trajectory.
  virtual std::vector<std::span<float>> state() = 0;
  // Their names, in the same order ("velocity"; "m", "v").
  virtual std::vector<std::string> state_names() const = 0;
  int64_t steps() const { return steps_; }
  virtual void set_steps(int64_t steps) { steps_ = steps; }

 protected:
  explicit Optimizer(float learning_rate) : learning_rate_(learning_rate) {}
  float learning_rate_;
  int64_t steps_ = 0;
};

// Keras SGD: v = momentum * v - lr * g; w += v (nesterov: w += momentum * v - lr * g).
struct SgdOptions {
  float learning_rate = 0.01f;
  float momentum = 0;
  bool nesterov = false;
};

class Sgd : public Optimizer {
 public:
  Sgd(int64_t size, const SgdOptions& options);
  std::string name() const override { return "sgd"; }
  void apply(std::span<float> params, std::span<const float> grads, int64_t offset) override;
  int64_t size() const override { return static_cast<int64_t>(velocity_.size()); }
  std::vector<std::span<float>> state() override { return {velocity_}; }
  std::vector<std::string> state_names() const override { return {"velocity"}; }

 private:
  SgdOptions opt_;
  std::vector<float> velocity_;
};

// Adam (Kingma & Ba, Algorithm 1, as PyTorch has it): m, v moving moments,
// bias-corrected: w -= lr * m_hat / (sqrt(v_hat) + epsilon). The defaults
// are Keras' (epsilon 1e-7). Keras adds epsilon before the bias correction
// of v, in effect epsilon * sqrt(1 - beta2^t): the two differ only where
// sqrt(v_hat) is near epsilon, that is for gradients near zero.
struct AdamOptions {
  float learning_rate = 0.001f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-7f;
};

class Adam : public Optimizer {
 public:
  Adam(int64_t size, const AdamOptions& options);
  std::string name() const override { return "adam"; }
  void apply(std::span<float> params, std::span<const float> grads, int64_t offset) override;
  int64_t size() const override { return static_cast<int64_t>(m_.size()); }
  std::vector<std::span<float>> state() override { return {m_, v_}; }
  std::vector<std::string> state_names() const override { return {"m", "v"}; }

 private:
  AdamOptions opt_;
  std::vector<float> m_, v_;
};

// Adagrad, as Keras and TensorFlow's ApplyAdagradV2 have it: a per-value
// accumulator of squared gradients, starting at initial_accumulator_value;
// w -= lr * g / (sqrt(accumulator) + epsilon).
struct AdagradOptions {
  float learning_rate = 0.001f;
  float initial_accumulator_value = 0.1f;
  float epsilon = 1e-7f;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(int64_t size, const AdagradOptions& options);
  std::string name() const override { return "adagrad"; }
  void apply(std::span<float> params, std::span<const float> grads, int64_t offset) override;
  int64_t size() const override { return static_cast<int64_t>(accumulator_.size()); }
  std::vector<std::span<float>> state() override { return {accumulator_}; }
  std::vector<std::string> state_names() const override { return {"accumulator"}; }

 private:
  AdagradOptions opt_;
  std::vector<float> accumulator_;
};

// FTRL-proximal (McMahan et al., "Ad Click Prediction", 2013, Algorithm 1),
// as TensorFlow's ApplyFtrl computes it, with Keras' defaults: per value an
// accumulator n of squared gradients and a linear term z;
//   sigma = (n_new^-p - n^-p) / lr,  z += g - sigma * w,  n = n_new,
//   w = (sign(z) * l1 - z) / (n^-p / lr + 2 * l2) if |z| > l1, else 0,
// with p the learning_rate_power (-0.5: square roots). The weights follow
// from z and n alone, which is why FTRL with l1 keeps many exactly 0.
struct FtrlOptions {
  float learning_rate = 0.001f;
  float learning_rate_power = -0.5f;
  float initial_accumulator_value = 0.1f;
  float l1 = 0;
  float l2 = 0;
};

class Ftrl : public Optimizer {
 public:
  Ftrl(int64_t size, const FtrlOptions& options);
  std::string name() const override { return "ftrl"; }
  void apply(std::span<float> params, std::span<const float> grads, int64_t offset) override;
  int64_t size() const override { return static_cast<int64_t>(linear_.size()); }
  std::vector<std::span<float>> state() override { return {accumulator_, linear_}; }
  std::vector<std::string> state_names() const override { return {"accumulator", "linear"}; }

 private:
  FtrlOptions opt_;
  std::vector<float> accumulator_, linear_;
};

// One optimizer per group of layers, as TensorFlow's DNNLinearCombined
// estimators train their linear part with FTRL and their deep part with
// Adagrad: each part keeps state for every value of the span (zero where
// it has no layers, so that checkpoints keep one layout) and updates only
// the ranges of its layers. Its parts keep their own learning rates: no
// schedule changes them (a spec with parts refuses reduce_lr_on_plateau).
class PerLayerOptimizer : public Optimizer {
 public:
  struct Part {
    std::unique_ptr<Optimizer> optimizer;
    std::vector<std::pair<int64_t, int64_t>> ranges;  // (offset, count) within the span
  };
  explicit PerLayerOptimizer(std::vector<Part> parts);
  std::string name() const override;
  void apply(std::span<float> params, std::span<const float> grads, int64_t offset) override;
  int64_t size() const override;
  // Every part's slots, named "<optimizer>/<slot>" ("ftrl/linear").
  std::vector<std::span<float>> state() override;
  std::vector<std::string> state_names() const override;
  void set_steps(int64_t steps) override;

 private:
  std::vector<Part> parts_;
};

}  // namespace distlab::nn
