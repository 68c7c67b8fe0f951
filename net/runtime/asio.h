// Boost.Asio, included once for the project. Boost 1.74's awaitable.hpp
// uses std::exchange without including <utility>, which g++ 12 in C++20
// mode does not forgive (TOOLCHAIN.md): <utility> must come first.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on
