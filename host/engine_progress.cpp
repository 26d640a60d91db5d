// Progress and waiting: the communication-assist thread and its command queue (requests posted by the
// application thread are started there), wait's spin-then-sleep on the completion channel, relax for the
// shim's own wait loops, and the keepalive check that fails peers whose process died. Separate because it
// is about threads and time, not about a protocol: it drives progress_once and the start_* functions and
// knows nothing of the wire.

#include "augur/host/engine.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "engine_internal.h"

namespace augur::host {

Status Engine::start_assist() {
  AUGUR_ASSIGN_OR_RETURN(placement_, choose_assist_core(ctx_->name(), cfg_.assist_core));
  static std::once_flag said;  // once per process, as every engine would say the same
  std::call_once(said, [&] {
    std::fprintf(stderr, "augur: rank %d: assist thread on core %d (CPUs %s): %s\n", rank_, placement_.core,
                 placement_.cpus.c_str(), placement_.why.c_str());
  });
  wake_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_fd_.valid()) return errno_status(errno, "eventfd");
  assist_ = true;
  assist_thread_ = std::thread([this] { assist_main(); });
  return Status::Ok();
}

void Engine::enqueue(Command* c) const {
  // Dekker with assist_sleep, all seq_cst: push (an exchange), then look; it marks itself
  // asleep, then looks at the queue. One of the two sees the other.
  commands_.push(c);
  if (assist_sleeping_.load(std::memory_order_seq_cst)) {
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_.get(), &one, sizeof one);
  }
}

void Engine::call_in_assist(const std::function<void()>& f) const {
  if (!assist_) {
    f();
    return;
  }
  std::atomic<bool> done{false};
  auto* c = new Command;
  c->kind = Command::Kind::kCall;
  c->call = f;
  c->call_done = &done;
  enqueue(c);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);  // Dekker with wake_waiters, all seq_cst
  {
    std::unique_lock lock(sleep_mu_);
    sleep_cv_.wait(lock, [&] { return done.load(std::memory_order_seq_cst); });
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

bool Engine::run_commands() {
  bool any = false;
  while (Command* c = commands_.pop()) {
    any = true;
    switch (c->kind) {
      case Command::Kind::kSend:
        if (Status st = start_send(c->req, c->sbuf, c->len, c->peer, c->tag, c->context, c->synchronous);
            !st.ok() && !c->req->done) {
          finish(*c->req, Path::kNone, st);
        }
        break;
      case Command::Kind::kRecv:
        if (Status st = start_recv(c->req, c->rbuf, c->len, c->peer, c->tag, c->context); !st.ok() && !c->req->done) {
          finish(*c->req, Path::kNone, st);
        }
        break;
      case Command::Kind::kSendV:
        if (Status st = start_send(c->req, nullptr, c->len, c->peer, c->tag, c->context, c->synchronous);
            !st.ok() && !c->req->done) {
          finish(*c->req, Path::kNone, st);
        }
        break;
      case Command::Kind::kRecvV:
        if (Status st = start_recv_layout(c->req, c->peer, c->tag, c->context); !st.ok() && !c->req->done) {
          finish(*c->req, Path::kNone, st);
        }
        break;
      case Command::Kind::kCall:
        c->call();
        c->call_done->store(true, std::memory_order_seq_cst);
        ++completions_;  // wakes the caller
        break;
    }
    delete c;
  }
  return any;
}

void Engine::wake_waiters() {
  if (completions_ == notified_) return;
  notified_ = completions_;
  // Done flags were stored seq_cst: a waiter that registered too late to be seen here sees them.
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
  std::lock_guard lock(sleep_mu_);  // so that no waiter checks its flag and sleeps in between
  sleep_cv_.notify_all();
}

void Engine::assist_main() {
  if (Status st = bind_this_thread(placement_); !st.ok()) {
    std::fprintf(stderr, "augur: rank %d: assist thread not bound: %s\n", rank_, st.to_string().c_str());
  }
  using std::chrono::steady_clock;
  auto idle_since = steady_clock::now();
  const auto spin = std::chrono::microseconds(cfg_.wait == WaitPolicy::kBlock ? 0 : cfg_.spin_us);
  for (std::uint32_t loops = 1; !stop_.load(std::memory_order_acquire); ++loops) {
    const bool commands = run_commands();
    // Errors are delivered to the requests they concern, and kept for the next progress() call:
    // an error that concerns no request (a malformed message, a failed peer) must still reach
    // the program.
    if (Status st = progress_once(); !st.ok()) keep_assist_error(st);
    wake_waiters();
    const bool busy = commands || idle_polls_ == 0;
    if (busy) {
      idle_since = steady_clock::time_point{};
      continue;
    }
    if (loops % 16 != 0) continue;
    const auto now = steady_clock::now();
    if (idle_since == steady_clock::time_point{}) idle_since = now;
    if (now - last_check_ > std::chrono::milliseconds(cfg_.keepalive_ms)) {
      last_check_ = now;
      if (Status st = check_peers(); !st.ok()) keep_assist_error(st);
      wake_waiters();
    }
    if (cfg_.wait != WaitPolicy::kSpin && now - idle_since >= spin) {
      assist_sleep(static_cast<int>(cfg_.keepalive_ms));
      idle_since = steady_clock::time_point{};
    }
  }
}

void Engine::assist_sleep(int timeout_ms) {
  // Dekker with enqueue: say so, then look at the queue; a producer that missed the flag has
  // already pushed, and the look sees it.
  assist_sleeping_.store(true, std::memory_order_seq_cst);
  if (commands_.empty()) (void)sleep_for_completion(timeout_ms);
  assist_sleeping_.store(false, std::memory_order_seq_cst);
}

Status Engine::wait_assisted(const RequestPtr& r, int timeout_ms) {
  using std::chrono::steady_clock;
  const auto start = steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  const auto spin = std::chrono::microseconds(cfg_.wait == WaitPolicy::kBlock ? 0 : cfg_.spin_us);
  for (std::uint32_t spins = 1; !r->done.load(std::memory_order_acquire); ++spins) {
    if (spins % 16 != 0) continue;
    const auto now = steady_clock::now();
    if (now > deadline) return Status(Code::kTimeout, "request not done within " + std::to_string(timeout_ms) + " ms");
    if (cfg_.wait == WaitPolicy::kSpin || now - start < spin) continue;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);  // Dekker with wake_waiters, all seq_cst
    {
      std::unique_lock lock(sleep_mu_);
      sleep_cv_.wait_until(lock, deadline, [&] { return r->done.load(std::memory_order_seq_cst); });
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
  return r->status;
}

Status Engine::progress() {
  if (assist_) {  // the assist thread makes progress; report what it found since the last call
    std::lock_guard lock(assist_error_mu_);
    return std::exchange(assist_error_, Status::Ok());
  }
  return progress_once();
}

void Engine::keep_assist_error(const Status& st) {
  std::lock_guard lock(assist_error_mu_);
  if (assist_error_.ok()) assist_error_ = st;  // the first is the cause; the rest follow from it
}

Status Engine::wait(const RequestPtr& r, int timeout_ms) {
  if (assist_) return wait_assisted(r, timeout_ms);
  // Done already (an eager send), or by the first poll: no clock read, which is a system call
  // on some clock sources (hpet under qemu: 1 us) and would delay the caller's next message.
  if (r->done.load(std::memory_order_acquire)) return r->status;
  Status last = progress_once();
  if (r->done.load(std::memory_order_acquire)) return r->status;
  using std::chrono::steady_clock;
  const auto start = steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  const auto spin = std::chrono::microseconds(cfg_.wait == WaitPolicy::kBlock ? 0 : cfg_.spin_us);
  auto last_progress = start;
  const bool sleepy = cfg_.wait != WaitPolicy::kSpin;
  // The clock is read every `check_every` polls, not every poll: a read can be a system call
  // (hpet under qemu: ~1 us), and a completion that lands during one waits for it. An idle poll
  // takes well under 1 us, so spin_us/4 polls overshoot the spin by less than a quarter.
  const std::uint32_t check_every =
      cfg_.wait == WaitPolicy::kBlock ? 8 : std::clamp<std::uint32_t>(sleepy ? cfg_.spin_us / 4 : 256, 8, 256);
  for (std::uint32_t spins = 1; !r->done; ++spins) {
    Status st = progress_once();
    if (!st.ok()) last = st;
    if (r->done) break;
    if (idle_polls_ == 0) last_progress = steady_clock::time_point{};  // found work: restart the spin
    if (spins % check_every != 0) continue;
    const auto now = steady_clock::now();
    if (last_progress == steady_clock::time_point{}) last_progress = now;
    if (now - last_check_ > std::chrono::milliseconds(cfg_.keepalive_ms)) {
      last_check_ = now;
      if (Status alive = check_peers(); !alive.ok()) last = alive;
    }
    if (now > deadline) {
      return Status(Code::kTimeout, "request not done within " + std::to_string(timeout_ms) + " ms" +
                                        (last.ok() ? "" : " (last error: " + last.to_string() + ")"));
    }
    if (sleepy && now - last_progress >= spin) {
      // Sleeping also lets a soft device (rxe) do its work in the kernel, which busy polling
      // on every CPU would starve. Wake at least at the next liveness check.
      const auto until = std::min(deadline, last_check_ + std::chrono::milliseconds(cfg_.keepalive_ms));
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
      if (Status sl = sleep_for_completion(static_cast<int>(ms)); !sl.ok()) last = sl;
      last_progress = steady_clock::time_point{};
    }
  }
  return r->status;
}

Status Engine::relax(int max_ms) {
  using std::chrono::steady_clock;
  const bool busy = idle_polls_ == 0;  // the last poll found work: keep polling
  if (busy) {
    relax_idle_since_ = steady_clock::time_point{};
    relax_idle_calls_ = 0;
  }
  // As in wait(): the clock is read every `check_every` idle calls, not every call. A read can be
  // a system call (hpet under qemu: ~1 us) that a completion landing meanwhile waits for; read
  // on every call it cost the MPI layer's ping-pong a quarter of the engine's latency.
  const std::uint32_t check_every =
      cfg_.wait == WaitPolicy::kBlock ? 1 : std::clamp<std::uint32_t>(cfg_.spin_us / 4, 8, 256);
  if (assist_ || cfg_.wait == WaitPolicy::kSpin || busy || ++relax_idle_calls_ % check_every != 0) {
    if (oversubscribed_ && (++relax_calls_ & 15) == 0) sched_yield();  // ranks share cores
    return Status::Ok();
  }
  const auto now = steady_clock::now();
  if (now - last_check_ > std::chrono::milliseconds(cfg_.keepalive_ms)) {  // a dead rank is reported, not waited for
    last_check_ = now;
    AUGUR_RETURN_IF_ERROR(check_peers());
  }
  if (relax_idle_since_ == steady_clock::time_point{}) relax_idle_since_ = now;
  if (cfg_.wait == WaitPolicy::kHybrid && now - relax_idle_since_ < std::chrono::microseconds(cfg_.spin_us)) {
    if (oversubscribed_ && (++relax_calls_ & 15) == 0) sched_yield();
    return Status::Ok();
  }
  relax_idle_since_ = steady_clock::time_point{};
  return sleep_for_completion(std::max(1, std::min(max_ms, static_cast<int>(cfg_.keepalive_ms))));
}

Status Engine::sleep_for_completion(int timeout_ms) {
  for (const Peer& p : peers_) {
    // Queued sends wait for credits, which a peer may return by RDMA WRITE alone: no completion
    // would wake us, so sleep briefly (rare: a flood against a holding receiver).
    if (!p.out.empty() && !p.dead) timeout_ms = std::min(timeout_ms, 1);
  }
  AUGUR_RETURN_IF_ERROR(cq_->request_notify());
  // A completion that arrived before the request raised no event: look once more.
  AUGUR_RETURN_IF_ERROR(progress_once());
  if (idle_polls_ == 0) return Status::Ok();
  // The assist thread is also woken by commands (wake_fd_); an application thread only by the CQ.
  pollfd fds[2] = {{events_->fd(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
  const int rc = ::poll(fds, assist_ ? 2 : 1, timeout_ms);
  if (rc < 0 && errno != EINTR) return errno_status(errno, "poll(completion channel)");
  if (rc > 0 && (fds[0].revents & POLLIN) != 0) AUGUR_RETURN_IF_ERROR(cq_->consume_event(*events_));
  if (rc > 0 && assist_ && (fds[1].revents & POLLIN) != 0) {
    std::uint64_t n = 0;
    (void)!::read(wake_fd_.get(), &n, sizeof n);
  }
  return Status::Ok();
}

Status Engine::check_peers() {
  // A dying process closes its bootstrap connection; the server tells everyone which rank it
  // was. (RC retries cannot be relied on: rxe never times out a send to a vanished QP.)
  int dead = -1;
  Status st = boot_.check_alive(&dead);
  if (st.ok()) return st;
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_ || (dead >= 0 && peer != dead)) continue;
    (void)fail_peer(peer, st);
  }
  return st;
}

}  // namespace augur::host
