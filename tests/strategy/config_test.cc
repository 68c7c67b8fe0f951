// What a strategy's options mean in the units the strategies work in.
#include "strategy/config.h"

#include <catch2/catch.hpp>

using namespace distlab::strategy;

TEST_CASE("a segment holds segment_bytes of float32 values, and 0 still means whole") {
  CHECK(StrategyConfig{}.segment_floats() == 1 << 18);  // 1 MiB
  CHECK(StrategyConfig{.segment_bytes = 4096}.segment_floats() == 1024);
  CHECK(StrategyConfig{.segment_bytes = 0}.segment_floats() == 0);
  // Whatever the wire: segments count the float32 gradient they cut.
  const StrategyConfig half{.segment_bytes = 8, .gradient_type = GradientType::kFloat16};
  CHECK(half.segment_floats() == 2);
}
