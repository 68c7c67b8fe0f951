// Max pooling of one example, branch-free over the channels so that the
// inner loop is one vector compare-and-select per packet.
#include "nn/kernels/level.h"

namespace DISTLAB_KERNELS {

void max_pool(const PoolGeometry& g, const float* image, float* out, int32_t* argmax) {
  const int channels = g.channels;
  for (int oh = 0; oh < g.out_h; ++oh) {
    for (int ow = 0; ow < g.out_w; ++ow) {
      float* __restrict best = out + (int64_t{oh} * g.out_w + ow) * channels;
      int32_t* __restrict best_at = argmax + (int64_t{oh} * g.out_w + ow) * channels;
      bool first = true;
      for (int ph = 0; ph < g.pool_h; ++ph) {
        const int ih = oh * g.stride_h - g.pad_top + ph;
        if (ih < 0 || ih >= g.in_h) continue;
        for (int pw = 0; pw < g.pool_w; ++pw) {
          const int iw = ow * g.stride_w - g.pad_left + pw;
          if (iw < 0 || iw >= g.in_w) continue;
          const auto at = static_cast<int32_t>((ih * g.in_w + iw) * channels);
          const float* __restrict pixel = image + at;
          if (first) {  // the window's first pixel, even if -inf or NaN
            for (int c = 0; c < channels; ++c) best[c] = pixel[c], best_at[c] = at + c;
            first = false;
            continue;
          }
          // Strictly greater, so the first maximum in scan order wins ties.
          for (int c = 0; c < channels; ++c) {
            const bool greater = pixel[c] > best[c];
            best_at[c] = greater ? at + c : best_at[c];
            best[c] = greater ? pixel[c] : best[c];
          }
        }
      }
    }
  }
}

}  // namespace DISTLAB_KERNELS
