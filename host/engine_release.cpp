// Early release of blocked receives (AUGUR_EARLY_RELEASE, docs/early-release.md, issue 18; the
// early-release paper in ../shared/papers): a contiguous rendezvous receive completes as soon as
// the partial pages at its buffer's edges are in. The whole pages between are read in
// page-aligned chunks, each behind a PageGuard whose touches wait: the program goes on computing
// while the NIC fills the buffer, and a load or store of a chunk not yet in waits in the SIGSEGV
// handler, which polls the CQ itself until that chunk's READ has completed.
//
// The edges go first because they share pages with other data (malloc's headers, neighbouring
// variables): guarding them would make unrelated accesses wait. Only pages wholly inside the
// buffer are ever protected.
//
// The engine itself never touches released memory: every call that takes a buffer first waits
// for released data that buffer overlaps (settle), so a guarded touch only ever comes from the
// program, outside the engine. The wait then polls the CQ into a stash (no allocation, no
// engine state but the chunks' guards), and the next progress round handles what it polled.

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "augur/host/engine.h"
#include "engine_internal.h"

namespace augur::host {

namespace {

std::uintptr_t page_up(std::uintptr_t a) {
  const std::uintptr_t pg = PageGuard::page_size();
  return (a + pg - 1) & ~(pg - 1);
}
std::uintptr_t page_down(std::uintptr_t a) { return a & ~(PageGuard::page_size() - 1); }

// A released read's READs carry its cookie in 16 bits (the READ's index in the other 16).
constexpr std::uint32_t kMaxReleaseCookie = 1u << 16;

[[noreturn]] void die(const char* what) noexcept {
  (void)!write(2, what, std::strlen(what));
  abort();
}

}  // namespace

bool Engine::releasable(const PendingRead& pr) const noexcept {
  if (pr.buf == nullptr || !pr.remote_runs.empty() || !pr.req->runs.empty()) return false;
  const auto a = reinterpret_cast<std::uintptr_t>(pr.buf);
  const std::uintptr_t lo = page_up(a);
  const std::uintptr_t hi = page_down(a + pr.n);
  return hi > lo && hi - lo >= cfg_.release_chunk;
}

Result<bool> Engine::start_release_read(int peer, PendingRead& pr) {
  // Registered before the pages are protected (pinning a PROT_NONE page fails). A failure here,
  // or no guard to be had below, leaves the read to start_reads' plain path, which registers
  // again (a cache hit) and reports a registration that fails.
  Result<nic::RegCache::Handle> got = recv_cache_->acquire(pr.buf, pr.n);
  if (!got.ok()) return false;
  auto it = std::find(reads_.begin(), reads_.end(), nullptr);
  const auto cookie = static_cast<std::uint32_t>(it - reads_.begin());
  auto rd = std::make_unique<Read>(Read{.req = pr.req, .pin = std::move(got.value()), .peer = peer, .rts_seq = pr.rts_seq});
  const auto a = reinterpret_cast<std::uintptr_t>(pr.buf);
  const std::uintptr_t end = a + pr.n;
  const std::uintptr_t lo = page_up(a);
  const std::uintptr_t hi = page_down(end);
  rd->lo = a;
  rd->hi = end;
  const std::uint32_t lkey = rd->pin.lkey();
  auto add = [&](std::uintptr_t from, std::uintptr_t to) {
    rd->plan.wrs.push_back({pr.remote.addr + (from - a), pr.remote.rkey, static_cast<std::uint32_t>(rd->plan.sges.size()), 1});
    rd->plan.sges.push_back({from, static_cast<std::uint32_t>(to - from), lkey});
  };
  if (a < lo) add(a, lo);
  if (hi < end) add(hi, end);
  rd->edge_wrs = rd->edges = static_cast<std::uint32_t>(rd->plan.wrs.size());
  rd->guards.resize(rd->edge_wrs);
  // Chunks of at least AUGUR_RELEASE_CHUNK, few enough that all READs can be in flight at once:
  // the request is released only once every READ is posted, so a touch's wait need only poll.
  const std::uintptr_t pg = PageGuard::page_size();
  const std::uintptr_t room = Channel::kMaxReads - rd->edge_wrs;
  const std::uintptr_t chunk =
      std::max(page_up(cfg_.release_chunk), ((hi - lo + room - 1) / room + pg - 1) / pg * pg);
  bool guarded = cookie < kMaxReleaseCookie;
  for (std::uintptr_t at = lo; guarded && at < hi; at += chunk) {
    const std::uintptr_t to = std::min(at + chunk, hi);
    Result<PageGuard::Ticket> t =
        guard_->guard_until_landed(reinterpret_cast<void*>(at), to - at, &Engine::release_waiter, this);
    if (!t.ok()) {  // shares a page with another guard, or none is free
      guarded = false;
      break;
    }
    add(at, to);
    rd->guards.emplace_back(t.value());
  }
  if (!guarded) {  // read whole, completed at the end as any rendezvous
    for (std::optional<PageGuard::Ticket>& g : rd->guards) {
      if (g) guard_->drop(*g);
    }
    ++counters_.release_declined;
    return false;
  }
  rd->left = static_cast<std::uint32_t>(rd->plan.wrs.size());
  counters_.release_chunks += rd->left - rd->edge_wrs;
  // Room for everything the CQ can hold, so a touch's wait always has somewhere to poll into.
  if (stash_.size() < static_cast<std::size_t>(cq_entries_)) stash_.resize(static_cast<std::size_t>(cq_entries_));
  if (it == reads_.end()) {
    reads_.push_back(std::move(rd));
  } else {
    *it = std::move(rd);
  }
  peers_[static_cast<std::size_t>(peer)].posting = cookie;
  AUGUR_RETURN_IF_ERROR(post_layout_reads(peer, *reads_[cookie], cookie));
  return true;
}

void Engine::maybe_release(Read& rd, std::uint32_t cookie) {
  if (rd.released || rd.edges != 0 || rd.posted != rd.plan.wrs.size() || rd.left == 0) return;
  rd.released = true;
  ++counters_.release_early;
  released_.push_back(cookie);
  finish(*rd.req, Path::kRendezvous, rd.req->status);  // status: a truncation, if any
}

Status Engine::land_chunk(Read& rd, std::uint32_t index) {
  if (index >= rd.guards.size() || !rd.guards[index]) return Status::Ok();  // an edge, or landed by a touch's wait
  const PageGuard::Ticket t = *rd.guards[index];
  rd.guards[index].reset();
  return guard_->land(t);
}

Status Engine::on_release_read(int peer, const nic::Completion& c) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  const auto cookie = static_cast<std::uint32_t>(c.wr_id & 0xffffu);
  const auto index = static_cast<std::uint32_t>((c.wr_id >> 16) & 0xffffu);
  --p.reads_in_flight;
  if (cookie >= reads_.size()) return Status::Ok();
  std::unique_ptr<Read>& rd = reads_[cookie];
  if (!rd || rd->peer != peer) return Status::Ok();  // its peer was already failed (a flushed READ)
  if (!c.ok()) return c.status().context("RDMA READ from rank " + std::to_string(peer));
  AUGUR_RETURN_IF_ERROR(land_chunk(*rd, index).context("lifting the guard of a landed chunk"));
  if (index < rd->edge_wrs) --rd->edges;
  if (--rd->left > 0) {
    maybe_release(*rd, cookie);
    return start_reads(peer);  // room for READs still to post (this one's, or the next read's)
  }
  if (rd->released) {
    forget_released(cookie);
  } else {
    finish(*rd->req, Path::kRendezvous, rd->req->status);
  }
  queue_fin(peer, rd->rts_seq);
  rd.reset();
  return start_reads(peer);
}

void Engine::forget_released(std::uint32_t cookie) {
  auto it = std::find(released_.begin(), released_.end(), cookie);
  if (it != released_.end()) released_.erase(it);
}

void Engine::lose_released(Read& rd, const std::string& why) {
  char where[96];
  std::snprintf(where, sizeof where, "0x%" PRIxPTR " (%zu bytes)", rd.lo, static_cast<std::size_t>(rd.hi - rd.lo));
  // Leaked on purpose: the signal handler reads it at any later touch, however late.
  const auto* text = new std::string(  // NOLINT(cppcoreguidelines-owning-memory)
      "rank " + std::to_string(rank_) + ": a receive into " + where + " from rank " + std::to_string(rd.peer) +
      " returned before its data was in (AUGUR_EARLY_RELEASE=1), and part of that data will not come: " + why +
      ". The program touched a page that never got its data; stopping rather than let it read a hole.");
  bool lost = false;
  for (std::optional<PageGuard::Ticket>& g : rd.guards) {
    if (!g) continue;
    guard_->fail(*g, text->c_str());
    g.reset();
    lost = true;
  }
  if (lost) std::fprintf(stderr, "augur: %s (Only if touched.)\n", text->c_str());
  for (std::uint32_t c : released_) {
    if (reads_[c].get() == &rd) {
      forget_released(c);
      break;
    }
  }
  rd.released = false;
}

Status Engine::settle(std::uintptr_t lo, std::uintptr_t hi, bool writes) {
  if (lo >= hi) return Status::Ok();
  bool counted = false;
  // A released send's pages: its FIN comes from the assist thread's progress.
  if (writes && released_sends_live_.load(std::memory_order_acquire) != 0) {
    AUGUR_ASSIGN_OR_RETURN(const bool waited, guard_->await_landed(reinterpret_cast<const void*>(lo), hi - lo));
    if (waited) {
      release_settles_sends_.fetch_add(1, std::memory_order_relaxed);
      counted = true;
    }
  }
  for (;;) {
    bool overlap = false;
    for (std::uint32_t c : released_) {
      const Read* rd = reads_[c].get();
      if (rd != nullptr && lo < rd->hi && rd->lo < hi) {
        overlap = true;
        break;
      }
    }
    if (!overlap) return Status::Ok();
    if (!counted) {
      ++counters_.release_settles;
      counted = true;
    }
    AUGUR_RETURN_IF_ERROR(progress());
    AUGUR_RETURN_IF_ERROR(relax(1));
  }
}

Status Engine::settle(const relations::Layout& layout, bool writes) {
  if (layout.runs.empty()) return Status::Ok();
  std::int64_t lo = layout.runs[0].offset;
  std::int64_t hi = lo;
  for (const relations::ByteRun& r : layout.runs) {
    lo = std::min(lo, r.offset);
    hi = std::max(hi, r.offset + r.length);
  }
  return settle(reinterpret_cast<std::uintptr_t>(layout.base + lo), reinterpret_cast<std::uintptr_t>(layout.base + hi), writes);
}

void Engine::release_waiter(void* self) noexcept { static_cast<Engine*>(self)->wait_for_release(); }

// From the SIGSEGV handler, on the thread that touched a chunk, until the chunk has landed.
void Engine::wait_for_release() noexcept {
  if (t_in_engine) {
    die("augur: internal error: the runtime touched memory of an early-released receive while making progress "
        "(AUGUR_EARLY_RELEASE=0 avoids it); please report this\n");
  }
  const int held = release_lock_.enter != nullptr ? release_lock_.enter() : 0;
  if (held < 0) {  // another thread is inside the library: it makes progress, and lands the chunk
    sched_yield();
    return;
  }
  std::size_t got = 0;
  if (stash_n_ < stash_.size()) {
    const std::size_t room = std::min<std::size_t>(stash_.size() - stash_n_, 16);
    Result<std::size_t> r = cq_->poll(std::span<nic::Completion>(stash_).subspan(stash_n_, room));
    if (r.ok()) got = *r;
  }
  for (std::size_t i = 0; i < got; ++i) {
    const nic::Completion& c = stash_[stash_n_ + i];
    if ((c.wr_id >> 32) != Channel::kReleaseReadKind || !c.ok()) continue;
    const auto cookie = static_cast<std::uint32_t>(c.wr_id & 0xffffu);
    if (cookie < reads_.size() && reads_[cookie]) (void)land_chunk(*reads_[cookie], static_cast<std::uint32_t>((c.wr_id >> 16) & 0xffffu));
  }
  stash_n_ += got;
  if (held > 0) release_lock_.leave();
  if (got == 0) sched_yield();  // rxe does its work in the kernel, on these cores
}

// Early release of sends (with an assist thread). A blocking send above the eager limit
// completes at once: the partial pages at its buffer's edges are copied to registered staging
// memory (they share pages with other data, which the program may store into), its whole pages
// are write-protected, and the RTS names three runs (head copy, the whole pages, tail copy) that
// the receiver reads as any non-contiguous source. The program reads the buffer freely; a store
// into a whole page waits in the fault handler until the FIN lifts the guard. The assist thread
// makes the progress that brings the FIN meanwhile; without one, the faulting thread would have
// to, and it cannot from a signal handler: the peer may be waiting for this rank's READs or FINs
// before it reads ours.

Status Engine::open_staging() {
  const std::size_t bytes = std::size_t{kStagingSlots} * 2 * PageGuard::page_size();
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return errno_status(errno, "mmap of the send staging slots");
  staging_ = static_cast<std::byte*>(p);
  Result<nic::RegCache::Handle> pin = send_cache_->acquire(staging_, bytes);
  if (!pin.ok()) return pin.status().context("registering the send staging slots");
  staging_pin_ = std::move(pin.value());
  for (std::uint32_t i = kStagingSlots; i > 0; --i) staging_free_.push_back(static_cast<std::int32_t>(i - 1));
  return Status::Ok();
}

Result<bool> Engine::start_release_send(OutMsg& m, const void* buf, std::size_t len) {
  const auto a = reinterpret_cast<std::uintptr_t>(buf);
  const std::uintptr_t end = a + len;
  const std::uintptr_t lo = page_up(a);
  const std::uintptr_t hi = page_down(end);
  if (hi <= lo || hi - lo < cfg_.release_chunk) return false;
  if (staging_free_.empty()) {
    ++counters_.release_sends_declined;
    return false;
  }
  // Registered before the pages are protected, as any rendezvous source (a cache hit later).
  AUGUR_ASSIGN_OR_RETURN(nic::RegCache::Handle pin, send_cache_->acquire(buf, len));
  Result<PageGuard::Ticket> t =
      guard_->guard_writes_until_landed(reinterpret_cast<void*>(lo), hi - lo, &Engine::release_send_waiter, this);
  if (!t.ok()) {  // shares a page with another guard, or none is free
    ++counters_.release_sends_declined;
    return false;
  }
  const std::int32_t slot = staging_free_.back();
  staging_free_.pop_back();
  const std::uintptr_t pg = PageGuard::page_size();
  std::byte* st = staging_ + static_cast<std::size_t>(slot) * 2 * pg;
  std::vector<proto::RemoteRun> runs;
  if (a < lo) {
    std::memcpy(st, buf, lo - a);
    runs.push_back({reinterpret_cast<std::uintptr_t>(st), static_cast<std::uint32_t>(lo - a), staging_pin_.rkey()});
  }
  runs.push_back({lo, static_cast<std::uint32_t>(hi - lo), pin.rkey()});
  if (hi < end) {
    std::memcpy(st + pg, reinterpret_cast<const void*>(hi), end - hi);
    runs.push_back({reinterpret_cast<std::uintptr_t>(st + pg), static_cast<std::uint32_t>(end - hi), staging_pin_.rkey()});
  }
  m.type = proto::MsgType::kRtsRuns;
  m.body.resize(proto::run_list_bytes(runs.size()));
  proto::encode_run_list(len, runs, m.body);
  m.pin = std::move(pin);
  m.release_guard = t.value();
  m.staging = slot;
  released_sends_live_.fetch_add(1, std::memory_order_acq_rel);
  ++counters_.release_sends;
  return true;
}

void Engine::end_release_send(OutMsg& m) noexcept {
  if (m.release_guard) {
    guard_->drop(*m.release_guard);  // read-write again; waiting stores go on
    m.release_guard.reset();
    released_sends_live_.fetch_sub(1, std::memory_order_acq_rel);
  }
  if (m.staging >= 0) {
    staging_free_.push_back(m.staging);
    m.staging = -1;
  }
}

void Engine::release_send_waiter(void* /*self*/) noexcept {
  if (t_in_engine) {
    die("augur: internal error: the runtime stored into the buffer of an early-released send while making progress "
        "(AUGUR_EARLY_RELEASE=0 avoids it); please report this\n");
  }
  sched_yield();  // the assist thread brings the FIN
}

}  // namespace augur::host
