#include "apps/realnet/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/error.h"

namespace distlab::realnet {

namespace {

// The last lines a child wrote that a failure's message shows.
constexpr std::size_t kLastLines = 12;

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

ChildProcess::ChildProcess(std::string name, std::vector<std::string> args,
                           std::vector<std::string> environment)
    : name_(std::move(name)) {
  int out[2], err[2];
  if (pipe(out) != 0) throw Error("cannot make pipes for " + name_);
  if (pipe(err) != 0) {
    close(out[0]);
    close(out[1]);
    throw Error("cannot make pipes for " + name_);
  }
  std::fflush(nullptr);  // nothing buffered here is written twice
  pid_ = fork();
  if (pid_ < 0) throw Error("cannot start " + name_);
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    for (std::string& variable : environment) putenv(variable.data());
    execv(argv[0], argv.data());
    std::fprintf(stderr, "cannot run %s\n", argv[0]);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  out_ = out[0];
  err_ = err[0];
}

ChildProcess::~ChildProcess() {
  close_pipes();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : cause(std::move(other.cause)),
      killed_at(other.killed_at),
      finished(other.finished),
      name_(std::move(other.name_)),
      pid_(std::exchange(other.pid_, -1)),
      out_(std::exchange(other.out_, -1)),
      err_(std::exchange(other.err_, -1)),
      partial_out_(std::move(other.partial_out_)),
      partial_err_(std::move(other.partial_err_)),
      last_lines_(std::move(other.last_lines_)),
      exited_(other.exited_),
      status_(other.status_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    close_pipes();
    cause = std::move(other.cause);
    killed_at = other.killed_at;
    finished = other.finished;
    name_ = std::move(other.name_);
    pid_ = std::exchange(other.pid_, -1);
    out_ = std::exchange(other.out_, -1);
    err_ = std::exchange(other.err_, -1);
    partial_out_ = std::move(other.partial_out_);
    partial_err_ = std::move(other.partial_err_);
    last_lines_ = std::move(other.last_lines_);
    exited_ = other.exited_;
    status_ = other.status_;
  }
  return *this;
}

void ChildProcess::close_pipes() {
  close_fd(out_);
  close_fd(err_);
}

std::vector<int> ChildProcess::open_pipes() const {
  std::vector<int> fds;
  if (out_ >= 0) fds.push_back(out_);
  if (err_ >= 0) fds.push_back(err_);
  return fds;
}

void ChildProcess::read_ready(int fd, std::vector<std::string>& out,
                              std::vector<std::string>& err) {
  const bool is_out = fd == out_;
  if (!is_out && fd != err_) return;
  char buffer[4096];
  const ssize_t n = read(fd, buffer, sizeof buffer);
  if (n <= 0) {
    close_fd(is_out ? out_ : err_);
    return;
  }
  std::string& partial = is_out ? partial_out_ : partial_err_;
  std::vector<std::string>& lines = is_out ? out : err;
  partial.append(buffer, static_cast<std::size_t>(n));
  for (std::size_t end; (end = partial.find('\n')) != std::string::npos;) {
    lines.push_back(partial.substr(0, end));
    partial.erase(0, end + 1);
  }
}

void ChildProcess::drain(std::vector<std::string>& out, std::vector<std::string>& err) {
  // Its end has been collected: every read ends, at the latest at the end
  // of the pipe.
  while (out_ >= 0) read_ready(out_, out, err);
  while (err_ >= 0) read_ready(err_, out, err);
}

void ChildProcess::remember(const std::string& line) {
  last_lines_.push_back(line);
  if (last_lines_.size() > kLastLines) last_lines_.pop_front();
}

bool ChildProcess::poll_exit() {
  if (!exited_ && waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
  return exited_;
}

bool ChildProcess::succeeded() const {
  return exited_ && WIFEXITED(status_) && WEXITSTATUS(status_) == 0;
}

// A process that was killed (a crash, a preemption, kill -9) failed as a
// machine fails, and the platform recovers; an exit status is an error of
// the run itself, which restarting would only repeat.
bool ChildProcess::killed() const {
  return exited_ && WIFSIGNALED(status_);
}

std::string ChildProcess::how_it_ended() const {
  return WIFEXITED(status_) ? "exit status " + std::to_string(WEXITSTATUS(status_))
                            : "signal " + std::to_string(WTERMSIG(status_));
}

void ChildProcess::kill_now() {
  if (!exited_) ::kill(pid_, SIGKILL);
}

void ChildProcess::stop() {
  if (exited_) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, &status_, 0);
  exited_ = true;
}

void ChildProcess::terminate() {
  if (exited_) return;
  ::kill(pid_, SIGTERM);
  waitpid(pid_, &status_, 0);
  exited_ = true;
}

}  // namespace distlab::realnet
