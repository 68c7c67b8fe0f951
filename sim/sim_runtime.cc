#include "sim/sim_runtime.h"

#include <algorithm>
#include <simgrid/s4u.hpp>
#include <string>

#include "sim/message_boxes.h"
#include "sim/platform.h"

namespace distlab::sim {

using strategy::Message;
using strategy::Tag;

// Tag by tag, so that the mailboxes of one tag lie together on the heap,
// as they were made: each is a SimGrid object with two queues of its own,
// about a kilobyte and a half, and a ring of a thousand touches two of its
// tag's a message. Made task by task, a ring's lay seven apart, over seven
// times the pages (bench/RESULTS.md: about 2% of the wall time at 1,024
// replicas, within the noise).
MailboxTable::MailboxTable(int tasks) : tasks_(tasks) {
  boxes_.resize(static_cast<std::size_t>(tasks) * kTags, nullptr);
  for (int tag = 1; tag <= static_cast<int>(Tag::kLast); ++tag) {
    for (int t = 0; t < tasks; ++t) make(t, static_cast<Tag>(tag), 0);
  }
}

void MailboxTable::renew(int ordinal, uint32_t incarnation) {
  ++generation_;
  for (int tag = 1; tag <= static_cast<int>(Tag::kLast); ++tag) {
    make(ordinal, static_cast<Tag>(tag), incarnation);
  }
}

void MailboxTable::make(int ordinal, Tag tag, uint32_t incarnation) {
  std::string name = "task";
  name += std::to_string(ordinal);
  if (incarnation > 0) name += "#" + std::to_string(incarnation);
  name += '/';
  name += strategy::tag_name(tag);
  simgrid::s4u::Mailbox*& box = boxes_[index(ordinal, tag)];
  if (box) box->set_receiver(nullptr);
  box = simgrid::s4u::Mailbox::by_name(name);
}

void MailboxTable::set_receiver(int ordinal, simgrid::s4u::ActorPtr actor) const {
  for (int tag = 1; tag <= static_cast<int>(Tag::kLast); ++tag) {
    at(ordinal, static_cast<Tag>(tag))->set_receiver(actor);
  }
}

void MailboxTable::release_receivers() const {
  for (int t = 0; t < tasks_; ++t) set_receiver(t, nullptr);
}

SimRuntime::SimRuntime(strategy::TaskId self, strategy::ClusterSpec cluster,
                       strategy::Fidelity fidelity, const MailboxTable& mailboxes,
                       const ComputeDevice& device, Disk disk, int shared_cores,
                       MessageCpu message_cpu, InputCpu input_cpu, TaskCosts costs,
                       ShareUnevenness share)
    : Runtime(self, cluster, fidelity),
      mailboxes_(mailboxes),
      device_(device),
      ordinal_(cluster.ordinal(self)),
      compute_threads_(shared_cores > 0 ? std::clamp(device.threads, 1, shared_cores) : 0),
      measured_(std::any_of(costs.phases.begin(), costs.phases.end(),
                            [](const PhaseCost& cost) { return cost != PhaseCost{}; })),
      runs_ahead_(device.runs_ahead),
      message_costs_(shared_cores > 0 && message_cpu.costs()),
      charged_threads_(std::max(1, compute_threads_ > 0 ? compute_threads_ : device.threads)),
      message_cpu_(shared_cores > 0 ? message_cpu : MessageCpu{}),
      neighbours_(costs.neighbours),
      phase_costs_(costs.phases),
      disk_(disk),
      input_cpu_(input_cpu),
      spread_random_(costs.seed),
      share_weights_(shared_cores > 0 ? share : ShareUnevenness{}, costs.seed) {}

// A task that keeps its sends ends here without delivering them only when
// its actor was killed (the run failed), and SimGrid cancelled its comms
// with it: they say so, rather than complain they were never waited for.
// (Their payloads are left, as are a detached send's that nobody took.)
SimRuntime::~SimRuntime() {
  for (const simgrid::s4u::CommPtr& send : kept_sends_) {
    send->set_state(simgrid::s4u::Activity::State::CANCELED);
  }
}

double SimRuntime::measured_seconds(strategy::Phase phase, double seconds) {
  // Measured on CPUs only; the model's own costs leave its seconds as they
  // are (seconds x 1 + 0), and are not read at each of a ring's additions.
  if (runs_ahead_ || !measured_) return seconds;
  const auto p = static_cast<std::size_t>(strategy::index_of(phase));
  const PhaseCost& cost = phase_costs_[p];
  double step = seconds > 0 ? seconds * scale_beside(cost, neighbours_)
                            : cost.cpu_seconds_per_work / charged_threads();
  if (cost.spread > 0 && step > 0) {
    // A lognormal of the same mean: exp(spread z - spread^2 / 2).
    std::normal_distribution<double> z;
    step *= std::exp(cost.spread * z(spread_random_) - cost.spread * cost.spread / 2);
  }
  if (phase_begun_[p]) return step;
  phase_begun_[p] = true;
  return step + cost.first_cpu_seconds / charged_threads();
}

void SimRuntime::spend_message_cpu(uint64_t bytes) {
  const double seconds = measured_seconds(
      strategy::Phase::kCommunication,
      message_cpu_.seconds + static_cast<double>(bytes) * message_cpu_.seconds_per_byte);
  cpu_spent_ += seconds;
  run_on_shared_cores(seconds, 1);
}

simgrid::s4u::Host* SimRuntime::shared_host() {
  if (!compute_host_) compute_host_ = simgrid::s4u::Host::by_name(kSharedCpuHost);
  return compute_host_;
}

void SimRuntime::run_on_shared_cores(double seconds, int threads) {
  const double weight = share_weights_.at(simgrid::s4u::Engine::get_clock());
  if (weight == 1) {
    simgrid::s4u::this_actor::thread_execute(shared_host(), seconds * kCoreSpeed, threads);
    return;
  }
  simgrid::s4u::this_actor::exec_init(seconds * kCoreSpeed)
      ->set_host(shared_host())
      ->set_thread_count(threads)
      ->set_priority(weight)
      ->wait();
}

void SimRuntime::spend_compute(double seconds) {
  if (compute_threads_ == 0) {
    simgrid::s4u::this_actor::sleep_for(seconds);
    return;
  }
  // Alone, each of the threads computes at one core's speed for `seconds`;
  // beside other tasks' executions, SimGrid shares the cores among all, in
  // proportion to their weights (core_sharing.h).
  run_on_shared_cores(seconds, compute_threads_);
}

void SimRuntime::settle_compute() {
  if (unslept_ > 0) spend_compute(unslept_);
  unslept_ = 0;
}

double SimRuntime::now() const {
  return simgrid::s4u::Engine::get_clock() + unslept_;
}

void SimRuntime::transmit(strategy::TaskId to, Message&& message) {
  // The simulated network carries `bytes`; the values travel by pointer.
  // A message starts to arrive when it is sent (permanent receivers), once
  // the sender's CPU has handed it over.
  const uint64_t bytes = message.bytes;
  if (message_costs_) spend_message_cpu(bytes);
  message.available_at = now();
  const Tag tag = message.tag;
  MessageBox* payload = box_message(std::move(message));
  simgrid::s4u::Mailbox* box = sent_to_.at(mailboxes_, cluster().ordinal(to), tag);
  // Kept but when nothing would tell its arrival (no bytes: nothing left
  // to flow from the start) or when so many are unreaped already that the
  // sender's own list would grow long (a server answering many workers
  // without ever waiting).
  if (keeps_sends_ && bytes > 0 && kept_sends_.size() < kKeptSends) {
    kept_sends_.push_back(box->put_async(payload, bytes));
    return;
  }
  send_detached(box, payload, bytes);
}

void SimRuntime::send_detached(simgrid::s4u::Mailbox* box, MessageBox* payload, uint64_t bytes) {
  box->put_init(payload, bytes)->detach([](void* unclaimed) {
    free_box(static_cast<MessageBox*>(unclaimed));
  });
}

// A started comm's remaining bytes are read without a simcall; none remain
// once it has ended (its receiver's mailbox has it).
void SimRuntime::reap_delivered_sends() {
  std::size_t kept = 0;
  for (simgrid::s4u::CommPtr& send : kept_sends_) {
    if (send->get_remaining() > 0) {
      kept_sends_[kept++] = std::move(send);
    } else {
      send->wait();
    }
  }
  kept_sends_.resize(kept);
}

void SimRuntime::deliver_kept_sends() {
  for (const simgrid::s4u::CommPtr& send : kept_sends_) send->wait();
  kept_sends_.clear();
}

Message SimRuntime::receive(Tag tag) {
  if (in_turn_) return receive_in_turn(tag);
  simgrid::s4u::Mailbox* box = own_box_.at(mailboxes_, ordinal_, tag);
  // Its first message has not arrived: the task waits until later anyway.
  if (!kept_sends_.empty() && !box->ready()) reap_delivered_sends();
  const BoxedMessage payload(box->get<MessageBox>());
  if (message_costs_) spend_message_cpu(payload->bytes());
  return payload->take();
}

// Everything that has arrived, then the next sender's in turn; or, when
// nothing has, the first to come. (SimGrid's ready() looks at the oldest
// message still arriving first: while one is, those that arrived behind
// it wait for the next receive, and get() takes them in arrival order.)
Message SimRuntime::receive_in_turn(Tag tag) {
  simgrid::s4u::Mailbox* box = mailboxes_.at(ordinal_, tag);
  MessagesInTurn& waiting = (*in_turn_)[tag];
  while (box->ready()) {
    const BoxedMessage payload(box->get<MessageBox>());
    waiting.add(cluster().ordinal(payload->from()), payload->take());
  }
  std::optional<Message> message = waiting.take();
  if (!message) {
    reap_delivered_sends();  // nothing has arrived: the task waits anyway
    const BoxedMessage payload(box->get<MessageBox>());
    waiting.took_from(cluster().ordinal(payload->from()));
    message = payload->take();
  }
  if (message_costs_) spend_message_cpu(message->bytes);
  return std::move(*message);
}

// A CPU's time for `work`; on a GPU, the host's time until it goes on: at
// once for work it does not wait for, and once it waits, the longer of the
// device's time and its own for everything queued since it last waited,
// less what it has already been charged.
double SimRuntime::work_seconds(const strategy::Work& work) {
  if (!runs_ahead_) return roofline_seconds(work, device_);
  const HostAndDevice own = host_and_device_seconds(work, device_);
  const double charged = queued_.host;
  queued_.host += own.host;
  queued_.device += own.device;
  if (!work.host_waits) return own.host;
  const double seconds = std::max(queued_.host, queued_.device) - charged;
  queued_ = {};
  return seconds;
}

void SimRuntime::execute(const strategy::Work& work, const std::function<void()>& work_fn) {
  if (full_fidelity() && work_fn) work_fn();
  // Work shorter than the resolution (a ring round's addition of a few
  // hundred bytes) is added up rather than slept one by one: a sleep costs
  // as much wall time as a message. The task's clock (now()) includes it at
  // once; the actor catches up as soon as the sum reaches the resolution,
  // and not before the end of work that the next continues (the forward
  // pass, followed by the backward one: one sleep for the two, as when they
  // were one computation, so that actors meet in the same order).
  const double seconds = measured_seconds(work.phase, work_seconds(work));
  unslept_ += seconds;
  // Each thread computes for the work's time; on a GPU, the host's thread
  // dispatches (or waits) for it.
  cpu_spent_ += seconds * charged_threads();
  if (work.host_waits && unslept_ >= kComputeResolution) {
    const double due = unslept_;
    unslept_ = 0;
    spend_compute(due);
  }
}

// As ./realnet holds a core: for `seconds` of the clock after the
// computation, one thread computing all along. On a host of its own, a
// sleep; on a shared one, an execution beside the other tasks' that ends
// when the time is up, however much of a core the sharing gave it (a real
// spinning thread that the scheduler sets aside still ends on time).
void SimRuntime::hold(double seconds) {
  settle_compute();
  if (compute_threads_ == 0) {
    cpu_spent_ += seconds;
    simgrid::s4u::this_actor::sleep_for(seconds);
    return;
  }
  const simgrid::s4u::ExecPtr spin = simgrid::s4u::this_actor::exec_init(seconds * kCoreSpeed)
                                         ->set_host(shared_host())
                                         ->set_priority(share_weights_.at(now()))
                                         ->start();
  simgrid::s4u::this_actor::sleep_for(seconds);
  double used = seconds;  // the CPU it got
  if (!spin->test()) {
    used -= spin->get_remaining() / kCoreSpeed;
    spin->cancel();
  }
  cpu_spent_ += used;
}

// The background computation's time is the whole computation's, as one
// computation would take it (its phase's measured cost, a GPU's queue), cut
// among the pieces as the model times each alone.
void SimRuntime::begin_background(const std::vector<strategy::Work>& pieces, double factor,
                                  const BackgroundFn& work_fn) {
  settle_compute();  // what came before (the forward pass) has ended
  if (full_fidelity() && work_fn) work_fn([](std::size_t) {});
  strategy::Work whole = pieces.empty() ? strategy::Work{} : pieces.front();
  whole.items.clear();
  std::vector<double> alone;
  double sum = 0;
  for (const strategy::Work& piece : pieces) {
    whole.items.insert(whole.items.end(), piece.items.begin(), piece.items.end());
    double seconds = roofline_seconds(piece, device_);
    if (runs_ahead_) {
      const HostAndDevice sides = host_and_device_seconds(piece, device_);
      seconds = std::max(sides.host, sides.device);
    }
    alone.push_back(seconds);
    sum += seconds;
  }
  const double total = measured_seconds(whole.phase, work_seconds(whole)) * factor;
  cpu_spent_ += total * charged_threads();
  auto state = std::make_shared<BackgroundPieces>();
  for (const double seconds : alone) {
    state->seconds.push_back(sum > 0 ? total * seconds / sum
                                     : total / static_cast<double>(pieces.size()));
  }
  background_ = state;
  if (compute_threads_ == 0) {
    // The host is the task's own: the pieces end when their time is up.
    double at = simgrid::s4u::Engine::get_clock();
    for (const double seconds : state->seconds) state->ends.push_back(at += seconds);
    return;
  }
  // On the shared cores, beside the other tasks' executions: an actor of its
  // own computes the pieces while the task's actor communicates. It touches
  // only what it shares with the task, so that a task that dies first
  // leaves it harmless (a daemon, ended with the simulation).
  state->mutex = simgrid::s4u::Mutex::create();
  state->done = simgrid::s4u::ConditionVariable::create();
  simgrid::s4u::Host* host = shared_host();
  const int threads = compute_threads_;
  const double weight = share_weights_.at(simgrid::s4u::Engine::get_clock());
  background_actor_ = simgrid::s4u::Actor::create(
      "background of " + strategy::task_name(self()), simgrid::s4u::this_actor::get_host(),
      [state, host, threads, weight] {
        for (const double seconds : state->seconds) {
          simgrid::s4u::this_actor::exec_init(seconds * kCoreSpeed)
              ->set_host(host)
              ->set_thread_count(threads)
              ->set_priority(weight)
              ->wait();
          const std::unique_lock lock(*state->mutex);
          state->ends.push_back(simgrid::s4u::Engine::get_clock());
          state->done->notify_all();
        }
      });
  background_actor_->daemonize();
}

double SimRuntime::await_background(std::size_t piece) {
  settle_compute();  // the task's own computing meanwhile (a ring's additions)
  BackgroundPieces& state = *background_;
  if (compute_threads_ == 0) {
    const double end = state.ends.at(piece);
    const double clock = simgrid::s4u::Engine::get_clock();
    if (end > clock) simgrid::s4u::this_actor::sleep_for(end - clock);
    return end;
  }
  std::unique_lock lock(*state.mutex);
  while (state.ends.size() <= piece) state.done->wait(lock);
  return state.ends[piece];
}

double SimRuntime::exchange_in_closed_form(const std::vector<strategy::TaskId>& ring,
                                           uint64_t chunk_bytes, int rounds) {
  settle_compute();  // its additions first
  return closed_form_->exchange(closed_form_sequence_++, ring, cluster(), chunk_bytes, rounds);
}

void SimRuntime::bus_collective(strategy::DeviceCollective collective, uint64_t bytes) {
  // The towers' compute comes first; the bus is the machine's own, shared
  // with no other task.
  settle_compute();
  const double seconds = bus_collective_seconds(collective, bytes, device_);
  if (seconds > 0) simgrid::s4u::this_actor::sleep_for(seconds);
}

void SimRuntime::await_input(int64_t examples, const strategy::InputPipeline& input) {
  // The step before this one has finished computing (its time slept), and
  // the pipeline's cores are its own: it runs beside the training.
  settle_compute();
  if (!input_) input_.emplace(input, input_cpu_);
  const double at = now();
  const double wait = input_->ready_at(at, examples) - at;
  if (wait > 0) simgrid::s4u::this_actor::sleep_for(wait);
}

double checkpoint_seconds(uint64_t bytes, const Disk& disk) {
  const double transfer =
      disk.write_bandwidth > 0 ? static_cast<double>(bytes) / disk.write_bandwidth : 0;
  return transfer + disk.file_seconds;
}

void SimRuntime::store(uint64_t bytes, const std::function<void()>& io_fn) {
  // The file is written for real (it is what a later run resumes from) but
  // takes the simulated disk's time, not this machine's; it appears once
  // that time has passed, so a task killed while writing leaves none.
  settle_compute();
  const double seconds = checkpoint_seconds(bytes, disk_);
  if (seconds > 0) simgrid::s4u::this_actor::sleep_for(seconds);
  if (full_fidelity() && io_fn) io_fn();
}

}  // namespace distlab::sim
