// Parameter-server push/pull throughput over the TCP runtime (see
// realnet_allreduce.cc for the protocol).
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "realnet_bench.h"
#include "strategy/parameter_server.h"
#include "strategy/ps_transfer.h"

namespace distlab::bench {
namespace {

using strategy::FloatRange;
using strategy::Message;
using strategy::Role;
using strategy::Tag;
using strategy::TaskId;

Message ps_request(strategy::PsRequest what, int64_t step) {
  Message m = strategy::make_message(Tag::kToParameterServer, step, 0, nullptr);
  m.op = static_cast<int32_t>(what);
  return m;
}

}  // namespace

void run_ps_benchmark(net::TcpRuntime& runtime, const std::vector<Size>& sizes, const Options& o) {
  using strategy::PsRequest;
  const auto& cluster = runtime.cluster();
  const std::vector<TaskId> all = cluster.tasks();
  const int rank = cluster.ordinal(runtime.self());
  const int workers = cluster.workers;
  const TaskId server{Role::kPs, 0};
  const bool is_ps = runtime.self().role == Role::kPs;
  constexpr float kLearningRate = 1.0f / 1024;
  int64_t barrier_step = 0;
  const int64_t segment_floats = o.segment_bytes / 4;
  for (const Size& size : sizes) {
    const int64_t n = size.bytes / 4;
    const int iters = iters_for(size.bytes, o.iter_scale);
    if (is_ps) {
      std::vector<float> values(n, 1.0f), gradient(n);
      int64_t version = 0;
      // Answers pulls and applies pushes until `pushes` more have come.
      auto serve = [&](int64_t pushes) {
        while (pushes > 0) {
          Message m = runtime.recv_any(Tag::kToParameterServer);
          if (m.op == static_cast<int32_t>(PsRequest::kPull)) {
            strategy::send_parameters(runtime, m.from, m.step, version, FloatRange(values),
                                      segment_floats);
          } else if (m.op == static_cast<int32_t>(PsRequest::kPush)) {
            strategy::receive_gradient(runtime, m, FloatRange(gradient),
                                       strategy::GradientType::kFloat32, segment_floats, "ps");
            const float* g = gradient.data();
            float* v = values.data();
            for (int64_t i = 0; i < n; ++i) v[i] -= kLearningRate * g[i];
            ++version;
            --pushes;
          } else {
            throw Error("ps: unexpected request " + std::to_string(m.op));
          }
        }
      };
      serve(static_cast<int64_t>(o.warmup) * workers);
      barrier(runtime, all, rank, barrier_step);
      const auto start = std::chrono::steady_clock::now();
      serve(static_cast<int64_t>(iters) * workers);
      const double elapsed = seconds_since(start);
      // No worker pulls the next size before every push of this one is in.
      barrier(runtime, all, rank, barrier_step);
      // Every push was a gradient of ones: the values are exact.
      const float expected = 1.0f - kLearningRate * static_cast<float>(version);
      if (values.front() != expected || values.back() != expected) {
        throw Error("ps: after " + std::to_string(version) + " pushes the values are " +
                    std::to_string(values.front()) + ", not " + std::to_string(expected));
      }
      const int64_t pushes = static_cast<int64_t>(iters) * workers;
      const nlohmann::json row = {{"mode", "ps"},
                                  {"p", cluster.task_count()},
                                  {"workers", workers},
                                  {"size", size.name},
                                  {"bytes", size.bytes},
                                  {"pushes", pushes},
                                  {"elapsed_s", elapsed},
                                  {"pushes_per_s", pushes / elapsed},
                                  {"GBps", 2.0 * size.bytes * pushes / elapsed / 1e9}};
      std::printf("%s\n", row.dump().c_str());
      std::fflush(stdout);
    } else {
      std::vector<float> params(n, 0.0f);
      std::vector<float> gradient(n, 1.0f);
      int64_t step = 0;
      auto train_step = [&] {
        auto receives =
            strategy::post_parameters(runtime, server, FloatRange(params), segment_floats);
        runtime.send(server, ps_request(PsRequest::kPull, step));
        const int64_t version = strategy::wait_parameters(runtime, receives);
        // The previous push is in: its borrowed gradient is free again.
        runtime.wait_sends();
        strategy::push_gradient(runtime, server, step, version, FloatRange(gradient),
                                strategy::GradientType::kFloat32, segment_floats);
        ++step;
      };
      for (int i = 0; i < o.warmup; ++i) train_step();
      barrier(runtime, all, rank, barrier_step);
      for (int i = 0; i < iters; ++i) train_step();
      runtime.wait_sends();
      barrier(runtime, all, rank, barrier_step);
    }
  }
}

}  // namespace distlab::bench
