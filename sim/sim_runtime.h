// The Runtime on SimGrid: each task is an actor on its own simulated host;
// messages go through one mailbox per (receiving task, tag). Every mailbox
// has its task as permanent receiver, so a message starts to flow over the
// simulated links the moment it is sent, whether or not the receiver has
// asked for it yet: the buffered semantics of runtime.h, as TCP behaves.
// Compute advances the actor's clock by the roofline time of the work on
// the host's device, after running the work in full fidelity (at a
// resolution of a microsecond: see kComputeResolution).
//
// A send is kept by its sender until delivered, or detached: the same
// times, at different costs. SimGrid 3.32 puts every detached comm on one
// list of its maestro's and takes each out with a scan of that list when it
// ends (CommImpl::finish): at a thousand tasks, a thousand entries scanned
// per message, half the wall time of a ring all-reduce. A comm that is not
// detached is on its sender's own short list instead, and leaves it when
// the sender waits for it. So a task that keeps its sends
// (keep_sends_until_delivered) waits for those already delivered just
// before it would block in a receive anyway: waiting for a finished comm
// returns at once, so no clock moves and no event changes its order.
#pragma once

#include <simgrid/forward.h>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "sim/closed_form_collectives.h"
#include "sim/compute_model.h"
#include "sim/core_sharing.h"
#include "sim/input_pipeline_model.h"
#include "sim/machine.h"
#include "sim/measured_costs.h"
#include "sim/messages_in_turn.h"
#include "strategy/runtime.h"

namespace distlab::sim {

class MessageBox;  // message_boxes.h

// The mailboxes of a simulated cluster, indexed by task ordinal and tag.
class MailboxTable {
 public:
  explicit MailboxTable(int tasks);
  simgrid::s4u::Mailbox* at(int ordinal, strategy::Tag tag) const {
    return boxes_[index(ordinal, tag)];
  }
  int tasks() const { return tasks_; }
  // Where at() finds a task's mailbox for a tag.
  static std::size_t index(int ordinal, strategy::Tag tag) {
    return static_cast<std::size_t>(ordinal) * kTags + static_cast<std::size_t>(tag);
  }

  // Makes `actor` the permanent receiver of task `ordinal`'s mailboxes, so
  // that messages to it flow as soon as they are sent; release_receivers()
  // undoes it for all tasks once the simulation has ended.
  void set_receiver(int ordinal, simgrid::s4u::ActorPtr actor) const;
  // Fresh mailboxes for a restarted task's incarnation: messages left in
  // the old ones belonged to a life that is over.
  void renew(int ordinal, uint32_t incarnation);
  void release_receivers() const;
  // Counts the renewals: a mailbox looked up at another count may have
  // been replaced since.
  uint32_t generation() const { return generation_; }

 private:
  static constexpr std::size_t kTags = static_cast<std::size_t>(strategy::Tag::kLast) + 1;
  // The mailbox of `ordinal`'s incarnation for `tag`, in place of any
  // earlier one (which loses its receiver).
  void make(int ordinal, strategy::Tag tag, uint32_t incarnation);
  int tasks_;
  uint32_t generation_ = 0;
  std::vector<simgrid::s4u::Mailbox*> boxes_;
};

// A task's last mailbox of one kind (the one it sends to, its own it
// receives at), kept beside its other state: a ring member sends to one
// peer and receives at one box, and the table's entries for them are two
// cache lines of their own, out of the caches whenever the task runs again
// among a thousand.
class CachedMailbox {
 public:
  simgrid::s4u::Mailbox* at(const MailboxTable& table, int ordinal, strategy::Tag tag) {
    const auto index = static_cast<int>(MailboxTable::index(ordinal, tag));
    if (index != index_ || generation_ != table.generation()) {
      box_ = table.at(ordinal, tag);
      index_ = index;
      generation_ = table.generation();
    }
    return box_;
  }

 private:
  simgrid::s4u::Mailbox* box_ = nullptr;
  int index_ = -1;  // MailboxTable::index
  uint32_t generation_ = 0;
};

// Compute shorter than this is accumulated before the actor sleeps it: a
// task's messages may leave up to this much early, never more.
inline constexpr double kComputeResolution = 1e-6;

// What a message costs the CPU on one side, sender or receiver, when the
// tasks share a machine: a fixed cost and a cost per byte (one_host).
struct MessageCpu {
  double seconds = 0;
  double seconds_per_byte = 0;

  bool costs() const { return seconds > 0 || seconds_per_byte > 0; }
};

// Seconds to write one checkpoint file of `bytes` on `disk`.
double checkpoint_seconds(uint64_t bytes, const Disk& disk);

class SimRuntime : public strategy::Runtime {
 public:
  // `shared_cores`: 0 when the task has its host to itself (its compute is
  // a sleep of the model's time), else the cores of the host it shares
  // with other tasks (its compute is an execution on min(device.threads,
  // shared_cores) of them, which SimGrid slows down when they are busy).
  // `device` outlives the runtime, as `mailboxes` does: one for every task
  // on a device alike (shared_devices), so that a thousand tasks read one
  // in the caches, not a thousand each out of them.
  SimRuntime(strategy::TaskId self, strategy::ClusterSpec cluster, strategy::Fidelity fidelity,
             const MailboxTable& mailboxes, const ComputeDevice& device, Disk disk,
             int shared_cores = 0, MessageCpu message_cpu = {}, InputCpu input_cpu = {},
             TaskCosts costs = {}, ShareUnevenness share = {});
  ~SimRuntime() override;

  double now() const override;
  // network.collectives: analytic, with the table the ring's members meet
  // at; none (every message modelled) by default.
  void set_closed_form(ClosedFormCollectives* table) { closed_form_ = table; }
  bool collectives_in_closed_form() const override { return closed_form_ != nullptr; }
  // On a host whose threads outnumber its cores: the messages that arrived
  // while the task was busy are taken in turn by sender (messages_in_turn.h),
  // not in the order they came.
  void take_messages_in_turn() {
    in_turn_ = std::make_unique<std::map<strategy::Tag, MessagesInTurn>>();
  }
  // The compute charged (its seconds alone times the threads it runs on)
  // and the messages' CPU on a shared host.
  double cpu_now() const override { return cpu_spent_; }
  // Keeps up to kKeptSends sends with bytes until they are delivered,
  // rather than detaching them (see the top of this file). The caller
  // promises that the task's actor is not killed before it has called
  // deliver_kept_sends(), and that every task's mailboxes have their
  // receiver until then: a killed actor's comms end with it, where a
  // detached message still arrives (as a killed process's socket still
  // sends what it was handed), and a kept send is taken as delivered once
  // its bytes have flowed, which they do only towards a receiver.
  void keep_sends_until_delivered() { keeps_sends_ = true; }
  // Blocks until every kept send is delivered: the last thing a task that
  // keeps its sends does, since the comms of an actor that ends are
  // cancelled.
  void deliver_kept_sends();
  static constexpr std::size_t kKeptSends = 16;

 protected:
  void transmit(strategy::TaskId to, strategy::Message&& message) override;
  strategy::Message receive(strategy::Tag tag) override;
  void execute(const strategy::Work& work, const std::function<void()>& work_fn) override;
  double work_seconds(const strategy::Work& work);
  void store(uint64_t bytes, const std::function<void()>& io_fn) override;
  void hold(double seconds) override;
  void settle() override { settle_compute(); }
  void bus_collective(strategy::DeviceCollective collective, uint64_t bytes) override;
  void await_input(int64_t examples, const strategy::InputPipeline& input) override;
  void begin_background(const std::vector<strategy::Work>& pieces, double factor,
                        const BackgroundFn& work_fn) override;
  double await_background(std::size_t piece) override;
  double exchange_in_closed_form(const std::vector<strategy::TaskId>& ring, uint64_t chunk_bytes,
                                 int rounds) override;

 private:
  // A background computation's progress: its pieces' ends as they come
  // (known at once on a host of the task's own; told by the actor that
  // computes them on a shared one).
  struct BackgroundPieces {
    std::vector<double> seconds;  // each piece's, alone
    std::vector<double> ends;
    simgrid::s4u::MutexPtr mutex;
    simgrid::s4u::ConditionVariablePtr done;
  };
  // Spends `seconds` of compute (as timed alone) on the task's host.
  void spend_compute(double seconds);
  // Sleeps the compute accumulated below the resolution: before what must
  // start after it (the bus, the disk, the input pipeline's hand-over).
  void settle_compute();
  // Spends a message's CPU on the shared host, on one core (message_costs_
  // only). Out of line, as is a detached send, so that neither widens the
  // stack frame of transmit() or receive(), which every simulated message
  // passes through: a ring member among a thousand finds each line of its
  // stack out of the caches when it resumes.
  [[gnu::noinline]] void spend_message_cpu(uint64_t bytes);
  // Sends `payload` detached: freed by SimGrid if nobody takes it.
  [[gnu::noinline]] static void send_detached(simgrid::s4u::Mailbox* box, MessageBox* payload,
                                              uint64_t bytes);
  // Waits for the kept sends whose bytes have all flowed, each at once:
  // before a receive that blocks until a later time anyway.
  void reap_delivered_sends();
  // receive() on a host whose threads outnumber its cores (in_turn_); a
  // function of its own, so that its optional does not widen receive()'s
  // stack frame, which every simulated message passes through.
  [[gnu::noinline]] strategy::Message receive_in_turn(strategy::Tag tag);
  // Runs `seconds` of one core's work on each of `threads` cores of the
  // shared host, beside the other tasks' executions, at the task's weight
  // in the sharing now.
  void run_on_shared_cores(double seconds, int threads);
  // The host whose cores the tasks share, found at its first use.
  simgrid::s4u::Host* shared_host();
  // The model's `seconds` for work of `phase` on a CPU, as a real run
  // measured that phase's work to cost (--calibrate-from), the first work
  // of the phase in this life of the task with its own cost.
  double measured_seconds(strategy::Phase phase, double seconds);
  // The threads a computation's time is charged on, in CPU time.
  int charged_threads() const { return charged_threads_; }

  // What every message and computation reads, first and together: a
  // simulation of a thousand tasks switches among them millions of times,
  // and each switch finds the task's state out of the caches, a line at a
  // time. A ring member resumes three times a message (its send handed
  // off, its receive done, its addition slept), and each time reads this
  // first line (the class is aligned to one); a send and a receive read
  // the second too.
  alignas(64) const MailboxTable& mailboxes_;
  const ComputeDevice& device_;
  int ordinal_;
  int compute_threads_ = 0;  // on a shared host; 0: the host is the task's own
  bool keeps_sends_ = false;
  // Whether phase_costs_ differs from the model's own (a calibrated run):
  // if not, measured_seconds() returns the model's seconds untouched.
  bool measured_ = false;
  bool runs_ahead_ = false;     // device_.runs_ahead
  bool message_costs_ = false;  // message_cpu_.costs()
  int charged_threads_ = 1;     // charged_threads()
  double unslept_ = 0;          // compute time not yet slept (below the resolution)
  double cpu_spent_ = 0;        // cpu_now()
  // take_messages_in_turn's messages, by tag; none in arrival order.
  alignas(64) std::unique_ptr<std::map<strategy::Tag, MessagesInTurn>> in_turn_;
  CachedMailbox sent_to_;
  CachedMailbox own_box_;
  std::vector<simgrid::s4u::CommPtr> kept_sends_;  // not yet waited for
  MessageCpu message_cpu_;                         // what a message costs the shared host
  // A GPU's work queued since the host last waited for the device
  // (Work::host_waits): the host's dispatching and the device's running.
  HostAndDevice queued_;
  int neighbours_ = 0;  // the other replicas on its machine (TaskCosts)
  std::array<bool, strategy::kPhases> phase_begun_{};  // a phase's first work is done
  PhaseCosts phase_costs_;  // the model's costs, as a real run measured them
  Disk disk_;
  InputCpu input_cpu_;
  std::optional<InputPipelineModel> input_;     // made at the first batch
  std::mt19937_64 spread_random_;               // draws the spread of each step's work
  ShareWeights share_weights_;                  // the task's uneven share of the shared cores
  simgrid::s4u::Host* compute_host_ = nullptr;  // the shared host, found at the first compute
  std::shared_ptr<BackgroundPieces> background_;
  ClosedFormCollectives* closed_form_ = nullptr;
  uint64_t closed_form_sequence_ = 0;        // this task's collectives so far
  simgrid::s4u::ActorPtr background_actor_;  // on a shared host, while it computes
};

}  // namespace distlab::sim
