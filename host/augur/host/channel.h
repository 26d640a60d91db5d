// Channel: the eager path to one peer over an RC QP, with credit flow control.
//
// Receiving side: the QP takes its receives from the rank's RecvPool (one SRQ for every peer). A
// message lands in a pool slot; the owner hands it to matching and calls release(slot) once the
// data has been copied out (at once for an expected message, later for an unexpected one).
// Releasing reposts the slot and grants the peer anew (RecvPool::regrant: its window may grow or
// shrink by one); the cumulative granted count rides on our headers or is written with RDMA WRITE
// into a word at the sender, so credits never need a receive slot of their own and cannot
// deadlock. A peer that sends beyond its grant is rejected (it would take another peer's slot).
// Sending side: at most the peer's grant: sent < granted, and never more than `slots` in flight.
// Without a credit, try_send returns false and the caller queues the message (a flood of
// unexpected messages slows its sender; it never grows the receiver's memory).
// One thread drives a channel (the assist thread); the CQ may be shared by many channels.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "augur/host/layout.h"
#include "augur/host/recv_pool.h"
#include "augur/nic/verbs.h"
#include "augur/host/protocol.h"
#include "augur/status.h"

namespace augur::host {

struct ChannelConfig {
  std::uint32_t my_rank = 0;
  std::uint32_t peer_rank = 0;
  std::uint32_t slots = 64;          // send slots, and the largest window either way (<= 32767: piggybacked counts are 16-bit)
  std::uint32_t eager_limit = 8192;  // payload bytes per slot; the header comes on top
  std::uint32_t credit_slots = 16;   // direct-placement credits per direction (<= 255)
};

struct ChannelCounters {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t credit_stalls = 0;   // try_send calls refused for want of a credit
  std::uint64_t credit_writes = 0;   // RDMA WRITEs carrying our granted count to the peer
  std::uint64_t rejected = 0;        // malformed headers from the peer
  std::uint64_t short_headers = 0;   // messages sent with the 8-byte eager header
  std::uint64_t arms_carried = 0;    // arm words that rode on our messages (no RDMA WRITE of their own)
  std::uint64_t arms_written = 0;    // arm words queued to ride but written alone (idle, or no room)
  std::uint64_t arms_applied = 0;    // arm words the peer's messages carried into our table
  std::uint64_t arms_stale = 0;      // of those, skipped: the slot already held a later issue
};

// A message sitting in a bounce slot, valid until release(slot).
struct Arrival {
  proto::MsgHeader header;
  std::span<const std::byte> payload;
  std::uint32_t slot;
};

class Channel {
 public:
  // What one side tells the other: its QP address, where to write its granted count, its
  // credit table (where the peer writes the direct-placement credits it gives us), and the
  // window the peer may send into before it hears a grant.
  struct Address {
    nic::QpAddress qp;
    nic::RemoteBuffer credit_word;
    nic::RemoteBuffer credit_table;
    std::uint32_t window = 0;
  };

  // Takes its first window from `pool` (which outlives the channel).
  static Result<std::unique_ptr<Channel>> create(const nic::Context& ctx, const nic::ProtectionDomain& pd,
                                                 nic::CompletionQueue& cq, RecvPool& pool, const ChannelConfig& cfg,
                                                 const nic::ConnectOptions& connect);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  [[nodiscard]] Result<Address> address() const;
  Status connect(const Address& peer);

  // Sends one message if a credit is available (false if not: retry after progress); fills in
  // source and sequence. Eager: length = body size. RTS: length = message size, body = the
  // encoded RemoteBuffer. FIN: length = sequence number of the RTS it answers, no body.
  Result<bool> try_send(proto::MsgType type, std::uint32_t context, std::int32_t tag, std::uint32_t length,
                        std::span<const std::byte> body);
  Result<bool> try_send(std::uint32_t context, std::int32_t tag, std::span<const std::byte> payload) {
    return try_send(proto::MsgType::kEager, context, tag, static_cast<std::uint32_t>(payload.size()), payload);
  }
  // As the two above, with the eager payload (`length` bytes) gathered from `runs` into the
  // send slot: one copy for a non-contiguous send.
  Result<bool> try_send_gather(std::uint32_t context, std::int32_t tag, std::uint32_t length, const relations::Layout& from);
  // The sequence number the next message to the peer will carry.
  [[nodiscard]] std::uint32_t next_seq() const noexcept { return next_seq_out_; }
  // Direct placement, receiving side: writes a credit (entry and arm word) into slot `slot` of
  // the peer's credit table, or only its arm word. False if the send queue has no room now.
  Result<bool> write_credit(std::uint32_t slot, const proto::CreditEntry& e);
  Result<bool> write_arm(std::uint32_t slot, const proto::CreditArm& a);
  // The arm word alone, to ride on our next message to the peer (docs/early.md, "Arm words on
  // messages"); written by RDMA at flush_credits() if no message has taken it by then. For arms
  // the peer need not see at once (a speculation ahead of its receive). Always true.
  Result<bool> queue_arm(std::uint32_t slot, const proto::CreditArm& a);
  [[nodiscard]] std::uint32_t queued_arms() const noexcept { return queued_.count; }
  // Direct placement, sending side: the credit the peer put in our table at `slot`, if it is
  // armed and was read whole (fields between two equal reads of the arm word) and well formed.
  struct Credit {
    proto::CreditEntry entry;
    proto::CreditArm arm;
    std::uint64_t arm_word = 0;  // as read: the same word means the same issue of the credit
  };
  [[nodiscard]] std::optional<Credit> armed_credit(std::uint32_t slot) const;
  // The arm word of slot `slot` as it is now (slot < credit_slots()).
  [[nodiscard]] std::uint64_t arm_word(std::uint32_t slot) const noexcept {
    return std::atomic_ref<std::uint64_t>(credit_table_[slot].arm).load(std::memory_order_acquire);
  }
  // Sends one message by RDMA WRITE with immediate into the credited buffer (same ordering,
  // sequence numbers and bounce-slot flow control as try_send: the write consumes a receive).
  // The payload is copied to a send slot first, so it must fit the eager limit.
  Result<bool> try_send_direct(std::uint32_t slot, const proto::CreditEntry& e, std::span<const std::byte> payload);
  Result<bool> try_send_direct_gather(std::uint32_t slot, const proto::CreditEntry& e, std::uint32_t length,
                                      const relations::Layout& from);
  // The same for a message of any size up to the credit's capacity, written by the NIC straight
  // from registered memory (`from`: the sender's buffer, pinned by the caller until this write's
  // completion, which comes back with wr_id kind kWriteKind and `cookie`; the caller then calls
  // on_completion with it, which only frees the send queue entry).
  Result<bool> try_write_direct(std::uint32_t slot, const proto::CreditEntry& e, const nic::Sge& from,
                                std::uint32_t cookie);
  [[nodiscard]] std::uint32_t credit_slots() const noexcept { return cfg_.credit_slots; }
  // Messages received from the peer so far (the sequence number the next one must carry).
  [[nodiscard]] std::uint32_t next_seq_in() const noexcept { return next_seq_in_; }

  // Posts an RDMA READ of the peer's memory into local registered memory; its completion comes
  // back with wr_id kind kReadKind and `cookie` in the low 32 bits.
  Status post_read(std::uint32_t cookie, const nic::Sge& local, std::uint64_t remote_addr, std::uint32_t rkey);
  // The same into a local scatter list of at most max_sge() entries.
  Status post_read(std::uint32_t cookie, std::span<const nic::Sge> local, std::uint64_t remote_addr, std::uint32_t rkey,
                   std::uint64_t kind = kReadKind);
  // Scatter entries per READ: the device's max_sge, at most kMaxSge.
  [[nodiscard]] std::uint32_t max_sge() const noexcept { return max_sge_; }
  static constexpr std::uint32_t kMaxSge = 32;
  static constexpr std::uint64_t kReadKind = 4;
  static constexpr std::uint64_t kWriteKind = 5;
  static constexpr std::uint64_t kRmaKind = 6;
  // A READ of an early-released receive (the engine's choice of kind at post_read): its cookie
  // carries the READ's index in the high 16 bits.
  static constexpr std::uint64_t kReleaseReadKind = 7;
  static constexpr std::uint32_t kMaxRma = 32;  // one-sided operations in flight per channel (send queue room)
  // Posts a one-sided operation (the engine keeps at most kMaxRma in flight); its completion
  // comes back with wr_id kind kRmaKind and `cookie`, for the engine alone.
  Status post_rma(std::uint32_t cookie, nic::SendRequest wr);
  static constexpr std::uint32_t kInlineBytes = 128;  // messages this small (header included) go inline
  static constexpr std::uint32_t kMaxReads = 16;  // reads in flight per channel (send queue room)
  // Handles one completion of this channel's QP and returns the arrival it carries, if any; a
  // malformed header is a kProtocol error and its slot is released without delivery. A direct write
  // arrives as a header of type kDirect with context = credit slot and length from the
  // immediate, and an empty payload.
  Result<std::optional<Arrival>> on_completion(const nic::Completion& c);
  // Gives a slot back to the peer (reposts it to the pool; grants flow back in batches).
  Status release(std::uint32_t slot);
  // Gives a slot back on the next repost_released() instead: the owner calls that after the
  // caller's next message is posted, so the repost is not on the path from arrival to reply.
  // Until then the slot is not counted as freed, so the peer never sends into it early. True
  // if it is the first slot held since the last repost_released() (the owner then notes us).
  bool release_later(std::uint32_t slot);
  // Reposts every slot given to release_later(); true if there were any.
  Result<bool> repost_released();
  // Writes any grant not yet sent and any queued arm word (call when idle, so a quiet receiver
  // never stalls a sender).
  Status flush_credits();

  [[nodiscard]] std::uint32_t qp_num() const noexcept;
  [[nodiscard]] std::uint32_t credits() const noexcept;  // sends possible right now
  [[nodiscard]] const ChannelCounters& counters() const noexcept { return counters_; }
  // Memory this channel keeps registered: its send ring (slots x (eager limit + header)), the
  // granted-count words and the credit table. Its receives are the pool's.
  [[nodiscard]] std::size_t registered_bytes() const noexcept {
    return send_mr_->length() + words_mr_->length() + table_mr_->length();
  }
  // The slots of the pool reserved for the peer now (those holding its messages included).
  [[nodiscard]] std::uint32_t window() const noexcept { return static_cast<std::uint32_t>(granted_ - freed_); }
  [[nodiscard]] std::uint32_t slot_bytes() const noexcept { return slot_bytes_; }

  // For tests that play a faulty peer: sends raw bytes as one message (consumes a credit).
  Result<bool> try_send_raw_for_test(std::span<const std::byte> bytes);
  // The same without a credit: a peer that sends beyond its grant.
  Result<bool> try_send_ungranted_for_test(std::span<const std::byte> bytes);
  // Fault injection: the connection's QP goes to the error state, as on a transport failure.
  Status force_error_for_test() { return qp_->to_error(); }
  // Whether the QP broke (checked at the keepalive: an idle broken QP reports nothing by itself).
  [[nodiscard]] Result<bool> broken() const { return qp_->in_error(); }

 private:
  Channel(const ChannelConfig& cfg, const nic::Context& ctx, nic::CompletionQueue& cq, RecvPool& pool);
  Status write_credits();
  [[nodiscard]] std::uint64_t peer_grant() const noexcept;
  // Posts the current send slot's first `len` bytes, then `tail` (inline only: the driver copies
  // both into the work request at post time, so `tail` may be the caller's buffer).
  Result<bool> send_slot(std::uint32_t len, std::span<const std::byte> tail = {});
  // try_send / try_send_direct with the payload written into the slot by fill(slot_payload).
  template <typename Fill>
  Result<bool> send_filled(proto::MsgType type, std::uint32_t context, std::int32_t tag, std::uint32_t length,
                           std::size_t body_bytes, const Fill& fill, std::span<const std::byte> inline_body = {});
  template <typename Fill>
  Result<bool> send_direct_filled(std::uint32_t slot, const proto::CreditEntry& e, std::uint32_t len, const Fill& fill,
                                  std::span<const std::byte> inline_body = {});
  Result<bool> post_credit_write(std::span<const std::byte> bytes, std::uint64_t remote_addr);
  Result<bool> post_arm_write(std::uint32_t slot, std::uint64_t raw);
  void unqueue_arm(std::uint32_t slot) noexcept;
  Status write_queued_arms();
  // Applies the arm words a message from the peer carried; kProtocol for a slot out of range.
  Status apply_arms(const proto::CarriedArms& arms);
  std::byte* next_send_slot();

  ChannelConfig cfg_;
  const nic::Context& ctx_;
  nic::CompletionQueue& cq_;
  RecvPool& pool_;
  nic::ConnectOptions connect_{};
  std::uint32_t slot_bytes_;
  std::uint32_t psn_;
  std::uint32_t max_sge_ = 1;
  std::vector<std::byte> send_ring_;
  std::unique_ptr<std::uint64_t[]> words_;  // [0]: the peer's grant to us, written by the peer; [1]: ours, the source of our writes
  std::unique_ptr<proto::CreditEntry[]> credit_table_;  // credits the peer gives us, written by its NIC
  std::unique_ptr<nic::MemoryRegion> send_mr_, words_mr_, table_mr_;
  nic::RemoteBuffer peer_table_{};
  std::unique_ptr<nic::QueuePair> qp_;
  nic::RemoteBuffer peer_word_{};
  std::uint64_t sent_ = 0;
  std::uint64_t freed_ = 0;            // slots we have released
  std::uint64_t consumed_ = 0;         // receives the peer's messages took
  std::uint64_t granted_ = 0;          // messages the peer may have sent in all (freed_ + our window)
  std::uint32_t first_window_ = 0;     // granted_ at creation, told in our address
  std::vector<std::uint32_t> released_;  // release_later(): slots to repost (capacity: every slot)
  std::uint64_t granted_written_ = 0;  // grant last told the peer (header or write)
  std::uint64_t peer_granted_ = 0;     // the peer's grant to us as its address and headers told us
  std::uint32_t next_seq_out_ = 0;
  std::uint32_t next_seq_in_ = 0;
  std::uint32_t outstanding_sends_ = 0;
  std::uint32_t outstanding_credit_writes_ = 0;
  proto::CarriedArms queued_;  // queue_arm(): arm words waiting for our next message
  ChannelCounters counters_;
};

}  // namespace augur::host
