#include "tests/run/sample_run.h"

#include <catch2/catch.hpp>
#include <cmath>

namespace distlab::test {
namespace {

using run::RunResult;
using strategy::index_of;
using strategy::Phase;
using strategy::Role;
using strategy::Span;
using strategy::SpanKind;
using strategy::StepRecord;
using strategy::TaskLog;

const double kNaN = std::nan("");

StepRecord step(int64_t n, double start, double end, int64_t staleness, double loss) {
  StepRecord s;
  s.step = n;
  s.start = start;
  s.end = end;
  s.compute_seconds = (end - start) * 0.5;
  s.communication_seconds = (end - start) * 0.3;
  s.waiting_seconds = (end - start) * 0.2;
  s.phases[index_of(Phase::kForward)] = 0.25;
  s.phases[index_of(Phase::kOther)] = 0.125;
  s.phase_cpu[index_of(Phase::kForward)] = 0.5;  // two threads busy throughout
  s.bytes_sent = 1000 * static_cast<uint64_t>(n + 1);
  s.bytes_received = 2000;
  s.staleness = staleness;
  s.loss = loss;
  return s;
}

}  // namespace

TaskLog task(Role role, int index, int scale, const std::string& host, int steps, bool staleness,
             double loss) {
  TaskLog t;
  t.task = {role, index};
  t.host = host;
  for (int i = 0; i < steps; ++i) {
    t.steps.push_back(step(i, 0.25 * i, 0.25 * i + 0.000123456789, staleness ? i % 3 : -1, loss));
  }
  t.spans.push_back(Span{SpanKind::kCompute, 0.0, 0.0015, "forward+backward"});
  t.spans.push_back(Span{SpanKind::kReceive, 0.0015, 0.0025, "ring reduce-scatter"});
  t.spans.push_back(Span{SpanKind::kWait, 0.0025, 0.003, ""});
  t.compute_seconds = 0.5 + scale;
  t.communication_seconds = 0.25;
  t.waiting_seconds = 0.25 * scale;
  t.checkpoint_seconds = 0.125;
  t.bytes_sent = 1000000 * static_cast<uint64_t>(scale);
  t.bytes_received = 500000;
  t.messages_sent = 10;
  t.messages_received = 12;
  t.payloads_read_in_place = 5;
  t.finished_at = 2.5;
  return t;
}

// Three tasks: the chief (with a curve), a worker, a PS with staleness.
RunResult three_tasks(const std::string& fidelity) {
  RunResult r;
  r.scenario = "cnn_ps_async";
  r.description = "the lab CNN, asynchronous parameter server";
  r.strategy = "parameter_server (async)";
  r.backend = "simulate";
  r.fidelity = fidelity;
  r.seed = 7;
  r.run_seconds = 4.0;
  r.wall_seconds = 0.5;
  r.simulation_wall_seconds = 0.25;
  r.simulation_cpu_seconds = 0.2;
  r.model_bytes = 372000;
  r.replicas = 2;
  r.steps = 4;
  r.examples = 1024;
  const bool timing = fidelity == "timing";
  r.final_loss = timing ? kNaN : 0.4321;
  r.final_accuracy = timing ? kNaN : 0.875;
  r.weights_sha256 = timing ? "" : std::string(64, 'a');
  r.spans_dropped = 3;
  const double loss = timing ? kNaN : 0.5;
  r.tasks.push_back(task(Role::kChief, 0, 1, "gpu-0", 4, false, loss));
  r.tasks.push_back(task(Role::kWorker, 0, 2, "gpu-1", 4, false, loss));
  r.tasks.push_back(task(Role::kPs, 0, 3, "cpu-0", 6, true, kNaN));
  r.task_updates = {0, 0, 6};
  r.tasks[0].curve.push_back({1.0, 2, 0.9, 0.8, 0.7});
  r.tasks[0].curve.push_back({2.0, 4, 0.6, kNaN, 0.75});
  return r;
}

void check_same_step(const strategy::StepRecord& got, const strategy::StepRecord& want) {
  auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  CHECK(got.step == want.step);
  CHECK(same(got.start, want.start));
  CHECK(same(got.end, want.end));
  CHECK(same(got.compute_seconds, want.compute_seconds));
  CHECK(same(got.communication_seconds, want.communication_seconds));
  CHECK(same(got.waiting_seconds, want.waiting_seconds));
  CHECK(same(got.checkpoint_seconds, want.checkpoint_seconds));
  CHECK(same(got.input_seconds, want.input_seconds));
  CHECK(got.bytes_sent == want.bytes_sent);
  CHECK(got.bytes_received == want.bytes_received);
  CHECK(got.staleness == want.staleness);
  CHECK(same(got.loss, want.loss));
  for (int p = 0; p < strategy::kPhases; ++p) {
    CHECK(same(got.phases[p], want.phases[p]));
    CHECK(same(got.phase_cpu[p], want.phase_cpu[p]));
  }
}

}  // namespace distlab::test
