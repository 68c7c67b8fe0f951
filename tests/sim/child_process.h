// SimGrid allows one simulation engine per process, and a test may want
// many: each runs in a forked child, which hands its findings back as text.
#pragma once

#include <functional>
#include <string>

namespace distlab::testing {

// Runs `body` in a child process and returns the text it returned. If the
// child throws or dies, the Catch2 test fails with what it said.
std::string in_child_process(const std::function<std::string()>& body);

}  // namespace distlab::testing
