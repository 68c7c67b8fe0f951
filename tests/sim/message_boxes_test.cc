// The boxes that carry messages through the simulator's mailboxes
// (sim/message_boxes.h): a message comes out of its box as it went in,
// floats or none, and a freed box is the next one filled.
#include "sim/message_boxes.h"

#include <catch2/catch.hpp>
#include <cstdint>

namespace {

using namespace distlab;
using strategy::Message;
using strategy::Tag;

Message header_only() {
  Message m;
  m.from = {strategy::Role::kPs, 3};
  m.tag = Tag::kParameters;
  m.op = 7;
  m.step = -5;
  m.version = 1234567890123;
  m.sequence = 42;
  m.from_incarnation = 2;
  m.to_incarnation = 9;
  m.bytes = 373288;
  m.delivered = true;
  m.available_at = 0.125;
  return m;
}

void require_same_header(const Message& got, const Message& sent) {
  CHECK(got.from == sent.from);
  CHECK(got.tag == sent.tag);
  CHECK(got.op == sent.op);
  CHECK(got.step == sent.step);
  CHECK(got.version == sent.version);
  CHECK(got.sequence == sent.sequence);
  CHECK(got.from_incarnation == sent.from_incarnation);
  CHECK(got.to_incarnation == sent.to_incarnation);
  CHECK(got.bytes == sent.bytes);
  CHECK(got.delivered == sent.delivered);
  CHECK(got.available_at == sent.available_at);
}

}  // namespace

TEST_CASE("a message without floats comes out of its box as it went in") {
  const Message sent = header_only();
  const sim::BoxedMessage box(sim::box_message(Message(sent)));
  CHECK(box->from() == sent.from);
  CHECK(box->tag() == sent.tag);
  CHECK(box->bytes() == sent.bytes);
  const Message got = box->take();
  require_same_header(got, sent);
  CHECK(got.values.empty());
}

TEST_CASE("a message's floats travel in its box, moved rather than copied") {
  Message sent = header_only();
  sent.values = {1.5F, -2.0F, 3.25F};
  const float* floats = sent.values.data();
  const Message expected = sent;
  const sim::BoxedMessage box(sim::box_message(std::move(sent)));
  const Message got = box->take();
  require_same_header(got, expected);
  CHECK(got.values == expected.values);
  CHECK(got.values.data() == floats);
}

TEST_CASE("a box is aligned to its cache lines, and a freed one is filled next") {
  sim::MessageBox* first = sim::box_message(header_only());
  CHECK(reinterpret_cast<std::uintptr_t>(first) % 64 == 0);
  sim::free_box(first);
  Message with_floats = header_only();
  with_floats.values.assign(1000, 0.5F);
  sim::MessageBox* second = sim::box_message(std::move(with_floats));
  CHECK(second == first);
  sim::MessageBox* third = sim::box_message(header_only());  // none free: a new one
  CHECK(third != second);
  CHECK(reinterpret_cast<std::uintptr_t>(third) % 64 == 0);
  CHECK(second->take().values.size() == 1000);
  sim::free_box(second);  // its moved-from floats go with it
  sim::free_box(third);
  sim::free_box(nullptr);
}
