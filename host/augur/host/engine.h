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

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <span>
#include <vector>

#include "augur/host/bootstrap.h"
#include "augur/host/channel.h"
#include "augur/host/matching.h"
#include "augur/nic/reg_cache.h"
#include "augur/nic/verbs.h"

namespace augur::host {

enum class Path : std::uint8_t { kNone, kSelf, kBounce, kRendezvous };

struct Request {
  bool done = false;
  bool cancelled = false;     // a receive removed by Engine::cancel before it matched
  Status status;              // kTruncated: message longer than the buffer (length says how long)
  Path path = Path::kNone;
  // Receive results.
  std::int32_t source = -1;
  std::int32_t tag = -1;
  std::size_t length = 0;     // bytes of the message (as sent), even when truncated
};
using RequestPtr = std::shared_ptr<Request>;

struct EngineConfig {
  std::uint32_t slots = 64;
  std::uint32_t eager_limit = 8192;
  // While a request waits, the job's liveness is checked this often (through the bootstrap
  // connection): a dead peer is reported within about this interval instead of a hang.
  std::uint32_t keepalive_ms = 1000;
};

// EngineConfig from AUGUR_SLOTS, AUGUR_EAGER_LIMIT, AUGUR_KEEPALIVE_MS.
Result<EngineConfig> engine_config_from_settings();

struct EngineCounters {
  std::uint64_t bounce_msgs = 0;   // received through bounce slots
  std::uint64_t rndv_msgs = 0;     // received by RDMA READ
  std::uint64_t self_msgs = 0;
  std::uint64_t bytes_copied = 0;  // copied out of bounce slots or self buffers
  std::uint64_t unexpected_msgs = 0;
  std::uint64_t truncated = 0;
};

class Engine {
 public:
  // Connects to every rank of the job through `boot` (collective: every rank must call it).
  // `boot` must outlive the engine: it also tells the engine when a rank dies.
  static Result<std::unique_ptr<Engine>> create(Bootstrap& boot, const EngineConfig& cfg);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The buffer must stay valid and unchanged until the request is done (MPI semantics).
  Result<RequestPtr> isend(const void* buf, std::size_t len, int dest, std::int32_t tag, std::uint32_t context);
  Result<RequestPtr> irecv(void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context);
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
  // MPI_Iprobe: envelope and length of the earliest matching unexpected message, if any.
  Result<bool> iprobe(int source, std::int32_t tag, std::uint32_t context, Request* out);

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const EngineCounters& counters() const noexcept { return counters_; }
  // Both registration caches together.
  [[nodiscard]] nic::RegCacheCounters rcache_counters() const noexcept;
  [[nodiscard]] const Channel* channel(int peer) const { return peers_[static_cast<std::size_t>(peer)].ch.get(); }

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
  };
  struct Incoming {  // a message waiting in the unexpected queue
    int peer;
    nic::MsgType type;
    std::uint32_t slot;                   // eager: the bounce slot holding it
    std::span<const std::byte> payload;   // eager: in the slot
    std::vector<std::byte> self_copy;     // self messages
    nic::RemoteBuffer remote;             // RTS: where the data is
    std::uint32_t seq;                    // RTS: answered by FIN
    std::size_t length;
  };
  struct OutMsg {
    nic::MsgType type;
    std::uint32_t context;
    std::int32_t tag;
    std::uint32_t length;
    std::vector<std::byte> body;  // RTS body; eager bodies are sent from the user buffer
    const void* user = nullptr;
    RequestPtr req;               // completed when sent (eager) or at FIN (rendezvous)
    nic::RegCache::Handle pin;    // rendezvous: the sender's buffer stays registered until FIN
  };
  struct Read {
    RequestPtr req;
    nic::RegCache::Handle pin;
    int peer;
    std::uint32_t rts_seq;
  };
  struct Peer {
    std::unique_ptr<Channel> ch;
    std::deque<OutMsg> out;                       // in order: non-overtaking
    std::deque<std::pair<std::uint32_t, OutMsg>> awaiting_fin;  // by RTS sequence number
    std::uint32_t reads_in_flight = 0;
    std::deque<PendingRead> read_queue;          // matched RTS waiting for room to read
    bool dead = false;
  };

  Engine(Bootstrap& boot, const EngineConfig& cfg);
  Status check_peers();
  void deliver(int peer, const Arrival& a);
  Status match_and_start(PostedRecv& recv, Incoming& msg, std::int32_t tag);
  Status push_sends(int peer);
  Status fail_peer(int peer, const Status& why);
  Status on_fin(int peer, std::uint32_t rts_seq);
  Status start_reads(int peer);
  void queue_fin(int peer, std::uint32_t rts_seq);

  Bootstrap& boot_;
  int rank_;
  int size_;
  EngineConfig cfg_;
  std::unique_ptr<nic::Context> ctx_;
  std::unique_ptr<nic::ProtectionDomain> pd_;
  std::unique_ptr<nic::CompletionQueue> cq_;
  std::unique_ptr<nic::RegCache> send_cache_;  // registered for remote read (rendezvous sources)
  std::unique_ptr<nic::RegCache> recv_cache_;  // registered for local write (rendezvous targets)
  nic::RegCacheCounters rcache_sum_;
  std::vector<Peer> peers_;
  MatchQueues<PostedRecv, Incoming> match_;
  std::vector<std::unique_ptr<Read>> reads_;  // index = read cookie; null when free
  std::unordered_map<std::uint32_t, int> peer_of_qp_;
  EngineCounters counters_;
  Status deferred_;  // an error found while delivering, reported by progress()
  std::chrono::steady_clock::time_point last_check_{};
};

}  // namespace augur::host
