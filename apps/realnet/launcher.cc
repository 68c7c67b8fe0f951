#include "apps/realnet/launcher.h"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "apps/realnet/child_process.h"
#include "apps/realnet/real_scenario.h"
#include "checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "common/progress.h"
#include "net/cluster/cluster_config.h"
#include "net/runtime/loopback_ports.h"
#include "nn/model.h"
#include "run/checkpoint_plan.h"
#include "run/recovery.h"
#include "run/run_assembly.h"
#include "run/run_files.h"
#include "run/task_lives.h"
#include "run/task_report.h"
#include "run/training_inputs.h"

namespace distlab::realnet {
namespace {

namespace fs = std::filesystem;
using Checkpoint = std::shared_ptr<const checkpoint::LoadedCheckpoint>;

// Each task is a process with its own copy of the model and data.
constexpr int kMaxLaunchedTasks = 64;
// How often the launcher looks at its children when they are quiet.
constexpr int kPollMilliseconds = 100;

std::string self_executable() {
  return fs::read_symlink("/proc/self/exe").string();
}

// The scenario, refused when it has more tasks than one machine should run.
run::Scenario launchable_scenario(const LaunchOptions& o, strategy::ClusterSpec& spec) {
  run::Scenario scenario = load_real_scenario(o.scenario, o.overrides);
  spec = run::tasks_of(scenario, scenario.strategy.devices > 0 ? scenario.strategy.devices : 1);
  if (spec.task_count() > kMaxLaunchedTasks) {
    throw InputError(o.scenario + ": " + std::to_string(spec.task_count()) +
                     " tasks are too many processes for one machine (at most " +
                     std::to_string(kMaxLaunchedTasks) +
                     "); simulate it with ./simulate, or --set cluster.workers=N");
  }
  return scenario;
}

}  // namespace

// Every task of a scenario as a process on this machine, supervised as a
// cloud platform supervises a job's tasks: it starts them, merges their
// progress, injects the scenario's faults, carries out the recovery
// policy (run/recovery.h) when one dies, and gathers their reports into
// the run directory.
class Launcher {
 public:
  explicit Launcher(const LaunchOptions& options);
  int run();

 private:
  double now() const;
  void say(const std::string& line);
  std::string report_path(int t) const;

  // Starting tasks.
  void choose_resume();
  std::vector<std::string> arguments(int t, bool rejoin) const;
  void spawn(int t, bool rejoin);

  // The loop: output, faults, ends.
  void pump_output();
  void handle_output(int t, const std::vector<std::string>& out,
                     const std::vector<std::string>& err);
  void on_line(int t, const std::string& line);
  void inject_due_faults();
  bool reap_exits();  // false once the run has failed
  int blame(int t);
  bool recover(int cause);
  void lost_after_goodbye(int t);
  void lost_after_servers_ended(int t, const std::string& cause);
  std::vector<bool> ended_well() const;
  void give_up_rejoin();
  void rejoin(int t);
  void roll_back();
  bool everyone_exited() const;

  // The end.
  int report_failure();
  std::vector<std::map<uint32_t, run::LifeRecords>> recorded_lives() const;
  void write_run_directory();

  LaunchOptions o_;
  // The run's clock starts as the tasks do (their --epoch-ns): the times
  // of steps, faults and failures.
  std::chrono::steady_clock::time_point started_;
  strategy::ClusterSpec spec_;
  run::Scenario scenario_;
  run::OutDirectory out_;  // the run directory: new, or the resumed run's, continued
  checkpoint::CheckpointLayout layout_;
  run::RecoveryPolicy policy_;
  std::vector<run::FaultClock> faults_;
  net::ClusterAddresses cluster_;
  std::unique_ptr<Progress> progress_;  // the chief's steps, once it reports them
  Checkpoint started_from_;             // --resume's checkpoint, if any
  Checkpoint resume_;                   // what the tasks start from now
  std::vector<ChildProcess> children_;
  std::vector<uint32_t> incarnations_;
  std::string failed_;  // the task whose error ended the run
  // Tasks that died once nothing of the run needed them but their report.
  std::vector<run::MissingReport> missing_;
  // Every task's life as each failure struck (the policy's failures, in
  // order): which lives' records tell what the failure cost.
  std::vector<std::vector<uint32_t>> lives_at_failure_;
  bool recovering_ = false;   // a failure's recovery not yet measured
  int recovering_task_ = -1;  // a rejoining task, whose reconnection ends it
};

Launcher::Launcher(const LaunchOptions& options)
    : o_(options),
      scenario_(launchable_scenario(o_, spec_)),
      out_(run::claim_out_directory(o_.out.empty()
                                        ? run::unused_directory(run::default_run_directory(
                                              "runs", scenario_.name, std::time(nullptr)))
                                        : o_.out,
                                    o_.resume, "realnet")),
      layout_(nn::Model(nn::load_model_spec(scenario_.model_path), scenario_.seed)),
      policy_(scenario_, spec_),
      faults_(policy_.timed_faults()),
      incarnations_(static_cast<std::size_t>(spec_.task_count()), 0) {
  if (!o_.quiet) {
    for (const std::string& note : scenario_.notes) std::fprintf(stderr, "%s\n", note.c_str());
  }
  fs::create_directories(fs::path(out_.path) / "tasks");
  choose_resume();
  cluster_ = net::loopback_cluster(spec_, net::free_loopback_ports(spec_.task_count()));
}

double Launcher::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void Launcher::say(const std::string& line) {
  if (o_.quiet) return;
  if (progress_) {
    progress_->note(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

std::string Launcher::report_path(int t) const {
  const strategy::TaskId task = spec_.task_at(t);
  return (fs::path(out_.path) / "tasks" /
          (std::string(strategy::role_name(task.role)) + "-" + std::to_string(task.index) +
           ".json"))
      .string();
}

// The checkpoint to resume from is chosen here, once, and named to every
// task: the chief reads it, the others wait for their part.
void Launcher::choose_resume() {
  if (o_.resume.empty()) return;
  checkpoint::ResumeChoice choice = checkpoint::choose_checkpoint(o_.resume, layout_);
  for (const std::string& skipped : choice.skipped) say("skipped " + skipped);
  say("resuming from " + choice.checkpoint.path + " (step " +
      std::to_string(choice.checkpoint.info.step) + ")");
  started_from_ =
      std::make_shared<const checkpoint::LoadedCheckpoint>(std::move(choice.checkpoint));
  resume_ = started_from_;
  policy_.chief_reached(resume_->info.step);
}

std::vector<std::string> Launcher::arguments(int t, bool rejoin) const {
  const auto epoch_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(started_.time_since_epoch()).count();
  std::vector<std::string> args = {self_executable(),
                                   "--scenario",
                                   o_.scenario,
                                   "--report",
                                   report_path(t),
                                   "--epoch-ns",
                                   std::to_string(epoch_ns),
                                   "--threads",
                                   std::to_string(o_.threads),
                                   "--connect-timeout",
                                   std::to_string(o_.connect_timeout_seconds),
                                   "--timeout",
                                   std::to_string(o_.receive_timeout_seconds),
                                   "--out",
                                   out_.path,
                                   "--progress-lines",
                                   "--quiet"};
  // The launcher restarts a lost task or ends the run: its tasks wait for
  // a lost peer as long as for any message.
  args.push_back("--rejoin-wait");
  args.push_back(std::to_string(o_.receive_timeout_seconds));
  if (o_.same_host_reads) args.push_back("--same-host-reads");
  for (std::string& arg : run::override_arguments(o_.overrides)) args.push_back(std::move(arg));
  if (resume_ && !rejoin) {
    args.push_back("--resume");
    args.push_back(resume_->path);
  }
  std::string list;
  for (const uint32_t i : incarnations_) list += (list.empty() ? "" : ",") + std::to_string(i);
  args.push_back("--incarnations");
  args.push_back(list);
  if (rejoin) args.push_back("--rejoin");
  if (incarnations_[static_cast<std::size_t>(t)] == 0 &&
      strategy::task_name(spec_.task_at(t)) == o_.crash_after_goodbye) {
    args.push_back("--crash-after-goodbye");
  }
  if (incarnations_[static_cast<std::size_t>(t)] == 0 &&
      strategy::task_name(spec_.task_at(t)) == o_.crash_before_connect) {
    args.push_back("--crash-before-connect");
  }
  if (incarnations_[static_cast<std::size_t>(t)] == 0 &&
      strategy::task_name(spec_.task_at(t)) == o_.crash_before_finished) {
    args.push_back("--crash-before-finished");
  }
  for (const int64_t step : policy_.step_faults(t)) {
    args.push_back("--crash-at-step");
    args.push_back(std::to_string(step));
  }
  return args;
}

void Launcher::spawn(int t, bool rejoin) {
  const strategy::TaskId task = spec_.task_at(t);
  std::vector<std::string> environment = {"TF_CONFIG=" + net::tf_config_json({cluster_, task})};
  // Tasks that share this machine's cores must not spin: OpenMP threads
  // busy-waiting for work (the default) steal the cores the other tasks
  // compute on, and a run of 6 tasks on 2 cores went 30 times slower.
  // Passive threads sleep between parallel regions. A user's own setting
  // stands.
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) environment.push_back("OMP_WAIT_POLICY=passive");
  ChildProcess child(strategy::task_name(task), arguments(t, rejoin), std::move(environment));
  if (static_cast<std::size_t>(t) < children_.size()) {
    children_[static_cast<std::size_t>(t)] = std::move(child);
  } else {
    children_.push_back(std::move(child));
  }
}

int Launcher::run() {
  started_ = std::chrono::steady_clock::now();
  for (int t = 0; t < spec_.task_count(); ++t) spawn(t, false);
  while (!everyone_exited()) {
    pump_output();
    inject_due_faults();
    if (!reap_exits()) return report_failure();
  }
  if (progress_) progress_->finish();
  write_run_directory();
  for (const run::MissingReport& m : missing_) {
    std::fprintf(stderr, "error: the report of %s is missing: %s\n", m.task.c_str(),
                 m.reason.c_str());
  }
  return missing_.empty() ? 0 : kExitFailure;
}

bool Launcher::everyone_exited() const {
  for (const ChildProcess& child : children_) {
    if (!child.exited()) return false;
  }
  return true;
}

// Waits up to a poll's time for output, and handles every line that came.
void Launcher::pump_output() {
  std::vector<pollfd> fds;
  std::vector<int> owners;
  for (int t = 0; t < static_cast<int>(children_.size()); ++t) {
    for (const int fd : children_[t].open_pipes()) {
      fds.push_back({fd, POLLIN, 0});
      owners.push_back(t);
    }
  }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMilliseconds));
    return;
  }
  poll(fds.data(), fds.size(), kPollMilliseconds);
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    std::vector<std::string> out, err;
    children_[owners[i]].read_ready(fds[i].fd, out, err);
    handle_output(owners[i], out, err);
  }
}

void Launcher::handle_output(int t, const std::vector<std::string>& out,
                             const std::vector<std::string>& err) {
  for (const std::string& line : out) on_line(t, line);
  for (const std::string& line : err) children_[t].remember(line);
}

// A task's stdout: the launcher's protocol lines, or anything else it says.
void Launcher::on_line(int t, const std::string& line) {
  ChildProcess& child = children_[t];
  long long done = 0, total = 0;
  if (std::sscanf(line.c_str(), "@progress %lld %lld", &done, &total) == 2) {
    if (!progress_) progress_ = std::make_unique<Progress>("training", total, stderr, !o_.quiet);
    progress_->update(done, "chief's steps, " + std::to_string(spec_.task_count()) + " tasks");
    policy_.chief_reached(done);
    // A rollback is over when the restarted chief takes a step.
    if (recovering_ && recovering_task_ < 0) {
      policy_.recovered(now() - policy_.failures().back().at);
      recovering_ = false;
    }
  } else if (line == "@connected") {
    // A rejoin is over when the restarted task is connected again.
    if (recovering_ && t == recovering_task_) {
      policy_.recovered(now() - policy_.failures().back().at);
      recovering_ = false;
    }
  } else if (line == "@finished") {
    child.finished = true;
  } else if (std::sscanf(line.c_str(), "@crash %lld", &done) == 1) {
    policy_.take_step_fault(t, done);
    child.cause = "at_step " + std::to_string(done);
  } else {
    child.remember(line);
  }
}

// Faults due now: the process is killed as a failing machine would be. A
// fault that finds its task down (restarting, or done) passes.
void Launcher::inject_due_faults() {
  const double at = now();
  for (run::FaultClock& fault : faults_) {
    while (fault.due() <= at) {
      ChildProcess& child = children_[static_cast<std::size_t>(fault.task())];
      if (!child.exited() && child.killed_at < 0) {
        child.cause = fault.cause();
        child.killed_at = at;
        child.kill_now();
      }
      fault.advance();
    }
  }
}

// Collects the tasks that ended. A failure is recovered from (false if the
// run cannot go on); a task that ended well is done.
bool Launcher::reap_exits() {
  for (int t = 0; t < static_cast<int>(children_.size()); ++t) {
    ChildProcess& child = children_[t];
    if (child.exited() || !child.poll_exit()) continue;
    if (child.succeeded()) {
      // A task ends well once every peer has said goodbye or is gone for
      // good: a task still rejoining has nothing left to rejoin.
      if (recovering_ && recovering_task_ >= 0 && recovering_task_ != t) give_up_rejoin();
      continue;
    }
    return recover(blame(t));
  }
  return true;
}

// The task whose failure this is. A peer that lost it may end with an error
// at nearly the same moment, and its peers see a killed task's connections
// close before the launcher sees it die: the cause is a task that was
// killed, if one shows within half a second.
int Launcher::blame(int t) {
  int cause = t;
  for (int wait = 0; wait <= 50 && !children_[cause].killed(); ++wait) {
    if (wait > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (int u = 0; u < static_cast<int>(children_.size()); ++u) {
      if (children_[u].poll_exit() && children_[u].killed() && !children_[cause].killed()) {
        cause = u;
      }
    }
  }
  return cause;
}

// The policy's decision about a dead task, carried out.
bool Launcher::recover(int t) {
  ChildProcess& dead = children_[t];
  // The lines it wrote just before it ended, "@finished" among them.
  std::vector<std::string> out, err;
  dead.drain(out, err);
  handle_output(t, out, err);
  if (dead.finished) {
    lost_after_goodbye(t);
    return true;
  }
  if (!dead.killed()) {  // an error of the run itself: restarting would repeat it
    failed_ = dead.name();
    return false;
  }
  const std::string cause = dead.cause.empty() ? dead.how_it_ended() : dead.cause;
  const double at = dead.killed_at >= 0 ? dead.killed_at : now();
  const run::Recovery recovery = policy_.on_failure(t, cause, at, std::nullopt);
  if (recovery != run::Recovery::kGiveUp) lives_at_failure_.push_back(incarnations_);
  switch (recovery) {
    case run::Recovery::kGiveUp:
      say(dead.name() + ": " + policy_.give_up_reason(cause));
      failed_ = dead.name();
      return false;
    case run::Recovery::kRejoin:
      if (policy_.nothing_to_rejoin(ended_well())) {
        lost_after_servers_ended(t, cause);
        return true;
      }
      rejoin(t);
      break;
    case run::Recovery::kRollback:
      roll_back();
      break;
  }
  recovering_ = true;
  return true;
}

// A task that dies after its goodbyes took nothing of the run with it but
// its report: restarting it would find its peers gone (or going), so it is
// not restarted, and the run directory names its report missing.
void Launcher::lost_after_goodbye(int t) {
  ChildProcess& dead = children_[t];
  const std::string cause = dead.cause.empty() ? dead.how_it_ended() : dead.cause;
  missing_.push_back({dead.name(), "it died (" + cause +
                                       ") once its training and goodbyes were done, before it "
                                       "wrote its report; it was not restarted"});
  say(dead.name() + " died (" + cause + ") after its goodbyes: nothing to recover but its report");
}

// A task that would rejoin once its parameter servers have ended: restarted,
// it would wait for servers that are not coming (and, failing again and
// again, be restarted for ever), so it is not; the run directory names its
// report missing.
void Launcher::lost_after_servers_ended(int t, const std::string& cause) {
  missing_.push_back({children_[t].name(), "it died (" + cause +
                                               ") after the parameter servers had ended: there was "
                                               "nothing to rejoin, so it was not restarted"});
  say(children_[t].name() + " died (" + cause +
      ") after the parameter servers had ended: nothing to rejoin, so it is not restarted");
}

// Which tasks have ended their run well, per ordinal.
std::vector<bool> Launcher::ended_well() const {
  std::vector<bool> ended;
  for (const ChildProcess& child : children_) ended.push_back(child.exited() && child.succeeded());
  return ended;
}

// The task restarted to rejoin cannot: the run has ended without it.
void Launcher::give_up_rejoin() {
  ChildProcess& child = children_[static_cast<std::size_t>(recovering_task_)];
  child.stop();
  missing_.push_back(
      {child.name(), "it was restarted to rejoin, but the run ended before it was back"});
  say(child.name() + ": the run ended before it was back; it was stopped");
  recovering_ = false;
  recovering_task_ = -1;
}

// Restarted alone; the others go on (their connections to it closed, and
// it dials them again).
void Launcher::rejoin(int t) {
  say(policy_.describe_latest("s"));
  ++incarnations_[static_cast<std::size_t>(t)];
  spawn(t, true);
  recovering_task_ = t;
}

// Every task stopped and started again from the newest valid checkpoint.
void Launcher::roll_back() {
  for (ChildProcess& child : children_) child.stop();
  resume_ = run::rollback_checkpoint(run::checkpoint_folder(out_.path), layout_, started_from_);
  policy_.rolled_back(resume_ ? resume_->info.step : 0);
  say(policy_.describe_latest("s") + (resume_ ? " from " + resume_->path : ""));
  for (uint32_t& i : incarnations_) ++i;  // every task's new life, known to all
  for (int t = 0; t < spec_.task_count(); ++t) spawn(t, false);
  recovering_task_ = -1;
}

int Launcher::report_failure() {
  for (ChildProcess& child : children_) child.terminate();
  if (progress_) progress_->finish("stopped");
  for (const ChildProcess& child : children_) {
    if (child.name() != failed_) continue;
    std::fprintf(stderr, "error: %s failed (%s); the other tasks were stopped. Its last lines:\n",
                 child.name().c_str(), child.how_it_ended().c_str());
    for (const std::string& line : child.last_lines()) std::fprintf(stderr, "  %s\n", line.c_str());
  }
  return kExitFailure;
}

// What every life of every task recorded as it went, in its task folder.
std::vector<std::map<uint32_t, run::LifeRecords>> Launcher::recorded_lives() const {
  std::vector<std::map<uint32_t, run::LifeRecords>> lives;
  for (int t = 0; t < spec_.task_count(); ++t) {
    lives.push_back(run::read_lives(run::task_folder(out_.path, spec_.task_at(t))));
  }
  return lives;
}

// The run directory from the tasks' reports, in ./simulate's schema. Each
// report holds every life of its task (run/task_lives.h); what each failure
// cost is measured from the lives' records.
void Launcher::write_run_directory() {
  std::vector<run::TaskReport> gathered;
  for (int t = 0; t < spec_.task_count(); ++t) {
    const strategy::TaskId task = spec_.task_at(t);
    const bool lost = std::any_of(missing_.begin(), missing_.end(), [&](const auto& m) {
      return m.task == strategy::task_name(task);
    });
    if (lost) {  // its report is its name alone
      run::TaskReport placeholder;
      placeholder.log.task = task;
      gathered.push_back(std::move(placeholder));
      continue;
    }
    std::ifstream in(report_path(t));
    std::stringstream text;
    text << in.rdbuf();
    gathered.push_back(run::parse_task_report(text.str(), report_path(t)));
  }
  run::RunAssembly assembly{
      .backend = "realnet",
      .failures = policy_.failures(),
      .missing_reports = missing_,
      .model_bytes = static_cast<uint64_t>(layout_.parameter_floats()) * sizeof(float),
      .provenance = o_.provenance};
  run::measure_failures(assembly.failures, lives_at_failure_, recorded_lives(), spec_);
  if (started_from_) {
    assembly.resumed_from =
        run::ResumedFrom{.path = started_from_->path, .step = started_from_->info.step};
  }
  run::RunResult result =
      run::assemble_run(scenario_, spec_, std::move(gathered), std::move(assembly));
  // Every task on this machine, sharing its cores.
  result.placement = {.kind = "one_host",
                      .host_cores = static_cast<int>(std::thread::hardware_concurrency()),
                      .threads_per_task = o_.threads};
  result.wall_seconds = now();
  run::write_run_directory(out_, result);
  if (!o_.quiet) std::printf("%s", run::format_run_written(out_, result).c_str());
}

int launch(const LaunchOptions& options) {
  return Launcher(options).run();
}

}  // namespace distlab::realnet
