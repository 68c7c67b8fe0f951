#include "common/progress.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

using distlab::Progress;

namespace {

// What a Progress wrote into a temporary file (not a terminal).
template <typename F>
std::string written_by(F&& use) {
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  use(file);
  std::rewind(file);
  std::string text;
  for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
  std::fclose(file);
  return text;
}

}  // namespace

TEST_CASE("Progress into a file writes plain lines, the last at the end") {
  const std::string text = written_by([](std::FILE* f) {
    Progress p("epoch 1", 40, f);
    for (int i = 1; i <= 40; ++i) p.update(i, "loss 0.5");  // too quick to draw in a file
    p.finish("done");
  });
  CHECK(text.find("epoch 1 40/40 (100%)") != std::string::npos);
  CHECK(text.find("done") != std::string::npos);
  CHECK(text.find('\r') == std::string::npos);  // no terminal redraws
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
}

TEST_CASE("A disabled progress writes nothing") {
  CHECK(written_by([](std::FILE* f) {
          Progress p("quiet", 10, f, false);
          p.update(5);
          p.finish();
        }).empty());
}
