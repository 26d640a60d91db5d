// Early placement, the engine's side (docs/early.md): a predicted receive above the eager limit
// gets a landing zone and a landing credit at its sender (stage_landing); a large send that finds
// a credit is written by the NIC from its own buffer instead of announced by RTS (push_sends,
// on_write_done); the write's arrival joins matching like any message, its data in the zone
// (on_landing), and at the match the zone's pages are remapped or copied into the receive buffer
// (land_into). The program's buffer is touched only once its receive is posted.

#include "augur/host/engine.h"

#include <algorithm>
#include <string>
#include <utility>

#include "engine_internal.h"

namespace augur::host {

namespace {

constexpr std::size_t kMaxSpareZones = 8;

}  // namespace

Status Engine::stage_landing(const predictor::RecvCall& call) {
  Peer& p = peers_[static_cast<std::size_t>(call.source)];
  if (p.dead) return Status::Ok();
  if (!p.ready) return connect_peer(call.source);  // zones from the next prediction on
  const std::span<const CreditBook::Given> given = p.credits->given();
  // A zone out for the envelope takes its next message; the predicted receive needs one of its
  // own only if that message goes to a receive already posted and waiting (a stencil posts all
  // its halo receives before any message comes).
  const bool behind_waiting = match_.posted_conflicts(call.comm, call.source, call.tag);
  // The oldest zone of an envelope that a posted receive waits for takes that receive's message:
  // it is in use, not a guess, so it neither counts against the cap nor is withdrawn (a stencil
  // posts both halo receives before either message comes; withdrawing one sent it by RTS).
  auto committed = [&](std::uint32_t k) {
    const CreditBook::Given& g = given[k];
    if (!match_.posted_conflicts(g.context, call.source, g.tag)) return false;
    for (std::uint32_t j = 0; j < given.size(); ++j) {
      const CreditBook::Given& o = given[j];
      if (j != k && o.state == CreditBook::Given::State::kLanding && o.context == g.context && o.tag == g.tag &&
          o.stamp < g.stamp) {
        return false;
      }
    }
    return true;
  };
  std::uint32_t for_envelope = 0, held = 0;
  std::int64_t oldest = -1;
  for (std::uint32_t k = 0; k < given.size(); ++k) {
    const CreditBook::Given& g = given[k];
    if (g.state != CreditBook::Given::State::kLanding) continue;
    if (g.context == call.comm && g.tag == call.tag && g.cap >= call.count &&
        ++for_envelope >= (behind_waiting ? 2u : 1u)) {
      return Status::Ok();
    }
    if (committed(k)) continue;
    ++held;
    if (oldest < 0 || g.stamp < given[static_cast<std::size_t>(oldest)].stamp) oldest = k;
  }
  if (held >= cfg_.predict_depth) {
    // The prediction moved on: withdraw the least recent unused zone; this call stages next time.
    const auto slot = static_cast<std::uint32_t>(oldest);
    if (std::optional<std::uint32_t> gen = p.credits->revoke_landing(slot)) {
      queue_revoke(p, slot, *gen);
      ++counters_.landing_revoked;
    }
    return Status::Ok();
  }
  std::unique_ptr<LandingZone> zone;
  auto spare = std::find_if(spare_zones_.begin(), spare_zones_.end(),
                            [&](const auto& z) { return z->capacity() >= call.count && z->capacity() <= 2 * call.count; });
  if (spare != spare_zones_.end()) {
    zone = std::move(*spare);
    spare_zones_.erase(spare);
  } else {
    Result<std::unique_ptr<LandingZone>> made = LandingZone::create(*pd_, call.count);
    if (!made.ok()) return Status::Ok();  // no memory to set aside: the message goes by RTS
    zone = std::move(made.value());
  }
  zone->aim_at(call.buffer);
  ChannelWriter w(*p.ch);
  AUGUR_ASSIGN_OR_RETURN(std::optional<std::uint32_t> slot,
                         p.credits->stage_landing(w, reinterpret_cast<std::uintptr_t>(zone->data()),
                                                  static_cast<std::uint32_t>(call.count), zone->rkey(), call.comm, call.tag));
  if (!slot) {
    recycle_zone(std::move(zone));
    return Status::Ok();
  }
  if (p.zones.size() <= *slot) p.zones.resize(cfg_.credit_slots);
  p.zones[*slot] = std::move(zone);
  ++counters_.landing_credits;
  return Status::Ok();
}

Status Engine::on_landing(int peer, std::uint32_t slot, const CreditBook::Direct& d, std::uint32_t length) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (slot >= p.zones.size() || !p.zones[slot]) return Status(Code::kInternal, "landing write without its zone");
  ++counters_.landing_msgs;
  Incoming in{};
  in.peer = peer;
  in.type = proto::MsgType::kDirect;
  in.length = length;
  in.zone = std::move(p.zones[slot]);
  in.payload = {in.zone->data(), length};
  if (!specs_.empty()) void_speculations(peer, d.context, d.tag);
  if (auto r = match_.arrive({d.context, peer, d.tag}, std::move(in))) {  // moved only when queued
    return match_and_start(*r, in, d.tag);
  }
  ++counters_.unexpected_msgs;
  ++counters_.landing_early;  // waits in its zone, not in a bounce slot
  return Status::Ok();
}

void Engine::land_into(const PostedRecv& recv, Incoming& msg, std::size_t n) {
  Request& r = *recv.req;
  if (!r.runs.empty()) {
    relations::ScatterRuns(msg.payload.data(), n, r.layout());
    counters_.bytes_copied += n;
  } else {
    const LandingZone::Delivered d = msg.zone->deliver(recv.buf, n, cfg_.remap_min);
    counters_.bytes_copied += d.copied;
    if (d.remapped > 0) {
      ++counters_.landing_remapped;
      counters_.pages_remapped += d.remapped / LandingZone::page_size();
    }
  }
  recycle_zone(std::move(msg.zone));
}

void Engine::recycle_zone(std::unique_ptr<LandingZone> zone) {
  if (zone && zone->reusable() && spare_zones_.size() < kMaxSpareZones) spare_zones_.push_back(std::move(zone));
}

Status Engine::on_write_done(int peer, const nic::Completion& c) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  Result<std::optional<Arrival>> a = p.ch->on_completion(c);  // frees the send queue entry, or the error
  if (!a.ok()) return a.status().context("RDMA WRITE to rank " + std::to_string(peer));
  if (p.writing.empty()) return Status(Code::kInternal, "write completion with no write in flight");
  // An RC send queue completes in order: the oldest write is this one.
  finish(*p.writing.front().req, Path::kDirect);
  p.writing.pop_front();  // unpins the send buffer
  return Status::Ok();
}

}  // namespace augur::host
