// A bare SimGrid ring all-reduce: the floor that ./simulate's scaling
// benchmark (bench/simulate_scale.sh) is held against. No distlab code: one
// host per worker on a star of split-duplex links, one actor per host, and
// every step a ring reduce-scatter then all-gather of a model buffer of
// --bytes, cut into p chunks the way strategy/ring_allreduce.cc cuts it (the
// first floats % p chunks hold one float more). Messages carry a pointer to
// a static dummy, so only the simulation is measured.
//
// Prints one JSON line: the figures of the run, the simulated time and the
// alpha-beta model's prediction for it (2(p-1) rounds of one latency plus a
// chunk at the link's bandwidth), the wall and CPU time of Engine::run and
// the peak resident memory.
//
//   build/bench/bare_ring --workers 256 --bytes 373504 --steps 5
#include <sys/resource.h>
#include <xbt/log.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

struct Options {
  int workers = 16;
  int64_t bytes = 373504;  // the lab CNN's 93,322 floats, padded
  int steps = 1;
  double latency_us = 50;  // one way, host to host
  double bandwidth_gbps = 10;
  std::string send = "wait";
  double reduce_flops_per_float = 0;
  double add_us = 0;
};

// How a send is handed off; none blocks the sender until the receiver comes.
// SimGrid 3.32 appends every detached comm to one list of the maestro's and
// takes it out with std::list::remove when it ends (CommImpl::detach and
// CommImpl::finish), a scan of every detached comm in flight, about p of
// them here. Detached sends thus cost O(p) each, O(p^3) a step: at 1,024
// workers 1.5x the wall time of kWait and 2x kKept's. kKept sends as
// ./simulate does in a run without faults (sim/sim_runtime.h): not
// detached, so on the sender's own list, and waited for once delivered,
// just before a receive that waits.
enum class SendMode {
  kWait,    // put_async, waited for after the round's receive
  kDetach,  // put_init + detach: nobody waits for the send
  kEager,   // detached, and each mailbox has a permanent receiver (transfers start at once)
  kKept,    // as kEager, but up to kKeptSends kept and waited for once delivered
};

constexpr std::size_t kKeptSends = 16;  // as SimRuntime::kKeptSends

char dummy_payload;  // every message points here

int wrap(int i, int p) {
  return ((i % p) + p) % p;
}

// The ring's fixed plan, shared by every actor.
struct Ring {
  int p = 0;
  int steps = 0;
  SendMode mode = SendMode::kWait;
  double reduce_flops_per_float = 0;
  double add_seconds = 0;
  std::vector<uint64_t> chunk_bytes;  // chunk i of the buffer
  std::vector<sg4::Mailbox*> mailboxes;
};

// kKept's sends not yet waited for: each waited for once no bytes remain
// (a started comm's remaining bytes are read without a simcall).
void reap_delivered(std::vector<sg4::CommPtr>& kept) {
  std::size_t left = 0;
  for (sg4::CommPtr& send : kept) {
    if (send->get_remaining() > 0) {
      kept[left++] = std::move(send);
    } else {
      send->wait();
    }
  }
  kept.resize(left);
}

void ring_member(const Ring& ring, int rank) {
  const int p = ring.p;
  sg4::Mailbox* next = ring.mailboxes[wrap(rank + 1, p)];
  sg4::Mailbox* mine = ring.mailboxes[rank];
  const bool permanent = ring.mode == SendMode::kEager || ring.mode == SendMode::kKept;
  if (permanent) mine->set_receiver(sg4::Actor::self());
  std::vector<sg4::CommPtr> kept;

  auto round = [&](int send_chunk, int recv_chunk, bool reduce) {
    if (ring.mode == SendMode::kWait) {
      sg4::CommPtr sent = next->put_async(&dummy_payload, ring.chunk_bytes[send_chunk]);
      mine->get<char>();
      sent->wait();
    } else if (ring.mode == SendMode::kKept) {
      const uint64_t bytes = ring.chunk_bytes[send_chunk];
      if (bytes > 0 && kept.size() < kKeptSends) {
        kept.push_back(next->put_async(&dummy_payload, bytes));
      } else {
        next->put_init(&dummy_payload, bytes)->detach();
      }
      if (!kept.empty() && !mine->ready()) reap_delivered(kept);
      mine->get<char>();
    } else {
      // A comm is detached before it starts; detach() starts it.
      next->put_init(&dummy_payload, ring.chunk_bytes[send_chunk])->detach();
      mine->get<char>();
    }
    // The addition, timed as ./simulate times it on a host of the task's
    // own: a sleep, between the arrival and the next send.
    if (reduce && ring.add_seconds > 0) sg4::this_actor::sleep_for(ring.add_seconds);
    if (reduce && ring.reduce_flops_per_float > 0) {
      sg4::this_actor::execute(ring.reduce_flops_per_float *
                               static_cast<double>(ring.chunk_bytes[recv_chunk] / 4));
    }
  };
  for (int step = 0; step < ring.steps; ++step) {
    // Reduce-scatter: round r passes on chunk rank - r and takes rank - r - 1.
    for (int r = 0; r < p - 1; ++r) round(wrap(rank - r, p), wrap(rank - r - 1, p), true);
    // All-gather: round r passes on chunk rank + 1 - r and takes rank - r.
    for (int r = 0; r < p - 1; ++r) round(wrap(rank + 1 - r, p), wrap(rank - r, p), false);
  }
  for (const sg4::CommPtr& send : kept) send->wait();  // a member's comms end with it
  if (permanent) mine->set_receiver(nullptr);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// User plus system CPU time of this process so far: on a shared machine the
// wall time also counts the time other processes had the core.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void add_options(CLI::App& app, Options& o) {
  app.add_option("--workers", o.workers, "ring members, one host each")
      ->check(CLI::Range(2, 1 << 20))
      ->capture_default_str();
  app.add_option("--bytes", o.bytes, "model buffer size in bytes (a multiple of 4: floats)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--steps", o.steps, "all-reduces one after another")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--latency-us", o.latency_us, "one-way host-to-host latency, microseconds")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--bandwidth-gbps", o.bandwidth_gbps, "each host's link, Gbit/s")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--send", o.send,
                 "wait: put_async waited for after the receive; detach: put_init + detach; "
                 "eager: detached, with a permanent receiver on each mailbox; kept: as eager, "
                 "but kept until delivered, as ./simulate sends in a run without faults")
      ->check(CLI::IsMember({"wait", "detach", "eager", "kept"}))
      ->capture_default_str();
  app.add_option("--reduce-flops", o.reduce_flops_per_float,
                 "if > 0, each reduce-scatter round also executes this many flops per received "
                 "float on a 1 Gflop/s host (as a simulated reduction would)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--add-us", o.add_us,
                 "if > 0, each reduce-scatter round also sleeps this many microseconds after its "
                 "receive, before its send: the addition as ./simulate times it on a host of the "
                 "task's own (bench/simulate_scale.sh passes the scenario's)")
      ->check(CLI::NonNegativeNumber);
}

// One host per member on a star of split-duplex links.
std::vector<sg4::Host*> build_star(const Options& o) {
  const int p = o.workers;
  const double latency = o.latency_us * 1e-6;
  const double bandwidth = o.bandwidth_gbps * 1e9 / 8;  // bytes/s
  auto* zone = sg4::create_star_zone("ring");
  std::vector<sg4::Host*> hosts;
  hosts.reserve(p);
  for (int i = 0; i < p; ++i) {
    std::string name = "host";
    name += std::to_string(i);
    sg4::Host* host = zone->create_host(name, 1e9);
    std::string link_name = "link";
    link_name += std::to_string(i);
    // Half the latency each way: a message crosses two links (up, then the
    // receiver's down), so host to host it takes the full latency.
    sg4::Link* link =
        zone->create_split_duplex_link(link_name, bandwidth)->set_latency(latency / 2);
    link->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    hosts.push_back(host);
  }
  zone->seal();
  return hosts;
}

// The ring's plan, and an actor per member on its host.
void start_ring(Ring& ring, const Options& o, const std::vector<sg4::Host*>& hosts) {
  const int p = o.workers;
  ring.p = p;
  ring.steps = o.steps;
  ring.mode = o.send == "detach"  ? SendMode::kDetach
              : o.send == "eager" ? SendMode::kEager
              : o.send == "kept"  ? SendMode::kKept
                                  : SendMode::kWait;
  ring.reduce_flops_per_float = o.reduce_flops_per_float;
  ring.add_seconds = o.add_us * 1e-6;
  const int64_t floats = o.bytes / 4;
  for (int i = 0; i < p; ++i) {
    ring.chunk_bytes.push_back(4 * static_cast<uint64_t>(floats / p + (i < floats % p ? 1 : 0)));
    std::string name = "ring";
    name += std::to_string(i);
    ring.mailboxes.push_back(sg4::Mailbox::by_name(name));
  }
  for (int i = 0; i < p; ++i) {
    std::string name = "member";
    name += std::to_string(i);
    sg4::Actor::create(name, hosts[i], [&ring, i] { ring_member(ring, i); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"A bare SimGrid ring all-reduce (reduce-scatter + all-gather) on a star network"};
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);
  if (o.bytes % 4 != 0) {
    std::fprintf(stderr, "error: --bytes %lld is not a multiple of 4 (a buffer of floats)\n",
                 static_cast<long long>(o.bytes));
    return 2;
  }

  const auto setup_start = std::chrono::steady_clock::now();
  // SimGrid reads only the program name: the options above are ours.
  int sg_argc = 1;
  char* sg_argv[] = {argv[0], nullptr};
  sg4::Engine engine(&sg_argc, sg_argv);
  xbt_log_control_set("root.thres:warning");
  // Exact alpha-beta links: no latency or bandwidth factors, no
  // cross-traffic, no TCP window cap (as ./simulate's cm02 model).
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");

  const int p = o.workers;
  const double latency = o.latency_us * 1e-6;
  const double bandwidth = o.bandwidth_gbps * 1e9 / 8;  // bytes/s
  const std::vector<sg4::Host*> hosts = build_star(o);
  Ring ring;
  start_ring(ring, o, hosts);
  const double setup_seconds = seconds_since(setup_start);

  const double cpu_start = cpu_seconds();
  const auto run_start = std::chrono::steady_clock::now();
  engine.run();
  const double wall = seconds_since(run_start);
  const double cpu = cpu_seconds() - cpu_start;
  const double simulated = sg4::Engine::get_clock();

  // Every round costs one latency plus a chunk at the link's bandwidth, and
  // each of the reduce-scatter's its addition.
  const double model_per_step = 2.0 * (p - 1) * latency +
                                2.0 * (p - 1) / p * static_cast<double>(o.bytes) / bandwidth +
                                (p - 1) * ring.add_seconds;
  const uint64_t messages = 2ull * p * (p - 1) * o.steps;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "{\"workers\":%d,\"bytes\":%lld,\"steps\":%d,\"messages\":%llu,\"send\":\"%s\","
      "\"latency_us\":%.17g,\"bandwidth_gbps\":%.17g,\"add_us\":%.17g,"
      "\"simulated_seconds\":%.17g,\"model_seconds\":%.17g,"
      "\"simulated_seconds_per_step\":%.17g,\"model_seconds_per_step\":%.17g,"
      "\"setup_seconds\":%.6f,\"wall_seconds\":%.6f,\"wall_seconds_per_step\":%.6f,"
      "\"cpu_seconds\":%.6f,"
      "\"worker_steps_per_wall_second\":%.6g,\"messages_per_wall_second\":%.6g,"
      "\"peak_rss_kib\":%ld}\n",
      p, static_cast<long long>(o.bytes), o.steps, static_cast<unsigned long long>(messages),
      o.send.c_str(), o.latency_us, o.bandwidth_gbps, o.add_us, simulated, model_per_step * o.steps,
      simulated / o.steps, model_per_step, setup_seconds, wall, wall / o.steps, cpu,
      wall > 0 ? static_cast<double>(p) * o.steps / wall : 0.0,
      wall > 0 ? static_cast<double>(messages) / wall : 0.0, usage.ru_maxrss);
  return 0;
}
