// Conv2D and the pooling layers' forward passes against direct loops or
// values worked by hand, and the output geometry against TensorFlow's rules.
#include <catch2/catch.hpp>
#include <limits>

#include "common/error.h"
#include "gradient_check.h"
#include "nn/layers/average_pool2d.h"
#include "nn/layers/conv2d.h"
#include "nn/layers/global_average_pool2d.h"
#include "nn/layers/max_pool2d.h"
#include "nn/layers/pad_channels.h"

using namespace distlab::nn;
using namespace distlab::nn::testing;
using Catch::Matchers::WithinAbs;

namespace {

// y[n, oh, ow, f] = b[f] + sum over (kh, kw, c) of x[n, ih, iw, c] * W[kh, kw, c, f]
Matrix direct_conv(const Matrix& x, Shape in, const float* kernel, const float* bias, int filters,
                   int k, int stride, AxisGeometry gh, AxisGeometry gw) {
  Matrix y = Matrix::Zero(x.rows(), int64_t{gh.out} * gw.out * filters);
  for (Eigen::Index n = 0; n < x.rows(); ++n)
    for (int oh = 0; oh < gh.out; ++oh)
      for (int ow = 0; ow < gw.out; ++ow)
        for (int f = 0; f < filters; ++f) {
          double sum = bias[f];
          for (int kh = 0; kh < k; ++kh)
            for (int kw = 0; kw < k; ++kw)
              for (int c = 0; c < in.channels; ++c) {
                const int ih = oh * stride - gh.pad_before + kh;
                const int iw = ow * stride - gw.pad_before + kw;
                if (ih < 0 || ih >= in.height || iw < 0 || iw >= in.width) continue;
                sum += x(n, (ih * in.width + iw) * in.channels + c) *
                       kernel[((kh * k + kw) * in.channels + c) * filters + f];
              }
          y(n, (oh * gw.out + ow) * filters + f) = static_cast<float>(sum);
        }
  return y;
}

}  // namespace

TEST_CASE("Output geometry follows TensorFlow's valid, same and fixed rules") {
  using Row = std::tuple<int, int, int, Padding, int, int>;  // in, k, s, padding -> out, pad
  const auto [in, k, s, padding, out, pad] = GENERATE(table<int, int, int, Padding, int, int>({
      Row{28, 3, 1, Padding::kValid, 26, 0},
      Row{13, 2, 2, Padding::kValid, 6, 0},
      Row{5, 3, 1, Padding::kSame, 5, 1},
      Row{5, 3, 2, Padding::kSame, 3, 1},
      Row{6, 3, 2, Padding::kSame, 3, 0},  // total padding 1 goes after
      Row{7, 2, 2, Padding::kSame, 4, 0},
      // fixed: k - 1 pixels, (k - 1) / 2 of them before, whatever the stride
      Row{32, 3, 2, Padding::kFixed, 16, 1},  // same would give 16 with 0 before
      Row{32, 3, 1, Padding::kFixed, 32, 1},
      Row{7, 4, 2, Padding::kFixed, 4, 1},
  }));
  CAPTURE(in, k, s, static_cast<int>(padding));
  const auto g = axis_geometry(in, k, s, padding);
  CHECK(g.out == out);
  CHECK(g.pad_before == pad);
}

TEST_CASE("Conv2D's im2col GEMM equals the direct convolution") {
  using Row = std::tuple<int, int, int, Padding>;  // channels, kernel, stride
  const auto [channels, k, stride, padding] = GENERATE(table<int, int, int, Padding>({
      Row{1, 3, 1, Padding::kValid},
      Row{3, 3, 1, Padding::kSame},
      Row{4, 5, 2, Padding::kSame},
      Row{2, 2, 3, Padding::kValid},
      Row{3, 3, 2, Padding::kFixed},
      Row{2, 4, 2, Padding::kFixed},
  }));
  CAPTURE(channels, k, stride, static_cast<int>(padding));
  const Shape in{9, 8, channels};
  Conv2D conv("c", in,
              {.filters = 5,
               .kernel_h = k,
               .kernel_w = k,
               .stride_h = stride,
               .stride_w = stride,
               .padding = padding});
  BoundLayer bound(conv);
  const Matrix x = random_batch(3, in, 11);
  Matrix y;
  conv.forward(x, y, {});
  const auto kernel = bound.trainable.block(0), bias = bound.trainable.block(1);
  const Matrix expected = direct_conv(
      x, in, bound.params.data() + kernel.offset, bound.params.data() + bias.offset, 5, k, stride,
      axis_geometry(9, k, stride, padding), axis_geometry(8, k, stride, padding));
  REQUIRE(y.rows() == expected.rows());
  REQUIRE(y.cols() == expected.cols());
  CHECK((y - expected).cwiseAbs().maxCoeff() < 1e-5f);
}

TEST_CASE("MaxPool2D takes the maximum of each window") {
  const Shape in{4, 4, 1};
  MaxPool2D pool("p", in, {});
  // clang-format off
  const Matrix x{{ 1,  2,  5,  0,
                   3,  4, -1, -2,
                   0,  0,  9,  8,
                  -7,  6,  8,  9}};
  // clang-format on
  Matrix y;
  pool.forward(x, y, {});
  CHECK(y == Matrix{{4, 5, 6, 9}});
  // Backward routes each gradient to its window's maximum (the first of ties).
  Matrix dx;
  pool.backward(x, y, Matrix{{10, 20, 30, 40}}, &dx);
  Matrix expected = Matrix::Zero(1, 16);
  expected(0, 5) = 10;
  expected(0, 2) = 20;
  expected(0, 13) = 30;
  expected(0, 10) = 40;
  CHECK(dx == expected);
}

TEST_CASE("AveragePool2D averages each window, and at a same-padded border only the image") {
  const Shape in{3, 3, 1};
  // clang-format off
  const Matrix x{{1, 2, 3,
                  4, 5, 6,
                  7, 8, 9}};
  // clang-format on
  Matrix y;
  AveragePool2D valid("v", in, {});
  valid.forward(x, y, {});
  CHECK(y == Matrix{{3}});  // (1 + 2 + 4 + 5) / 4
  // same: 2 x 2 out, the padding row and column after; TensorFlow divides
  // the border windows by the pixels they cover, not by 4.
  AveragePool2D same("s", in, {.padding = Padding::kSame});
  same.forward(x, y, {});
  CHECK(y == Matrix{{3, 4.5f, 7.5f, 9}});
  Matrix dx;
  same.backward(x, y, Matrix{{4, 2, 2, 1}}, &dx);
  CHECK(dx == Matrix{{1, 1, 1, 1, 1, 1, 1, 1, 1}});
}

TEST_CASE("Global average pooling takes each channel's mean over the image") {
  GlobalAveragePool2D pool("g", Shape{2, 2, 2});
  const Matrix x{{1, 10, 2, 20, 3, 30, 6, 0}};  // (h, w, c) interleaved
  Matrix y, dx;
  pool.forward(x, y, {});
  CHECK(y == Matrix{{3, 15}});
  pool.backward(x, y, Matrix{{4, 8}}, &dx);
  CHECK(dx == Matrix{{1, 2, 1, 2, 1, 2, 1, 2}});
}

TEST_CASE("Channel padding puts each pixel's channels between zeros") {
  PadChannels pad("pad", Shape{1, 2, 2}, 1, 2);
  const Matrix x{{1, 2, 3, 4}};
  Matrix y, dx;
  pad.forward(x, y, {});
  CHECK(y == Matrix{{0, 1, 2, 0, 0, 0, 3, 4, 0, 0}});
  pad.backward(x, y, Matrix{{9, 1, 2, 9, 9, 9, 3, 4, 9, 9}}, &dx);
  CHECK(dx == x);
  CHECK_THROWS_AS(PadChannels("bad", Shape{1, 1, 2}, -1, 0), distlab::Error);
}

TEST_CASE("MaxPool2D keeps channels apart") {
  const Shape in{2, 2, 2};
  MaxPool2D pool("p", in, {});
  const Matrix x{{1, -1, 2, -2, 3, -3, 0, 5}};  // (h, w, c) interleaved
  Matrix y;
  pool.forward(x, y, {});
  CHECK(y == Matrix{{3, 5}});
}

TEST_CASE("MaxPool2D routes gradients within the window even when all values are -inf") {
  const Shape in{2, 2, 2};
  MaxPool2D pool("p", in, {});
  const float inf = std::numeric_limits<float>::infinity();
  const Matrix x{{-inf, -inf, -inf, -inf, -inf, -inf, -inf, 3}};
  Matrix y, dx;
  pool.forward(x, y, {});
  CHECK(y(0, 0) == -inf);
  CHECK(y(0, 1) == 3);
  pool.backward(x, y, Matrix{{1, 2}}, &dx);
  CHECK(dx == Matrix{{1, 0, 0, 0, 0, 0, 0, 2}});  // channel 0 to the first pixel
}

TEST_CASE("A convolution's cost leaves out the input gradient it does not compute") {
  const Shape in{10, 10, 3};
  Conv2D conv("c", in, {.filters = 4, .kernel_h = 3, .kernel_w = 3});
  const LayerCost with = conv.cost(8, true), without = conv.cost(8, false);
  const double gemm = 2.0 * 8 * 64 * 27 * 4;  // rows * patch * filters
  CHECK(with.forward_flops == without.forward_flops);
  CHECK(with.backward_flops - without.backward_flops == gemm);
  CHECK(without.backward_flops == gemm + 8 * 64 * 4);  // dW and the bias sum
}
