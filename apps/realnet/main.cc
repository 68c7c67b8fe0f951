// ./realnet: the strategies over real TCP sockets. One task per process
// (--role/--index with --cluster, or TF_CONFIG), or every task of a
// scenario on this machine (--launch).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "apps/realnet/job_spec.h"
#include "apps/realnet/launcher.h"
#include "apps/realnet/real_scenario.h"
#include "apps/realnet/task_process.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/kept_memory.h"
#include "common/shipped_files.h"
#include "net/wire/handshake.h"
#include "nn/kernels/kernels.h"
#include "run/provenance.h"
#include "sim/machine.h"

namespace {

using namespace distlab;

struct Options {
  std::string launch;
  std::vector<std::string> emit;  // KIND SCENARIO
  std::string image;
  std::string job_name;
  std::string output;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;
  std::string out;
  realnet::TaskProcessOptions task;
  std::optional<uint64_t> seed;
  std::optional<int64_t> checkpoint_every;
  run::Provenance provenance;              // the command line, version and this machine
  std::string crash_task_after_goodbye;    // --launch's fault injection (tests)
  std::string crash_task_before_connect;   // --launch's fault injection (tests)
  std::string crash_task_before_finished;  // --launch's fault injection (tests)
};

// The scenario's path from the project folder, which the image holds
// (the Dockerfile copies it whole); InputError for a file elsewhere.
std::string path_in_image(const std::string& scenario) {
  namespace fs = std::filesystem;
  const fs::path project = fs::weakly_canonical(shipped_files_folder());
  const fs::path file = fs::weakly_canonical(scenario);
  const fs::path relative = file.lexically_relative(project);
  if (relative.empty() || *relative.begin() == "..") {
    throw InputError("--emit: " + scenario + " is outside the project folder " + project.string() +
                     ", which is what the image holds: copy it under scenarios/ and build the "
                     "image again");
  }
  return relative.string();
}

// ./realnet --emit KIND SCENARIO: the job description on stdout.
int emit_command(const Options& o, const std::vector<run::Override>& overrides) {
  realnet::JobSpecOptions spec;
  spec.kind = realnet::job_kind(o.emit.at(0));
  const std::string& path = o.emit.at(1);
  const run::Scenario scenario = realnet::load_real_scenario(path, overrides);
  spec.scenario_in_image = path_in_image(path);
  spec.unsets = o.unsets;
  spec.sets = o.sets;
  if (o.seed) spec.sets.push_back("seed=" + std::to_string(*o.seed));
  if (o.checkpoint_every) {
    spec.sets.push_back("checkpoint.every_steps=" + std::to_string(*o.checkpoint_every));
  }
  spec.name = o.job_name.empty() ? realnet::job_name_from(scenario.name)
                                 : realnet::job_name_from(o.job_name);
  spec.image = o.image;
  spec.project_folder = std::filesystem::weakly_canonical(shipped_files_folder()).string();
  spec.output = o.output;
  spec.secret = o.task.secret;
  if (spec.secret.empty()) {
    if (const char* secret = std::getenv("DISTLAB_SECRET")) spec.secret = secret;
  }
  if (spec.secret.empty()) {
    static const char* kHex = "0123456789abcdef";
    for (const std::byte b : net::make_nonce()) {
      spec.secret += kHex[std::to_integer<int>(b) >> 4];
      spec.secret += kHex[std::to_integer<int>(b) & 15];
    }
  }
  const std::string text = realnet::job_spec(scenario, sim::MachineCatalog::load_default(), spec);
  std::cout << text << std::flush;
  if (!o.task.quiet) {
    std::cerr << "./realnet: wrote the " << realnet::job_kind_name(spec.kind) << " job '"
              << spec.name << "' (" << scenario.cluster.spec.task_count()
              << " tasks); it holds the cluster's secret: keep the file private\n";
  }
  return 0;
}

int realnet_command(Options& o) {
  std::vector<run::Override> overrides;
  for (const std::string& key : o.unsets) overrides.push_back(run::parse_unset(key));
  for (const std::string& text : o.sets) overrides.push_back(run::parse_override(text));
  if (o.seed) overrides.push_back({"seed", std::to_string(*o.seed)});
  if (o.checkpoint_every) {
    overrides.push_back({"checkpoint.every_steps", std::to_string(*o.checkpoint_every)});
  }
  if (!o.emit.empty()) {
    if (!o.launch.empty() || !o.task.scenario.empty()) {
      throw InputError("--emit takes its own scenario: leave out --launch and --scenario");
    }
    return emit_command(o, overrides);
  }
  if (!o.launch.empty()) {
    realnet::LaunchOptions launch{.scenario = o.launch,
                                  .overrides = overrides,
                                  .out = o.out,
                                  .resume = o.task.resume,
                                  .threads = o.task.threads,
                                  .connect_timeout_seconds = o.task.connect_timeout_seconds,
                                  .receive_timeout_seconds = o.task.receive_timeout_seconds,
                                  .quiet = o.task.quiet,
                                  .same_host_reads = o.task.same_host_reads,
                                  .provenance = o.provenance,
                                  .crash_after_goodbye = o.crash_task_after_goodbye,
                                  .crash_before_connect = o.crash_task_before_connect,
                                  .crash_before_finished = o.crash_task_before_finished};
    return realnet::launch(launch);
  }
  if (o.task.scenario.empty()) throw InputError("give --scenario FILE (or --launch FILE)");
  o.task.overrides = overrides;
  o.task.out = o.out;
  o.task.provenance = o.provenance;
  if (o.task.secret.empty()) {
    if (const char* secret = std::getenv("DISTLAB_SECRET")) o.task.secret = secret;
  }
  return realnet::run_task_process(o.task);
}

// What the launcher gives each task it starts; hidden from --help.
void add_launcher_options(CLI::App& app, realnet::TaskProcessOptions& task) {
  app.add_option("--report", task.report, "write this task's report here (the launcher's)")
      ->group("");
  app.add_option("--epoch-ns", task.epoch_ns, "shared clock origin (the launcher's)")->group("");
  app.add_flag("--progress-lines", task.progress_lines, "progress for the launcher")->group("");
  app.add_option("--incarnations", task.incarnations, "every task's restarts (the launcher's)")
      ->delimiter(',')
      ->group("");
  app.add_flag("--rejoin", task.rejoin, "rejoin a run that went on (the launcher's)")->group("");
  app.add_option("--crash-at-step", task.crash_at_steps, "fault injection (the launcher's)")
      ->group("");
  app.add_flag("--crash-before-report", task.crash_before_report,
               "fault injection: die once trained, the report unsent (tests)")
      ->group("");
  app.add_flag("--crash-after-goodbye", task.crash_after_goodbye,
               "fault injection: die once the goodbyes are done, the report unwritten (tests)")
      ->group("");
  app.add_flag("--crash-before-connect", task.crash_before_connect,
               "fault injection: die before listening or dialling any peer (tests)")
      ->group("");
  app.add_flag("--crash-before-finished", task.crash_before_finished,
               "fault injection: die a second after the goodbyes, before saying so (tests)")
      ->group("");
}

void add_options(CLI::App& app, Options& o) {
  app.add_option("--launch", o.launch, "run every task of this scenario as a local process");
  app.add_option("--emit", o.emit,
                 "KIND SCENARIO: write a ready-to-submit job of the scenario's cluster to\n"
                 "stdout, every task running the image's ./realnet with its TF_CONFIG and\n"
                 "the secret: compose (every task on this host, to check before paying),\n"
                 "k8s (a Secret, a Service and a Job per task) or vertex (a Vertex AI\n"
                 "custom job's worker pools); --set and --unset go into every task's command")
      ->expected(2);
  app.add_option("--image", o.image,
                 "with --emit: the image every task runs (needed for k8s and vertex; compose\n"
                 "builds the project's Dockerfile)");
  app.add_option("--job-name", o.job_name,
                 "with --emit: the job's name (default: the scenario's file name)");
  app.add_option("--output", o.output,
                 "with --emit vertex: gs://BUCKET/FOLDER, where the chief writes its run "
                 "directory");
  app.add_option("--scenario", o.task.scenario, "the scenario this task belongs to");
  app.add_option("--role", o.task.role, "chief, worker or ps (with --cluster)");
  app.add_option("--index", o.task.index, "the task's index within its role (with --cluster)");
  app.add_option("--cluster", o.task.cluster_file, "cluster file: every task's host:port");
  app.add_option("--secret", o.task.secret,
                 "shared cluster secret (or DISTLAB_SECRET); needed to listen beyond loopback");
  app.add_option("--set", o.sets,
                 "override a scenario value, KEY=VALUE (repeatable); --set strategy.name=X\n"
                 "also drops or adjusts what X does not take, with a note; --set\n"
                 "training.steps=N replaces the file's epochs (and the other way round)");
  app.add_option("--unset", o.unsets,
                 "remove a scenario key (repeatable); removals come before every --set");
  app.add_option("--seed", o.seed, "seed of weights, shuffling and data (default: the scenario's)");
  app.add_option("--out", o.out,
                 "run directory (default: runs/<scenario>-<time>/): a new or empty folder, or\n"
                 "the one --resume names, which the run then continues in place; with --role,\n"
                 "the chief writes it (and its checkpoints/) once every task has sent it its\n"
                 "report");
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "write a checkpoint every STEPS steps (sets checkpoint.every_steps)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--resume", o.task.resume,
                 "go on from a checkpoint: a run directory (its newest valid one) or a file;\n"
                 "with --role, give it to every task (only the chief reads it)");
  app.add_option("--threads", o.task.threads, "compute threads per task")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--connect-timeout", o.task.connect_timeout_seconds,
                 "seconds to wait for every peer at start-up")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--timeout", o.task.receive_timeout_seconds,
                 "seconds a task waits for any message before it gives up")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--rejoin-wait", o.task.rejoin_wait_seconds,
                 "seconds a task, done training, waits for a peer whose connection closed to "
                 "come back; then a --role chief writes the run directory without that peer's "
                 "report and exits with status 1")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--same-host-reads", o.task.same_host_reads,
               "between tasks on one machine, read payloads of 64 KiB and more straight from "
               "the sending process's memory (one copy, as MPI and NCCL do on one host) rather "
               "than over loopback TCP, where the kernel allows it (the same user, no ptrace "
               "restriction); off by default, as a run on one machine usually stands for one "
               "across machines");
  add_launcher_options(app, o.task);
  app.add_option("--crash-task-after-goodbye", o.crash_task_after_goodbye,
                 "--launch's fault injection: ROLE:INDEX dies once its goodbyes are done, its "
                 "report unwritten (tests)")
      ->group("");
  app.add_option("--crash-task-before-connect", o.crash_task_before_connect,
                 "--launch's fault injection: ROLE:INDEX dies in its first life before it "
                 "listens or dials, as its peers connect (tests)")
      ->group("");
  app.add_option("--crash-task-before-finished", o.crash_task_before_finished,
                 "--launch's fault injection: ROLE:INDEX dies in its first life a second after "
                 "its goodbyes, before it tells the launcher (tests)")
      ->group("");
  app.add_flag("--quiet", o.task.quiet, "no progress display, table or messages");
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything allocates or starts a thread: the tasks, and the
  // launcher whose environment they inherit, keep the memory they free.
  distlab::restart_with_kept_memory(argv);
  Options o;
  CLI::App app(
      "Runs a scenario's strategy over real TCP sockets: one task per process, as on cloud\n"
      "nodes, or every task of the scenario on this machine with --launch.");
  app.name("./realnet");
  app.footer(
      "Examples:\n"
      "  ./realnet --launch scenarios/mnist_cnn_sync.yaml\n"
      "  ./realnet --launch scenarios/ps_4workers.yaml --set training.epochs=1\n"
      "  ./realnet --launch scenarios/mnist_cnn_sync.yaml --checkpoint-every 100 --out runs/a\n"
      "  ./realnet --launch scenarios/mnist_cnn_sync.yaml --resume runs/a --out runs/a --set "
      "training.epochs=2\n"
      "  ./realnet --role worker --index 0 --cluster cluster.yaml --scenario scenarios/X.yaml\n"
      "  TF_CONFIG='{\"cluster\": {...}, \"task\": {\"type\": \"worker\", \"index\": 0}}' \\\n"
      "    ./realnet --scenario scenarios/X.yaml --secret \"$SECRET\"\n"
      "  ./realnet --emit compose scenarios/ps_4workers.yaml > job.yaml\n"
      "  ./realnet --emit k8s scenarios/ps_4workers.yaml --image REGISTRY/distlab > job.yaml\n"
      "Batch: training.batch_size is the global batch of allreduce and mirrored, split\n"
      "among the replicas as Keras splits it, and each parameter-server worker's own.\n"
      "Without --cluster the task reads TF_CONFIG, as TensorFlow jobs on Vertex AI,\n"
      "AI Platform or Kubernetes do. Tasks may start in any order. At the end every\n"
      "task sends its report to the chief, which writes the run directory; the others\n"
      "keep theirs in a temporary folder ($TMPDIR/distlab-*/report.json).\n"
      "--launch tasks share this machine's cores: they get OMP_WAIT_POLICY=passive\n"
      "(threads that sleep when idle) unless the environment sets it, and summary.json\n"
      "records the placement, the core count and the threads per task.\n"
      "Every task keeps the memory it frees for its next buffers: ./realnet starts\n"
      "again at once with GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_\n"
      "threshold=1073741824, unless the environment sets how malloc maps or trims.\n"
      "Exit status: 0 done, 1 the run failed, 2 bad input.\n" +
      distlab::nn::kernels::isa_help());
  add_options(app, o);
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  o.provenance = run::provenance_here(argc, argv);
  return run_reporting_errors([&] {
    distlab::nn::kernels::kernels();  // a wrong DISTLAB_ISA is refused before any work
    return realnet_command(o);
  });
}
