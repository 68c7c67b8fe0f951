// The compute model and the work descriptions it times: items bound by
// arithmetic or by memory at the rates of their kind, a fixed cost per
// dispatch, launch overhead on GPUs only, and the work of a real model's
// training step against its layer costs.
#include "sim/compute_model.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "common/error.h"
#include "nn/model.h"
#include "sim/machine.h"
#include "strategy/work.h"

using Catch::Matchers::WithinRel;
using distlab::sim::ComputeDevice;
using distlab::sim::cpu_device;
using distlab::sim::gpu_device;
using distlab::sim::MachineCatalog;
using distlab::sim::roofline_seconds;
using distlab::strategy::OpKind;
using distlab::strategy::Work;
using distlab::strategy::WorkItem;

namespace {

// 1 TFLOP/s effective, 100 GB/s, 10 us per launch: ridge at 10 FLOP/byte.
const ComputeDevice kDevice = distlab::sim::uniform_device("test", 1e12, 100e9, 10e-6);

Work one_item(double flops, double bytes, int kernels) {
  return Work{.label = "item", .items = {WorkItem{flops, bytes, kernels}}};
}

std::vector<distlab::nn::LayerCostEntry> lab_cnn_costs(int batch) {
  const distlab::nn::Model model(
      distlab::nn::load_model_spec(DISTLAB_SOURCE_DIR "/scenarios/models/mnist_cnn.yaml"), 1);
  return model.layer_costs(batch);
}

}  // namespace

TEST_CASE("A compute-bound item takes its FLOPs at the effective peak") {
  // 2e12 FLOP over 1e9 bytes: 2 s of arithmetic, 0.01 s of memory traffic.
  CHECK_THAT(roofline_seconds(one_item(2e12, 1e9, 0), kDevice), WithinRel(2.0, 1e-12));
}

TEST_CASE("A memory-bound item takes its bytes at the memory bandwidth") {
  // 1e9 FLOP over 3e11 bytes: 0.001 s of arithmetic, 3 s of memory traffic.
  CHECK_THAT(roofline_seconds(one_item(1e9, 3e11, 0), kDevice), WithinRel(3.0, 1e-12));
}

TEST_CASE("Items add up, each bound on its own, launches on top") {
  Work work{.label = "two"};
  work.items = {{2e12, 1e9, 4}, {1e9, 3e11, 6}};
  // Not max(total flops, total bytes): 2 + 3 seconds, plus 10 launches.
  CHECK_THAT(roofline_seconds(work, kDevice), WithinRel(5.0 + 10 * 10e-6, 1e-12));
  CHECK(roofline_seconds(Work{.label = "nothing"}, kDevice) == 0);
}

TEST_CASE("Launch overhead counts on GPUs, not on CPUs") {
  const auto catalog = MachineCatalog::load_default();
  const auto cpu = cpu_device(catalog.machine("n1-standard-4"));
  const auto& k80 = catalog.gpu("k80");
  const auto gpu = gpu_device(k80);

  CHECK(cpu.launch_seconds == 0);
  const auto& dense = distlab::sim::rates_of(cpu.rates, OpKind::kDense);
  CHECK_THAT(dense.flops,
             WithinRel(256e9 * catalog.machine("n1-standard-4").cpu_efficiency, 1e-12));
  CHECK(cpu.name == "n1-standard-4 cpu");
  CHECK(cpu.threads == 4);
  CHECK(gpu.launch_seconds == k80.kernel_launch_seconds);
  CHECK(gpu.launch_seconds > 0);
  const auto& gpu_dense = distlab::sim::rates_of(gpu.rates, OpKind::kDense);
  CHECK_THAT(gpu_dense.flops, WithinRel(k80.peak_flops * k80.efficiency, 1e-12));
  // The bytes a model counts stream at the share of the bandwidth fitted
  // to measured steps.
  CHECK(k80.memory_efficiency < 1);
  CHECK_THAT(gpu_dense.bytes_per_second,
             WithinRel(k80.memory_bandwidth * k80.memory_efficiency, 1e-12));

  // Tiny kernels: on the GPU the launches dominate; on the CPU they are free.
  const Work many = one_item(1e3, 1e3, 1000);
  const Work none = one_item(1e3, 1e3, 0);
  REQUIRE(many.items[0].ops == none.items[0].ops);
  CHECK(roofline_seconds(many, cpu) == roofline_seconds(none, cpu));
  // Each kernel costs the host a launch and the framework's dispatch; the
  // device's own time per kernel is less, so the host's side is the time.
  const double dispatch = distlab::sim::rates_of(k80.rates, OpKind::kElementwise).op_seconds;
  CHECK(dispatch > 0);
  REQUIRE(k80.kernel_device_seconds < k80.kernel_launch_seconds + dispatch);
  CHECK_THAT(roofline_seconds(many, gpu),
             WithinRel(1000 * (k80.kernel_launch_seconds + dispatch), 1e-9));
}

TEST_CASE("A device without a rate cannot time work") {
  ComputeDevice broken = kDevice;
  broken.rates[static_cast<std::size_t>(OpKind::kElementwise)].bytes_per_second = 0;
  CHECK_THROWS_AS(roofline_seconds(one_item(1, 1, 1), broken), distlab::Error);
  // Only the kind that lacks it: a dense item still has its rates.
  Work dense = one_item(1, 1, 1);
  dense.items[0].kind = OpKind::kDense;
  CHECK(roofline_seconds(dense, broken) > 0);
}

TEST_CASE("A training step's work is its layers' forward and backward costs") {
  const int batch = 128;
  const distlab::nn::Model model(
      distlab::nn::load_model_spec(DISTLAB_SOURCE_DIR "/scenarios/models/mnist_cnn.yaml"), 1);
  const auto layers = model.layer_costs(batch);
  const auto total = model.total_cost(batch);
  REQUIRE(layers.size() >= 8);

  const Work work = distlab::strategy::training_step_work(layers);
  CHECK(work.items.size() == 2 * layers.size());
  CHECK(work.flops() > 0);
  CHECK_THAT(work.flops(), WithinRel(total.forward_flops + total.backward_flops, 1e-12));
  CHECK_THAT(work.bytes(), WithinRel(total.forward_bytes + total.backward_bytes, 1e-12));
  int kernels = 0;
  for (const auto& item : work.items) kernels += item.kernels;
  CHECK(kernels == total.forward_kernels + total.backward_kernels);
  // Forward passes first, in layer order; then backward, last layer first.
  CHECK(work.items.front().flops == layers.front().cost.forward_flops);
  CHECK(work.items[layers.size()].flops == layers.back().cost.backward_flops);
  CHECK(work.items.back().flops == layers.front().cost.backward_flops);

  // The same step on a K80 die is faster than on n1-standard-4's CPUs, and
  // both take a plausible time (the lab CNN is a few GFLOP per step).
  const auto catalog = MachineCatalog::load_default();
  const double on_cpu = roofline_seconds(work, cpu_device(catalog.machine("n1-standard-4")));
  const double on_gpu = roofline_seconds(work, gpu_device(catalog.gpu("k80")));
  CHECK(on_gpu < on_cpu);
  CHECK(on_cpu > 1e-3);
  CHECK(on_cpu < 1.0);
}

TEST_CASE("Evaluation work is the forward passes, times the batches") {
  const auto layers = lab_cnn_costs(100);
  const auto total_forward = [&] {
    distlab::nn::LayerCost sum;
    for (const auto& l : layers) sum += l.cost;
    return sum;
  }();

  const Work eval = distlab::strategy::evaluation_work(layers, 2.5);
  CHECK(eval.items.size() == layers.size());
  CHECK_THAT(eval.flops(), WithinRel(2.5 * total_forward.forward_flops, 1e-12));
  CHECK_THAT(eval.bytes(), WithinRel(2.5 * total_forward.forward_bytes, 1e-12));
  int kernels = 0;
  for (const auto& item : eval.items) kernels += item.kernels;
  CHECK(kernels == 3 * total_forward.forward_kernels);  // the partial batch launches too
  CHECK(distlab::strategy::evaluation_work(layers, 0).flops() == 0);
  CHECK_THROWS_AS(distlab::strategy::evaluation_work(layers, -1), distlab::Error);
}

TEST_CASE("Element-wise work counts FLOPs and bytes per float") {
  // a += b over 1000 floats: one operation, three floats touched (read a and
  // b, write a), one kernel.
  const Work add = distlab::strategy::elementwise_work("a += b", 1000, 1, 3);
  CHECK(add.label == "a += b");
  REQUIRE(add.items.size() == 1);
  CHECK(add.flops() == 1000);
  CHECK(add.bytes() == 12000);
  CHECK(add.items[0].kernels == 1);
  // Memory-bound on the test device: 12 kB at 100 GB/s, plus a launch.
  CHECK_THAT(roofline_seconds(add, kDevice), WithinRel(12000 / 100e9 + 10e-6, 1e-12));
  CHECK(distlab::strategy::elementwise_work("none", 0, 1, 3).items.empty());
}

TEST_CASE("Each kind of operation runs at its own rates, plus a fixed cost per dispatch") {
  ComputeDevice device = kDevice;
  device.launch_seconds = 0;
  // Dense at 2 TFLOP/s, convolutions at 0.5 TFLOP/s; element-wise streams
  // at 50 GB/s; every dispatch of a dense pass costs 3 us, of an
  // element-wise pass 1 us.
  using distlab::sim::OpRates;
  device.rates[static_cast<std::size_t>(OpKind::kDense)] =
      OpRates{.op_seconds = 3e-6, .region_seconds = 0, .flops = 2e12, .bytes_per_second = 100e9};
  device.rates[static_cast<std::size_t>(OpKind::kConvolution)] =
      OpRates{.op_seconds = 0, .region_seconds = 0, .flops = 0.5e12, .bytes_per_second = 100e9};
  device.rates[static_cast<std::size_t>(OpKind::kElementwise)] =
      OpRates{.op_seconds = 1e-6, .region_seconds = 0, .flops = 1e12, .bytes_per_second = 50e9};
  Work work{.label = "kinds"};
  work.items = {{.flops = 2e9, .bytes = 1e6, .kernels = 0, .kind = OpKind::kDense, .ops = 1},
                {.flops = 2e9, .bytes = 1e6, .kernels = 0, .kind = OpKind::kConvolution, .ops = 1},
                {.flops = 1e3, .bytes = 1e8, .kernels = 0, .kind = OpKind::kElementwise, .ops = 4}};
  // 3 us + 1 ms; 4 ms; 4 x 1 us + 2 ms.
  CHECK_THAT(roofline_seconds(work, device), WithinRel(3e-6 + 1e-3 + 4e-3 + 4e-6 + 2e-3, 1e-12));
  // An operation not dispatched (ops 0) costs its arithmetic only.
  work.items = {{.flops = 2e9, .bytes = 0, .kernels = 0, .kind = OpKind::kDense, .ops = 0}};
  CHECK_THAT(roofline_seconds(work, device), WithinRel(1e-3, 1e-12));
}

TEST_CASE("Layers map to kinds: dense, convolution, embedding, and the rest element-wise") {
  using distlab::strategy::op_kind_of_layer;
  CHECK(op_kind_of_layer("dense") == OpKind::kDense);
  CHECK(op_kind_of_layer("conv2d") == OpKind::kConvolution);
  CHECK(op_kind_of_layer("embedding") == OpKind::kEmbedding);
  for (const char* other : {"relu", "max_pool2d", "batch_norm", "dropout", "flatten", "columns"}) {
    CHECK(op_kind_of_layer(other) == OpKind::kElementwise);
  }
  CHECK(std::string(distlab::strategy::op_kind_name(OpKind::kConvolution)) == "convolution");

  // The lab CNN's step: its convolutions are convolution items, its dense
  // layers dense items, each pass dispatched once, and the first layer's
  // backward pass (no input gradient) dispatched too, since it computes
  // its weight gradient.
  const auto layers = lab_cnn_costs(64);
  const Work work = distlab::strategy::training_step_work(layers);
  int convolutions = 0, dense = 0;
  for (const auto& item : work.items) {
    convolutions += item.kind == OpKind::kConvolution;
    dense += item.kind == OpKind::kDense;
    CHECK((item.ops == 1 || (item.ops == 0 && item.flops == 0 && item.bytes == 0)));
  }
  int conv_layers = 0, dense_layers = 0;
  for (const auto& l : layers) {
    conv_layers += l.kind == "conv2d";
    dense_layers += l.kind == "dense";
  }
  CHECK(convolutions == 2 * conv_layers);
  CHECK(dense == 2 * dense_layers);
  CHECK(conv_layers > 0);
}

TEST_CASE("A model's step is its forward computation, then its backward one") {
  const distlab::nn::Model mlp(
      distlab::nn::load_model_spec(DISTLAB_SOURCE_DIR "/scenarios/models/cifar10_mlp.yaml"), 1);
  const int batch = 64;
  const auto layer_costs = mlp.layer_costs(batch);
  const Work layers = distlab::strategy::training_step_work(layer_costs);
  const auto passes = distlab::strategy::model_step_passes(mlp, batch);
  CHECK(passes.forward.phase == distlab::strategy::Phase::kForward);
  CHECK(passes.backward.phase == distlab::strategy::Phase::kBackward);
  // Forward: the gradients cleared, every layer's forward pass, the loss.
  const std::size_t n = layer_costs.size();
  REQUIRE(passes.forward.items.size() == n + 2);
  const auto& reset = passes.forward.items.front();
  const auto& loss = passes.forward.items.back();
  CHECK(reset.bytes == 4.0 * static_cast<double>(mlp.parameters().size()));
  CHECK(reset.flops == 0);
  CHECK(loss.flops == 10.0 * batch * 10);  // ten operations a logit, 10 classes
  for (std::size_t i = 0; i < n; ++i)
    CHECK(passes.forward.items[i + 1].flops == layers.items[i].flops);
  // Backward: every layer's backward pass, last layer first, then the
  // penalties of five dense layers, each with a regularized kernel and
  // bias: 10 blocks.
  REQUIRE(passes.backward.items.size() == n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(passes.backward.items[i].flops == layers.items[n + i].flops);
  }
  const auto& penalties = passes.backward.items.back();
  CHECK(penalties.ops == 10);
  // The dense kernels and biases, not batch norm's scales and shifts:
  // 3072x300+300 + 300x500+500 + 500x700+700 + 700x30+30 + 30x10+10.
  CHECK(penalties.flops == 4.0 * 1'444'440);
  for (const auto& item : {reset, loss, penalties}) CHECK(item.kind == OpKind::kElementwise);

  // The whole step is the two, one after the other.
  const Work step = distlab::strategy::model_step_work(mlp, batch);
  CHECK(step.items.size() == passes.forward.items.size() + passes.backward.items.size());
  CHECK(step.flops() == passes.forward.flops() + passes.backward.flops());
  CHECK(step.bytes() == passes.forward.bytes() + passes.backward.bytes());

  // The lab CNN has no penalties: its backward computation is its layers'.
  const distlab::nn::Model cnn(
      distlab::nn::load_model_spec(DISTLAB_SOURCE_DIR "/scenarios/models/mnist_cnn.yaml"), 1);
  CHECK(distlab::strategy::model_step_passes(cnn, batch).backward.items.size() ==
        cnn.layer_costs(batch).size());

  // Updates: Adam touches 7 floats a parameter, SGD 5.
  CHECK(distlab::strategy::update_work("adam", 1000).bytes() == 7 * 4000);
  CHECK(distlab::strategy::update_work("sgd", 1000).bytes() == 5 * 4000);
}

TEST_CASE("Parallel regions cost their fixed time each, as the layers' costs count them") {
  ComputeDevice device = kDevice;
  device.launch_seconds = 0;
  device.rates[static_cast<std::size_t>(OpKind::kDense)].region_seconds = 20e-6;
  Work work{.label = "regions"};
  work.items = {
      {.flops = 0, .bytes = 0, .kernels = 0, .kind = OpKind::kDense, .ops = 1, .regions = 3}};
  CHECK_THAT(roofline_seconds(work, device), WithinRel(60e-6, 1e-12));

  // A dense layer's product runs in parallel only when it is large enough
  // to cut into blocks of 1 MFLOP or more (nn/parallel_product.cc). At batch
  // 16 the three wide layers' forward products are cut along their depth
  // too: one region for the blocks, one for the sum of the depth slices.
  const distlab::nn::Model mlp(
      distlab::nn::load_model_spec(DISTLAB_SOURCE_DIR "/scenarios/models/cifar10_mlp.yaml"), 1);
  for (const auto& layer : mlp.layer_costs(16)) {
    if (layer.kind != "dense") continue;
    CAPTURE(layer.name);
    CHECK(layer.cost.forward_regions ==
          (layer.name == "dense_4" || layer.name == "dense_5" ? 0 : 2));
  }
  // Adam over more than 32,768 values runs as one parallel region.
  CHECK(distlab::strategy::update_work("adam", 40000).items[0].regions == 1);
  CHECK(distlab::strategy::update_work("adam", 1000).items[0].regions == 0);
}

TEST_CASE("A calibrated CPU computes with the rates measured at the threads a task has cores for") {
  distlab::sim::MachineType m;
  m.name = "box";
  distlab::sim::DeviceRates one{}, two{};
  one[0].flops = 50e9;
  two[0].flops = 90e9;
  m.cpu_rates_by_threads = {{1, one}, {2, two}};
  m.cpu_rates = two;
  m.cpu_threads = 2;
  CHECK(cpu_device(m).threads == 2);
  CHECK(distlab::sim::cpu_device(m, 1).threads == 1);
  CHECK(distlab::sim::cpu_device(m, 1).rates[0].flops == 50e9);
  CHECK(distlab::sim::cpu_device(m, 2).rates[0].flops == 90e9);
  CHECK(distlab::sim::cpu_device(m, 8).threads == 2);  // the most measured
  CHECK(distlab::sim::cpu_device(m, 0).threads == 1);  // the fewest, when none fits
  // An uncalibrated machine: its own rates, whatever the threads.
  distlab::sim::MachineType plain = m;
  plain.cpu_rates_by_threads.clear();
  CHECK(distlab::sim::cpu_device(plain, 1).rates[0].flops == 90e9);
}

TEST_CASE("Mixed precision runs products at the Tensor Core peak where a GPU has one") {
  using distlab::strategy::Precision;
  // The file itself, whatever overlay ./calibrate left on this machine.
  const auto catalog = MachineCatalog::load(DISTLAB_SOURCE_DIR "/scenarios/machines.yaml");
  Work products = one_item(1e12, 1e6, 1);  // compute-bound
  products.items[0].kind = OpKind::kDense;
  Work streaming = one_item(1e3, 1e9, 1);  // memory-bound
  auto at = [](Work work, Precision precision) {
    for (auto& item : work.items) item.precision = precision;
    return work;
  };
  // Both bound by the device, far above the host's dispatch of one kernel;
  // the device's own time per kernel (kernel_device_seconds) comes on top.

  SECTION("V100: float16 products at 125 TFLOPS, bfloat16 at FP32's 15.7") {
    const auto& v100 = catalog.gpu("v100");
    const auto gpu = gpu_device(v100);
    const double kernel = v100.kernel_device_seconds;
    CHECK_THAT(roofline_seconds(products, gpu),
               WithinRel(1e12 / (15.7e12 * v100.efficiency) + kernel, 1e-9));
    CHECK_THAT(roofline_seconds(at(products, Precision::kFloat16), gpu),
               WithinRel(1e12 / (125e12 * v100.efficiency) + kernel, 1e-9));
    CHECK_THAT(roofline_seconds(at(products, Precision::kBFloat16), gpu),
               WithinRel(roofline_seconds(products, gpu), 1e-9));
    // The share of the traffic that is activations moves at two bytes a
    // value, in either format.
    const double bytes = 1e9 / (900e9 * v100.memory_efficiency);
    CHECK_THAT(roofline_seconds(streaming, gpu), WithinRel(bytes + kernel, 1e-9));
    const double mixed = bytes * (1 - v100.mixed_halved_share / 2);
    CHECK_THAT(roofline_seconds(at(streaming, Precision::kFloat16), gpu),
               WithinRel(mixed + kernel, 1e-9));
    CHECK_THAT(roofline_seconds(at(streaming, Precision::kBFloat16), gpu),
               WithinRel(mixed + kernel, 1e-9));
  }
  SECTION("A100: float32 products at TF32's 156 TFLOPS, as TensorFlow runs them") {
    const auto& a100 = catalog.gpu("a100-40gb");
    const auto gpu = gpu_device(a100);
    const double kernel = a100.kernel_device_seconds;
    CHECK_THAT(roofline_seconds(products, gpu),
               WithinRel(1e12 / (156e12 * a100.efficiency) + kernel, 1e-9));
    CHECK_THAT(roofline_seconds(at(products, Precision::kBFloat16), gpu),
               WithinRel(1e12 / (312e12 * a100.efficiency) + kernel, 1e-9));
  }
  SECTION("K80: no Tensor Cores, so only the bytes gain") {
    const auto& k80 = catalog.gpu("k80");
    const auto gpu = gpu_device(k80);
    const double kernel = k80.kernel_device_seconds;
    CHECK_THAT(roofline_seconds(at(products, Precision::kFloat16), gpu),
               WithinRel(roofline_seconds(products, gpu), 1e-9));
    CHECK_THAT(
        roofline_seconds(at(streaming, Precision::kFloat16), gpu) - kernel,
        WithinRel((roofline_seconds(streaming, gpu) - kernel) * (1 - k80.mixed_halved_share / 2),
                  1e-9));
  }
  SECTION("A CPU times every precision as float32") {
    const auto cpu = cpu_device(catalog.machine("n1-standard-8"));
    CHECK(roofline_seconds(at(products, Precision::kFloat16), cpu) ==
          roofline_seconds(products, cpu));
    CHECK(roofline_seconds(at(streaming, Precision::kBFloat16), cpu) ==
          roofline_seconds(streaming, cpu));
  }
}

TEST_CASE("Mixed precision without the Tensor Cores for it is warned of, as TensorFlow does") {
  using distlab::sim::precision_warning;
  using distlab::strategy::Precision;
  const auto catalog = MachineCatalog::load(DISTLAB_SOURCE_DIR "/scenarios/machines.yaml");
  const auto& k80_machine = catalog.machine("complex_model_m_gpu");
  const auto& v100_machine = catalog.machine("complex_model_m_v100");
  const auto& k80 = catalog.gpu("k80");
  const auto& v100 = catalog.gpu("v100");
  CHECK_THAT(precision_warning(k80_machine, &k80, Precision::kFloat16),
             Catch::Contains("complex_model_m_gpu's k80 (compute capability 3.7) has no float16 "
                             "Tensor Cores"));
  CHECK(precision_warning(v100_machine, &v100, Precision::kFloat16).empty());
  CHECK_THAT(precision_warning(v100_machine, &v100, Precision::kBFloat16),
             Catch::Contains("no bfloat16 Tensor Cores"));
  CHECK(precision_warning(catalog.machine("a2-highgpu-1g"), &catalog.gpu("a100-40gb"),
                          Precision::kBFloat16)
            .empty());
  CHECK_THAT(precision_warning(catalog.machine("n1-standard-4"), nullptr, Precision::kFloat16),
             Catch::Contains("n1-standard-4 trains on its CPU"));
  CHECK(precision_warning(k80_machine, &k80, Precision::kFloat32).empty());
}

TEST_CASE("A GPU's host runs ahead of its kernels: work takes the longer of the two") {
  const auto catalog = MachineCatalog::load(DISTLAB_SOURCE_DIR "/scenarios/machines.yaml");
  const auto& v100 = catalog.gpu("v100");
  const auto gpu = gpu_device(v100);
  const double per_kernel =
      v100.kernel_launch_seconds + distlab::sim::rates_of(v100.rates, OpKind::kDense).op_seconds;
  const double dense_flops = distlab::sim::rates_of(v100.rates, OpKind::kDense).flops;
  auto dense = [](double flops, int kernels) {
    WorkItem item{flops, 0, kernels};
    item.kind = OpKind::kDense;
    return item;
  };
  // 100 kernels of nothing: the host's dispatch is the time.
  const Work small{.label = "small", .items = {dense(1e3, 60), dense(1e3, 40)}};
  CHECK_THAT(roofline_seconds(small, gpu), WithinRel(100 * per_kernel, 1e-9));
  // Two large products: the device's time, its own per kernel included;
  // their dispatch hides under it.
  const double on_device = v100.kernel_device_seconds;
  const Work large{.label = "large", .items = {dense(1e12, 3), dense(2e12, 4)}};
  CHECK_THAT(roofline_seconds(large, gpu), WithinRel(3e12 / dense_flops + 7 * on_device, 1e-9));
  // The two sums, not item by item: a large product hides many small ops.
  const Work mixed{.label = "mixed", .items = {dense(1e12, 1), dense(1e3, 99)}};
  CHECK_THAT(
      roofline_seconds(mixed, gpu),
      WithinRel(std::max(100 * per_kernel, (1e12 + 1e3) / dense_flops + 100 * on_device), 1e-9));
}

TEST_CASE("A GPU's host pays the framework's loop once a step, on the work that starts it") {
  ComputeDevice gpu = distlab::sim::uniform_device("gpu", 1e12, 1e12, 5e-6);
  gpu.runs_ahead = true;
  gpu.step_host_seconds = 1e-3;
  gpu.kernel_device_seconds = 2e-6;
  Work pass = one_item(1e3, 1e3, 10);  // 10 kernels of nothing
  // The host: 10 launches; the device: 10 kernels' own time and a nanosecond's work.
  CHECK_THAT(roofline_seconds(pass, gpu), WithinRel(10 * 5e-6, 1e-9));
  const auto device = distlab::sim::host_and_device_seconds(pass, gpu).device;
  CHECK_THAT(device, WithinRel(1e-9 + 10 * 2e-6, 1e-9));
  pass.starts_step = true;
  CHECK_THAT(roofline_seconds(pass, gpu), WithinRel(1e-3 + 10 * 5e-6, 1e-9));
  // A CPU has no such cost: its per-operation figures hold it.
  ComputeDevice cpu = gpu;
  cpu.runs_ahead = false;
  Work cpu_pass = pass;
  CHECK(roofline_seconds(cpu_pass, cpu) == roofline_seconds(one_item(1e3, 1e3, 10), cpu));
}
