// The credit state machine of one peer (host/augur/host/credit_book.h; rules in docs/runtime.md).

#include "augur/host/credit_book.h"

#include <string>

namespace augur::host {

using State = CreditBook::Given::State;

CreditBook::CreditBook(std::uint32_t slots, CreditCounters& counters)
    : counters_(counters), given_(slots), revoked_(slots, 0), dead_arm_(slots, 0) {}  // 0: a free slot's word

CreditBook::Given* CreditBook::slot_for_new_entry() {
  // A slot never written comes first (age 0), then by last use.
  auto age = [](const Given& g) { return g.at_peer ? g.stamp + 1 : 0; };
  for (State st : {State::kFree, State::kPending}) {
    Given* best = nullptr;
    for (Given& g : given_) {
      if (g.state == st && (best == nullptr || age(g) < age(*best))) best = &g;
    }
    if (best != nullptr) return best;
  }
  return nullptr;
}

void CreditBook::take(Given& g, std::uint32_t slot, const RequestPtr& req) {
  g.state = State::kArmed;
  g.req = req;
  g.stamp = ++clock_;
  req->credit_slot = static_cast<std::int32_t>(slot);
}

Result<bool> CreditBook::write_entry(CreditWriter& w, Given& g, nic::RegCache::Handle pin, std::uint32_t rkey,
                                     const void* buf, std::size_t len, std::uint32_t context, std::int32_t tag,
                                     const proto::CreditArm& arm) {
  proto::CreditEntry e;
  e.addr = reinterpret_cast<std::uintptr_t>(buf);
  e.rkey = rkey;
  e.capacity = static_cast<std::uint32_t>(len);
  e.context = context;
  e.tag = tag;
  e.arm = proto::encode_arm(arm);
  AUGUR_ASSIGN_OR_RETURN(bool written, w.write_credit(static_cast<std::uint32_t>(&g - given_.data()), e));
  if (!written) return false;
  ++counters_.issued;
  const bool landing = arm.state == proto::CreditState::kLanding;
  g = Given{.state = landing ? State::kLanding : arm.state == proto::CreditState::kPending ? State::kPending : State::kArmed,
            .generation = arm.generation,
            .req = nullptr,
            .buf = buf,
            .cap = e.capacity,
            .context = context,
            .tag = tag,
            .pin = std::move(pin),
            .rkey = e.rkey,
            .at_peer = true,
            .stamp = 0,
            .landing = landing};
  return true;
}

Status CreditBook::give(CreditWriter& w, nic::RegCache& pins, const RequestPtr& req, void* buf, std::size_t len,
                        std::uint32_t context, std::int32_t tag) {
  const proto::CreditArm armed{proto::CreditState::kArmed, 0, w.next_seq_in()};
  // Staged by prediction for exactly this receive: only the arm word travels.
  for (std::uint32_t k = 0; k < given_.size(); ++k) {
    Given& g = given_[k];
    if (g.state != State::kPending || g.buf != buf || g.cap != len || g.context != context || g.tag != tag) continue;
    // Staged before the program released that memory: the credit names the old pages.
    if (g.pin.stale()) break;
    proto::CreditArm a = armed;
    a.generation = g.generation;
    AUGUR_ASSIGN_OR_RETURN(bool written, w.write_arm(k, a));
    if (!written) return Status::Ok();  // no room in the send queue: this one goes by bounce
    take(g, k, req);
    ++counters_.armed_ahead;
    return Status::Ok();
  }
  // Re-arming and a new entry both need a free (or staged) slot: with all credits out, bounce
  // without a registration-cache lookup.
  Given* slot = slot_for_new_entry();
  if (slot == nullptr) return Status::Ok();
  Result<nic::RegCache::Handle> pin = pins.acquire(buf, len);
  if (!pin.ok()) return Status::Ok();  // cannot register (cache full): bounce
  // The sender still holds this buffer's entry from an earlier receive, under the rkey it is
  // registered with now (an rkey names one live region, so the old entry writes where a new
  // one would): re-arm it with a new generation.
  for (std::uint32_t k = 0; k < given_.size(); ++k) {
    Given& g = given_[k];
    if (g.state != State::kFree || !g.at_peer || g.landing || g.buf != buf || g.cap != len || g.context != context ||
        g.tag != tag || g.rkey != pin->rkey()) {
      continue;
    }
    proto::CreditArm a = armed;
    a.generation = (g.generation + 1) & 0xffffff;
    AUGUR_ASSIGN_OR_RETURN(bool written, w.write_arm(k, a));
    if (!written) return Status::Ok();
    g.generation = a.generation;
    g.pin = std::move(pin.value());
    take(g, k, req);
    ++counters_.issued;
    ++counters_.rearmed;
    return Status::Ok();
  }
  const bool replaces_staged = slot->state == State::kPending;
  proto::CreditArm a = armed;
  a.generation = (slot->generation + 1) & 0xffffff;
  const std::uint32_t rkey = pin->rkey();
  AUGUR_ASSIGN_OR_RETURN(bool written, write_entry(w, *slot, std::move(pin.value()), rkey, buf, len, context, tag, a));
  if (!written) return Status::Ok();
  if (replaces_staged) ++counters_.revoked;  // the staged one it replaces
  take(*slot, static_cast<std::uint32_t>(slot - given_.data()), req);
  return Status::Ok();
}

Status CreditBook::stage(CreditWriter& w, nic::RegCache& pins, const void* buf, std::size_t len, std::uint32_t context,
                         std::int32_t tag, std::uint32_t depth) {
  auto same = [&](const Given& g) { return g.buf == buf && g.cap == len && g.context == context && g.tag == tag; };
  std::uint32_t staged = 0;
  Given* retained = nullptr;
  for (Given& g : given_) {
    // An armed credit for the same buffer belongs to the receive posted now, not the next one.
    if (g.state == State::kPending && same(g) && !g.pin.stale()) return Status::Ok();  // already staged
    if (g.state == State::kPending) ++staged;
    if (g.state == State::kFree && g.at_peer && !g.landing && same(g)) retained = &g;
  }
  if (retained == nullptr && staged >= depth) return Status::Ok();
  // A predicted buffer may no longer be mapped: then registration fails and nothing is staged.
  Result<nic::RegCache::Handle> pin = pins.acquire(buf, len);
  if (!pin.ok()) return Status::Ok();
  if (retained != nullptr && retained->rkey == pin->rkey()) {
    retained->stamp = ++clock_;  // the post re-arms it; keep it from being replaced
    return Status::Ok();
  }
  Given* slot = slot_for_new_entry();
  if (slot == nullptr || slot->state != State::kFree || staged >= depth) return Status::Ok();
  const proto::CreditArm a{proto::CreditState::kPending, (slot->generation + 1) & 0xffffff, 0};
  const std::uint32_t rkey = pin->rkey();
  AUGUR_ASSIGN_OR_RETURN(bool written, write_entry(w, *slot, std::move(pin.value()), rkey, buf, len, context, tag, a));
  if (written) slot->stamp = ++clock_;
  return Status::Ok();
}

Result<std::optional<std::uint32_t>> CreditBook::stage_landing(CreditWriter& w, std::uint64_t addr, std::uint32_t cap, std::uint32_t rkey,
                                       std::uint32_t context, std::int32_t tag) {
  Given* slot = slot_for_new_entry();
  using Slot = std::optional<std::uint32_t>;
  if (slot == nullptr || slot->state != State::kFree) return Slot();  // a staged credit is worth more
  // valid_from_seq is unused: a landing credit is never void by the envelope rule.
  const proto::CreditArm a{proto::CreditState::kLanding, (slot->generation + 1) & 0xffffff, 0};
  AUGUR_ASSIGN_OR_RETURN(bool written, write_entry(w, *slot, {}, rkey, reinterpret_cast<const void*>(addr), cap,
                                                   context, tag, a));
  if (!written) return Slot();
  slot->stamp = ++clock_;
  return Slot(static_cast<std::uint32_t>(slot - given_.data()));
}

Result<std::optional<std::uint32_t>> CreditBook::speculate(CreditWriter& w, nic::RegCache::Handle pin,
                                                           const void* buf, std::size_t len, std::uint32_t context,
                                                           std::int32_t tag) {
  using Slot = std::optional<std::uint32_t>;
  const proto::CreditArm armed{proto::CreditState::kArmed, 0, w.next_seq_in()};
  auto mark = [&](Given& g) {
    g.state = State::kSpeculative;
    g.speculative = true;
    g.stamp = ++clock_;
    return Slot(static_cast<std::uint32_t>(&g - given_.data()));
  };
  // The sender still holds this buffer's entry under the same rkey: the arm word alone.
  for (Given& g : given_) {
    if (g.state != State::kFree || !g.at_peer || g.landing || g.buf != buf || g.cap != len || g.context != context ||
        g.tag != tag || g.rkey != pin.rkey()) {
      continue;
    }
    proto::CreditArm a = armed;
    a.generation = (g.generation + 1) & 0xffffff;
    // It rides on the next message to the peer (a reply, a "go"): a speculation is armed ahead
    // of its message, so the peer needs it only by then, and a write of its own costs a post.
    AUGUR_ASSIGN_OR_RETURN(bool written, w.queue_arm(static_cast<std::uint32_t>(&g - given_.data()), a));
    if (!written) return Slot();
    g.generation = a.generation;
    g.pin = std::move(pin);
    ++counters_.issued;
    ++counters_.rearmed;
    return mark(g);
  }
  Given* slot = slot_for_new_entry();
  if (slot == nullptr) return Slot();
  const bool replaces_staged = slot->state == State::kPending;
  proto::CreditArm a = armed;
  a.generation = (slot->generation + 1) & 0xffffff;
  const std::uint32_t rkey = pin.rkey();
  AUGUR_ASSIGN_OR_RETURN(bool written, write_entry(w, *slot, std::move(pin), rkey, buf, len, context, tag, a));
  if (!written) return Slot();
  if (replaces_staged) ++counters_.revoked;
  return mark(*slot);
}

bool CreditBook::adopt(std::uint32_t slot, const RequestPtr& req) {
  if (slot >= given_.size() || given_[slot].state != State::kSpeculative) return false;
  Given& g = given_[slot];
  g.speculative = false;
  take(g, slot, req);
  ++counters_.armed_ahead;
  return true;
}

std::optional<std::uint32_t> CreditBook::revoke_speculative(std::uint32_t slot) {
  if (slot >= given_.size() || given_[slot].state != State::kSpeculative) return std::nullopt;
  given_[slot].state = State::kRevoking;
  return given_[slot].generation;
}

void CreditBook::settle_speculative(std::uint32_t slot) {
  if (slot >= given_.size() || !given_[slot].speculative) return;
  Given& g = given_[slot];
  if (g.state != State::kSpeculative && g.state != State::kRevoking) return;
  ++counters_.revoked;
  g.state = g.state == State::kRevoking ? State::kAwaitAck : State::kFree;
  g.speculative = false;
  g.pin = {};
}

std::optional<std::uint32_t> CreditBook::revoke_landing(std::uint32_t slot) {
  if (slot >= given_.size() || given_[slot].state != State::kLanding) return std::nullopt;
  given_[slot].state = State::kRevoking;
  return given_[slot].generation;
}

void CreditBook::settle_void(std::uint32_t slot) {
  Given& g = given_[slot];
  // The message that took the receive was sent after valid_from_seq with the credit's envelope,
  // so the sender holds the credit void: the slot can be given again at once.
  ++counters_.revoked;
  g.state = g.state == State::kRevoking ? State::kAwaitAck : State::kFree;
  g.req.reset();
  g.pin = {};
}

Result<CreditBook::Direct> CreditBook::on_direct(std::uint32_t slot, std::uint32_t length) {
  if (slot >= given_.size() ||
      (given_[slot].state != State::kArmed && given_[slot].state != State::kRevoking &&
       given_[slot].state != State::kLanding && given_[slot].state != State::kSpeculative) ||
      length > given_[slot].cap) {
    return Status(Code::kProtocol, "direct write of " + std::to_string(length) + " bytes for credit " +
                                       std::to_string(slot) + ", which is not armed for that size");
  }
  Given& g = given_[slot];
  Direct d{std::move(g.req), g.tag, g.context, g.landing, g.speculative};
  g.speculative = false;
  ++counters_.used;
  g.state = g.state == State::kRevoking ? State::kAwaitAck : State::kFree;
  g.req.reset();
  g.pin = {};
  return d;
}

std::optional<std::uint32_t> CreditBook::revoke(std::uint32_t slot) {
  Given& g = given_[slot];
  if (g.state != State::kArmed) return std::nullopt;
  g.state = State::kRevoking;
  return g.generation;
}

Result<RequestPtr> CreditBook::on_revoke_ack(std::uint32_t slot, std::uint32_t generation) {
  if (slot >= given_.size()) return Status(Code::kProtocol, "revoke ack for credit " + std::to_string(slot));
  Given& g = given_[slot];
  if (g.generation != generation || (g.state != State::kRevoking && g.state != State::kAwaitAck)) {
    return Status(Code::kProtocol, "revoke ack for a credit that was not revoked");
  }
  RequestPtr cancelled;
  if (g.state == State::kRevoking) {  // nothing came through the credit: the cancel succeeds
    cancelled = std::move(g.req);
    ++counters_.revoked;
  }
  g.state = State::kFree;
  g.speculative = false;
  g.req.reset();
  g.pin = {};
  return cancelled;
}

void CreditBook::reset() {
  for (Given& g : given_) g = Given{.generation = g.generation};  // free, nothing at the peer
}

void CreditBook::note_sent(std::uint32_t context, std::int32_t tag, std::uint32_t seq) {
  const std::uint64_t key = envelope(context, tag);
  if (last_sent_.size() >= kMaxEnvelopes && !last_sent_.contains(key)) {
    last_sent_.clear();
    last_sent_floor_ = seq;  // every envelope cleared was last sent before this message
  }
  last_sent_[key] = seq;
}

Status CreditBook::on_revoked(std::uint32_t slot, std::uint32_t generation) {
  if (slot >= revoked_.size()) return Status(Code::kProtocol, "revoke of credit " + std::to_string(slot));
  revoked_[slot] = generation + 1;
  return Status::Ok();
}

}  // namespace augur::host
