// Faults below MPI, through the Engine on the device: a queue pair forced into the error state
// (as on a transport failure) fails its peer, every request involving that peer ends with
// PEER_FAILURE naming it, progress reports it once, and the other peers are untouched.
#include <chrono>
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

// Rank 0 has a receive from rank 1 posted and a rendezvous send to rank 1 waiting for its FIN
// when its QP to rank 1 goes to error; rank 2 keeps talking to rank 0 throughout.
Status qp_error_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 3, 120s));
  // Connected at create: rank 1 waits in the bootstrap's fence, where it could not answer a
  // connection made on first use, and the test is about an established one failing.
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 16, .eager_limit = 8192, .steering = Steering::kOff,
                                                        .assist = EngineConfig::Assist::kOff, .connect_all = true}));
  std::vector<std::byte> big(256 * 1024, std::byte{0x5a});
  std::vector<std::byte> small(64, std::byte{0});
  if (rank == 0) {
    AUGUR_ASSIGN_OR_RETURN(RequestPtr recv, e->irecv(small.data(), small.size(), 1, 1, 3));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr send, e->isend(big.data(), big.size(), 1, 2, 3));  // RTS; rank 1 never reads it
    AUGUR_RETURN_IF_ERROR(boot->fence());  // rank 1 has our RTS or will never need it
    AUGUR_RETURN_IF_ERROR(e->force_qp_error_for_test(1));
    Status st;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (st.ok() && std::chrono::steady_clock::now() < deadline) st = e->progress();
    CHECK(st.code() == Code::kPeerFailure && st.message().find("connection to rank 1 failed") != std::string::npos,
          "progress did not report the failed connection: " + st.to_string());
    CHECK(recv->done && recv->status.code() == Code::kPeerFailure, "posted receive: " + recv->status.to_string());
    CHECK(send->done && send->status.code() == Code::kPeerFailure, "rendezvous send: " + send->status.to_string());
    CHECK(e->progress().ok(), "the failure was reported twice (flushed work must add nothing)");
    auto again = e->isend(small.data(), small.size(), 1, 3, 3);
    CHECK(!again.ok() || (again.value()->done && again.value()->status.code() == Code::kPeerFailure),
          "a send to the failed peer was accepted");
    // Rank 2 is untouched: a round trip with it still works and carries the data.
    std::vector<std::byte> back(4096);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r2, e->irecv(back.data(), back.size(), 2, 9, 3));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s2, e->isend(big.data(), 4096, 2, 8, 3));
    AUGUR_RETURN_IF_ERROR(e->wait(s2, kWaitMs));
    AUGUR_RETURN_IF_ERROR(e->wait(r2, kWaitMs));
    CHECK(back == std::vector<std::byte>(4096, std::byte{0x77}), "data from rank 2");
  } else if (rank == 1) {
    AUGUR_RETURN_IF_ERROR(boot->fence());
  } else {
    AUGUR_RETURN_IF_ERROR(boot->fence());
    std::vector<std::byte> in(4096), out(4096, std::byte{0x77});
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecv(in.data(), in.size(), 0, 8, 3));
    AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
    CHECK(in == std::vector<std::byte>(4096, std::byte{0x5a}), "data from rank 0");
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e->isend(out.data(), out.size(), 0, 9, 3));
    AUGUR_RETURN_IF_ERROR(e->wait(s, kWaitMs));
  }
  AUGUR_RETURN_IF_ERROR(boot->fence());  // nobody tears down while another still talks
  return Status::Ok();
}

TEST(Faults, QpInErrorStateFailsItsPeerOnlyAndEveryRequestInvolvingIt) { run_ranks(3, qp_error_main); }

}  // namespace
}  // namespace augur::host
