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
//    "median_s":...,"min_s":...,"algbw_GBps":...,"busbw_GBps":...}
// with busbw = 2(P-1)/P * bytes / median (NCCL-tests convention).
//
// --ps: one PS (ordinal P-1) and P-1 workers, the message pattern of
// strategy/parameter_server.cc: a worker sends a pull request, receives the
// whole buffer (copying it into its parameters), and pushes a gradient of
// the same size; the PS answers pulls at once (async) and applies each push
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
// --segment-bytes sets the ring's segment size (strategy.segment_bytes of
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
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/error.h"
#include "net/asio.h"
#include "net/cluster_config.h"
#include "net/launcher.h"
#include "net/message_memory.h"
#include "net/tcp_runtime.h"
#include "strategy/parameter_server.h"
#include "strategy/ring_allreduce.h"

using namespace distlab;
using strategy::FloatRange;
using strategy::Message;
using strategy::Role;
using strategy::Tag;
using strategy::TaskId;

namespace {

struct Size {
  std::string name;
  int64_t bytes = 0;
};

struct Options {
  int procs = 2;
  std::optional<int> rank;
  std::vector<uint16_t> ports;
  bool tf_config = false;
  bool ps = false;
  std::vector<std::string> sizes = {"1KB", "1MB", "25MB", "100MB"};
  double iter_scale = 1.0;
  int warmup = 2;
  double timeout_s = 600;
  bool breakdown = false;
  int64_t segment_bytes = strategy::StrategyConfig{}.segment_bytes;
};

// "1KB", "25MB", "1GB" (binary multiples, as the peer's sizes), or bytes.
Size parse_size(const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw InputError("--sizes: '" + text + "' is not a size (1KB, 1MB, 25MB, 100MB, or bytes)");
  }
  const std::string unit = text.substr(used);
  int shift = 0;
  if (unit == "KB" || unit == "K") {
    shift = 10;
  } else if (unit == "MB" || unit == "M") {
    shift = 20;
  } else if (unit == "GB" || unit == "G") {
    shift = 30;
  } else if (!unit.empty() && unit != "B") {
    throw InputError("--sizes: unknown unit in '" + text + "' (KB, MB, GB)");
  }
  const int64_t bytes = static_cast<int64_t>(value) << shift;
  if (bytes < 4 || bytes % 4 != 0) {
    throw InputError("--sizes: '" + text + "' is not a positive multiple of 4 bytes");
  }
  return {text, bytes};
}

// The peer's iteration counts (torch_allreduce.py, iters_for).
int iters_for(int64_t bytes, double scale) {
  const int base = bytes <= (64 << 10)   ? 200
                   : bytes <= (4 << 20)  ? 40
                   : bytes <= (32 << 20) ? 12
                                         : 6;
  return std::max(3, static_cast<int>(base * scale));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Everybody in `ring` has entered (a ring all-reduce cannot finish before
// every member has sent its first chunk).
void barrier(strategy::Runtime& runtime, const std::vector<TaskId>& ring, int rank, int64_t& step) {
  std::vector<float> token(ring.size(), 1.0f);
  strategy::ring_allreduce(runtime, ring, rank, FloatRange(token), step++);
}

void run_allreduce(realnet::TcpRuntime& runtime, const std::vector<Size>& sizes, const Options& o) {
  const auto& cluster = runtime.cluster();
  const std::vector<TaskId> ring = cluster.tasks();
  const int p = static_cast<int>(ring.size());
  const int rank = cluster.ordinal(runtime.self());
  int64_t step = 0;
  const int64_t segment_floats = o.segment_bytes / 4;
  auto allreduce = [&](FloatRange data, int64_t at_step) {
    strategy::ring_allreduce(runtime, ring, rank, data, at_step, segment_floats);
  };
  for (const Size& size : sizes) {
    const int64_t n = size.bytes / 4;
    std::vector<float> data(n, 1.0f);
    const int iters = iters_for(size.bytes, o.iter_scale);
    for (int i = 0; i < o.warmup; ++i) allreduce(FloatRange(data), step++);
    // Each rank's times in its own slots; summed over ranks, every slot
    // holds one rank's time exactly (x + 0 = x).
    std::vector<float> times(static_cast<std::size_t>(p) * iters, 0.0f);
    // This rank's accounting over the timed all-reduces (--breakdown).
    double in_ops = 0, adding = 0, waiting = 0, receiving = 0;
    for (int it = 0; it < iters; ++it) {
      std::fill(data.begin(), data.end(), 1.0f);
      barrier(runtime, ring, rank, step);
      const strategy::TaskLog& log = runtime.log();
      adding -= log.compute_seconds;
      waiting -= log.waiting_seconds;
      receiving -= log.communication_seconds;
      const auto start = std::chrono::steady_clock::now();
      allreduce(FloatRange(data), step++);
      const double elapsed = seconds_since(start);
      adding += log.compute_seconds;
      waiting += log.waiting_seconds;
      receiving += log.communication_seconds;
      in_ops += elapsed;
      times[static_cast<std::size_t>(rank) * iters + it] = static_cast<float>(elapsed);
      const bool last = it + 1 == iters;
      const auto wrong = last ? std::find_if(data.begin(), data.end(),
                                             [&](float v) { return v != static_cast<float>(p); })
                              : (data.front() != static_cast<float>(p)  ? data.begin()
                                 : data.back() != static_cast<float>(p) ? data.end() - 1
                                                                        : data.end());
      if (wrong != data.end()) {
        throw Error("all-reduce of " + size.name + ": element " +
                    std::to_string(wrong - data.begin()) + " is " + std::to_string(*wrong) +
                    ", not " + std::to_string(p));
      }
    }
    if (o.breakdown) {
      // Where this rank's time in the timed all-reduces went, per iteration:
      // adding, blocked before a message began to arrive, receiving it, and
      // the rest (copying chunks into messages, sending, this loop).
      const double other = in_ops - adding - waiting - receiving;
      std::fprintf(stderr,
                   "rank %d %s: %.3f ms an iteration: add %.3f, wait %.3f, receive+send %.3f, "
                   "other %.3f\n",
                   rank, size.name.c_str(), in_ops / iters * 1e3, adding / iters * 1e3,
                   waiting / iters * 1e3, receiving / iters * 1e3, other / iters * 1e3);
    }
    strategy::ring_allreduce(runtime, ring, rank, FloatRange(times), step++);
    std::vector<double> slowest(iters, 0.0);
    for (int r = 0; r < p; ++r) {
      for (int it = 0; it < iters; ++it) {
        slowest[it] = std::max(slowest[it], static_cast<double>(times[r * iters + it]));
      }
    }
    if (rank == 0) {
      const double med = median(slowest);
      const nlohmann::json row = {{"mode", "allreduce"},
                                  {"p", p},
                                  {"size", size.name},
                                  {"bytes", size.bytes},
                                  {"iters", iters},
                                  {"median_s", med},
                                  {"min_s", *std::min_element(slowest.begin(), slowest.end())},
                                  {"algbw_GBps", size.bytes / med / 1e9},
                                  {"busbw_GBps", 2.0 * (p - 1) / p * size.bytes / med / 1e9}};
      std::printf("%s\n", row.dump().c_str());
      std::fflush(stdout);
    }
  }
}

Message ps_request(strategy::PsRequest what, int64_t step) {
  Message m = strategy::make_message(Tag::kToParameterServer, step, 0, nullptr);
  m.op = static_cast<int32_t>(what);
  return m;
}

void run_ps(realnet::TcpRuntime& runtime, const std::vector<Size>& sizes, const Options& o) {
  using strategy::PsRequest;
  const auto& cluster = runtime.cluster();
  const std::vector<TaskId> all = cluster.tasks();
  const int rank = cluster.ordinal(runtime.self());
  const int workers = cluster.workers;
  const TaskId server{Role::kPs, 0};
  const bool is_ps = runtime.self().role == Role::kPs;
  constexpr float kLearningRate = 1.0f / 1024;
  int64_t barrier_step = 0;
  for (const Size& size : sizes) {
    const int64_t n = size.bytes / 4;
    const int iters = iters_for(size.bytes, o.iter_scale);
    if (is_ps) {
      std::vector<float> values(n, 1.0f);
      int64_t version = 0;
      // Answers pulls and applies pushes until `pushes` more have come.
      auto serve = [&](int64_t pushes) {
        while (pushes > 0) {
          Message m = runtime.recv_any(Tag::kToParameterServer);
          if (m.op == static_cast<int32_t>(PsRequest::kPull)) {
            Message reply = strategy::make_message(Tag::kParameters, m.step, n, values.data());
            reply.version = version;
            runtime.send(m.from, std::move(reply));
          } else if (m.op == static_cast<int32_t>(PsRequest::kPush)) {
            if (m.values.size() != values.size()) {
              throw Error("ps: a push of " + std::to_string(m.bytes) + " bytes");
            }
            const float* g = m.values.data();
            float* v = values.data();
            for (int64_t i = 0; i < n; ++i) v[i] -= kLearningRate * g[i];
            ++version;
            --pushes;
          } else {
            throw Error("ps: unexpected request " + std::to_string(m.op));
          }
        }
      };
      serve(static_cast<int64_t>(o.warmup) * workers);
      barrier(runtime, all, rank, barrier_step);
      const auto start = std::chrono::steady_clock::now();
      serve(static_cast<int64_t>(iters) * workers);
      const double elapsed = seconds_since(start);
      // No worker pulls the next size before every push of this one is in.
      barrier(runtime, all, rank, barrier_step);
      // Every push was a gradient of ones: the values are exact.
      const float expected = 1.0f - kLearningRate * static_cast<float>(version);
      if (values.front() != expected || values.back() != expected) {
        throw Error("ps: after " + std::to_string(version) + " pushes the values are " +
                    std::to_string(values.front()) + ", not " + std::to_string(expected));
      }
      const int64_t pushes = static_cast<int64_t>(iters) * workers;
      const nlohmann::json row = {{"mode", "ps"},
                                  {"p", cluster.task_count()},
                                  {"workers", workers},
                                  {"size", size.name},
                                  {"bytes", size.bytes},
                                  {"pushes", pushes},
                                  {"elapsed_s", elapsed},
                                  {"pushes_per_s", pushes / elapsed},
                                  {"GBps", 2.0 * size.bytes * pushes / elapsed / 1e9}};
      std::printf("%s\n", row.dump().c_str());
      std::fflush(stdout);
    } else {
      std::vector<float> params(n, 0.0f);
      const std::vector<float> gradient(n, 1.0f);
      int64_t step = 0;
      auto train_step = [&] {
        runtime.send(server, ps_request(PsRequest::kPull, step));
        const Message reply = runtime.recv(server, Tag::kParameters);
        if (reply.values.size() != params.size()) {
          throw Error("worker: parameters of " + std::to_string(reply.bytes) + " bytes where " +
                      std::to_string(size.bytes) + " were expected");
        }
        std::copy(reply.values.begin(), reply.values.end(), params.begin());
        Message push = strategy::make_message(Tag::kToParameterServer, step, n, gradient.data());
        push.op = static_cast<int32_t>(PsRequest::kPush);
        push.version = reply.version;
        runtime.send(server, std::move(push));
        ++step;
      };
      for (int i = 0; i < o.warmup; ++i) train_step();
      barrier(runtime, all, rank, barrier_step);
      for (int i = 0; i < iters; ++i) train_step();
      barrier(runtime, all, rank, barrier_step);
    }
  }
}

realnet::TaskAssignment assignment_of(const Options& o) {
  if (o.tf_config) {
    const char* env = std::getenv("TF_CONFIG");
    if (env == nullptr) throw InputError("--tf-config: TF_CONFIG is not set");
    return realnet::parse_tf_config(env);
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
  return {realnet::loopback_cluster(spec, o.ports), spec.task_at(*o.rank)};
}

int run_process(const Options& o, const std::vector<Size>& sizes) {
  const realnet::TaskAssignment assignment = assignment_of(o);
  // As a ./realnet task does.
  realnet::keep_message_memory();
  realnet::TcpOptions tcp;
  tcp.receive_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  tcp.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  realnet::TcpRuntime runtime(assignment.self, assignment.cluster, tcp);
  // Every message is a span of the task's timeline; a benchmark keeps none.
  runtime.set_span_limit(0);
  runtime.connect();
  if (o.ps) {
    if (runtime.cluster().ps != 1 || runtime.cluster().replicas() < 1) {
      throw InputError("--ps needs one ps and at least one worker");
    }
    run_ps(runtime, sizes, o);
  } else {
    if (runtime.cluster().ps != 0) throw InputError("the all-reduce needs a cluster without ps");
    run_allreduce(runtime, sizes, o);
  }
  runtime.disconnect();
  return 0;
}

int launch(const Options& o, int argc, char** argv) {
  if (o.procs < 2) throw InputError("--procs: at least 2");
  const std::vector<uint16_t> ports = distlab::realnet::free_loopback_ports(o.procs);
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
                 "bytes per ring message (the scenarios' strategy.segment_bytes); 0: chunks whole")
      ->check(CLI::NonNegativeNumber);
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
