// Early release of blocked receives (AUGUR_EARLY_RELEASE, docs/early-release.md) between two
// ranks: on the device, and natively on the loopback device.
//
// Rank 1 sends a series of rendezvous messages; rank 0 receives each into buffers of different
// shapes and, the moment the wait returns, reads every byte (touching pages whose chunk may still
// be on its way), sends the buffer on, receives into it again, frees it. Each case checks the
// data, the path, and what the counters say was released.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
#include "augur/host/page_guard.h"
#include "ranks.h"
#include "run_ahead.h"

namespace augur::host {
namespace {

using testing::run_ranks;
using namespace testing;  // Job, Pages, signal, await_signal (run_ahead.h)

constexpr std::uint32_t kCtx = 7;
constexpr std::int32_t kTag = 5;
constexpr std::size_t kMiB = 1u << 20;
constexpr std::uint32_t kChunk = 64u << 10;

std::byte pattern(std::size_t round, std::size_t k) { return static_cast<std::byte>((round * 29 + k * 7 + k / 4093 + 3) & 0xff); }

Result<Job> start(std::uint16_t port, int rank) {
  Job j;
  AUGUR_ASSIGN_OR_RETURN(j.boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, std::chrono::seconds(120)));
  // No steering: every message above the eager limit goes by rendezvous READ, the path released.
  EngineConfig cfg{.slots = 16, .eager_limit = 8192, .steering = Steering::kOff};
  cfg.early = EngineConfig::Early::kOff;
  cfg.early_release = true;
  cfg.release_chunk = kChunk;
  AUGUR_ASSIGN_OR_RETURN(j.e, Engine::create(*j.boot, cfg));
  return j;
}

// The chunks the engine guards for a buffer [a, a + n): the whole pages between its edges, cut
// into at most 16 - (edges) READs of at least kChunk (host/engine_release.cpp).
std::uint64_t chunks_for(std::uintptr_t a, std::size_t n) {
  const std::uintptr_t pg = PageGuard::page_size();
  const std::uintptr_t lo = (a + pg - 1) / pg * pg;
  const std::uintptr_t hi = (a + n) / pg * pg;
  if (hi <= lo || hi - lo < kChunk) return 0;
  const std::uintptr_t edges = (a < lo ? 1u : 0u) + (hi < a + n ? 1u : 0u);
  const std::uintptr_t room = 16 - edges;
  const std::uintptr_t chunk = std::max<std::uintptr_t>(kChunk, ((hi - lo + room - 1) / room + pg - 1) / pg * pg);
  return (hi - lo + chunk - 1) / chunk;
}

struct Msg {
  std::size_t bytes;
  std::size_t round;
};
// What rank 1 sends, in order.
const Msg kMsgs[] = {
    {kMiB, 1},            // into a buffer 100 bytes into a page: both edges first
    {256u << 10, 2},      // page-aligned: no edges, released when its READs are posted
    {32u << 10, 3},       // fewer whole pages than a chunk: read whole, as without the mode
    {kMiB, 4},            // into a buffer of 600 KiB: truncated, released all the same
    {kMiB + 333, 5},      // received, then at once sent back to rank 1 from the same buffer
    {kMiB, 6},            // then received into that buffer again (its earlier data settled first)
    {2 * kMiB, 7},        // into malloc'd memory freed at once, the memory reused right after
    {kMiB, 8},            // three receives posted at once: their READs share the channel's room
    {kMiB, 9},
    {kMiB, 10},
    {kMiB, 11},           // with every page guard taken: declined, read whole, correct all the same
};

Status check_bytes(const std::byte* p, std::size_t n, std::size_t round, const char* what) {
  for (std::size_t k = 0; k < n; ++k) {
    if (p[k] != pattern(round, k)) return Status(Code::kDataLoss, std::string(what) + ": byte " + std::to_string(k) + " differs");
  }
  return Status::Ok();
}

Status sender(Engine& e) {
  for (const Msg& m : kMsgs) {
    std::vector<std::byte> out(m.bytes);
    for (std::size_t k = 0; k < m.bytes; ++k) out[k] = pattern(m.round, k);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(out.data(), m.bytes, 0, kTag, kCtx));
    AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
    if (m.round == 5) {  // rank 0 sends it straight back
      std::vector<std::byte> back(m.bytes);
      AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(back.data(), m.bytes, 0, kTag, kCtx));
      AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
      AUGUR_RETURN_IF_ERROR(check_bytes(back.data(), m.bytes, 5, "sent back from a released buffer"));
    }
  }
  return Status::Ok();
}

Status receiver(Engine& e) {
  const EngineCounters before = e.counters();
  std::uint64_t released = 0, chunks = 0;
  auto receive = [&](std::byte* buf, std::size_t cap, const Msg& m, bool expect_release) -> Result<RequestPtr> {
    const std::uint64_t early = e.counters().release_early;
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(buf, cap, 1, kTag, kCtx, /*releasable=*/true));
    Status st = e.wait(r, kWaitMs);
    if (!st.ok() && st.code() != Code::kTruncated) return st;
    CHECK(r->path == Path::kRendezvous, "round " + std::to_string(m.round) + ": path " + std::to_string(int(r->path)));
    CHECK(r->length == m.bytes, "round " + std::to_string(m.round) + ": length");
    const bool was_released = e.counters().release_early == early + 1;
    CHECK(was_released == expect_release, "round " + std::to_string(m.round) + (expect_release ? ": not released early" : ": released early"));
    if (expect_release) {
      ++released;
      chunks += chunks_for(reinterpret_cast<std::uintptr_t>(buf), std::min(cap, m.bytes));
    }
    return r;
  };
  // 1: a buffer 100 bytes into a page, read the moment the wait returns.
  Pages a(kMiB + 8192);
  std::memset(a.p, 0xcc, a.n);
  std::byte* buf = a.p + 100;
  AUGUR_RETURN_IF_ERROR(receive(buf, kMiB, kMsgs[0], true).status());
  AUGUR_RETURN_IF_ERROR(check_bytes(buf, kMiB, 1, "round 1"));
  CHECK(a.p[99] == std::byte{0xcc} && buf[kMiB] == std::byte{0xcc}, "round 1: written outside the buffer");
  // 2: page-aligned.
  AUGUR_RETURN_IF_ERROR(receive(a.p, 256u << 10, kMsgs[1], true).status());
  AUGUR_RETURN_IF_ERROR(check_bytes(a.p, 256u << 10, 2, "round 2"));
  // 3: too small to release.
  AUGUR_RETURN_IF_ERROR(receive(a.p, 32u << 10, kMsgs[2], false).status());
  AUGUR_RETURN_IF_ERROR(check_bytes(a.p, 32u << 10, 3, "round 3"));
  // 4: truncated: 600 KiB of the message, reported, nothing past the buffer.
  std::memset(a.p, 0xcc, a.n);
  constexpr std::size_t kCap = 600u << 10;
  AUGUR_ASSIGN_OR_RETURN(RequestPtr t, receive(a.p, kCap, kMsgs[3], true));
  CHECK(t->status.code() == Code::kTruncated, "round 4: truncation not reported: " + t->status.to_string());
  AUGUR_RETURN_IF_ERROR(check_bytes(a.p, kCap, 4, "round 4"));
  for (std::size_t k = kCap; k < a.n; ++k) CHECK(a.p[k] == std::byte{0xcc}, "round 4: written past the buffer");
  // 5: sent on from the buffer at once: the send waits for the data, never sends a hole.
  buf = a.p + 4000;
  AUGUR_RETURN_IF_ERROR(receive(buf, kMiB + 333, kMsgs[4], true).status());
  AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(buf, kMiB + 333, 1, kTag, kCtx));
  AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
  // 6: received into the same buffer again at once: the first message's data cannot land late
  // over the second's.
  AUGUR_RETURN_IF_ERROR(receive(buf, kMiB, kMsgs[5], true).status());
  AUGUR_RETURN_IF_ERROR(check_bytes(buf, kMiB, 6, "round 6"));
  // 7: freed at once, and the memory handed out again: whatever lands late lands before the new
  // owner's stores (they wait for it), never after.
  auto* heap = static_cast<std::byte*>(std::malloc(2 * kMiB));
  CHECK(heap != nullptr, "malloc");
  AUGUR_RETURN_IF_ERROR(receive(heap, 2 * kMiB, kMsgs[6], true).status());
  std::free(heap);
  auto* again = static_cast<std::byte*>(std::malloc(2 * kMiB));
  CHECK(again != nullptr, "malloc");
  std::memset(again, 0x3e, 2 * kMiB);
  AUGUR_RETURN_IF_ERROR(e.progress());
  for (std::size_t k = 0; k < 2 * kMiB; ++k) CHECK(again[k] == std::byte{0x3e}, "round 7: reused memory overwritten");
  std::free(again);
  // 8-10: posted together, so the later ones' READs wait for room behind the first's.
  std::vector<std::unique_ptr<Pages>> three;
  std::vector<RequestPtr> reqs;
  for (std::size_t i = 0; i < 3; ++i) {
    three.push_back(std::make_unique<Pages>(kMiB + 4096));
    std::byte* p = three.back()->p + 8;
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(p, kMiB, 1, kTag, kCtx, /*releasable=*/true));
    reqs.push_back(r);
    ++released;
    chunks += chunks_for(reinterpret_cast<std::uintptr_t>(p), kMiB);
  }
  for (std::size_t i = 0; i < 3; ++i) {
    AUGUR_RETURN_IF_ERROR(e.wait(reqs[i], kWaitMs));
    AUGUR_RETURN_IF_ERROR(check_bytes(three[i]->p + 8, kMiB, 8 + i, "rounds 8-10"));
  }
  // 11: no guard to be had (the process's table full): read whole, as without the mode.
  Result<PageGuard*> pg = PageGuard::instance();
  CHECK(pg.ok(), "page guard");
  Pages scratch(PageGuard::kMaxGuards * Pages::page());
  std::vector<PageGuard::Ticket> taken;
  for (std::size_t i = 0; i < PageGuard::kMaxGuards; ++i) {
    Result<PageGuard::Ticket> g = (*pg)->guard(scratch.p + i * Pages::page(), 1);
    if (!g.ok()) break;
    taken.push_back(*g);
  }
  Pages d(kMiB + 4096);
  AUGUR_RETURN_IF_ERROR(receive(d.p + 8, kMiB, kMsgs[10], false).status());
  for (const PageGuard::Ticket& g : taken) AUGUR_RETURN_IF_ERROR((*pg)->release(g).status());
  AUGUR_RETURN_IF_ERROR(check_bytes(d.p + 8, kMiB, 11, "round 11 (declined)"));
  const EngineCounters c = e.counters();
  CHECK(c.release_early - before.release_early == released, "release_early " + std::to_string(c.release_early));
  CHECK(c.release_chunks - before.release_chunks == chunks,
        "release_chunks " + std::to_string(c.release_chunks) + ", expected " + std::to_string(chunks));
  CHECK(c.release_declined - before.release_declined == 1, "release_declined " + std::to_string(c.release_declined));
  CHECK(c.rndv_msgs - before.rndv_msgs == std::size(kMsgs), "rndv_msgs " + std::to_string(c.rndv_msgs));
  CHECK(c.truncated - before.truncated == 1, "truncated");
  std::fprintf(stderr, "release_test: %llu released, %llu chunks, %llu touches waited, %llu calls settled first\n",
               static_cast<unsigned long long>(c.release_early), static_cast<unsigned long long>(c.release_chunks),
               static_cast<unsigned long long>(c.release_waits), static_cast<unsigned long long>(c.release_settles));
  return Status::Ok();
}

Status release_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank));
  AUGUR_RETURN_IF_ERROR(rank == 0 ? receiver(*j.e) : sender(*j.e));
  // Nothing is owed at the end: every chunk landed, every FIN went.
  for (int i = 0; i < 100000 && !j.e->quiet(); ++i) AUGUR_RETURN_IF_ERROR(j.e->progress());
  CHECK(j.e->quiet(), "not quiet at the end");
  return j.boot->fence();
}

TEST(Release, AReceiveReturnsBeforeItsDataAndEveryUseOfTheBufferSeesAllOfIt) { run_ranks(2, release_main); }

// Off (the default), nothing is released: the same receive completes when all of it is in.
Status off_main(std::uint16_t port, int rank) {
  Job j;
  AUGUR_ASSIGN_OR_RETURN(j.boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, std::chrono::seconds(120)));
  AUGUR_ASSIGN_OR_RETURN(j.e, Engine::create(*j.boot, EngineConfig{.slots = 16, .eager_limit = 8192, .steering = Steering::kOff}));
  Engine& e = *j.e;
  std::vector<std::byte> buf(kMiB);
  if (rank == 1) {
    for (std::size_t k = 0; k < kMiB; ++k) buf[k] = pattern(9, k);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(buf.data(), kMiB, 0, kTag, kCtx));
    AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
  } else {
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(buf.data(), kMiB, 1, kTag, kCtx, /*releasable=*/true));
    AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
    AUGUR_RETURN_IF_ERROR(check_bytes(buf.data(), kMiB, 9, "off"));
    CHECK(!e.early_release() && e.counters().release_early == 0 && e.counters().release_chunks == 0, "released with the mode off");
  }
  return j.boot->fence();
}

TEST(Release, OffByDefault) { run_ranks(2, off_main); }

// Early release of sends (with an assist thread at the sender): a blocking send above the eager
// limit completes at once; the sender stores into its buffer right after, and those stores wait
// until the receiver has read it. The receiver posts each receive 100 ms late, so the stores come
// long before the READ could: it must still find the bytes as they were at the send.
struct SendRound {
  std::size_t bytes;
  std::size_t offset;  // into a page-aligned buffer
  bool released;
  const char* what;
};
const SendRound kSendRounds[] = {
    {kMiB, 100, true, "both edges, overwritten at once"},
    {kMiB, 100, true, "the same buffer sent again"},
    {256u << 10, 0, true, "page-aligned"},
    {32u << 10, 0, false, "fewer whole pages than a chunk"},
    {kMiB, 8, false, "synchronous"},
    {kMiB, 4000, true, "received into at once"},
    {2 * kMiB, 16, true, "freed at once, the memory reused"},
    {kMiB, 8, false, "not marked releasable (a nonblocking send)"},
};
constexpr std::size_t kBack = 5;  // the round after which the receiver sends into the sender's buffer

Status release_sender(Engine& e) {
  CHECK(e.early_release_sends() && !e.early_release(), "with an assist thread only sends are released");
  const EngineCounters before = e.counters();
  std::uint64_t expect = 0;
  Pages a(2 * kMiB + 8192);
  for (std::size_t i = 0; i < std::size(kSendRounds); ++i) {
    const SendRound& r = kSendRounds[i];
    std::byte* buf = a.p + r.offset;
    std::byte* heap = nullptr;
    if (i == 6) buf = heap = static_cast<std::byte*>(std::malloc(r.bytes));
    CHECK(buf != nullptr, "malloc");
    if (i != 1) {
      for (std::size_t k = 0; k < r.bytes; ++k) buf[k] = pattern(20 + i, k);
    }
    const std::uint64_t sends = e.counters().release_sends;
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(buf, r.bytes, 0, kTag, kCtx, /*synchronous=*/i == 4, /*releasable=*/i != 7));
    AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
    CHECK(s->path == Path::kRendezvous, std::string(r.what) + ": path " + std::to_string(int(s->path)));
    CHECK((e.counters().release_sends == sends + 1) == r.released, std::string(r.what) + (r.released ? ": not released" : ": released"));
    if (r.released) ++expect;
    if (i == 0) {  // round 1's bytes overwritten with round 2's at once: each store waits for the READ
      for (std::size_t k = 0; k < r.bytes; ++k) buf[k] = pattern(21, k);
    } else if (i == kBack) {  // a receive into the buffer at once: it waits for the READ first
      AUGUR_ASSIGN_OR_RETURN(RequestPtr back, e.irecv(buf, r.bytes, 0, kTag, kCtx));
      AUGUR_RETURN_IF_ERROR(e.wait(back, kWaitMs));
      AUGUR_RETURN_IF_ERROR(check_bytes(buf, r.bytes, 40, "received into a released send's buffer"));
    } else if (heap != nullptr) {  // freed, handed out again, written at once
      std::free(heap);
      auto* again = static_cast<std::byte*>(std::malloc(r.bytes));
      CHECK(again != nullptr, "malloc");
      std::memset(again, 0x3e, r.bytes);
      for (std::size_t k = 0; k < r.bytes; ++k) CHECK(again[k] == std::byte{0x3e}, "reused memory overwritten");
      std::free(again);
    }
  }
  const EngineCounters c = e.counters();
  CHECK(c.release_sends - before.release_sends == expect, "release_sends " + std::to_string(c.release_sends));
  CHECK(c.release_sends_declined == before.release_sends_declined, "release_sends_declined");
  CHECK(c.release_early == 0 && c.release_chunks == 0, "a receive was released with an assist thread");
  std::fprintf(stderr, "release_test: %llu sends released, %llu stores waited, %llu calls settled first\n",
               static_cast<unsigned long long>(c.release_sends), static_cast<unsigned long long>(c.release_waits),
               static_cast<unsigned long long>(c.release_settles));
  CHECK(c.release_waits > before.release_waits, "no store waited for its READ");
  return Status::Ok();
}

Status release_receiver(Engine& e) {
  std::vector<std::byte> in(2 * kMiB);
  for (std::size_t i = 0; i < std::size(kSendRounds); ++i) {
    const SendRound& r = kSendRounds[i];
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the sender's stores come first
    AUGUR_ASSIGN_OR_RETURN(RequestPtr q, e.irecv(in.data(), r.bytes, 1, kTag, kCtx));
    AUGUR_RETURN_IF_ERROR(e.wait(q, kWaitMs));
    AUGUR_RETURN_IF_ERROR(check_bytes(in.data(), r.bytes, 20 + i, r.what));
    if (i == kBack) {
      for (std::size_t k = 0; k < r.bytes; ++k) in[k] = pattern(40, k);
      AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(in.data(), r.bytes, 1, kTag, kCtx));
      AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
    }
  }
  return Status::Ok();
}

Status release_sends_main(std::uint16_t port, int rank) {
  Job j;
  AUGUR_ASSIGN_OR_RETURN(j.boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, std::chrono::seconds(120)));
  EngineConfig cfg{.slots = 16, .eager_limit = 8192, .steering = Steering::kOff};
  cfg.early = EngineConfig::Early::kOff;
  cfg.early_release = rank == 1;
  cfg.release_chunk = kChunk;
  if (rank == 1) cfg.assist = EngineConfig::Assist::kOn;
  AUGUR_ASSIGN_OR_RETURN(j.e, Engine::create(*j.boot, cfg));
  AUGUR_RETURN_IF_ERROR(rank == 0 ? release_receiver(*j.e) : release_sender(*j.e));
  for (int i = 0; i < 100000 && !j.e->quiet(); ++i) AUGUR_RETURN_IF_ERROR(j.e->progress());
  CHECK(j.e->quiet(), "not quiet at the end");
  return j.boot->fence();
}

TEST(Release, ABlockingSendReturnsBeforeItsReadAndStoresIntoItWait) { run_ranks(2, release_sends_main); }

}  // namespace
}  // namespace augur::host
