// The eager protocol: sending a message of up to AUGUR_EAGER_LIMIT bytes through the peer's bounce ring or,
// with a usable credit, straight into the receiver's buffer (send_eager), draining a peer's ordered send
// queue (push_sends, which also carries RTS and control messages so that nothing overtakes), and delivering
// an arrived eager message to its receive or the unexpected queue (deliver_eager). This is the hot path of
// a small message, kept small and apart. The per-message path crosses these files (send_eager ->
// CreditBook::usable, deliver_eager -> match_and_start); optimised GCC builds compile libaugur_host into fat LTO
// objects and link libaugur_mpi and the benchmarks with LTO (cmake/AugurOptions.cmake), where those calls
// are inlined as they were within one file (checked on augur-perf-lat: the same Engine functions stay out
// of line). Without LTO (sanitizer builds, tests, AUGUR_LTO=OFF) they stay calls.

#include "augur/host/engine.h"

#include <string>

#include "augur/compiler.h"
#include "engine_internal.h"

namespace augur::host {


AUGUR_HOT_PATH Result<Path> Engine::send_eager(Peer& p, std::uint32_t context, std::int32_t tag, const void* user,
                                std::uint32_t length, const relations::Layout& from) {
  const std::uint32_t seq = p.ch->next_seq();
  const std::span<const std::byte> body(static_cast<const std::byte*>(user), from.empty() ? length : 0);
  auto bounce = [&]() -> Result<bool> {
    return from.empty() ? p.ch->try_send(proto::MsgType::kEager, context, tag, length, body)
                        : p.ch->try_send_gather(context, tag, length, from);
  };
  // Only a sender that may use credits needs to know what it sent last per envelope.
  if (cfg_.steering == Steering::kOff) {
    AUGUR_ASSIGN_OR_RETURN(bool sent, bounce());
    return sent ? Path::kBounce : Path::kNone;
  }
  Path path = Path::kNone;
  // Below direct_min the copy is cheaper than a direct write; bouncing is always safe (the
  // receiver then holds any credit for this envelope void).
  if (auto credit = length >= cfg_.direct_min ? p.credits->usable(*p.ch, context, tag, length) : std::nullopt) {
    AUGUR_ASSIGN_OR_RETURN(bool sent, from.empty() ? p.ch->try_send_direct(credit->slot, credit->entry, body)
                                                   : p.ch->try_send_direct_gather(credit->slot, credit->entry, length, from));
    if (!sent) return Path::kNone;
    p.credits->consumed(*credit);
    ++(credit->landing ? counters_.landing_sends : counters_.direct_sends);
    path = Path::kDirect;
  } else {
    AUGUR_ASSIGN_OR_RETURN(bool sent, bounce());
    if (!sent) return Path::kNone;
    path = Path::kBounce;
  }
  p.credits->note_sent(context, tag, seq);
  return path;
}

Status Engine::push_sends(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (!p.ready) return Status::Ok();  // Engine::ready sends them
  while (!p.out.empty() && !p.dead) {
    OutMsg& m = p.out.front();
    if (m.type == proto::MsgType::kEager) {
      AUGUR_ASSIGN_OR_RETURN(Path path, send_eager(p, m.context, m.tag, m.user, m.length,
                                                   m.gather ? m.req->layout() : relations::Layout{}));
      if (path == Path::kNone) break;  // out of credits: the rest waits, in order
      finish(*m.req, path);            // copied into the send slot: the user buffer is free
      p.out.pop_front();
      continue;
    }
    const std::uint32_t seq = p.ch->next_seq();
    if (m.may_write) {  // a large send that a landing credit can carry: no RTS, READ or FIN
      if (auto credit = p.credits->usable(*p.ch, m.context, m.tag, m.length)) {
        const nic::Sge from{reinterpret_cast<std::uintptr_t>(m.user), m.length, m.pin.lkey()};
        AUGUR_ASSIGN_OR_RETURN(bool sent, p.ch->try_write_direct(credit->slot, credit->entry, from, seq));
        if (!sent) break;
        p.credits->consumed(*credit);
        p.credits->note_sent(m.context, m.tag, seq);
        ++(credit->landing ? counters_.landing_sends : counters_.direct_sends);
        p.writing.push_back(std::move(m));  // completes at the write's completion
        p.out.pop_front();
        continue;
      }
    }
    AUGUR_ASSIGN_OR_RETURN(bool sent, p.ch->try_send(m.type, m.context, m.tag, m.length, m.body));
    if (!sent) break;
    if (m.type == proto::MsgType::kRts || m.type == proto::MsgType::kRtsRuns) {
      if (cfg_.steering != Steering::kOff) p.credits->note_sent(m.context, m.tag, seq);
      p.awaiting_fin.emplace_back(seq, std::move(m));
    }
    p.out.pop_front();
  }
  return Status::Ok();
}

AUGUR_HOT_PATH void Engine::deliver_eager(int peer, const Arrival& a) {
  const proto::MsgHeader& h = a.header;
  ++counters_.bounce_msgs;
  Incoming in{};
  in.peer = peer;
  in.type = proto::MsgType::kEager;
  in.slot = a.slot;
  in.payload = a.payload;
  in.length = h.length;
  if (!specs_.empty()) [[unlikely]] void_speculations(peer, h.context, h.tag);
  if (auto r = match_.arrive({h.context, peer, h.tag}, std::move(in))) {  // moved only when queued
    Status st = match_and_start(*r, in, h.tag);
    if (!st.ok() && deferred_.ok()) deferred_ = st.context("from rank " + std::to_string(peer));
  } else {
    ++counters_.unexpected_msgs;  // stays in its slot until a receive matches it
  }
}

}  // namespace augur::host
