#include "run/task_report.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace distlab::run {

using nlohmann::json;
using strategy::CurvePoint;
using strategy::Span;
using strategy::SpanKind;
using strategy::StepRecord;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// JSON has no NaN: it travels as null.
json number(double value) {
  return std::isfinite(value) ? json(value) : json(nullptr);
}
double number(const json& value) {
  return value.is_null() ? kNaN : value.get<double>();
}

strategy::Role role_from(const std::string& name) {
  if (name == "chief") return strategy::Role::kChief;
  if (name == "ps") return strategy::Role::kPs;
  if (name == "worker") return strategy::Role::kWorker;
  throw Error("unknown role '" + name + "'");
}

}  // namespace

std::string task_report_json(const TaskReport& report) {
  const strategy::TaskLog& log = report.log;
  json steps = json::array();
  for (const StepRecord& s : log.steps) {
    steps.push_back({s.step, s.start, s.end, s.compute_seconds, s.communication_seconds,
                     s.waiting_seconds, s.checkpoint_seconds, s.bytes_sent, s.bytes_received,
                     s.staleness, number(s.loss), s.input_seconds, s.phases, s.phase_cpu});
  }
  json spans = json::array();
  for (const Span& s : log.spans)
    spans.push_back({static_cast<int>(s.kind), s.start, s.end, s.label.text()});
  json curve = json::array();
  for (const CurvePoint& c : log.curve) {
    curve.push_back(
        {c.seconds, c.step, number(c.train_loss), number(c.test_loss), number(c.test_accuracy)});
  }
  const strategy::TaskOutcome& o = report.outcome;
  return json{{"role", strategy::role_name(log.task.role)},
              {"index", log.task.index},
              {"host", log.host},
              {"isa", log.isa},
              {"steps", std::move(steps)},
              {"spans", std::move(spans)},
              {"curve", std::move(curve)},
              {"totals",
               {log.compute_seconds, log.communication_seconds, log.waiting_seconds,
                log.checkpoint_seconds, log.bytes_sent, log.bytes_received, log.messages_sent,
                log.messages_received, log.finished_at, log.input_seconds, log.slowdown_seconds,
                log.hidden_communication_seconds, log.payloads_read_in_place}},
              {"phases", log.phases},
              {"phase_cpu", log.phase_cpu},
              {"checkpoints", {log.checkpoints, log.checkpoint_bytes}},
              {"examples", log.examples},
              {"spans_dropped", report.spans_dropped},
              {"outcome",
               {{"updates", o.updates},
                {"dropped", o.dropped},
                {"final_loss", number(o.final_loss)},
                {"final_accuracy", number(o.final_accuracy)},
                {"weights_sha256", o.weights_sha256}}}}
      .dump();
}

TaskReport parse_task_report(const std::string& text, const std::string& source) {
  try {
    const json j = json::parse(text);
    TaskReport r;
    strategy::TaskLog& log = r.log;
    log.task = {role_from(j.at("role").get<std::string>()), j.at("index").get<int>()};
    log.host = j.at("host").get<std::string>();
    log.isa = j.at("isa").get<std::string>();
    for (const json& s : j.at("steps")) {
      log.steps.push_back({.step = s[0],
                           .start = s[1],
                           .end = s[2],
                           .compute_seconds = s[3],
                           .communication_seconds = s[4],
                           .waiting_seconds = s[5],
                           .checkpoint_seconds = s[6],
                           .input_seconds = s[11],
                           .bytes_sent = s[7],
                           .bytes_received = s[8],
                           .staleness = s[9],
                           .loss = number(s[10]),
                           .phases = s[12].get<strategy::PhaseSeconds>(),
                           .phase_cpu = s[13].get<strategy::PhaseSeconds>()});
    }
    for (const json& s : j.at("spans")) {
      log.spans.push_back(
          {static_cast<SpanKind>(s[0].get<int>()), s[1], s[2], s[3].get<std::string>()});
    }
    for (const json& c : j.at("curve")) {
      log.curve.push_back({.seconds = c[0],
                           .step = c[1],
                           .train_loss = number(c[2]),
                           .test_loss = number(c[3]),
                           .test_accuracy = number(c[4])});
    }
    const json& t = j.at("totals");
    log.compute_seconds = t[0];
    log.communication_seconds = t[1];
    log.waiting_seconds = t[2];
    log.checkpoint_seconds = t[3];
    log.bytes_sent = t[4];
    log.bytes_received = t[5];
    log.messages_sent = t[6];
    log.messages_received = t[7];
    log.finished_at = t[8];
    log.input_seconds = t[9];
    log.slowdown_seconds = t[10];
    log.hidden_communication_seconds = t[11];
    log.payloads_read_in_place = t.at(12);
    log.phases = j.at("phases").get<strategy::PhaseSeconds>();
    log.phase_cpu = j.at("phase_cpu").get<strategy::PhaseSeconds>();
    const json& files = j.at("checkpoints");
    log.checkpoints = files.at(0);
    log.checkpoint_bytes = files.at(1);
    log.examples = j.at("examples");
    r.spans_dropped = j.at("spans_dropped");
    const json& o = j.at("outcome");
    r.outcome.updates = o.at("updates");
    r.outcome.dropped = o.at("dropped");
    r.outcome.final_loss = number(o.at("final_loss"));
    r.outcome.final_accuracy = number(o.at("final_accuracy"));
    r.outcome.weights_sha256 = o.at("weights_sha256");
    return r;
  } catch (const json::exception& e) {
    throw Error(source + ": not a task report: " + e.what());
  } catch (const Error& e) {
    throw Error(source + ": not a task report: " + e.what());
  }
}

}  // namespace distlab::run
