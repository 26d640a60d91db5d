// Collective algorithms as coroutines: each algorithm is written once, as straight-line code
// that `co_await`s its transfers. A blocking collective runs it to the end (run_blocking); a
// nonblocking one keeps it in its request and resumes it whenever what it waits for has
// completed: from MPI_Test/MPI_Wait on that request and from every MPI call's progress
// (progress_once), so a program that computes and calls MPI now and then overlaps the collective.
//
// Nested algorithms (reduce_scatter = reduce + scatterv, the AUGUR_CHECK_COLLECTIVES allreduce)
// are `co_await`ed tasks in the same chain; the chain remembers the innermost suspended one and
// the transfers it waits for, so resuming never walks the nesting.
#pragma once

#include <coroutine>
#include <cstdint>
#include <utility>
#include <vector>

#include "shim.h"

namespace augur::mpi {

// The communicator a collective runs on and the tag base of this call: 0 for blocking ones
// (they complete in call order), a fresh multiple of kTagsPerCall for each nonblocking one, so
// that several in flight on one communicator never match each other's messages. Within a call:
// 1-15 the algorithms' steps, 16-63 the neighbourhood collectives' directions.
inline constexpr int kTagsPerCall = 64;
struct Coll {
  CommPtr c;
  int tb = 0;
  [[nodiscard]] int tag(int t) const { return tb + t; }
};

class Xfer;

class CollTask {
 public:
  // Where the chain of nested tasks stands: the innermost suspended task and what it waits for.
  struct Chain {
    std::coroutine_handle<> leaf;
    const Xfer* waiting = nullptr;
    bool (*gate)(std::uint64_t) = nullptr;  // a Gate awaited: resume once gate(gate_arg)
    std::uint64_t gate_arg = 0;
  };
  struct promise_type;
  using Handle = std::coroutine_handle<promise_type>;
  struct promise_type {
    Err result;
    std::coroutine_handle<> parent;
    Chain* chain = nullptr;
    CollTask get_return_object() noexcept { return CollTask(Handle::from_promise(*this)); }
    std::suspend_always initial_suspend() const noexcept { return {}; }
    struct Final {
      [[nodiscard]] bool await_ready() const noexcept { return false; }
      std::coroutine_handle<> await_suspend(Handle h) const noexcept {
        promise_type& p = h.promise();
        if (!p.parent) return std::noop_coroutine();
        p.chain->leaf = p.parent;  // the caller goes on where it awaited this task
        return p.parent;
      }
      void await_resume() const noexcept {}
    };
    [[nodiscard]] Final final_suspend() const noexcept { return {}; }
    void return_value(Err e) noexcept { result = std::move(e); }
    void unhandled_exception() noexcept;
    // Frames come from free lists by size (a blocking collective allocates one or more per
    // call; malloc and free cost as much as the algorithm's own bookkeeping).
    static void* operator new(std::size_t n);
    static void operator delete(void* p, std::size_t n) noexcept;
  };

  CollTask(CollTask&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  CollTask(const CollTask&) = delete;
  CollTask& operator=(const CollTask&) = delete;
  CollTask& operator=(CollTask&&) = delete;
  ~CollTask() {
    if (h_) h_.destroy();
  }

  // `co_await task`: the nested task runs now, in the caller's chain; its result is the value.
  [[nodiscard]] bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(Handle caller) noexcept {
    promise_type& p = h_.promise();
    p.parent = caller;
    p.chain = caller.promise().chain;
    p.chain->leaf = h_;
    return h_;
  }
  Err await_resume() noexcept { return std::move(h_.promise().result); }

  [[nodiscard]] Handle handle() const noexcept { return h_; }

 private:
  explicit CollTask(Handle h) noexcept : h_(h) {}
  Handle h_;
};

// A set of transfers on the collective context, started together and awaited together:
//   Xfer t(x); t.recv(...).send(...); AUGUR_CO_TRY(co_await t);
// A receive must deliver exactly what it asked for (collective arguments that do not match are
// MPI_ERR_TRUNCATE on the receiver, never a silent short block).
class Xfer {
 public:
  explicit Xfer(const Coll& x) : x_(&x) {}
  Xfer(const Xfer&) = delete;
  Xfer& operator=(const Xfer&) = delete;
  ~Xfer() = default;

  Xfer& send(const void* buf, std::int64_t count, const TypePtr& t, int dest, int tag);
  Xfer& recv(void* buf, std::int64_t count, const TypePtr& t, int src, int tag);
  // Every transfer complete, or one could not start.
  [[nodiscard]] bool done() const;

  [[nodiscard]] bool await_ready() const { return done(); }
  void await_suspend(CollTask::Handle h) const noexcept {
    h.promise().chain->leaf = h;
    h.promise().chain->waiting = this;
  }
  Err await_resume();  // completes each transfer; the first error

 private:
  Req& add();
  template <typename F>
  void each(F&& f) {
    for (std::size_t i = 0; i < n_ && i < kInline; ++i) f(inline_[i]);
    for (Req& r : more_) f(r);
  }

  static constexpr std::size_t kInline = 2;  // a send and a receive: most steps of most algorithms
  const Coll* x_;
  std::size_t n_ = 0;
  Req inline_[kInline];
  std::vector<Req> more_;  // linear gather/scatter, broadcast trees
  Err start_err_;
};

// `co_await Gate(open, arg)`: the algorithm goes on once open(arg) holds (a condition on the
// process's state, not on transfers: MPI_Comm_idup waits for the earlier ones).
class Gate {
 public:
  Gate(bool (*open)(std::uint64_t), std::uint64_t arg) : open_(open), arg_(arg) {}
  [[nodiscard]] bool await_ready() const { return open_(arg_); }
  void await_suspend(CollTask::Handle h) const noexcept {
    CollTask::Chain* c = h.promise().chain;
    c->leaf = h;
    c->gate = open_;
    c->gate_arg = arg_;
  }
  void await_resume() const noexcept {}

 private:
  bool (*open_)(std::uint64_t);
  std::uint64_t arg_;
};

// A started collective: owns the task and resumes it.
class CollOp {
 public:
  explicit CollOp(CollTask t);
  CollOp(const CollOp&) = delete;
  CollOp& operator=(const CollOp&) = delete;
  ~CollOp() = default;
  // Resumes the algorithm while what it waits for has completed; true once it has finished.
  bool step();
  [[nodiscard]] bool finished() const { return task_.handle().done(); }
  [[nodiscard]] Err result() const { return task_.handle().promise().result; }

 private:
  CollTask task_;
  CollTask::Chain chain_;
  bool running_ = false;  // step() is not reentrant (a user reduction that calls MPI)
};

// One peer's part of an all-to-all: count copies of t at p.
struct Block {
  std::byte* p = nullptr;
  std::int64_t count = 0;
  TypePtr t;
};

// Intracommunicator algorithms (coll.cpp) that the intercommunicator collectives run within each
// group.
CollTask barrier_algo(Coll x);
CollTask allreduce_algo(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op);
CollTask bcast_algo(Coll x, void* buf, std::int64_t count, TypePtr t, int root);
CollTask reduce_algo(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, int root);
CollTask scatterv_algo(Coll x, const void* sbuf, std::vector<int> counts, std::vector<int> displs, TypePtr st, void* rbuf,
                       std::int64_t rcount, TypePtr rt, int root);

// Intercommunicator collectives (coll_inter.cpp, MPI-3.1 5.2.2): x.c is the intercommunicator;
// `root` is MPI_ROOT at the root, MPI_PROC_NULL at the rest of its group, and the root's rank
// in the remote group on the other side. Gathers and all-to-alls have a block per remote rank.
CollTask inter_barrier(Coll x);
CollTask inter_bcast(Coll x, void* buf, std::int64_t count, TypePtr t, int root);
CollTask inter_reduce(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op, int root);
CollTask inter_allreduce(Coll x, const void* sbuf, void* rbuf, std::int64_t count, MPI_Datatype th, MPI_Op op);
CollTask inter_gatherv(Coll x, const void* sbuf, std::int64_t scount, TypePtr st, void* rbuf, std::vector<int> counts,
                       std::vector<int> displs, TypePtr rt, int root);
CollTask inter_scatterv(Coll x, const void* sbuf, std::vector<int> counts, std::vector<int> displs, TypePtr st, void* rbuf,
                        std::int64_t rcount, TypePtr rt, int root);
CollTask inter_alltoallw(Coll x, std::vector<Block> sends, std::vector<Block> recvs);
// The id agreement of two groups (an intercommunicator, its dup or idup, MPI_Intercomm_create):
// an allreduce (MAX) of the members' next free ids over `group`; its `leader` swaps [max,
// payload...] with the other group's leader, `peer` on `link` with `tag`; the leader broadcasts
// the larger max and the other group's payload over `group`. Every member gets *id and *theirs.
inline constexpr int kPairTag = 14;  // the leaders' step tag on an intercommunicator (11, 12: coll_inter.cpp)
struct Pairing {
  Coll group;
  int leader;
  Coll link;
  int peer;
  int tag;
};
CollTask pair_agree(Pairing p, std::vector<int> payload, std::uint32_t* id, std::vector<int>* theirs);
// Reduces this group's vectors, gives the result to the other group, and scatters the other
// group's result here by `counts` (this group's blocks).
CollTask inter_reduce_scatter(Coll x, const void* sbuf, void* rbuf, std::vector<int> counts, MPI_Datatype th, MPI_Op op);

// Runs a collective to the end, progressing (and waiting as AUGUR_WAIT says) in between.
Err run_blocking(CollTask t);
// Starts a nonblocking collective: its first transfers are posted now; *request completes with
// the algorithm (progressed by MPI_Test/Wait on it and by every MPI call's progress).
Err start_collective(const Coll& x, CollTask t, MPI_Request* request);
// The tag base of the next nonblocking collective on `c` (every member calls them in the same
// order, so every member computes the same base).
int next_tag_base(Comm& c);

}  // namespace augur::mpi

// In a collective coroutine: `co_return` the error if `expr` (an Err) failed.
#define AUGUR_CO_TRY(expr)                 \
  do {                                     \
    ::augur::mpi::Err augur_e_ = (expr);   \
    if (!augur_e_.ok()) co_return augur_e_; \
  } while (0)
