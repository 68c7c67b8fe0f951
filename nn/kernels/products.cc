// Matrix products on the calling thread, with this level's Eigen packets.
#include "nn/kernels/level.h"

namespace DISTLAB_KERNELS {
namespace {

template <typename A, typename B>
void assign(Block c, const A& a, const B& b, bool accumulate) {
  if (accumulate) {
    c.noalias() += a * b;
  } else {
    c.noalias() = a * b;
  }
}

template <typename A>
void with_rhs(Block c, const A& a, ConstBlock b, Transpose tb, bool accumulate) {
  if (tb == Transpose::kYes) {
    assign(c, a, b.transpose(), accumulate);
  } else {
    assign(c, a, b, accumulate);
  }
}

}  // namespace

void product(Block c, ConstBlock a, Transpose ta, ConstBlock b, Transpose tb, bool accumulate) {
  if (ta == Transpose::kYes) {
    with_rhs(c, a.transpose(), b, tb, accumulate);
  } else {
    with_rhs(c, a, b, tb, accumulate);
  }
}

}  // namespace DISTLAB_KERNELS
