// Move-only RAII owners for verbs objects. This header hides <infiniband/verbs.h> so that layers
// above nic/ never see verbs types; only nic/*.cpp include it.
//
// Lifetime: a Context outlives its ProtectionDomain, CompletionChannel and CompletionQueues; a
// ProtectionDomain outlives its MemoryRegions and QueuePairs; a QueuePair is destroyed before its
// CompletionQueues. Declare members in creation order and destruction is the reverse.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "augur/status.h"

struct ibv_context;
struct ibv_pd;
struct ibv_comp_channel;
struct ibv_cq;
struct ibv_qp;
struct ibv_mr;
struct ibv_srq;

namespace augur::nic {

// The loopback device (AUGUR_DEVICE=loopback, nic/loopback.h): the same objects in software.
namespace loop {
struct Mr;
struct Channel;
struct Cq;
struct Qp;
struct Srq;
}  // namespace loop

namespace detail {
struct LoopMrDeleter { void operator()(loop::Mr* p) const noexcept; };
struct LoopChannelDeleter { void operator()(loop::Channel* p) const noexcept; };
struct LoopCqDeleter { void operator()(loop::Cq* p) const noexcept; };
struct LoopQpDeleter { void operator()(loop::Qp* p) const noexcept; };
struct LoopSrqDeleter { void operator()(loop::Srq* p) const noexcept; };
struct ContextDeleter { void operator()(ibv_context* p) const noexcept; };
struct PdDeleter { void operator()(ibv_pd* p) const noexcept; };
struct ChannelDeleter { void operator()(ibv_comp_channel* p) const noexcept; };
struct CqDeleter { void operator()(ibv_cq* p) const noexcept; };
struct QpDeleter { void operator()(ibv_qp* p) const noexcept; };
struct MrDeleter { void operator()(ibv_mr* p) const noexcept; };
struct SrqDeleter { void operator()(ibv_srq* p) const noexcept; };
}  // namespace detail

// Some user memory may now be inaccessible to the program (PROT_NONE, host::PageGuard) while
// the device still writes or reads it, as a NIC's DMA does. The loopback device then moves its
// bytes through /proc/self/mem, which page protection does not stop. Called by the first guard;
// there is no way back (a guard may be up at any time after).
void note_guarded_memory() noexcept;

struct Gid {
  std::array<std::uint8_t, 16> raw{};
  [[nodiscard]] bool is_zero() const noexcept;
  [[nodiscard]] std::string to_string() const;  // "fe80:0000:..." as ibv_devinfo prints
};

enum class LinkLayer : std::uint8_t { kInfiniBand = 0, kEthernet = 1 };

struct PortAttr {
  std::uint8_t port = 1;
  LinkLayer link_layer = LinkLayer::kInfiniBand;
  bool active = false;
  std::uint16_t lid = 0;
  std::uint8_t active_mtu = 0;  // verbs enum value: 1=256 ... 5=4096 bytes
  std::uint32_t active_mtu_bytes = 0;
};

struct DeviceLimits {
  std::uint32_t max_sge = 0;
  std::uint32_t max_qp_wr = 0;
  std::uint32_t max_cqe = 0;
  std::uint32_t max_qp_rd_atom = 0;
  std::uint64_t max_mr_size = 0;
  std::uint32_t max_srq_wr = 0;  // 0: the device has no shared receive queues
  // The device's work runs on this host's CPUs (rxe, siw, the loopback device): a core that
  // polls is one the device cannot use.
  bool software = false;
};

// Names of the verbs devices on this host, in the order libibverbs lists them.
Result<std::vector<std::string>> list_devices();

class Context {
 public:
  // Opens the named device; an empty name opens the first device listed; "loopback" opens the
  // in-process software device (never listed: it connects only threads of one process).
  static Result<Context> open(std::string_view name);

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] Result<PortAttr> query_port(std::uint8_t port) const;
  [[nodiscard]] Result<DeviceLimits> limits() const;
  [[nodiscard]] Result<Gid> query_gid(std::uint8_t port, int index) const;
  // The GID index to address this port by: on RoCE the RoCE v2 IPv4-mapped entry, else the first
  // RoCE v2 entry, else index 0 (InfiniBand, RoCE v1).
  [[nodiscard]] Result<int> select_gid_index(std::uint8_t port) const;
  [[nodiscard]] ibv_context* get() const noexcept { return ctx_.get(); }
  [[nodiscard]] bool loopback() const noexcept { return ctx_ == nullptr; }

 private:
  Context(ibv_context* ctx, std::string name) : ctx_(ctx), name_(std::move(name)) {}
  std::unique_ptr<ibv_context, detail::ContextDeleter> ctx_;  // null: the loopback device
  std::string name_;
};

class ProtectionDomain {
 public:
  static Result<ProtectionDomain> create(const Context& ctx);
  [[nodiscard]] ibv_pd* get() const noexcept { return pd_.get(); }
  [[nodiscard]] bool loopback() const noexcept { return pd_ == nullptr; }

 private:
  explicit ProtectionDomain(ibv_pd* pd) : pd_(pd) {}
  std::unique_ptr<ibv_pd, detail::PdDeleter> pd_;  // null: the loopback device
};

enum Access : std::uint32_t {
  kLocalWrite = 1u << 0,
  kRemoteWrite = 1u << 1,
  kRemoteRead = 1u << 2,
  kRemoteAtomic = 1u << 3,  // 8-byte fetch-and-add and compare-and-swap by peers (RMA windows)
};

// Memory this process has registered (pinned) on verbs devices, over every MemoryRegion: the
// runtime's own buffers and the registration caches' user buffers alike. The loopback device's
// regions are not counted (its ranks are threads of one process).
struct PinnedCounters {
  std::uint64_t bytes = 0;       // registered now
  std::uint64_t regions = 0;
  std::uint64_t peak_bytes = 0;  // the most registered at once
};
PinnedCounters pinned_counters() noexcept;

class MemoryRegion {
 public:
  static Result<MemoryRegion> register_memory(const ProtectionDomain& pd, void* addr, std::size_t length,
                                              std::uint32_t access);
  [[nodiscard]] void* addr() const noexcept;
  [[nodiscard]] std::size_t length() const noexcept;
  [[nodiscard]] std::uint32_t lkey() const noexcept;
  [[nodiscard]] std::uint32_t rkey() const noexcept;

 private:
  explicit MemoryRegion(ibv_mr* mr) : mr_(mr) {}
  explicit MemoryRegion(loop::Mr* mr) : loop_(mr) {}
  std::unique_ptr<ibv_mr, detail::MrDeleter> mr_;
  std::unique_ptr<loop::Mr, detail::LoopMrDeleter> loop_;
};

// Event channel so the assist thread can sleep until a completion arrives instead of spinning.
class CompletionChannel {
 public:
  static Result<CompletionChannel> create(const Context& ctx);
  [[nodiscard]] int fd() const noexcept;
  [[nodiscard]] ibv_comp_channel* get() const noexcept { return ch_.get(); }

 private:
  friend class CompletionQueue;
  explicit CompletionChannel(ibv_comp_channel* ch) : ch_(ch) {}
  explicit CompletionChannel(loop::Channel* ch) : loop_(ch) {}
  std::unique_ptr<ibv_comp_channel, detail::ChannelDeleter> ch_;
  std::unique_ptr<loop::Channel, detail::LoopChannelDeleter> loop_;
};

enum class WcOpcode : std::uint8_t { kSend, kRdmaWrite, kRdmaRead, kRecv, kRecvRdmaWithImm, kAtomic, kOther };

struct Completion {
  std::uint64_t wr_id = 0;
  int wc_status = 0;        // raw ibv_wc_status; 0 is success
  WcOpcode opcode = WcOpcode::kOther;
  std::uint32_t byte_len = 0;
  bool has_imm = false;
  std::uint32_t imm = 0;    // host byte order
  std::uint32_t qp_num = 0;
  std::uint32_t vendor_err = 0;
  [[nodiscard]] bool ok() const noexcept { return wc_status == 0; }
  [[nodiscard]] Status status() const;  // OK, or the completion error named as ibv_wc_status_str does
};

// The one place where an ibv_wc_status becomes a Status.
Status wc_status_to_status(int wc_status, std::uint32_t vendor_err = 0);

class CompletionQueue {
 public:
  // `channel` may be null for a polled-only CQ.
  static Result<CompletionQueue> create(const Context& ctx, int min_entries, CompletionChannel* channel);
  // Grows (or shrinks) the CQ to hold at least `min_entries` completions; work in flight stays.
  Status resize(int min_entries);
  // Polls up to out.size() completions; returns how many were written.
  Result<std::size_t> poll(std::span<Completion> out);
  // Asks for an event on the channel at the next completion (then poll again to close the race).
  Status request_notify();
  // Blocks on the channel until this CQ has an event or `timeout_ms` passes (kTimeout), acks it.
  Status wait_event(CompletionChannel& channel, int timeout_ms);
  // Takes and acks the event waiting on the channel (its fd polled readable).
  Status consume_event(CompletionChannel& channel);
  [[nodiscard]] ibv_cq* get() const noexcept { return cq_.get(); }

 private:
  friend class QueuePair;
  explicit CompletionQueue(ibv_cq* cq) : cq_(cq) {}
  explicit CompletionQueue(loop::Cq* cq) : loop_(cq) {}
  std::unique_ptr<ibv_cq, detail::CqDeleter> cq_;
  std::unique_ptr<loop::Cq, detail::LoopCqDeleter> loop_;
};

struct Sge {
  std::uint64_t addr = 0;
  std::uint32_t length = 0;
  std::uint32_t lkey = 0;
};

// The atomics act on one naturally aligned 8-byte word of the peer (remote_addr) and return its
// old value into the single 8-byte local SGE; the word is in the peer's byte order (a job's
// hosts share one, bootstrap checks it).
enum class SendOp : std::uint8_t {
  kSend, kSendWithImm, kRdmaWrite, kRdmaWriteWithImm, kRdmaRead, kFetchAdd, kCompareSwap
};

struct SendRequest {
  std::uint64_t wr_id = 0;
  SendOp op = SendOp::kSend;
  std::span<const Sge> sges;
  std::uint64_t remote_addr = 0;  // RDMA ops
  std::uint32_t rkey = 0;         // RDMA ops
  std::uint32_t imm = 0;          // *WithImm, host byte order
  std::uint64_t compare_add = 0;  // kFetchAdd: the addend; kCompareSwap: the value compared
  std::uint64_t swap = 0;         // kCompareSwap: the value written if equal
  bool signaled = true;
  bool inline_data = false;
};

struct QpCaps {
  std::uint32_t max_send_wr = 128;
  std::uint32_t max_recv_wr = 128;
  std::uint32_t max_send_sge = 1;
  std::uint32_t max_recv_sge = 1;
  std::uint32_t max_inline_data = 0;
};

struct QpAddress;  // wire.h

// A shared receive queue: receives posted once, consumed by the SENDs and WRITEs-with-immediate
// of every QP attached to it, in posting order. A completion names the QP it came through
// (Completion::qp_num) and the receive by its wr_id. Receives not yet consumed stay posted when an
// attached QP breaks (they are not flushed with it). Outlives the QPs attached to it.
class SharedReceiveQueue {
 public:
  static Result<SharedReceiveQueue> create(const ProtectionDomain& pd, std::uint32_t max_wr);
  Status post_recv(std::uint64_t wr_id, std::span<const Sge> sges);
  [[nodiscard]] std::uint32_t max_wr() const noexcept { return max_wr_; }
  [[nodiscard]] ibv_srq* get() const noexcept { return srq_.get(); }

 private:
  friend class QueuePair;
  SharedReceiveQueue(ibv_srq* srq, std::uint32_t max_wr) : srq_(srq), max_wr_(max_wr) {}
  SharedReceiveQueue(loop::Srq* srq, std::uint32_t max_wr) : loop_(srq), max_wr_(max_wr) {}
  std::unique_ptr<ibv_srq, detail::SrqDeleter> srq_;
  std::unique_ptr<loop::Srq, detail::LoopSrqDeleter> loop_;
  std::uint32_t max_wr_ = 0;
};

// RC connection parameters for this side; the timeouts decide how fast a dead peer is noticed.
struct ConnectOptions {
  std::uint8_t port = 1;
  int gid_index = -1;            // -1: Context::select_gid_index
  std::uint8_t timeout = 16;     // local ACK timeout, 4.096 us * 2^timeout (x8 tries: 2.1 s of loss survived)
  std::uint8_t retry_cnt = 7;
  std::uint8_t rnr_retry = 7;    // 7 = retry forever on receiver-not-ready
  std::uint8_t min_rnr_timer = 12;
  std::uint8_t max_rd_atomic = 16;  // capped by the device's max_qp_rd_atom
};

class QueuePair {
 public:
  // With `srq`, receives come from it (caps.max_recv_wr is ignored; post_recv is refused).
  static Result<QueuePair> create_rc(const ProtectionDomain& pd, const CompletionQueue& send_cq,
                                     const CompletionQueue& recv_cq, const QpCaps& caps,
                                     const SharedReceiveQueue* srq = nullptr);
  [[nodiscard]] std::uint32_t qp_num() const noexcept;
  // This side's address for the peer (QP number, PSN, LID, GID, MTU).
  [[nodiscard]] Result<QpAddress> local_address(const Context& ctx, const ConnectOptions& opt,
                                                std::uint32_t psn) const;
  // RESET -> INIT -> RTR -> RTS against the peer's address.
  Status connect(const Context& ctx, const ConnectOptions& opt, const QpAddress& local,
                 const QpAddress& remote);
  Status post_send(const SendRequest& wr);
  Status post_recv(std::uint64_t wr_id, std::span<const Sge> sges);
  // Moves the QP to the error state: outstanding work completes flushed, new work fails.
  Status to_error();
  // True if the QP is in the error state (a transport failure, or to_error). With an SRQ a
  // broken QP flushes no receives, so an idle one is found only by asking (ibv_query_qp).
  [[nodiscard]] Result<bool> in_error() const;
  [[nodiscard]] ibv_qp* get() const noexcept { return qp_.get(); }

 private:
  explicit QueuePair(ibv_qp* qp) : qp_(qp) {}
  explicit QueuePair(loop::Qp* qp) : loop_(qp) {}
  std::unique_ptr<ibv_qp, detail::QpDeleter> qp_;
  std::unique_ptr<loop::Qp, detail::LoopQpDeleter> loop_;
};

}  // namespace augur::nic
