// Early placement (AUGUR_EARLY=landing, docs/early.md) between two ranks on the device.
//
// The sender runs ahead: in each round it sends the round's large message and then a "go" on
// the same connection, so that when the receiver has the go, the message has arrived (RC keeps
// the order) and its receive is posted only then. After each receive the receiver sends an ack:
// its landing credit for the next round was written before the ack, so the sender, holding the
// ack, holds the credit. Every case checks the data, the guard bytes after the buffer, that the
// buffer was not touched before its receive was posted, the path and the counters.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
#include "augur/host/landing.h"
#include "augur/nic/mem_release.h"
#include "ranks.h"
#include "run_ahead.h"

namespace augur::host {
namespace {

using namespace std::chrono_literals;
using testing::run_ranks;
using namespace testing;  // Job, Pages, signal, await_signal (run_ahead.h)

constexpr std::uint32_t kEager = 4096;
constexpr std::uint32_t kCtx = 7;
constexpr std::int32_t kTag = 5;
constexpr std::size_t kGuard = 64;
constexpr std::size_t kRounds = 24;

std::byte pattern(std::size_t round, std::size_t k) { return static_cast<std::byte>((round * 37 + k * 11 + 1) & 0xff); }

Result<Job> start(std::uint16_t port, int rank, std::uint32_t remap_min) {
  Job j;
  AUGUR_ASSIGN_OR_RETURN(j.boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  EngineConfig cfg{.slots = 16, .eager_limit = kEager, .steering = Steering::kPredicted, .credit_slots = 8};
  cfg.early = EngineConfig::Early::kLanding;
  cfg.remap_min = remap_min;
  AUGUR_ASSIGN_OR_RETURN(j.e, Engine::create(*j.boot, cfg));
  return j;
}

struct Case {
  const char* name;
  std::size_t bytes;           // each message
  std::size_t offset;          // of the receive buffer in its first page, even rounds
  std::size_t odd_offset;      // and odd rounds (different: the zone's offset is mispredicted)
  std::size_t recv_extra = 0;  // receive buffer longer than the message by this
};

// The receiver's side of one case: every message after the first few arrives before its receive
// and must come through a landing zone; remapped when the offsets line up and a whole page fits.
Status receive_late(Engine& e, const Case& c, bool expect_remap, Pages* given = nullptr) {
  const std::size_t page = LandingZone::page_size();
  const std::size_t cap = c.bytes + c.recv_extra;
  std::optional<Pages> own;
  if (given == nullptr) own.emplace(((std::max(c.offset, c.odd_offset) + cap + kGuard) / page + 1) * page);
  Pages& mem = given != nullptr ? *given : *own;
  const EngineCounters before = e.counters();
  std::size_t landed = 0, remapped_rounds = 0, remapped_bytes = 0;
  for (std::size_t round = 0; round < kRounds; ++round) {
    std::byte* buf = mem.p + (round % 2 == 0 ? c.offset : c.odd_offset);
    std::memset(mem.p, 0xcc, mem.n);
    AUGUR_RETURN_IF_ERROR(await_signal(e, 1));  // the round's message is here
    // MPI: nothing may touch the buffer before its receive is posted.
    for (std::size_t k = 0; k < mem.n; ++k) CHECK(mem.p[k] == std::byte{0xcc}, "buffer written before its receive");
    const std::uint64_t remapped_before = e.counters().landing_remapped;
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(buf, cap, 1, kTag, kCtx));
    AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
    const std::string what = std::string(c.name) + " round " + std::to_string(round);
    CHECK(r->length == c.bytes && r->source == 1 && r->tag == kTag, what + ": envelope");
    for (std::size_t k = 0; k < c.bytes; ++k) CHECK(buf[k] == pattern(round, k), what + ": byte " + std::to_string(k));
    for (std::byte* g = buf + c.bytes; g < mem.p + mem.n; ++g) CHECK(*g == std::byte{0xcc}, what + ": written past the message");
    for (std::byte* g = mem.p; g < buf; ++g) CHECK(*g == std::byte{0xcc}, what + ": written before the buffer");
    if (r->path == Path::kLanding) ++landed;
    if (e.counters().landing_remapped > remapped_before) {
      ++remapped_rounds;
      const auto b = reinterpret_cast<std::uintptr_t>(buf);
      remapped_bytes += (b + c.bytes) / page * page - (b + page - 1) / page * page;  // its whole pages
    }
    if (round >= 3) CHECK(r->path == Path::kLanding, what + ": not landed early, path " + std::to_string(int(r->path)) + " " + e.stats_line());
    AUGUR_RETURN_IF_ERROR(signal(e, 1));  // the next round's landing credit is at the sender
  }
  const EngineCounters a = e.counters();
  CHECK(a.landing_msgs - before.landing_msgs == landed, "landing_msgs counter: " + e.stats_line());
  CHECK(a.landing_early - before.landing_early == landed, "every landed message was early: " + e.stats_line());
  CHECK(a.unexpected_msgs - before.unexpected_msgs == kRounds, "unexpected_msgs: " + e.stats_line());
  CHECK(remapped_rounds == (expect_remap ? landed : 0),
        std::string(c.name) + ": remapped " + std::to_string(remapped_rounds) + " of " + std::to_string(landed) + " " + e.stats_line());
  CHECK(a.pages_remapped - before.pages_remapped == remapped_bytes / page, "pages_remapped: " + e.stats_line());
  // Copied: the edges of remapped messages, the whole of the others.
  const std::uint64_t copied = a.bytes_copied - before.bytes_copied;
  CHECK(copied == landed * c.bytes - remapped_bytes, "bytes_copied " + std::to_string(copied) + ": " + e.stats_line());
  return Status::Ok();
}

Status send_ahead(Engine& e, const Case& c) {
  std::vector<std::byte> out(c.bytes);
  const EngineCounters before = e.counters();
  for (std::size_t round = 0; round < kRounds; ++round) {
    for (std::size_t k = 0; k < c.bytes; ++k) out[k] = pattern(round, k);
    // The go follows the message (an RTS completes only once received: wait for it last).
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(out.data(), c.bytes, 0, kTag, kCtx));
    AUGUR_RETURN_IF_ERROR(signal(e, 0));
    AUGUR_RETURN_IF_ERROR(await_signal(e, 0));
    AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
  }
  CHECK(e.counters().landing_sends - before.landing_sends >= kRounds - 3, "sender: landing sends " + e.stats_line());
  return Status::Ok();
}

Status late_main(std::uint16_t port, int rank, const Case& c, std::uint32_t remap_min, bool expect_remap) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, remap_min));
  Engine& e = *j.e;
  AUGUR_RETURN_IF_ERROR(rank == 0 ? receive_late(e, c, expect_remap) : send_ahead(e, c));
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Early, LateReceivesGetTheirWholePagesByRemapAndTheEdgesByCopy) {
  // 5 pages and a bit, from 100 bytes into a page: 4 whole pages remapped, the edges copied.
  static const Case c{"remap", 5 * 4096 + 300, 100, 100};
  run_ranks(2, [](std::uint16_t port, int rank) { return late_main(port, rank, c, 4096, true); });
}

TEST(Early, TwoBuffersInTurnArePredictedAndEachZoneIsAimedAtItsOwn) {
  // Odd rounds receive 8 bytes further on (3 whole pages in even rounds, 2 in odd ones): the
  // predictor learns the alternation, so each round's zone sits at its buffer's offset.
  static const Case c{"alternating", 3 * 4096, 0, 8};
  run_ranks(2, [](std::uint16_t port, int rank) { return late_main(port, rank, c, 4096, true); });
}

TEST(Early, RemapMinZeroAlwaysCopies) {
  static const Case c{"copy", 6 * 4096, 0, 0, 1000};
  run_ranks(2, [](std::uint16_t port, int rank) { return late_main(port, rank, c, 0, false); });
}

// A landed message longer than the receive is truncated like any other: MPI_ERR_TRUNCATE, the
// buffer filled and not one byte past it. A wildcard receive posted after a landed message takes
// it (arrival order), and a receive posted before the message arrives gets it on arrival: through
// the zone, or through the receive's own credit when that reached the sender first (preferred:
// no copy at all).
Status mixed_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, 4096));
  Engine& e = *j.e;
  constexpr std::size_t kBytes = 3 * 4096;
  const Case warm{"warm-up", kBytes, 0, 0};
  // The same buffer throughout: the receive calls below are the ones the predictor has seen.
  Pages mem(kBytes + 4096);
  AUGUR_RETURN_IF_ERROR(rank == 0 ? receive_late(e, warm, true, &mem) : send_ahead(e, warm));  // zones are staged now
  if (rank == 1) {
    std::vector<std::byte> out(kBytes);
    for (std::size_t round = 100; round < 103; ++round) {
      for (std::size_t k = 0; k < kBytes; ++k) out[k] = pattern(round, k);
      AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(out.data(), kBytes, 0, kTag, kCtx));
      AUGUR_RETURN_IF_ERROR(signal(e, 0));
      AUGUR_RETURN_IF_ERROR(await_signal(e, 0));
      AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
    }
    return j.boot->fence();
  }
  // Round 100: the receive is posted first (the call predicted); the message comes through the
  // zone, matched on arrival, or through the receive's credit.
  const std::uint64_t early_before = e.counters().landing_early;
  std::memset(mem.p, 0xcc, mem.n);
  AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(mem.p, kBytes, 1, kTag, kCtx));
  AUGUR_RETURN_IF_ERROR(await_signal(e, 1));
  AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
  CHECK((r->path == Path::kLanding || r->path == Path::kDirect) && r->length == kBytes,
        "posted receive: path " + std::to_string(int(r->path)));
  for (std::size_t k = 0; k < kBytes; ++k) CHECK(mem.p[k] == pattern(100, k), "posted receive data");
  CHECK(e.counters().landing_early == early_before, "a message matched on arrival counted as early");
  AUGUR_RETURN_IF_ERROR(signal(e, 1));
  // Round 101: truncated into a receive 1000 bytes short (its message staged after the call above).
  std::memset(mem.p, 0xcc, mem.n);
  AUGUR_RETURN_IF_ERROR(await_signal(e, 1));
  AUGUR_ASSIGN_OR_RETURN(r, e.irecv(mem.p, kBytes - 1000, 1, kTag, kCtx));
  Status st = e.wait(r, kWaitMs);
  CHECK(st.code() == Code::kTruncated && r->length == kBytes && r->path == Path::kLanding, "truncation: " + st.to_string());
  for (std::size_t k = 0; k < kBytes - 1000; ++k) CHECK(mem.p[k] == pattern(101, k), "truncated data");
  for (std::size_t k = kBytes - 1000; k < mem.n; ++k) CHECK(mem.p[k] == std::byte{0xcc}, "written past a truncated receive");
  AUGUR_RETURN_IF_ERROR(signal(e, 1));
  // Round 102: a wildcard receive takes whatever came first, landed or not: the data, intact.
  AUGUR_RETURN_IF_ERROR(await_signal(e, 1));
  AUGUR_ASSIGN_OR_RETURN(r, e.irecv(mem.p, mem.n, kAnySource, kAnyTag, kCtx));
  AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
  CHECK(r->source == 1 && r->tag == kTag && r->length == kBytes, "wildcard envelope");
  for (std::size_t k = 0; k < kBytes; ++k) CHECK(mem.p[k] == pattern(102, k), "wildcard data");
  std::printf("wildcard receive of a message staged after a truncated call: path %d\n", int(r->path));
  AUGUR_RETURN_IF_ERROR(signal(e, 1));
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Early, TruncationWildcardsAndPostedReceivesThroughAZone) { run_ranks(2, mixed_main); }

// A halo exchange: each rank posts both receives from its neighbour (tags 1 and 2), then sends
// both, then waits for all four. Each posted receive takes the zone its message lands in, and
// the prediction stages the next iteration's zones behind them: none of the zones a posted
// receive waits on is withdrawn (at stop 44 about one zone in two was, and its message went by
// RTS), so after the warm-up every message comes through a zone, none by rendezvous.
Status halo_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, 0));
  Engine& e = *j.e;
  // The predictor settles within 4-6 iterations here (a zone staged on the way may be withdrawn).
  constexpr std::size_t kBytes = 3 * 4096, kIters = 28, kWarmIters = 8;
  const int peer = 1 - rank;
  std::vector<std::byte> left(kBytes), right(kBytes), out1(kBytes), out2(kBytes);
  EngineCounters before{};
  std::uint64_t landed = 0, by_rts = 0;  // receives of the whole run, by path
  for (std::size_t it = 0; it < kIters; ++it) {
    if (it == kWarmIters) before = e.counters();
    for (std::size_t k = 0; k < kBytes; ++k) {
      out1[k] = pattern(it * 2 + static_cast<std::size_t>(rank), k);
      out2[k] = pattern(it * 2 + static_cast<std::size_t>(rank) + 50, k);
    }
    std::memset(left.data(), 0xcc, kBytes);
    std::memset(right.data(), 0xcc, kBytes);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r1, e.irecv(left.data(), kBytes, peer, 1, kCtx));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r2, e.irecv(right.data(), kBytes, peer, 2, kCtx));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s1, e.isend(out1.data(), kBytes, peer, 1, kCtx));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s2, e.isend(out2.data(), kBytes, peer, 2, kCtx));
    for (const RequestPtr& q : {r1, r2, s1, s2}) AUGUR_RETURN_IF_ERROR(e.wait(q, kWaitMs));
    const std::string what = "iteration " + std::to_string(it);
    for (std::size_t k = 0; k < kBytes; ++k) {
      CHECK(left[k] == pattern(it * 2 + static_cast<std::size_t>(peer), k), what + ": tag 1 byte " + std::to_string(k));
      CHECK(right[k] == pattern(it * 2 + static_cast<std::size_t>(peer) + 50, k), what + ": tag 2 byte " + std::to_string(k));
    }
    for (const RequestPtr& q : {r1, r2}) {
      landed += q->path == Path::kLanding ? 1u : 0u;
      by_rts += q->path == Path::kRendezvous ? 1u : 0u;
    }
    if (it >= kWarmIters) {
      CHECK(e.counters().landing_revoked == before.landing_revoked, what + ": a zone was withdrawn " + e.stats_line());
      CHECK(r1->path == Path::kLanding && r2->path == Path::kLanding,
            what + ": paths " + std::to_string(int(r1->path)) + "/" + std::to_string(int(r2->path)) + " " + e.stats_line());
    }
  }
  const EngineCounters a = e.counters();
  const std::uint64_t n = 2 * (kIters - kWarmIters);
  // Arrivals are counted when they come, and the neighbour may be an iteration ahead: the
  // message counters are checked over the whole run, against the paths of the receives.
  CHECK(landed + by_rts == 2 * kIters && a.landing_msgs == landed && a.rndv_msgs == by_rts,
        "landing_msgs, rndv_msgs: " + std::to_string(landed) + " landed, " + std::to_string(by_rts) + " by RTS " + e.stats_line());
  // Zones are staged and withdrawn at this rank's own posts, sends counted at its own calls.
  CHECK(a.landing_revoked == before.landing_revoked, "a zone was withdrawn: " + e.stats_line());
  CHECK(a.landing_sends - before.landing_sends == n, "sends into zones: " + e.stats_line());
  CHECK(a.bytes_copied - before.bytes_copied == n * kBytes, "bytes_copied: " + e.stats_line());
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Early, HaloReceivesPostedFirstKeepTheirZonesAndNothingGoesByRendezvous) { run_ranks(2, halo_main); }

// The zone itself: whole pages move only when the buffer sits at the offset the zone was aimed
// at and at least remap_min bytes of whole pages would move; what moves is the data, in place;
// the buffer's other bytes are untouched; a remapped zone is spent, a copied one reusable; and
// the remap is reported to the memory-release watchers (no registration cache keeps the
// buffer's old pages).
TEST(Early, ALandingZoneRemapsOnlyAlignedWholePagesAndReportsTheMove) {
  const char* dev = std::getenv("AUGUR_DEVICE");
  Result<nic::Context> ctx = nic::Context::open(dev != nullptr ? dev : "");
  ASSERT_TRUE(ctx.ok()) << ctx.status().to_string();
  Result<nic::ProtectionDomain> pd = nic::ProtectionDomain::create(*ctx);
  ASSERT_TRUE(pd.ok()) << pd.status().to_string();
  const std::size_t page = LandingZone::page_size();
  struct Try {
    std::size_t aim, at, n, remap_min;
    std::size_t want_remapped;
  };
  const Try tries[] = {
      {100, 100, 5 * page + 300, page, 4 * page},  // aligned: 4 whole pages move
      {100, 108, 5 * page + 300, page, 0},         // another offset: copied
      {0, 0, 3 * page, 4 * page, 0},               // fewer whole pages than remap_min: copied
      {0, 0, 3 * page, 0, 0},                      // remap_min 0: never
      {0, 0, page - 1, 1, 0},                      // no whole page
      {0, 0, 2 * page, 1, 2 * page},
  };
  for (const Try& t : tries) {
    const std::string what = "aim " + std::to_string(t.aim) + " at " + std::to_string(t.at) + " n " + std::to_string(t.n);
    Result<std::unique_ptr<LandingZone>> z = LandingZone::create(*pd, t.n);
    ASSERT_TRUE(z.ok()) << z.status().to_string();
    (*z)->aim_at(t.aim);
    for (std::size_t k = 0; k < t.n; ++k) (*z)->data()[k] = pattern(9, k);
    Pages mem(t.n + 3 * page);
    std::memset(mem.p, 0xcc, mem.n);
    std::byte* buf = mem.p + t.at;
    nic::ReleaseWatch watch;
    watch.watch(reinterpret_cast<std::uintptr_t>(mem.p), reinterpret_cast<std::uintptr_t>(mem.p + mem.n));
    const LandingZone::Delivered d = (*z)->deliver(buf, t.n, t.remap_min);
    EXPECT_EQ(t.want_remapped, d.remapped) << what;
    EXPECT_EQ(t.n - t.want_remapped, d.copied) << what;
    EXPECT_EQ(t.want_remapped == 0, (*z)->reusable()) << what;
    for (std::size_t k = 0; k < t.n; ++k) ASSERT_EQ(pattern(9, k), buf[k]) << what << ": byte " << k;
    for (std::byte* g = mem.p; g < buf; ++g) ASSERT_EQ(std::byte{0xcc}, *g) << what;
    for (std::byte* g = buf + t.n; g < mem.p + mem.n; ++g) ASSERT_EQ(std::byte{0xcc}, *g) << what;
    const nic::ReleaseWatch::Released r = watch.take();
    bool reported = false;
    for (std::size_t i = 0; i < r.count; ++i) {
      reported |= r.ranges[i].lo <= reinterpret_cast<std::uintptr_t>(buf) + page &&
                  r.ranges[i].hi >= reinterpret_cast<std::uintptr_t>(buf) + t.want_remapped;
    }
    EXPECT_EQ(t.want_remapped > 0, reported || r.all) << what;
  }
}

}  // namespace
}  // namespace augur::host
