#include "strategy/message.h"

namespace distlab::strategy {

const char* tag_name(Tag tag) {
  switch (tag) {
    case Tag::kRing:
      return "ring";
    case Tag::kToParameterServer:
      return "to-ps";
    case Tag::kParameters:
      return "parameters";
    case Tag::kRestore:
      return "restore";
    case Tag::kShardState:
      return "shard-state";
  }
  return "?";
}

Message make_message(Tag tag, int64_t step, int64_t count, const float* values) {
  Message message;
  message.tag = tag;
  message.step = step;
  message.bytes = static_cast<uint64_t>(count) * sizeof(float);
  if (values != nullptr) message.values.assign(values, values + count);
  return message;
}

}  // namespace distlab::strategy
