#include "run/task_report.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

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

// A report comes from another process, or over the network from a peer:
// every element is looked up with at() and read as its type (both throw
// json::exception), and a count must be written as an integer, since a
// float beyond the integer's range has no defined conversion.
template <class Int>
Int integer(const json& value) {
  const bool fits = std::is_signed_v<Int> ? value.is_number_integer() : value.is_number_unsigned();
  if (!fits) {
    throw Error(std::string(std::is_signed_v<Int> ? "an integer" : "a count") + " expected, not " +
                value.dump());
  }
  return value.get<Int>();
}

SpanKind span_kind(const json& value) {
  const int kind = integer<int>(value);
  if (kind < 0 || kind > static_cast<int>(SpanKind::kBackground))
    throw Error("unknown span kind " + std::to_string(kind));
  return static_cast<SpanKind>(kind);
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
    log.task = {role_from(j.at("role").get<std::string>()), integer<int>(j.at("index"))};
    log.host = j.at("host").get<std::string>();
    log.isa = j.at("isa").get<std::string>();
    for (const json& s : j.at("steps")) {
      log.steps.push_back({.step = integer<int64_t>(s.at(0)),
                           .start = s.at(1).get<double>(),
                           .end = s.at(2).get<double>(),
                           .compute_seconds = s.at(3).get<double>(),
                           .communication_seconds = s.at(4).get<double>(),
                           .waiting_seconds = s.at(5).get<double>(),
                           .checkpoint_seconds = s.at(6).get<double>(),
                           .input_seconds = s.at(11).get<double>(),
                           .bytes_sent = integer<uint64_t>(s.at(7)),
                           .bytes_received = integer<uint64_t>(s.at(8)),
                           .staleness = integer<int64_t>(s.at(9)),
                           .loss = number(s.at(10)),
                           .phases = s.at(12).get<strategy::PhaseSeconds>(),
                           .phase_cpu = s.at(13).get<strategy::PhaseSeconds>()});
    }
    for (const json& s : j.at("spans"))
      log.spans.push_back({span_kind(s.at(0)), s.at(1).get<double>(), s.at(2).get<double>(),
                           s.at(3).get<std::string>()});
    for (const json& c : j.at("curve")) {
      log.curve.push_back({.seconds = c.at(0).get<double>(),
                           .step = integer<int64_t>(c.at(1)),
                           .train_loss = number(c.at(2)),
                           .test_loss = number(c.at(3)),
                           .test_accuracy = number(c.at(4))});
    }
    const json& t = j.at("totals");
    log.compute_seconds = t.at(0).get<double>();
    log.communication_seconds = t.at(1).get<double>();
    log.waiting_seconds = t.at(2).get<double>();
    log.checkpoint_seconds = t.at(3).get<double>();
    log.bytes_sent = integer<uint64_t>(t.at(4));
    log.bytes_received = integer<uint64_t>(t.at(5));
    log.messages_sent = integer<uint64_t>(t.at(6));
    log.messages_received = integer<uint64_t>(t.at(7));
    log.finished_at = t.at(8).get<double>();
    log.input_seconds = t.at(9).get<double>();
    log.slowdown_seconds = t.at(10).get<double>();
    log.hidden_communication_seconds = t.at(11).get<double>();
    log.payloads_read_in_place = integer<uint64_t>(t.at(12));
    log.phases = j.at("phases").get<strategy::PhaseSeconds>();
    log.phase_cpu = j.at("phase_cpu").get<strategy::PhaseSeconds>();
    const json& files = j.at("checkpoints");
    log.checkpoints = integer<uint64_t>(files.at(0));
    log.checkpoint_bytes = integer<uint64_t>(files.at(1));
    log.examples = integer<int64_t>(j.at("examples"));
    r.spans_dropped = integer<uint64_t>(j.at("spans_dropped"));
    const json& o = j.at("outcome");
    r.outcome.updates = integer<int64_t>(o.at("updates"));
    r.outcome.dropped = integer<int64_t>(o.at("dropped"));
    r.outcome.final_loss = number(o.at("final_loss"));
    r.outcome.final_accuracy = number(o.at("final_accuracy"));
    r.outcome.weights_sha256 = o.at("weights_sha256").get<std::string>();
    return r;
  } catch (const json::exception& e) {
    throw Error(source + ": not a task report: " + e.what());
  } catch (const Error& e) {
    throw Error(source + ": not a task report: " + e.what());
  }
}

}  // namespace distlab::run
