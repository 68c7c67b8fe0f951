#include "sim/message_boxes.h"

#include <new>
#include <utility>

namespace distlab::sim {
namespace {

// A Message's fields, counted: one added to Message belongs in MessageBox
// (its constructor and take()) too, or it would not travel.
static_assert(sizeof(strategy::Message) == 96, "a new Message field: carry it in MessageBox");

// The free boxes of this thread (SimGrid runs a simulation's actors on one
// thread, but a process may run several simulations), linked through their
// own storage; released when the thread ends.
struct FreeBoxes {
  struct Free {
    Free* next;
  };
  static_assert(sizeof(MessageBox) >= sizeof(Free));
  static constexpr std::align_val_t kAlignment{alignof(MessageBox)};

  Free* head = nullptr;

  ~FreeBoxes() {
    while (head != nullptr) ::operator delete(std::exchange(head, head->next), kAlignment);
  }
};

thread_local FreeBoxes free_boxes;

}  // namespace

MessageBox::MessageBox(strategy::Message&& message)
    : from_(message.from),
      tag_(message.tag),
      delivered_(message.delivered),
      has_values_(!message.values.empty()),
      op_(message.op),
      step_(message.step),
      version_(message.version),
      sequence_(message.sequence),
      from_incarnation_(message.from_incarnation),
      to_incarnation_(message.to_incarnation),
      bytes_(message.bytes),
      available_at_(message.available_at) {
  if (has_values_) new (values_) std::vector<float>(std::move(message.values));
}

MessageBox::~MessageBox() {
  if (has_values_) values().~vector();
}

std::vector<float>& MessageBox::values() {
  return *std::launder(reinterpret_cast<std::vector<float>*>(values_));
}

strategy::Message MessageBox::take() {
  strategy::Message message;
  message.from = from_;
  message.tag = tag_;
  message.op = op_;
  message.step = step_;
  message.version = version_;
  message.sequence = sequence_;
  message.from_incarnation = from_incarnation_;
  message.to_incarnation = to_incarnation_;
  if (has_values_) message.values = std::move(values());
  message.bytes = bytes_;
  message.delivered = delivered_;
  message.available_at = available_at_;
  return message;
}

MessageBox* box_message(strategy::Message&& message) {
  FreeBoxes& boxes = free_boxes;
  void* place = boxes.head != nullptr ? std::exchange(boxes.head, boxes.head->next)
                                      : ::operator new(sizeof(MessageBox), FreeBoxes::kAlignment);
  return new (place) MessageBox(std::move(message));
}

void free_box(MessageBox* box) noexcept {
  if (box == nullptr) return;
  box->~MessageBox();
  FreeBoxes& boxes = free_boxes;
  boxes.head = new (box) FreeBoxes::Free{boxes.head};
}

}  // namespace distlab::sim
