// Running collective coroutines: transfers, blocking runs and nonblocking requests.
#include "coll_task.h"

#include <new>
#include <string>

namespace augur::mpi {

void CollTask::promise_type::unhandled_exception() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    result = err(MPI_ERR_NO_MEM, "out of memory in a collective");
  } catch (...) {
    result = err(MPI_ERR_INTERN, "internal error in a collective");
  }
}

namespace {
// Free lists of coroutine frames by size class (64-byte steps up to 4 KiB; larger frames go to
// the heap). Calls into the shim are serialized (MPI_THREAD_SERIALIZED at most), so no lock.
constexpr std::size_t kClassBytes = 64, kClasses = 64;
struct FreeFrame {
  FreeFrame* next;
};
FreeFrame* g_free[kClasses] = {};
std::size_t class_of(std::size_t n) { return (n + kClassBytes - 1) / kClassBytes; }
}  // namespace

void* CollTask::promise_type::operator new(std::size_t n) {
  const std::size_t k = class_of(n);
  if (k >= kClasses) return ::operator new(n);
  if (FreeFrame* f = g_free[k]) {
    g_free[k] = f->next;
    return f;
  }
  return ::operator new(k * kClassBytes);
}

void CollTask::promise_type::operator delete(void* p, std::size_t n) noexcept {
  const std::size_t k = class_of(n);
  if (k >= kClasses) {
    ::operator delete(p);
    return;
  }
  auto* f = static_cast<FreeFrame*>(p);
  f->next = g_free[k];
  g_free[k] = f;
}

Req& Xfer::add() {
  if (n_ < kInline) return inline_[n_++];
  ++n_;
  return more_.emplace_back();
}

Xfer& Xfer::send(const void* buf, std::int64_t count, const TypePtr& t, int dest, int tag) {
  if (!start_err_.ok()) return *this;
  start_err_ = start_send(add(), buf, count, t, dest, x_->tag(tag), x_->c, x_->c->coll_ctx());
  return *this;
}

Xfer& Xfer::recv(void* buf, std::int64_t count, const TypePtr& t, int src, int tag) {
  if (!start_err_.ok()) return *this;
  start_err_ = start_recv(add(), buf, count, t, src, x_->tag(tag), x_->c, x_->c->coll_ctx());
  return *this;
}

bool Xfer::done() const {
  if (!start_err_.ok()) return true;
  for (std::size_t i = 0; i < n_ && i < kInline; ++i) {
    if (!req_done(inline_[i])) return false;
  }
  for (const Req& r : more_) {
    if (!req_done(r)) return false;
  }
  return true;
}

Err Xfer::await_resume() {
  if (!start_err_.ok()) return start_err_;
  Err first;
  each([&](Req& r) {
    MPI_Status st{};
    Err e = req_finish(r, &st);
    if (e.ok() && r.kind == ReqKind::kRecv && !r.proc_null) {
      const std::int64_t got = status_count(&st);
      if (got != r.count * r.type->size) {
        e = err(MPI_ERR_TRUNCATE, "collective arguments do not match: expected " + std::to_string(r.count * r.type->size) +
                                      " bytes from rank " + std::to_string(st.MPI_SOURCE) + ", got " + std::to_string(got));
      }
    }
    if (!e.ok() && first.ok()) first = e;
  });
  return first;
}

CollOp::CollOp(CollTask t) : task_(std::move(t)) {
  chain_.leaf = task_.handle();
  task_.handle().promise().chain = &chain_;
}

bool CollOp::step() {
  if (running_) return false;
  running_ = true;
  while (!task_.handle().done() && (chain_.waiting == nullptr || chain_.waiting->done()) &&
         (chain_.gate == nullptr || chain_.gate(chain_.gate_arg))) {
    chain_.waiting = nullptr;
    chain_.gate = nullptr;
    chain_.leaf.resume();
  }
  running_ = false;
  return task_.handle().done();
}

Err run_blocking(CollTask t) {
  CollOp op(std::move(t));
  AUGUR_ERR_RETURN(wait_until([&] { return op.step(); }));
  return op.result();
}

Err start_collective(const Coll& x, CollTask t, MPI_Request* request) {
  auto op = std::make_shared<CollOp>(std::move(t));
  auto r = std::make_shared<Req>();
  r->kind = ReqKind::kColl;
  r->comm = x.c;
  r->coll = op;
  if (!op->step()) {
    S().colls.push_back(std::move(op));
    S().colls_pending.store(true, std::memory_order_release);  // the assist thread may step it now
  }
  *request = new_req(std::move(r));
  return ok();
}

int next_tag_base(Comm& c) {
  c.nbc_seq = (c.nbc_seq + 1) % (1u << 24);  // tags stay below 2^30 + 64
  return kTagsPerCall * (1 + static_cast<int>(c.nbc_seq));
}

}  // namespace augur::mpi
