// Credits and steering, the engine's side: give_credit and stage_credit hand a receive to the
// peer's CreditBook (host/credit_book.cpp keeps the state machine) with the channel to write
// through; observe_receive shows receive calls to the steering policy and stages what it
// predicts; drop_credit, on_direct and on_revoke_ack settle a credit and complete its receive;
// queue_control answers revocations. Rules: docs/runtime.md, "Direct placement and steering".

#include "augur/host/engine.h"

#include <string>

#include "engine_internal.h"

namespace augur::host {

Status Engine::give_credit(int peer, const RequestPtr& req, void* buf, std::size_t len, std::uint32_t context,
                           std::int32_t tag) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (!p.ready) return connect_peer(peer);  // no credit until connected: the message comes by bounce or RTS
  ChannelWriter w(*p.ch);
  AUGUR_RETURN_IF_ERROR(p.credits->give(w, *recv_cache_, req, buf, len, context, tag));
  if (req->credit_slot >= 0) req->credit_peer = peer;
  return Status::Ok();
}

Status Engine::stage_credit(const predictor::RecvCall& call) {  // the policy chose it: creditable, not paused
  if (steer_->landable(call.count, call.source, call.tag)) return stage_landing(call);  // early placement on
  Peer& p = peers_[static_cast<std::size_t>(call.source)];
  if (p.dead) return Status::Ok();
  if (!p.ready) return connect_peer(call.source);  // credits from the next prediction on
  ChannelWriter w(*p.ch);
  return p.credits->stage(w, *recv_cache_, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(call.buffer)),
                          call.count, call.comm, call.tag, cfg_.predict_depth);
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
  const bool speculative = cfg_.steering == Steering::kSpeculative;
  for (const predictor::RecvCall& call : stage) AUGUR_RETURN_IF_ERROR(speculative ? speculate(call) : stage_credit(call));
  return Status::Ok();
}

Status Engine::note_receive(const void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context,
                            bool layout) {
  // Its callers observed the one kept before first: the predictor sees the calls in order.
  if (cfg_.steering != Steering::kSpeculative || driver_.assisted()) {
    return observe_receive(buf, len, source, tag, context, layout);
  }
  observe_later_ = PendingObserve{buf, len, source, tag, context, layout};
  return Status::Ok();
}

Status Engine::observe_pending() {
  if (!observe_later_) return Status::Ok();
  const PendingObserve o = *observe_later_;
  observe_later_.reset();
  return observe_receive(o.buf, o.len, o.source, o.tag, o.context, o.layout);
}

void Engine::drop_credit(Request& r) {
  if (r.credit_slot < 0) return;
  steer_->credit_outcome(r.credit_peer, false);
  peers_[static_cast<std::size_t>(r.credit_peer)].credits->settle_void(static_cast<std::uint32_t>(r.credit_slot));
  r.credit_peer = r.credit_slot = -1;
}

Status Engine::on_direct(int peer, std::uint32_t slot, std::uint32_t length) {
  AUGUR_ASSIGN_OR_RETURN(CreditBook::Direct d, peers_[static_cast<std::size_t>(peer)].credits->on_direct(slot, length));
  if (d.speculative) return on_speculative(peer, slot, d, length);
  if (d.landing) return on_landing(peer, slot, d, length);
  if (!specs_.empty()) void_speculations(peer, d.context, d.tag);
  const RequestPtr& r = d.req;
  if (!match_.cancel([&](const PostedRecv& pr) { return pr.req == r; })) {
    return Status(Code::kInternal, "direct write for a receive that is no longer posted");
  }
  r->credit_peer = r->credit_slot = -1;
  r->source = peer;
  r->tag = d.tag;
  r->length = length;
  steer_->credit_outcome(peer, true);
  ++counters_.direct_msgs;
  finish(*r, Path::kDirect);
  return Status::Ok();
}

Status Engine::on_revoke_ack(int peer, std::uint32_t slot, std::uint32_t generation) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  AUGUR_ASSIGN_OR_RETURN(RequestPtr r, p.credits->on_revoke_ack(slot, generation));
  if (slot < p.zones.size() && p.zones[slot]) recycle_zone(std::move(p.zones[slot]));  // a landing zone nothing came to
  if (!specs_.empty()) speculation_revoke_ack(peer, slot);
  // Nothing came through the credit: the cancel succeeds (unless the receive matched otherwise).
  if (r && match_.cancel([&](const PostedRecv& pr) { return pr.req == r; })) {
    r->credit_peer = r->credit_slot = -1;
    r->cancelled = true;
    finish(*r, Path::kNone);
  }
  return Status::Ok();
}

void Engine::queue_revoke(Peer& p, std::uint32_t slot, std::uint32_t generation) {
  OutMsg c{};
  c.type = proto::MsgType::kRevoke;
  c.context = slot;
  c.length = generation;
  p.out.push_back(std::move(c));  // in order: behind any message that may still use the credit
}

void Engine::queue_control(int peer, proto::MsgType type, std::uint32_t slot, std::uint32_t generation) {
  OutMsg c{};
  c.type = type;
  c.context = slot;
  c.length = generation;
  peers_[static_cast<std::size_t>(peer)].out.push_front(std::move(c));  // not matched: may pass data
}

}  // namespace augur::host
