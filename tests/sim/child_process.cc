#include "child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <exception>

namespace distlab::testing {

std::string in_child_process(const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    std::string text;
    int status = 0;
    try {
      text = body();
    } catch (const std::exception& e) {
      text = std::string("child failed: ") + e.what();
      status = 1;
    } catch (...) {
      // Never let the child go back into the test runner.
      text = "child failed with an exception that is not a std::exception";
      status = 1;
    }
    for (std::size_t written = 0; written < text.size();) {
      const ssize_t n = write(fds[1], text.data() + written, text.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    std::fflush(nullptr);
    _exit(status);
  }
  close(fds[1]);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  INFO(text);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return text;
}

}  // namespace distlab::testing
