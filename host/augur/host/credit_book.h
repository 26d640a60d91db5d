// CreditBook: the direct-placement credits between this rank and one peer, in both directions,
// as state and rules (docs/runtime.md, "Direct placement and steering").
//
// Receiving side: the credits this rank gave the peer, one per slot of the peer's credit table,
// each free, staged for a predicted receive, armed by a posted receive, or being revoked. The
// book decides which slot a receive takes and what travels (the arm word alone, or the whole
// entry) and writes it through a CreditWriter (the peer's channel; a fake in tests).
// Sending side: which credits the peer wrote into our table may still be written through: not
// revoked, and no message with their envelope sent since their receive was posted (that message
// takes the receive).
// One thread uses a book: the one that runs the protocols. The steering policy decides what to
// credit; the book only keeps each credit's state right.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "augur/host/protocol.h"
#include "augur/host/request.h"
#include "augur/nic/reg_cache.h"
#include "augur/status.h"

namespace augur::host {

// Credits, summed over peers (EngineCounters has the same fields).
struct CreditCounters {
  std::uint64_t issued = 0;       // written to senders (armed at once, or staged)
  std::uint64_t armed_ahead = 0;  // staged by prediction and armed by the post (the arm word alone)
  std::uint64_t rearmed = 0;      // of issued, re-armed by the arm word alone (entry already at the sender)
  std::uint64_t used = 0;         // a message came through
  std::uint64_t revoked = 0;      // void (receive matched otherwise), cancelled, or staged in vain
};

// The receiving side's writes into the peer's credit table (the engine's channel; tests fake it).
class CreditWriter {
 public:
  virtual ~CreditWriter() = default;
  // Entry and arm word, or the arm word alone. False: no room to send now (a bounce instead).
  virtual Result<bool> write_credit(std::uint32_t slot, const proto::CreditEntry& e) = 0;
  virtual Result<bool> write_arm(std::uint32_t slot, const proto::CreditArm& a) = 0;
  // The arm word alone for a credit the peer need not see at once: it may ride on the next
  // message to the peer (Channel::queue_arm). By default written at once.
  virtual Result<bool> queue_arm(std::uint32_t slot, const proto::CreditArm& a) { return write_arm(slot, a); }
  // The sequence number of the next message from the peer: a new arm is valid from it.
  [[nodiscard]] virtual std::uint32_t next_seq_in() const = 0;
};

class CreditBook {
 public:
  // A credit this rank gave the peer, by slot.
  struct Given {
    enum class State : std::uint8_t {
      kFree,
      kPending,   // staged for a predicted receive; the sender may not use it yet
      kArmed,     // held by a posted receive (req)
      kRevoking,  // its receive is being cancelled: waiting for the sender's kRevokeAck
      kAwaitAck,  // used or void while revoking: only the kRevokeAck is still to come
      kLanding,   // names a landing zone (no receive): the next message with the envelope may land there
      kSpeculative,  // armed into a predicted receive's buffer before its post (no receive yet)
    };
    State state = State::kFree;
    std::uint32_t generation = 0;
    RequestPtr req{};
    const void* buf = nullptr;
    std::uint32_t cap = 0;
    std::uint32_t context = 0;
    std::int32_t tag = 0;
    nic::RegCache::Handle pin{};
    // The entry fields (buf, cap, context, tag, rkey) the sender's table holds for this slot:
    // a later receive into the same buffer, still registered under the same rkey, re-arms it
    // with the 8-byte arm word alone (a free slot keeps them; at_peer says they are there).
    std::uint32_t rkey = 0;
    bool at_peer = false;
    std::uint64_t stamp = 0;  // when last armed or staged: the least recently used is replaced
    bool landing = false;     // the entry at the peer names a landing zone, not a receive buffer
    bool speculative = false; // armed before its receive was posted (kSpeculative, or revoking one)
  };
  // A direct write's receive, settled.
  struct Direct {
    RequestPtr req;  // null for a landing zone's write or a speculative one
    std::int32_t tag;
    std::uint32_t context;
    bool landing;      // the data is in the landing zone of this slot, not in a receive buffer
    bool speculative;  // the data is in the predicted buffer, whose receive may not be posted yet
  };
  // A credit the sender may write through now (usable()).
  struct Usable {
    std::uint32_t slot;
    proto::CreditEntry entry;
    std::uint64_t arm_word;  // the issue found; consumed() retires it
    bool landing;
  };

  // `slots`: the credit table's size, each way. `counters` is shared by the books of all peers.
  CreditBook(std::uint32_t slots, CreditCounters& counters);

  // ---- Receiving side.
  // A receive posted into [buf, buf + len) with this envelope gets a credit: the one staged for
  // exactly it (the arm word travels), else the entry the peer still holds for that buffer under
  // its current rkey (re-armed with a new generation), else a new entry in a free or staged slot
  // (the least recently used). Nothing, and the receive goes by bounce, when every credit is
  // out, the buffer cannot be registered or the writer has no room. Sets req's credit_slot.
  Status give(CreditWriter& w, nic::RegCache& pins, const RequestPtr& req, void* buf, std::size_t len,
              std::uint32_t context, std::int32_t tag);
  // Writes a credit ahead (kPending) for a predicted receive, at most `depth` staged at once.
  Status stage(CreditWriter& w, nic::RegCache& pins, const void* buf, std::size_t len, std::uint32_t context,
               std::int32_t tag, std::uint32_t depth);
  // Writes an armed landing credit: [addr, addr + cap) is runtime memory registered under `rkey`
  // (a landing zone, docs/early.md) for the next message with this envelope. Its slot, or
  // nothing when no slot is free or there is no room to write now (nothing changed).
  Result<std::optional<std::uint32_t>> stage_landing(CreditWriter& w, std::uint64_t addr, std::uint32_t cap, std::uint32_t rkey,
                             std::uint32_t context, std::int32_t tag);
  // Withdraws an unused landing credit (the engine sends kRevoke with the generation returned);
  // nothing if `slot` holds no landing credit now.
  std::optional<std::uint32_t> revoke_landing(std::uint32_t slot);
  // Speculative placement (docs/early.md): an armed credit for [buf, buf + len), a predicted
  // receive's buffer, written before that receive is posted; `pin` registers it. On the wire it
  // is a receive's armed credit, so the sender's envelope rule holds: only the next message with
  // the envelope may use it, any other voids it. Its slot, or nothing (no slot or no room now).
  Result<std::optional<std::uint32_t>> speculate(CreditWriter& w, nic::RegCache::Handle pin, const void* buf,
                                                 std::size_t len, std::uint32_t context, std::int32_t tag);
  // The receive the speculative credit in `slot` was armed for is posted: it holds the credit
  // from now on (kArmed). False if the slot holds no unused speculative credit.
  bool adopt(std::uint32_t slot, const RequestPtr& req);
  // Withdraws an unused speculative credit (kRevoke with the generation returned), or nothing.
  std::optional<std::uint32_t> revoke_speculative(std::uint32_t slot);
  // A message with the envelope of the speculative credit in `slot` came otherwise: the sender
  // holds it void, so the slot is free (or awaits the revoke's answer).
  void settle_speculative(std::uint32_t slot);
  // The receive holding `slot` matched a message sent otherwise: the sender holds the credit
  // void already, so the slot is free at once (or awaits the revoke's answer).
  void settle_void(std::uint32_t slot);
  // A direct write of `length` bytes through `slot`: its receive (to be completed), or kProtocol
  // when the slot is not armed for that size.
  Result<Direct> on_direct(std::uint32_t slot, std::uint32_t length);
  // Cancel of the receive holding `slot`: the generation to revoke, if the credit is armed
  // (then it waits for the sender's kRevokeAck); nothing if it is already settling.
  std::optional<std::uint32_t> revoke(std::uint32_t slot);
  // The sender's kRevokeAck: the receive to complete as cancelled when nothing came through
  // (null otherwise); kProtocol for an answer to no revocation.
  Result<RequestPtr> on_revoke_ack(std::uint32_t slot, std::uint32_t generation);
  // The peer is gone: every slot free with nothing at the peer (generations go on).
  void reset();
  [[nodiscard]] std::span<const Given> given() const noexcept { return given_; }

  // ---- Sending side.
  // A data message with this envelope went out with sequence number `seq`.
  void note_sent(std::uint32_t context, std::int32_t tag, std::uint32_t seq);
  // The peer revoked its credit in `slot` of `generation`; kProtocol for a slot out of range.
  Status on_revoked(std::uint32_t slot, std::uint32_t generation);
  // A credit in the peer's table `t` that a message of `length` bytes with this envelope may be
  // written through now: a receive's credit before a landing zone's (the receive then needs no
  // copy). `t` gives credit_slots(), arm_word(k) and armed_credit(k), as Channel does
  // (std::optional<Channel::Credit>). After a write through it, call consumed().
  template <class Table>
  std::optional<Usable> usable(const Table& t, std::uint32_t context, std::int32_t tag, std::size_t length);
  // A message went through `u`: that issue of the credit is never used again (a landing credit
  // is not voided by note_sent, so this is what retires it).
  void consumed(const Usable& u) noexcept { dead_arm_[u.slot] = u.arm_word; }
  // last_sent's bound: programs whose tags never repeat would grow it forever.
  static constexpr std::size_t kMaxEnvelopes = 4096;

 private:
  Given* slot_for_new_entry();
  void take(Given& g, std::uint32_t slot, const RequestPtr& req);
  // Writes a whole entry for [buf, buf + len) into g's slot at the peer with `arm`; on success g
  // holds it (armed or pending as `arm` says, no receive yet). False: no room, g unchanged.
  Result<bool> write_entry(CreditWriter& w, Given& g, nic::RegCache::Handle pin, std::uint32_t rkey, const void* buf,
                           std::size_t len, std::uint32_t context, std::int32_t tag, const proto::CreditArm& arm);
  static std::uint64_t envelope(std::uint32_t context, std::int32_t tag) {
    return std::uint64_t{context} << 32 | static_cast<std::uint32_t>(tag);
  }
  static bool seq_at_or_after(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) >= 0; }

  CreditCounters& counters_;
  std::vector<Given> given_;
  std::uint64_t clock_ = 0;  // Given::stamp source
  // Sending side: envelope -> sequence number of the last data message sent with it. When full
  // it is cleared and `last_sent_floor_` stands for every envelope not in it, as if last sent
  // then, which can only void a credit that was in fact still good (a bounce), never the reverse.
  std::unordered_map<std::uint64_t, std::uint32_t> last_sent_;
  std::optional<std::uint32_t> last_sent_floor_;
  std::vector<std::uint32_t> revoked_;  // by slot: generation+1 of the credit the peer revoked
  // By slot: the arm word of a credit found void for good (revoked, or its envelope sent since
  // it was armed), so that later sends skip it with one load instead of parsing it again.
  std::vector<std::uint64_t> dead_arm_;
};

template <class Table>
std::optional<CreditBook::Usable> CreditBook::usable(const Table& t, std::uint32_t context, std::int32_t tag,
                                                     std::size_t length) {
  const auto found = last_sent_.find(envelope(context, tag));
  const std::optional<std::uint32_t> last = found != last_sent_.end() ? std::optional(found->second) : last_sent_floor_;
  const std::uint32_t n = std::min<std::uint32_t>(t.credit_slots(), static_cast<std::uint32_t>(dead_arm_.size()));
  std::optional<Usable> landing;
  for (std::uint32_t k = 0; k < n; ++k) {
    if (t.arm_word(k) == dead_arm_[k]) continue;  // free (0), or known void
    const auto c = t.armed_credit(k);
    if (!c) continue;
    if (revoked_[k] == c->arm.generation + 1) {
      dead_arm_[k] = c->arm_word;
      continue;
    }
    if (c->entry.context != context || c->entry.tag != tag || c->entry.capacity < length) continue;
    if (c->arm.state == proto::CreditState::kLanding) {  // no receive to void; used once
      if (!landing) landing = Usable{k, c->entry, c->arm_word, true};
      continue;
    }
    // Void when a message with this envelope went out since the receive was posted: that
    // message takes the receive. For good: the envelope's last sequence number only grows.
    if (last && seq_at_or_after(*last, c->arm.valid_from_seq)) {
      dead_arm_[k] = c->arm_word;
      continue;
    }
    return Usable{k, c->entry, c->arm_word, false};
  }
  return landing;
}

}  // namespace augur::host
