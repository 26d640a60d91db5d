// The progress driver (host/augur/host/progress.h): the assist thread and its command queue,
// wait's spin-then-sleep on the completion channel, relax for callers' own wait loops, and the
// one keepalive check that fails peers whose process died.

#include "augur/host/progress.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

namespace augur::host {

Status ProgressDriver::start_assist(const Placement& where, int rank) {
  wake_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_fd_.valid()) return errno_status(errno, "eventfd");
  assisted_ = true;
  assist_thread_ = std::thread([this, where, rank] { assist_main(where, rank); });
  return Status::Ok();
}

void ProgressDriver::stop_assist() {
  if (assist_thread_.joinable()) {
    stop_.store(true, std::memory_order_seq_cst);
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_.get(), &one, sizeof one);
    assist_thread_.join();
  }
  assisted_ = false;
}

void ProgressDriver::enqueue(AssistCommand* c) const {
  // Dekker with assist_sleep, all seq_cst: push (an exchange), then look; it marks itself
  // asleep, then looks at the queue. One of the two sees the other.
  commands_.push(c);
  if (assist_sleeping_.load(std::memory_order_seq_cst)) {
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_.get(), &one, sizeof one);
  }
}

void ProgressDriver::wait_for_flag(const std::atomic<bool>& flag) const {
  sleepers_.fetch_add(1, std::memory_order_seq_cst);  // Dekker with wake_waiters, all seq_cst
  {
    std::unique_lock lock(sleep_mu_);
    sleep_cv_.wait(lock, [&] { return flag.load(std::memory_order_seq_cst); });
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

void ProgressDriver::wake_waiters() {
  if (completions_ == notified_) return;
  notified_ = completions_;
  epoch_.fetch_add(1, std::memory_order_seq_cst);  // Dekker with sleep_past, as the flags
  // Done flags were stored seq_cst: a waiter that registered too late to be seen here sees them.
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
  std::lock_guard lock(sleep_mu_);  // so that no waiter checks its flag and sleeps in between
  sleep_cv_.notify_all();
}

const char* wait_policy_name(WaitPolicy w) noexcept {
  switch (w) {
    case WaitPolicy::kSpin: return "spin";
    case WaitPolicy::kBlock: return "block";
    case WaitPolicy::kHybrid: return "hybrid";
    case WaitPolicy::kAuto: return "auto";
  }
  return "?";
}

void ProgressDriver::resolve_auto_wait(bool cores_to_spare) noexcept {
  if (cfg_.wait != WaitPolicy::kAuto) return;
  cfg_.wait = cores_to_spare ? WaitPolicy::kSpin : WaitPolicy::kHybrid;
  relax_every_ = check_every(1);
}

ProgressDriver::Clock::duration ProgressDriver::spin() const noexcept {
  return std::chrono::microseconds(cfg_.wait == WaitPolicy::kBlock ? 0 : cfg_.spin_us);
}

namespace {
thread_local bool t_assist = false;
}  // namespace

bool ProgressDriver::on_assist_thread() noexcept { return t_assist; }

void ProgressDriver::assist_main(Placement where, int rank) {
  t_assist = true;
  if (Status st = bind_this_thread(where); !st.ok()) {
    std::fprintf(stderr, "augur: rank %d: assist thread not bound: %s\n", rank, st.to_string().c_str());
  }
  auto idle_since = Clock::now();
  for (std::uint32_t loops = 1; !stop_.load(std::memory_order_acquire); ++loops) {
    const bool commands = target_.run_commands();
    // Errors are delivered to the requests they concern, and kept for the next progress() call:
    // an error that concerns no request (a malformed message, a failed peer) must still reach
    // the program.
    if (Status st = target_.progress_once(); !st.ok()) keep_assist_error(st);
    const bool background = target_.run_background();
    wake_waiters();
    if (commands || background || !target_.idle()) {
      idle_since = Clock::time_point{};
      continue;
    }
    if (loops % 16 != 0) continue;
    const auto now = Clock::now();
    if (idle_since == Clock::time_point{}) idle_since = now;
    if (Status st = check_if_due(now); !st.ok()) {
      keep_assist_error(st);
      wake_waiters();
    }
    if (cfg_.wait != WaitPolicy::kSpin && now - idle_since >= spin()) {
      assist_sleep(static_cast<int>(cfg_.keepalive_ms));
      idle_since = Clock::time_point{};
    }
  }
}

void ProgressDriver::assist_sleep(int timeout_ms) {
  // Dekker with enqueue: say so, then look at the queue; a producer that missed the flag has
  // already pushed, and the look sees it.
  assist_sleeping_.store(true, std::memory_order_seq_cst);
  if (commands_.empty()) (void)sleep_for_completion(timeout_ms);
  assist_sleeping_.store(false, std::memory_order_seq_cst);
}

void ProgressDriver::keep_assist_error(const Status& st) {
  std::lock_guard lock(assist_error_mu_);
  if (assist_error_.ok()) assist_error_ = st;  // the first is the cause; the rest follow from it
  ++completions_;  // a sleeping waiter wakes to take it (wake_waiters follows)
}

bool ProgressDriver::relax_assisted(std::uint64_t seen) {
  if (cfg_.wait == WaitPolicy::kSpin) {
    yield_if_oversubscribed();
    return false;
  }
  if (seen != relax_epoch_) {  // something completed since the last call: spin again
    relax_epoch_ = seen;
    relax_idle_since_ = Clock::time_point{};
    relax_idle_calls_ = 0;
  }
  if (cfg_.wait == WaitPolicy::kBlock) return true;
  if (++relax_idle_calls_ % relax_every_ != 0) {
    yield_if_oversubscribed();
    return false;
  }
  const auto now = Clock::now();
  if (relax_idle_since_ == Clock::time_point{}) relax_idle_since_ = now;
  return now - relax_idle_since_ >= spin();
}

bool ProgressDriver::sleep_past(std::uint64_t seen, int timeout_ms) const {
  sleepers_.fetch_add(1, std::memory_order_seq_cst);  // Dekker with wake_waiters, all seq_cst
  bool moved = false;
  {
    std::unique_lock lock(sleep_mu_);
    moved = sleep_cv_.wait_for(lock, std::chrono::milliseconds(std::min(timeout_ms, static_cast<int>(cfg_.keepalive_ms))),
                               [&] { return epoch_.load(std::memory_order_seq_cst) != seen; });
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  return moved;
}

Status ProgressDriver::wait_assisted(const RequestPtr& r, int timeout_ms) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  for (std::uint32_t spins = 1; !r->done.load(std::memory_order_acquire); ++spins) {
    if (spins % 16 != 0) continue;
    const auto now = Clock::now();
    if (now > deadline) return Status(Code::kTimeout, "request not done within " + std::to_string(timeout_ms) + " ms");
    if (cfg_.wait == WaitPolicy::kSpin || now - start < spin()) continue;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);  // Dekker with wake_waiters, all seq_cst
    {
      std::unique_lock lock(sleep_mu_);
      sleep_cv_.wait_until(lock, deadline, [&] { return r->done.load(std::memory_order_seq_cst); });
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
  return r->status;
}

Status ProgressDriver::take_assist_error() {
  std::lock_guard lock(assist_error_mu_);
  return std::exchange(assist_error_, Status::Ok());
}

Status ProgressDriver::check_if_due(Clock::time_point now) {
  if (now - last_check_ <= std::chrono::milliseconds(cfg_.keepalive_ms)) return Status::Ok();
  last_check_ = now;
  return target_.check_peers();
}

std::uint32_t ProgressDriver::check_every(std::uint32_t when_blocking) const noexcept {
  // spin_us/4 polls: an idle poll takes well under 1 us, so the spin overshoots by under a quarter.
  if (cfg_.wait == WaitPolicy::kBlock) return when_blocking;
  return cfg_.wait == WaitPolicy::kSpin ? 256 : std::clamp<std::uint32_t>(cfg_.spin_us / 4, 8, 256);
}

Status ProgressDriver::wait(const RequestPtr& r, int timeout_ms) {
  if (assisted_) return wait_assisted(r, timeout_ms);
  // Done already (an eager send), or by the first poll: no clock read, which is a system call
  // on some clock sources (hpet under qemu: 1 us) and would delay the caller's next message.
  if (r->done.load(std::memory_order_acquire)) return r->status;
  Status last = target_.progress_once();
  if (r->done.load(std::memory_order_acquire)) return r->status;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  auto last_progress = start;
  const bool sleepy = cfg_.wait != WaitPolicy::kSpin;
  const std::uint32_t every = check_every(8);
  for (std::uint32_t spins = 1; !r->done; ++spins) {
    Status st = target_.progress_once();
    if (!st.ok()) last = st;
    if (r->done) break;
    if (!target_.idle()) last_progress = Clock::time_point{};  // found work: restart the spin
    if (spins % every != 0) continue;
    const auto now = Clock::now();
    if (last_progress == Clock::time_point{}) last_progress = now;
    if (Status alive = check_if_due(now); !alive.ok()) last = alive;
    if (now > deadline) {
      return Status(Code::kTimeout, "request not done within " + std::to_string(timeout_ms) + " ms" +
                                        (last.ok() ? "" : " (last error: " + last.to_string() + ")"));
    }
    if (sleepy && now - last_progress >= spin()) {
      // Sleeping also lets a soft device (rxe) do its work in the kernel, which busy polling
      // on every CPU would starve. Wake at least at the next liveness check.
      const auto until = std::min(deadline, last_check_ + std::chrono::milliseconds(cfg_.keepalive_ms));
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
      if (Status sl = sleep_for_completion(static_cast<int>(ms)); !sl.ok()) last = sl;
      last_progress = Clock::time_point{};
    }
  }
  return r->status;
}

void ProgressDriver::yield_if_oversubscribed() noexcept {
  if (oversubscribed_ && (++relax_calls_ & 15) == 0) sched_yield();
}

// As in wait(): relax reads the clock every few idle calls, not every call; read on every call it
// cost the MPI layer's ping-pong a quarter of the engine's latency.
Status ProgressDriver::relax_idle(int max_ms) {
  const auto now = Clock::now();
  AUGUR_RETURN_IF_ERROR(check_if_due(now));  // a dead rank is reported, not waited for
  if (relax_idle_since_ == Clock::time_point{}) relax_idle_since_ = now;
  if (cfg_.wait != WaitPolicy::kBlock && now - relax_idle_since_ < std::chrono::microseconds(cfg_.spin_us)) {
    yield_if_oversubscribed();
    return Status::Ok();
  }
  relax_idle_since_ = Clock::time_point{};
  return sleep_for_completion(std::max(1, std::min(max_ms, static_cast<int>(cfg_.keepalive_ms))));
}

Status ProgressDriver::sleep_for_completion(int timeout_ms) {
  timeout_ms = target_.sleep_cap(timeout_ms);
  AUGUR_ASSIGN_OR_RETURN(bool may_sleep, target_.arm_for_sleep());
  if (!may_sleep) return Status::Ok();
  // The assist thread is also woken by commands (wake_fd_); both by a peer's wire-up.
  ++sleeps_;
  pollfd fds[3] = {{target_.event_fd(), POLLIN, 0}, {target_.wire_fd(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
  const int rc = ::poll(fds, assisted_ ? 3 : 2, timeout_ms);  // a negative fd is skipped
  if (rc < 0 && errno != EINTR) return errno_status(errno, "poll(completion channel)");
  if (rc > 0 && (fds[0].revents & POLLIN) != 0) AUGUR_RETURN_IF_ERROR(target_.take_event());
  if (rc > 0 && (fds[1].revents & POLLIN) != 0) AUGUR_RETURN_IF_ERROR(target_.on_wire_event());
  if (rc > 0 && assisted_ && (fds[2].revents & POLLIN) != 0) {
    std::uint64_t n = 0;
    (void)!::read(wake_fd_.get(), &n, sizeof n);
  }
  return Status::Ok();
}

}  // namespace augur::host
