// Parameters and pushes between workers and parameter servers in segments
// (strategy/ps_transfer.h), over the simulator's runtime: every segment
// lands where it belongs, the first carries the request's fields, and a
// half-precision push reads back as the wire rounds it.
#include "strategy/ps_transfer.h"

#include <catch2/catch.hpp>

#include "child_process.h"
#include "collective_harness.h"
#include "strategy/parameter_server.h"

namespace {

using namespace distlab;
using namespace distlab::strategy;

std::string run(const std::function<void(Runtime&, int)>& body) {
  return testing::in_child_process([&] {
    testing::run_collective(2, 50e-6, 1e9, Fidelity::kFull, body);
    return std::string("ok");
  });
}

std::vector<float> counting(int64_t n, float first) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = first + static_cast<float>(i) / 8;
  return values;
}

void expect(bool condition, const std::string& what) {
  if (!condition) throw std::runtime_error(what);
}

}  // namespace

TEST_CASE("Parameters in segments land in the worker's floats with the shard's version") {
  CHECK(run([](Runtime& runtime, int rank) {
          const int64_t n = 10'001, segment = 1'000;
          const TaskId server{Role::kWorker, 0}, worker{Role::kWorker, 1};
          if (rank == 0) {
            const Message ask = runtime.recv(worker, Tag::kToParameterServer);
            std::vector<float> shard = counting(n, 1);
            send_parameters(runtime, worker, ask.step, 42, FloatRange(shard), segment);
            return;
          }
          std::vector<float> params(n, -1);
          auto receives = post_parameters(runtime, server, FloatRange(params), segment);
          expect(receives.size() == 11, "11 segments posted");
          runtime.send(server, make_message(Tag::kToParameterServer, 7, 0, nullptr));
          expect(wait_parameters(runtime, receives) == 42, "the shard's version");
          expect(params == counting(n, 1), "the parameters");
          expect(runtime.log().messages_received == 11, "one message a segment");
        }) == "ok");
}

TEST_CASE("A push in segments arrives whole, in float32 and in float16") {
  for (const GradientType wire : {GradientType::kFloat32, GradientType::kFloat16}) {
    CAPTURE(gradient_type_name(wire));
    CHECK(run([wire](Runtime& runtime, int rank) {
            const int64_t n = 5'000, segment = 1'024;
            const TaskId server{Role::kWorker, 0};
            // Integers below 2048 in magnitude: exact in float16 at any scale.
            std::vector<float> sent(n);
            for (int64_t i = 0; i < n; ++i) sent[i] = static_cast<float>((i * 7) % 2001) - 1000;
            if (rank == 1) {
              std::vector<float> gradient = sent;
              push_gradient(runtime, server, 3, 9, FloatRange(gradient), wire, segment);
              runtime.wait_sends();
              return;
            }
            const Message first = runtime.recv_any(Tag::kToParameterServer);
            expect(first.op == static_cast<int32_t>(PsRequest::kPush) && first.version == 9 &&
                       first.step == 3,
                   "the first segment carries the push's fields");
            std::vector<float> into(n, 0);
            receive_gradient(runtime, first, FloatRange(into), wire, segment, "a push");
            expect(into == sent, "the gradient");
            expect(runtime.log().messages_received == 5, "one message a segment");
          }) == "ok");
  }
}

TEST_CASE("A push of the wrong size is refused, naming it") {
  const std::string outcome = testing::in_child_process([] {
    try {
      testing::run_collective(2, 50e-6, 1e9, Fidelity::kFull, [](Runtime& runtime, int rank) {
        const TaskId server{Role::kWorker, 0};
        if (rank == 1) {
          std::vector<float> gradient(100, 1);
          push_gradient(runtime, server, 0, 0, FloatRange(gradient), GradientType::kFloat32, 0);
          return;
        }
        const Message first = runtime.recv_any(Tag::kToParameterServer);
        std::vector<float> into(90);
        receive_gradient(runtime, first, FloatRange(into), GradientType::kFloat32, 0,
                         "ps:0: a push");
      });
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  });
  CHECK_THAT(outcome, Catch::Contains("ps:0: a push"));
}
