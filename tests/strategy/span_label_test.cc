// Timeline labels are kept once per text: equal texts give one label.
#include "strategy/span_label.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

using distlab::strategy::SpanLabel;

TEST_CASE("a span label reads back its text, one copy per text") {
  const SpanLabel a = std::string("ring from worker:") + "12";
  const SpanLabel b = "ring from worker:12";
  CHECK(a.text() == "ring from worker:12");
  CHECK(a == b);
  CHECK(&a.text() == &b.text());
  CHECK_FALSE(a == SpanLabel("ring from worker:13"));
  CHECK(a == "ring from worker:12");
  CHECK(SpanLabel().empty());
  CHECK(SpanLabel("").empty());
  CHECK(SpanLabel() == SpanLabel(""));
}

TEST_CASE("span labels made on several threads agree") {
  std::vector<const std::string*> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&seen, t] {
      for (int i = 0; i < 1000; ++i) SpanLabel("label " + std::to_string(i));
      seen[t] = &SpanLabel("label 500").text();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string* text : seen) CHECK(text == seen.front());
}
