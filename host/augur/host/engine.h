// Engine: point-to-point messaging between the ranks of a job over RC channels.
//
// One device context, PD and CQ for the process; one Channel per peer on that CQ, connected
// through the bootstrap. Messages up to the eager limit travel through the peer's bounce slots
// and are copied once into the receive buffer; larger ones use rendezvous: the sender pins its
// buffer (registration cache) and sends an RTS; the matched receiver RDMA-READs straight into
// its buffer (registered through the cache) and answers FIN. Matching follows MPI
// (host/matching.h). Messages to oneself are matched locally.
//
// Progress is explicit: test/wait/progress drive it from the calling thread. The
// communication-assist thread will call progress() instead (issue 5).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <span>
#include <vector>

#include "augur/host/bootstrap.h"
#include "augur/host/channel.h"
#include "augur/host/credit_book.h"
#include "augur/host/landing.h"
#include "augur/host/page_guard.h"
#include "augur/host/layout.h"
#include "augur/host/matching.h"
#include "augur/host/mpsc_queue.h"
#include "augur/host/placement.h"
#include "augur/host/progress.h"
#include "augur/host/request.h"
#include "augur/host/steering.h"
#include "augur/host/wireup.h"
#include "augur/nic/reg_cache.h"
#include "augur/nic/verbs.h"

namespace augur::host {

struct EngineConfig {
  std::uint32_t slots = 64;
  std::uint32_t srq_slots = 128;       // the shared receive pool: first registration and growth step
  std::uint32_t srq_peer_slots = 16;   // a peer's first and smallest window in it
  std::uint32_t srq_max_slots = 16384; // its bound
  std::uint32_t eager_limit = 8192;
  // When a host of the job runs more ranks than it has cores, the eager limit is at least this
  // (AUGUR_OVERSUB_EAGER_LIMIT; 0 here, so that a config built in code means what it says).
  std::uint32_t oversub_eager_limit = 0;
  // While a request waits, the job's liveness is checked this often (through the bootstrap
  // connection): a dead peer is reported within about this interval instead of a hang.
  std::uint32_t keepalive_ms = 1000;
  Steering steering = Steering::kPredicted;
  std::uint32_t credit_slots = 16;        // direct-placement credits per peer (<= 255)
  // Smaller receives are not credited and smaller messages not placed directly: below this a
  // copy out of a bounce slot costs less than the credit's RDMA write (AUGUR_DIRECT_MIN; UCX's
  // hardware tag matching has the same threshold, UCX_TM_THRESH, also 1024 by default).
  std::uint32_t direct_min = 1024;
  // Larger receives are not credited (AUGUR_DIRECT_MAX; 0: the eager limit). Above the eager
  // limit a credited message is written by RDMA WRITE with immediate from the sender's buffer:
  // no RTS, READ or FIN.
  std::uint32_t direct_max = 0;
  std::string predictor = "match";        // a name from predictor_names()
  std::uint32_t predict_depth = 2;        // predicted receives credited ahead (top-k)
  bool stats = false;                     // print the augur-stats line when the engine ends
  WaitPolicy wait = WaitPolicy::kAuto;
  std::uint32_t spin_us = 1000;           // kHybrid: idle polling before sleeping
  // A communication-assist thread runs the protocols (polls the CQ, matches, answers peers)
  // while the application computes; application calls hand it commands through a lock-free
  // queue. Off: the calling thread makes progress in wait/test/progress.
  enum class Assist : std::uint8_t { kOff, kOn, kAuto } assist = Assist::kOff;  // kAuto: on when this
  // host has at least 4 cores and two per rank of the job running on it (else the threads fight)
  int assist_core = -1;                   // logical core for the assist thread; -1: near the adapter
  // Layouts of at most this many runs go by gather/scatter lists (isendv/irecvv); callers pack
  // larger ones (AUGUR_SGE_MAX_RUNS; 0: always pack).
  std::uint32_t sge_max_runs = 16;
  // Early placement (docs/early.md): predicted receives above the eager limit, up to
  // landing_max bytes, get a landing zone whose credit lets an early message be written at once;
  // at the match whole pages of at least remap_min bytes move by remap (0: always copy).
  enum class Early : std::uint8_t { kOff, kLanding } early = Early::kLanding;  // AUGUR_EARLY
  std::uint32_t landing_max = 4u << 20;
  std::uint32_t remap_min = 0;  // measured: copying is cheaper here at every size (docs/early.md)
  // Speculative steering: protect a buffer while a credit into it is armed ahead of its receive
  // (AUGUR_GUARD; off: the program promises to leave predicted buffers alone).
  bool guard = true;
  // Connect every pair in create (AUGUR_CONNECT=all) instead of on first use (wireup.h).
  bool connect_all = false;
  // Early release (AUGUR_EARLY_RELEASE, docs/early-release.md): a contiguous rendezvous receive
  // whose buffer holds at least release_chunk bytes of whole pages completes once its edge pages
  // are in; the rest is read in page-aligned chunks behind page guards, and a touch of a chunk
  // waits for it. Not with an assist thread. With one, sends are released instead: a rendezvous
  // send completes at once, its whole pages write-protected until the FIN (the assist thread
  // makes the progress a store waits for).
  bool early_release = false;
  std::uint32_t release_chunk = 64u << 10;  // AUGUR_RELEASE_CHUNK: smallest chunk, and the smallest interior released
};

// EngineConfig from AUGUR_SLOTS, AUGUR_EAGER_LIMIT, AUGUR_KEEPALIVE_MS, AUGUR_STEERING,
// AUGUR_CREDITS, AUGUR_PREDICTOR, AUGUR_PREDICT_DEPTH, AUGUR_STATS, AUGUR_WAIT, AUGUR_SPIN_US,
// AUGUR_ASSIST, AUGUR_ASSIST_CORE, AUGUR_SGE_MAX_RUNS, AUGUR_DIRECT_MIN, AUGUR_DIRECT_MAX, AUGUR_EARLY,
// AUGUR_LANDING_MAX, AUGUR_REMAP_MIN, AUGUR_GUARD, AUGUR_CONNECT, AUGUR_EARLY_RELEASE, AUGUR_RELEASE_CHUNK.
Result<EngineConfig> engine_config_from_settings();

struct EngineCounters {
  std::uint64_t bounce_msgs = 0;   // received through bounce slots
  std::uint64_t rndv_msgs = 0;     // received by RDMA READ
  std::uint64_t self_msgs = 0;
  std::uint64_t bytes_copied = 0;  // copied out of bounce slots or self buffers
  std::uint64_t unexpected_msgs = 0;
  std::uint64_t truncated = 0;
  std::uint64_t direct_msgs = 0;      // received by direct write into the receive buffer
  std::uint64_t direct_sends = 0;     // sent by direct write (the other side of direct_msgs)
  std::uint64_t credits_issued = 0;   // credits written to senders (armed at once, or staged)
  std::uint64_t credits_armed_ahead = 0;  // of those, staged by prediction and armed by the post
  std::uint64_t credits_used = 0;     // = direct_msgs
  std::uint64_t credits_revoked = 0;  // void (receive matched otherwise), cancelled, or staged in vain
  std::uint64_t pred_hits = 0;        // receive calls among the calls predicted just before
  std::uint64_t pred_misses = 0;
  std::uint64_t pred_abstains = 0;    // no prediction offered (or prediction suspended)
  std::uint64_t pred_suspended = 0;   // times prediction was turned off for a low hit ratio
  std::uint64_t credit_pauses = 0;    // times crediting a peer was paused for void credits
  std::uint64_t credits_rearmed = 0;  // of credits_issued, re-armed by the arm word alone (entry already at the sender)
  std::uint64_t sge_sends = 0;        // messages sent from a layout by gather list (eager: into the slot; rendezvous: run list)
  std::uint64_t sge_recvs = 0;        // messages received into a layout by scatter (eager: from the slot; rendezvous: READ)
  // Early placement (docs/early.md).
  std::uint64_t landing_credits = 0;  // landing zones offered to senders
  std::uint64_t landing_msgs = 0;     // messages written into a landing zone
  std::uint64_t landing_early = 0;    // of those, arrived before their receive was posted
  std::uint64_t landing_remapped = 0; // of those, delivered by remapping whole pages
  std::uint64_t pages_remapped = 0;
  std::uint64_t landing_revoked = 0;  // landing credits withdrawn unused (prediction moved on)
  std::uint64_t landing_sends = 0;    // sent into a peer's landing zone (the other side of landing_msgs)
  // Speculative placement (AUGUR_STEERING=speculative, docs/early.md).
  std::uint64_t spec_armed = 0;       // credits armed into a predicted buffer before its receive was posted
  std::uint64_t spec_msgs = 0;        // messages written through one
  std::uint64_t spec_early = 0;       // of those, arrived before their receive was posted
  std::uint64_t spec_placed = 0;      // of those, taken by the predicted receive: no copy at all
  std::uint64_t spec_copied = 0;      // taken by another receive (a mispredicted buffer), or moved out: copied
  std::uint64_t spec_adopted = 0;     // unused when the predicted receive was posted: it became that receive's credit
  std::uint64_t spec_revoked = 0;     // withdrawn unused: the program touched the buffer, another receive could take the message, or the prediction moved on
  std::uint64_t spec_void = 0;        // void: a message with the envelope came otherwise
  std::uint64_t guard_faults = 0;     // touches of a guarded buffer by the program (each lifted the guard)
  std::uint64_t spec_violations = 0;  // touches after data was written there: the run stops
  // Early release (AUGUR_EARLY_RELEASE, docs/early-release.md).
  std::uint64_t release_early = 0;    // receives completed before all their data was in
  std::uint64_t release_chunks = 0;   // chunks guarded behind them
  std::uint64_t release_waits = 0;    // touches of a guarded chunk that waited for its data (the process's)
  std::uint64_t release_settles = 0;  // calls that first waited for released data their buffer overlaps
  std::uint64_t release_declined = 0; // eligible receives read whole instead (no guard to be had)
  std::uint64_t release_sends = 0;    // sends completed before the receiver had read them (assist thread)
  std::uint64_t release_sends_declined = 0;  // eligible sends that waited for their FIN instead (no guard or edge slot)
  std::uint64_t spec_shared_pages = 0;  // not speculated (guarded): the buffer shares its pages with other memory
  std::uint64_t arms_carried = 0;  // arm words that rode on messages to their peer (no write of their own)
  std::uint64_t arms_written = 0;  // arm words queued to ride but written alone (the peer got no message in time)
  // One-sided (host/engine_rma.cpp): operations started on peers' exposed memory.
  std::uint64_t rma_puts = 0;
  std::uint64_t rma_gets = 0;
  std::uint64_t rma_atomics = 0;     // fetch-and-add and compare-and-swap
  std::uint64_t rma_bytes = 0;       // put and got
};

// One-sided communication: which RDMA operation Engine::rma starts.
enum class RmaOp : std::uint8_t { kPut, kGet, kFetchAdd, kCompareSwap };

// Where a one-sided operation acts: an address in memory a peer exposed, and its key.
struct RmaTarget {
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
};

class Engine final : private ProgressTarget, private Wireup::Handler {
 public:
  // Joins the job through `boot` (collective: every rank must call it): publishes where this
  // rank listens for connections, which are made on first use (wireup.h), or at once with
  // connect_all.
  // `boot` must outlive the engine: it also tells the engine when a rank dies.
  static Result<std::unique_ptr<Engine>> create(Bootstrap& boot, const EngineConfig& cfg);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The buffer must stay valid and unchanged until the request is done (MPI semantics).
  // `synchronous` (MPI_Ssend): the request completes only once the receiver has matched the
  // message, so every size goes by rendezvous (the FIN says so).
  // `releasable`: with AUGUR_EARLY_RELEASE and an assist thread, a rendezvous send may complete
  // before the receiver has read it (docs/early-release.md); its whole pages stay write-protected
  // until then, and a store into one waits.
  Result<RequestPtr> isend(const void* buf, std::size_t len, int dest, std::int32_t tag, std::uint32_t context,
                           bool synchronous = false, bool releasable = false);
  // `releasable`: with AUGUR_EARLY_RELEASE the request may complete before all of a rendezvous
  // message is in (docs/early-release.md); the caller hands the buffer to the program then, not to
  // code of its own that runs inside a guarded touch's wait.
  Result<RequestPtr> irecv(void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context,
                           bool releasable = false);
  // Non-contiguous send and receive: the message is the runs' bytes in order (zero-length runs
  // are skipped, adjacent ones merged; one run left is the contiguous call). At most
  // max_layout_runs() runs after merging (kInvalidArgument otherwise: pack instead). The run list
  // is copied; the memory it names must stay valid until the request is done. A receive layout
  // is never credited for direct placement (a direct write targets one remote range).
  Result<RequestPtr> isendv(const relations::Layout& layout, int dest, std::int32_t tag, std::uint32_t context,
                            bool synchronous = false);
  Result<RequestPtr> irecvv(const relations::Layout& layout, int source, std::int32_t tag, std::uint32_t context);
  // The most runs isendv/irecvv take: AUGUR_SGE_MAX_RUNS, and what an RTS run list fits in a slot.
  [[nodiscard]] std::uint32_t max_layout_runs() const noexcept;
  // Runs progress until `r` is done or `timeout_ms` passes (kTimeout); returns r's status.
  Status wait(const RequestPtr& r, int timeout_ms);
  // One round of progress; true if `r` is done (MPI_Test).
  Result<bool> test(const RequestPtr& r);
  // MPI_Cancel of a receive: if it has not matched yet it is removed and completes with
  // cancelled = true; otherwise (or for sends, which are never cancelled) nothing changes.
  bool cancel(const RequestPtr& r);
  // One round of progress: completions, queued sends, credit returns. Errors are a dead peer
  // or a protocol violation, after the requests they concern have been failed.
  Status progress();
  // For callers that drive progress() themselves until their own condition holds (the MPI
  // shim's waits): call after a round that left the condition unmet. It applies AUGUR_WAIT:
  // spin yields the core now and then; block, and hybrid once the engine has found no work for
  // AUGUR_SPIN_US, sleep until the next completion, at most `max_ms`.
  Status relax(int max_ms);
  // The same with an assist thread, where the waiter does not poll: ProgressDriver's
  // completion_epoch, relax_assisted and sleep_past (the caller lets go of its locks to sleep).
  [[nodiscard]] bool assisted() const noexcept { return driver_.assisted(); }
  [[nodiscard]] std::uint64_t completion_epoch() const noexcept { return driver_.completion_epoch(); }
  bool relax_assisted(std::uint64_t seen) { return driver_.relax_assisted(seen); }
  bool sleep_past(std::uint64_t seen, int timeout_ms) const { return driver_.sleep_past(seen, timeout_ms); }
  // MPI_Iprobe: envelope and length of the earliest matching unexpected message, if any.
  Result<bool> iprobe(int source, std::int32_t tag, std::uint32_t context, Request* out);
  // MPI_Improbe: takes the earliest matching unexpected message out of matching, so that only
  // imrecv/imrecvv can receive it, and returns its handle (envelope and length in *out), or 0
  // when none has arrived. A taken message keeps its bounce slot until it is received.
  Result<std::uint64_t> improbe(int source, std::int32_t tag, std::uint32_t context, Request* out);
  // MPI_Imrecv: receives a message improbe took (truncation as for irecv). The request is done
  // at once for an eager message, after the READ for a rendezvous one. An unknown or already
  // received handle is kInvalidArgument.
  Result<RequestPtr> imrecv(std::uint64_t message, void* buf, std::size_t len, bool releasable = false);
  Result<RequestPtr> imrecvv(std::uint64_t message, const relations::Layout& layout);

  // One-sided communication (host/engine_rma.cpp, docs/rma.md). Registers [addr, addr+len) for
  // peers' RDMA READ, WRITE and 8-byte atomics for as long as the returned region lives (an MPI
  // window): they then act on it with no CPU of ours involved.
  Result<std::unique_ptr<nic::MemoryRegion>> expose(void* addr, std::size_t len);
  // Starts one RDMA operation on memory `peer` exposed (oneself included: through the NIC too, so
  // that its atomics are atomic against the peers'). kPut writes `len` bytes from `local`, kGet
  // reads them into `local`; kFetchAdd and kCompareSwap act on the aligned 8-byte word at
  // `to.addr` and put its old value in *(uint64_t*)local (len 8). `local` must stay valid until
  // the request is done: when the NIC reports the operation complete (a put: written at the
  // target). Operations to one peer are carried out in the order started.
  Result<RequestPtr> rma(int peer, RmaOp op, void* local, std::size_t len, RmaTarget to, std::uint64_t operand = 0,
                         std::uint64_t swap = 0);
  // A put or get with no request: it is complete when rma_pending(peer) has drained (MPI_Put and
  // MPI_Get, completed by a flush, unlock or fence). A failure fails the peer, which the next
  // progress() reports.
  Status rma_untracked(int peer, RmaOp op, void* local, std::size_t len, RmaTarget to);
  // One-sided operations to `peer` started and not yet complete (any thread may ask).
  [[nodiscard]] std::uint32_t rma_pending(int peer) const noexcept {
    return rma_pending_[static_cast<std::size_t>(peer)].load(std::memory_order_acquire);
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  // Snapshots (taken by the assist thread when there is one).
  [[nodiscard]] EngineCounters counters() const;
  [[nodiscard]] const EngineConfig& config() const noexcept { return cfg_; }
  // Nothing is owed to any peer: no message queued or being read or written, no rendezvous
  // send waiting for its FIN, no one-sided operation in flight. MPI_Finalize progresses until
  // it holds, then meets the other ranks in the bootstrap's fence (no barrier over channels,
  // which would connect every rank to log2(N) partners it may never have talked to).
  [[nodiscard]] bool quiet() const;
  // Peers this rank has a channel to (made on first use, or all with connect_all), and what its
  // wire-up did (wireup.h).
  [[nodiscard]] int peers_connected() const;
  // The name this rank's node goes by in the job (the launcher's, else the host name): ranks
  // with the same name share a node (MPI_COMM_TYPE_SHARED).
  [[nodiscard]] const std::string& node_name() const noexcept { return node_name_; }
  [[nodiscard]] Wireup::Counters wireup_counters() const;
  // Both registration caches together.
  [[nodiscard]] nic::RegCacheCounters rcache_counters() const;
  // Work of the layer above that the assist thread runs after each of its rounds (the MPI shim's
  // nonblocking collectives, so that they move on while the program computes); `fn(arg)` returns
  // true if it did any. Set before the work exists, cleared (null) before `arg` goes away.
  using BackgroundFn = bool (*)(void*);
  void set_background(BackgroundFn fn, void* arg) noexcept {
    background_arg_.store(arg, std::memory_order_release);
    background_.store(fn, std::memory_order_release);
  }
  // Early release with threads: a touch of a released page waits in the signal handler, which
  // polls the engine and must own it to. enter() returns 1 if it took the caller's lock (leave()
  // after), 0 if none is needed (or this thread holds it), -1 if another thread holds it.
  struct ReleaseLock {
    int (*enter)() = nullptr;
    void (*leave)() = nullptr;
  };
  void set_release_lock(ReleaseLock l) noexcept { release_lock_ = l; }
  // Whether early release of receives is on (AUGUR_EARLY_RELEASE, and no assist thread), and of
  // sends (AUGUR_EARLY_RELEASE with an assist thread).
  [[nodiscard]] bool early_release() const noexcept { return release_; }
  [[nodiscard]] bool early_release_sends() const noexcept { return release_sends_; }
  // Where the assist thread runs (null without one).
  [[nodiscard]] const Placement* assist_placement() const noexcept { return driver_.assisted() ? &placement_ : nullptr; }
  // How waits wait: AUGUR_WAIT, with auto decided at create (spin or hybrid).
  [[nodiscard]] WaitPolicy wait_policy() const noexcept { return driver_.wait_policy(); }
  // Tests only, and only without an assist thread (its state belongs to that thread).
  [[nodiscard]] const Channel* channel(int peer) const { return peers_[static_cast<std::size_t>(peer)].ch.get(); }
  // Tests that play a faulty peer (no assist thread): sends one message with this header and
  // body as the next message to `peer`, outside the send queue. False: no credit now.
  Result<bool> send_raw_message_for_test(int peer, proto::MsgType type, std::uint32_t context, std::int32_t tag,
                                         std::uint32_t length, std::span<const std::byte> body);
  // Fault injection (no assist thread): the QP to `peer` goes to the error state.
  Status force_qp_error_for_test(int peer);
  // One line, `augur-stats rank=R direct_msgs=N ...` (the AUGUR_STATS format, see docs/runtime.md).
  [[nodiscard]] std::string stats_line() const;

 private:
  struct PostedRecv {
    RequestPtr req;
    void* buf;
    std::size_t cap;
    int source;  // as posted (kAnySource allowed): a dead peer fails only its own receives
  };
  struct PendingRead {
    RequestPtr req;
    std::byte* buf;
    std::size_t n;  // bytes to read: min(message, buffer)
    nic::RemoteBuffer remote;
    std::uint32_t rts_seq;
    std::vector<proto::RemoteRun> remote_runs;  // a non-contiguous source (kRtsRuns); else `remote`
  };
  struct Incoming {  // a message waiting in the unexpected queue
    int peer;
    proto::MsgType type;
    std::uint32_t slot;                   // eager: the bounce slot holding it
    std::span<const std::byte> payload;   // eager: in the slot
    std::vector<std::byte> self_copy;     // self messages
    nic::RemoteBuffer remote;             // RTS: where the data is
    std::vector<proto::RemoteRun> remote_runs;  // kRtsRuns: where the data is
    std::unique_ptr<LandingZone> zone;    // kDirect: landed early, the payload is in this zone
    std::uint64_t spec = 0;               // kDirect: written into a predicted buffer (Speculation::id), or 0
    std::uint32_t seq;                    // RTS: answered by FIN
    std::size_t length;
    RequestPtr self_sender;               // a synchronous send to oneself: completes when matched
  };
  struct OutMsg {
    proto::MsgType type;
    std::uint32_t context;
    std::int32_t tag;
    std::uint32_t length;
    std::vector<std::byte> body;  // RTS body; eager bodies are sent from the user buffer
    const void* user = nullptr;
    RequestPtr req;               // completed when sent (eager) or at FIN (rendezvous)
    nic::RegCache::Handle pin;    // rendezvous: the sender's buffer stays registered until FIN
    bool gather = false;          // eager from req->runs
    bool may_write = false;       // kRts that a landing credit may carry instead (contiguous, not synchronous)
    std::vector<nic::RegCache::Handle> pins;  // kRtsRuns: the layout stays registered until FIN
    // An early-released send (req already done): its whole pages' write guard and the staging
    // slot holding copies of its partial edge pages, both given back at the FIN.
    std::optional<PageGuard::Ticket> release_guard;
    std::int32_t staging = -1;
  };
  struct Read {
    RequestPtr req;
    nic::RegCache::Handle pin{};
    int peer = -1;
    std::uint32_t rts_seq = 0;
    // A layout read: READs planned, how many are posted, completions still to come (the FIN
    // goes when the last one completes).
    std::vector<nic::RegCache::Handle> pins{};
    ReadPlan plan{};
    std::uint32_t posted = 0;
    std::uint32_t left = 1;
    // Early release: each READ's guard (the first `edge_wrs`, the partial edge pages, have none),
    // edge READs still to complete, and whether the request is done already.
    std::vector<std::optional<PageGuard::Ticket>> guards{};
    std::uint32_t edge_wrs = 0;
    std::uint32_t edges = 0;
    bool released = false;
    std::uintptr_t lo = 0, hi = 0;  // the receive buffer
  };
  struct RmaStart {  // a one-sided operation not yet posted
    RequestPtr req;  // null: untracked (rma_untracked)
    RmaOp op;
    void* local;
    std::size_t len;
    RmaTarget to;
    std::uint64_t operand;
    std::uint64_t swap;
  };
  struct RmaInFlight {  // posted: until its completion (kept for reuse after it)
    RequestPtr req;
    int peer = -1;                       // -1: free
    nic::RegCache::Handle pin;           // the local buffer of a put or get
    void* result = nullptr;              // an atomic's old value or a small get's data goes here ...
    std::uint32_t copy = 0;              // ... (this many bytes) from ...
    std::int32_t slot = -1;              // ... this registered slot the NIC wrote it to
  };
  struct Peer {
    std::unique_ptr<Channel> ch;
    std::optional<CreditBook> credits;  // both directions' credits (set by create)
    std::deque<OutMsg> out;                       // in order: non-overtaking
    std::deque<std::pair<std::uint32_t, OutMsg>> awaiting_fin;  // by RTS sequence number
    std::deque<OutMsg> writing;                  // large messages being written through a credit, in post order
    std::vector<std::unique_ptr<LandingZone>> zones;  // by credit slot: the zone a landing credit names
    std::uint32_t reads_in_flight = 0;
    std::deque<PendingRead> read_queue;          // matched RTS waiting for room to read
    std::int64_t posting = -1;                   // cookie of a layout read with READs still to post
    std::deque<RmaStart> rma_queue;              // one-sided operations waiting for send queue room
    std::uint32_t rma_in_flight = 0;
    bool dead = false;
    bool ready = false;  // connected at both ends (wireup.h): the channel may carry messages
  };

  // A command from an application thread to the assist thread (ProgressDriver::enqueue).
  struct Command : AssistCommand {
    enum class Kind : std::uint8_t { kSend, kRecv, kCall, kSendV, kRecvV };
    struct Op {  // kSend, kRecv, kSendV, kRecvV: the arguments of start_send / start_recv
      RequestPtr req;
      const void* sbuf = nullptr;
      void* rbuf = nullptr;
      std::size_t len = 0;
      int peer = 0;
      std::int32_t tag = 0;
      std::uint32_t context = 0;
      bool synchronous = false;  // kSend, kSendV
      bool releasable = false;   // kSend
    };
    Kind kind = Kind::kCall;
    Op op;
    std::function<void()> call;  // kCall: run on the assist thread
    std::atomic<bool>* call_done = nullptr;
  };

  Engine(Bootstrap& boot, const EngineConfig& cfg);
  Status start_send(const RequestPtr& req, const void* buf, std::size_t len, int dest, std::int32_t tag, std::uint32_t context,
                    bool synchronous, bool releasable = false);
  Status start_recv(const RequestPtr& req, void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context);
  Status check_send(int dest, std::int32_t tag) const;
  Status check_recv(int source, std::int32_t tag) const;
  // Non-contiguous requests (req->runs holds the layout, at least two runs; start_send takes
  // them too, with a null buffer).
  Status start_recv_layout(const RequestPtr& req, int source, std::int32_t tag, std::uint32_t context);
  // Registers a send layout and encodes its kRtsRuns body; `pins` keep it registered until FIN.
  Result<std::vector<std::byte>> run_list_rts(const relations::Layout& layout, std::size_t len,
                                              std::vector<nic::RegCache::Handle>& pins);
  Status post_layout_reads(int peer, Read& rd, std::uint32_t cookie);
  Status start_layout_read(int peer, PendingRead& pr);
  bool do_cancel(const RequestPtr& r);
  inline void finish(Request& r, Path path, Status st = Status::Ok());  // in host/engine_internal.h
  // What the progress driver drives (ProgressTarget; host/engine_progress.cpp).
  Status progress_once() override;
  [[nodiscard]] bool idle() const noexcept override { return idle_polls_ != 0; }
  Status check_peers() override;
  bool run_commands() override;
  bool run_background() override {
    BackgroundFn fn = background_.load(std::memory_order_acquire);
    return fn != nullptr && fn(background_arg_.load(std::memory_order_acquire));
  }
  Result<bool> arm_for_sleep() override;
  Status take_event() override;
  [[nodiscard]] int event_fd() const noexcept override;
  [[nodiscard]] int sleep_cap(int timeout_ms) const noexcept override;
  Status start_assist();
  [[nodiscard]] int wire_fd() const noexcept override { return wire_ ? wire_->fd() : -1; }
  Status on_wire_event() override;
  // Connections (host/engine.cpp): the wire-up's handler, and starting an exchange.
  Result<std::vector<std::byte>> local_address(int peer) override;
  Status remote_address(int peer, std::span<const std::byte> address) override;
  void ready(int peer) override;
  void failed(int peer, const Status& why) override;
  [[nodiscard]] int cq_per_peer() const noexcept;  // CQ entries one channel may need at once
  Status open_channel(int peer);       // creates the channel and credit book if there are none
  Status connect_peer(int peer);       // starts the wire-up with `peer` unless it has begun
  Status connect_all_peers();          // AUGUR_CONNECT=all: every peer, waiting until all are ready
  Status connect_for_test(int peer);   // the test hooks: connects and waits (no assist thread)
  // Drives the wire-up and progress (no assist thread) until ranks [first, last) but this one
  // are ready, or `limit` passes.
  Status await_ready(int first, int last, std::chrono::seconds limit);
  // Assisted: queues a start_send / start_recv for the assist thread.
  void enqueue(Command::Kind kind, Command::Op op) const;
  // Runs f on the assist thread and waits for it; inline when there is none (or on it). A
  // template so that the common, inline case builds no std::function (a heap allocation for
  // most lambdas).
  template <typename F>
  void call_in_assist(F&& f) const {
    if (!driver_.assisted() || ProgressDriver::on_assist_thread()) {
      f();
      return;
    }
    queue_call(std::function<void()>(std::ref(f)));  // f lives until the call returns
  }
  void queue_call(const std::function<void()>& f) const;
  void release_later(int peer, std::uint32_t slot);  // a bounce slot copied out: reposted next progress
  Status repost_released();
  [[nodiscard]] nic::RegCacheCounters rcache_sum() const;
  void deliver(int peer, const Arrival& a);
  void deliver_eager(int peer, const Arrival& a);
  Status deliver_rts(int peer, const Arrival& a);  // kRts and kRtsRuns (host/engine_rendezvous.cpp)
  Status match_and_start(PostedRecv& recv, Incoming& msg, std::int32_t tag);
  Result<RequestPtr> receive_taken(std::uint64_t message, const RequestPtr& req, void* buf, std::size_t len);
  Status push_sends(int peer);
  Status fail_peer(int peer, const Status& why);
  Status on_fin(int peer, std::uint32_t rts_seq);
  Status start_reads(int peer);
  void queue_fin(int peer, std::uint32_t rts_seq);
  void queue_control(int peer, proto::MsgType type, std::uint32_t slot, std::uint32_t generation);
  // Withdraws credit `slot` of `generation` from the peer (answered by kRevokeAck).
  void queue_revoke(Peer& p, std::uint32_t slot, std::uint32_t generation);
  // Direct placement (docs/runtime.md, "Direct placement and steering").
  Status give_credit(int peer, const RequestPtr& req, void* buf, std::size_t len, std::uint32_t context, std::int32_t tag);
  Status stage_credit(const predictor::RecvCall& call);
  void drop_credit(Request& r);  // its receive matched by a message not sent through the credit
  Status on_direct(int peer, std::uint32_t slot, std::uint32_t length);
  Status on_revoke_ack(int peer, std::uint32_t slot, std::uint32_t generation);
  // Early placement (host/engine_landing.cpp, docs/early.md).
  Status stage_landing(const predictor::RecvCall& call);
  Status on_landing(int peer, std::uint32_t slot, const CreditBook::Direct& d, std::uint32_t length);
  void land_into(const PostedRecv& recv, Incoming& msg, std::size_t n);
  void recycle_zone(std::unique_ptr<LandingZone> zone);
  Status on_write_done(int peer, const nic::Completion& c);
  // Speculative placement (host/engine_speculative.cpp, docs/early.md).
  struct Speculation {
    enum class State : std::uint8_t {
      kArmed,      // the credit is out, nothing came yet
      kRevoking,   // withdrawn, the sender's answer not yet here
      kHeld,       // a message was written into the buffer and waits there for its receive
      kClobbered,  // that message went to another receive: the buffer holds what the program must not see
    };
    std::uint64_t id = 0;
    int peer = -1;
    std::uint32_t slot = 0;
    std::byte* buf = nullptr;
    std::uint32_t cap = 0;
    std::uint32_t context = 0;
    std::int32_t tag = 0;
    State state = State::kArmed;
    std::uint32_t length = 0;                // kHeld: bytes written
    std::optional<PageGuard::Ticket> ticket;  // AUGUR_GUARD
    bool touched = false;                    // the program touched it before any data came
    std::uintptr_t touch_pc = 0;             // where, kept when the guard is released
    bool released = false;                   // the program gave the memory back (free, munmap)
  };
  struct Busy {  // a receive in progress into [lo, hi): its buffer is not speculated on
    const Request* req;
    std::uintptr_t lo, hi;
  };
  static constexpr std::size_t kMaxSpeculations = PageGuard::kMaxGuards / 2;
  [[nodiscard]] bool speculation_refused(std::uintptr_t lo, std::uintptr_t hi, int source, std::uint32_t context,
                                         std::int32_t tag) const;
  Status speculate(const predictor::RecvCall& call);
  Speculation* find_speculation(int peer, std::uint32_t slot);
  void end_speculation(const Speculation& s);
  Status revoke_speculation(Speculation& s);
  // Stops the run (kDataLoss), reporting the buffer; by_program: a touch or release by the program.
  Status violation(const Speculation& s, const std::string& what, bool by_program = true);
  Status on_speculative(int peer, std::uint32_t slot, const CreditBook::Direct& d, std::uint32_t length);
  Status place_speculative(const PostedRecv& recv, Incoming& msg, std::size_t n, Path& path);
  Result<bool> unguard(Speculation& s);   // lifts its guard: whether it was touched (and where, in touch_pc)
  void drop_guard(Speculation& s);        // lifts its guard on memory that may be gone (errors ignored)
  Status speculations_released();         // acts on the program's releases of speculated memory
  Status speculation_at_post(const RequestPtr& req, void* buf, std::size_t len, int source, std::int32_t tag,
                             std::uint32_t context, bool& adopted);
  Status evacuate(Speculation& s);
  void void_speculations(int peer, std::uint32_t context, std::int32_t tag);
  Status check_speculations();
  void speculation_revoke_ack(int peer, std::uint32_t slot);
  void end_speculations(int peer);  // -1: all
  void unbusy(const Request* r);
  // Early release (host/engine_release.cpp, docs/early-release.md).
  [[nodiscard]] bool releasable(const PendingRead& pr) const noexcept;
  // false: not released after all (no guard to be had): read it as any rendezvous.
  Result<bool> start_release_read(int peer, PendingRead& pr);
  Status on_release_read(int peer, const nic::Completion& c);
  Status land_chunk(Read& rd, std::uint32_t index);
  void maybe_release(Read& rd, std::uint32_t cookie);
  void forget_released(std::uint32_t cookie);
  void lose_released(Read& rd, const std::string& why);
  // Waits for released data overlapping [lo, hi) before a call that uses that memory.
  // `writes`: the call writes the memory or pins it for writing (a send only reads it).
  Status settle(std::uintptr_t lo, std::uintptr_t hi, bool writes = true);
  Status settle(const void* buf, std::size_t len, bool writes = true) {
    const auto lo = reinterpret_cast<std::uintptr_t>(buf);
    return settle(lo, lo + len, writes);
  }
  Status settle(const relations::Layout& layout, bool writes = true);
  static void release_waiter(void* self) noexcept;  // PageGuard::Waiter
  void wait_for_release() noexcept;
  // Early release of sends (assist thread): makes m a kRtsRuns of the edges' copies and the
  // whole pages, write-guarded; false: not released (m untouched), send it as any rendezvous.
  Result<bool> start_release_send(OutMsg& m, const void* buf, std::size_t len);
  Status open_staging();  // at create
  void end_release_send(OutMsg& m) noexcept;  // at its FIN, or when its peer fails
  static void release_send_waiter(void* self) noexcept;  // PageGuard::Waiter
  // Whether a call given [buf, buf + len) must first wait for released data there: a receive's
  // (whether the call writes it), or a send's (the call writes it, or pins it for writing).
  [[nodiscard]] bool must_settle(bool writes) const noexcept {
    return !released_.empty() || (writes && released_sends_live_.load(std::memory_order_acquire) != 0);
  }
  // One-sided (host/engine_rma.cpp).
  Status check_rma(int peer, RmaOp op, const void* local, std::size_t len, RmaTarget to) const;
  Status start_rma(int peer, RmaStart op);
  Result<bool> post_rma(int peer, RmaStart& op);  // false: an atomic waits for a free slot
  Status post_rmas(int peer);
  Status on_rma_done(int peer, const nic::Completion& c);
  Status open_self_rma();
  void fail_rmas(int peer, const Status& why);
  // Sends an eager message now, through a usable credit or a bounce slot; kNone: no room yet.
  // `from` non-empty (a layout send, `user` unused): the `length` bytes are gathered from it.
  Result<Path> send_eager(Peer& p, std::uint32_t context, std::int32_t tag, const void* user, std::uint32_t length,
                          const relations::Layout& from);
  // Shows a receive call to the steering policy and stages the credits it predicts.
  Status observe_receive(const void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context,
                         bool layout = false);
  // At a receive's post: observe it now, or (speculative steering, no assist thread) keep it for
  // observe_pending, so that predicting and arming the next receive stay out of this one's
  // post-to-completion time (docs/early.md, "Arming after the post").
  Status note_receive(const void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context,
                      bool layout = false);
  // Observes the receive note_receive kept, if any: at the next send or receive (before its
  // message, which may carry the arm words) and at the first idle poll. Callers test
  // observe_later_ first (the send and receive paths: one branch when nothing is kept).
  Status observe_pending();

  Bootstrap& boot_;
  int rank_;
  int size_;
  EngineConfig cfg_;  // as given, but for the eager limit the job's hosts decided (create)
  bool oversubscribed_job_ = false;
  int local_ranks_ = 1;  // ranks of the job on this rank's node, itself included
  std::string node_name_;
  std::unique_ptr<nic::Context> ctx_;
  std::unique_ptr<nic::ProtectionDomain> pd_;
  std::unique_ptr<nic::CompletionChannel> events_;  // wakes a sleeping waiter at a completion
  std::unique_ptr<nic::CompletionQueue> cq_;
  std::unique_ptr<nic::RegCache> send_cache_;  // registered for remote read (rendezvous sources)
  std::unique_ptr<nic::RegCache> recv_cache_;  // registered for local write (rendezvous targets)
  nic::RegCacheCounters rcache_sum_;
  std::unique_ptr<RecvPool> pool_;  // every channel's eager receives; outlives the channels
  std::vector<Peer> peers_;
  MatchQueues<PostedRecv, Incoming> match_;
  // Messages taken by improbe, until imrecv (id -> message); ids start at 1.
  std::unordered_map<std::uint64_t, MatchQueues<PostedRecv, Incoming>::Matched> taken_;
  std::uint64_t next_taken_ = 1;
  std::vector<std::unique_ptr<Read>> reads_;  // index = read cookie; null when free
  std::unordered_map<std::uint32_t, int> peer_of_qp_;
  EngineCounters counters_;
  CreditCounters credit_counters_;  // every peer's CreditBook counts here
  std::optional<SteeringPolicy> steer_;  // what to credit, stage and pause (set by create)
  std::uint32_t idle_polls_ = 0;              // consecutive empty polls of the CQ
  // Peers whose channel holds slots copied out but not yet reposted (Channel::release_later):
  // the next progress_once reposts them, after the caller has had the chance to reply.
  std::vector<int> repost_peers_;
  std::array<nic::Completion, 16> wc_;
  // dead_ mirrors Peer::dead for application threads (with an assist thread).
  std::unique_ptr<std::atomic<bool>[]> dead_;
  Placement placement_;
  std::atomic<BackgroundFn> background_{nullptr};
  std::atomic<void*> background_arg_{nullptr};
  Status deferred_;  // an error found while delivering, reported by progress()
  std::vector<std::unique_ptr<LandingZone>> spare_zones_;  // delivered by copy: registered, reusable
  std::vector<Speculation> specs_;  // speculative placement: credits armed ahead of their receives
  std::vector<Busy> busy_;          // speculative placement: receives posted, not complete
  std::uint64_t next_spec_id_ = 0;
  PageGuard* guard_ = nullptr;      // speculative placement with AUGUR_GUARD
  std::uint64_t touches_seen_ = 0;  // guard_->touches() when check_speculations last looked
  std::unique_ptr<nic::ReleaseWatch> spec_release_;  // speculative: the program giving speculated memory back
  // Early release: on (config, no assist thread); reads whose request is done before their data
  // (cookies); completions a guarded touch's wait polled, for the next progress round to handle.
  bool release_ = false;
  std::vector<std::uint32_t> released_;
  std::vector<nic::Completion> stash_;
  std::size_t stash_n_ = 0;
  ReleaseLock release_lock_{};
  // Early release of sends (with an assist thread): released sends whose FIN has not come (read
  // by application threads before they hand memory to a receive), and the registered staging
  // slots for the copies of their edge pages (two pages each; free ones listed).
  bool release_sends_ = false;
  std::atomic<std::uint32_t> released_sends_live_{0};
  std::atomic<std::uint64_t> release_settles_sends_{0};  // counted by application threads
  static constexpr std::uint32_t kStagingSlots = 64;
  std::byte* staging_ = nullptr;  // kStagingSlots * 2 pages, page-aligned (mmap'd)
  nic::RegCache::Handle staging_pin_{};
  std::vector<std::int32_t> staging_free_;
  // A receive posted but not yet shown to the predictor (note_receive).
  struct PendingObserve {
    const void* buf = nullptr;
    std::size_t len = 0;
    int source = 0;
    std::int32_t tag = 0;
    std::uint32_t context = 0;
    bool layout = false;
  };
  std::optional<PendingObserve> observe_later_;
  // One-sided: operations in flight by cookie (null: free), free cookies, and the registered
  // words atomics return their old values into.
  std::vector<std::unique_ptr<RmaInFlight>> rma_ops_;
  std::vector<std::uint32_t> rma_free_;
  std::unique_ptr<std::uint64_t[]> rma_slots_;  // landing slots of atomics and small gets (engine_rma.cpp)
  std::unique_ptr<nic::MemoryRegion> rma_slots_mr_;
  std::vector<std::int32_t> rma_free_slots_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> rma_pending_;  // by peer: started, not complete
  // RMA to oneself goes out of one QP and into another, both ours (opened at first use).
  std::unique_ptr<nic::QueuePair> self_qp_;
  std::unique_ptr<nic::QueuePair> self_peer_qp_;
  nic::ConnectOptions connect_opt_;
  std::unique_ptr<Wireup> wire_;
  std::vector<int> active_;  // peers with a channel, in the order connected: what progress visits
  int cq_entries_ = 0;       // the CQ's size: (channels + 1) x per-peer need, grown by open_channel
  std::uint32_t wire_tick_ = 0;  // progress rounds since the wire-up was last polled
  // Last: its destructor stops the assist thread before anything that thread uses is gone.
  ProgressDriver driver_;
};

}  // namespace augur::host
