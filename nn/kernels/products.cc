// Matrix products on the calling thread, with this level's Eigen packets.
#include "nn/kernels/level.h"

namespace DISTLAB_KERNELS {
namespace {

// Eigen cuts a product's inner dimension into panels sized from the L1 data
// cache it reads from the CPU, and the panels are summed one after the
// other: a CPU with a 48 KiB L1 (this machine) and one with 32 KiB gave
// other bits for the lab MLP's first layer. So every level blocks as if
// the L1 held kBlockingL1Bytes, and a level computes the same products on
// every CPU. (The L2 and L3 sizes set the other dimensions' blocks, which
// do not change the order of any sum: they are left as read.) 32 KiB is the
// smallest L1 of current x86-64 server CPUs, so no CPU spills the panels.
constexpr std::ptrdiff_t kBlockingL1Bytes = 32 * 1024;

void pin_blocking() {
  static const bool pinned = [] {
    Eigen::setCpuCacheSizes(kBlockingL1Bytes, Eigen::l2CacheSize(), Eigen::l3CacheSize());
    return true;
  }();
  (void)pinned;
}

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
  pin_blocking();
  if (ta == Transpose::kYes) {
    with_rhs(c, a.transpose(), b, tb, accumulate);
  } else {
    with_rhs(c, a, b, tb, accumulate);
  }
}

}  // namespace DISTLAB_KERNELS
