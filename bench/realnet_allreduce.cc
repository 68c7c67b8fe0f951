// Ring all-reduce and parameter-server push/pull over ./realnet's TCP
// runtime on one machine, measured the way ../shared/peers/torch_allreduce.py
// measures PyTorch's Gloo backend, so that bench/realnet_vs_gloo.sh can put
// the two side by side.
//
// All-reduce (default): P processes, workers 0..P-1 of a cluster without
// chief or PS. For each size: a float32 buffer, 2 warm-up all-reduces, then
// the peer's number of timed iterations (its iters_for), each one
//   fill the buffer with ones, barrier (a ring all-reduce of P floats),
//   time strategy::ring_allreduce of the buffer.
// The time of an iteration is the slowest rank's (the peer reduces MAX over
// ranks; here every rank's times are summed into one vector at the end of
// the size, each rank in its own slots, which is exact). Every iteration's
// result is checked: first and last element equal P, and every element
// after the last one. Rank 0 prints one JSON line per size:
//   {"mode":"allreduce","p":P,"size":"1MB","bytes":...,"iters":...,
//    "median_s":...,"min_s":...,"algbw_GBps":...,"busbw_GBps":...,
//    "memcpy_GBps":...}
// with busbw = 2(P-1)/P * bytes / median (NCCL-tests convention) and
// memcpy_GBps rank 0's memcpy of the buffer after the size's all-reduces
// (median of 7), the yardstick bus bandwidth is held against.
//
// --ps: one PS (ordinal P-1) and P-1 workers, the message pattern of
// strategy/parameter_server.cc with its transfers (strategy/ps_transfer.h,
// in segments of --segment-bytes): a worker posts the receives of the
// whole buffer into its parameters, sends a pull request, and pushes a
// gradient of the same size; the PS answers pulls at once (async) and applies each push
// (SGD with lr 2^-10 on ones, so the final values are checked exactly).
// Each worker makes 2 warm-up steps, then after a barrier the peer's
// iteration count of timed steps, then a barrier again (no pull of the next
// size before every push of this one); the PS times from the first barrier
// to the last push applied. The PS prints one JSON line per size:
//   {"mode":"ps","p":P,"workers":P-1,"size":...,"bytes":...,"pushes":...,
//    "elapsed_s":...,"pushes_per_s":...,"GBps":...}
// where GBps counts the bytes through the PS both ways (pulls and pushes).
//
// Without --rank the program is its own launcher: it picks free ports on
// 127.0.0.1, starts P copies of itself (--rank 0..P-1) and waits for them;
// a copy that fails stops the others.
//
// --segment-bytes sets the ring's and the PS's segment size (strategy.segment_bytes of
// the scenarios, whose default it takes). For diagnosis, --breakdown has
// every rank say on stderr where its time in the timed all-reduces went
// (adding, waiting, receiving, the rest).
//
//   build/bench/realnet_allreduce --procs 4
//   build/bench/realnet_allreduce --procs 4 --ps --sizes 1MB,25MB
//   build/bench/realnet_allreduce --procs 2 --rank 0 --ports 40001,40002 & ...
//   TF_CONFIG=... build/bench/realnet_allreduce --tf-config   (any hosts)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/error.h"
#include "common/kept_memory.h"
#include "net/cluster/cluster_config.h"
#include "net/runtime/loopback_ports.h"
#include "net/runtime/tcp_runtime.h"
#include "realnet_bench.h"

using namespace distlab;
using namespace distlab::bench;

namespace {

net::TaskAssignment assignment_of(const Options& o) {
  if (o.tf_config) {
    const char* env = std::getenv("TF_CONFIG");
    if (env == nullptr) throw InputError("--tf-config: TF_CONFIG is not set");
    return net::parse_tf_config(env);
  }
  const strategy::ClusterSpec spec =
      o.ps ? strategy::ClusterSpec{.chiefs = 0, .workers = o.procs - 1, .ps = 1}
           : strategy::ClusterSpec{.chiefs = 0, .workers = o.procs, .ps = 0};
  if (static_cast<int>(o.ports.size()) != o.procs) {
    throw InputError("--ports: " + std::to_string(o.procs) + " ports needed, " +
                     std::to_string(o.ports.size()) + " given");
  }
  if (*o.rank < 0 || *o.rank >= o.procs) {
    throw InputError("--rank: 0 to " + std::to_string(o.procs - 1));
  }
  return {net::loopback_cluster(spec, o.ports), spec.task_at(*o.rank)};
}

int run_process(const Options& o, const std::vector<Size>& sizes) {
  const net::TaskAssignment assignment = assignment_of(o);
  net::TcpOptions tcp;
  tcp.receive_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  tcp.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  tcp.same_host_reads = o.same_host_reads;
  net::TcpRuntime runtime(assignment.self, assignment.cluster, tcp);
  // Every message is a span of the task's timeline; a benchmark keeps none.
  runtime.set_span_limit(0);
  runtime.connect();
  if (o.ps) {
    if (runtime.cluster().ps != 1 || runtime.cluster().replicas() < 1) {
      throw InputError("--ps needs one ps and at least one worker");
    }
    run_ps_benchmark(runtime, sizes, o);
  } else {
    if (runtime.cluster().ps != 0) throw InputError("the all-reduce needs a cluster without ps");
    run_ring_benchmark(runtime, sizes, o);
  }
  runtime.disconnect();
  return 0;
}

int launch(const Options& o, int argc, char** argv) {
  if (o.procs < 2) throw InputError("--procs: at least 2");
  const std::vector<uint16_t> ports = distlab::net::free_loopback_ports(o.procs);
  std::string port_list;
  for (uint16_t port : ports) {
    if (!port_list.empty()) port_list += ",";
    port_list += std::to_string(port);
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<pid_t> pids;
  std::fflush(nullptr);
  for (int r = 0; r < o.procs; ++r) {
    std::vector<std::string> args = {self};
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
    args.insert(args.end(), {"--rank", std::to_string(r), "--ports", port_list});
    const pid_t pid = fork();
    if (pid < 0) throw Error("cannot start rank " + std::to_string(r));
    if (pid == 0) {
      std::vector<char*> cargs;
      for (std::string& a : args) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      execv(cargs[0], cargs.data());
      std::fprintf(stderr, "cannot run %s\n", cargs[0]);
      _exit(127);
    }
    pids.push_back(pid);
  }
  int status = 0;
  std::vector<bool> done(pids.size(), false);
  for (std::size_t left = pids.size(); left > 0; --left) {
    int child_status = 0;
    const pid_t pid = wait(&child_status);
    if (pid < 0) break;
    const auto it = std::find(pids.begin(), pids.end(), pid);
    if (it == pids.end()) continue;
    done[it - pids.begin()] = true;
    if ((!WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0) && status == 0) {
      std::fprintf(stderr, "realnet_allreduce: rank %d failed (%s %d); stopping the others\n",
                   static_cast<int>(it - pids.begin()),
                   WIFEXITED(child_status) ? "exit status" : "signal",
                   WIFEXITED(child_status) ? WEXITSTATUS(child_status) : WTERMSIG(child_status));
      status = kExitFailure;
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (!done[i]) kill(pids[i], SIGTERM);
      }
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Keeping the memory it frees, as a ./realnet task does.
  distlab::restart_with_kept_memory(argv);
  Options o;
  CLI::App app{
      "Ring all-reduce (or PS push/pull) over realnet's TCP runtime, as torch_allreduce.py"};
  app.add_option("--procs", o.procs, "processes (all-reduce ranks; with --ps, 1 ps + P-1 workers)")
      ->check(CLI::Range(2, 64));
  app.add_option("--rank", o.rank, "this process's rank (without it: start all P here)");
  app.add_option("--ports", o.ports, "ports on 127.0.0.1, one per rank")->delimiter(',');
  app.add_flag("--tf-config", o.tf_config, "take the cluster and this task from TF_CONFIG");
  app.add_flag("--ps", o.ps, "parameter-server push/pull throughput instead of all-reduce");
  app.add_option("--sizes", o.sizes, "buffer sizes (1KB, 1MB, 25MB, 100MB)")->delimiter(',');
  app.add_option("--iter-scale", o.iter_scale, "scale the peer's iteration counts")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "warm-up iterations per size")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--timeout", o.timeout_s, "seconds a receive may wait")
      ->check(CLI::PositiveNumber);
  app.add_option("--segment-bytes", o.segment_bytes,
                 "bytes per ring or PS message (the scenarios' strategy.segment_bytes); 0: whole")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--same-host-reads", o.same_host_reads,
               "read payloads of 64 KiB and more from the sending process's memory (one copy) "
               "rather than over loopback TCP");
  app.add_flag("--breakdown", o.breakdown,
               "every rank says on stderr where its time in the timed all-reduces went");
  if (auto status = parse_command_line(app, argc, argv)) return *status;
  return run_reporting_errors([&] {
    std::vector<Size> sizes;
    for (const std::string& s : o.sizes) sizes.push_back(parse_size(s));
    if (!o.rank && !o.tf_config) return launch(o, argc, argv);
    return run_process(o, sizes);
  });
}
