// The one interface between strategies and backends: who am I, what time is
// it, send, receive, compute. Strategies are written once against it; the
// SimGrid backend (sim/) and the TCP backend (realnet/) implement the
// protected primitives. Everything a run reports about a task (time spent
// computing, transferring and waiting, bytes, the timeline) is measured
// here, above the backends, so that both report it the same way.
//
// Send semantics, the same on every backend: send() is buffered. It returns
// as soon as the message is handed off, whether or not the receiver has
// asked for it, and messages from one task with one tag are received in the
// order they were sent. So a ring in which everybody sends before receiving
// works everywhere.
//
// Messages without copies, for collectives that move large buffers (the
// ring all-reduce): a receive may be posted before its message comes, with
// the floats it is to land in, and a backend that can (TCP) reads the
// payload straight into them; a send may borrow the caller's floats until
// wait_sends(), rather than take a copy. Elsewhere (the simulator) both copy,
// and behave as recv() and send() do.
//
// Restarts: a task restarted after a failure is a new incarnation of it
// (0 at the first start). Every message carries its sender's incarnation
// and the receiver's as the sender knows it; a message of a life that is
// over (from an earlier incarnation of its sender, or to an earlier one of
// its receiver) is dropped, and a sender's new incarnation numbers its
// messages afresh. So a worker that comes back talks to servers that never
// stopped, on either backend.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/error.h"
#include "strategy/config.h"
#include "strategy/float_range.h"
#include "strategy/message.h"
#include "strategy/slowdown.h"
#include "strategy/task_log.h"
#include "strategy/work.h"

namespace distlab::strategy {

class Runtime;

// The message a posted receive stands for: the next one from `peer` with
// `tag` after those already received or posted for, in the current lives of
// both tasks (the sequence and incarnations say which), and the floats its
// payload is to land in (none: it keeps its own).
struct Posting {
  int peer = -1;  // ordinal
  Tag tag = Tag::kRing;
  uint64_t sequence = 0;
  uint32_t from_incarnation = 0;
  uint32_t to_incarnation = 0;
  FloatRange into = FloatRange::sized(0);
};

// A receive posted with Runtime::post_recv, until Runtime::wait takes its
// message. One that goes unwaited is withdrawn: the backend writes nothing
// more into its floats, and its message is left to a later receive.
class PostedReceive {
 public:
  PostedReceive() = default;
  PostedReceive(PostedReceive&& other) noexcept;
  PostedReceive& operator=(PostedReceive&& other) noexcept;
  PostedReceive(const PostedReceive&) = delete;
  PostedReceive& operator=(const PostedReceive&) = delete;
  ~PostedReceive();

  const Posting& posting() const { return posting_; }

 private:
  friend class Runtime;
  void withdraw() noexcept;

  Runtime* runtime_ = nullptr;  // null once waited for (or moved from)
  Posting posting_;
};

// Thrown by Runtime::recv_any_or_gone() when a peer has left the run for
// good while this task waited: a backend that can tell (./realnet's: lost,
// and not back within its rejoin wait) says so rather than waiting out its
// timeout. Thrown once per peer; later receives wait for the others.
class PeerGone : public Error {
 public:
  PeerGone(TaskId peer, const std::string& what) : Error(what), peer_(peer) {}
  TaskId peer() const { return peer_; }

 private:
  TaskId peer_;
};

class alignas(64) Runtime {
 public:
  Runtime(TaskId self, ClusterSpec cluster, Fidelity fidelity);
  virtual ~Runtime() = default;
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  TaskId self() const { return self_; }
  uint32_t incarnation() const { return incarnation_; }
  // Set by the backend before the task runs: its own incarnation and every
  // task's as of its start (ordinals of the cluster), a list the tasks
  // started together may share (10,000 copies of 10,000 would be 400 MB).
  void set_incarnations(uint32_t own, std::shared_ptr<const std::vector<uint32_t>> everyone);
  void set_incarnations(uint32_t own, std::vector<uint32_t> everyone);
  // The incarnation of the task at `ordinal` as this task knows it: from
  // set_incarnations, then from the messages it admitted.
  uint32_t peer_incarnation(int ordinal) const;
  // A restarted task that rejoins a run that went on without it (an
  // asynchronous worker), rather than one restarted with every other task
  // from a checkpoint.
  bool rejoining() const { return rejoining_; }
  void set_rejoining(bool rejoining) { rejoining_ = rejoining; }
  // Called as each step begins, before anything of it happens: where a
  // backend injects a fault that strikes at a step (it may throw, or end
  // the process).
  void set_step_hook(std::function<void(int64_t step)> hook) { step_hook_ = std::move(hook); }
  bool in_step() const { return step_.has_value(); }
  // Told of each step as it begins (after the step hook: a step whose fault
  // strikes as it begins was never begun) and as it ends, with the examples
  // trained on in it: where a backend keeps its records as the task goes,
  // so that a task killed mid-run leaves its finished steps behind.
  class StepObserver {
   public:
    virtual ~StepObserver() = default;
    virtual void began(int64_t step) = 0;
    virtual void ended(const StepRecord& record, int64_t examples) = 0;
  };
  void set_step_observer(StepObserver* observer) { step_observer_ = observer; }
  const ClusterSpec& cluster() const { return cluster_; }
  Fidelity fidelity() const { return fidelity_; }
  bool full_fidelity() const { return fidelity_ == Fidelity::kFull; }

  // Seconds since the run began: simulated or wall-clock.
  virtual double now() const = 0;
  // CPU seconds this task has cost its machine so far: its process's, all
  // threads (the real backend); what the model charged it (the simulator).
  // Each phase's share is logged beside its wall time.
  virtual double cpu_now() const = 0;

  void send(TaskId to, Message&& message);
  Message recv(TaskId from, Tag tag);
  // The next message with this tag from any task (a PS serving workers).
  Message recv_any(Tag tag);
  // recv_any(), for a task that serves whoever is still in the run (a
  // parameter server, the chief gathering reports): a backend that can
  // tell a peer has left for good may end the wait with PeerGone naming
  // it, once per peer.
  Message recv_any_or_gone(Tag tag);
  // A receive of the next message from `from` with `tag` after those
  // already received or posted for, whose payload is to land in `into`
  // (FloatRange::sized(n): a message of n floats that keeps its own). Posted
  // receives of one sender and tag are waited for in the order posted, with
  // no recv() of that sender and tag between; `into` stays valid and
  // untouched by the caller until then.
  PostedReceive post_recv(TaskId from, Tag tag, FloatRange into);
  // Blocks until the posted message has arrived and returns it; its payload
  // is in `into` (and values is empty), or, for a posting without floats, in
  // values as recv() gives it. Throws Error for a message of another size.
  Message wait(PostedReceive& receive);
  // Whether this backend reads payloads straight into the floats of posted
  // receives (TCP): a collective then gains by posting its receives well
  // ahead. Elsewhere a posting is a copy when the message comes, and one
  // posted at a time is as good.
  virtual bool reads_into_postings() const { return false; }
  // send() of `header` with `values` as its payload, borrowed rather than
  // copied where the backend can: the caller leaves `values` unchanged
  // until wait_sends(). Its bytes are set from `values`.
  void send_borrowed(TaskId to, Message header, FloatRange values);
  // Blocks until the backend no longer reads the floats of any borrowed
  // send. Throws Error if a connection fails first.
  void wait_sends();
  // A received message the task is done with: the backend may read a later
  // payload into its floats rather than into fresh memory.
  virtual void recycle(Message&& message);

  // Runs `work_fn` (real backend; simulator in full fidelity) and accounts
  // for the time `work` takes (measured, or modelled on the host's device),
  // times the task's slowdown (slowdown.h), if it has one.
  void compute(const Work& work, const std::function<void()>& work_fn);
  // This task's slowdown, from the scenario; none by default.
  void set_slowdown(Slowdown slowdown) {
    slowdown_ = std::move(slowdown);
    slowed_ = slowdown_.any();
  }

  // Communication that overlaps a computation, as DDP's and Horovod's
  // gradient all-reduce overlaps the backward pass: runs `pieces`,
  // consecutive parts of one computation, one after another beside the
  // caller, which meanwhile sends and receives. `work_fn` does the math
  // (nothing in timing fidelity), calling `piece_done(k)` once piece k's
  // results are final: the real backend runs it on a thread of its own,
  // the simulator at once, timing it piece by piece. One at a time, joined
  // within the step. Its time is the task's compute, in its pieces' phase;
  // what the task communicated or waited meanwhile is hidden behind it
  // (TaskLog::hidden_communication_seconds), what came after is exposed.
  using PieceDone = std::function<void(std::size_t piece)>;
  using BackgroundFn = std::function<void(const PieceDone& piece_done)>;
  void start_background(std::vector<Work> pieces, BackgroundFn work_fn);
  // Blocks until piece k of the background computation is done.
  void await_piece(std::size_t piece);
  // Blocks until every piece is done, and accounts for the whole.
  void join_background();
  // For a caller that fails while it runs: waits for the computation to
  // end, ignoring its errors, and accounts nothing. Never throws.
  void abandon_background() noexcept;

  // Collectives timed in closed form rather than message by message (the
  // simulator's network.collectives: analytic), for runs of thousands of
  // replicas: whether this runtime times them so; and a ring exchange of
  // `rounds` rounds of `chunk_bytes` among `ring`, this member sending and
  // receiving `bytes` in `messages` messages. Blocks until every member has
  // arrived (waiting) and for the exchange (communication). No values move.
  virtual bool collectives_in_closed_form() const { return false; }
  void closed_form_ring(const std::vector<TaskId>& ring, uint64_t chunk_bytes, int rounds,
                        uint64_t bytes, uint64_t messages);

  // The GPUs this task trains on (1 but for cluster.gpus_per_task on a
  // simulated GPU machine). Set by the backend before the task runs.
  int devices() const { return devices_; }
  void set_devices(int devices);
  // A collective of `bytes` among this task's devices, timed by the backend
  // and accounted as communication; nothing with one device. No values
  // move: the NN core computes the task's batch as one, so that the towers'
  // combined gradient is the task's own (up to float rounding, which the
  // towers of a framework would add).
  void among_devices(DeviceCollective collective, uint64_t bytes);

  // Writes (or reads back) a checkpoint of `bytes` bytes: runs `io_fn`,
  // which does the file's work (nothing in timing fidelity), and accounts
  // the time as checkpoint time: measured on the real backend, modelled in
  // the simulator (bytes over the host's disk bandwidth, plus a fixed cost
  // per file). The task does nothing else meanwhile, as TensorFlow's saver
  // blocks its training loop.
  void checkpoint(const std::string& label, uint64_t bytes, const std::function<void()>& io_fn);

  // Takes the next batch of `examples` from the input pipeline: blocks
  // until it is ready, accounted as input time (neither compute nor
  // waiting for a peer). Nothing without a pipeline.
  void take_batch(int64_t examples, const InputPipeline& input);

  // Step bookkeeping: what happens between begin_step and end_step is
  // added to that step's row of steps.csv.
  void begin_step(int64_t step);
  void end_step(double loss = 0, int64_t staleness = -1);
  // Work between two steps that the next one pays for: the checkpoint of
  // the steps done, written once the last one's record is kept, so that a
  // task killed while writing it has lost no finished step's record. What
  // `work` does is accounted as a step's (phases, bytes, checkpoint time),
  // and step `next_step` begins where it began; if no step follows, the
  // run's totals alone hold it.
  void between_steps(int64_t next_step, const std::function<void()>& work);
  void add_curve_point(const CurvePoint& point) { log_.curve.push_back(point); }
  // Examples a replica trains on in a step (the log's `examples`).
  void count_examples(int64_t examples) { log_.examples += examples; }

  // Timeline spans kept per task; later spans are counted, not kept, so that
  // a 1,024-worker simulation does not keep millions of them.
  static constexpr std::size_t kSpanLimit = 20000;  // by default
  void set_span_limit(std::size_t limit);
  uint64_t spans_dropped() const { return spans_dropped_; }

  // Closes the log (finishing time) and hands it over.
  TaskLog take_log();
  // The log so far, its totals and the open step's up to date.
  const TaskLog& log() {
    post_pending();
    return log_;
  }

 protected:
  // Delivers a message, buffered (see above). `message.from` and
  // `message.sequence` are set.
  virtual void transmit(TaskId to, Message&& message) = 0;
  // Blocks until a message with this tag arrives from anyone; sets its
  // available_at. Backends may throw Error (a peer gone, a timeout).
  virtual Message receive(Tag tag) = 0;
  // Runs the work (or not) and lets the task's clock advance accordingly.
  virtual void execute(const Work& work, const std::function<void()>& work_fn) = 0;
  // A slowed computation's extra time: the task's clock advances by
  // `seconds` as if it computed on one core (the simulator charges it;
  // ./realnet holds a core).
  virtual void hold(double seconds) = 0;
  // Lets the clock catch up with computations a backend has not yet
  // timed (the simulator adds up short ones before it charges them).
  virtual void settle() {}
  // Starts a background computation (start_background), each piece
  // `factor` times as long as its work alone (a slowed task's), and
  // returns at once. Runs work_fn in full fidelity.
  virtual void begin_background(const std::vector<Work>& pieces, double factor,
                                const BackgroundFn& work_fn) = 0;
  // Blocks until piece k is done; returns when it was, on the clock.
  virtual double await_background(std::size_t piece) = 0;
  // Blocks as closed_form_ring says; returns when the last member arrived.
  // A backend that moves every message throws Error.
  virtual double exchange_in_closed_form(const std::vector<TaskId>& ring, uint64_t chunk_bytes,
                                         int rounds);
  // Runs the file work of a checkpoint of `bytes` and lets the clock advance
  // accordingly.
  virtual void store(uint64_t bytes, const std::function<void()>& io_fn) = 0;
  // Zero-copy hooks (see the top of this file); the defaults copy. A
  // posted receive: the backend may read the message that `posting` stands
  // for straight into posting.into and hand it over with `delivered` set.
  virtual void expect(const Posting& posting);
  // The posting is waited for or withdrawn: from the return on, nothing is
  // written into its floats (a read into them in progress is finished or
  // abandoned first).
  virtual void unexpect(const Posting& posting);
  // transmit() of `message` with `values` as payload, which the backend
  // may read until await_borrowed_sends() returns.
  virtual void transmit_borrowed(TaskId to, Message&& message, FloatRange values);
  virtual void await_borrowed_sends();

  // Lets the clock advance until the pipeline has the batch ready. The
  // default returns at once: a real backend's input is the batch its
  // replica gathers anyway, and the simulator models the stages.
  virtual void await_input(int64_t examples, const InputPipeline& input);

  // Lets the clock advance by a collective among the task's devices
  // (devices() > 1 only). Backends without devices never get one.
  virtual void bus_collective(DeviceCollective collective, uint64_t bytes);

  // Whether the receive in progress is recv_any_or_gone()'s: the one
  // receive() that may throw PeerGone.
  bool names_gone_peers() const { return names_gone_peers_; }

 private:
  friend class PostedReceive;
  void account_receive(const Message& message, double blocked_from, double blocked_to);
  // What the task's own time goes to, each in its total, its step's and
  // its phase. spend() adds [start, end), noted while a background
  // computation runs, to be hidden behind it where the two overlap
  // (join_background); add_seconds() adds (or, hidden, takes back) seconds.
  enum class Foreground { kCommunication, kWaiting, kCompute };
  // Communication is always in Phase::kCommunication and waiting in
  // Phase::kWaiting; only computations come in every phase.
  void spend(Foreground what, Phase phase, double start, double end);
  // What spend() notes while a background computation runs, and the extra
  // time of a slowed task's computation (compute): out of line, as rare
  // cases, so that neither widens the frames that every simulated message
  // and computation pass through.
  [[gnu::noinline]] void note_foreground(Foreground what, Phase phase, double start, double end);
  [[gnu::noinline]] void slow_down(double computation_start);
  void add_seconds(Foreground what, Phase phase, double seconds);
  // Adds `seconds` of `phase` to the run's totals and to the step's.
  void account(Phase phase, double seconds);
  // Adds the figures pending_ holds to the log's totals and to the open
  // step's, and clears it: before either is read, and before the open
  // step changes.
  void post_pending();
  // Adds the CPU time used since the last call to `phase`, likewise: a
  // phase's CPU is what the process used from the end of the phase before
  // to its own end (CPU between phases is a few bookkeeping instructions).
  void account_cpu(Phase phase);
  // Numbers `message` for `to` (sender, incarnations, sequence).
  void stamp(TaskId to, Message& message);
  void account_send(TaskId to, uint64_t bytes, double start, double end);
  // The timeline's spans of a receive: waiting until `begin`, then the
  // transfer.
  [[gnu::noinline]] void receive_spans(const Message& message, double blocked_from, double begin,
                                       double blocked_to);
  void withdraw(const Posting& posting) noexcept;
  // Whether a received message belongs to the current lives of its sender
  // and of this task (see above); a sender's newer incarnation resets the
  // numbering of the messages to and from it.
  bool admit(const Message& message);
  // Whether one more span fits under the limit; counts it as dropped if not.
  bool keeps_spans();
  void add_span(SpanKind kind, double start, double end, std::string_view label);
  std::optional<Message> take_stashed(TaskId from, Tag tag);
  // The stashed message next in its sender's order with this tag, from the
  // first sender (by ordinal) that has one.
  std::optional<Message> take_stashed_any(Tag tag);
  // recv() from `from`, or recv_any() when it is empty.
  Message next_in_sequence(Tag tag, std::optional<TaskId> from);
  // The next message with `tag` to arrive, accounted for (account_receive);
  // `arrived` is when. Inlined, as a frame of its own would be one more
  // stack line a message (see receive_posted).
  [[gnu::always_inline]] inline Message receive_accounted(Tag tag, double& arrived);
  // next_in_sequence() when the stash has nothing for it.
  Message receive_in_sequence(Tag tag, std::optional<TaskId> from);
  // receive_in_sequence() for a posted receive, with nothing stashed: the
  // common case of wait(), inlined there, so that a wait is one narrow
  // frame down to the backend's receive(). A simulated ring member among a
  // thousand finds each line of its stack out of the caches when it
  // resumes, and the frames of recv() and its optional sender between were
  // two more lines a message.
  [[gnu::always_inline]] inline Message receive_posted(const Posting& posting);
  // hand_over() for the message a posting stands for.
  bool hand_over_posted(const Message& message, const Posting& posting);
  // receive_until_in_turn() for a posting.
  [[gnu::noinline]] void receive_posted_until_in_turn(Message& message, bool admitted,
                                                      const Posting& posting, double start);
  // Whether `message` is the one wanted (from `from`, if given) and next
  // in its sender's order; if so, counts it as handed over.
  bool hand_over(const Message& message, Tag tag, std::optional<TaskId> from);
  // Replaces `message` (admitted or not), which is not the one wanted, by
  // the one that is, keeping in the stash those that came out of turn
  // and accounting for every message that arrives meanwhile (blocked from
  // `start`).
  [[gnu::noinline]] void receive_until_in_turn(Message& message, bool admitted, Tag tag,
                                               std::optional<TaskId> from, double start);
  // Keeps `message`, which came out of its sender's order or from another
  // sender than `wanted`, in the stash; true, with `message` replaced by
  // it, if the one wanted is there now.
  [[gnu::noinline]] bool stash_out_of_turn(Message& message, Tag tag, TaskId wanted);
  // Whether the stash holds the next message of `from` (of any sender
  // when empty) under `tag`; and takes it.
  bool stash_holds_next(Tag tag, std::optional<TaskId> from);
  [[gnu::noinline]] Message take_stashed_next(Tag tag, std::optional<TaskId> from);

  struct Background {
    double start = 0;
    double factor = 1;
    std::vector<std::string> labels;  // the pieces'
    Phase phase = Phase::kOther;
    struct Interval {
      Foreground what;
      Phase phase;
      double start, end;
    };
    std::vector<Interval> foreground;
  };
  // What this task knows of its messages with one peer under one tag (its
  // key: conversation_key in runtime_messages.cc). Those that arrived
  // before an earlier one wait in stashes_.
  static constexpr uint32_t kNoConversation = UINT32_MAX;
  struct Conversation {
    uint64_t next_send = 0;      // the sequence number of the next one sent
    uint64_t next_expected = 0;  // of the next one handed over
    uint32_t posted = 0;         // receives posted and not yet waited for
    uint32_t key = kNoConversation;
  };
  using Stash = std::map<uint64_t, Message>;  // by sequence number
  // What every message and computation adds, since post_pending() last
  // added it to log_ and step_: kept together, so that a simulated task
  // among a thousand touches a few cache lines per message, not each
  // figure twice in two records.
  struct Pending {
    // What a message adds, in one line: communication is always in its
    // phase of the same name and waiting in its own, so their seconds are
    // the phases' too (post_pending), and a message's CPU goes to
    // communication.
    uint64_t bytes_sent = 0;
    uint64_t bytes_received = 0;
    uint64_t messages_sent = 0;
    uint64_t messages_received = 0;
    double communication_seconds = 0;
    double waiting_seconds = 0;
    double communication_cpu = 0;
    // What a computation adds: to its seconds, and to its phase's seconds
    // and CPU.
    double compute_seconds = 0;
    struct PhaseFigures {
      double seconds = 0;
      double cpu = 0;
    };
    std::array<PhaseFigures, kPhases> phases{};
  };
  // Every message goes through one of these. The task's first two
  // conversations (a ring member's two) are in its first cache lines and
  // found without a lookup; the others are in a table, whose elements do
  // not move.
  Conversation& conversation(int peer, Tag tag);
  [[gnu::noinline]] Conversation& conversation_in_table(uint32_t key);
  template <class Visit>  // visit(Conversation&), for each conversation
  void for_each_conversation(Visit visit);
  // The numbering of a peer that restarted starts again; its postings stay.
  void restart_conversations(int peer);

  // What every message and computation reads comes first: in four of the
  // object's first five cache lines (the class is aligned to one), a ring
  // member's conversations in the second, what a message adds in the
  // third and the seconds and CPU of the phase of a ring's additions
  // (packing) in the fifth. A simulation of a thousand tasks switches
  // among them millions of times, and each switch finds the task's state
  // out of the caches, a line at a time: a ring member resumes three
  // times a message, and reads three of these lines each time, four after
  // an addition. What only a rare case needs (a slowdown, a background
  // computation, a restarted peer) is a flag or a pointer here and its
  // state further on.
  TaskId self_;
  ClusterSpec cluster_;
  Fidelity fidelity_;
  bool names_gone_peers_ = false;
  bool slowed_ = false;           // slowdown_.any()
  bool peers_restarted_ = false;  // !learned_incarnations_.empty()
  uint32_t stashed_ = 0;          // messages in every stash
  uint32_t incarnation_ = 0;
  std::unique_ptr<Background> background_;
  double cpu_mark_ = -1;  // cpu_now() when the last phase ended; < 0 before the first
  const std::vector<uint32_t>* start_lives_ = nullptr;  // start_incarnations_'s
  std::array<Conversation, 2> first_conversations_{};
  std::size_t spans_left_ = kSpanLimit;  // to the limit
  uint64_t spans_dropped_ = 0;
  Pending pending_;

  Slowdown slowdown_;
  std::size_t span_limit_ = kSpanLimit;
  std::unordered_map<uint32_t, Conversation> conversations_;  // but the first two
  std::unordered_map<uint32_t, Stash> stashes_;               // by conversation key
  // The peers' lives by ordinal: as of the task's start (empty: all 0),
  // then what messages told (newer lives). The task's own is incarnation_.
  std::shared_ptr<const std::vector<uint32_t>> start_incarnations_;
  std::unordered_map<int, uint32_t> learned_incarnations_;
  // The records, after what every message reads: post_pending() adds to
  // them, not each message.
  TaskLog log_;
  std::optional<StepRecord> step_;
  std::optional<StepRecord> prelude_;  // between_steps' work, for the next step
  bool rejoining_ = false;
  int devices_ = 1;
  std::function<void(int64_t)> step_hook_;
  StepObserver* step_observer_ = nullptr;
  int64_t examples_at_step_start_ = 0;  // log_.examples as the step began
};

}  // namespace distlab::strategy
