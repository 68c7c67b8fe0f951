#include "strategy/ps_transfer.h"

#include <utility>

#include "common/error.h"
#include "strategy/parameter_server.h"

namespace distlab::strategy {

std::vector<PostedReceive> post_parameters(Runtime& runtime, TaskId ps, FloatRange into,
                                           int64_t segment_floats) {
  const int64_t count = segment_count(into.size(), segment_floats);
  std::vector<PostedReceive> receives;
  receives.reserve(static_cast<std::size_t>(count));
  for (int64_t s = 0; s < count; ++s) {
    receives.push_back(runtime.post_recv(ps, Tag::kParameters, segment_of(into, count, s)));
  }
  return receives;
}

int64_t wait_parameters(Runtime& runtime, std::vector<PostedReceive>& receives) {
  int64_t version = 0;
  for (std::size_t s = 0; s < receives.size(); ++s) {
    const Message m = runtime.wait(receives[s]);
    if (s == 0) version = m.version;
  }
  return version;
}

void send_parameters(Runtime& runtime, TaskId to, int64_t step, int64_t version, FloatRange shard,
                     int64_t segment_floats) {
  const int64_t count = segment_count(shard.size(), segment_floats);
  for (int64_t s = 0; s < count; ++s) {
    const FloatRange part = segment_of(shard, count, s);
    Message m = make_message(Tag::kParameters, step, part.size(), part.data());
    m.version = version;
    runtime.send(to, std::move(m));
  }
}

void push_gradient(Runtime& runtime, TaskId ps, int64_t step, int64_t version, FloatRange gradient,
                   GradientType wire, int64_t segment_floats) {
  const int64_t count = segment_count(gradient.size(), segment_floats);
  for (int64_t s = 0; s < count; ++s) {
    const FloatRange part = segment_of(gradient, count, s);
    Message m = make_message(Tag::kToParameterServer, step, 0, nullptr);
    m.op = static_cast<int32_t>(PsRequest::kPush);
    m.version = version;
    if (wire == GradientType::kFloat32) {
      runtime.send_borrowed(ps, std::move(m), part);
      continue;
    }
    Message encoded =
        gradient_message(Tag::kToParameterServer, step, FloatRange::sized(part.size()), wire);
    runtime.compute(encode_work(part.size(), wire), [&] {
      if (part.has_values()) encoded = gradient_message(Tag::kToParameterServer, step, part, wire);
    });
    encoded.op = m.op;
    encoded.version = version;
    runtime.send(ps, std::move(encoded));
  }
}

void receive_gradient(Runtime& runtime, const Message& first, FloatRange into, GradientType wire,
                      int64_t segment_floats, const std::string& what) {
  const int64_t count = segment_count(into.size(), segment_floats);
  // A float32 segment is the gradient itself: the rest land in place.
  std::vector<PostedReceive> rest;
  if (wire == GradientType::kFloat32) {
    for (int64_t s = 1; s < count; ++s) {
      rest.push_back(
          runtime.post_recv(first.from, Tag::kToParameterServer, segment_of(into, count, s)));
    }
  }
  auto decode = [&](const Message& m, FloatRange part) {
    read_gradient(m, wire, FloatRange::sized(part.size()), what);  // its size, in both fidelities
    runtime.compute(decode_work(part.size(), wire), [&] {
      if (part.has_values() && !m.values.empty()) read_gradient(m, wire, part, what);
    });
  };
  decode(first, segment_of(into, count, 0));
  for (int64_t s = 1; s < count; ++s) {
    const FloatRange part = segment_of(into, count, s);
    if (wire == GradientType::kFloat32) {
      runtime.wait(rest[static_cast<std::size_t>(s - 1)]);
    } else {
      decode(runtime.recv(first.from, Tag::kToParameterServer), part);
    }
  }
}

}  // namespace distlab::strategy
