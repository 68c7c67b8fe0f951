#include "strategy/span_label.h"

#include <functional>
#include <mutex>
#include <unordered_set>

namespace distlab::strategy {
namespace {

// Looks a label up by its view, without making a string first.
struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const {
    return std::hash<std::string_view>{}(text);
  }
};

}  // namespace

// A function's own: a label made while statics are being initialised
// (anywhere) still reads as empty.
const std::string& SpanLabel::no_text() {
  static const std::string empty;
  return empty;
}

SpanLabel::SpanLabel(std::string_view text) {
  if (text.empty()) return;
  static std::mutex mutex;
  // Never shrinks: the labels a process makes are few. Set elements stay
  // where they are as the set grows, so each label's pointer stays valid.
  static std::unordered_set<std::string, TextHash, std::equal_to<>> texts;
  const std::lock_guard lock(mutex);
  auto found = texts.find(text);
  if (found == texts.end()) found = texts.emplace(text).first;
  text_ = &*found;
}

}  // namespace distlab::strategy
