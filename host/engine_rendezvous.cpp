// The rendezvous protocol, for messages above the eager limit and synchronous sends: the RTS body of a
// non-contiguous send (run_list_rts), the receiver's RDMA READs into the receive buffer or layout
// (start_reads, start_layout_read, post_layout_reads), and the FIN that releases the sender (queue_fin,
// on_fin). Separate because it owns the registrations and READ bookkeeping (reads_, read_queue) that no
// other protocol touches.

#include "augur/host/engine.h"

#include <algorithm>
#include <string>
#include <utility>

#include "augur/compiler.h"
#include "engine_internal.h"

namespace augur::host {

namespace {

struct PinnedLayout {
  std::vector<nic::RegCache::Handle> pins;
  std::vector<std::uint32_t> keys;  // per run: lkey or rkey
};

// Registers a layout: its covering range in one region when that range is not much more than
// the data (one key, one cache entry), else run by run (gaps may be unmapped or huge).
Result<PinnedLayout> pin_layout(nic::RegCache& cache, const relations::Layout& layout, bool remote) {
  PinnedLayout out;
  std::int64_t lo = layout.runs[0].offset;
  std::int64_t hi = lo + layout.runs[0].length;
  std::uint64_t total = 0;
  for (const relations::ByteRun& r : layout.runs) {
    lo = std::min(lo, r.offset);
    hi = std::max(hi, r.offset + r.length);
    total += static_cast<std::uint64_t>(r.length);
  }
  const auto span = static_cast<std::size_t>(hi - lo);
  if (span <= std::max<std::uint64_t>(4 * total, std::uint64_t{1} << 20)) {
    if (Result<nic::RegCache::Handle> h = cache.acquire(layout.base + lo, span); h.ok()) {
      out.keys.assign(layout.runs.size(), remote ? h->rkey() : h->lkey());
      out.pins.push_back(std::move(h.value()));
      return out;
    }
  }
  for (const relations::ByteRun& r : layout.runs) {
    AUGUR_ASSIGN_OR_RETURN(nic::RegCache::Handle h, cache.acquire(layout.at(r), static_cast<std::size_t>(r.length)));
    out.keys.push_back(remote ? h.rkey() : h.lkey());
    out.pins.push_back(std::move(h));
  }
  return out;
}

}  // namespace

AUGUR_COLD_PATH Status Engine::start_reads(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.posting >= 0) {  // a layout read's READs first: they hold registrations until the FIN
    const auto cookie = static_cast<std::uint32_t>(p.posting);
    AUGUR_RETURN_IF_ERROR(post_layout_reads(peer, *reads_[cookie], cookie));
    if (p.posting >= 0) return Status::Ok();  // no room yet
  }
  while (!p.read_queue.empty() && p.reads_in_flight < Channel::kMaxReads) {
    PendingRead pr = std::move(p.read_queue.front());
    p.read_queue.pop_front();
    if (pr.n == 0) {  // nothing to move (empty or zero-size buffer): answer at once
      ++counters_.rndv_msgs;
      finish(*pr.req, Path::kRendezvous, pr.req->status);
      queue_fin(peer, pr.rts_seq);
      continue;
    }
    if (!pr.remote_runs.empty() || !pr.req->runs.empty()) {
      AUGUR_RETURN_IF_ERROR(start_layout_read(peer, pr));
      if (p.posting >= 0) break;  // the rest of its READs when room frees
      continue;
    }
    if (pr.req->releasable && releasable(pr)) [[unlikely]] {
      AUGUR_ASSIGN_OR_RETURN(bool started, start_release_read(peer, pr));
      if (started) {
        if (p.posting >= 0) break;
        continue;
      }
    }
    Result<nic::RegCache::Handle> got = recv_cache_->acquire(pr.buf, pr.n);
    if (!got.ok()) {  // e.g. the cache's bound: this receive fails, the sender is released, the job goes on
      finish(*pr.req, Path::kNone, got.status().context("registering the receive buffer for a rendezvous READ"));
      queue_fin(peer, pr.rts_seq);
      continue;
    }
    nic::RegCache::Handle pin = std::move(got.value());
    auto it = std::find(reads_.begin(), reads_.end(), nullptr);
    const auto cookie = static_cast<std::uint32_t>(it - reads_.begin());
    const nic::Sge sge{reinterpret_cast<std::uintptr_t>(pr.buf), static_cast<std::uint32_t>(pr.n), pin.lkey()};
    AUGUR_RETURN_IF_ERROR(p.ch->post_read(cookie, sge, pr.remote.addr, pr.remote.rkey));
    auto rd = std::make_unique<Read>(Read{.req = pr.req, .pin = std::move(pin), .peer = peer, .rts_seq = pr.rts_seq});
    if (it == reads_.end()) {
      reads_.push_back(std::move(rd));
    } else {
      *it = std::move(rd);
    }
    ++p.reads_in_flight;
  }
  return Status::Ok();
}

void Engine::queue_fin(int peer, std::uint32_t rts_seq) {
  OutMsg fin{};
  fin.type = proto::MsgType::kFin;
  fin.length = rts_seq;
  peers_[static_cast<std::size_t>(peer)].out.push_front(std::move(fin));  // not matched: may pass data
}

Status Engine::on_fin(int peer, std::uint32_t rts_seq) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  auto it = std::find_if(p.awaiting_fin.begin(), p.awaiting_fin.end(), [&](const auto& e) { return e.first == rts_seq; });
  if (it == p.awaiting_fin.end()) {
    return Status(Code::kProtocol, "FIN from rank " + std::to_string(peer) + " for unknown RTS " + std::to_string(rts_seq));
  }
  if (it->second.req) {
    finish(*it->second.req, Path::kRendezvous);
  } else {
    end_release_send(it->second);  // done at its start: now the program may store into it
  }
  p.awaiting_fin.erase(it);  // unpins the send buffer
  return Status::Ok();
}

Result<std::vector<std::byte>> Engine::run_list_rts(const relations::Layout& layout, std::size_t len,
                                                    std::vector<nic::RegCache::Handle>& pins) {
  AUGUR_ASSIGN_OR_RETURN(PinnedLayout pinned, pin_layout(*send_cache_, layout, true));
  std::vector<proto::RemoteRun> remote(layout.runs.size());
  for (std::size_t i = 0; i < remote.size(); ++i) {
    const relations::ByteRun& r = layout.runs[i];
    remote[i] = {reinterpret_cast<std::uintptr_t>(layout.at(r)), static_cast<std::uint32_t>(r.length), pinned.keys[i]};
  }
  std::vector<std::byte> body(proto::run_list_bytes(remote.size()));
  proto::encode_run_list(len, remote, body);
  pins = std::move(pinned.pins);
  return body;
}

Status Engine::start_layout_read(int peer, PendingRead& pr) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  std::vector<proto::RemoteRun> remote = std::move(pr.remote_runs);
  if (remote.empty()) remote.push_back({pr.remote.addr, static_cast<std::uint32_t>(pr.remote.length), pr.remote.rkey});
  const relations::ByteRun one[] = {{0, static_cast<std::int64_t>(pr.n)}};
  const relations::Layout local =
      pr.req->runs.empty() ? relations::Layout{static_cast<std::byte*>(pr.buf), one} : pr.req->layout();
  Result<PinnedLayout> pinned = pin_layout(*recv_cache_, local, false);
  if (!pinned.ok()) {  // this receive fails (nothing read); the sender is released
    finish(*pr.req, Path::kNone, pinned.status().context("registering the receive layout"));
    queue_fin(peer, pr.rts_seq);
    return Status::Ok();
  }
  auto rd = std::make_unique<Read>(Read{.req = pr.req, .peer = peer, .rts_seq = pr.rts_seq});
  rd->plan = plan_reads(remote, local, pinned->keys, pr.n, p.ch->max_sge());
  std::size_t planned = 0;
  for (const nic::Sge& s : rd->plan.sges) planned += s.length;
  if (planned != pr.n) {
    return Status(Code::kInternal, "read plan covers " + std::to_string(planned) + " of " + std::to_string(pr.n) + " bytes");
  }
  rd->pins = std::move(pinned->pins);
  rd->left = static_cast<std::uint32_t>(rd->plan.wrs.size());
  auto it = std::find(reads_.begin(), reads_.end(), nullptr);
  const auto cookie = static_cast<std::uint32_t>(it - reads_.begin());
  if (it == reads_.end()) {
    reads_.push_back(std::move(rd));
  } else {
    *it = std::move(rd);
  }
  p.posting = cookie;
  return post_layout_reads(peer, *reads_[cookie], cookie);
}

Status Engine::post_layout_reads(int peer, Read& rd, std::uint32_t cookie) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  const bool release = !rd.guards.empty();
  while (rd.posted < rd.plan.wrs.size() && p.reads_in_flight < Channel::kMaxReads) {
    const ReadWr& w = rd.plan.wrs[rd.posted];
    // An early-released read's READs say which they are: their completions lift their guards.
    AUGUR_RETURN_IF_ERROR(p.ch->post_read(release ? cookie | rd.posted << 16 : cookie,
                                          std::span<const nic::Sge>(rd.plan.sges).subspan(w.first, w.count),
                                          w.remote_addr, w.rkey, release ? Channel::kReleaseReadKind : Channel::kReadKind));
    ++rd.posted;
    ++p.reads_in_flight;
  }
  if (rd.posted == rd.plan.wrs.size()) {
    p.posting = -1;
    if (release) maybe_release(rd, cookie);
  }
  return Status::Ok();
}

Status Engine::deliver_rts(int peer, const Arrival& a) {
  const proto::MsgHeader& h = a.header;
  Incoming in{};
  in.peer = peer;
  in.type = h.type;
  in.seq = h.seq;
  in.length = h.length;
  Status parsed;  // validated whole before anything is matched: a bad RTS writes nothing
  if (h.type == proto::MsgType::kRts) {
    Result<nic::RemoteBuffer> rb = nic::parse_remote_buffer(a.payload);
    if (!rb.ok()) {
      parsed = rb.status();
    } else if (rb->length != h.length) {
      parsed = Status(Code::kProtocol, "RTS length differs from its buffer");
    } else {
      in.remote = rb.value();
    }
  } else {
    Result<std::vector<proto::RemoteRun>> runs =
        proto::parse_run_list(a.payload, h.length, proto::max_remote_runs(cfg_.eager_limit));
    if (runs.ok()) {
      in.remote_runs = std::move(runs.value());
      in.remote.length = h.length;
    } else {
      parsed = runs.status();
    }
  }
  // Everything needed is copied out of the slot.
  Status released = peers_[static_cast<std::size_t>(peer)].ch->release(a.slot);
  AUGUR_RETURN_IF_ERROR(parsed);
  ++counters_.rndv_msgs;
  if (!specs_.empty()) void_speculations(peer, h.context, h.tag);
  Status matched;
  if (auto r = match_.arrive({h.context, peer, h.tag}, std::move(in))) {  // moved only when queued
    matched = match_and_start(*r, in, h.tag);
  } else {
    ++counters_.unexpected_msgs;
  }
  return released.ok() ? matched : released;
}

}  // namespace augur::host
