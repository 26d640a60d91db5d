// The job: MPI_Init/Finalize, errors and error handlers, handle tables, progress.
#include <malloc.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <string>

#include "augur/host/pmix_bootstrap.h"
#include "augur/settings.h"
#include "coll_task.h"
#include "shim.h"

namespace augur::mpi {

State& S() {
  static State* s = new State;  // never destroyed: atexit handlers may still call MPI
  return *s;
}

namespace {

const char* class_name(int cls) {
  switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_TAG: return "MPI_ERR_TAG";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP";
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM";
    case MPI_ERR_INFO: return "MPI_ERR_INFO";
    case MPI_ERR_KEYVAL: return "MPI_ERR_KEYVAL";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
    case MPI_ERR_PROC_FAILED: return "MPI_ERR_PROC_FAILED";
    case MPI_ERR_INFO_KEY: return "MPI_ERR_INFO_KEY";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE";
    case MPI_ERR_INFO_NOKEY: return "MPI_ERR_INFO_NOKEY";
    case MPI_ERR_WIN: return "MPI_ERR_WIN";
    case MPI_ERR_BASE: return "MPI_ERR_BASE";
    case MPI_ERR_SIZE: return "MPI_ERR_SIZE";
    case MPI_ERR_DISP: return "MPI_ERR_DISP";
    case MPI_ERR_LOCKTYPE: return "MPI_ERR_LOCKTYPE";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT";
    case MPI_ERR_RMA_CONFLICT: return "MPI_ERR_RMA_CONFLICT";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC";
    case MPI_ERR_RMA_RANGE: return "MPI_ERR_RMA_RANGE";
    case MPI_ERR_RMA_ATTACH: return "MPI_ERR_RMA_ATTACH";
    case MPI_ERR_RMA_SHARED: return "MPI_ERR_RMA_SHARED";
    case MPI_ERR_RMA_FLAVOR: return "MPI_ERR_RMA_FLAVOR";
    default: return nullptr;
  }
}

const char* class_text(int cls) {
  switch (cls) {
    case MPI_SUCCESS: return "no error";
    case MPI_ERR_BUFFER: return "invalid buffer pointer";
    case MPI_ERR_COUNT: return "invalid count argument";
    case MPI_ERR_TYPE: return "invalid datatype";
    case MPI_ERR_TAG: return "invalid tag";
    case MPI_ERR_COMM: return "invalid communicator";
    case MPI_ERR_RANK: return "invalid rank";
    case MPI_ERR_REQUEST: return "invalid request";
    case MPI_ERR_ROOT: return "invalid root";
    case MPI_ERR_GROUP: return "invalid group";
    case MPI_ERR_OP: return "invalid reduce operation";
    case MPI_ERR_TOPOLOGY: return "invalid topology";
    case MPI_ERR_DIMS: return "invalid dimension argument";
    case MPI_ERR_ARG: return "invalid argument";
    case MPI_ERR_UNKNOWN: return "unknown error";
    case MPI_ERR_TRUNCATE: return "message truncated";
    case MPI_ERR_OTHER: return "other error";
    case MPI_ERR_INTERN: return "internal error";
    case MPI_ERR_IN_STATUS: return "error code is in status";
    case MPI_ERR_PENDING: return "pending request";
    case MPI_ERR_NO_MEM: return "out of memory";
    case MPI_ERR_INFO: return "invalid info";
    case MPI_ERR_KEYVAL: return "invalid key value";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "operation not supported";
    case MPI_ERR_PROC_FAILED: return "a process of the job failed";
    case MPI_ERR_INFO_KEY: return "info key too long or empty";
    case MPI_ERR_INFO_VALUE: return "info value too long or empty";
    case MPI_ERR_INFO_NOKEY: return "no such info key";
    case MPI_ERR_WIN: return "invalid window";
    case MPI_ERR_BASE: return "invalid base address";
    case MPI_ERR_SIZE: return "invalid size";
    case MPI_ERR_DISP: return "invalid displacement";
    case MPI_ERR_LOCKTYPE: return "invalid lock type";
    case MPI_ERR_ASSERT: return "invalid assertion";
    case MPI_ERR_RMA_CONFLICT: return "conflicting accesses to a window";
    case MPI_ERR_RMA_SYNC: return "wrong synchronization of RMA calls";
    case MPI_ERR_RMA_RANGE: return "target memory is not part of the window";
    case MPI_ERR_RMA_ATTACH: return "memory cannot be attached";
    case MPI_ERR_RMA_SHARED: return "memory cannot be shared";
    case MPI_ERR_RMA_FLAVOR: return "the window's flavor does not allow this";
    default: return nullptr;
  }
}

}  // namespace

Err from_status(const Status& s) {
  switch (s.code()) {
    case Code::kOk: return ok();
    case Code::kTruncated: return err(MPI_ERR_TRUNCATE, s.to_string());
    case Code::kPeerFailure: return err(MPI_ERR_PROC_FAILED, s.to_string());
    case Code::kResourceExhausted: return err(MPI_ERR_NO_MEM, s.to_string());
    case Code::kInvalidArgument:
    case Code::kOutOfRange: return err(MPI_ERR_ARG, s.to_string());
    case Code::kUnsupported: return err(MPI_ERR_UNSUPPORTED_OPERATION, s.to_string());
    case Code::kInternal: return err(MPI_ERR_INTERN, s.to_string());
    // No error handler may let the program go on with data it cannot trust (a speculative
    // placement's buffer touched after its message was written): the job stops.
    case Code::kDataLoss: fatal("augur", s.to_string(), 1);
    default: return err(MPI_ERR_OTHER, s.to_string());
  }
}

void fatal(const char* fn, const std::string& msg, int status) {
  std::fflush(stdout);
  if (S().initialized && !S().finalized) {
    std::fprintf(stderr, "augur MPI: rank %d: %s: %s; aborting the job\n", S().world_rank, fn, msg.c_str());
  } else {
    std::fprintf(stderr, "augur MPI: %s: %s; aborting\n", fn, msg.c_str());
  }
  std::fflush(stderr);
  // augurrun sees the exit status and its bootstrap server the lost connection: both stop the
  // other ranks. A PMIx launcher is told.
  if (S().boot) S().boot->abort(status, msg);
  _exit(status);
}

int raise(MPI_Comm comm, const char* fn, const Err& e) {
  State& s = S();
  MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
  MPI_Comm cc = MPI_COMM_WORLD;
  if (s.initialized && !s.finalized) {
    const Comm* c = comm_of(comm);
    if (c != nullptr) cc = comm;
    if (c == nullptr) c = comm_of(MPI_COMM_WORLD);
    if (c != nullptr) eh = c->eh;
  }
  return raise_to(eh, cc, fn, e);
}

int raise_to(MPI_Errhandler eh, int handle, const char* fn, const Err& e) {
  State& s = S();
  if (eh == MPI_ERRORS_RETURN) return e.cls;
  const char* name = class_name(e.cls);
  const std::string text = e.msg + " [" + (name ? name : "?") + "]";
  if (eh != MPI_ERRORS_ARE_FATAL && eh > 0 && static_cast<std::size_t>(eh) < s.errhandlers.size() &&
      s.errhandlers[static_cast<std::size_t>(eh)].fn != nullptr) {
    int code = e.cls;
    s.errhandlers[static_cast<std::size_t>(eh)].fn(&handle, &code);  // MPI_Comm and MPI_Win are both ints
    return e.cls;
  }
  fatal(fn, text, e.cls == MPI_ERR_PROC_FAILED ? kPeerDiedExit : 1);
}

int escaped(const char* fn) {
  fatal(fn, "internal error: an exception reached the C interface");
}

void init_errhandlers() {
  S().errhandlers.assign(3, ErrhandlerObj{});  // NULL, ARE_FATAL, RETURN
}

// --- handle tables -------------------------------------------------------------------------

namespace {
template <typename T>
T* lookup(std::vector<std::shared_ptr<T>>& v, int h) {
  if (h <= 0 || static_cast<std::size_t>(h) >= v.size()) return nullptr;
  return v[static_cast<std::size_t>(h)].get();
}
template <typename T>
int add(std::vector<std::shared_ptr<T>>& v, std::vector<int>& free, std::shared_ptr<T> x) {
  if (v.empty()) v.emplace_back();  // handle 0 is the null handle
  if (!free.empty()) {
    const int h = free.back();
    free.pop_back();
    v[static_cast<std::size_t>(h)] = std::move(x);
    return h;
  }
  v.push_back(std::move(x));
  return static_cast<int>(v.size() - 1);
}
template <typename T>
void release(std::vector<std::shared_ptr<T>>& v, std::vector<int>& free, int h) {
  if (h <= 0 || static_cast<std::size_t>(h) >= v.size() || !v[static_cast<std::size_t>(h)]) return;
  v[static_cast<std::size_t>(h)].reset();
  free.push_back(h);
}
}  // namespace

Comm* comm_of(MPI_Comm c) { return lookup(S().comms, c); }
CommPtr comm_ptr(MPI_Comm c) { return comm_of(c) ? S().comms[static_cast<std::size_t>(c)] : nullptr; }
Type* type_of(MPI_Datatype t) { return lookup(S().types, t); }
TypePtr type_ptr(MPI_Datatype t) { return type_of(t) ? S().types[static_cast<std::size_t>(t)] : nullptr; }
Group* group_of(MPI_Group g) { return lookup(S().groups, g); }
MPI_Group new_group(GroupPtr g) { return add(S().groups, S().free_groups, std::move(g)); }
MPI_Comm new_comm(CommPtr c) { return add(S().comms, S().free_comms, std::move(c)); }
MPI_Datatype new_type(TypePtr t) { return add(S().types, S().free_types, std::move(t)); }
MPI_Request new_req(ReqPtr r) { return add(S().reqs, S().free_reqs, std::move(r)); }
void free_req_handle(MPI_Request h) { release(S().reqs, S().free_reqs, h); }
void free_comm_handle(MPI_Comm c) { release(S().comms, S().free_comms, c); }
void free_type_handle(MPI_Datatype t) { release(S().types, S().free_types, t); }
void free_group_handle(MPI_Group g) { release(S().groups, S().free_groups, g); }

int Group::rank_of_world(int w) const {
  for (std::size_t i = 0; i < world.size(); ++i) {
    if (world[i] == w) return static_cast<int>(i);
  }
  return MPI_UNDEFINED;
}

// --- argument checks -------------------------------------------------------------------------

Err check_running() {
  if (!S().initialized) return err(MPI_ERR_OTHER, "called before MPI_Init");
  if (S().finalized) return err(MPI_ERR_OTHER, "called after MPI_Finalize");
  return ok();
}

Err check_comm(MPI_Comm c) {
  if (comm_of(c) == nullptr) {
    return err(MPI_ERR_COMM, c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "invalid communicator handle " + std::to_string(c));
  }
  return ok();
}

Err check_type(MPI_Datatype t, bool need_commit) {
  const Type* ty = type_of(t);
  if (ty == nullptr || t == MPI_UB || t == MPI_LB) {
    return err(MPI_ERR_TYPE, t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "invalid datatype handle " + std::to_string(t));
  }
  if (need_commit && !ty->committed) return err(MPI_ERR_TYPE, "datatype " + std::to_string(t) + " is not committed");
  return ok();
}

Err check_count(std::int64_t count) {
  if (count < 0) return err(MPI_ERR_COUNT, "negative count " + std::to_string(count));
  return ok();
}

Err check_buf(const void* buf, std::int64_t count, const Type& t) {
  // MPI_BOTTOM (null) is legal with absolute addresses in the datatype.
  if (buf == nullptr && count > 0 && t.size > 0 && t.true_lb == 0) {
    return err(MPI_ERR_BUFFER, "null buffer with count " + std::to_string(count));
  }
  return ok();
}

// --- progress --------------------------------------------------------------------------------

Err progress_once() {
  State& s = S();
  // Every error progress finds reaches the caller: a failed or misbehaving peer, a transport
  // error, a resource refused while delivering, a dead rank (the engine's keepalive check).
  Status st = s.engine->progress();
  if (!st.ok()) return from_status(st);
  // Background requests: buffered sends and freed requests complete on their own.
  for (std::size_t i = 0; i < s.background.size();) {
    Req& r = *s.background[i];
    if (req_done(r)) {
      s.bsend_used -= r.bsend_bytes;
      (void)req_finish(r, MPI_STATUS_IGNORE);
      s.background[i] = s.background.back();
      s.background.pop_back();
    } else {
      ++i;
    }
  }
  step_colls();
  return ok();
}

void step_colls() {
  State& s = S();
  // Not reentered (a user reduction that calls MPI would otherwise edit the list under us).
  if (s.stepping_colls) return;
  s.stepping_colls = true;
  for (std::size_t i = 0; i < s.colls.size();) {
    if (s.colls[i]->step()) {
      s.colls[i] = std::move(s.colls.back());
      s.colls.pop_back();
    } else {
      ++i;
    }
  }
  s.stepping_colls = false;
  s.colls_pending.store(!s.colls.empty(), std::memory_order_release);
}

namespace {
// The assist thread's background work (host::Engine::set_background), after each of its rounds:
// the nonblocking collectives move on while the program computes outside MPI. It takes the
// library's lock only if free: a thread inside MPI steps them itself, and the assist thread
// keeps polling (true: do not sleep) until it gets the lock or they are done.
bool background_colls(void*) {
  if (!S().colls_pending.load(std::memory_order_acquire)) return false;
  if (!threads::try_enter()) return true;
  step_colls();
  threads::leave();
  return false;
}
}  // namespace

namespace threads {
std::atomic<bool> g_multiple{false};
std::atomic<bool> g_locking{false};
namespace {
std::mutex g_lock;
thread_local bool t_holding = false;
}  // namespace
bool enter() {
  if (t_holding) return false;  // a nested call (a callback of ours calling MPI)
  g_lock.lock();
  t_holding = true;
  return true;
}
bool try_enter() {
  if (!g_lock.try_lock()) return false;
  t_holding = true;
  return true;
}
void leave() {
  t_holding = false;
  g_lock.unlock();
}
bool holding() { return t_holding; }
void yield() {
  if (!t_holding) return;
  g_lock.unlock();
  std::this_thread::yield();
  g_lock.lock();
}
void unlocked(const std::function<void()>& f) {
  if (!t_holding) {
    f();
    return;
  }
  g_lock.unlock();
  f();
  g_lock.lock();
}
}  // namespace threads

std::uint64_t completion_epoch() { return S().engine->completion_epoch(); }

Err relax(std::uint64_t seen) {
  // Several threads: the engine is not for sleeping in while the lock is held, and another
  // thread may be about to send what this one waits for. Spin, yielding the lock.
  if (threads::g_multiple.load(std::memory_order_relaxed)) {
    threads::yield();
    return ok();
  }
  host::Engine& e = *S().engine;
  if (e.assisted() && seen != kNoEpoch) {
    // The assist thread makes progress: spin a while, then sleep until it completes something,
    // without the library's lock (it steps nonblocking collectives meanwhile). Without an epoch
    // (a probe, a lock word: what is awaited completes no request) Engine::relax only yields.
    if (e.relax_assisted(seen)) threads::unlocked([&] { e.sleep_past(seen, 1000); });
    return ok();
  }
  Status st = e.relax(1000);
  return st.ok() ? ok() : from_status(st);
}

Err wait_engine(const host::RequestPtr& r) {
  AUGUR_ERR_RETURN(wait_until([&] { return r->done.load(); }));
  return from_status(r->status);
}

}  // namespace augur::mpi

using namespace augur::mpi;

namespace {

int release_enter() {
  if (!threads::g_locking.load(std::memory_order_acquire) || threads::holding()) return 0;
  return threads::try_enter() ? 1 : -1;
}

Err init_job(int required, int* provided) {
  State& s = S();
  if (s.initialized) return err(MPI_ERR_OTHER, s.finalized ? "MPI_Init after MPI_Finalize" : "MPI_Init called twice");
  s.t0 = 0;
  auto addr = augur::setting_string("AUGUR_BOOTSTRAP");
  if (!addr.ok()) return from_status(addr.status());
  auto pmix = augur::setting_choice("AUGUR_PMIX");
  if (!pmix.ok()) return from_status(pmix.status());
  const bool use_pmix = addr.value().empty() && (pmix.value() == "on" ||
                                                 (pmix.value() == "auto" && augur::host::PmixBootstrap::launched_by_pmix()));
  if (use_pmix) {
    // Started by a PMIx launcher (srun --mpi=pmix, Open MPI's mpirun): it knows the job.
    auto secs = augur::setting_int("AUGUR_BOOTSTRAP_TIMEOUT");
    if (!secs.ok()) return from_status(secs.status());
    auto b = augur::host::PmixBootstrap::init(std::chrono::seconds(secs.value()));
    if (!b.ok()) {
      return from_status(b.status().context(pmix.value() == "on" ? "bootstrap (AUGUR_PMIX=on)" : "bootstrap (PMIx: PMIX_NAMESPACE is set)"));
    }
    s.boot = std::move(b.value());
  } else if (addr.value().empty()) {
    // Started without augurrun: a job of one, with its own key-value server.
    auto srv = augur::host::BootstrapServer::start(1, "127.0.0.1", 0, std::chrono::seconds(60));
    if (!srv.ok()) return from_status(srv.status().context("singleton bootstrap"));
    auto b = augur::host::TcpBootstrap::connect("127.0.0.1", srv.value()->port(), 0, 1, std::chrono::seconds(60));
    if (!b.ok()) return from_status(b.status().context("singleton bootstrap"));
    s.own_server = std::move(srv.value());
    s.boot = std::move(b.value());
  } else {
    auto b = augur::host::TcpBootstrap::from_settings();
    if (!b.ok()) return from_status(b.status().context("bootstrap (AUGUR_BOOTSTRAP)"));
    s.boot = std::move(b.value());
  }
  auto cfg = augur::host::engine_config_from_settings();
  if (!cfg.ok()) return from_status(cfg.status());
  auto check = augur::setting_bool("AUGUR_CHECK_COLLECTIVES");
  if (!check.ok()) return from_status(check.status());
  s.check_collectives = check.value();
  auto e = augur::host::Engine::create(*s.boot, cfg.value());
  if (!e.ok()) return from_status(e.status().context("engine"));
  s.engine = std::move(e.value());
  s.world_rank = s.engine->rank();
  s.world_size = s.engine->size();

  init_errhandlers();
  init_predefined_types();
  s.comms.clear();
  s.comms.emplace_back();  // MPI_COMM_NULL
  std::vector<int> all(static_cast<std::size_t>(s.world_size));
  for (int i = 0; i < s.world_size; ++i) all[static_cast<std::size_t>(i)] = i;
  auto world = make_comm(0, all, s.world_rank);
  world->name = "MPI_COMM_WORLD";
  s.comms.push_back(world);
  auto self = make_comm(1, {s.world_rank}, s.world_rank);
  self->name = "MPI_COMM_SELF";
  s.comms.push_back(self);
  s.groups.clear();
  s.groups.emplace_back();                           // MPI_GROUP_NULL
  s.groups.push_back(std::make_shared<Group>());     // MPI_GROUP_EMPTY
  s.thread_level = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE
                   : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                    : required;
  s.main_thread = std::this_thread::get_id();
  // From here on every entry point takes the library's lock (the calling thread is inside
  // MPI_Init_thread without it: its guard was made before; nobody else may call MPI yet).
  threads::g_multiple.store(s.thread_level == MPI_THREAD_MULTIPLE, std::memory_order_release);
  const bool assisted = s.engine->assist_placement() != nullptr;
  threads::g_locking.store(s.thread_level == MPI_THREAD_MULTIPLE || assisted, std::memory_order_release);
  if (assisted) s.engine->set_background(&background_colls, nullptr);
  // A touch of an early-released page waits by polling the engine (in the fault handler): with
  // threads, only while holding the library's lock, or this thread already does (a touch from
  // the library's own code, e.g. packing the buffer).
  if (s.engine->early_release()) s.engine->set_release_lock({&release_enter, &threads::leave});
  if (provided != nullptr) *provided = s.thread_level;
  s.initialized = 1;
  s.t0 = 0;
  return ok();
}

}  // namespace

AUGUR_MPI_FN(int, Init, (int* argc, char*** argv), (argc, argv)) {
  (void)argc;
  (void)argv;
  Err e = init_job(MPI_THREAD_SINGLE, nullptr);
  if (!e.ok()) fatal("MPI_Init", e.msg);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Init_thread, (int* argc, char*** argv, int required, int* provided),
             (argc, argv, required, provided)) {
  (void)argc;
  (void)argv;
  Err e = init_job(required, provided);
  if (!e.ok()) fatal("MPI_Init_thread", e.msg);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Initialized, (int* flag), (flag)) {
  if (flag == nullptr) return raise(MPI_COMM_WORLD, "MPI_Initialized", err(MPI_ERR_ARG, "null flag"));
  *flag = S().initialized;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Finalized, (int* flag), (flag)) {
  if (flag == nullptr) return raise(MPI_COMM_WORLD, "MPI_Finalized", err(MPI_ERR_ARG, "null flag"));
  *flag = S().finalized;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Finalize, (void), ()) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Finalize", check_running());
  State& s = S();
  // MPI_COMM_SELF's attributes are deleted first (programs hook finalization on them, MPI-3.1
  // 8.7.1), then MPI_COMM_WORLD's.
  for (MPI_Comm c : {MPI_COMM_SELF, MPI_COMM_WORLD}) {
    AUGUR_MPI_CHECK(c, "MPI_Finalize", delete_attrs(Keyval::Kind::kComm, c, &comm_of(c)->attrs));
  }
  // Buffered and freed sends still in flight must arrive before the connections go, and nothing
  // may still be owed to a peer (a FIN, a READ, a queued message): Engine::quiet.
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Finalize", wait_until([&] { return s.background.empty() && s.engine->quiet(); }));
  // Every rank leaves only when every rank has arrived. The bootstrap's fence, not a barrier
  // over the channels: that would connect each rank to log2(N) more peers at the very end.
  augur::Status f = s.boot->fence();
  if (!f.ok()) return raise(MPI_COMM_WORLD, "MPI_Finalize", from_status(f));
  s.reqs.clear();
  s.free_reqs.clear();
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Finalize", drop_windows());
  s.engine->set_background(nullptr, nullptr);
  s.engine.reset();
  s.boot.reset();  // says goodbye to the bootstrap server
  if (s.own_server) {
    (void)s.own_server->wait();
    s.own_server.reset();
  }
  s.finalized = 1;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Abort, (MPI_Comm comm, int errorcode), (comm, errorcode)) {
  (void)comm;
  std::fflush(stdout);
  std::fprintf(stderr, "augur MPI: rank %d called MPI_Abort with error code %d; aborting the job\n", S().world_rank,
               errorcode);
  std::fflush(stderr);
  const int status = errorcode == 0 ? 1 : (errorcode & 0xff) == 0 ? 1 : errorcode & 0xff;
  if (S().boot) S().boot->abort(status, "MPI_Abort with error code " + std::to_string(errorcode));
  _exit(status);
}

AUGUR_MPI_FN(double, Wtime, (void), ()) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

AUGUR_MPI_FN(double, Wtick, (void), ()) { return 1e-9; }

AUGUR_MPI_FN(int, Get_processor_name, (char* name, int* resultlen), (name, resultlen)) {
  if (name == nullptr || resultlen == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Get_processor_name", err(MPI_ERR_ARG, "null argument"));
  }
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  std::strncpy(name, host, MPI_MAX_PROCESSOR_NAME - 1);
  name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  *resultlen = static_cast<int>(std::strlen(name));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Get_version, (int* version, int* subversion), (version, subversion)) {
  if (version == nullptr || subversion == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Get_version", err(MPI_ERR_ARG, "null argument"));
  }
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Get_library_version, (char* version, int* resultlen), (version, resultlen)) {
  if (version == nullptr || resultlen == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Get_library_version", err(MPI_ERR_ARG, "null argument"));
  }
  const char* v = "augur MPI 0.1 (MPI 3.1 subset on RDMA verbs)";
  std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "%s", v);
  *resultlen = static_cast<int>(std::strlen(version));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Query_thread, (int* provided), (provided)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Query_thread", check_running());
  if (provided == nullptr) return raise(MPI_COMM_WORLD, "MPI_Query_thread", err(MPI_ERR_ARG, "null argument"));
  *provided = S().thread_level;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Is_thread_main, (int* flag), (flag)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Is_thread_main", check_running());
  if (flag == nullptr) return raise(MPI_COMM_WORLD, "MPI_Is_thread_main", err(MPI_ERR_ARG, "null argument"));
  *flag = std::this_thread::get_id() == S().main_thread ? 1 : 0;
  return MPI_SUCCESS;
}

namespace {
// A code or class made by MPI_Add_error_class/code, or null.
const State::UserError* user_error(int code) {
  const auto& v = S().user_errors;
  if (code <= MPI_ERR_LASTCODE || static_cast<std::size_t>(code - MPI_ERR_LASTCODE - 1) >= v.size()) return nullptr;
  return &v[static_cast<std::size_t>(code - MPI_ERR_LASTCODE - 1)];
}
}  // namespace

AUGUR_MPI_FN(int, Error_string, (int errorcode, char* string, int* resultlen), (errorcode, string, resultlen)) {
  if (string == nullptr || resultlen == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Error_string", err(MPI_ERR_ARG, "null argument"));
  }
  if (const State::UserError* u = user_error(errorcode)) {
    std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", u->text.c_str());
    *resultlen = static_cast<int>(std::strlen(string));
    return MPI_SUCCESS;
  }
  const char* name = class_name(errorcode);
  if (name == nullptr) return raise(MPI_COMM_WORLD, "MPI_Error_string", err(MPI_ERR_ARG, "unknown error code"));
  std::snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", name, class_text(errorcode));
  *resultlen = static_cast<int>(std::strlen(string));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Error_class, (int errorcode, int* errorclass), (errorcode, errorclass)) {
  if (errorclass == nullptr) return raise(MPI_COMM_WORLD, "MPI_Error_class", err(MPI_ERR_ARG, "null argument"));
  if (const State::UserError* u = user_error(errorcode)) {
    *errorclass = u->cls;
    return MPI_SUCCESS;
  }
  if (class_name(errorcode) == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Error_class", err(MPI_ERR_ARG, "unknown error code " + std::to_string(errorcode)));
  }
  *errorclass = errorcode;
  return MPI_SUCCESS;
}

// User error classes and codes: each a code above MPI_ERR_LASTCODE (a class is its own code).
AUGUR_MPI_FN(int, Add_error_class, (int* errorclass), (errorclass)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Add_error_class", check_running());
  if (errorclass == nullptr) return raise(MPI_COMM_WORLD, "MPI_Add_error_class", err(MPI_ERR_ARG, "null argument"));
  auto& v = S().user_errors;
  *errorclass = MPI_ERR_LASTCODE + 1 + static_cast<int>(v.size());
  v.push_back({*errorclass, ""});
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Add_error_code, (int errorclass, int* errorcode), (errorclass, errorcode)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Add_error_code", check_running());
  if (errorcode == nullptr) return raise(MPI_COMM_WORLD, "MPI_Add_error_code", err(MPI_ERR_ARG, "null argument"));
  const State::UserError* u = user_error(errorclass);
  if (class_name(errorclass) == nullptr && (u == nullptr || u->cls != errorclass)) {
    return raise(MPI_COMM_WORLD, "MPI_Add_error_code", err(MPI_ERR_ARG, "not an error class: " + std::to_string(errorclass)));
  }
  auto& v = S().user_errors;
  *errorcode = MPI_ERR_LASTCODE + 1 + static_cast<int>(v.size());
  v.push_back({errorclass, ""});
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Add_error_string, (int errorcode, const char* string), (errorcode, string)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Add_error_string", check_running());
  if (string == nullptr || std::strlen(string) >= MPI_MAX_ERROR_STRING) {
    return raise(MPI_COMM_WORLD, "MPI_Add_error_string", err(MPI_ERR_ARG, "null string or longer than MPI_MAX_ERROR_STRING"));
  }
  if (user_error(errorcode) == nullptr) {  // the predefined codes' strings are fixed
    return raise(MPI_COMM_WORLD, "MPI_Add_error_string", err(MPI_ERR_ARG, "not a user error code: " + std::to_string(errorcode)));
  }
  S().user_errors[static_cast<std::size_t>(errorcode - MPI_ERR_LASTCODE - 1)].text = string;
  return MPI_SUCCESS;
}

namespace {
bool valid_errhandler(MPI_Errhandler eh) {
  const auto& v = S().errhandlers;
  return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN ||
         (eh > 2 && static_cast<std::size_t>(eh) < v.size() && v[static_cast<std::size_t>(eh)].fn != nullptr);
}
}  // namespace

AUGUR_MPI_FN(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler), (comm, errhandler)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_set_errhandler", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_set_errhandler", check_comm(comm));
  if (!valid_errhandler(errhandler)) {
    return raise(comm, "MPI_Comm_set_errhandler", err(MPI_ERR_ARG, "invalid error handler"));
  }
  comm_of(comm)->eh = errhandler;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler), (comm, errhandler)) {
  return PMPI_Comm_set_errhandler(comm, errhandler);
}

AUGUR_MPI_FN(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler* errhandler), (comm, errhandler)) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}

AUGUR_MPI_FN(int, Errhandler_create, (MPI_Handler_function * fn, MPI_Errhandler* errhandler), (fn, errhandler)) {
  return PMPI_Comm_create_errhandler(fn, errhandler);
}

AUGUR_MPI_FN(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler* errhandler), (comm, errhandler)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_get_errhandler", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_get_errhandler", check_comm(comm));
  if (errhandler == nullptr) return raise(comm, "MPI_Comm_get_errhandler", err(MPI_ERR_ARG, "null argument"));
  *errhandler = comm_of(comm)->eh;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_create_errhandler, (MPI_Comm_errhandler_function * fn, MPI_Errhandler* errhandler),
             (fn, errhandler)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Comm_create_errhandler", check_running());
  if (fn == nullptr || errhandler == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Comm_create_errhandler", err(MPI_ERR_ARG, "null argument"));
  }
  S().errhandlers.push_back(ErrhandlerObj{fn});
  *errhandler = static_cast<int>(S().errhandlers.size() - 1);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode), (comm, errorcode)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_call_errhandler", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_call_errhandler", check_comm(comm));
  (void)raise(comm, "MPI_Comm_call_errhandler", err(errorcode, "called by the application"));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Errhandler_free, (MPI_Errhandler * errhandler), (errhandler)) {
  if (errhandler == nullptr) return raise(MPI_COMM_WORLD, "MPI_Errhandler_free", err(MPI_ERR_ARG, "null argument"));
  *errhandler = MPI_ERRHANDLER_NULL;  // handlers stay valid for communicators still using them
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void* baseptr), (size, info, baseptr)) {
  (void)info;
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Alloc_mem", check_running());
  if (size < 0 || baseptr == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Alloc_mem", err(MPI_ERR_ARG, "negative size or null baseptr"));
  }
  // Page-aligned, so the registration cache registers it as whole pages on first use.
  void* p = nullptr;
  if (posix_memalign(&p, 4096, static_cast<std::size_t>(size == 0 ? 1 : size)) != 0) {
    return raise(MPI_COMM_WORLD, "MPI_Alloc_mem", err(MPI_ERR_NO_MEM, "cannot allocate " + std::to_string(size) + " bytes"));
  }
  std::memcpy(baseptr, &p, sizeof p);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Free_mem, (void* base), (base)) {
  std::free(base);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_get_attr, (MPI_Comm comm, int keyval, void* attribute_val, int* flag),
             (comm, keyval, attribute_val, flag)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_get_attr", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_get_attr", check_comm(comm));
  if (attribute_val == nullptr || flag == nullptr) {
    return raise(comm, "MPI_Comm_get_attr", err(MPI_ERR_ARG, "null argument"));
  }
  // Predefined attributes: the value is a pointer to a static int, as the standard says.
  static int tag_ub = kTagUb, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0, universe = 0, appnum = 0,
             last_code = MPI_ERR_LASTCODE;
  universe = S().world_size;
  last_code = MPI_ERR_LASTCODE + static_cast<int>(S().user_errors.size());
  int* v = nullptr;
  switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_UNIVERSE_SIZE: v = &universe; break;
    case MPI_APPNUM: v = &appnum; break;
    case MPI_LASTUSEDCODE: v = &last_code; break;
    default: AUGUR_MPI_CHECK(comm, "MPI_Comm_get_attr", get_comm_attr(comm, keyval, attribute_val, flag)); return MPI_SUCCESS;
  }
  std::memcpy(attribute_val, &v, sizeof v);
  *flag = 1;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Attr_get, (MPI_Comm comm, int keyval, void* attribute_val, int* flag),
             (comm, keyval, attribute_val, flag)) {
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

extern "C" int PMPI_Pcontrol(const int level, ...) {
  (void)level;
  return MPI_SUCCESS;
}
extern "C" decltype(PMPI_Pcontrol) MPI_Pcontrol __attribute__((weak, alias("PMPI_Pcontrol")));

// Handle conversion: C and Fortran handles are the same integers.
#define AUGUR_F2C(kind, ctype)                                                        \
  extern "C" ctype PMPI_##kind##_f2c(MPI_Fint h) { return h; }                        \
  extern "C" MPI_Fint PMPI_##kind##_c2f(ctype h) { return h; }                        \
  extern "C" decltype(PMPI_##kind##_f2c) MPI_##kind##_f2c __attribute__((weak, alias("PMPI_" #kind "_f2c"))); \
  extern "C" decltype(PMPI_##kind##_c2f) MPI_##kind##_c2f __attribute__((weak, alias("PMPI_" #kind "_c2f")));
AUGUR_F2C(Comm, MPI_Comm)
AUGUR_F2C(Type, MPI_Datatype)
AUGUR_F2C(Group, MPI_Group)
AUGUR_F2C(Request, MPI_Request)
AUGUR_F2C(Message, MPI_Message)
AUGUR_F2C(Op, MPI_Op)
