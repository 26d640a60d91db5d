// The engine's side of progress: what the progress driver (host/progress.cpp) drives. Starting
// the assist thread where it belongs, the commands application threads hand it (requests started
// there), arming the CQ before a sleep, and the keepalive check that fails peers whose process
// died. When to poll, sleep or check is the driver's decision.

#include "augur/host/engine.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <utility>

#include "engine_internal.h"

namespace augur::host {

Status Engine::wait(const RequestPtr& r, int timeout_ms) { return driver_.wait(r, timeout_ms); }
Status Engine::progress() {
  if (driver_.assisted()) return driver_.take_assist_error();  // the assist thread makes progress
  AUGUR_RETURN_IF_ERROR(progress_once());  // called directly: this is every poll of an MPI wait loop
  return driver_.after_round();
}
// Assisted, idle() is the assist thread's state (and relax only yields then): not read.
Status Engine::relax(int max_ms) { return driver_.relax(max_ms, driver_.assisted() || idle()); }

Status Engine::start_assist() {
  AUGUR_ASSIGN_OR_RETURN(placement_, choose_assist_core(ctx_->name(), cfg_.assist_core));
  static std::once_flag said;  // once per process, as every engine would say the same
  std::call_once(said, [&] {
    std::fprintf(stderr, "augur: rank %d: assist thread on core %d (CPUs %s): %s\n", rank_, placement_.core,
                 placement_.cpus.c_str(), placement_.why.c_str());
  });
  return driver_.start_assist(placement_, rank_);
}

void Engine::enqueue(Command::Kind kind, Command::Op op) const {
  auto* c = new Command;
  c->kind = kind;
  c->op = std::move(op);
  driver_.enqueue(c);
}

void Engine::queue_call(const std::function<void()>& f) const {
  std::atomic<bool> done{false};
  auto* c = new Command;
  c->call = f;
  c->call_done = &done;
  driver_.enqueue(c);
  driver_.wait_for_flag(done);
}

bool Engine::run_commands() {
  bool any = false;
  while (AssistCommand* next = driver_.next_command()) {
    any = true;
    auto* c = static_cast<Command*>(next);
    const Command::Op& o = c->op;
    Status st;
    switch (c->kind) {
      case Command::Kind::kSend:
        st = start_send(o.req, o.sbuf, o.len, o.peer, o.tag, o.context, o.synchronous, o.releasable);
        break;
      case Command::Kind::kRecv:
        st = start_recv(o.req, o.rbuf, o.len, o.peer, o.tag, o.context);
        break;
      case Command::Kind::kSendV:
        st = start_send(o.req, nullptr, o.len, o.peer, o.tag, o.context, o.synchronous);
        break;
      case Command::Kind::kRecvV:
        st = start_recv_layout(o.req, o.peer, o.tag, o.context);
        break;
      case Command::Kind::kCall:
        c->call();
        c->call_done->store(true, std::memory_order_seq_cst);
        driver_.note_completion();  // wakes the caller
        break;
    }
    if (!st.ok() && !o.req->done) finish(*o.req, Path::kNone, st);
    delete c;
  }
  return any;
}

int Engine::sleep_cap(int timeout_ms) const noexcept {
  for (int peer : active_) {
    const Peer& p = peers_[static_cast<std::size_t>(peer)];
    // Queued sends wait for credits, which a peer may return by RDMA WRITE alone: no completion
    // would wake us, so sleep briefly (rare: a flood against a holding receiver).
    if (!p.out.empty() && !p.dead) return std::min(timeout_ms, 1);
  }
  return timeout_ms;
}

Result<bool> Engine::arm_for_sleep() {
  AUGUR_RETURN_IF_ERROR(cq_->request_notify());
  // A completion that arrived before the request raised no event: look once more.
  AUGUR_RETURN_IF_ERROR(progress_once());
  // Grants not yet written go out before we sleep, whatever the idle count: a sender stalled for
  // them gets no completion when they come, and would otherwise wait for our next wake-up (found
  // as a 120 s hang of the loopback engine test on a loaded host).
  for (int peer : active_) {
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    if (p.dead || !p.ready) continue;
    if (Status st = p.ch->flush_credits(); !st.ok()) return fail_peer(peer, unreachable(peer, st));
  }
  return idle();
}

Status Engine::take_event() { return cq_->consume_event(*events_); }

int Engine::event_fd() const noexcept { return events_->fd(); }

Status Engine::check_peers() {
  // A dying process closes its bootstrap connection; the server tells everyone which rank it
  // was. (RC retries cannot be relied on: rxe never times out a send to a vanished QP.)
  // A QP that broke with nothing in flight flushes nothing (its receives are the SRQ's): ask.
  Status first;
  for (std::size_t i = 0; i < active_.size(); ++i) {
    const int peer = active_[i];
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    if (p.dead) continue;
    Result<bool> broken = p.ch->broken();
    if (broken.ok() && !*broken) continue;
    Status why = broken.ok() ? Status(Code::kIo, "its queue pair is in the error state") : broken.status();
    Status failed = fail_peer(peer, unreachable(peer, why));
    if (first.ok()) first = failed;
  }
  if (!first.ok()) return first;
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
