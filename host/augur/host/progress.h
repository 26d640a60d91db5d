// The progress driver: who makes progress, and how a thread waits for it. It knows nothing of the
// wire: it calls its target's progress_once() (the engine's round of completions and queued work)
// and decides when to call it again, when to check that the job is alive, when to sleep on the
// completion channel, and, with a communication-assist thread, runs that thread, hands it the
// application's commands through a lock-free queue and wakes the application threads waiting on
// what it completed. Tested natively against a fake target (tests/host/progress_test.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "augur/host/mpsc_queue.h"
#include "augur/host/placement.h"
#include "augur/host/request.h"
#include "augur/status.h"
#include "augur/unique_fd.h"

namespace augur::host {

// How a waiting thread waits (AUGUR_WAIT).
enum class WaitPolicy : std::uint8_t {
  kSpin,    // poll the CQ until done: lowest latency, burns a core
  kBlock,   // sleep on the completion channel whenever a poll finds nothing
  kHybrid,  // poll for AUGUR_SPIN_US without progress, then sleep until the next completion
  kAuto,    // spin while this host's ranks have a core each, no assist thread and an adapter
            // (not a software device), else hybrid; decided once the job's shape is known
            // (ProgressDriver::resolve_auto_wait); unresolved it waits as hybrid
};
[[nodiscard]] const char* wait_policy_name(WaitPolicy w) noexcept;

struct ProgressConfig {
  WaitPolicy wait = WaitPolicy::kAuto;
  std::uint32_t spin_us = 1000;     // kHybrid: idle polling before sleeping
  std::uint32_t keepalive_ms = 1000;  // the job's liveness is checked this often while waiting
};

// What the driver drives: the engine.
class ProgressTarget {
 public:
  // One round: completions, queued sends, credit returns. Errors as Engine::progress.
  virtual Status progress_once() = 0;
  // The last round found no work (so a waiter may start counting towards a sleep).
  [[nodiscard]] virtual bool idle() const noexcept = 0;
  // The keepalive check: an error names the failure (the requests it concerns have been failed).
  virtual Status check_peers() = 0;
  // Assist thread: starts what the application threads queued; true if there was anything.
  virtual bool run_commands() = 0;
  // Assist thread, after each round: the layer above's work that moves on at completions (the
  // MPI shim's nonblocking collectives); true if it did any.
  virtual bool run_background() = 0;
  // Arms the CQ's event, then runs one more round (a completion that came before the arming
  // raised no event). False if that round found work: do not sleep.
  virtual Result<bool> arm_for_sleep() = 0;
  // Takes the CQ event that woke a sleeper.
  virtual Status take_event() = 0;
  // The completion channel's descriptor, readable at a CQ event.
  [[nodiscard]] virtual int event_fd() const noexcept = 0;
  // The longest a sleep may last: a sender waiting for credits that a peer returns by RDMA WRITE
  // alone gets no completion, so the target shortens sleeps while it has such sends.
  [[nodiscard]] virtual int sleep_cap(int timeout_ms) const noexcept = 0;
  // A second descriptor a sleeper watches (-1: none): readable when a peer asks to connect or
  // answers (Wireup), which on_wire_event then handles.
  [[nodiscard]] virtual int wire_fd() const noexcept { return -1; }
  virtual Status on_wire_event() { return Status::Ok(); }

 protected:
  ~ProgressTarget() = default;
};

// The intrusive link of a command queued for the assist thread (the target defines the rest).
struct AssistCommand {
  std::atomic<AssistCommand*> next{nullptr};
};

class ProgressDriver {
 public:
  ProgressDriver(ProgressTarget& target, const ProgressConfig& cfg)
      : target_(target), cfg_(cfg), relax_every_(check_every(1)) {}
  ~ProgressDriver() { stop_assist(); }
  ProgressDriver(const ProgressDriver&) = delete;
  ProgressDriver& operator=(const ProgressDriver&) = delete;

  // More ranks on this host than cores: spinning waiters yield the core now and then.
  void set_oversubscribed(bool v) noexcept { oversubscribed_ = v; }
  // AUGUR_WAIT=auto becomes spin when `cores_to_spare` (every rank of the host has a core, and
  // neither an assist thread nor a software device needs them: as Open MPI and MPICH, poll),
  // else hybrid (a sleeping waiter gives its core to whoever it waits for). Other policies stay.
  // Before any wait.
  void resolve_auto_wait(bool cores_to_spare) noexcept;
  [[nodiscard]] WaitPolicy wait_policy() const noexcept { return cfg_.wait; }
  // Starts the assist thread on `where`; from then on only it calls the target.
  Status start_assist(const Placement& where, int rank);
  // Stops and joins the assist thread (if any); the caller's thread drives from then on.
  void stop_assist();
  [[nodiscard]] bool assisted() const noexcept { return assisted_; }
  // Times the driving thread slept on the completion channel (read where it drives).
  [[nodiscard]] std::uint64_t sleeps() const noexcept { return sleeps_; }
  // True on the assist thread (it may not wait for itself: Engine::call_in_assist runs inline).
  [[nodiscard]] static bool on_assist_thread() noexcept;

  // Application threads (assisted): queue a command and wake the assist thread if it sleeps.
  void enqueue(AssistCommand* c) const;
  // The assist thread (or the owner after stop_assist): the next queued command, or null.
  AssistCommand* next_command() noexcept { return commands_.pop(); }
  // Sleeps until `flag` is set by the assist thread (which then calls note_completion).
  void wait_for_flag(const std::atomic<bool>& flag) const;
  // The target finished a request (or set a flag): waiters are woken after the round.
  void note_completion() noexcept { ++completions_; }

  // Assisted, for a wait loop of the layer above (the MPI shim's) that waits for the assist
  // thread: read the epoch before checking the condition waited for, then relax_assisted(seen):
  // it yields while AUGUR_WAIT says spin (AUGUR_SPIN_US since the epoch last moved, for hybrid),
  // then returns true: the caller may let go of its own locks and sleep_past(seen). The epoch
  // moves after every round of the assist thread that completed something or found an error.
  [[nodiscard]] std::uint64_t completion_epoch() const noexcept { return epoch_.load(std::memory_order_seq_cst); }
  bool relax_assisted(std::uint64_t seen);
  bool sleep_past(std::uint64_t seen, int timeout_ms) const;  // true: the epoch moved

  // Until `r` is done or `timeout_ms` passes (kTimeout); returns r's status.
  Status wait(const RequestPtr& r, int timeout_ms);
  // Engine::progress is these two around its own round (a direct call: an MPI wait loop polls
  // through it). Assisted: the errors the assist thread found since the last call. Not assisted,
  // after each round: the keepalive check when it is due (the clock is read every 256 calls).
  Status take_assist_error();
  Status after_round() {
    if ((++progress_calls_ & 255) != 0) return Status::Ok();
    return check_if_due(Clock::now());
  }
  // For callers that drive progress() until their own condition holds: call after a round that
  // left it unmet; `idle`: that round found no work. It applies AUGUR_WAIT (see Engine::relax).
  // Inline up to the clock read: an MPI wait loop calls it on every poll.
  Status relax(int max_ms, bool idle) {
    if (!idle) {  // the last round found work: keep polling
      relax_idle_since_ = Clock::time_point{};
      relax_idle_calls_ = 0;
    }
    if (assisted_ || cfg_.wait == WaitPolicy::kSpin || !idle || ++relax_idle_calls_ % relax_every_ != 0) {
      yield_if_oversubscribed();
      return Status::Ok();
    }
    return relax_idle(max_ms);
  }

 private:
  using Clock = std::chrono::steady_clock;
  void assist_main(Placement where, int rank);
  // relax() past its polling: reads the clock, checks the job, sleeps once the spin is over.
  Status relax_idle(int max_ms);
  void yield_if_oversubscribed() noexcept;  // ranks share cores: now and then, let another run
  void assist_sleep(int timeout_ms);
  void wake_waiters();
  void keep_assist_error(const Status& st);
  Status wait_assisted(const RequestPtr& r, int timeout_ms);
  // Sleeps until a completion (or a command, assisted), at most `timeout_ms`.
  Status sleep_for_completion(int timeout_ms);
  // The keepalive check if it is due at `now`; OK when not due.
  Status check_if_due(Clock::time_point now);
  // Polls between clock reads in wait() and relax() (a read can be a system call: hpet under
  // qemu takes ~1 us, and a completion landing meanwhile waits for it).
  [[nodiscard]] std::uint32_t check_every(std::uint32_t when_blocking) const noexcept;
  [[nodiscard]] Clock::duration spin() const noexcept;

  ProgressTarget& target_;
  ProgressConfig cfg_;
  bool oversubscribed_ = false;
  Clock::time_point last_check_{};
  std::uint32_t progress_calls_ = 0;
  // relax(): idle calls between clock reads; idle since (epoch: busy), calls since the last busy
  // one, calls for yielding.
  std::uint32_t relax_every_;
  Clock::time_point relax_idle_since_{};
  std::uint32_t relax_idle_calls_ = 0;
  std::uint32_t relax_calls_ = 0;
  std::uint64_t sleeps_ = 0;
  // Assist thread.
  bool assisted_ = false;
  mutable MpscQueue<AssistCommand> commands_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> assist_sleeping_{false};
  UniqueFd wake_fd_;                      // eventfd: a command for a sleeping assist thread
  std::uint64_t completions_ = 0;         // requests finished (assist thread)
  std::uint64_t notified_ = 0;
  std::atomic<std::uint64_t> epoch_{0};   // moves when waiters are woken (completion_epoch)
  std::uint64_t relax_epoch_ = 0;         // relax_assisted: the epoch its spin started at
  mutable std::mutex sleep_mu_;           // application threads sleeping on their requests
  mutable std::condition_variable sleep_cv_;
  mutable std::atomic<int> sleepers_{0};
  std::mutex assist_error_mu_;
  Status assist_error_;  // the assist thread's first error since the last progress() call
  std::thread assist_thread_;  // last: started once everything it uses exists
};

}  // namespace augur::host
