#include "augur/host/pmix_bootstrap.h"

#include <pmix.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace augur::host {

namespace {

Status pmix_error(const char* call, pmix_status_t rc) {
  const Code code = rc == PMIX_ERR_NOT_FOUND                                   ? Code::kNotFound
                    : rc == PMIX_ERR_TIMEOUT                                   ? Code::kTimeout
                    : rc == PMIX_ERR_UNREACH || rc == PMIX_ERR_LOST_CONNECTION ? Code::kPeerFailure
                                                                               : Code::kUnavailable;
  return Status(code, std::string(call) + ": " + PMIx_Error_string(rc));
}

pmix_proc_t proc_of(const std::string& nspace, pmix_rank_t rank) {
  pmix_proc_t p;
  PMIX_PROC_CONSTRUCT(&p);
  PMIX_LOAD_PROCID(&p, nspace.c_str(), rank);
  return p;
}

// The exchange's bounds (bootstrap.h), and PMIx keys are C strings.
Result<std::string> pmix_key(std::string_view key, std::size_t value_len = 0) {
  AUGUR_RETURN_IF_ERROR(check_key_value(key.size(), value_len));
  if (key.find('\0') != std::string_view::npos) return Status(Code::kInvalidArgument, "bootstrap key with a NUL byte");
  return std::string(key);
}

// What the server says of where it placed `me`; empty if it does not say (both keys are
// optional in the standard, and a name with a blank would not fit the host entries).
NodePlacement placement_of(const pmix_proc_t& me) {
  NodePlacement np;
  pmix_value_t* v = nullptr;
  if (PMIx_Get(&me, PMIX_HOSTNAME, nullptr, 0, &v) == PMIX_SUCCESS && v != nullptr) {
    if (v->type == PMIX_STRING && v->data.string != nullptr) np.node = v->data.string;
    PMIX_VALUE_RELEASE(v);
  }
  const pmix_proc_t job = proc_of(me.nspace, PMIX_RANK_WILDCARD);
  v = nullptr;
  if (PMIx_Get(&job, PMIX_LOCAL_SIZE, nullptr, 0, &v) == PMIX_SUCCESS && v != nullptr) {
    if (v->type == PMIX_UINT32 && v->data.uint32 <= static_cast<std::uint32_t>(kMaxRanks)) {
      np.local_size = static_cast<int>(v->data.uint32);
    }
    PMIX_VALUE_RELEASE(v);
  }
  // The engine cleans the name (node_name_from); a name longer than a host name is not one.
  const bool usable = !np.node.empty() && np.local_size > 0 && np.node.size() < 256;
  return usable ? np : NodePlacement{};
}

// The one handler object PMIx calls back; PMIx_Init is once per process, so one bootstrap.
std::atomic<PmixBootstrap*> g_boot{nullptr};

void on_pmix_event(size_t /*id*/, pmix_status_t status, const pmix_proc_t* source, pmix_info_t info[], size_t ninfo,
                   pmix_info_t* /*results*/, size_t /*nresults*/, pmix_event_notification_cbfunc_fn_t cbfunc,
                   void* cbdata) {
  if (PmixBootstrap* b = g_boot.load(std::memory_order_acquire)) {
    // The process concerned, when the server names one of ours.
    const auto ours = [&](const pmix_proc_t* p) {
      return p != nullptr && PMIX_CHECK_NSPACE(p->nspace, b->nspace().c_str()) && p->rank < PMIX_RANK_VALID;
    };
    int rank = -1;
    for (size_t i = 0; i < ninfo; ++i) {
      if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC &&
          ours(info[i].value.data.proc)) {
        rank = static_cast<int>(info[i].value.data.proc->rank);
      }
    }
    if (rank < 0 && status != PMIX_ERR_LOST_CONNECTION && ours(source)) rank = static_cast<int>(source->rank);
    b->on_event(status, rank, PMIx_Error_string(status));
  }
  if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

}  // namespace

bool PmixBootstrap::launched_by_pmix() {
  const char* ns = std::getenv("PMIX_NAMESPACE");
  const char* rank = std::getenv("PMIX_RANK");
  return ns != nullptr && *ns != '\0' && rank != nullptr && *rank != '\0';
}

Result<std::unique_ptr<PmixBootstrap>> PmixBootstrap::init(std::chrono::seconds timeout) {
  pmix_proc_t me;
  PMIX_PROC_CONSTRUCT(&me);
  if (pmix_status_t rc = PMIx_Init(&me, nullptr, 0); rc != PMIX_SUCCESS) {
    Status st = pmix_error("PMIx_Init", rc);
    if (!launched_by_pmix()) {
      st = st.context("no PMIx server started this process (PMIX_NAMESPACE is not set): launch it with srun --mpi=pmix "
                      "or mpirun, or leave AUGUR_PMIX at auto");
    }
    return st;
  }
  pmix_proc_t job = proc_of(me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* v = nullptr;
  pmix_status_t rc = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &v);
  if (rc != PMIX_SUCCESS || v == nullptr) {
    (void)PMIx_Finalize(nullptr, 0);
    return pmix_error("PMIx_Get(PMIX_JOB_SIZE)", rc == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : rc);
  }
  std::uint32_t size = 0;
  const bool size_ok = v->type == PMIX_UINT32;
  if (size_ok) size = v->data.uint32;
  PMIX_VALUE_RELEASE(v);
  if (!size_ok || size == 0 || size > static_cast<std::uint32_t>(kMaxRanks) || me.rank >= size) {
    (void)PMIx_Finalize(nullptr, 0);
    return Status(Code::kInvalidArgument, "PMIx: job size " + std::to_string(size) + " and rank " + std::to_string(me.rank) +
                                              " (augur runs jobs of 1 to " + std::to_string(kMaxRanks) + " ranks)");
  }
  std::unique_ptr<PmixBootstrap> b(new PmixBootstrap(me.nspace, static_cast<int>(me.rank), static_cast<int>(size), timeout));
  b->placement_ = placement_of(me);
  g_boot.store(b.get(), std::memory_order_release);
  // Processes of the job that end early, and the server going away. A server that does not
  // send these events still ends the job itself (mpirun and srun kill the other ranks).
  // (A normal exit is not a failure: only abnormal ends are asked for.)
  pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED, PMIX_ERR_PROC_ABORTING, PMIX_ERR_PROC_TERM_WO_SYNC,
                           PMIX_ERR_LOST_CONNECTION, PMIX_ERR_UNREACH};
  rc = PMIx_Register_event_handler(codes, sizeof codes / sizeof codes[0], nullptr, 0, on_pmix_event, nullptr, nullptr);
  if (rc >= 0) {
    b->handler_id_ = static_cast<std::size_t>(rc);
    b->handler_registered_ = true;
  }
  return b;
}

PmixBootstrap::~PmixBootstrap() {
  if (handler_registered_) (void)PMIx_Deregister_event_handler(handler_id_, nullptr, nullptr);
  g_boot.store(nullptr, std::memory_order_release);
  (void)PMIx_Finalize(nullptr, 0);
}

Status PmixBootstrap::put(std::string_view key, std::string_view value) {
  AUGUR_ASSIGN_OR_RETURN(std::string k, pmix_key(key, value.size()));
  if (++keys_put_ > kMaxKeysPerRank) return Status(Code::kResourceExhausted, "more than 4096 bootstrap keys");
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = const_cast<char*>(value.data());  // PMIx_Put copies it
  v.data.bo.size = value.size();
  const pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, k.c_str(), &v);
  if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Put", rc);
  return Status::Ok();
}

Status PmixBootstrap::fence() {
  if (pmix_status_t rc = PMIx_Commit(); rc != PMIX_SUCCESS) return pmix_error("PMIx_Commit", rc);
  pmix_info_t info[2];
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  bool collect = true;
  int secs = static_cast<int>(timeout_.count());
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &secs, PMIX_INT);
  const pmix_status_t rc = PMIx_Fence(nullptr, 0, info, 2);  // every process of our namespace
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc != PMIX_SUCCESS) {
    int dead = -1;
    if (Status why = check_alive(&dead); !why.ok()) return why;
    return pmix_error("PMIx_Fence", rc);
  }
  return Status::Ok();
}

Result<std::string> PmixBootstrap::get(int rank, std::string_view key) const {
  if (rank < 0 || rank >= size_) return Status(Code::kInvalidArgument, "bootstrap get from rank " + std::to_string(rank));
  AUGUR_ASSIGN_OR_RETURN(std::string k, pmix_key(key));
  pmix_proc_t p = proc_of(nspace_, static_cast<pmix_rank_t>(rank));
  // After the collecting fence every key is here: look locally, do not ask the server.
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  bool optional = true;
  PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
  pmix_value_t* v = nullptr;
  const pmix_status_t rc = PMIx_Get(&p, k.c_str(), &info, 1, &v);
  PMIX_INFO_DESTRUCT(&info);
  if (rc == PMIX_ERR_NOT_FOUND || (rc == PMIX_SUCCESS && v == nullptr)) {
    return Status(Code::kNotFound, "bootstrap key '" + k + "' of rank " + std::to_string(rank) + " not found");
  }
  if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Get", rc);
  Result<std::string> out = Status(Code::kProtocol, "bootstrap key '" + k + "' of rank " + std::to_string(rank) +
                                                        " is not a byte string (PMIx type " + std::to_string(v->type) + ")");
  if (v->type == PMIX_BYTE_OBJECT) {
    out = v->data.bo.size == 0 ? std::string() : std::string(v->data.bo.bytes, v->data.bo.size);
  } else if (v->type == PMIX_STRING && v->data.string != nullptr) {
    out = std::string(v->data.string);
  }
  PMIX_VALUE_RELEASE(v);
  return out;
}

void PmixBootstrap::on_event(int status, int rank, std::string_view what) {
  const std::lock_guard lock(mu_);
  if (failed_.load(std::memory_order_relaxed)) return;  // the first failure is the one reported
  std::string msg = status == PMIX_ERR_LOST_CONNECTION ? "lost the connection to the PMIx server (launcher gone)"
                                                       : "PMIx reports " + std::string(what);
  if (rank >= 0) msg += " for rank " + std::to_string(rank);
  dead_ = rank >= 0 && rank < size_ && rank != rank_ ? rank : -1;
  failure_ = Status(Code::kPeerFailure, "job aborted: " + msg);
  failed_.store(true, std::memory_order_release);
}

Status PmixBootstrap::check_alive(int* dead_rank) {
  *dead_rank = -1;
  if (!failed_.load(std::memory_order_acquire)) return Status::Ok();  // the hot case: one load
  const std::lock_guard lock(mu_);
  *dead_rank = dead_;
  return failure_;
}

void PmixBootstrap::abort(int code, std::string_view why) {
  const std::string msg(why);
  (void)PMIx_Abort(code, msg.c_str(), nullptr, 0);  // the whole namespace
}

}  // namespace augur::host
