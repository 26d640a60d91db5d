// Speculative placement, the engine's side (AUGUR_STEERING=speculative, docs/early.md,
// "Speculative placement"). For a predicted receive into buffer B whose earlier receives are
// complete, the sender gets an armed credit for B before the receive is posted (speculate), so a
// message that comes first is written straight into B. While such a credit is out and until the
// receive is posted, B's pages are guarded (host::PageGuard): a touch by the program before any
// data came revokes the credit and the program goes on (check_speculations); a touch after data
// was written stops the run with a report (violation). At the post the credit becomes the
// receive's (adopt), or its data is already in place (place_speculative); a receive that could
// take the message but is not the predicted one revokes it (speculation_at_post).
//
// Matching order: the credit is a receive's armed credit on the wire, so only the next message
// with its envelope may use it and any other voids it (void_speculations); a written message
// enters matching at its arrival, in order with everything else from that peer, as a landed one.

#include "augur/host/engine.h"

#include <dlfcn.h>

#include <cinttypes>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine_internal.h"

namespace augur::host {

namespace {

bool overlaps(std::uintptr_t a_lo, std::uintptr_t a_hi, std::uintptr_t b_lo, std::uintptr_t b_hi) {
  return a_lo < b_hi && b_lo < a_hi;
}

// Whether a receive writes every byte of [lo, hi): its one range, or its layout's runs together.
bool receive_covers(const Request& r, std::uintptr_t buf, std::size_t len, std::uintptr_t lo, std::uintptr_t hi) {
  if (r.runs.empty()) return buf <= lo && buf + len >= hi;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> parts;
  parts.reserve(r.runs.size());
  for (const relations::ByteRun& run : r.runs) {
    const auto a = reinterpret_cast<std::uintptr_t>(r.layout().at(run));
    parts.emplace_back(a, a + static_cast<std::uintptr_t>(run.length));
  }
  std::sort(parts.begin(), parts.end());
  std::uintptr_t reached = lo;
  for (const auto& [a, z] : parts) {
    if (a > reached) break;  // a gap before hi
    reached = std::max(reached, z);
  }
  return reached >= hi;
}

std::string site_name(std::uintptr_t pc) {
  if (pc == 0) return "an unknown instruction";
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, pc);
  std::string s = buf;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(pc), &info) != 0) {
    if (info.dli_sname != nullptr) s += std::string(" in ") + info.dli_sname;
    if (info.dli_fname != nullptr) {
      // The offset in its file, for addr2line -e FILE (the address itself moves with ASLR).
      std::snprintf(buf, sizeof buf, "+0x%" PRIxPTR, pc - reinterpret_cast<std::uintptr_t>(info.dli_fbase));
      s += std::string(" (") + info.dli_fname + buf + ")";
    }
  }
  return s;
}

}  // namespace

bool Engine::speculation_refused(std::uintptr_t lo, std::uintptr_t hi, int source, std::uint32_t context,
                                 std::int32_t tag) const {
  const PageGuard::Range pages = PageGuard::pages_of(reinterpret_cast<const void*>(lo), hi - lo);
  for (const Speculation& s : specs_) {
    if (s.peer == source && s.context == context && s.tag == tag) return true;  // one per envelope
    const PageGuard::Range sp = PageGuard::pages_of(s.buf, s.cap);
    if (overlaps(pages.lo, pages.hi, sp.lo, sp.hi)) return true;
  }
  for (const Busy& b : busy_) {
    if (overlaps(lo, hi, b.lo, b.hi)) return true;  // a receive into it is still in progress
  }
  return false;
}

Status Engine::speculate(const predictor::RecvCall& call) {
  Peer& p = peers_[static_cast<std::size_t>(call.source)];
  if (p.dead) return Status::Ok();
  if (!p.ready) return connect_peer(call.source);
  if (steer_->landable(call.count, call.source, call.tag)) return stage_credit(call);  // a landing zone
  auto* buf = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(call.buffer));
  const auto lo = static_cast<std::uintptr_t>(call.buffer);
  for (const Speculation& s : specs_) {  // the same prediction again: it is armed already
    if (s.peer == call.source && s.context == call.comm && s.tag == call.tag && s.buf == buf) return Status::Ok();
  }
  // A guard protects whole pages: memory of the program's sharing them (another heap block, a
  // stdio buffer) would be touched by it, or by a system call that then fails with EFAULT. So a
  // guarded speculation needs a buffer that is whole pages: page-aligned, a page multiple long.
  const std::size_t page = PageGuard::page_size();
  if (cfg_.guard && (lo % page != 0 || call.count % page != 0)) {
    ++counters_.spec_shared_pages;
    return stage_credit(call);
  }
  if (buf == nullptr || speculation_refused(lo, lo + call.count, call.source, call.comm, call.tag) ||
      match_.posted_conflicts(call.comm, call.source, call.tag) || specs_.size() >= kMaxSpeculations) {
    return stage_credit(call);  // a staged credit, as in predicted mode
  }
  // The prediction moved on: at most predict_depth unused speculations per peer.
  std::size_t armed = 0, oldest = specs_.size();
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].peer != call.source || specs_[i].state != Speculation::State::kArmed) continue;
    ++armed;
    if (oldest == specs_.size() || specs_[i].id < specs_[oldest].id) oldest = i;
  }
  if (armed >= cfg_.predict_depth) AUGUR_RETURN_IF_ERROR(revoke_speculation(specs_[oldest]));
  // Registered before it is guarded: a PROT_NONE range cannot be registered.
  Result<nic::RegCache::Handle> pin = recv_cache_->acquire(buf, call.count);
  if (!pin.ok()) return stage_credit(call);
  Speculation s;
  s.id = ++next_spec_id_;
  s.peer = call.source;
  s.buf = buf;
  s.cap = static_cast<std::uint32_t>(call.count);
  s.context = call.comm;
  s.tag = call.tag;
  if (cfg_.guard) {
    Result<PageGuard::Ticket> t = guard_->guard(buf, call.count);
    if (!t.ok()) return stage_credit(call);  // shares a page with a guarded buffer, or no guard free
    s.ticket = t.value();
  }
  spec_release_->watch(lo, lo + call.count);  // before the credit is out: a release from now on is seen
  ChannelWriter w(*p.ch);
  Result<std::optional<std::uint32_t>> slot =
      p.credits->speculate(w, std::move(pin.value()), buf, call.count, call.comm, call.tag);
  if (!slot.ok() || !*slot) {
    if (s.ticket) (void)guard_->release(*s.ticket);
    if (!slot.ok()) return slot.status();
    return Status::Ok();  // no credit slot or no room to write now
  }
  s.slot = **slot;
  specs_.push_back(s);
  ++counters_.spec_armed;
  return Status::Ok();
}

Engine::Speculation* Engine::find_speculation(int peer, std::uint32_t slot) {
  for (Speculation& s : specs_) {
    if (s.peer == peer && s.slot == slot && (s.state == Speculation::State::kArmed || s.state == Speculation::State::kRevoking)) {
      return &s;
    }
  }
  return nullptr;
}

void Engine::end_speculation(const Speculation& s) {
  if (s.ticket) (void)guard_->release(*s.ticket);  // kNotFound only if already released
  const std::uint64_t id = s.id;
  std::erase_if(specs_, [id](const Speculation& x) { return x.id == id; });
}

Result<bool> Engine::unguard(Speculation& s) {
  if (!s.ticket) return false;
  const std::uintptr_t pc = guard_->touch_site(*s.ticket);  // gone with the slot once released
  AUGUR_ASSIGN_OR_RETURN(bool touched, guard_->release(*s.ticket));
  s.ticket.reset();
  if (touched) s.touch_pc = pc;
  return touched;
}

void Engine::drop_guard(Speculation& s) {
  if (s.ticket) (void)guard_->release(*s.ticket);  // mprotect fails on unmapped pages: nothing to lift
  s.ticket.reset();
}

// The program freed or unmapped memory that a speculation is out on (the release hooks of
// nic/mem_release.h: munmap, mremap, madvise and MAP_FIXED mmap in every build; every free() in
// sanitizer builds). An unused credit is revoked; a message already there, or one that crosses
// the revoke, was written into memory that is no longer the buffer: the run stops.
Status Engine::speculations_released() {
  const nic::ReleaseWatch::Released rel = spec_release_->take();
  for (std::size_t i = 0; i < specs_.size();) {
    Speculation& s = specs_[i];
    const std::uint64_t id = s.id;
    const auto lo = reinterpret_cast<std::uintptr_t>(s.buf);
    bool hit = false;
    for (std::size_t k = 0; k < rel.count && !hit; ++k) hit = overlaps(lo, lo + s.cap, rel.ranges[k].lo, rel.ranges[k].hi);
    if (!hit && rel.all && s.state == Speculation::State::kArmed) {
      // Past kMaxRanges releases between two progress calls the watch knows only that something
      // went: unused credits are withdrawn (as a touch would), nothing is reported.
      AUGUR_RETURN_IF_ERROR(revoke_speculation(s));
    } else if (hit && !s.released) {
      s.released = true;
      drop_guard(s);  // the pages may be gone, or another allocation's now
      switch (s.state) {
        case Speculation::State::kArmed:
          AUGUR_RETURN_IF_ERROR(revoke_speculation(s));
          break;
        case Speculation::State::kRevoking:
          break;
        case Speculation::State::kHeld:
          return violation(s, "(freed or unmapped it) while a message for its predicted receive was in it");
        case Speculation::State::kClobbered:
          end_speculation(s);
          break;
      }
    }
    if (i < specs_.size() && specs_[i].id == id) ++i;
  }
  return Status::Ok();
}

Status Engine::revoke_speculation(Speculation& s) {
  Peer& p = peers_[static_cast<std::size_t>(s.peer)];
  if (std::optional<std::uint32_t> gen = p.credits->revoke_speculative(s.slot)) {
    queue_revoke(p, s.slot, *gen);
    ++counters_.spec_revoked;
    s.state = Speculation::State::kRevoking;
    return push_sends(s.peer);
  }
  return Status::Ok();
}

Status Engine::violation(const Speculation& s, const std::string& what, bool by_program) {
  ++counters_.spec_violations;
  const std::uintptr_t pc = s.touch_pc != 0 ? s.touch_pc : s.ticket ? guard_->touch_site(*s.ticket) : 0;
  char addr[32];
  std::snprintf(addr, sizeof addr, "%p", static_cast<const void*>(s.buf));
  // A release is reported as such; a touch says where it was; a receive that did not fit what
  // was written says so.
  const bool released = s.released && !s.touched && pc == 0;
  const std::string buffer = "buffer " + std::string(addr) + " (" + std::to_string(s.cap) +
                             " bytes, the predicted receive from rank " + std::to_string(s.peer) + ", tag " +
                             std::to_string(s.tag) + ")";
  const std::string who = !by_program ? buffer
                          : released  ? "the program gave back " + buffer
                                      : "the program touched " + buffer + " at " + site_name(pc);
  std::string msg = "speculative placement (AUGUR_STEERING=speculative): " + who + " " + what +
                    "; its contents may be wrong. Run with AUGUR_STEERING=predicted, the MPI-correct default, " +
                    (by_program ? "or do not touch, free or unmap a receive buffer between its receives"
                                : "or post each receive into a buffer with the count and place of its earlier ones");
  std::fprintf(stderr, "augur: rank %d: %s\n", rank_, msg.c_str());
  return Status(Code::kDataLoss, std::move(msg));
}

Status Engine::on_speculative(int peer, std::uint32_t slot, const CreditBook::Direct& d, std::uint32_t length) {
  Speculation* s = find_speculation(peer, slot);
  if (s == nullptr) return Status(Code::kInternal, "speculative write without its speculation");
  if (s->released) {
    return violation(*s, "(freed or unmapped it) before its receive, and a message was written into it after (its credit was being revoked)");
  }
  if (s->touched || (s->ticket && guard_->touched(*s->ticket))) {
    return violation(*s, "before posting its receive, and a message was written into it after (its credit was being revoked)");
  }
  ++counters_.spec_msgs;
  s->state = Speculation::State::kHeld;  // a revoke's answer may still come (on_revoke_ack ignores it then)
  s->length = length;
  Incoming in{};
  in.peer = peer;
  in.type = proto::MsgType::kDirect;
  in.length = length;
  in.payload = {s->buf, length};
  in.spec = s->id;
  if (auto r = match_.arrive({d.context, peer, d.tag}, std::move(in))) {  // moved only when queued
    return match_and_start(*r, in, d.tag);
  }
  ++counters_.unexpected_msgs;
  ++counters_.spec_early;  // waits in the predicted buffer, guarded, for its receive
  return Status::Ok();
}

Status Engine::place_speculative(const PostedRecv& recv, Incoming& msg, std::size_t n, Path& path) {
  auto it = std::find_if(specs_.begin(), specs_.end(), [&](const Speculation& s) { return s.id == msg.spec; });
  if (it == specs_.end()) {  // evacuated (its buffer was needed): the data is in self_copy
    if (!recv.req->runs.empty()) {
      relations::ScatterRuns(msg.self_copy.data(), n, recv.req->layout());
    } else if (n > 0) {
      std::memcpy(recv.buf, msg.self_copy.data(), n);
    }
    counters_.bytes_copied += n;
    path = Path::kLanding;
    return Status::Ok();
  }
  Speculation& s = *it;
  AUGUR_ASSIGN_OR_RETURN(bool touched, unguard(s));
  if (touched) return violation(s, "after a message had been written into it, before posting its receive");
  if (recv.req->runs.empty() && recv.buf == s.buf) {  // the predicted buffer: nothing to move
    // Truncated: the message's bytes past the receive are in memory the receive does not own,
    // and what the program kept there is gone.
    if (n < s.length) {
      return violation(s,
                       "took a message of " + std::to_string(s.length) + " bytes ahead of its receive, and the receive " +
                           "posted for it holds " + std::to_string(n) + ": the bytes past the receive were overwritten",
                       false);
    }
    ++counters_.spec_placed;
    ++counters_.direct_msgs;
    path = Path::kDirect;
    end_speculation(s);
    return Status::Ok();
  }
  // Another buffer took it: copy, and B holds a message that was not the program's to see.
  if (!recv.req->runs.empty()) {
    relations::ScatterRuns(s.buf, n, recv.req->layout());
  } else if (n > 0) {
    std::memmove(recv.buf, s.buf, n);
  }
  counters_.bytes_copied += n;
  ++counters_.spec_copied;
  path = Path::kLanding;
  if (cfg_.guard) {
    // Guarded until a receive into B is posted (it overwrites B anyway); a touch before stops the
    // run: B's own contents are gone.
    Result<PageGuard::Ticket> t = guard_->guard(s.buf, s.cap);
    if (t.ok()) {
      s.ticket = t.value();
      s.state = Speculation::State::kClobbered;
      return Status::Ok();
    }
  }
  end_speculation(s);
  return Status::Ok();
}

Status Engine::speculation_at_post(const RequestPtr& req, void* buf, std::size_t len, int source, std::int32_t tag,
                                   std::uint32_t context, bool& adopted) {
  adopted = false;
  const auto lo = reinterpret_cast<std::uintptr_t>(buf);
  const PageGuard::Range pages = PageGuard::pages_of(buf, std::max<std::size_t>(len, 1));
  const Pattern pat{context, source, tag};
  for (std::size_t i = 0; i < specs_.size();) {
    Speculation& s = specs_[i];
    const PageGuard::Range sp = PageGuard::pages_of(s.buf, s.cap);
    const bool mine = pat.matches({s.context, s.peer, s.tag});  // could take the message the credit is for
    const bool shares = len > 0 && overlaps(pages.lo, pages.hi, sp.lo, sp.hi);
    if (!mine && !shares) {
      ++i;
      continue;
    }
    const std::uint64_t id = s.id;
    switch (s.state) {
      case Speculation::State::kArmed: {
        // The predicted receive itself, with no earlier receive that could take its message:
        // the credit is the receive's from now on.
        if (mine && source == s.peer && tag == s.tag && lo == reinterpret_cast<std::uintptr_t>(s.buf) && len >= s.cap &&
            req->runs.empty() && !match_.posted_conflicts(context, source, tag) &&
            peers_[static_cast<std::size_t>(s.peer)].credits->adopt(s.slot, req)) {
          req->credit_peer = s.peer;
          ++counters_.spec_adopted;
          adopted = true;
          end_speculation(s);
        } else {
          AUGUR_RETURN_IF_ERROR(revoke_speculation(s));
          if (shares && s.ticket) {  // the receive owns those pages now
            (void)guard_->release(*s.ticket);
            s.ticket.reset();
          }
        }
        break;
      }
      case Speculation::State::kRevoking:
        if (shares && s.ticket) {
          (void)guard_->release(*s.ticket);
          s.ticket.reset();
        }
        break;
      case Speculation::State::kHeld: {
        // Its message waits in B. The receive that takes it finds it in matching; any other that
        // shares B's pages would overwrite it: move it out first.
        // (A layout receive over B would scatter B over itself: it takes a copy.)
        const auto* first = match_.probe(pat);
        const bool takes_it = first != nullptr && first->msg.spec == id;
        const bool in_place = takes_it && req->runs.empty() && lo == reinterpret_cast<std::uintptr_t>(s.buf);
        if (shares && !in_place) AUGUR_RETURN_IF_ERROR(evacuate(s));
        break;
      }
      case Speculation::State::kClobbered:
        if (shares) {
          // A receive into B overwrites it: what B held no longer matters (MPI: a receive
          // buffer's contents are undefined until the receive completes), if the receive covers
          // all the message wrote there.
          AUGUR_ASSIGN_OR_RETURN(bool touched, unguard(s));
          if (touched) return violation(s, "after a message for another receive had been written into it");
          const auto b = reinterpret_cast<std::uintptr_t>(s.buf);
          if (!receive_covers(*req, lo, len, b, b + s.length)) {
            return violation(s,
                             "took a message that another receive was given, and the receive now posted over it does "
                             "not cover all that message wrote: the bytes outside it were overwritten",
                             false);
          }
          end_speculation(s);
        }
        break;
    }
    // end_speculation may have erased s: find the next one by position.
    if (i < specs_.size() && specs_[i].id == id) ++i;
  }
  return Status::Ok();
}

Status Engine::evacuate(Speculation& s) {
  AUGUR_ASSIGN_OR_RETURN(bool touched, unguard(s));
  if (touched) return violation(s, "after a message had been written into it, before posting its receive");
  const std::uint64_t id = s.id;
  match_.for_each_unexpected([&](Incoming& m) {
    if (m.spec != id) return;
    m.self_copy.assign(s.buf, s.buf + s.length);
    m.payload = {m.self_copy.data(), m.self_copy.size()};
  });
  ++counters_.spec_copied;
  end_speculation(s);
  return Status::Ok();
}

void Engine::void_speculations(int peer, std::uint32_t context, std::int32_t tag) {
  for (std::size_t i = 0; i < specs_.size();) {
    Speculation& s = specs_[i];
    if (s.peer != peer || s.context != context || s.tag != tag ||
        (s.state != Speculation::State::kArmed && s.state != Speculation::State::kRevoking)) {
      ++i;
      continue;
    }
    // The sender sent a message with the envelope otherwise: it holds the credit void.
    peers_[static_cast<std::size_t>(peer)].credits->settle_speculative(s.slot);
    ++counters_.spec_void;
    end_speculation(s);
  }
}

Status Engine::check_speculations() {
  if (spec_release_ && spec_release_->pending()) AUGUR_RETURN_IF_ERROR(speculations_released());
  // Each send and each progress round asks: the tickets are looked at only after a new touch.
  // Read before the loop, so that a touch during it is seen at the next call.
  const std::uint64_t touches = guard_ != nullptr ? guard_->touches() : 0;
  if (touches == touches_seen_) return Status::Ok();
  touches_seen_ = touches;
  for (std::size_t i = 0; i < specs_.size();) {
    Speculation& s = specs_[i];
    const std::uint64_t id = s.id;
    if (s.ticket && guard_->touched(*s.ticket)) {
      ++counters_.guard_faults;
      switch (s.state) {
        case Speculation::State::kArmed:  // nothing came yet: withdraw it, the program goes on
          s.touched = true;
          (void)guard_->release(*s.ticket);
          s.ticket.reset();
          AUGUR_RETURN_IF_ERROR(revoke_speculation(s));
          break;
        case Speculation::State::kRevoking:
          s.touched = true;
          (void)guard_->release(*s.ticket);
          s.ticket.reset();
          break;
        case Speculation::State::kHeld:
          return violation(s, "after a message had been written into it, before posting its receive");
        case Speculation::State::kClobbered:
          return violation(s, "after a message for another receive had been written into it");
      }
    }
    if (i < specs_.size() && specs_[i].id == id) ++i;
  }
  return Status::Ok();
}

void Engine::speculation_revoke_ack(int peer, std::uint32_t slot) {
  for (Speculation& s : specs_) {
    if (s.peer == peer && s.slot == slot && s.state == Speculation::State::kRevoking) {
      end_speculation(s);  // nothing came through it
      return;
    }
  }
}

void Engine::end_speculations(int peer) {
  std::erase_if(specs_, [&](const Speculation& s) {
    // A failed peer's message already in a buffer still waits for its receive there.
    if (peer >= 0 && (s.peer != peer || s.state == Speculation::State::kHeld)) return false;
    if (s.ticket) (void)guard_->release(*s.ticket);
    return true;
  });
}

void Engine::unbusy(const Request* r) {
  std::erase_if(busy_, [r](const Busy& b) { return b.req == r; });
}

}  // namespace augur::host
