// Direct placement and prediction-driven steering between two ranks on the device.
//
// To make the path deterministic, the receiver posts its receive and then sends the sender a
// "go" message on the same connection: RC delivers the credit write before the go, so a sender
// that has the go also has the credit, and its next matching message must be placed directly.
// Each case checks the data, the guard bytes after the buffer, the path and the counters; the
// ordering cases are the ones where using a credit would break MPI matching.
#include <sys/mman.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
#include "augur/nic/mem_release.h"
#include "ranks.h"

namespace augur::host {
namespace {

using namespace std::chrono_literals;
using testing::run_ranks;

constexpr int kWaitMs = 120'000;
constexpr std::uint32_t kEager = 4096;
constexpr std::uint32_t kCtx = 7;
constexpr std::uint32_t kGoCtx = 99;  // control messages of the test itself
constexpr std::size_t kGuard = 64;

std::byte pattern(std::size_t round, std::size_t k) { return static_cast<std::byte>((round * 37 + k * 11 + 1) & 0xff); }

struct Job {
  std::unique_ptr<TcpBootstrap> boot;
  std::unique_ptr<Engine> e;
};

// direct_min 1: these tests check the mechanism at every size, also below the default minimum.
Result<Job> start(std::uint16_t port, int rank, Steering steering, std::uint32_t direct_min = 1,
                  std::uint32_t direct_max = proto::kMaxDirectBytes) {
  Job j;
  AUGUR_ASSIGN_OR_RETURN(j.boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  // Connected at create: these tests count credits from the first receive, which a connection
  // made on first use could not carry yet (connect_test.cpp covers that path).
  AUGUR_ASSIGN_OR_RETURN(j.e, Engine::create(*j.boot, {.slots = 16, .eager_limit = kEager, .steering = steering,
                                                        .credit_slots = 8, .direct_min = direct_min,
                                                        .direct_max = direct_max, .connect_all = true}));
  return j;
}

Status go(Engine& e, int to) {
  AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.isend(nullptr, 0, to, 0, kGoCtx));
  return e.wait(r, kWaitMs);
}

Status await_go(Engine& e, int from) {
  AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(nullptr, 0, from, 0, kGoCtx));
  return e.wait(r, kWaitMs);
}

Status send_pattern(Engine& e, std::size_t n, std::int32_t tag, std::size_t round) {
  std::vector<std::byte> out(n);
  for (std::size_t k = 0; k < n; ++k) out[k] = pattern(round, k);
  AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(out.data(), n, 0, tag, kCtx));
  return e.wait(s, kWaitMs);
}

Status check_pattern(const std::vector<std::byte>& buf, std::size_t n, std::size_t round, const char* what) {
  for (std::size_t k = 0; k < buf.size(); ++k) {
    const std::byte want = k < n ? pattern(round, k) : std::byte{0xcc};
    CHECK(buf[k] == want, std::string(what) + ": byte " + std::to_string(k) + " of " + std::to_string(n));
  }
  return Status::Ok();
}

// Sizes from one byte to the eager limit land straight in the receive buffer.
Status direct_sizes(Engine& e, Steering steering) {
  const std::vector<std::size_t> sizes = {1, 7, 64, 1000, kEager - 1, kEager};
  if (e.rank() == 1) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      AUGUR_RETURN_IF_ERROR(await_go(e, 0));
      AUGUR_RETURN_IF_ERROR(send_pattern(e, sizes[i], 3, i));
    }
    CHECK(e.counters().direct_sends == sizes.size(), "sender: direct sends " + std::to_string(e.counters().direct_sends));
    return Status::Ok();
  }
  const EngineCounters before = e.counters();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::vector<std::byte> buf(sizes[i] + kGuard, std::byte{0xcc});
    // Misaligned on purpose for odd sizes: the buffer starts one byte into the allocation.
    std::vector<std::byte> shifted(sizes[i] + kGuard + 1, std::byte{0xcc});
    const bool misalign = (sizes[i] & 1) != 0;
    std::byte* p = misalign ? shifted.data() + 1 : buf.data();
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(p, sizes[i], 1, 3, kCtx));
    AUGUR_RETURN_IF_ERROR(go(e, 1));
    AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
    CHECK(r->path == Path::kDirect, "size " + std::to_string(sizes[i]) + " was not placed directly");
    CHECK(r->source == 1 && r->tag == 3 && r->length == sizes[i], "envelope of a direct message");
    if (misalign) buf.assign(shifted.begin() + 1, shifted.end());
    AUGUR_RETURN_IF_ERROR(check_pattern(buf, sizes[i], i, "direct"));
  }
  const EngineCounters& c = e.counters();
  CHECK(c.direct_msgs - before.direct_msgs == sizes.size(), "direct_msgs counter");
  CHECK(c.credits_used - before.credits_used == sizes.size(), "credits_used counter");
  CHECK(c.bytes_copied == before.bytes_copied, "a direct message was copied");
  if (steering == Steering::kPosted) CHECK(c.credits_issued - before.credits_issued == sizes.size(), "credits_issued counter");
  return Status::Ok();
}

// A message longer than the receive: the credit cannot take it; it is truncated through a
// bounce slot, reported, and nothing is written past the buffer.
Status too_long(Engine& e) {
  if (e.rank() == 1) {
    AUGUR_RETURN_IF_ERROR(await_go(e, 0));
    return send_pattern(e, 200, 4, 50);
  }
  std::vector<std::byte> buf(100 + kGuard, std::byte{0xcc});
  const EngineCounters before = e.counters();
  AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(buf.data(), 100, 1, 4, kCtx));
  AUGUR_RETURN_IF_ERROR(go(e, 1));
  Status st = e.wait(r, kWaitMs);
  CHECK(st.code() == Code::kTruncated && r->length == 200 && r->path == Path::kBounce, "truncation: " + st.to_string());
  AUGUR_RETURN_IF_ERROR(check_pattern(buf, 100, 50, "truncated"));
  CHECK(e.counters().credits_revoked == before.credits_revoked + 1, "the unused credit is not counted revoked");
  return Status::Ok();
}

// An earlier ANY_SOURCE receive may take the message: the later receive gets no credit, and
// the messages complete the receives in posting order.
Status earlier_wildcard(Engine& e) {
  if (e.rank() == 1) {
    AUGUR_RETURN_IF_ERROR(await_go(e, 0));
    AUGUR_RETURN_IF_ERROR(send_pattern(e, 300, 5, 60));
    return send_pattern(e, 300, 5, 61);
  }
  std::vector<std::byte> a(300 + kGuard, std::byte{0xcc}), b(300 + kGuard, std::byte{0xcc});
  AUGUR_ASSIGN_OR_RETURN(RequestPtr ra, e.irecv(a.data(), 300, kAnySource, 5, kCtx));
  AUGUR_ASSIGN_OR_RETURN(RequestPtr rb, e.irecv(b.data(), 300, 1, 5, kCtx));
  CHECK(ra->credit_slot < 0 && rb->credit_slot < 0, "a wildcard receive, or one behind it, was credited");
  AUGUR_RETURN_IF_ERROR(go(e, 1));
  AUGUR_RETURN_IF_ERROR(e.wait(ra, kWaitMs));
  AUGUR_RETURN_IF_ERROR(e.wait(rb, kWaitMs));
  CHECK(ra->path == Path::kBounce && rb->path == Path::kBounce, "paths behind a wildcard");
  AUGUR_RETURN_IF_ERROR(check_pattern(a, 300, 60, "wildcard receive"));
  return check_pattern(b, 300, 61, "receive after the wildcard");
}

// The sender sent a matching message before it saw the credit: that message takes the
// receive (by bounce), and the credit is void, so the next message must not be written into
// the first receive's buffer.
Status earlier_bounced_message(Engine& e, Bootstrap& boot) {
  if (e.rank() == 1) {
    AUGUR_RETURN_IF_ERROR(send_pattern(e, 500, 6, 70));  // before the receive exists
    AUGUR_RETURN_IF_ERROR(boot.fence());
    AUGUR_RETURN_IF_ERROR(await_go(e, 0));
    return send_pattern(e, 500, 6, 71);
  }
  // The first message may sit unprocessed in the CQ: irecv does not poll, so the receive is
  // posted (and credited) before the engine has seen it.
  AUGUR_RETURN_IF_ERROR(boot.fence());
  std::vector<std::byte> a(500 + kGuard, std::byte{0xcc}), b(500 + kGuard, std::byte{0xcc});
  AUGUR_ASSIGN_OR_RETURN(RequestPtr ra, e.irecv(a.data(), 500, 1, 6, kCtx));
  AUGUR_ASSIGN_OR_RETURN(RequestPtr rb, e.irecv(b.data(), 500, 1, 6, kCtx));
  CHECK(ra->credit_slot >= 0 && rb->credit_slot < 0, "credits: only the first of two receives for one envelope");
  AUGUR_RETURN_IF_ERROR(go(e, 1));
  AUGUR_RETURN_IF_ERROR(e.wait(ra, kWaitMs));
  AUGUR_RETURN_IF_ERROR(e.wait(rb, kWaitMs));
  AUGUR_RETURN_IF_ERROR(check_pattern(a, 500, 70, "first receive"));
  AUGUR_RETURN_IF_ERROR(check_pattern(b, 500, 71, "second receive"));
  CHECK(ra->path != Path::kDirect, "the early message cannot have come through the credit");
  return Status::Ok();
}

// Cancelling a credited receive: the sender gives the credit back, the receive completes as
// cancelled, and the next message goes to the next receive, intact.
Status cancel_credited(Engine& e, Bootstrap& boot) {
  if (e.rank() == 1) {
    AUGUR_RETURN_IF_ERROR(await_go(e, 0));  // has the credit
    AUGUR_RETURN_IF_ERROR(boot.fence());    // ... and the receiver has cancelled
    AUGUR_RETURN_IF_ERROR(await_go(e, 0));
    return send_pattern(e, 800, 8, 80);
  }
  std::vector<std::byte> a(800 + kGuard, std::byte{0xcc}), b(800 + kGuard, std::byte{0xcc});
  AUGUR_ASSIGN_OR_RETURN(RequestPtr ra, e.irecv(a.data(), 800, 1, 8, kCtx));
  CHECK(ra->credit_slot >= 0, "the receive was not credited");
  AUGUR_RETURN_IF_ERROR(go(e, 1));
  CHECK(e.cancel(ra), "cancel refused");
  AUGUR_RETURN_IF_ERROR(boot.fence());  // the sender answers the revoke while it waits for its go
  AUGUR_RETURN_IF_ERROR(e.wait(ra, kWaitMs));
  CHECK(ra->cancelled, "receive not cancelled");
  AUGUR_ASSIGN_OR_RETURN(RequestPtr rb, e.irecv(b.data(), 800, 1, 8, kCtx));
  AUGUR_RETURN_IF_ERROR(go(e, 1));
  AUGUR_RETURN_IF_ERROR(e.wait(rb, kWaitMs));
  AUGUR_RETURN_IF_ERROR(check_pattern(b, 800, 80, "receive after a cancel"));
  CHECK(std::all_of(a.begin(), a.end(), [](std::byte x) { return x == std::byte{0xcc}; }), "cancelled buffer written");
  return Status::Ok();
}

Status steering_main(std::uint16_t port, int rank, Steering steering) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, steering));
  Engine& e = *j.e;
  AUGUR_RETURN_IF_ERROR(direct_sizes(e, steering).context("direct sizes"));
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  AUGUR_RETURN_IF_ERROR(too_long(e).context("too long"));
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  AUGUR_RETURN_IF_ERROR(earlier_wildcard(e).context("earlier wildcard"));
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  AUGUR_RETURN_IF_ERROR(earlier_bounced_message(e, *j.boot).context("earlier bounced message"));
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  AUGUR_RETURN_IF_ERROR(cancel_credited(e, *j.boot).context("cancel"));
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  const EngineCounters& c = e.counters();
  CHECK(c.credits_used == c.direct_msgs, "credits used differ from direct messages");
  if (steering == Steering::kPosted) CHECK(c.credits_issued == c.credits_used + c.credits_revoked, "credits lost");
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Steering, PostedReceivesArePlacedDirectly) {
  run_ranks(2, [](std::uint16_t port, int rank) { return steering_main(port, rank, Steering::kPosted); });
}

TEST(Steering, PredictedModeKeepsTheSameGuarantees) {
  run_ranks(2, [](std::uint16_t port, int rank) { return steering_main(port, rank, Steering::kPredicted); });
}

// AUGUR_DIRECT_MIN: a receive smaller than it is not credited (nor predicted), and a message
// smaller than it is not placed directly even when the receive it goes to holds a credit; at the
// minimum both are steered as before. Every receive is posted before its go, so a credit is
// always at the sender in time: the paths below are the only possible ones.
Status direct_min_main(std::uint16_t port, int rank, Steering steering) {
  constexpr std::uint32_t kMin = 512;
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, steering, kMin));
  Engine& e = *j.e;
  struct Case {
    std::size_t cap, bytes;
    bool credited;
    Path path;
  };
  const std::vector<Case> cases = {
      {kMin - 1, kMin - 1, false, Path::kBounce},  // too small to credit
      {kMin, kMin, true, Path::kDirect},           // the minimum: steered
      {kEager, 100, true, Path::kBounce},          // credited, but the message is too small to place
      {kEager, kEager, true, Path::kDirect},
  };
  if (rank == 1) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      AUGUR_RETURN_IF_ERROR(await_go(e, 0));
      AUGUR_RETURN_IF_ERROR(send_pattern(e, cases[i].bytes, 9, i));
    }
    CHECK(e.counters().direct_sends == 2, "sender: direct sends " + std::to_string(e.counters().direct_sends));
    return Status::Ok();
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const EngineCounters before = e.counters();
    std::vector<std::byte> buf(cases[i].cap + kGuard, std::byte{0xcc});
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(buf.data(), cases[i].cap, 1, 9, kCtx));
    const std::string what = "case " + std::to_string(i) + " (" + std::to_string(cases[i].bytes) + " bytes into " +
                             std::to_string(cases[i].cap) + ")";
    CHECK((r->credit_slot >= 0) == cases[i].credited, what + ": credited " + std::to_string(r->credit_slot >= 0));
    AUGUR_RETURN_IF_ERROR(go(e, 1));
    AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
    CHECK(r->path == cases[i].path && r->length == cases[i].bytes, what + ": path or length");
    AUGUR_RETURN_IF_ERROR(check_pattern(buf, cases[i].bytes, i, what.c_str()));
    const EngineCounters& c = e.counters();
    const bool direct = cases[i].path == Path::kDirect;
    CHECK(c.direct_msgs - before.direct_msgs == (direct ? 1u : 0u) && c.credits_used - before.credits_used == (direct ? 1u : 0u),
          what + ": counters " + e.stats_line());
    CHECK(c.bytes_copied - before.bytes_copied == (direct ? 0u : cases[i].bytes), what + ": bytes copied " + e.stats_line());
    // A credit the message did not take is given back as revoked.
    const bool dropped = cases[i].credited && !direct;
    CHECK(c.credits_revoked - before.credits_revoked == (dropped ? 1u : 0u), what + ": revoked " + e.stats_line());
    if (steering == Steering::kPredicted && !cases[i].credited) {
      CHECK(c.pred_abstains - before.pred_abstains == 1 && c.pred_hits == before.pred_hits &&
                c.pred_misses == before.pred_misses,
            what + ": a receive too small to steer was given to the predictor: " + e.stats_line());
    }
  }
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

// One TEST per mode: the ranks re-execute the test, so the mode must be fixed by the test itself.
TEST(Steering, DirectMinKeepsSmallMessagesInBounceSlotsPosted) {
  run_ranks(2, [](std::uint16_t port, int rank) { return direct_min_main(port, rank, Steering::kPosted); });
}

TEST(Steering, DirectMinKeepsSmallMessagesInBounceSlotsPredicted) {
  run_ranks(2, [](std::uint16_t port, int rank) { return direct_min_main(port, rank, Steering::kPredicted); });
}

// Above the eager limit a credited receive is written by the sender's NIC straight from the send
// buffer (RDMA WRITE with immediate): no RTS, READ or FIN, nothing copied. A message longer than
// its credit goes by rendezvous and is truncated; with AUGUR_DIRECT_MAX at the eager limit every
// larger receive goes by rendezvous as before. Every receive is posted before its go, so a credit
// is at the sender in time: the paths below are the only possible ones. Odd sizes start one byte
// into a page-aligned allocation.
Status large_main(std::uint16_t port, int rank, Steering steering, std::uint32_t direct_max) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, steering, 1024, direct_max));
  Engine& e = *j.e;
  const bool credits_large = direct_max > kEager;
  struct Case {
    std::size_t cap, bytes;
    bool credited;
    Path path;
  };
  const Path large = credits_large ? Path::kDirect : Path::kRendezvous;
  const std::vector<Case> cases = {
      {kEager, kEager, true, Path::kDirect},
      {kEager + 1, kEager + 1, credits_large, large},
      {300'001, 300'001, credits_large, large},
      {(2u << 20) + 3, (2u << 20) + 3, credits_large, large},
      {100'000, 200'000, credits_large, Path::kRendezvous},  // longer than the credit: truncated
  };
  if (rank == 1) {
    std::size_t direct = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      AUGUR_RETURN_IF_ERROR(await_go(e, 0));
      std::vector<std::byte> out(cases[i].bytes);
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = pattern(i, k);
      AUGUR_ASSIGN_OR_RETURN(RequestPtr sr, e.isend(out.data(), out.size(), 0, 9, kCtx));
      AUGUR_RETURN_IF_ERROR(e.wait(sr, kWaitMs));
      CHECK(sr->path == cases[i].path,
            "sender, case " + std::to_string(i) + ": path " + std::to_string(int(sr->path)));
      direct += cases[i].path == Path::kDirect ? 1u : 0u;
    }
    CHECK(e.counters().direct_sends == direct, "sender: direct sends " + std::to_string(e.counters().direct_sends));
    return j.boot->fence();
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const EngineCounters before = e.counters();
    const std::size_t off = c.cap & 1;
    std::vector<std::byte> mem(off + c.cap + kGuard, std::byte{0xcc});
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(mem.data() + off, c.cap, 1, 9, kCtx));
    const std::string what = "case " + std::to_string(i) + " (" + std::to_string(c.bytes) + " bytes into " +
                             std::to_string(c.cap) + ")";
    CHECK((r->credit_slot >= 0) == c.credited, what + ": credited " + std::to_string(r->credit_slot >= 0));
    AUGUR_RETURN_IF_ERROR(go(e, 1));
    const Status st = e.wait(r, kWaitMs);
    const bool truncated = c.bytes > c.cap;
    CHECK(truncated ? st.code() == Code::kTruncated : st.ok(), what + ": " + st.to_string());
    CHECK(r->path == c.path && r->length == c.bytes, what + ": path " + std::to_string(int(r->path)));
    CHECK(mem[0] == std::byte{0xcc} || off == 0, what + ": written before the buffer");
    AUGUR_RETURN_IF_ERROR(check_pattern(std::vector<std::byte>(mem.begin() + static_cast<std::ptrdiff_t>(off), mem.end()),
                                        std::min(c.bytes, c.cap), i, what.c_str()));
    const EngineCounters& now = e.counters();
    const bool direct = c.path == Path::kDirect;
    CHECK(now.direct_msgs - before.direct_msgs == (direct ? 1u : 0u) && now.credits_used - before.credits_used == (direct ? 1u : 0u),
          what + ": direct counters " + e.stats_line());
    CHECK(now.rndv_msgs - before.rndv_msgs == (c.path == Path::kRendezvous ? 1u : 0u), what + ": rendezvous " + e.stats_line());
    CHECK(direct ? now.bytes_copied == before.bytes_copied : true, what + ": a direct message was copied " + e.stats_line());
    const bool dropped = c.credited && !direct;
    CHECK(now.credits_revoked - before.credits_revoked == (dropped ? 1u : 0u), what + ": revoked " + e.stats_line());
  }
  std::printf("%s\n", e.stats_line().c_str());
  return j.boot->fence();
}

TEST(Steering, LargeCreditedReceivesAreWrittenWithoutTheRendezvousHandshakePosted) {
  run_ranks(2, [](std::uint16_t port, int rank) { return large_main(port, rank, Steering::kPosted, proto::kMaxDirectBytes); });
}

TEST(Steering, LargeCreditedReceivesAreWrittenWithoutTheRendezvousHandshakePredicted) {
  run_ranks(2, [](std::uint16_t port, int rank) { return large_main(port, rank, Steering::kPredicted, proto::kMaxDirectBytes); });
}

TEST(Steering, DirectMaxAtTheEagerLimitSendsLargerReceivesByRendezvous) {
  run_ranks(2, [](std::uint16_t port, int rank) { return large_main(port, rank, Steering::kPosted, kEager); });
}

// Receives from rank 1 in rounds of kPerRound, each round opened by a go; `fresh` buffers are
// never reused (nothing repeats), otherwise the same buffers every round. Checks every byte.
Status receive_rounds(Engine& e, std::size_t rounds, std::size_t first_round, bool fresh, std::size_t& direct) {
  constexpr std::size_t kPerRound = 3, kBytes = 256;
  const std::size_t slot = kBytes + kGuard;
  std::vector<std::byte> arena((fresh ? rounds : 1) * kPerRound * slot);
  for (std::size_t r = 0; r < rounds; ++r) {
    std::vector<RequestPtr> reqs;
    std::byte* base = arena.data() + (fresh ? r : 0) * kPerRound * slot;
    std::fill(base, base + kPerRound * slot, std::byte{0xcc});
    for (std::size_t m = 0; m < kPerRound; ++m) {
      AUGUR_ASSIGN_OR_RETURN(RequestPtr q, e.irecv(base + m * slot, kBytes, 1, static_cast<std::int32_t>(10 + m), kCtx));
      reqs.push_back(q);
    }
    AUGUR_RETURN_IF_ERROR(go(e, 1));
    for (std::size_t m = 0; m < kPerRound; ++m) {
      AUGUR_RETURN_IF_ERROR(e.wait(reqs[m], kWaitMs));
      AUGUR_RETURN_IF_ERROR(check_pattern(std::vector<std::byte>(base + m * slot, base + (m + 1) * slot), kBytes,
                                          (first_round + r) * kPerRound + m, fresh ? "fresh buffers" : "cyclic"));
      direct += reqs[m]->path == Path::kDirect ? 1u : 0u;
    }
  }
  return Status::Ok();
}

Status send_rounds(Engine& e, std::size_t rounds) {
  constexpr std::size_t kPerRound = 3, kBytes = 256;
  for (std::size_t r = 0; r < rounds; ++r) {
    AUGUR_RETURN_IF_ERROR(await_go(e, 0));
    for (std::size_t m = 0; m < kPerRound; ++m) {
      AUGUR_RETURN_IF_ERROR(send_pattern(e, kBytes, static_cast<std::int32_t>(10 + m), r * kPerRound + m));
    }
  }
  return Status::Ok();
}

// A cyclic receive pattern: once the predictor has seen the cycle, the next receives are
// credited ahead and posting them only arms the credit. Then buffers that never repeat: the
// predictor abstains rather than staging credits in vain, and every message still arrives.
Status cycle_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, Steering::kPredicted));
  Engine& e = *j.e;
  constexpr std::size_t kRounds = 40, kFreshRounds = 100, kPerRound = 3;
  if (rank == 1) return send_rounds(e, kRounds + kFreshRounds);
  std::size_t direct = 0;
  AUGUR_RETURN_IF_ERROR(receive_rounds(e, kRounds, 0, false, direct));
  const EngineCounters cyc = e.counters();
  CHECK(direct == kRounds * kPerRound, "cyclic receives not all direct: " + std::to_string(direct));
  CHECK(cyc.pred_hits >= (kRounds - 4) * kPerRound, "few prediction hits: " + e.stats_line());
  // Posting only arms: a credit staged by prediction, or the buffer's entry still at the sender.
  CHECK(cyc.credits_armed_ahead + cyc.credits_rearmed >= (kRounds - 4) * kPerRound,
        "posts did not only arm a credit: " + e.stats_line());
  CHECK(cyc.credits_armed_ahead >= 1, "no predicted credit was armed ahead: " + e.stats_line());
  direct = 0;
  AUGUR_RETURN_IF_ERROR(receive_rounds(e, kFreshRounds, kRounds, true, direct));
  const EngineCounters& c = e.counters();
  CHECK(direct == kFreshRounds * kPerRound, "posted receives not direct while prediction misses");
  CHECK(c.pred_hits == cyc.pred_hits, "buffers that never repeat were predicted");
  const std::uint64_t wasted = (c.credits_issued - cyc.credits_issued) - (c.credits_used - cyc.credits_used);
  CHECK(wasted <= 8, "credits staged in vain: " + std::to_string(wasted));
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Steering, CyclicReceivesAreCreditedAheadAndFreshBuffersCostNothing) { run_ranks(2, cycle_main); }

// Posted mode, one receive buffer used again and again: the sender keeps the buffer's entry, so
// every post after the first writes only the arm word (credits_rearmed). A post that differs in
// capacity or tag gets a whole entry of its own and leaves the first one in place.
Status rearm_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, Steering::kPosted));
  Engine& e = *j.e;
  struct Post {
    std::size_t cap, bytes;
    std::int32_t tag;
  };
  std::vector<Post> posts(20, Post{256, 256, 5});
  posts.push_back({512, 300, 5});  // same address, larger capacity: a new entry
  posts.push_back({256, 100, 6});  // same address, other tag: a new entry
  posts.push_back({256, 256, 5});  // the first entry again: re-armed
  if (rank == 1) {
    for (std::size_t i = 0; i < posts.size(); ++i) {
      AUGUR_RETURN_IF_ERROR(await_go(e, 0));
      AUGUR_RETURN_IF_ERROR(send_pattern(e, posts[i].bytes, posts[i].tag, i));
    }
    CHECK(e.counters().direct_sends == posts.size(), "sender: direct sends " + std::to_string(e.counters().direct_sends));
    return Status::Ok();
  }
  // Within one page, so that every capacity is one registration under one rkey (a range that
  // crossed into a page the first registration does not cover would get a region of its own, and
  // then rightly a whole entry).
  alignas(4096) static std::array<std::byte, 4096> page;
  std::span<std::byte> buf(page.data(), 512 + kGuard);
  for (std::size_t i = 0; i < posts.size(); ++i) {
    std::fill(buf.begin(), buf.end(), std::byte{0xcc});
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(buf.data(), posts[i].cap, 1, posts[i].tag, kCtx));
    AUGUR_RETURN_IF_ERROR(go(e, 1));
    AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
    CHECK(r->path == Path::kDirect && r->length == posts[i].bytes, "post " + std::to_string(i) + " was not placed directly");
    AUGUR_RETURN_IF_ERROR(check_pattern({buf.begin(), buf.end()}, posts[i].bytes, i, "re-armed buffer"));
  }
  const EngineCounters& c = e.counters();
  CHECK(c.credits_issued == posts.size() && c.credits_used == posts.size(), "credits: " + e.stats_line());
  CHECK(c.credits_rearmed == posts.size() - 3, "re-armed credits: " + e.stats_line());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Steering, RepeatedReceiveBufferIsReArmedByItsArmWordAlone) { run_ranks(2, rearm_main); }

// A predictor that never abstains (lru names its last k calls) on buffers that never repeat:
// every prediction misses, so after one window of outcomes prediction is suspended.
Status suspend_main(std::uint16_t port, int rank) {
  Job j;
  AUGUR_ASSIGN_OR_RETURN(j.boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  AUGUR_ASSIGN_OR_RETURN(j.e, Engine::create(*j.boot, {.slots = 16, .eager_limit = kEager, .steering = Steering::kPredicted,
                                                        .credit_slots = 8, .direct_min = 1, .predictor = "lru",
                                                        .connect_all = true}));
  Engine& e = *j.e;
  constexpr std::size_t kRounds = 100, kPerRound = 3;
  if (rank == 1) return send_rounds(e, kRounds);
  std::size_t direct = 0;
  AUGUR_RETURN_IF_ERROR(receive_rounds(e, kRounds, 0, true, direct));
  const EngineCounters& c = e.counters();
  CHECK(direct == kRounds * kPerRound, "posted receives not direct while prediction misses");
  CHECK(c.pred_suspended == 1 && c.pred_hits == 0 && c.pred_misses == 64,
        "prediction not suspended after 64 misses: " + e.stats_line());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Steering, PersistentMispredictionSuspendsPrediction) { run_ranks(2, suspend_main); }

// Credits that come too late (the sender's message is already on its way when the receive is
// posted, as in a ping-pong) are void. Out of a window of 16 credit outcomes with fewer than 4
// used, the receiver stops crediting that peer for 256 receives instead of paying an RDMA write
// per receive; then it credits again, and a second useless window pauses it again.
//
// Each round makes the credit void for certain: the sender's send has completed (its message is
// in a send slot, so its sequence number is taken) before the bootstrap fence, and the receiver
// posts right after the fence without polling in between, so its credit is valid from that very
// message, which the sender has already sent with the same envelope.
Status void_credits_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, Steering::kPredicted));
  Engine& e = *j.e;
  constexpr std::size_t kWindow = 16, kPause = 256, kBytes = 200;
  constexpr std::size_t kRounds = kWindow + kPause + kWindow + 4;
  if (rank == 1) {
    for (std::size_t b = 0; b < kRounds; ++b) {
      AUGUR_RETURN_IF_ERROR(await_go(e, 0));
      AUGUR_RETURN_IF_ERROR(send_pattern(e, kBytes, 5, b));
      AUGUR_RETURN_IF_ERROR(j.boot->fence());
    }
    CHECK(e.counters().direct_sends == 0, "sender: a void credit was used: " + e.stats_line());
    return Status::Ok();
  }
  std::vector<std::byte> buf(kBytes + kGuard);
  std::vector<bool> credited;
  std::size_t direct = 0;
  for (std::size_t b = 0; b < kRounds; ++b) {
    AUGUR_RETURN_IF_ERROR(go(e, 1));
    AUGUR_RETURN_IF_ERROR(j.boot->fence());  // the sender's message b is sent
    std::fill(buf.begin(), buf.end(), std::byte{0xcc});
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(buf.data(), kBytes, 1, 5, kCtx));
    credited.push_back(r->credit_slot >= 0);
    AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
    AUGUR_RETURN_IF_ERROR(check_pattern(buf, kBytes, b, "late-credited receive"));
    CHECK(r->path == Path::kBounce, "round " + std::to_string(b) + ": not through a bounce slot");
    direct += r->path == Path::kDirect ? 1u : 0u;
    if (b + 1 == kWindow) {
      CHECK(e.counters().credit_pauses == 1, "no pause after a window of void credits: " + e.stats_line());
    }
  }
  for (std::size_t b = 0; b < kRounds; ++b) {
    // Credited: the first window, then the window after the pause; the second pause is longer.
    const bool want = b < kWindow || (b >= kWindow + kPause && b < 2 * kWindow + kPause);
    CHECK(credited[b] == want, "round " + std::to_string(b) + (want ? ": not credited" : ": credited while paused"));
  }
  const EngineCounters& c = e.counters();
  std::printf("%s\n", e.stats_line().c_str());
  CHECK(direct == 0 && c.credits_used == 0, "a credit posted after its message was sent was used: " + e.stats_line());
  CHECK(c.credit_pauses == 2, "crediting was not paused after each window of void credits: " + e.stats_line());
  CHECK(c.pred_abstains >= kPause, "receives while paused were given to the predictor: " + e.stats_line());
  return Status::Ok();
}

TEST(Steering, VoidCreditsPauseCreditingThePeer) { run_ranks(2, void_credits_main); }

// Memory the program gives back to the kernel and maps again at the same address is new pages:
// registrations cached (or credits staged by prediction) for the old ones must not be used.
// Both ranks unmap and map their buffers again between rounds, at the same addresses: the
// receiver's arena (predicted direct credits, rendezvous destination) and the sender's
// rendezvous source. Every round's data must arrive, and the receives stay direct.
class Remapped {
 public:
  static Result<Remapped> map(std::size_t bytes) {
    Remapped m;
    m.bytes_ = bytes;
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return errno_status(errno, "mmap");
    m.p_ = static_cast<std::byte*>(p);
    return m;
  }
  Remapped() = default;
  Remapped(Remapped&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(o.bytes_) {}
  Remapped& operator=(Remapped&&) = delete;
  ~Remapped() {
    if (p_ != nullptr) ::munmap(p_, bytes_);
  }
  std::byte* data() const { return p_; }
  // Unmaps the range and maps fresh zero pages at the same address.
  Status remap() {
    if (::munmap(p_, bytes_) != 0) return errno_status(errno, "munmap");
    // Sanitizer builds see releases through their allocator's free hook, not munmap
    // (nic/mem_release.h): the test reports this one itself there.
    if (std::strcmp(nic::release_tracking(), "sanitizer-free-hook") == 0) nic::note_release(p_, bytes_);
    void* q = ::mmap(p_, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (q == MAP_FAILED) return errno_status(errno, "mmap at the released address");
    CHECK(q == p_, "mmap did not return the released address");
    return Status::Ok();
  }

 private:
  std::byte* p_ = nullptr;
  std::size_t bytes_ = 0;
};

Status remap_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, Steering::kPredicted, 1, proto::kMaxDirectBytes));
  Engine& e = *j.e;
  constexpr std::size_t kRounds = 30, kPerRound = 3, kBytes = 256, kSlot = 4096, kLarge = 5 * kEager + 3;
  constexpr std::int32_t kLargeTag = 20;
  CHECK(nic::releases_tracked(), std::string("memory releases are not tracked: ") + nic::release_tracking());
  AUGUR_ASSIGN_OR_RETURN(Remapped arena, Remapped::map(kPerRound * kSlot + kLarge + kSlot));
  std::byte* large = arena.data() + kPerRound * kSlot;
  if (rank == 1) {
    for (std::size_t r = 0; r < kRounds; ++r) {
      AUGUR_RETURN_IF_ERROR(await_go(e, 0));
      for (std::size_t m = 0; m < kPerRound; ++m) {
        AUGUR_RETURN_IF_ERROR(send_pattern(e, kBytes, static_cast<std::int32_t>(10 + m), r * kPerRound + m));
      }
      for (std::size_t k = 0; k < kLarge; ++k) large[k] = pattern(1000 + r, k);
      AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(large, kLarge, 0, kLargeTag, kCtx));
      AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
      // Its receive was credited before the go: written from this buffer into it (registered
      // again after each remap, like the receiver's).
      CHECK(s->path == Path::kDirect, "large send not written through its receive's credit");
      AUGUR_RETURN_IF_ERROR(arena.remap());
    }
    CHECK(e.rcache_counters().releases >= kRounds - 1, "sender saw no releases: " + e.stats_line());
    return Status::Ok();
  }
  std::size_t direct = 0;
  for (std::size_t r = 0; r < kRounds; ++r) {
    std::fill(arena.data(), large + kLarge + kGuard, std::byte{0xcc});
    std::vector<RequestPtr> reqs;
    for (std::size_t m = 0; m < kPerRound; ++m) {
      AUGUR_ASSIGN_OR_RETURN(RequestPtr q, e.irecv(arena.data() + m * kSlot, kBytes, 1, static_cast<std::int32_t>(10 + m), kCtx));
      reqs.push_back(q);
    }
    AUGUR_ASSIGN_OR_RETURN(RequestPtr lq, e.irecv(large, kLarge, 1, kLargeTag, kCtx));
    AUGUR_RETURN_IF_ERROR(go(e, 1));
    for (std::size_t m = 0; m < kPerRound; ++m) {
      AUGUR_RETURN_IF_ERROR(e.wait(reqs[m], kWaitMs));
      AUGUR_RETURN_IF_ERROR(check_pattern(std::vector<std::byte>(arena.data() + m * kSlot, arena.data() + (m + 1) * kSlot),
                                          kBytes, r * kPerRound + m, "remapped receive buffer"));
      direct += reqs[m]->path == Path::kDirect ? 1u : 0u;
    }
    AUGUR_RETURN_IF_ERROR(e.wait(lq, kWaitMs));
    CHECK(lq->path == Path::kDirect && lq->length == kLarge, "large receive not placed through its credit");
    for (std::size_t k = 0; k < kLarge + kGuard; ++k) {
      const std::byte want = k < kLarge ? pattern(1000 + r, k) : std::byte{0xcc};
      CHECK(large[k] == want, "round " + std::to_string(r) + ": large message byte " + std::to_string(k));
    }
    AUGUR_RETURN_IF_ERROR(arena.remap());
  }
  const EngineCounters& c = e.counters();
  const nic::RegCacheCounters rc = e.rcache_counters();
  std::printf("%s rcache_releases=%llu rcache_invalidations=%llu\n", e.stats_line().c_str(),
              static_cast<unsigned long long>(rc.releases), static_cast<unsigned long long>(rc.invalidations));
  CHECK(direct == kRounds * kPerRound, "receives into remapped buffers not all direct: " + std::to_string(direct));
  CHECK(c.pred_hits >= (kRounds - 4) * kPerRound, "the cycle was not predicted: " + e.stats_line());
  CHECK(rc.releases >= kRounds - 1 && rc.invalidations >= kRounds - 1, "receiver saw no releases");
  CHECK(rc.misses >= kRounds, "registrations of released memory were reused: " + e.stats_line());
  return Status::Ok();
}

TEST(Steering, ReleasedAndRemappedBuffersAreRegisteredAgain) { run_ranks(2, remap_main); }

}  // namespace
}  // namespace augur::host
