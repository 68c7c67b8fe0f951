// A timeline span's label, kept once per distinct text for the whole
// process: a simulated run keeps 200,000 spans over a handful of labels
// ("ring from worker:12", "forward+backward"), and a string in each would
// be most of the timeline's memory.
#pragma once

#include <string>
#include <string_view>

namespace distlab::strategy {

class SpanLabel {
 public:
  SpanLabel() = default;
  // The text's one copy, made at its first use. Safe from several threads.
  SpanLabel(std::string_view text);  // NOLINT(google-explicit-constructor): a label is its text
  SpanLabel(const std::string& text) : SpanLabel(std::string_view(text)) {}  // NOLINT
  SpanLabel(const char* text) : SpanLabel(std::string_view(text)) {}         // NOLINT

  const std::string& text() const { return text_ != nullptr ? *text_ : no_text(); }
  bool empty() const { return text_ == nullptr; }

  // One copy per text: equal texts, equal pointers. A text on either side
  // becomes a label first.
  friend bool operator==(const SpanLabel& a, const SpanLabel& b) { return a.text_ == b.text_; }

 private:
  static const std::string& no_text();
  const std::string* text_ = nullptr;  // nullptr: no text
};

}  // namespace distlab::strategy
