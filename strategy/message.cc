#include "strategy/message.h"

#include <cstring>

#include "common/error.h"

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
    case Tag::kTaskReport:
      return "task-report";
    case Tag::kLearningRate:
      return "learning-rate";
  }
  return "?";
}

float learning_rate_in(const Message& message, const std::string& receiver) {
  if (message.values.size() != 1) {
    throw Error(receiver + ": a learning rate of " + std::to_string(message.values.size()) +
                " floats from " + task_name(message.from));
  }
  return message.values.front();
}

Message make_message(Tag tag, int64_t step, int64_t count, const float* values) {
  Message message;
  message.tag = tag;
  message.step = step;
  message.bytes = static_cast<uint64_t>(count) * sizeof(float);
  if (values != nullptr) message.values.assign(values, values + count);
  return message;
}

Message text_message(Tag tag, const std::string& text) {
  const std::size_t floats = (text.size() + sizeof(float) - 1) / sizeof(float);
  std::string padded = text;
  padded.resize(floats * sizeof(float), ' ');
  Message message;
  message.tag = tag;
  message.version = static_cast<int64_t>(text.size());
  message.values.resize(floats);
  // An empty vector's data() may be null, which memcpy must not get.
  if (!padded.empty()) std::memcpy(message.values.data(), padded.data(), padded.size());
  message.bytes = padded.size();
  return message;
}

std::string message_text(const Message& message) {
  const std::size_t capacity = message.values.size() * sizeof(float);
  if (message.version < 0 || static_cast<uint64_t>(message.version) > capacity) {
    throw Error(std::string("a ") + tag_name(message.tag) + " message claims " +
                std::to_string(message.version) + " bytes of text in a " +
                std::to_string(capacity) + "-byte payload");
  }
  std::string text(static_cast<std::size_t>(message.version), '\0');
  if (!text.empty()) std::memcpy(text.data(), message.values.data(), text.size());
  return text;
}

}  // namespace distlab::strategy
