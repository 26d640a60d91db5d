// Point-to-point: typed sends and receives on host::Engine (contiguous data goes straight from
// and to the user buffer; other types go by the engine's gather/scatter lists when their runs
// are few (AUGUR_SGE_MAX_RUNS), else are packed into, or received into and unpacked from, a
// temporary), requests and their completion functions, probe, buffered and persistent modes.
#include <sched.h>

#include <climits>
#include <cstring>
#include <string>

#include <string_view>

#include "coll_task.h"
#include "shim.h"

namespace augur::mpi {

std::int64_t status_count(const MPI_Status* st) {
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(st->augur_count_hi)) << 32) |
                                   static_cast<std::uint32_t>(st->augur_count_lo));
}

namespace {
void set_count(MPI_Status* st, std::int64_t n) {
  st->augur_count_lo = static_cast<int>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(n) & 0xffffffffu));
  st->augur_count_hi = static_cast<int>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(n) >> 32));
}
bool ignore(const MPI_Status* st) { return st == MPI_STATUS_IGNORE || st == nullptr; }

// The runs of `count` copies of `t` (offsets from the buffer pointer, packed order, adjacent
// ones merged), if there are few enough for the engine's gather/scatter lists; else empty: pack.
std::vector<relations::ByteRun> runs_of(std::int64_t count, const Type& t) {
  std::vector<relations::ByteRun> out;
  const std::uint64_t limit = S().engine->max_layout_runs();
  // Copies may merge (a resized type whose runs abut), so look a little past the limit.
  if (limit < 2 || static_cast<std::uint64_t>(count) * t.runs.size() > 4 * limit) return out;
  for (std::int64_t k = 0; k < count; ++k) {
    for (const relations::ByteRun& run : t.runs) {
      if (run.length == 0) continue;
      const std::int64_t at = k * t.extent + run.offset;
      if (!out.empty() && out.back().offset + out.back().length == at) {
        out.back().length += run.length;
      } else {
        out.push_back({at, run.length});
        if (out.size() > limit) return {};
      }
    }
  }
  return out;
}
}  // namespace

void set_status_empty(MPI_Status* st) {
  if (ignore(st)) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->augur_cancelled = 0;
  set_count(st, 0);
}

Err start_send(Req& r, const void* buf, std::int64_t count, const TypePtr& t, int peer, int tag, const CommPtr& c,
               std::uint32_t ctx, bool synchronous, bool releasable) {
  r.kind = ReqKind::kSend;
  r.type = t;
  r.comm = c;
  r.count = count;
  r.er.reset();
  r.proc_null = peer == MPI_PROC_NULL;
  r.done_local = r.proc_null;
  if (r.proc_null) return ok();
  const std::int64_t n = count * t->size;
  const void* data = nullptr;
  if (n > 0 && t->contig) {
    data = static_cast<const std::byte*>(buf) + t->runs[0].offset;
  } else if (std::vector<relations::ByteRun> runs = n > 0 ? runs_of(count, *t) : std::vector<relations::ByteRun>{};
             !runs.empty()) {
    // The engine only reads through a send layout's base.
    const relations::Layout from{static_cast<std::byte*>(const_cast<void*>(buf)), runs};
    auto er = S().engine->isendv(from, c->peer_world(peer), tag, ctx, synchronous);
    if (!er.ok()) return from_status(er.status());
    r.er = std::move(er.value());
    return ok();
  } else if (n > 0) {
    r.tmp.resize(static_cast<std::size_t>(n));
    AUGUR_ERR_RETURN(pack(buf, count, *t, r.tmp.data()));
    data = r.tmp.data();
    releasable = false;  // our copy, not the program's buffer
  }
  auto er = S().engine->isend(data, static_cast<std::size_t>(n), c->peer_world(peer), tag, ctx, synchronous,
                              releasable && ctx == c->p2p_ctx());
  if (!er.ok()) return from_status(er.status());
  r.er = std::move(er.value());
  return ok();
}

Err start_recv(Req& r, void* buf, std::int64_t count, const TypePtr& t, int peer, int tag, const CommPtr& c,
               std::uint32_t ctx, std::uint64_t message) {
  r.kind = ReqKind::kRecv;
  r.type = t;
  r.comm = c;
  r.count = count;
  r.rbuf = buf;
  r.er.reset();
  r.proc_null = peer == MPI_PROC_NULL;
  r.done_local = r.proc_null;
  if (r.proc_null) return ok();
  const std::int64_t n = count * t->size;
  void* land = nullptr;
  r.unpack = n > 0 && !t->contig;
  const int src = peer == MPI_ANY_SOURCE ? host::kAnySource : c->peer_world(peer);
  if (n > 0 && t->contig) {
    land = static_cast<std::byte*>(buf) + t->runs[0].offset;
  } else if (std::vector<relations::ByteRun> runs = n > 0 ? runs_of(count, *t) : std::vector<relations::ByteRun>{};
             !runs.empty()) {
    r.unpack = false;  // scattered by the engine
    const relations::Layout to{static_cast<std::byte*>(buf), runs};
    auto er = message != 0 ? S().engine->imrecvv(message, to)
                           : S().engine->irecvv(to, src, tag == MPI_ANY_TAG ? host::kAnyTag : tag, ctx);
    if (!er.ok()) return from_status(er.status());
    r.er = std::move(er.value());
    return ok();
  } else if (n > 0) {
    r.tmp.resize(static_cast<std::size_t>(n));
    land = r.tmp.data();
  }
  // Early release (AUGUR_EARLY_RELEASE) only for the program's own point-to-point receives into
  // its buffer: a collective's or an unpack's next step would touch the data at once.
  const bool releasable = land != nullptr && !r.unpack && ctx == c->p2p_ctx();
  auto er = message != 0 ? S().engine->imrecv(message, land, static_cast<std::size_t>(n), releasable)
                         : S().engine->irecv(land, static_cast<std::size_t>(n), src, tag == MPI_ANY_TAG ? host::kAnyTag : tag, ctx,
                                             releasable);
  if (!er.ok()) return from_status(er.status());
  r.er = std::move(er.value());
  return ok();
}

bool req_done(const Req& r) {
  if (r.coll) return r.coll->step();  // a nonblocking collective moves on as its transfers complete
  if (r.greq) return r.greq->complete.load(std::memory_order_acquire);  // the program said so (MPI_Grequest_complete)
  return r.done_local || !r.er || r.er->done;
}

Err req_finish(Req& r, MPI_Status* st) {
  if (r.greq) {  // MPI-3.1 12.2: the query callback fills the status, then the free callback
    MPI_Status tmp;
    set_status_empty(&tmp);
    const int q = r.greq->query(r.greq->extra, ignore(st) ? &tmp : st);
    const int f = r.greq->free(r.greq->extra);
    r.greq.reset();
    if (q != MPI_SUCCESS) return err(q, "the generalized request's query callback failed");
    if (f != MPI_SUCCESS) return err(f, "the generalized request's free callback failed");
    return ok();
  }
  if (r.coll) {
    set_status_empty(st);
    Err e = r.coll->result();
    r.coll.reset();
    return e;
  }
  if (r.proc_null || !r.er) {
    if (!ignore(st)) {
      set_status_empty(st);
      if (r.proc_null) st->MPI_SOURCE = MPI_PROC_NULL;
    }
    return ok();
  }
  const host::Request& e = *r.er;
  Err result = e.status.ok() ? ok() : from_status(e.status);
  if (r.kind == ReqKind::kRecv) {
    const std::size_t cap = static_cast<std::size_t>(r.count * r.type->size);
    const std::size_t got = e.length < cap ? e.length : cap;
    if (r.unpack && !e.cancelled) {
      if (Err u = unpack(r.tmp.data(), got, r.rbuf, r.count, *r.type); !u.ok() && result.ok()) result = u;
    }
    if (!ignore(st)) {
      st->MPI_SOURCE = e.cancelled || e.source < 0 ? MPI_ANY_SOURCE : r.comm->peer_rank(e.source);
      st->MPI_TAG = e.cancelled ? MPI_ANY_TAG : e.tag;
      st->augur_cancelled = e.cancelled ? 1 : 0;
      set_count(st, static_cast<std::int64_t>(e.cancelled ? 0 : got));
    }
    if (result.cls == MPI_ERR_TRUNCATE) {
      result.msg = "message of " + std::to_string(e.length) + " bytes from rank " +
                   std::to_string(r.comm->peer_rank(e.source)) + " (tag " +
                   std::to_string(e.tag) + ") does not fit the receive buffer of " + std::to_string(cap) + " bytes";
    }
  } else {
    if (r.kind == ReqKind::kRma && r.unpack && result.ok()) {  // MPI_Rget into a non-contiguous buffer
      result = unpack(r.tmp.data(), r.tmp.size(), r.rbuf, r.count, *r.type);
    }
    if (!ignore(st)) set_status_empty(st);
  }
  r.tmp.clear();
  r.tmp.shrink_to_fit();
  return result;
}

namespace {

Err wait_req(Req& r) {
  return wait_until([&] { return req_done(r); });
}

}  // namespace

}  // namespace augur::mpi

using namespace augur::mpi;

namespace {

// Every argument valid, checked in one pass over the handle tables without building an Err: the
// per-message case. Anything else goes to the checks in check_p2p, which name what is wrong.
// (Under the guests' emulation the step-by-step checks cost about 360 instructions a call.)
bool p2p_args_valid(const void* buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm, bool recv) {
  const State& s = S();
  if (s.initialized == 0 || s.finalized != 0 || count < 0 || comm <= 0 || dt <= 0 || dt == MPI_UB || dt == MPI_LB ||
      static_cast<std::size_t>(comm) >= s.comms.size() || static_cast<std::size_t>(dt) >= s.types.size()) {
    return false;
  }
  const Comm* c = s.comms[static_cast<std::size_t>(comm)].get();
  const Type* t = s.types[static_cast<std::size_t>(dt)].get();
  if (c == nullptr || t == nullptr || !t->committed) return false;
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(std::int64_t{count}, t->size, &bytes) || bytes > kMaxMessageBytes) return false;
  if (buf == nullptr && count > 0 && t->size > 0 && t->true_lb == 0) return false;
  const bool rank_ok = (peer >= 0 && peer < c->peer_size()) || peer == MPI_PROC_NULL || (recv && peer == MPI_ANY_SOURCE);
  const bool tag_ok = (tag >= 0 && tag <= kTagUb) || (recv && tag == MPI_ANY_TAG);
  return rank_ok && tag_ok;
}

Err check_p2p(const void* buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm, bool recv) {
  if (p2p_args_valid(buf, count, dt, peer, tag, comm, recv)) return ok();
  AUGUR_ERR_RETURN(check_running());
  AUGUR_ERR_RETURN(check_comm(comm));
  AUGUR_ERR_RETURN(check_count(count));
  AUGUR_ERR_RETURN(check_type(dt));
  AUGUR_ERR_RETURN(check_bytes(count, *type_of(dt)));
  AUGUR_ERR_RETURN(check_buf(buf, count, *type_of(dt)));
  const Comm& c = *comm_of(comm);
  const bool rank_ok = (peer >= 0 && peer < c.peer_size()) || peer == MPI_PROC_NULL || (recv && peer == MPI_ANY_SOURCE);
  if (!rank_ok) {
    return err(MPI_ERR_RANK, "invalid rank " + std::to_string(peer) + " (" + (c.inter() ? "remote group" : "communicator") + " size " + std::to_string(c.peer_size()) + ")");
  }
  const bool tag_ok = (tag >= 0 && tag <= kTagUb) || (recv && tag == MPI_ANY_TAG);
  if (!tag_ok) return err(MPI_ERR_TAG, "invalid tag " + std::to_string(tag));
  return ok();
}

Req* req_of(MPI_Request h) {
  auto& v = S().reqs;
  if (h <= 0 || static_cast<std::size_t>(h) >= v.size()) return nullptr;
  return v[static_cast<std::size_t>(h)].get();
}

MPI_Comm handle_of(const CommPtr& c) {
  if (!c) return MPI_COMM_WORLD;
  auto& v = S().comms;
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i] == c) return static_cast<MPI_Comm>(i);
  }
  return MPI_COMM_WORLD;
}

// MPI's send modes that reach the engine (buffered mode copies first, then sends in standard).
// Ready mode is sent as standard: a correct program's receive is posted, so nothing differs.
enum class SendMode { kStandard, kSynchronous, kReady };

Err isend_common(SendMode mode, const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                 MPI_Request* request) {
  const bool synchronous = mode == SendMode::kSynchronous;
  if (request == nullptr) return err(MPI_ERR_ARG, "null request pointer");
  *request = MPI_REQUEST_NULL;  // a program that goes on after an error then waits on nothing
  AUGUR_ERR_RETURN(check_p2p(buf, count, dt, dest, tag, comm, false));
  auto r = std::make_shared<Req>();
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(start_send(*r, buf, count, type_ptr(dt), dest, tag, c, c->p2p_ctx(), synchronous));
  *request = new_req(std::move(r));
  return ok();
}

Err irecv_common(void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  if (request == nullptr) return err(MPI_ERR_ARG, "null request pointer");
  *request = MPI_REQUEST_NULL;
  AUGUR_ERR_RETURN(check_p2p(buf, count, dt, source, tag, comm, true));
  auto r = std::make_shared<Req>();
  CommPtr c = comm_ptr(comm);
  AUGUR_ERR_RETURN(start_recv(*r, buf, count, type_ptr(dt), source, tag, c, c->p2p_ctx()));
  *request = new_req(std::move(r));
  return ok();
}

// Completes request *h (done): status, handle release (persistent ones go inactive).
Err finish_handle(MPI_Request* h, MPI_Status* st) {
  Req& r = *req_of(*h);
  Err e = req_finish(r, st);
  if (r.persistent) {
    r.active = false;
    r.er.reset();
    r.done_local = false;
  } else {
    free_req_handle(*h);
    *h = MPI_REQUEST_NULL;
  }
  return e;
}

// Null or inactive: completes at once with an empty status.
bool inert(MPI_Request h) {
  if (h == MPI_REQUEST_NULL) return true;
  const Req* r = req_of(h);
  return r != nullptr && r->persistent && !r->active;
}

Err check_reqs(int count, const MPI_Request* reqs) {
  AUGUR_ERR_RETURN(check_running());
  if (count < 0) return err(MPI_ERR_COUNT, "negative request count");
  if (count > 0 && reqs == nullptr) return err(MPI_ERR_REQUEST, "null request array");
  for (int i = 0; i < count; ++i) {
    if (reqs[i] != MPI_REQUEST_NULL && req_of(reqs[i]) == nullptr) {
      return err(MPI_ERR_REQUEST, "invalid request handle " + std::to_string(reqs[i]) + " at index " + std::to_string(i));
    }
  }
  return ok();
}

MPI_Comm comm_of_req(const MPI_Request* reqs, int count) {
  for (int i = 0; i < count; ++i) {
    if (const Req* r = req_of(reqs[i]); r != nullptr) return handle_of(r->comm);
  }
  return MPI_COMM_WORLD;
}

MPI_Status* status_at(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE || statuses == nullptr ? MPI_STATUS_IGNORE : &statuses[i];
}

// One round of a wait loop: progress, then AUGUR_WAIT's idea of waiting.
Err spin() {
  AUGUR_ERR_RETURN(progress_once());
  return relax();
}

}  // namespace

AUGUR_MPI_FN(int, Isend,
             (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request),
             (buf, count, datatype, dest, tag, comm, request)) {
  AUGUR_MPI_CHECK(comm, "MPI_Isend", isend_common(SendMode::kStandard, buf, count, datatype, dest, tag, comm, request));
  return MPI_SUCCESS;
}

// Synchronous mode always goes by rendezvous (the receiver's FIN completes it); ready mode uses
// the standard protocol, which is valid for it.
AUGUR_MPI_FN(int, Issend,
             (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request),
             (buf, count, datatype, dest, tag, comm, request)) {
  AUGUR_MPI_CHECK(comm, "MPI_Issend", isend_common(SendMode::kSynchronous, buf, count, datatype, dest, tag, comm, request));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Irsend,
             (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request),
             (buf, count, datatype, dest, tag, comm, request)) {
  AUGUR_MPI_CHECK(comm, "MPI_Irsend", isend_common(SendMode::kReady, buf, count, datatype, dest, tag, comm, request));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Irecv,
             (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request),
             (buf, count, datatype, source, tag, comm, request)) {
  AUGUR_MPI_CHECK(comm, "MPI_Irecv", irecv_common(buf, count, datatype, source, tag, comm, request));
  return MPI_SUCCESS;
}

namespace {
int blocking_send(const char* fn, SendMode mode, const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm) {
  AUGUR_MPI_CHECK(comm, fn, check_p2p(buf, count, datatype, dest, tag, comm, false));
  Req r;
  CommPtr c = comm_ptr(comm);
  // Early release (AUGUR_EARLY_RELEASE with an assist thread) only here, for blocking sends: a
  // nonblocking send done at once would let a program that tests it store into its buffer, and
  // wait there, where without the mode it would have gone on to other work.
  const bool releasable = mode != SendMode::kSynchronous && !windows_open();
  AUGUR_MPI_CHECK(comm, fn,
                  start_send(r, buf, count, type_ptr(datatype), dest, tag, c, c->p2p_ctx(), mode == SendMode::kSynchronous,
                             releasable));
  AUGUR_MPI_CHECK(comm, fn, wait_req(r));
  AUGUR_MPI_CHECK(comm, fn, req_finish(r, MPI_STATUS_IGNORE));
  return MPI_SUCCESS;
}
}  // namespace

AUGUR_MPI_FN(int, Send, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
             (buf, count, datatype, dest, tag, comm)) {
  return blocking_send("MPI_Send", SendMode::kStandard, buf, count, datatype, dest, tag, comm);
}

AUGUR_MPI_FN(int, Ssend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
             (buf, count, datatype, dest, tag, comm)) {
  return blocking_send("MPI_Ssend", SendMode::kSynchronous, buf, count, datatype, dest, tag, comm);
}

AUGUR_MPI_FN(int, Rsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
             (buf, count, datatype, dest, tag, comm)) {
  return blocking_send("MPI_Rsend", SendMode::kReady, buf, count, datatype, dest, tag, comm);
}

AUGUR_MPI_FN(int, Recv,
             (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status),
             (buf, count, datatype, source, tag, comm, status)) {
  const char* fn = "MPI_Recv";
  AUGUR_MPI_CHECK(comm, fn, check_p2p(buf, count, datatype, source, tag, comm, true));
  Req r;
  CommPtr c = comm_ptr(comm);
  AUGUR_MPI_CHECK(comm, fn, start_recv(r, buf, count, type_ptr(datatype), source, tag, c, c->p2p_ctx()));
  AUGUR_MPI_CHECK(comm, fn, wait_req(r));
  AUGUR_MPI_CHECK(comm, fn, req_finish(r, status));
  return MPI_SUCCESS;
}

// --- buffered mode ---------------------------------------------------------------------------

AUGUR_MPI_FN(int, Buffer_attach, (void* buffer, int size), (buffer, size)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Buffer_attach", check_running());
  if (S().bsend_buf != nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Buffer_attach", err(MPI_ERR_BUFFER, "a buffer is already attached"));
  }
  if (size < 0 || (buffer == nullptr && size > 0)) {
    return raise(MPI_COMM_WORLD, "MPI_Buffer_attach", err(MPI_ERR_BUFFER, "bad buffer or size"));
  }
  S().bsend_buf = buffer;
  S().bsend_size = size;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Buffer_detach, (void* buffer_addr, int* size), (buffer_addr, size)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Buffer_detach", check_running());
  if (buffer_addr == nullptr || size == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Buffer_detach", err(MPI_ERR_ARG, "null argument"));
  }
  // Blocks until every buffered message has left.
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Buffer_detach", wait_until([] { return S().bsend_used == 0; }));
  std::memcpy(buffer_addr, &S().bsend_buf, sizeof(void*));
  *size = S().bsend_size;
  S().bsend_buf = nullptr;
  S().bsend_size = 0;
  return MPI_SUCCESS;
}

namespace {
// The data is copied at once (it is the library's from now on); the space is accounted against
// the attached buffer, so an overflow is MPI_ERR_BUFFER as the standard requires.
Err bsend_common(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  AUGUR_ERR_RETURN(check_p2p(buf, count, dt, dest, tag, comm, false));
  const Type& t = *type_of(dt);
  const std::int64_t need = count * t.size + MPI_BSEND_OVERHEAD;
  if (dest == MPI_PROC_NULL) return ok();
  if (S().bsend_used + need > S().bsend_size) {
    return err(MPI_ERR_BUFFER, "buffered send of " + std::to_string(need) + " bytes (with overhead) does not fit: " +
                                   std::to_string(S().bsend_size - S().bsend_used) + " of " +
                                   std::to_string(S().bsend_size) + " attached bytes free");
  }
  auto r = std::make_shared<Req>();
  r->tmp.resize(static_cast<std::size_t>(count * t.size));
  AUGUR_ERR_RETURN(pack(buf, count, t, r->tmp.data()));
  // Send the private copy as bytes.
  CommPtr c = comm_ptr(comm);
  auto er = S().engine->isend(r->tmp.data(), r->tmp.size(), c->peer_world(dest), tag, c->p2p_ctx());
  if (!er.ok()) return from_status(er.status());
  r->kind = ReqKind::kSend;
  r->er = std::move(er.value());
  r->type = type_ptr(MPI_BYTE);
  r->comm = c;
  r->count = static_cast<std::int64_t>(r->tmp.size());
  r->bsend_bytes = need;
  S().bsend_used += need;
  S().background.push_back(std::move(r));
  return ok();
}
}  // namespace

AUGUR_MPI_FN(int, Bsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
             (buf, count, datatype, dest, tag, comm)) {
  AUGUR_MPI_CHECK(comm, "MPI_Bsend", bsend_common(buf, count, datatype, dest, tag, comm));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Ibsend,
             (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request),
             (buf, count, datatype, dest, tag, comm, request)) {
  if (request == nullptr) return raise(comm, "MPI_Ibsend", err(MPI_ERR_ARG, "null request pointer"));
  *request = MPI_REQUEST_NULL;
  AUGUR_MPI_CHECK(comm, "MPI_Ibsend", bsend_common(buf, count, datatype, dest, tag, comm));
  auto r = std::make_shared<Req>();
  r->done_local = true;  // the user's buffer is free at once
  r->comm = comm_ptr(comm);
  *request = new_req(std::move(r));
  return MPI_SUCCESS;
}

// --- combined send and receive -----------------------------------------------------------------

AUGUR_MPI_FN(int, Sendrecv,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status),
             (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
              status)) {
  const char* fn = "MPI_Sendrecv";
  AUGUR_MPI_CHECK(comm, fn, check_p2p(sendbuf, sendcount, sendtype, dest, sendtag, comm, false));
  AUGUR_MPI_CHECK(comm, fn, check_p2p(recvbuf, recvcount, recvtype, source, recvtag, comm, true));
  CommPtr c = comm_ptr(comm);
  Req rr, sr;
  AUGUR_MPI_CHECK(comm, fn, start_recv(rr, recvbuf, recvcount, type_ptr(recvtype), source, recvtag, c, c->p2p_ctx()));
  AUGUR_MPI_CHECK(comm, fn, start_send(sr, sendbuf, sendcount, type_ptr(sendtype), dest, sendtag, c, c->p2p_ctx()));
  AUGUR_MPI_CHECK(comm, fn, wait_req(sr));
  AUGUR_MPI_CHECK(comm, fn, req_finish(sr, MPI_STATUS_IGNORE));
  AUGUR_MPI_CHECK(comm, fn, wait_req(rr));
  AUGUR_MPI_CHECK(comm, fn, req_finish(rr, status));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Sendrecv_replace,
             (void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
              MPI_Comm comm, MPI_Status* status),
             (buf, count, datatype, dest, sendtag, source, recvtag, comm, status)) {
  const char* fn = "MPI_Sendrecv_replace";
  AUGUR_MPI_CHECK(comm, fn, check_p2p(buf, count, datatype, dest, sendtag, comm, false));
  AUGUR_MPI_CHECK(comm, fn, check_p2p(buf, count, datatype, source, recvtag, comm, true));
  const Type& t = *type_of(datatype);
  std::vector<std::byte> out(static_cast<std::size_t>(count * t.size));
  AUGUR_MPI_CHECK(comm, fn, pack(buf, count, t, out.data()));
  CommPtr c = comm_ptr(comm);
  Req rr, sr;
  AUGUR_MPI_CHECK(comm, fn, start_recv(rr, buf, count, type_ptr(datatype), source, recvtag, c, c->p2p_ctx()));
  AUGUR_MPI_CHECK(comm, fn, start_send(sr, out.data(), static_cast<std::int64_t>(out.size()), type_ptr(MPI_BYTE),
                                       dest, sendtag, c, c->p2p_ctx()));
  AUGUR_MPI_CHECK(comm, fn, wait_req(sr));
  AUGUR_MPI_CHECK(comm, fn, req_finish(sr, MPI_STATUS_IGNORE));
  AUGUR_MPI_CHECK(comm, fn, wait_req(rr));
  AUGUR_MPI_CHECK(comm, fn, req_finish(rr, status));
  return MPI_SUCCESS;
}

// --- probe -----------------------------------------------------------------------------------

namespace {
// MPI_Iprobe, or with `message` MPI_Improbe: the message is then taken out of matching
// (Engine::improbe) and *message names it until Mrecv/Imrecv.
Err probe_common(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  AUGUR_ERR_RETURN(check_running());
  AUGUR_ERR_RETURN(check_comm(comm));
  const Comm& c = *comm_of(comm);
  if (!((source >= 0 && source < c.peer_size()) || source == MPI_ANY_SOURCE || source == MPI_PROC_NULL)) {
    return err(MPI_ERR_RANK, "invalid source rank " + std::to_string(source));
  }
  if (!((tag >= 0 && tag <= kTagUb) || tag == MPI_ANY_TAG)) return err(MPI_ERR_TAG, "invalid tag " + std::to_string(tag));
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    if (message != nullptr) *message = MPI_MESSAGE_NO_PROC;
    set_status_empty(status);
    if (!ignore(status)) status->MPI_SOURCE = MPI_PROC_NULL;
    return ok();
  }
  augur::host::Request out;
  const int src = source == MPI_ANY_SOURCE ? augur::host::kAnySource : c.peer_world(source);
  const std::int32_t etag = tag == MPI_ANY_TAG ? augur::host::kAnyTag : tag;
  if (message != nullptr) {
    auto taken = S().engine->improbe(src, etag, c.p2p_ctx(), &out);
    if (!taken.ok()) return from_status(taken.status());
    *flag = taken.value() != 0 ? 1 : 0;
    if (*flag) {
      *message = S().next_message++;
      S().messages.emplace(*message, State::Probed{taken.value(), comm, comm_ptr(comm)});
    }
  } else {
    auto found = S().engine->iprobe(src, etag, c.p2p_ctx(), &out);
    if (!found.ok()) return from_status(found.status());
    *flag = found.value() ? 1 : 0;
  }
  if (*flag && !ignore(status)) {
    status->MPI_SOURCE = c.peer_rank(out.source);
    status->MPI_TAG = out.tag;
    status->MPI_ERROR = MPI_SUCCESS;
    status->augur_cancelled = 0;
    set_count(status, static_cast<std::int64_t>(out.length));
  }
  return ok();
}
}  // namespace

AUGUR_MPI_FN(int, Iprobe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status),
             (source, tag, comm, flag, status)) {
  if (flag == nullptr) return raise(comm, "MPI_Iprobe", err(MPI_ERR_ARG, "null flag"));
  AUGUR_MPI_CHECK(comm, "MPI_Iprobe", probe_common(source, tag, comm, flag, nullptr, status));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status* status), (source, tag, comm, status)) {
  int flag = 0;
  for (;;) {
    AUGUR_MPI_CHECK(comm, "MPI_Probe", probe_common(source, tag, comm, &flag, nullptr, status));
    if (flag) return MPI_SUCCESS;
    AUGUR_MPI_CHECK(comm, "MPI_Probe", spin());
  }
}

// ---- Matched probe (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv) ----
// Improbe takes the message out of matching (Engine::improbe); the MPI_Message handle names it
// until Mrecv/Imrecv receives it, which sets the handle to MPI_MESSAGE_NULL.

namespace {
// Starts the receive of *message into r; the handle becomes MPI_MESSAGE_NULL. *on: the
// message's communicator, where errors are raised.
Err mrecv_start(Req& r, void* buf, int count, MPI_Datatype dt, MPI_Message* message, MPI_Comm* on) {
  AUGUR_ERR_RETURN(check_running());
  if (message == nullptr) return err(MPI_ERR_ARG, "null message pointer");
  const auto it = S().messages.find(*message);
  const bool no_proc = *message == MPI_MESSAGE_NO_PROC;
  if (!no_proc && it == S().messages.end()) return err(MPI_ERR_REQUEST, "invalid message handle " + std::to_string(*message));
  if (!no_proc) *on = it->second.handle;
  AUGUR_ERR_RETURN(check_count(count));
  AUGUR_ERR_RETURN(check_type(dt));
  AUGUR_ERR_RETURN(check_bytes(count, *type_of(dt)));
  AUGUR_ERR_RETURN(check_buf(buf, count, *type_of(dt)));
  *message = MPI_MESSAGE_NULL;
  if (no_proc) return start_recv(r, buf, count, type_ptr(dt), MPI_PROC_NULL, 0, comm_ptr(MPI_COMM_SELF), 0);
  const State::Probed m = it->second;
  S().messages.erase(it);
  return start_recv(r, buf, count, type_ptr(dt), MPI_ANY_SOURCE, MPI_ANY_TAG, m.comm, m.comm->p2p_ctx(), m.id);
}
}  // namespace

AUGUR_MPI_FN(int, Improbe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status),
             (source, tag, comm, flag, message, status)) {
  if (flag == nullptr || message == nullptr) return raise(comm, "MPI_Improbe", err(MPI_ERR_ARG, "null flag or message"));
  AUGUR_MPI_CHECK(comm, "MPI_Improbe", probe_common(source, tag, comm, flag, message, status));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status),
             (source, tag, comm, message, status)) {
  if (message == nullptr) return raise(comm, "MPI_Mprobe", err(MPI_ERR_ARG, "null message pointer"));
  int flag = 0;
  for (;;) {
    AUGUR_MPI_CHECK(comm, "MPI_Mprobe", probe_common(source, tag, comm, &flag, message, status));
    if (flag) return MPI_SUCCESS;
    AUGUR_MPI_CHECK(comm, "MPI_Mprobe", spin());
  }
}

AUGUR_MPI_FN(int, Mrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status),
             (buf, count, datatype, message, status)) {
  const char* fn = "MPI_Mrecv";
  Req r;
  MPI_Comm on = MPI_COMM_WORLD;
  AUGUR_MPI_CHECK(on, fn, mrecv_start(r, buf, count, datatype, message, &on));
  AUGUR_MPI_CHECK(on, fn, wait_req(r));
  AUGUR_MPI_CHECK(on, fn, req_finish(r, status));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Imrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request),
             (buf, count, datatype, message, request)) {
  const char* fn = "MPI_Imrecv";
  if (request == nullptr) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null request pointer"));
  *request = MPI_REQUEST_NULL;
  auto r = std::make_shared<Req>();
  MPI_Comm on = MPI_COMM_WORLD;
  AUGUR_MPI_CHECK(on, fn, mrecv_start(*r, buf, count, datatype, message, &on));
  *request = new_req(std::move(r));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Get_count, (const MPI_Status* status, MPI_Datatype datatype, int* count),
             (status, datatype, count)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Get_count", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Get_count", check_type(datatype, false));
  if (ignore(status) || count == nullptr) return raise(MPI_COMM_WORLD, "MPI_Get_count", err(MPI_ERR_ARG, "null argument"));
  const std::int64_t bytes = status_count(status);
  const std::int64_t size = type_of(datatype)->size;
  if (size == 0) {
    *count = 0;
  } else {
    // MPI_UNDEFINED also when the count does not fit an int (a message of up to 4 GiB - 1 bytes).
    *count = bytes % size != 0 || bytes / size > INT_MAX ? MPI_UNDEFINED : static_cast<int>(bytes / size);
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Get_elements, (const MPI_Status* status, MPI_Datatype datatype, int* count),
             (status, datatype, count)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Get_elements", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Get_elements", check_type(datatype, false));
  if (ignore(status) || count == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Get_elements", err(MPI_ERR_ARG, "null argument"));
  }
  const Type& t = *type_of(datatype);
  const std::int64_t bytes = status_count(status);
  const std::int64_t es = elem_size(t.elem);
  if (t.size == 0) {
    *count = 0;
  } else if (es > 0) {
    *count = bytes % es != 0 || bytes / es > INT_MAX ? MPI_UNDEFINED : static_cast<int>(bytes / es);
  } else {
    const std::int64_t n = bytes / t.size * t.nelems;  // nelems <= size: no overflow
    *count = bytes % t.size != 0 || n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  }
  return MPI_SUCCESS;
}

// --- completion ------------------------------------------------------------------------------

AUGUR_MPI_FN(int, Wait, (MPI_Request * request, MPI_Status* status), (request, status)) {
  if (request == nullptr) return raise(MPI_COMM_WORLD, "MPI_Wait", err(MPI_ERR_REQUEST, "null request pointer"));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Wait", check_reqs(1, request));
  if (inert(*request)) {
    set_status_empty(status);
    return MPI_SUCCESS;
  }
  const MPI_Comm comm = comm_of_req(request, 1);
  AUGUR_MPI_CHECK(comm, "MPI_Wait", wait_req(*req_of(*request)));
  AUGUR_MPI_CHECK(comm, "MPI_Wait", finish_handle(request, status));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Test, (MPI_Request * request, int* flag, MPI_Status* status), (request, flag, status)) {
  if (request == nullptr || flag == nullptr) return raise(MPI_COMM_WORLD, "MPI_Test", err(MPI_ERR_ARG, "null argument"));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Test", check_reqs(1, request));
  if (inert(*request)) {
    *flag = 1;
    set_status_empty(status);
    return MPI_SUCCESS;
  }
  const MPI_Comm comm = comm_of_req(request, 1);
  AUGUR_MPI_CHECK(comm, "MPI_Test", progress_once());
  *flag = req_done(*req_of(*request)) ? 1 : 0;
  if (*flag) AUGUR_MPI_CHECK(comm, "MPI_Test", finish_handle(request, status));
  return MPI_SUCCESS;
}

namespace {
// Completes every done request of the list (all of them when `all`); MPI_ERR_IN_STATUS if any
// failed, with each status's MPI_ERROR set.
int finish_many(const char* fn, int count, MPI_Request reqs[], MPI_Status* statuses, const std::vector<int>& which) {
  const MPI_Comm comm = comm_of_req(reqs, count);
  bool failed = false;
  std::string first;
  for (int i : which) {
    MPI_Status* st = status_at(statuses, i);
    Err e = inert(reqs[i]) ? (set_status_empty(st), ok()) : finish_handle(&reqs[i], st);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = e.cls;
    if (!e.ok() && !failed) {
      failed = true;
      first = e.msg;
    }
  }
  if (failed) return raise(comm, fn, err(MPI_ERR_IN_STATUS, first));
  return MPI_SUCCESS;
}
}  // namespace

AUGUR_MPI_FN(int, Waitall, (int count, MPI_Request requests[], MPI_Status* statuses), (count, requests, statuses)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Waitall", check_reqs(count, requests));
  const MPI_Comm comm = comm_of_req(requests, count);
  for (int i = 0; i < count; ++i) {
    AUGUR_MPI_CHECK(comm, "MPI_Waitall",
                    wait_until([&] { return inert(requests[i]) || req_done(*req_of(requests[i])); }));
  }
  std::vector<int> all(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) all[static_cast<std::size_t>(i)] = i;
  return finish_many("MPI_Waitall", count, requests, statuses, all);
}

AUGUR_MPI_FN(int, Testall, (int count, MPI_Request requests[], int* flag, MPI_Status* statuses),
             (count, requests, flag, statuses)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Testall", check_reqs(count, requests));
  if (flag == nullptr) return raise(MPI_COMM_WORLD, "MPI_Testall", err(MPI_ERR_ARG, "null flag"));
  const MPI_Comm comm = comm_of_req(requests, count);
  AUGUR_MPI_CHECK(comm, "MPI_Testall", progress_once());
  for (int i = 0; i < count; ++i) {
    if (!inert(requests[i]) && !req_done(*req_of(requests[i]))) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  std::vector<int> all(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) all[static_cast<std::size_t>(i)] = i;
  return finish_many("MPI_Testall", count, requests, statuses, all);
}

namespace {
// Index of a done active request, -1 if none, MPI_UNDEFINED if none is active.
int find_done(int count, const MPI_Request reqs[]) {
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (inert(reqs[i])) continue;
    any_active = true;
    if (req_done(*req_of(reqs[i]))) return i;
  }
  return any_active ? -1 : MPI_UNDEFINED;
}
}  // namespace

AUGUR_MPI_FN(int, Waitany, (int count, MPI_Request requests[], int* index, MPI_Status* status),
             (count, requests, index, status)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Waitany", check_reqs(count, requests));
  if (index == nullptr) return raise(MPI_COMM_WORLD, "MPI_Waitany", err(MPI_ERR_ARG, "null index"));
  const MPI_Comm comm = comm_of_req(requests, count);
  int i = find_done(count, requests);
  while (i == -1) {
    AUGUR_MPI_CHECK(comm, "MPI_Waitany", spin());
    i = find_done(count, requests);
  }
  *index = i;
  if (i == MPI_UNDEFINED) {
    set_status_empty(status);
    return MPI_SUCCESS;
  }
  AUGUR_MPI_CHECK(comm, "MPI_Waitany", finish_handle(&requests[i], status));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Testany, (int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status),
             (count, requests, index, flag, status)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Testany", check_reqs(count, requests));
  if (index == nullptr || flag == nullptr) return raise(MPI_COMM_WORLD, "MPI_Testany", err(MPI_ERR_ARG, "null argument"));
  const MPI_Comm comm = comm_of_req(requests, count);
  AUGUR_MPI_CHECK(comm, "MPI_Testany", progress_once());
  const int i = find_done(count, requests);
  *flag = i != -1 ? 1 : 0;
  *index = i == -1 ? MPI_UNDEFINED : i;
  if (i == MPI_UNDEFINED) set_status_empty(status);
  if (i >= 0) AUGUR_MPI_CHECK(comm, "MPI_Testany", finish_handle(&requests[i], status));
  return MPI_SUCCESS;
}

namespace {
int some(const char* fn, bool block, int incount, MPI_Request requests[], int* outcount, int indices[],
         MPI_Status* statuses) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_reqs(incount, requests));
  if (outcount == nullptr || (incount > 0 && indices == nullptr)) {
    return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null argument"));
  }
  const MPI_Comm comm = comm_of_req(requests, incount);
  for (;;) {
    AUGUR_MPI_CHECK(comm, fn, progress_once());
    std::vector<int> done;
    bool any_active = false;
    for (int i = 0; i < incount; ++i) {
      if (inert(requests[i])) continue;
      any_active = true;
      if (req_done(*req_of(requests[i]))) done.push_back(i);
    }
    if (!any_active) {
      *outcount = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
    if (!done.empty() || !block) {
      *outcount = static_cast<int>(done.size());
      std::vector<MPI_Status> tmp(done.size());
      for (std::size_t k = 0; k < done.size(); ++k) indices[k] = done[k];
      // Statuses are packed: statuses[k] belongs to indices[k].
      const MPI_Comm c = comm;
      bool failed = false;
      std::string first;
      for (std::size_t k = 0; k < done.size(); ++k) {
        MPI_Status* st = status_at(statuses, static_cast<int>(k));
        Err e = finish_handle(&requests[done[k]], st);
        if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = e.cls;
        if (!e.ok() && !failed) {
          failed = true;
          first = e.msg;
        }
      }
      if (failed) return raise(c, fn, err(MPI_ERR_IN_STATUS, first));
      return MPI_SUCCESS;
    }
    AUGUR_MPI_CHECK(comm, fn, relax());
  }
}
}  // namespace

AUGUR_MPI_FN(int, Waitsome,
             (int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status* statuses),
             (incount, requests, outcount, indices, statuses)) {
  return some("MPI_Waitsome", true, incount, requests, outcount, indices, statuses);
}

AUGUR_MPI_FN(int, Testsome,
             (int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status* statuses),
             (incount, requests, outcount, indices, statuses)) {
  return some("MPI_Testsome", false, incount, requests, outcount, indices, statuses);
}

AUGUR_MPI_FN(int, Request_free, (MPI_Request * request), (request)) {
  if (request == nullptr) return raise(MPI_COMM_WORLD, "MPI_Request_free", err(MPI_ERR_ARG, "null argument"));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Request_free", check_reqs(1, request));
  if (*request == MPI_REQUEST_NULL) {
    return raise(MPI_COMM_WORLD, "MPI_Request_free", err(MPI_ERR_REQUEST, "MPI_REQUEST_NULL"));
  }
  Req& r = *req_of(*request);
  // MPI-3.1 5.12: freeing a nonblocking collective's request is erroneous; it stays valid.
  if (r.kind == ReqKind::kColl) {
    return raise(handle_of(r.comm), "MPI_Request_free",
                 err(MPI_ERR_REQUEST, "a nonblocking collective's request cannot be freed: complete it with a wait or test"));
  }
  if ((!r.persistent || r.active) && !req_done(r)) {
    r.freed = true;
    S().background.push_back(S().reqs[static_cast<std::size_t>(*request)]);
  }
  free_req_handle(*request);
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Request_get_status, (MPI_Request request, int* flag, MPI_Status* status), (request, flag, status)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Request_get_status", check_reqs(1, &request));
  if (flag == nullptr) return raise(MPI_COMM_WORLD, "MPI_Request_get_status", err(MPI_ERR_ARG, "null flag"));
  if (inert(request)) {
    *flag = 1;
    set_status_empty(status);
    return MPI_SUCCESS;
  }
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Request_get_status", progress_once());
  const Req& r = *req_of(request);
  *flag = req_done(r) ? 1 : 0;
  if (*flag && r.greq) {  // the query callback says, and the request stays (12.2)
    MPI_Status tmp;
    set_status_empty(&tmp);
    const int q = r.greq->query(r.greq->extra, ignore(status) ? &tmp : status);
    if (q != MPI_SUCCESS) return raise(MPI_COMM_WORLD, "MPI_Request_get_status", err(q, "the query callback failed"));
    return MPI_SUCCESS;
  }
  if (*flag && !ignore(status)) {
    set_status_empty(status);
    if (r.kind == ReqKind::kRecv && r.er) {
      status->MPI_SOURCE = r.er->cancelled ? MPI_ANY_SOURCE : r.comm->peer_rank(r.er->source);
      status->MPI_TAG = r.er->tag;
      status->augur_cancelled = r.er->cancelled ? 1 : 0;
      const auto cap = static_cast<std::size_t>(r.count * r.type->size);
      set_count(status, static_cast<std::int64_t>(r.er->length < cap ? r.er->length : cap));
    }
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Cancel, (MPI_Request * request), (request)) {
  if (request == nullptr) return raise(MPI_COMM_WORLD, "MPI_Cancel", err(MPI_ERR_ARG, "null argument"));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Cancel", check_reqs(1, request));
  if (*request == MPI_REQUEST_NULL) return raise(MPI_COMM_WORLD, "MPI_Cancel", err(MPI_ERR_REQUEST, "MPI_REQUEST_NULL"));
  Req& r = *req_of(*request);
  if (r.kind == ReqKind::kColl) {  // MPI-3.1 5.12: erroneous
    return raise(handle_of(r.comm), "MPI_Cancel", err(MPI_ERR_REQUEST, "a nonblocking collective cannot be cancelled"));
  }
  if (r.greq) {  // the program's cancel callback, told whether it has completed the request
    const int rc = r.greq->cancel(r.greq->extra, r.greq->complete.load(std::memory_order_acquire) ? 1 : 0);
    if (rc != MPI_SUCCESS) return raise(MPI_COMM_WORLD, "MPI_Cancel", err(rc, "the cancel callback failed"));
    return MPI_SUCCESS;
  }
  // Receives not yet matched are withdrawn; sends are never cancelled (allowed by MPI: the
  // send completes normally and Test_cancelled says false).
  if (r.kind == ReqKind::kRecv && r.er && !r.er->done) (void)S().engine->cancel(r.er);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Grequest_start,
             (MPI_Grequest_query_function * query_fn, MPI_Grequest_free_function* free_fn,
              MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request),
             (query_fn, free_fn, cancel_fn, extra_state, request)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Grequest_start", check_running());
  if (query_fn == nullptr || free_fn == nullptr || cancel_fn == nullptr || request == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Grequest_start", err(MPI_ERR_ARG, "null argument"));
  }
  auto r = std::make_shared<Req>();
  r->kind = ReqKind::kGeneralized;
  r->greq = std::make_shared<Req::Generalized>();
  r->greq->query = query_fn;
  r->greq->free = free_fn;
  r->greq->cancel = cancel_fn;
  r->greq->extra = extra_state;
  *request = new_req(std::move(r));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Grequest_complete, (MPI_Request request), (request)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Grequest_complete", check_running());
  Req* r = request == MPI_REQUEST_NULL ? nullptr : req_of(request);
  if (r == nullptr || !r->greq) {
    return raise(MPI_COMM_WORLD, "MPI_Grequest_complete", err(MPI_ERR_REQUEST, "not a generalized request"));
  }
  r->greq->complete.store(true, std::memory_order_release);
  return MPI_SUCCESS;
}

// For generalized requests and layered libraries: a status filled in by the program.
AUGUR_MPI_FN(int, Status_set_cancelled, (MPI_Status * status, int flag), (status, flag)) {
  if (status == nullptr || status == MPI_STATUS_IGNORE) {
    return raise(MPI_COMM_WORLD, "MPI_Status_set_cancelled", err(MPI_ERR_ARG, "null status"));
  }
  status->augur_cancelled = flag ? 1 : 0;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Status_set_elements_x, (MPI_Status * status, MPI_Datatype datatype, MPI_Count count),
             (status, datatype, count)) {
  const char* fn = "MPI_Status_set_elements";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_type(datatype, false));
  if (status == nullptr || status == MPI_STATUS_IGNORE) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null status"));
  if (count < 0) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_COUNT, "negative count"));
  // `count` basic elements of the type: their bytes (whole copies and a partial one).
  const Type& t = *type_of(datatype);
  const std::int64_t per = t.nelems > 0 ? t.nelems : 1;
  const std::int64_t whole = count / per, rest = count % per;
  std::int64_t bytes = whole * t.size;
  if (rest > 0) bytes += rest * (t.size / per);
  set_count(status, bytes);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Status_set_elements, (MPI_Status * status, MPI_Datatype datatype, int count),
             (status, datatype, count)) {
  return PMPI_Status_set_elements_x(status, datatype, count);
}

AUGUR_MPI_FN(int, Test_cancelled, (const MPI_Status* status, int* flag), (status, flag)) {
  if (ignore(status) || flag == nullptr) return raise(MPI_COMM_WORLD, "MPI_Test_cancelled", err(MPI_ERR_ARG, "null argument"));
  *flag = status->augur_cancelled;
  return MPI_SUCCESS;
}

// --- persistent requests -----------------------------------------------------------------------

namespace {
Err persistent(ReqKind kind, const void* buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
               MPI_Request* request) {
  AUGUR_ERR_RETURN(check_p2p(buf, count, dt, peer, tag, comm, kind == ReqKind::kRecv));
  if (request == nullptr) return err(MPI_ERR_ARG, "null request pointer");
  auto r = std::make_shared<Req>();
  r->kind = kind;
  r->persistent = true;
  r->sbuf = buf;
  r->rbuf = const_cast<void*>(buf);
  r->count = count;
  r->type = type_ptr(dt);
  r->comm = comm_ptr(comm);
  r->peer = peer;
  r->tag = tag;
  *request = new_req(std::move(r));
  return ok();
}
}  // namespace

AUGUR_MPI_FN(int, Send_init,
             (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request),
             (buf, count, datatype, dest, tag, comm, request)) {
  AUGUR_MPI_CHECK(comm, "MPI_Send_init", persistent(ReqKind::kSend, buf, count, datatype, dest, tag, comm, request));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Ssend_init,
             (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request),
             (buf, count, datatype, dest, tag, comm, request)) {
  AUGUR_MPI_CHECK(comm, "MPI_Ssend_init", persistent(ReqKind::kSend, buf, count, datatype, dest, tag, comm, request));
  req_of(*request)->synchronous = true;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Recv_init,
             (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request),
             (buf, count, datatype, source, tag, comm, request)) {
  AUGUR_MPI_CHECK(comm, "MPI_Recv_init", persistent(ReqKind::kRecv, buf, count, datatype, source, tag, comm, request));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Start, (MPI_Request * request), (request)) {
  if (request == nullptr) return raise(MPI_COMM_WORLD, "MPI_Start", err(MPI_ERR_ARG, "null argument"));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Start", check_reqs(1, request));
  Req* r = req_of(*request);
  if (r == nullptr || !r->persistent) {
    return raise(MPI_COMM_WORLD, "MPI_Start", err(MPI_ERR_REQUEST, "not a persistent request"));
  }
  const MPI_Comm comm = handle_of(r->comm);
  if (r->active) return raise(comm, "MPI_Start", err(MPI_ERR_REQUEST, "request is already active"));
  const std::uint32_t ctx = r->comm->p2p_ctx();
  if (r->kind == ReqKind::kSend) {
    AUGUR_MPI_CHECK(comm, "MPI_Start",
                    start_send(*r, r->sbuf, r->count, r->type, r->peer, r->tag, r->comm, ctx, r->synchronous));
  } else {
    AUGUR_MPI_CHECK(comm, "MPI_Start", start_recv(*r, r->rbuf, r->count, r->type, r->peer, r->tag, r->comm, ctx));
  }
  r->active = true;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Startall, (int count, MPI_Request requests[]), (count, requests)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Startall", check_reqs(count, requests));
  for (int i = 0; i < count; ++i) {
    const int rc = PMPI_Start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}
