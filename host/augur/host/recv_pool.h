// RecvPool: the eager receive slots of all of a rank's channels, posted to one shared receive
// queue (SRQ) instead of a ring per peer, so that the memory for eager receives follows the pool,
// not the number of peers.
//
// Flow control stays credit-based, and no message ever finds the SRQ empty (no RNR wait): every
// slot belongs either to one peer's window or to the unassigned rest, and a peer may have at most
// its window of messages not yet given back. A channel starts with `peer_window` slots (taken from
// the unassigned ones; the pool registers another `chunk_slots` when too few are left) and, each
// time it gives a slot back, asks regrant() how many to grant its peer anew:
//  - 2 (the window grows by one) while the unassigned slots exceed the reserve kept for the next
//    peer and the window is below `max_window`;
//  - 0 (it shrinks by one) while the unassigned slots are below that reserve and the window is
//    above `peer_window`;
//  - 1 otherwise.
// So busy peers borrow slots that idle ones do not use, a new peer is admitted without growing the
// pool, and Σ windows ≤ slots holds at every step. One thread drives the pool (the engine's
// progress), as for the channels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "augur/nic/verbs.h"
#include "augur/status.h"

namespace augur::host {

struct RecvPoolConfig {
  std::uint32_t slot_bytes = 8192 + 24;  // the eager limit plus the message header
  std::uint32_t chunk_slots = 128;       // AUGUR_SRQ_SLOTS: registered at creation, and per growth
  std::uint32_t peer_window = 16;        // AUGUR_SRQ_PEER_SLOTS: a peer's first and smallest window
  std::uint32_t max_window = 64;         // AUGUR_SLOTS: a peer's largest window
  std::uint32_t max_slots = 16384;       // AUGUR_SRQ_MAX_SLOTS: the pool never grows beyond
};

struct RecvPoolCounters {
  std::uint64_t chunks = 0;          // registrations of chunk_slots slots
  std::uint64_t windows_grown = 0;   // slots lent to a busy peer
  std::uint64_t windows_shrunk = 0;  // slots taken back from one
};

class RecvPool {
 public:
  static Result<std::unique_ptr<RecvPool>> create(const nic::Context& ctx, const nic::ProtectionDomain& pd,
                                                  const RecvPoolConfig& cfg);
  RecvPool(const RecvPool&) = delete;
  RecvPool& operator=(const RecvPool&) = delete;
  ~RecvPool();

  // A receive's wr_id: kRecvKind << 32 | slot (the channels' own kinds are others).
  static constexpr std::uint64_t kRecvKind = 1;

  [[nodiscard]] const nic::SharedReceiveQueue& srq() const noexcept { return *srq_; }
  // A new peer's first window, taken from the unassigned slots (the pool grows by a chunk when
  // fewer than peer_window are left). kResourceExhausted when the pool is at max_slots and full.
  Result<std::uint32_t> admit();
  // A peer with window `window` gave a slot back: how many to grant it (0, 1 or 2, see above).
  std::uint32_t regrant(std::uint32_t window) noexcept;
  // A peer's window (`window` slots not holding its messages) returns to the unassigned ones.
  void retire(std::uint32_t window) noexcept { unassigned_ += window; }
  // Posts slot `slot` to the SRQ again.
  Status repost(std::uint32_t slot);
  [[nodiscard]] bool valid(std::uint32_t slot) const noexcept { return slot < slots_.size(); }
  // The first `len` bytes of slot `slot` (valid, len <= slot_bytes).
  [[nodiscard]] std::span<const std::byte> bytes(std::uint32_t slot, std::uint32_t len) const noexcept {
    return {slots_[slot].addr, len};
  }
  [[nodiscard]] std::uint32_t slot_bytes() const noexcept { return cfg_.slot_bytes; }
  [[nodiscard]] std::uint32_t slots() const noexcept { return static_cast<std::uint32_t>(slots_.size()); }
  [[nodiscard]] std::uint32_t unassigned() const noexcept { return unassigned_; }
  [[nodiscard]] std::uint32_t max_window() const noexcept { return cfg_.max_window; }
  [[nodiscard]] std::size_t registered_bytes() const noexcept {
    return std::size_t{slots()} * cfg_.slot_bytes;
  }
  [[nodiscard]] const RecvPoolCounters& counters() const noexcept { return counters_; }

 private:
  struct Slot {
    std::byte* addr;
    std::uint32_t lkey;
  };
  struct Chunk {
    std::unique_ptr<std::byte[]> mem;
    std::unique_ptr<nic::MemoryRegion> mr;
  };
  RecvPool(const RecvPoolConfig& cfg, const nic::ProtectionDomain& pd) : cfg_(cfg), pd_(pd) {}
  Status grow();

  RecvPoolConfig cfg_;
  const nic::ProtectionDomain& pd_;
  std::unique_ptr<nic::SharedReceiveQueue> srq_;
  std::vector<Chunk> chunks_;
  std::vector<Slot> slots_;  // a flat table: no division on the receive path
  std::uint32_t unassigned_ = 0;
  RecvPoolCounters counters_;
};

}  // namespace augur::host
