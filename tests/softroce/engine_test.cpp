// Point-to-point through the Engine between three processes on the device: every size across the
// eager/rendezvous boundary between every pair, wildcards and non-overtaking on unexpected
// messages, truncation that never writes past the buffer, messages to oneself; each request's
// path and the engine's counters are checked against the messages actually sent. The suite
// runs with steering off (bounce and rendezvous only) and with direct placement on, where an
// eager message may go either way depending on whether its credit reached the sender in time.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
#include "ranks.h"

#if defined(__SANITIZE_THREAD__)
// The ranks are forked from a process that runs the bootstrap server's thread, and start assist
// threads of their own: TSan supports that when told to (the children never touch the parent's
// threads' state).
extern "C" const char* __tsan_default_options() { return "die_after_fork=0"; }
#endif

namespace augur::host {
namespace {

using namespace std::chrono_literals;
using testing::run_ranks;

constexpr int kRanks = 3;
constexpr int kWaitMs = 120'000;
constexpr std::uint32_t kEager = 8192;
const std::vector<std::size_t> kSizes = {0, 1, 100, kEager, kEager + 1, 300'000, (1u << 20) + 3};

std::byte byte_of(int from, int to, std::size_t size, std::size_t k) {
  return static_cast<std::byte>((static_cast<std::size_t>(from) * 131 + static_cast<std::size_t>(to) * 31 + size * 7 + k * 13) & 0xff);
}

Status all_pairs(Engine& e, std::uint64_t& bounce, std::uint64_t& rndv, std::uint64_t& direct) {
  const int me = e.rank();
  std::vector<std::vector<std::byte>> out, in;
  std::vector<RequestPtr> sends, recvs;
  std::vector<std::pair<int, std::size_t>> recv_of;
  for (int q = 0; q < kRanks; ++q) {
    if (q == me) continue;
    for (std::size_t i = 0; i < kSizes.size(); ++i) {
      const std::size_t n = kSizes[i];
      in.emplace_back(n + 64, std::byte{0xcc});  // 64 guard bytes must stay untouched
      AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(in.back().data(), n, q, static_cast<std::int32_t>(i), 1));
      recvs.push_back(r);
      recv_of.emplace_back(q, i);
      out.emplace_back(n);
      for (std::size_t k = 0; k < n; ++k) out.back()[k] = byte_of(me, q, n, k);
      AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(out.back().data(), n, q, static_cast<std::int32_t>(i), 1));
      sends.push_back(s);
    }
  }
  for (auto& s : sends) AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs).context("send"));
  for (std::size_t j = 0; j < recvs.size(); ++j) {
    AUGUR_RETURN_IF_ERROR(e.wait(recvs[j], kWaitMs).context("receive"));
    const auto [q, i] = recv_of[j];
    const std::size_t n = kSizes[i];
    const Request& r = *recvs[j];
    CHECK(r.source == q && r.tag == static_cast<std::int32_t>(i) && r.length == n, "wrong envelope");
    // Steering credits receives of direct_min up to direct_max bytes (above the eager limit the
    // sender writes from its own buffer instead of sending an RTS); whether a credit reaches the
    // sender before its message leaves is a race, so such a message may come either way. Smaller
    // ones must come through a bounce slot.
    const std::size_t direct_max = e.config().direct_max == 0 ? kEager : e.config().direct_max;
    const bool steerable = e.config().steering != Steering::kOff && n > 0 && n >= e.config().direct_min && n <= direct_max;
    const Path want = n > kEager ? Path::kRendezvous : Path::kBounce;
    CHECK(r.path == want || (steerable && r.path == Path::kDirect), "size " + std::to_string(n) + " took the wrong path");
    (r.path == Path::kRendezvous ? rndv : r.path == Path::kDirect ? direct : bounce) += 1;
    for (std::size_t k = 0; k < n + 64; ++k) {
      const std::byte want_b = k < n ? byte_of(q, me, n, k) : std::byte{0xcc};
      CHECK(in[j][k] == want_b, "size " + std::to_string(n) + " from " + std::to_string(q) + ": byte " + std::to_string(k));
    }
  }
  return Status::Ok();
}

// Rank 0 receives with wildcards only after everybody has sent: the messages are unexpected.
Status wildcards(Engine& e, Bootstrap& boot, std::uint64_t& bounce, std::uint64_t& rndv) {
  std::vector<std::byte> small(16), big(20'000);
  std::vector<RequestPtr> sends;
  if (e.rank() != 0) {
    for (std::int32_t t : {1, 2}) {
      auto& buf = t == 1 ? small : big;  // one eager, one rendezvous, in this order
      std::fill(buf.begin(), buf.end(), static_cast<std::byte>(e.rank() * 10 + t));
      AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(buf.data(), buf.size(), 0, t, 2));
      sends.push_back(s);
    }
  }
  // Let the messages arrive before any receive is posted (progress while waiting).
  for (int i = 0; i < 200; ++i) (void)e.progress();
  AUGUR_RETURN_IF_ERROR(boot.fence());
  if (e.rank() == 0) {
    // The fence says the sends were started, not that they arrived (with an assist thread they
    // may not even be posted yet): probe until one is there, as MPI_Iprobe loops do.
    Request probe;
    bool found = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (!found && std::chrono::steady_clock::now() < deadline) {
      (void)e.progress();
      AUGUR_ASSIGN_OR_RETURN(found, e.iprobe(kAnySource, kAnyTag, 2, &probe));
    }
    CHECK(found, "iprobe saw no unexpected message within the wait bound");
    CHECK(probe.tag == 1, "iprobe did not see the first unexpected message (tag " + std::to_string(probe.tag) + ")");
    std::vector<int> next_tag(kRanks, 1);
    for (int m = 0; m < 2 * (kRanks - 1); ++m) {
      std::vector<std::byte> buf(20'000);
      AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(buf.data(), buf.size(), kAnySource, kAnyTag, 2));
      AUGUR_RETURN_IF_ERROR(e.wait(r, kWaitMs));
      CHECK(r->tag == next_tag[static_cast<std::size_t>(r->source)], "non-overtaking violated for rank " + std::to_string(r->source));
      ++next_tag[static_cast<std::size_t>(r->source)];
      CHECK(r->length == (r->tag == 1 ? 16u : 20'000u), "wrong length");
      CHECK(buf[r->length - 1] == static_cast<std::byte>(r->source * 10 + r->tag), "wrong data");
      (r->tag == 1 ? bounce : rndv) += 1;
    }
  }
  for (auto& s : sends) AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
  return Status::Ok();
}

Status truncation_and_self(Engine& e, std::uint64_t& bounce, std::uint64_t& rndv) {
  if (e.rank() == 1) {
    std::vector<std::byte> a(100, std::byte{1}), b(100'000, std::byte{2});
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s1, e.isend(a.data(), a.size(), 0, 5, 3));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s2, e.isend(b.data(), b.size(), 0, 6, 3));
    AUGUR_RETURN_IF_ERROR(e.wait(s1, kWaitMs));
    AUGUR_RETURN_IF_ERROR(e.wait(s2, kWaitMs));  // the receiver FINs a truncated rendezvous too
  }
  if (e.rank() == 0) {
    for (std::int32_t tag : {5, 6}) {
      std::vector<std::byte> buf(1000 + 64, std::byte{0xcc});
      const std::size_t cap = tag == 5 ? 50 : 1000;
      AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(buf.data(), cap, 1, tag, 3));
      Status st = e.wait(r, kWaitMs);
      CHECK(st.code() == Code::kTruncated, "truncation not reported: " + st.to_string());
      CHECK(r->length == (tag == 5 ? 100u : 100'000u), "truncated length not reported");
      for (std::size_t k = 0; k < buf.size(); ++k) {
        CHECK(buf[k] == (k < cap ? std::byte{static_cast<unsigned char>(tag == 5 ? 1 : 2)} : std::byte{0xcc}),
              "truncated receive wrote past its buffer (byte " + std::to_string(k) + ")");
      }
      (tag == 5 ? bounce : rndv) += 1;
    }
  }
  // To oneself: the receive is posted after the send (unexpected), and before another.
  std::vector<std::byte> s(5000, std::byte{9}), r(5000);
  AUGUR_ASSIGN_OR_RETURN(RequestPtr sr, e.isend(s.data(), s.size(), e.rank(), 7, 4));
  AUGUR_ASSIGN_OR_RETURN(RequestPtr rr, e.irecv(r.data(), r.size(), e.rank(), 7, 4));
  AUGUR_RETURN_IF_ERROR(e.wait(rr, kWaitMs));
  CHECK(sr->done && rr->path == Path::kSelf && r == s, "self message");
  return Status::Ok();
}

// direct_max: the largest receive credited (0: the eager limit); above it the sender writes a
// credited message from its own buffer, so the rendezvous sizes may come either way too.
Status rank_main(std::uint16_t port, int rank, Steering steering, EngineConfig::Assist assist = EngineConfig::Assist::kOff,
                 std::uint32_t direct_max = 0) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, kRanks, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 16, .eager_limit = kEager, .steering = steering,
                                                        .direct_max = direct_max, .assist = assist}));
  if (assist == EngineConfig::Assist::kOn) {
    const Placement* p = e->assist_placement();
    CHECK(p != nullptr && p->core >= 0 && !p->why.empty(), "no assist thread placement");
  }
  std::uint64_t bounce = 0, rndv = 0, direct = 0;
  AUGUR_RETURN_IF_ERROR(all_pairs(*e, bounce, rndv, direct).context("all pairs"));
  AUGUR_RETURN_IF_ERROR(boot->fence());
  AUGUR_RETURN_IF_ERROR(wildcards(*e, *boot, bounce, rndv).context("wildcards"));
  AUGUR_RETURN_IF_ERROR(boot->fence());
  AUGUR_RETURN_IF_ERROR(truncation_and_self(*e, bounce, rndv).context("truncation"));
  AUGUR_RETURN_IF_ERROR(boot->fence());
  const EngineCounters c = e->counters();
  CHECK(c.bounce_msgs == bounce && c.rndv_msgs == rndv && c.direct_msgs == direct,
        "counters: bounce " + std::to_string(c.bounce_msgs) + " (want " + std::to_string(bounce) + "), rndv " +
            std::to_string(c.rndv_msgs) + " (want " + std::to_string(rndv) + "), direct " + std::to_string(c.direct_msgs) +
            " (want " + std::to_string(direct) + ")");
  CHECK(c.credits_used == c.direct_msgs, "credits used differ from direct messages");
  // Every credit is used, void or (predicted mode) still staged.
  CHECK(c.credits_issued >= c.credits_used + c.credits_revoked, "more credits used or revoked than issued");
  if (steering == Steering::kOff) CHECK(c.credits_issued == 0 && c.direct_msgs == 0, "steering off gave credits");
  if (steering == Steering::kPosted) CHECK(c.credits_issued == c.credits_used + c.credits_revoked, "credits lost");
  CHECK(c.self_msgs == 1 && c.truncated == (rank == 0 ? 2u : 0u), "self/truncated counters");
  std::printf("%s\n", e->stats_line().c_str());
  return Status::Ok();
}

TEST(Engine, ThreeRanksPointToPoint) {
  run_ranks(kRanks, [](std::uint16_t port, int rank) { return rank_main(port, rank, Steering::kOff); });
}

TEST(Engine, ThreeRanksPointToPointPostedSteering) {
  run_ranks(kRanks, [](std::uint16_t port, int rank) { return rank_main(port, rank, Steering::kPosted); });
}

TEST(Engine, ThreeRanksPointToPointPredictedSteering) {
  run_ranks(kRanks, [](std::uint16_t port, int rank) { return rank_main(port, rank, Steering::kPredicted); });
}

TEST(Engine, ThreeRanksPointToPointCreditsAtEverySize) {
  run_ranks(kRanks, [](std::uint16_t port, int rank) {
    return rank_main(port, rank, Steering::kPosted, EngineConfig::Assist::kOff, proto::kMaxDirectBytes);
  });
}

// Big and misaligned: 64 MiB each way by rendezvous (above the largest credited receive), and
// sizes around the eager limit and 3 MiB at odd offsets in both buffers (direct placement,
// bounce; rendezvous when the credit comes late), every byte checked.
Status large_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 16, .eager_limit = kEager, .steering = Steering::kPosted}));
  const int peer = 1 - rank;
  const std::vector<std::pair<std::size_t, std::size_t>> cases = {
      {std::size_t{64} << 20, 0}, {kEager - 1, 1}, {kEager, 3}, {kEager + 1, 7}, {(std::size_t{3} << 20) + 5, 5}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto [n, off] = cases[i];
    std::vector<std::byte> out(n + off), in(n + off + 64, std::byte{0xcc});
    for (std::size_t k = 0; k < n; ++k) out[off + k] = byte_of(rank, peer, n, k);
    const auto tag = static_cast<std::int32_t>(i);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecv(in.data() + off, n, peer, tag, 9));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e->isend(out.data() + off, n, peer, tag, 9));
    AUGUR_RETURN_IF_ERROR(e->wait(s, 600'000));
    AUGUR_RETURN_IF_ERROR(e->wait(r, 600'000));
    CHECK(r->length == n, "length of " + std::to_string(n));
    for (std::size_t k = 0; k < off; ++k) CHECK(in[k] == std::byte{0xcc}, "written before the buffer");
    for (std::size_t k = 0; k < n; ++k) {
      CHECK(in[off + k] == byte_of(peer, rank, n, k), "size " + std::to_string(n) + ": byte " + std::to_string(k));
    }
    for (std::size_t k = off + n; k < in.size(); ++k) CHECK(in[k] == std::byte{0xcc}, "written past the buffer");
    CHECK(n <= kEager || r->path == Path::kRendezvous || (n <= proto::kMaxDirectBytes && r->path == Path::kDirect),
          "large message of " + std::to_string(n) + " bytes by neither rendezvous nor its credit");
    CHECK(n <= proto::kMaxDirectBytes || r->path == Path::kRendezvous, "64 MiB not by rendezvous");
  }
  return boot->fence();
}

TEST(Engine, SixtyFourMiBAndMisalignedBuffers) { run_ranks(2, large_main); }

// A job with more ranks than cores on a host: every rank raises its eager limit to the
// oversubscribed one, so a 16 KiB message goes eagerly, through a bounce slot; with a core per
// rank the limit stays and the message goes by rendezvous. A ring, so that every rank both sends
// and receives under the limit it chose: a rank that disagreed would reject its peer's slot.
Status oversub_main(std::uint16_t port, int rank, int nranks) {
  constexpr std::uint32_t kOversubEager = 32768;
  constexpr std::size_t kBytes = 16384;
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, nranks, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.eager_limit = kEager,
                                                        .oversub_eager_limit = kOversubEager,
                                                        .steering = Steering::kOff}));
  const bool over = static_cast<unsigned>(nranks) > std::max(1u, std::thread::hardware_concurrency());
  CHECK(e->config().eager_limit == (over ? kOversubEager : kEager), "eager limit " + std::to_string(e->config().eager_limit));
  CHECK(e->stats_line().find(over ? " oversubscribed=1" : " oversubscribed=0") != std::string::npos, "stats line");
  // AUGUR_WAIT=auto (the default) on a software device (rxe, the loopback) sleeps after its spin,
  // with a core per rank or not: the device's work needs the cores.
  CHECK(e->wait_policy() == WaitPolicy::kHybrid && e->stats_line().find(" wait=hybrid ") != std::string::npos,
        "wait policy: " + e->stats_line());
  const int to = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;
  std::vector<std::byte> out(kBytes), in(kBytes + 64, std::byte{0xcc});
  for (std::size_t k = 0; k < kBytes; ++k) out[k] = byte_of(rank, to, kBytes, k);
  AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecv(in.data(), kBytes, from, 4, 2));
  AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e->isend(out.data(), kBytes, to, 4, 2));
  AUGUR_RETURN_IF_ERROR(e->wait(s, kWaitMs));
  AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
  CHECK(r->length == kBytes && r->source == from, "wrong envelope");
  for (std::size_t k = 0; k < kBytes + 64; ++k) {
    CHECK(in[k] == (k < kBytes ? byte_of(from, rank, kBytes, k) : std::byte{0xcc}), "byte " + std::to_string(k));
  }
  CHECK(r->path == (over ? Path::kBounce : Path::kRendezvous), "16 KiB took the wrong path");
  return boot->fence();
}

TEST(Engine, MoreRanksThanCoresRaiseEveryRanksEagerLimit) {
  const int n = static_cast<int>(std::min(8u, std::max(1u, std::thread::hardware_concurrency()) + 1));
  ASSERT_GT(static_cast<unsigned>(n), std::max(1u, std::thread::hardware_concurrency()))
      << "more than 7 cores: this test needs a smaller machine or guest";
  run_ranks(n, [n](std::uint16_t port, int rank) { return oversub_main(port, rank, n); });
}

TEST(Engine, ARankPerCoreKeepsTheEagerLimit) {
  run_ranks(2, [](std::uint16_t port, int rank) { return oversub_main(port, rank, 2); });
}

// The same with a communication-assist thread running the protocols: application calls only
// hand it commands, waits sleep on the request.
TEST(Engine, ThreeRanksPointToPointWithAssistThread) {
  run_ranks(kRanks, [](std::uint16_t port, int rank) {
    return rank_main(port, rank, Steering::kPredicted, EngineConfig::Assist::kOn);
  });
}

}  // namespace
}  // namespace augur::host

namespace augur::host {
namespace {

// A peer that dies is reported to the survivor's pending receive and send, never waited for.
// Rank 1 is this test re-executed (testing::start_self): the server's thread runs here.
void dead_peer(EngineConfig::Assist assist) {
  const std::string rank1 = assist == EngineConfig::Assist::kOn ? "rank 1 with assist" : "rank 1";
  if (const char* role = testing::self_role()) {  // rank 1: connects, then dies without a word
    const char* port = std::getenv("AUGUR_TEST_PORT");
    if (role != rank1 || port == nullptr) _exit(2);  // not the part this parent started
    auto boot = TcpBootstrap::connect("127.0.0.1", static_cast<std::uint16_t>(std::atoi(port)), 1, 2, 120s);
    if (!boot.ok()) _exit(1);
    auto e = Engine::create(*boot.value(), {.slots = 8, .eager_limit = 4096, .keepalive_ms = 200, .assist = assist});
    _exit(e.ok() ? 0 : 1);
  }
  auto server = BootstrapServer::start(2, "127.0.0.1", 0, 120s);
  ASSERT_TRUE(server.ok());
  const std::uint16_t port = server.value()->port();
  const pid_t pid = testing::start_self(rank1, {"AUGUR_TEST_PORT=" + std::to_string(port)});
  ASSERT_GE(pid, 0);
  auto boot = TcpBootstrap::connect("127.0.0.1", port, 0, 2, 120s);
  ASSERT_TRUE(boot.ok());
  auto e = Engine::create(*boot.value(), {.slots = 8, .eager_limit = 4096, .keepalive_ms = 200, .assist = assist});
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  int st = 0;
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);

  std::vector<std::byte> buf(100);
  // The death may already be known (the assist thread polls on its own), so the receive is then
  // refused at once; otherwise its wait reports it. Either way: peer failure, naming rank 1.
  const auto t0 = std::chrono::steady_clock::now();
  auto r = e.value()->irecv(buf.data(), buf.size(), 1, 0, 0);
  Status s = r.ok() ? e.value()->wait(r.value(), 60'000) : r.status();
  EXPECT_EQ(s.code(), Code::kPeerFailure) << s.to_string();
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.to_string();
  std::printf("dead peer reported after %.1f s: %s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), s.to_string().c_str());
  // Later operations on that peer fail at once.
  EXPECT_EQ(e.value()->isend(buf.data(), buf.size(), 1, 0, 0).status().code(), Code::kPeerFailure);
  EXPECT_EQ(e.value()->irecv(buf.data(), buf.size(), 1, 0, 0).status().code(), Code::kPeerFailure);
}

TEST(Engine, DeadPeerIsReportedInsteadOfAHang) { dead_peer(EngineConfig::Assist::kOff); }
TEST(Engine, DeadPeerIsReportedInsteadOfAHangWithAssistThread) { dead_peer(EngineConfig::Assist::kOn); }

}  // namespace
}  // namespace augur::host
