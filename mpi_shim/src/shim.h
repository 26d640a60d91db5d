// The MPI shim's internals: handle tables, the job state, typed point-to-point on top of
// host::Engine, and the error machinery every MPI entry point goes through.
//
// Entry points are written with AUGUR_MPI_FN: the body is an ordinary function; the exported
// PMPI_x catches anything that escapes (no C++ exception crosses the C ABI) and MPI_x is a weak
// alias of it, so profiling interposers (PMPI) work.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "augur/host/bootstrap.h"
#include "augur/host/engine.h"
#include "augur/relations/datatype.h"
#include "augur/relations/encoding.h"

namespace augur::mpi {

// An error found inside the library: an MPI error class and what went wrong.
struct Err {
  int cls = MPI_SUCCESS;
  std::string msg;
  [[nodiscard]] bool ok() const noexcept { return cls == MPI_SUCCESS; }
};
inline Err ok() { return {}; }
inline Err err(int cls, std::string msg) { return {cls, std::move(msg)}; }
Err from_status(const Status& s);

// --- datatypes -----------------------------------------------------------------------------

// The basic element every byte of a type belongs to (for reductions and Get_elements).
enum class Elem : std::uint8_t {
  kMixed, kChar, kI8, kU8, kI16, kU16, kI32, kU32, kI64, kU64, kF32, kF64, kLD,
  kC32, kC64, kCLD, kBool, kByte, kWchar,
  // pairs for MINLOC/MAXLOC: value then int index (or two of the same)
  kFloatInt, kDoubleInt, kLongInt, k2Int, kShortInt, kLDInt, k2Float, k2Double,
};
bool is_pair(Elem e);
std::int64_t elem_size(Elem e);

// Names one Type object in the relation cache. Every object, copies included, gets a fresh id
// (handles are reused after MPI_Type_free, ids never), and its cached relations go with it.
class RelationKey {
 public:
  RelationKey();
  RelationKey(const RelationKey&);
  RelationKey& operator=(const RelationKey&);
  ~RelationKey();
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }

 private:
  std::uint64_t id_;
};

struct Type {
  explicit Type(relations::Datatype d) : dt(std::move(d)) {}
  relations::Datatype dt;
  bool predefined = false;
  MPI_Datatype handle = MPI_DATATYPE_NULL;  // a predefined type's own handle
  bool committed = false;
  Elem elem = Elem::kMixed;  // kMixed: several kinds of basic element
  std::int64_t nelems = 0;   // basic elements in one copy
  std::int64_t size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  std::vector<relations::ByteRun> runs;  // one copy's type map (at commit)
  bool contig = false;  // count copies are one block of count*size bytes at buf + true_lb
  std::int64_t runs_lb = 0;  // lowest run offset of one copy: where its relation's layout starts
  std::int64_t grain = 1;    // gcd of run offsets, lengths and the extent: the relations' element
  std::string name;
  // How it was made (MPI_Type_get_envelope/contents): the constructor's integer, address and
  // datatype arguments as given. MPI_COMBINER_NAMED for the predefined types.
  struct Envelope {
    int combiner = MPI_COMBINER_NAMED;
    std::vector<int> ints;
    std::vector<MPI_Aint> aints;
    std::vector<std::shared_ptr<Type>> types;
  };
  Envelope env;
  std::map<int, void*> attrs;  // cached attributes by keyval (MPI_Type_set_attr)
  RelationKey key;
  // The last relation used per direction (0 unpack, 1 pack) and its count: a repeated call skips
  // the cache's key and lock (calls are serialized: MPI_THREAD_SERIALIZED at most).
  struct Memo {
    std::int64_t count = -1;
    std::shared_ptr<const relations::EncodedRelation> rel;
  };
  mutable Memo memo[2];
  Err prepare();  // computes runs/contig/runs_lb/grain (commit)
};
using TypePtr = std::shared_ptr<Type>;

// Pack `count` copies at `buf` into `out` (size*count bytes), by the type's cached
// relations/ executors (issue 22).
Err pack(const void* buf, std::int64_t count, const Type& t, std::byte* out);
// Unpack at most `nbytes` packed bytes into `count` copies at `buf`.
Err unpack(const std::byte* in, std::size_t nbytes, void* buf, std::int64_t count, const Type& t);
// "external32" (MPI-3.1 13.5.2, external32.cpp): the bytes `count` copies of `t` take in it, and
// native packed data (pack()'s) converted to it and back.
Err external32_size(std::int64_t count, const Type& t, std::int64_t* bytes);
Err to_external32(const std::byte* native, std::int64_t count, const Type& t, std::byte* out);
Err from_external32(const std::byte* in, std::int64_t count, const Type& t, std::byte* native);

// --- groups and communicators ----------------------------------------------------------------

struct Group {
  std::vector<int> world;  // group rank -> world rank
  [[nodiscard]] int rank_of_world(int w) const;
};
using GroupPtr = std::shared_ptr<Group>;

struct Comm;
using CommPtr = std::shared_ptr<Comm>;

struct Comm {
  std::uint32_t id = 0;      // engine contexts 2*id (point-to-point) and 2*id+1 (collectives)
  std::vector<int> world;    // comm rank -> world rank
  std::vector<int> rank_of;  // world rank -> comm rank, -1 if not a member
  int rank = 0;
  int size = 0;
  MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
  bool cart = false;
  std::vector<int> dims, periods;
  // Graph topologies: MPI_Graph_create's index and edges as given; MPI_Dist_graph_create*'s
  // sources and destinations of this rank, with weights when given.
  bool graph = false, dist_graph = false, weighted = false;
  std::vector<int> index, edges, sources, source_weights, destinations, dest_weights;
  std::string name;
  std::uint32_t nbc_seq = 0;  // nonblocking collectives started (their tag bases)
  std::map<int, void*> attrs;  // cached attributes by keyval (MPI_Comm_set_attr)
  std::vector<std::pair<std::string, std::string>> hints;  // MPI_Comm_set_info
  // Intercommunicators (MPI-3.1 6.6): world/rank_of/rank/size above are the local group;
  // point-to-point and the cross-group steps of collectives address the remote group. `local`
  // is the local group as an intracommunicator of its own id (the collectives' local steps).
  CommPtr local;
  std::vector<int> remote;          // remote rank -> world rank
  std::vector<int> remote_rank_of;  // world rank -> remote rank, -1 if not in the remote group
  [[nodiscard]] bool inter() const { return local != nullptr; }
  // The peers point-to-point addresses: the remote group of an intercommunicator, else the group.
  [[nodiscard]] int peer_size() const { return inter() ? static_cast<int>(remote.size()) : size; }
  [[nodiscard]] int peer_world(int r) const { return (inter() ? remote : world)[static_cast<std::size_t>(r)]; }
  [[nodiscard]] int peer_rank(int w) const { return (inter() ? remote_rank_of : rank_of)[static_cast<std::size_t>(w)]; }
  [[nodiscard]] std::uint32_t p2p_ctx() const { return 2 * id; }
  [[nodiscard]] std::uint32_t coll_ctx() const { return 2 * id + 1; }
};

// --- requests --------------------------------------------------------------------------------

class CollOp;  // coll_task.h

enum class ReqKind : std::uint8_t { kSend, kRecv, kColl, kRma, kGeneralized };

struct Req {
  ReqKind kind = ReqKind::kSend;
  host::RequestPtr er;  // null: completed locally (PROC_NULL) or inactive persistent
  TypePtr type;
  CommPtr comm;
  void* rbuf = nullptr;  // receive: where the data ends up
  std::int64_t count = 0;
  std::vector<std::byte> tmp;  // packed send data or the landing area of a receive
  bool unpack = false;         // receive into tmp, unpack on completion
  bool proc_null = false;
  bool done_local = false;     // completed without the engine (PROC_NULL)
  // persistent requests
  bool persistent = false;
  bool active = false;
  const void* sbuf = nullptr;
  bool synchronous = false;  // persistent MPI_Ssend_init
  int peer = 0;  // comm rank (or ANY_SOURCE / PROC_NULL)
  int tag = 0;
  bool freed = false;  // MPI_Request_free on an active request: completes in the background
  std::int64_t bsend_bytes = 0;  // buffered send: space it holds in the attached buffer
  std::shared_ptr<CollOp> coll;  // nonblocking collective: the running algorithm
  // MPI_Grequest_start: the program's callbacks; done when it calls MPI_Grequest_complete (any
  // thread may).
  struct Generalized {
    MPI_Grequest_query_function* query = nullptr;
    MPI_Grequest_free_function* free = nullptr;
    MPI_Grequest_cancel_function* cancel = nullptr;
    void* extra = nullptr;
    std::atomic<bool> complete{false};
  };
  std::shared_ptr<Generalized> greq;
};
using ReqPtr = std::shared_ptr<Req>;

// --- the job ---------------------------------------------------------------------------------

struct ErrhandlerObj {
  MPI_Comm_errhandler_function* fn = nullptr;
};

struct UserOp {
  MPI_User_function* fn = nullptr;
  bool commute = true;
  bool fortran = false;  // called with Fortran conventions (all by reference: same signature)
};

// A user attribute key (MPI_Comm_create_keyval, MPI_Type_create_keyval, MPI_Keyval_create).
struct Keyval {
  enum class Kind : std::uint8_t { kComm, kType, kWin } kind = Kind::kComm;
  void* copy = nullptr;  // the copy callback (MPI_*_copy_attr_function*), or a predefined one
  void* del = nullptr;   // the delete callback
  void* extra = nullptr;
  bool freed = false;    // MPI_*_free_keyval: attributes already set keep it until deleted
  // Made from Fortran (MPI-3.1 17.2.7): callbacks take every argument by reference, extra state
  // and attribute values are integers held in the pointers; MPI-1's keyval_create uses default
  // INTEGERs, the rest INTEGER(KIND=MPI_ADDRESS_KIND).
  enum class Lang : std::uint8_t { kC, kFortran, kFortranInt } lang = Lang::kC;
};
inline constexpr int kFirstKeyval = 64;  // below: the predefined attribute keys

// MPI_Comm_create_keyval and the rest called from Fortran (fortran.cpp).
Err create_keyval_lang(Keyval::Kind kind, void* copy, void* del, int* keyval, void* extra, Keyval::Lang lang);
// Copies `from` (the attributes of `old_handle`) to a new object's `to` through each keyval's
// copy callback (MPI_Comm_dup, MPI_Type_dup).
Err copy_attrs(Keyval::Kind kind, int old_handle, const std::map<int, void*>& from, std::map<int, void*>* to);
// Deletes every attribute of an object through the delete callbacks (the object is being freed).
Err delete_attrs(Keyval::Kind kind, int handle, std::map<int, void*>* attrs);
// A window's cached attributes and info hints (window.cpp; null for an invalid handle), and its
// predefined attributes (MPI_WIN_BASE ...: false if `keyval` is none of them).
std::map<int, void*>* win_attrs(MPI_Win w);
std::vector<std::pair<std::string, std::string>>* win_hints(MPI_Win w);
bool win_predefined_attr(MPI_Win w, int keyval, void* attribute_val, int* flag);
Err check_win(MPI_Win w);
// MPI_Finalize: windows the program did not free are deregistered before the engine goes.
Err drop_windows();
int raise_win(MPI_Win w, const char* fn, const Err& e);
// MPI_Info objects (attributes.cpp): the hints of `info` (null if invalid), and a new object.
std::vector<std::pair<std::string, std::string>>* info_hints(MPI_Info info);
MPI_Info make_info(std::vector<std::pair<std::string, std::string>> hints);
// MPI_Comm_get_attr for a user keyval.
Err get_comm_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag);

// MPI_THREAD_MULTIPLE (docs/mpi.md, "Threads"): one lock around the library, as MPICH's global
// critical section. A thread's outermost entry point takes it; a wait loop gives it up while it
// yields (relax), so that another thread can send what this one waits for. With an assist thread
// the lock is taken as well, at every thread level: that thread takes it to move nonblocking
// collectives on while the program computes (background_colls). Otherwise the entry points only
// test one flag.
namespace threads {
extern std::atomic<bool> g_multiple;  // MPI_THREAD_MULTIPLE provided
extern std::atomic<bool> g_locking;   // entry points take the lock (multiple, or an assist thread)
bool enter();  // true if this call took the lock (the thread's outermost entry)
bool try_enter();  // the assist thread: takes the lock if it is free (it never holds it already)
void leave();
void yield();  // lets the other threads in for a moment (if this thread holds the lock)
void unlocked(const std::function<void()>& f);  // runs f without the lock (if this thread holds it)
bool holding();  // whether this thread holds the lock
}  // namespace threads

class EntryGuard {
 public:
  EntryGuard() : held_(threads::g_locking.load(std::memory_order_relaxed) && threads::enter()) {}
  ~EntryGuard() {
    if (held_) threads::leave();
  }
  EntryGuard(const EntryGuard&) = delete;
  EntryGuard& operator=(const EntryGuard&) = delete;

 private:
  bool held_;
};

struct State {
  int initialized = 0;
  int finalized = 0;
  int thread_level = MPI_THREAD_SINGLE;
  std::thread::id main_thread;  // the one that called MPI_Init (MPI_Is_thread_main)
  std::unique_ptr<host::BootstrapServer> own_server;  // singleton runs without augurrun
  std::unique_ptr<host::Bootstrap> boot;
  std::unique_ptr<host::Engine> engine;
  std::vector<CommPtr> comms;      // by handle
  std::vector<TypePtr> types;      // by handle
  std::vector<GroupPtr> groups;    // by handle
  std::vector<ReqPtr> reqs;        // by handle
  // Freed handles, reused first: a program that creates and frees a datatype or a request per
  // step must not grow the tables (the soak grew them by ~40 bytes an iteration).
  std::vector<int> free_reqs, free_comms, free_types, free_groups;
  // MPI_Improbe's messages by handle (MPI_Message >= 2): the engine's message and the comm.
  struct Probed {
    std::uint64_t id;  // Engine::improbe's handle
    MPI_Comm handle;   // where errors are raised
    CommPtr comm;
  };
  std::unordered_map<int, Probed> messages;
  int next_message = 2;  // 0: MPI_MESSAGE_NULL, 1: MPI_MESSAGE_NO_PROC
  std::vector<ErrhandlerObj> errhandlers;
  std::vector<UserOp> ops;         // by handle - kFirstUserOp
  std::vector<Keyval> keyvals;     // by keyval - kFirstKeyval
  // MPI_Info objects by handle (0: MPI_INFO_NULL, 1: MPI_INFO_ENV): keys in insertion order.
  std::vector<std::unique_ptr<std::vector<std::pair<std::string, std::string>>>> infos;
  struct UserError {
    int cls;
    std::string text;
  };
  std::vector<UserError> user_errors;  // codes MPI_ERR_LASTCODE + 1 + index (MPI_Add_error_*)
  std::vector<ReqPtr> background;  // freed active requests, buffered sends
  std::vector<std::shared_ptr<CollOp>> colls;  // nonblocking collectives not yet finished
  bool stepping_colls = false;                   // step_colls is running (not reentered)
  std::atomic<bool> colls_pending{false};        // colls is not empty (read by the assist thread)
  std::uint32_t next_comm_id = 2;  // 0: WORLD, 1: SELF
  std::uint64_t idups_issued = 0, idups_done = 0;  // MPI_Comm_idup calls made and agreed (in order)
  void* bsend_buf = nullptr;
  int bsend_size = 0;
  std::int64_t bsend_used = 0;
  double t0 = 0;
  bool check_collectives = false;  // AUGUR_CHECK_COLLECTIVES
  int world_rank = 0;
  int world_size = 1;
};
State& S();

inline constexpr int kFirstUserOp = 32;
inline constexpr int kTagUb = 0x7fffffff;

// Reports an error: calls the communicator's handler (ERRORS_ARE_FATAL: message and job abort)
// and returns the class for ERRORS_RETURN. `fn` is the MPI function's name.
int raise(MPI_Comm comm, const char* fn, const Err& e);
// The same through handler `eh` of the object `handle` (a window's errors).
int raise_to(MPI_Errhandler eh, int handle, const char* fn, const Err& e);
// Exit status of a rank that stops because another rank died: augurrun reports the rank that
// died first, not the ones that noticed.
inline constexpr int kPeerDiedExit = 75;
[[noreturn]] void fatal(const char* fn, const std::string& msg, int status = 1);
int escaped(const char* fn);  // an exception reached the C boundary

// Lookups (nullptr if the handle is not valid).
Comm* comm_of(MPI_Comm c);
CommPtr comm_ptr(MPI_Comm c);
Type* type_of(MPI_Datatype t);
TypePtr type_ptr(MPI_Datatype t);
Group* group_of(MPI_Group g);
MPI_Group new_group(GroupPtr g);
MPI_Comm new_comm(CommPtr c);
MPI_Datatype new_type(TypePtr t);
MPI_Request new_req(ReqPtr r);
void free_req_handle(MPI_Request h);
// MPI_Comm_free / MPI_Type_free / MPI_Group_free: the object goes (pending requests hold their
// own references) and the handle may be given out again.
void free_comm_handle(MPI_Comm c);
void free_type_handle(MPI_Datatype t);
void free_group_handle(MPI_Group g);

// Checks for an entry point that needs MPI running.
Err check_running();
Err check_comm(MPI_Comm c);
Err check_type(MPI_Datatype t, bool need_commit = true);
Err check_count(std::int64_t count);
Err check_buf(const void* buf, std::int64_t count, const Type& t);
// The most bytes one message carries: the engine's lengths are 32 bits.
constexpr std::int64_t kMaxMessageBytes = 0xffffffff;
// `count` copies of `t` as one call's data (one message, or a block of a collective): their size
// computed without overflow, and MPI_ERR_COUNT when it passes kMaxMessageBytes, before any
// memory is touched, never a wrapped size.
Err check_bytes(std::int64_t count, const Type& t);

// --- engine access ---------------------------------------------------------------------------

// One round of progress (the engine checks the job's liveness at the keepalive interval); also
// completes background requests.
Err progress_once();
// Moves the nonblocking collectives on (progress_once, and the assist thread's background work).
void step_colls();
// After a round of progress that did not finish what a wait loop waits for: yields, or sleeps
// until the next completion, as AUGUR_WAIT / AUGUR_SPIN_US say (host::Engine::relax). With an
// assist thread a wait loop passes the completion epoch it read before checking its condition
// (completion_epoch()) and sleeps, without the library's lock, until the epoch moves; a loop that
// waits for something else (a probe, a lock word) passes kNoEpoch and only yields.
constexpr std::uint64_t kNoEpoch = ~std::uint64_t{0};
std::uint64_t completion_epoch();
Err relax(std::uint64_t seen = kNoEpoch);
// The shim's one wait loop: progress until done() holds, relaxing between rounds, so every
// blocking MPI call waits as AUGUR_WAIT says. Returns the first error progress meets.
template <typename Done>
Err wait_until(Done&& done) {
  while (!done()) {
    if (Err e = progress_once(); !e.ok()) return e;
    const std::uint64_t seen = completion_epoch();  // before the check: a completion after it moves the epoch
    if (done()) break;
    if (Err e = relax(seen); !e.ok()) return e;
  }
  return ok();
}
// Blocks until `r` is done (or the job fails).
Err wait_engine(const host::RequestPtr& r);

// Starts a send/receive of `count` copies of `t`; `peer` is a comm rank (or PROC_NULL /
// ANY_SOURCE); `ctx` the engine context. `synchronous`: MPI_Ssend semantics (completes once
// the receiver has matched it). `releasable`: a blocking send from the program's own buffer, which
// AUGUR_EARLY_RELEASE may complete before the receiver has read it (docs/early-release.md).
Err start_send(Req& r, const void* buf, std::int64_t count, const TypePtr& t, int peer, int tag, const CommPtr& c,
               std::uint32_t ctx, bool synchronous = false, bool releasable = false);
// Whether the program has a one-sided window: early release of sends is off while it has (a
// peer's put into a released send's memory would change what the receiver reads).
bool windows_open();
Err start_recv(Req& r, void* buf, std::int64_t count, const TypePtr& t, int peer, int tag, const CommPtr& c,
               std::uint32_t ctx,
               std::uint64_t message = 0);
// Is it done (after progress)? Completing unpacks and fills `st` (may be STATUS_IGNORE).
bool req_done(const Req& r);
Err req_finish(Req& r, MPI_Status* st);
void set_status_empty(MPI_Status* st);
std::int64_t status_count(const MPI_Status* st);  // the bytes a status counts

// Blocking collectives for the library's own use (communicator creation), on a communicator's
// collective context; MPI_IN_PLACE already resolved by the callers.
Err allreduce_impl(const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, const CommPtr& c);
Err allgather_impl(const void* sbuf, std::int64_t scount, const TypePtr& st, void* rbuf, std::int64_t rcount,
                   const TypePtr& rt, const CommPtr& c);
Err barrier_impl(const CommPtr& c);

// The neighbours of this rank in `c`'s topology, in the order of the neighbourhood collectives'
// buffers (MPI-3.1 7.6): receive from in[i] into block i, send block j to out[j] (comm ranks,
// MPI_PROC_NULL at a non-periodic cartesian edge). in_tag/out_tag tell apart the messages of a
// cartesian pair that are neighbours twice (a periodic dimension of size 1 or 2).
struct Neighbors {
  std::vector<int> in, out, in_tag, out_tag;
};
Err neighbors_of(const Comm& c, Neighbors* n);

// New communicator id agreed by every member of `parent` (collective over parent).
Result<std::uint32_t> agree_comm_id(const CommPtr& parent);
CommPtr make_comm(std::uint32_t id, std::vector<int> world_ranks, int my_world);
// Waits until every MPI_Comm_idup of this process has its id (before any other id agreement).
Err settle_idups();
// An intercommunicator object: ids id and id + 1 (its local communicator).
CommPtr make_inter(std::uint32_t id, std::vector<int> local, std::vector<int> remote);
// MPI_Comm_dup, MPI_Comm_split and MPI_Comm_create on an intercommunicator (intercomm.cpp).
Err inter_dup(const CommPtr& c, CommPtr* out);
Err inter_split(const CommPtr& c, int color, int key, MPI_Comm* newcomm);
Err inter_create(const CommPtr& c, const Group& g, MPI_Comm* newcomm);

// Reductions: inout = in (op) inout, over `count` copies of `t` in typed layout.
Err check_op(MPI_Op op, const Type& t);
void apply_op(MPI_Op op, const void* in, void* inout, std::int64_t count, MPI_Datatype th, const Type& t);
bool op_commutes(MPI_Op op);

// A typed scratch buffer for `count` copies of `t`: ptr() is the buffer pointer to use.
class TypedBuf {
 public:
  TypedBuf(const Type& t, std::int64_t count);
  [[nodiscard]] void* ptr() const { return ptr_; }
  [[nodiscard]] std::byte* at(std::int64_t k, const Type& t) const { return static_cast<std::byte*>(ptr_) + k * t.extent; }

 private:
  std::vector<std::byte> mem_;
  void* ptr_ = nullptr;
};

// Copies `count` copies of `st` at `src` into `rcount` of `rt` at `dst` (local Sendrecv).
Err local_copy(const void* src, std::int64_t count, const Type& st, void* dst, std::int64_t rcount, const Type& rt);

void init_predefined_types();
void init_errhandlers();

}  // namespace augur::mpi

// Defines MPI function `name`: the body follows as `{ ... }` taking `params`; PMPI_name calls it
// inside a try (nothing escapes) and MPI_name is a weak alias.
#define AUGUR_MPI_FN(ret, name, params, args)                                             \
  static ret augur_impl_##name params;                                                    \
  extern "C" ret PMPI_##name params {                                                     \
    ::augur::mpi::EntryGuard augur_guard_;                                                \
    try {                                                                                 \
      return augur_impl_##name args;                                                      \
    } catch (...) {                                                                       \
      return static_cast<ret>(::augur::mpi::escaped("MPI_" #name));                       \
    }                                                                                     \
  }                                                                                       \
  extern "C" decltype(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name))); \
  static ret augur_impl_##name params

// `return` an error through the communicator's handler if `expr` (an Err) failed.
#define AUGUR_MPI_CHECK(comm, fn, expr)                                   \
  do {                                                                    \
    ::augur::mpi::Err augur_e_ = (expr);                                  \
    if (!augur_e_.ok()) return ::augur::mpi::raise((comm), (fn), augur_e_); \
  } while (0)

#define AUGUR_ERR_RETURN(expr)          \
  do {                                  \
    ::augur::mpi::Err augur_e_ = (expr); \
    if (!augur_e_.ok()) return augur_e_; \
  } while (0)
