// The message of the error a piece of code throws, for tests that check
// what the user is told rather than merely that something failed.
#pragma once

#include <string>

namespace distlab::testing {

// Runs `f` and returns the message of the `Error` it throws ("" if none;
// other exceptions pass through).
template <typename Error, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace distlab::testing
