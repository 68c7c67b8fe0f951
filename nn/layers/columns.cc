#include "nn/layers/columns.h"

#include "common/error.h"

namespace distlab::nn {

Columns::Columns(std::string name, Shape input, int first, int count)
    : Layer(std::move(name), input, Shape::flat(count)), first_(first), count_(count) {
  if (first < 0 || count <= 0 || first + count > input.size()) {
    throw Error("columns '" + this->name() + "': columns " + std::to_string(first) + ".." +
                std::to_string(first + count - 1) + " lie outside the input of " +
                std::to_string(input.size()) + " values");
  }
}

void Columns::forward(const Matrix& x, Matrix& y, const ForwardContext& /*ctx*/) {
  y = x.middleCols(first_, count_);
}

void Columns::backward(const Matrix& x, const Matrix& /*y*/, const Matrix& dy, Matrix* dx) {
  if (!dx) return;
  dx->setZero(x.rows(), x.cols());
  dx->middleCols(first_, count_) = dy;
}

}  // namespace distlab::nn
