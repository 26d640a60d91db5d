// Credits and steering: the receiver's side of direct placement (give_credit writes or re-arms a credit for a
// posted receive, stage_credit writes one ahead for a predicted receive, drop_credit/on_direct/on_revoke_ack
// settle it), the predictor glue that decides what to stage and when to stop (observe_receive,
// credit_outcome's per-peer pause), and the sender's side, which finds a credit it may still write through
// (usable_credit) and answers revocations (queue_control). Separate because the credit state machine is the
// subtlest part of the engine; see docs/runtime.md for its rules.

#include "augur/host/engine.h"

#include <algorithm>
#include <bit>
#include <string>

#include "engine_internal.h"

namespace augur::host {

using engine_detail::envelope_key;

namespace {

// Sequence numbers wrap: a is at or after b within half the space.
bool seq_at_or_after(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) >= 0; }

}  // namespace

Engine::GivenCredit* Engine::slot_for_new_entry(Peer& p) {
  using State = GivenCredit::State;
  // A slot never written comes first (age 0), then by last use.
  auto age = [](const GivenCredit& g) { return g.at_peer ? g.stamp + 1 : 0; };
  for (State st : {State::kFree, State::kPending}) {
    GivenCredit* best = nullptr;
    for (GivenCredit& g : p.given) {
      if (g.state == st && (best == nullptr || age(g) < age(*best))) best = &g;
    }
    if (best != nullptr) return best;
  }
  return nullptr;
}

Status Engine::give_credit(int peer, const RequestPtr& req, void* buf, std::size_t len, std::uint32_t context,
                           std::int32_t tag) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  using State = GivenCredit::State;
  const proto::CreditArm armed{proto::CreditState::kArmed, 0, p.ch->next_seq_in()};
  auto take = [&](GivenCredit& g, std::uint32_t k) {
    g.state = State::kArmed;
    g.req = req;
    g.stamp = ++credit_clock_;
    req->credit_peer = peer;
    req->credit_slot = static_cast<std::int32_t>(k);
  };
  // Staged by prediction for exactly this receive: only the arm word travels.
  for (std::uint32_t k = 0; k < p.given.size(); ++k) {
    GivenCredit& g = p.given[k];
    if (g.state != State::kPending || g.buf != buf || g.cap != len || g.context != context || g.tag != tag) continue;
    // Staged before the program released that memory: the credit names the old pages.
    if (g.pin.stale()) break;
    proto::CreditArm a = armed;
    a.generation = g.generation;
    AUGUR_ASSIGN_OR_RETURN(bool written, p.ch->write_arm(k, a));
    if (!written) return Status::Ok();  // no room in the send queue: this one goes by bounce
    take(g, k);
    ++counters_.credits_armed_ahead;
    return Status::Ok();
  }
  // Re-arming and a new entry both need a free (or staged) slot: with all credits out, bounce
  // without a registration-cache lookup.
  GivenCredit* slot = slot_for_new_entry(p);
  if (slot == nullptr) return Status::Ok();
  Result<nic::RegCache::Handle> pin = recv_cache_->acquire(buf, len);
  if (!pin.ok()) return Status::Ok();  // cannot register (cache full): bounce
  // The sender still holds this buffer's entry from an earlier receive, under the rkey it is
  // registered with now (an rkey names one live region, so the old entry writes where a new
  // one would): re-arm it with a new generation.
  for (std::uint32_t k = 0; k < p.given.size(); ++k) {
    GivenCredit& g = p.given[k];
    if (g.state != State::kFree || !g.at_peer || g.buf != buf || g.cap != len || g.context != context ||
        g.tag != tag || g.rkey != pin->rkey()) {
      continue;
    }
    proto::CreditArm a = armed;
    a.generation = (g.generation + 1) & 0xffffff;
    AUGUR_ASSIGN_OR_RETURN(bool written, p.ch->write_arm(k, a));
    if (!written) return Status::Ok();
    g.generation = a.generation;
    g.pin = std::move(pin.value());
    take(g, k);
    ++counters_.credits_issued;
    ++counters_.credits_rearmed;
    return Status::Ok();
  }
  const auto k = static_cast<std::uint32_t>(slot - p.given.data());
  GivenCredit& g = *slot;
  const std::uint32_t generation = (g.generation + 1) & 0xffffff;
  proto::CreditEntry e;
  e.addr = reinterpret_cast<std::uintptr_t>(buf);
  e.rkey = pin->rkey();
  e.capacity = static_cast<std::uint32_t>(len);
  e.context = context;
  e.tag = tag;
  proto::CreditArm a = armed;
  a.generation = generation;
  e.arm = proto::encode_arm(a);
  AUGUR_ASSIGN_OR_RETURN(bool written, p.ch->write_credit(k, e));
  if (!written) return Status::Ok();
  if (g.state == State::kPending) ++counters_.credits_revoked;  // the staged one it replaces
  ++counters_.credits_issued;
  g = GivenCredit{.state = State::kArmed,
                  .generation = generation,
                  .req = req,
                  .buf = buf,
                  .cap = e.capacity,
                  .context = context,
                  .tag = tag,
                  .pin = std::move(pin.value()),
                  .rkey = e.rkey,
                  .at_peer = true,
                  .stamp = 0};
  take(g, k);
  return Status::Ok();
}

Status Engine::stage_credit(const predictor::RecvCall& call) {  // the policy chose it: creditable, not paused
  Peer& p = peers_[static_cast<std::size_t>(call.source)];
  if (p.dead) return Status::Ok();
  using State = GivenCredit::State;
  const void* buf = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(call.buffer));
  auto same = [&](const GivenCredit& g) {
    return g.buf == buf && g.cap == call.count && g.context == call.comm && g.tag == call.tag;
  };
  std::uint32_t staged = 0;
  GivenCredit* retained = nullptr;
  for (GivenCredit& g : p.given) {
    // An armed credit for the same buffer belongs to the receive posted now, not the next one.
    if (g.state == State::kPending && same(g) && !g.pin.stale()) return Status::Ok();  // already staged
    if (g.state == State::kPending) ++staged;
    if (g.state == State::kFree && g.at_peer && same(g)) retained = &g;
  }
  if (retained == nullptr && staged >= cfg_.predict_depth) return Status::Ok();
  // A predicted buffer may no longer be mapped: then registration fails and nothing is staged.
  Result<nic::RegCache::Handle> pin = recv_cache_->acquire(buf, call.count);
  if (!pin.ok()) return Status::Ok();
  if (retained != nullptr && retained->rkey == pin->rkey()) {
    retained->stamp = ++credit_clock_;  // the post re-arms it; keep it from being replaced
    return Status::Ok();
  }
  GivenCredit* slot = slot_for_new_entry(p);
  if (slot == nullptr || slot->state != State::kFree || staged >= cfg_.predict_depth) return Status::Ok();
  const auto k = static_cast<std::uint32_t>(slot - p.given.data());
  const std::uint32_t generation = (slot->generation + 1) & 0xffffff;
  proto::CreditEntry e;
  e.addr = call.buffer;
  e.rkey = pin->rkey();
  e.capacity = static_cast<std::uint32_t>(call.count);
  e.context = call.comm;
  e.tag = call.tag;
  e.arm = proto::encode_arm({proto::CreditState::kPending, generation, 0});
  AUGUR_ASSIGN_OR_RETURN(bool written, p.ch->write_credit(k, e));
  if (!written) return Status::Ok();
  ++counters_.credits_issued;
  *slot = GivenCredit{.state = State::kPending,
                      .generation = generation,
                      .req = nullptr,
                      .buf = buf,
                      .cap = e.capacity,
                      .context = call.comm,
                      .tag = call.tag,
                      .pin = std::move(pin.value()),
                      .rkey = e.rkey,
                      .at_peer = true,
                      .stamp = ++credit_clock_};
  return Status::Ok();
}

Status Engine::observe_receive(const void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context,
                               bool layout) {
  predictor::RecvCall c;
  c.kind = predictor::CallKind::kIrecv;
  c.source = source;
  c.tag = tag;
  c.count = len;
  c.buffer = reinterpret_cast<std::uintptr_t>(buf);
  c.comm = context;
  AUGUR_ASSIGN_OR_RETURN(std::span<const predictor::RecvCall> stage, steer_->on_receive(c, layout));
  for (const predictor::RecvCall& call : stage) AUGUR_RETURN_IF_ERROR(stage_credit(call));
  return Status::Ok();
}

void Engine::drop_credit(Request& r) {
  if (r.credit_slot < 0) return;
  Peer& peer = peers_[static_cast<std::size_t>(r.credit_peer)];
  GivenCredit& g = peer.given[static_cast<std::size_t>(r.credit_slot)];
  steer_->credit_outcome(r.credit_peer, false);
  r.credit_peer = r.credit_slot = -1;
  // The message that took the receive was sent after valid_from_seq with the credit's envelope,
  // so the sender holds the credit void: the slot can be given again at once.
  ++counters_.credits_revoked;
  g.state = g.state == GivenCredit::State::kRevoking ? GivenCredit::State::kAwaitAck : GivenCredit::State::kFree;
  g.req.reset();
  g.pin = {};
}

Status Engine::on_direct(int peer, std::uint32_t slot, std::uint32_t length) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  using State = GivenCredit::State;
  if (slot >= p.given.size() || (p.given[slot].state != State::kArmed && p.given[slot].state != State::kRevoking) ||
      length > p.given[slot].cap) {
    return Status(Code::kProtocol, "direct write of " + std::to_string(length) + " bytes for credit " +
                                       std::to_string(slot) + ", which is not armed for that size");
  }
  GivenCredit& g = p.given[slot];
  RequestPtr r = g.req;
  if (!match_.cancel([&](const PostedRecv& pr) { return pr.req == r; })) {
    return Status(Code::kInternal, "direct write for a receive that is no longer posted");
  }
  r->credit_peer = r->credit_slot = -1;
  r->source = peer;
  r->tag = g.tag;
  r->length = length;
  steer_->credit_outcome(peer, true);
  ++counters_.direct_msgs;
  ++counters_.credits_used;
  finish(*r, Path::kDirect);
  g.state = g.state == State::kRevoking ? State::kAwaitAck : State::kFree;
  g.req.reset();
  g.pin = {};
  return Status::Ok();
}

Status Engine::on_revoke_ack(int peer, std::uint32_t slot, std::uint32_t generation) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  using State = GivenCredit::State;
  if (slot >= p.given.size()) return Status(Code::kProtocol, "revoke ack for credit " + std::to_string(slot));
  GivenCredit& g = p.given[slot];
  if (g.generation != generation || (g.state != State::kRevoking && g.state != State::kAwaitAck)) {
    return Status(Code::kProtocol, "revoke ack for a credit that was not revoked");
  }
  if (g.state == State::kRevoking) {  // nothing came through the credit: the cancel succeeds
    RequestPtr r = g.req;
    if (match_.cancel([&](const PostedRecv& pr) { return pr.req == r; })) {
      r->credit_peer = r->credit_slot = -1;
      r->cancelled = true;
      finish(*r, Path::kNone);
    }
    ++counters_.credits_revoked;
  }
  g.state = State::kFree;
  g.req.reset();
  g.pin = {};
  return Status::Ok();
}

std::optional<std::pair<std::uint32_t, proto::CreditEntry>> Engine::usable_credit(Peer& p, std::uint32_t context,
                                                                                 std::int32_t tag, std::size_t length) const {
  const auto found = p.last_sent.find(envelope_key(context, tag));
  const std::optional<std::uint32_t> last = found != p.last_sent.end() ? std::optional(found->second) : p.last_sent_floor;
  for (std::uint32_t k = 0; k < p.ch->credit_slots(); ++k) {
    if (p.ch->arm_word(k) == p.dead_arm[k]) continue;  // free (0), or known void
    std::optional<Channel::Credit> c = p.ch->armed_credit(k);
    if (!c) continue;
    if (p.revoked[k] == c->arm.generation + 1) {
      p.dead_arm[k] = c->arm_word;
      continue;
    }
    if (c->entry.context != context || c->entry.tag != tag || c->entry.capacity < length) continue;
    // Void when a message with this envelope went out since the receive was posted: that
    // message takes the receive. For good: the envelope's last sequence number only grows.
    if (last && seq_at_or_after(*last, c->arm.valid_from_seq)) {
      p.dead_arm[k] = c->arm_word;
      continue;
    }
    return std::make_pair(k, c->entry);
  }
  return std::nullopt;
}

void Engine::queue_control(int peer, proto::MsgType type, std::uint32_t slot, std::uint32_t generation) {
  OutMsg c{};
  c.type = type;
  c.context = slot;
  c.length = generation;
  peers_[static_cast<std::size_t>(peer)].out.push_front(std::move(c));  // not matched: may pass data
}

}  // namespace augur::host
