#include "sim/message_boxes.h"

#include <new>
#include <utility>

namespace distlab::sim {
namespace {

// The free boxes of this thread (SimGrid runs a simulation's actors on one
// thread, but a process may run several simulations), linked through their
// own storage; released when the thread ends.
struct FreeBoxes {
  struct Free {
    Free* next;
  };
  static_assert(sizeof(strategy::Message) >= sizeof(Free));

  Free* head = nullptr;

  ~FreeBoxes() {
    while (head != nullptr) ::operator delete(std::exchange(head, head->next));
  }
};

thread_local FreeBoxes free_boxes;

}  // namespace

strategy::Message* box_message(strategy::Message&& message) {
  FreeBoxes& boxes = free_boxes;
  void* place = boxes.head != nullptr ? std::exchange(boxes.head, boxes.head->next)
                                      : ::operator new(sizeof(strategy::Message));
  return new (place) strategy::Message(std::move(message));
}

void free_box(strategy::Message* box) noexcept {
  if (box == nullptr) return;
  box->~Message();
  FreeBoxes& boxes = free_boxes;
  boxes.head = new (box) FreeBoxes::Free{boxes.head};
}

}  // namespace distlab::sim
