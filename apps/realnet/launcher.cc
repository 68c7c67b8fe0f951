#include "apps/realnet/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "apps/realnet/real_scenario.h"
#include "checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "common/progress.h"
#include "net/cluster/cluster_config.h"
#include "net/runtime/loopback_ports.h"
#include "nn/model.h"
#include "nn/random.h"
#include "run/checkpoint_plan.h"
#include "run/run_assembly.h"
#include "run/run_files.h"
#include "run/task_report.h"
#include "run/training_inputs.h"
#include "strategy/strategies.h"

namespace distlab::realnet {
namespace {

namespace fs = std::filesystem;

// Each task is a process with its own copy of the model and data.
constexpr int kMaxLaunchedTasks = 64;

struct Child {
  std::string name;
  pid_t pid = -1;
  int out = -1;  // its stdout: progress lines
  int err = -1;  // its stderr: log lines
  std::string partial_out, partial_err;
  std::deque<std::string> last_lines;
  bool exited = false;
  int status = 0;
  std::string cause;  // the fault the launcher injected into it, if any
};

void remember(Child& child, const std::string& line) {
  child.last_lines.push_back(line);
  if (child.last_lines.size() > 12) child.last_lines.pop_front();
}

std::string self_executable() {
  return fs::read_symlink("/proc/self/exe").string();
}

// Whether a child's end is a failure the platform recovers from (the
// process was killed: a crash, a preemption, kill -9) rather than an error
// of the run itself (an exit status), which restarting would only repeat.
bool killed(int status) {
  return WIFSIGNALED(status);
}

std::string how_it_ended(int status) {
  return WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                           : "signal " + std::to_string(WTERMSIG(status));
}

// The checkpoint a rollback goes on from: the newest valid one the run
// wrote, else what the run itself started from.
std::optional<checkpoint::LoadedCheckpoint> newest_checkpoint(
    const std::string& dir, const checkpoint::CheckpointLayout& layout,
    const std::optional<checkpoint::LoadedCheckpoint>& started_from) {
  const std::string folder = run::checkpoint_folder(dir);
  std::error_code ec;
  if (fs::is_directory(folder, ec)) {
    try {
      return checkpoint::choose_checkpoint(folder, layout).checkpoint;
    } catch (const InputError&) {
      // none valid yet
    }
  }
  return started_from;
}

}  // namespace

int launch(const LaunchOptions& o) {
  run::Scenario scenario = load_real_scenario(o.scenario, o.overrides);
  if (!o.quiet) {
    for (const std::string& note : scenario.notes) std::fprintf(stderr, "%s\n", note.c_str());
  }
  const strategy::ClusterSpec spec =
      run::tasks_of(scenario, scenario.strategy.devices > 0 ? scenario.strategy.devices : 1);
  if (spec.task_count() > kMaxLaunchedTasks) {
    throw InputError(o.scenario + ": " + std::to_string(spec.task_count()) +
                     " tasks are too many processes for one machine (at most " +
                     std::to_string(kMaxLaunchedTasks) +
                     "); simulate it with ./simulate, or --set cluster.workers=N");
  }
  const std::string dir =
      o.out.empty() ? run::default_run_directory("runs", scenario.name, std::time(nullptr)) : o.out;
  const fs::path reports = fs::path(dir) / "tasks";
  fs::create_directories(reports);
  const checkpoint::CheckpointLayout layout(
      nn::Model(nn::load_model_spec(scenario.model_path), scenario.seed));
  std::unique_ptr<Progress> progress;  // the chief's steps, once it reports them
  auto say = [&](const std::string& line) {
    if (o.quiet) return;
    if (progress) {
      progress->note(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  };
  // The checkpoint to resume from is chosen here, once, and named to every
  // task: the chief reads it, the others wait for their part.
  std::optional<checkpoint::LoadedCheckpoint> resume;
  if (!o.resume.empty()) {
    checkpoint::ResumeChoice choice = checkpoint::choose_checkpoint(o.resume, layout);
    for (const std::string& skipped : choice.skipped) say("skipped " + skipped);
    say("resuming from " + choice.checkpoint.path + " (step " +
        std::to_string(choice.checkpoint.info.step) + ")");
    resume = std::move(choice.checkpoint);
  }
  const std::optional<checkpoint::LoadedCheckpoint> started_from = resume;
  const net::ClusterAddresses cluster =
      net::loopback_cluster(spec, net::free_loopback_ports(spec.task_count()));
  const auto epoch = std::chrono::steady_clock::now();
  const auto wall_start = epoch;
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch).count();
  };
  const std::vector<strategy::TaskId> tasks = spec.tasks();
  const strategy::StrategyDescription& strategy = strategy::describe(scenario.strategy.kind);
  const int count = static_cast<int>(tasks.size());

  // Faults the launcher injects: at a step (the task kills itself as it
  // begins it), at a time, or at the times of a seeded exponential process.
  std::vector<std::vector<int64_t>> crash_steps(count);
  std::vector<std::pair<double, int>> timed;   // (seconds since start, task)
  std::vector<std::pair<double, int>> random;  // (mean seconds between failures, task)
  for (std::size_t f = 0; f < scenario.faults.size(); ++f) {
    const run::FaultSpec& fault = scenario.faults[f];
    for (int t = 0; t < count; ++t) {
      if (!fault.strikes(tasks[t], scenario.cluster.machine_of(tasks[t].role))) continue;
      if (fault.at_step >= 0) crash_steps[t].push_back(fault.at_step);
      if (fault.at_seconds >= 0) timed.emplace_back(fault.at_seconds, t);
      if (fault.random()) random.emplace_back(fault.mtbf_seconds, t);
    }
  }
  nn::Rng failure_clock(nn::derive_seed(scenario.seed, {0xfa17}));
  auto next_failure = [&](double mean) {
    return seconds_since_start() - mean * std::log1p(-static_cast<double>(failure_clock.uniform()));
  };
  std::vector<double> random_due;
  for (const auto& [mean, t] : random) random_due.push_back(next_failure(mean));

  std::vector<Child> children(count);
  std::vector<uint32_t> incarnations(count, 0);
  auto spawn = [&](int t, bool rejoin) {
    const strategy::TaskId task = tasks[t];
    Child child;
    child.name = strategy::task_name(task);
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) throw Error("cannot make pipes for the tasks");
    const std::string report = (reports / (std::string(strategy::role_name(task.role)) + "-" +
                                           std::to_string(task.index) + ".json"))
                                   .string();
    std::vector<std::string> args = {
        self_executable(),
        "--scenario",
        o.scenario,
        "--report",
        report,
        "--epoch-ns",
        std::to_string(
            std::chrono::duration_cast<std::chrono::nanoseconds>(epoch.time_since_epoch()).count()),
        "--threads",
        std::to_string(o.threads),
        "--connect-timeout",
        std::to_string(o.connect_timeout_seconds),
        "--timeout",
        std::to_string(o.receive_timeout_seconds),
        "--out",
        dir,
        "--progress-lines",
        "--quiet"};
    for (std::string& arg : run::override_arguments(o.overrides)) args.push_back(std::move(arg));
    if (resume && !rejoin) {
      args.push_back("--resume");
      args.push_back(resume->path);
    }
    std::string list;
    for (const uint32_t i : incarnations) list += (list.empty() ? "" : ",") + std::to_string(i);
    args.push_back("--incarnations");
    args.push_back(list);
    if (rejoin) args.push_back("--rejoin");
    for (const int64_t step : crash_steps[t]) {
      args.push_back("--crash-at-step");
      args.push_back(std::to_string(step));
    }
    const std::string tf_config = "TF_CONFIG=" + net::tf_config_json({cluster, task});
    // Tasks that share this machine's cores must not spin: OpenMP threads
    // busy-waiting for work (the default) steal the cores the other tasks
    // compute on, and a run of 6 tasks on 2 cores went 30 times slower.
    // Passive threads sleep between parallel regions. A user's own setting
    // stands.
    const bool passive_threads = std::getenv("OMP_WAIT_POLICY") == nullptr;
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw Error("cannot start " + child.name);
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
      close(out[0]);
      close(out[1]);
      close(err[0]);
      close(err[1]);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      putenv(const_cast<char*>(tf_config.c_str()));
      static char passive[] = "OMP_WAIT_POLICY=passive";
      if (passive_threads) putenv(passive);
      execv(argv[0], argv.data());
      std::fprintf(stderr, "cannot run %s\n", argv[0]);
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    child.pid = pid;
    child.out = out[0];
    child.err = err[0];
    children[t] = std::move(child);
  };
  auto close_pipes = [](Child& c) {
    if (c.out >= 0) close(c.out);
    if (c.err >= 0) close(c.err);
    c.out = c.err = -1;
  };
  // Stops a task for good (a rollback): what it was doing is lost.
  auto stop = [&](Child& c) {
    if (c.exited) return;
    kill(c.pid, SIGKILL);
    waitpid(c.pid, &c.status, 0);
    c.exited = true;
  };
  for (int t = 0; t < count; ++t) spawn(t, false);

  // Merged progress: the chief's steps (replica 0 reports them).
  std::string failed;
  std::vector<run::Failure> failures;
  double recovering_since = -1;  // a failure's time, until training goes on (-1: none)
  int recovering_task = -1;      // a rejoining task, whose reconnection ends the recovery
  int64_t chief_done = resume ? resume->info.step : 0;
  int running = count;
  while (running > 0) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Child*, bool>> owners;  // (child, is stdout)
    for (Child& c : children) {
      if (c.out >= 0) {
        fds.push_back({c.out, POLLIN, 0});
        owners.push_back({&c, true});
      }
      if (c.err >= 0) {
        fds.push_back({c.err, POLLIN, 0});
        owners.push_back({&c, false});
      }
    }
    if (!fds.empty()) {
      poll(fds.data(), fds.size(), 100);
    } else {
      ::usleep(100'000);
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      auto [child, is_out] = owners[i];
      char buffer[4096];
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      int& fd = is_out ? child->out : child->err;
      if (n <= 0) {
        close(fd);
        fd = -1;
        continue;
      }
      std::string& partial = is_out ? child->partial_out : child->partial_err;
      partial.append(buffer, static_cast<std::size_t>(n));
      for (std::size_t end; (end = partial.find('\n')) != std::string::npos;) {
        const std::string line = partial.substr(0, end);
        partial.erase(0, end + 1);
        long long done = 0, total = 0;
        if (is_out && std::sscanf(line.c_str(), "@progress %lld %lld", &done, &total) == 2) {
          if (!progress) progress = std::make_unique<Progress>("training", total, stderr, !o.quiet);
          progress->update(done, "chief's steps, " + std::to_string(spec.task_count()) + " tasks");
          chief_done = done;
          if (recovering_since >= 0 && recovering_task < 0) {
            failures.back().recovery_seconds = seconds_since_start() - recovering_since;
            recovering_since = -1;
          }
        } else if (is_out && line == "@connected") {
          if (recovering_since >= 0 && child - children.data() == recovering_task) {
            failures.back().recovery_seconds = seconds_since_start() - recovering_since;
            recovering_since = -1;
          }
        } else if (is_out && std::sscanf(line.c_str(), "@crash %lld", &done) == 1) {
          // A fault at a step fires once, even if a rollback passes it again.
          auto& pending = crash_steps[child - children.data()];
          std::erase(pending, static_cast<int64_t>(done));
          child->cause = "at_step " + std::to_string(done);
        } else {
          remember(*child, line);
        }
      }
    }

    // Faults due now: the process is killed as a failing machine would.
    for (auto& [at, t] : timed) {
      if (at < 0 || seconds_since_start() < at) continue;
      if (!children[t].exited) {
        children[t].cause = "at_seconds " + fmt::format("{:g}", at);
        kill(children[t].pid, SIGKILL);
      }
      at = -1;  // fired
    }
    for (std::size_t r = 0; r < random.size(); ++r) {
      if (seconds_since_start() < random_due[r]) continue;
      Child& c = children[random[r].second];
      if (!c.exited) {
        c.cause = "mtbf";
        kill(c.pid, SIGKILL);
      }
      random_due[r] = next_failure(random[r].first);
    }

    for (int t = 0; t < count; ++t) {
      Child& c = children[t];
      if (c.exited || waitpid(c.pid, &c.status, WNOHANG) != c.pid) continue;
      c.exited = true;
      --running;
      if (WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) continue;
      // A failure. A peer that lost it may end with an error at nearly the
      // same moment: the cause is a task that was killed, if any.
      // Its peers see a killed task's connections close before the
      // launcher sees it die, and may end first with an error: give the
      // killed one half a second to show.
      int cause = t;
      for (int wait = 0; wait <= 50 && !killed(children[cause].status); ++wait) {
        if (wait > 0) ::usleep(10'000);
        for (int u = 0; u < count; ++u) {
          Child& other = children[u];
          if (!other.exited && waitpid(other.pid, &other.status, WNOHANG) == other.pid) {
            other.exited = true;
            --running;
          }
          if (other.exited && killed(other.status) && !killed(children[cause].status)) cause = u;
        }
      }
      Child& dead = children[cause];
      if (!killed(dead.status)) {
        failed = dead.name;
        break;
      }
      const double at = seconds_since_start();
      if (static_cast<int>(failures.size()) >= scenario.recovery.max_restarts) {
        failed = dead.name;
        say(dead.name + " was killed again (" + how_it_ended(dead.status) + ") after " +
            std::to_string(failures.size()) +
            " restarts; the run gives up (recovery.max_restarts)");
        break;
      }
      run::Failure record{.at = at,
                          .task = dead.name,
                          .cause = dead.cause.empty() ? how_it_ended(dead.status) : dead.cause};
      if (strategy.rejoins && strategy.rejoins(scenario.strategy, tasks[cause].role)) {
        // Restarted alone; the others go on (their connections to it
        // closed, and it dials them again).
        record.recovery = "rejoin";
        record.restored_step = -1;
        record.lost_steps = 1;  // the step it was computing, at most
        say(dead.name + " died (" + record.cause + ") at " + fmt::format("{:.1f}", at) +
            " s; restarting it alone, the others go on");
        close_pipes(dead);
        ++incarnations[cause];
        spawn(cause, true);
        ++running;
      } else {
        record.recovery = "rollback";
        for (Child& other : children) stop(other);
        for (Child& other : children) close_pipes(other);
        resume = newest_checkpoint(dir, layout, started_from);
        record.restored_step = resume ? resume->info.step : 0;
        record.lost_steps = std::max<int64_t>(chief_done - record.restored_step, 0);
        chief_done = record.restored_step;
        say(dead.name + " died (" + record.cause + ") at " + fmt::format("{:.1f}", at) +
            " s; every task goes back to " +
            (resume ? resume->path + " (step " + std::to_string(record.restored_step) + ")"
                    : std::string("step 0 (no checkpoint yet)")));
        for (uint32_t& i : incarnations) ++i;  // every task's new life, known to all
        for (int u = 0; u < count; ++u) spawn(u, false);
        running = count;
      }
      failures.push_back(record);
      // Recovered when the restarted task is connected again (a rejoin),
      // or when the restarted chief takes a step (a rollback).
      recovering_since = at;
      recovering_task = record.recovery == "rejoin" ? cause : -1;
      break;  // the children changed: poll them afresh
    }
    if (!failed.empty()) {
      for (Child& c : children) {
        if (!c.exited) kill(c.pid, SIGTERM);
      }
      for (Child& c : children) {
        if (!c.exited) waitpid(c.pid, &c.status, 0);
        c.exited = true;
      }
      break;
    }
  }
  for (Child& c : children) close_pipes(c);
  if (!failed.empty()) {
    if (progress) progress->finish("stopped");
    for (const Child& c : children) {
      if (c.name != failed) continue;
      std::fprintf(stderr, "error: %s failed (%s); the other tasks were stopped. Its last lines:\n",
                   c.name.c_str(), how_it_ended(c.status).c_str());
      for (const std::string& line : c.last_lines) std::fprintf(stderr, "  %s\n", line.c_str());
    }
    return kExitFailure;
  }
  if (progress) progress->finish();

  std::vector<run::TaskReport> gathered;
  for (const strategy::TaskId task : spec.tasks()) {
    const fs::path path = reports / (std::string(strategy::role_name(task.role)) + "-" +
                                     std::to_string(task.index) + ".json");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    gathered.push_back(run::parse_task_report(text.str(), path.string()));
  }
  run::RunAssembly assembly{
      .backend = "realnet",
      .failures = std::move(failures),
      .model_bytes = static_cast<uint64_t>(layout.parameter_floats()) * sizeof(float),
      .provenance = o.provenance};
  if (started_from) {
    assembly.resumed_from =
        run::ResumedFrom{.path = started_from->path, .step = started_from->info.step};
  }
  run::RunResult result =
      run::assemble_run(scenario, spec, std::move(gathered), std::move(assembly));
  // Every task on this machine, sharing its cores.
  result.placement = {.kind = "one_host",
                      .host_cores = static_cast<int>(std::thread::hardware_concurrency()),
                      .threads_per_task = o.threads};
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  run::write_run_directory(dir, result);
  if (!o.quiet) std::printf("%s", run::format_run_written(dir, result).c_str());
  return 0;
}

}  // namespace distlab::realnet
