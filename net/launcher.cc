#include "net/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "common/error.h"
#include "common/progress.h"
#include "net/asio.h"
#include "net/cluster_config.h"
#include "nn/model.h"
#include "run/run_files.h"
#include "run/task_report.h"
#include "run/training_inputs.h"
#include "strategy/checkpoint_store.h"

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
};

void remember(Child& child, const std::string& line) {
  child.last_lines.push_back(line);
  if (child.last_lines.size() > 12) child.last_lines.pop_front();
}

std::string self_executable() {
  return fs::read_symlink("/proc/self/exe").string();
}

}  // namespace

// Ports the kernel says are free now. Another process may take one before
// the task binds it; the task then fails with "cannot listen", and the
// launcher says so.
std::vector<uint16_t> free_loopback_ports(int count) {
  boost::asio::io_context io;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> held;
  std::vector<uint16_t> ports;
  for (int i = 0; i < count; ++i) {
    auto acceptor = std::make_unique<boost::asio::ip::tcp::acceptor>(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    ports.push_back(acceptor->local_endpoint().port());
    held.push_back(std::move(acceptor));  // held until all are chosen: no duplicates
  }
  return ports;
}

int launch(const LaunchOptions& o) {
  const run::Scenario scenario = run::load_scenario(o.scenario, o.overrides);
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
  // The checkpoint to resume from is chosen here, once, and named to every
  // task: the chief reads it, the others wait for their part.
  std::optional<strategy::LoadedCheckpoint> resume;
  if (!o.resume.empty()) {
    const nn::ModelSpec model_spec = nn::load_model_spec(scenario.model_path);
    const strategy::CheckpointLayout layout(
        nn::Model(model_spec, scenario.seed), model_spec.optimizer.kind,
        nn::make_optimizer(model_spec.optimizer, 0)->state_names());
    strategy::ResumeChoice choice = strategy::choose_checkpoint(o.resume, layout);
    if (!o.quiet) {
      for (const std::string& skipped : choice.skipped) {
        std::fprintf(stderr, "skipped %s\n", skipped.c_str());
      }
      std::fprintf(stderr, "resuming from %s (step %lld)\n", choice.checkpoint.path.c_str(),
                   static_cast<long long>(choice.checkpoint.info.step));
    }
    resume = std::move(choice.checkpoint);
  }
  const ClusterAddresses cluster = loopback_cluster(spec, free_loopback_ports(spec.task_count()));
  const auto epoch = std::chrono::steady_clock::now();
  const auto wall_start = epoch;

  std::vector<Child> children;
  for (const strategy::TaskId task : spec.tasks()) {
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
    if (resume) {
      args.push_back("--resume");
      args.push_back(resume->path);
    }
    for (const run::Override& set : o.overrides) {
      args.push_back("--set");
      args.push_back(set.key + "=" + set.value);
    }
    const std::string tf_config = "TF_CONFIG=" + tf_config_json({cluster, task});
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
      execv(argv[0], argv.data());
      std::fprintf(stderr, "cannot run %s\n", argv[0]);
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    child.pid = pid;
    child.out = out[0];
    child.err = err[0];
    children.push_back(std::move(child));
  }

  // Merged progress: the chief's steps (replica 0 reports them).
  std::unique_ptr<Progress> progress;
  std::string failed;
  int running = static_cast<int>(children.size());
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
    if (!fds.empty()) poll(fds.data(), fds.size(), 200);
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
        } else {
          remember(*child, line);
        }
      }
    }
    for (Child& c : children) {
      if (c.exited) continue;
      if (waitpid(c.pid, &c.status, WNOHANG) != c.pid) continue;
      c.exited = true;
      --running;
      if ((!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) && failed.empty()) {
        failed = c.name;
        for (Child& other : children) {
          if (!other.exited) kill(other.pid, SIGTERM);
        }
      }
    }
  }
  for (Child& c : children) {
    if (c.out >= 0) close(c.out);
    if (c.err >= 0) close(c.err);
  }
  if (!failed.empty()) {
    if (progress) progress->finish("stopped");
    for (const Child& c : children) {
      if (c.name != failed) continue;
      std::string why = WIFEXITED(c.status) ? "exit status " + std::to_string(WEXITSTATUS(c.status))
                                            : "signal " + std::to_string(WTERMSIG(c.status));
      std::fprintf(stderr, "error: %s failed (%s); the other tasks were stopped. Its last lines:\n",
                   c.name.c_str(), why.c_str());
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
  run::RunResult result = run::gather_run(std::move(gathered), spec.replicas());
  result.scenario = scenario.name;
  result.description = scenario.description;
  result.strategy = run::strategy_label(scenario);
  result.backend = "realnet";
  result.fidelity = "full";
  result.seed = scenario.seed;
  result.checkpoint = scenario.checkpoint;
  if (resume) {
    result.resumed_from = resume->path;
    // A checkpoint at or beyond the run's end leaves nothing to train.
    result.start_step = resume->info.step;
    result.steps = std::max(result.steps, result.start_step);
  }
  result.model_bytes =
      nn::Model(nn::load_model_spec(scenario.model_path), scenario.seed).parameters().size() *
      sizeof(float);
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  run::write_run_directory(dir, result);
  if (!o.quiet) {
    std::printf("%s", run::format_summary_table(result).c_str());
    std::printf("wrote %s/{summary.json,steps.csv,curve.csv,timeline.json}%s\n", dir.c_str(),
                scenario.checkpoint.enabled() ? " and checkpoints/" : "");
  }
  return 0;
}

}  // namespace distlab::realnet
