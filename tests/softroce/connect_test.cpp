// Connections on first use (host/augur/host/wireup.h), through the Engine on the device: a rank
// connects only to the peers it talks to, two ranks that start talking to each other at once
// connect the same two QPs, the first messages wait for the connection and arrive intact and in
// order, a stranger's connection to the wire-up listener is rejected without harm, and a send to
// a rank whose listener is gone fails that send instead of hanging.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
#include "ranks.h"

#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_options() { return "die_after_fork=0"; }
#endif

namespace augur::host {
namespace {

using namespace std::chrono_literals;
using testing::run_ranks;

constexpr int kWaitMs = 120'000;
constexpr std::uint32_t kCtx = 3;

std::byte pattern(int from, std::size_t i, int msg) { return static_cast<std::byte>(from * 31 + msg * 7 + static_cast<int>(i)); }

std::vector<std::byte> filled(int from, std::size_t n, int msg) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern(from, i, msg);
  return v;
}

Status check_filled(const std::vector<std::byte>& v, int from, int msg) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    CHECK(v[i] == pattern(from, i, msg), "message " + std::to_string(msg) + " from rank " + std::to_string(from) +
                                             " differs at byte " + std::to_string(i));
  }
  return Status::Ok();
}

// Six ranks in a ring: each sends to its right neighbour and receives from its left one, many
// messages of eager and rendezvous sizes posted back to back before the connection exists, then
// checks that it holds exactly two channels. The ring's orientation makes every pair's first
// contact one-sided (the right neighbour learns of the connection from the REQ).
Status ring_main(std::uint16_t port, int rank) {
  constexpr int kRanks = 6;
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, kRanks, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 8, .eager_limit = 4096, .assist = EngineConfig::Assist::kOff}));
  CHECK(e->peers_connected() == 0, "channels before any traffic: " + std::to_string(e->peers_connected()));
  const int right = (rank + 1) % kRanks, left = (rank + kRanks - 1) % kRanks;
  const std::vector<std::size_t> sizes = {1, 100, 4096, 20000, 0, 8, 300000, 64};
  std::vector<std::vector<std::byte>> out, in;
  std::vector<RequestPtr> reqs;
  for (std::size_t m = 0; m < sizes.size(); ++m) {  // more messages than bounce slots, all queued
    out.push_back(filled(rank, sizes[m], static_cast<int>(m)));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e->isend(out.back().data(), sizes[m], right, 5, kCtx));
    reqs.push_back(s);
  }
  for (std::size_t m = 0; m < sizes.size(); ++m) {  // same tag: order decides which is which
    in.emplace_back(sizes[m]);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecv(in.back().data(), sizes[m], left, 5, kCtx));
    reqs.push_back(r);
  }
  for (const RequestPtr& r : reqs) AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
  for (std::size_t m = 0; m < sizes.size(); ++m) AUGUR_RETURN_IF_ERROR(check_filled(in[m], left, static_cast<int>(m)));
  CHECK(e->peers_connected() == 2, "rank " + std::to_string(rank) + " holds " + std::to_string(e->peers_connected()) +
                                       " channels, not 2 (its neighbours)");
  const Wireup::Counters wc = e->wireup_counters();
  CHECK(wc.initiated + wc.accepted >= 2 && wc.rejected == 0,
        "wire-up: initiated " + std::to_string(wc.initiated) + ", accepted " + std::to_string(wc.accepted));
  AUGUR_RETURN_IF_ERROR(boot->fence());  // nobody tears down while a neighbour still reads
  return Status::Ok();
}

TEST(Connect, RingRanksConnectOnlyToTheirNeighbours) { run_ranks(6, ring_main); }

// Ranks 0 and 1 send to each other at the same moment: both start an exchange (each has sent
// its REQ before either polls: the fence), and they end with one channel each, which carries
// both directions. (Whether a side reads the other's REQ before it hears REP is a race, so
// only "at most once" is asserted for the answers.) Rank 2 is never talked to.
Status simultaneous_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 3, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 8, .eager_limit = 4096, .assist = EngineConfig::Assist::kOff}));
  if (rank < 2) {
    const int peer = 1 - rank;
    std::vector<std::byte> out = filled(rank, 2000, 1), in(2000);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e->isend(out.data(), out.size(), peer, 9, kCtx));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecv(in.data(), in.size(), peer, 9, kCtx));
    AUGUR_RETURN_IF_ERROR(boot->fence());
    AUGUR_RETURN_IF_ERROR(e->wait(s, kWaitMs));
    AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
    AUGUR_RETURN_IF_ERROR(check_filled(in, peer, 1));
    const Wireup::Counters wc = e->wireup_counters();
    CHECK(wc.initiated == 1 && wc.accepted <= 1, "both ranks asked at once, so each asked once: initiated " +
                                                     std::to_string(wc.initiated) + ", accepted " + std::to_string(wc.accepted));
    CHECK(e->peers_connected() == 1, "channels: " + std::to_string(e->peers_connected()));
  } else {
    AUGUR_RETURN_IF_ERROR(boot->fence());
  }
  AUGUR_RETURN_IF_ERROR(boot->fence());
  if (rank == 2) CHECK(e->peers_connected() == 0 && e->wireup_counters().accepted == 0, "rank 2 was connected to");
  AUGUR_RETURN_IF_ERROR(boot->fence());
  return Status::Ok();
}

TEST(Connect, RanksThatStartAtOnceShareOneChannel) { run_ranks(3, simultaneous_main); }

// Rank 1's wire-up listener gets a stranger's connection (garbage, then a well-formed REQ with
// the wrong nonce) before rank 0 connects for real: both are dropped and counted, nothing else
// changes, and rank 0's message still arrives.
Status stranger_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 8, .eager_limit = 4096, .assist = EngineConfig::Assist::kOff}));
  std::vector<std::byte> buf(64);
  if (rank == 0) {
    AUGUR_ASSIGN_OR_RETURN(std::string entry, boot->get(1, "augur.wire"));
    const std::size_t sp = entry.find(' ');
    const std::string host = entry.substr(0, sp);
    const int lport = std::stoi(entry.substr(sp + 1, entry.find(' ', sp + 1) - sp - 1));
    for (int attempt = 0; attempt < 2; ++attempt) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in sa{};
      sa.sin_family = AF_INET;
      sa.sin_port = htons(static_cast<std::uint16_t>(lport));
      CHECK(inet_pton(AF_INET, host.c_str(), &sa.sin_addr) == 1, "listener host " + host);
      CHECK(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0, "connect to rank 1's listener");
      // 32 bytes of garbage; then a REQ from rank 0 to rank 1 whose nonce is not rank 1's.
      unsigned char msg[32 + 84] = {};
      if (attempt == 0) {
        std::memset(msg, 0xab, sizeof msg);
      } else {
        const unsigned char hdr[32] = {0x41, 0x55, 0x57, 0x55, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                                       1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 84, 0, 0, 0, 0};
        std::memcpy(msg, hdr, sizeof hdr);
      }
      CHECK(::write(fd, msg, sizeof msg) == static_cast<ssize_t>(sizeof msg), "write");
      AUGUR_RETURN_IF_ERROR(boot->fence());  // rank 1 has dropped it
      ::close(fd);
    }
    std::vector<std::byte> out = filled(0, buf.size(), 2);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e->isend(out.data(), out.size(), 1, 1, kCtx));
    AUGUR_RETURN_IF_ERROR(e->wait(s, kWaitMs));
  } else {
    for (int attempt = 0; attempt < 2; ++attempt) {
      const auto deadline = std::chrono::steady_clock::now() + 60s;
      while (e->wireup_counters().rejected < static_cast<std::uint64_t>(attempt + 1)) {
        AUGUR_RETURN_IF_ERROR(e->progress());
        CHECK(std::chrono::steady_clock::now() < deadline, "the stranger's message was not rejected");
      }
      AUGUR_RETURN_IF_ERROR(boot->fence());
    }
    CHECK(e->peers_connected() == 0, "a stranger's message made a channel");
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecv(buf.data(), buf.size(), 0, 1, kCtx));
    AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
    AUGUR_RETURN_IF_ERROR(check_filled(buf, 0, 2));
    CHECK(e->peers_connected() == 1 && e->wireup_counters().accepted == 1, "rank 0's connection");
  }
  AUGUR_RETURN_IF_ERROR(boot->fence());
  return Status::Ok();
}

TEST(Connect, StrangersAreRejectedAndTheJobGoesOn) { run_ranks(2, stranger_main); }

// A receive posted before its peer is connected gets its credit when the connection is ready:
// rank 0 posts a receive from rank 1 (which starts the connection, as a credit is due), then a
// second one for the "go" it sends back; rank 1's reply to the go lands directly in the first.
Status late_credit_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 8, .eager_limit = 4096, .steering = Steering::kPosted,
                                                        .assist = EngineConfig::Assist::kOff}));
  std::vector<std::byte> data(3000), go(1);
  if (rank == 0) {
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecv(data.data(), data.size(), 1, 4, kCtx));
    CHECK(r->credit_slot < 0, "credited before a connection existed");
    CHECK(e->peers_connected() == 1, "the receive did not start the connection");
    AUGUR_ASSIGN_OR_RETURN(RequestPtr g, e->isend(go.data(), go.size(), 1, 5, kCtx));  // goes once connected
    AUGUR_RETURN_IF_ERROR(e->wait(g, kWaitMs));
    AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
    AUGUR_RETURN_IF_ERROR(check_filled(data, 1, 4));
    CHECK(r->path == Path::kDirect, "the receive posted before the connection was not placed directly");
  } else {
    AUGUR_ASSIGN_OR_RETURN(RequestPtr g, e->irecv(go.data(), go.size(), 0, 5, kCtx));
    AUGUR_RETURN_IF_ERROR(e->wait(g, kWaitMs));
    const std::vector<std::byte> out = filled(1, data.size(), 4);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e->isend(out.data(), out.size(), 0, 4, kCtx));
    AUGUR_RETURN_IF_ERROR(e->wait(s, kWaitMs));
  }
  AUGUR_RETURN_IF_ERROR(boot->fence());
  return Status::Ok();
}

TEST(Connect, AReceivePostedBeforeTheConnectionIsCreditedWhenItIsReady) { run_ranks(2, late_credit_main); }

// Rank 1 leaves (its engine and listener gone) without ever being talked to; rank 0's first send
// to it then fails with PEER_FAILURE naming rank 1, within the connect's bound, and the engine
// goes on: a send to oneself still works.
Status gone_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  {
    AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 8, .eager_limit = 4096, .keepalive_ms = 100000,
                                                          .assist = EngineConfig::Assist::kOff}));
    if (rank == 1) {
      e.reset();  // listener closed
      return boot->fence();
    }
    AUGUR_RETURN_IF_ERROR(boot->fence());  // rank 1's engine is gone
    std::vector<std::byte> out(16, std::byte{1});
    Result<RequestPtr> s = e->isend(out.data(), out.size(), 1, 1, kCtx);
    Status st = s.ok() ? e->wait(*s, kWaitMs) : s.status();
    CHECK(st.code() == Code::kPeerFailure && st.message().find("rank 1") != std::string::npos,
          "send to a rank that left: " + st.to_string());
    std::vector<std::byte> back(16);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecv(back.data(), back.size(), 0, 2, kCtx));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s2, e->isend(out.data(), out.size(), 0, 2, kCtx));
    AUGUR_RETURN_IF_ERROR(e->wait(s2, kWaitMs));
    AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
    CHECK(back == out, "a send to oneself after the failure");
  }
  return Status::Ok();
}

TEST(Connect, ASendToARankWhoseListenerIsGoneFailsIt) { run_ranks(2, gone_main); }

}  // namespace
}  // namespace augur::host
