// One task of a `./realnet --launch` run as a child process of the
// launcher: started with fork and exec, its stdout and stderr read as
// lines, its last lines kept for a failure's message, and its end told
// apart as a kill (a failure the platform recovers from) or an exit.
#pragma once

#include <sys/types.h>

#include <deque>
#include <string>
#include <vector>

namespace distlab::realnet {

class ChildProcess {
 public:
  // Starts `args` (args[0]: the program) with `environment` added to this
  // process's ("NAME=value" each). Throws Error if it cannot.
  ChildProcess(std::string name, std::vector<std::string> args,
               std::vector<std::string> environment);
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& name() const { return name_; }
  pid_t pid() const { return pid_; }

  // Its output pipes still open (for poll), and what it wrote on one that
  // poll() found ready: the complete lines, stdout's in `out`, stderr's in
  // `err`. A pipe that reaches its end is closed.
  std::vector<int> open_pipes() const;
  void read_ready(int fd, std::vector<std::string>& out, std::vector<std::string>& err);
  // Once it has ended: what is left on its pipes, read to their end.
  void drain(std::vector<std::string>& out, std::vector<std::string>& err);

  // Keeps a line (one that is not a progress line) for a failure's message.
  void remember(const std::string& line);
  const std::deque<std::string>& last_lines() const { return last_lines_; }

  // Whether it has ended; collects its status without blocking.
  bool poll_exit();
  bool exited() const { return exited_; }
  // Whether it ended well (exit status 0), was killed (a crash, a kill -9,
  // a fault the launcher injected), and how, in words.
  bool succeeded() const;
  bool killed() const;
  std::string how_it_ended() const;

  // Kills it as a failing machine would (SIGKILL), without waiting.
  void kill_now();
  // Stops it for good and waits for it: its work is lost (a rollback).
  void stop();
  // Asks it to end (SIGTERM) and waits for it: the run is over.
  void terminate();

  // The fault the launcher injected into it, if any ("mtbf", "at_step 12").
  std::string cause;
  // When the launcher killed it, on the run's clock (-1: it did not).
  double killed_at = -1;
  // It said "@finished": trained, its goodbyes done, its report alone to
  // come. Nothing of the run waits for it any more.
  bool finished = false;

 private:
  void close_pipes();

  std::string name_;
  pid_t pid_ = -1;
  int out_ = -1;  // its stdout: progress lines
  int err_ = -1;  // its stderr: log lines
  std::string partial_out_, partial_err_;
  std::deque<std::string> last_lines_;
  bool exited_ = false;
  int status_ = 0;
};

}  // namespace distlab::realnet
