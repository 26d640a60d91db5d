// The bootstrap across the soft-RoCE environment's two "hosts": the server listens in the initial
// network namespace, ranks connect from it and from namespace augur-h2 over the veth pair.
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "augur/host/bootstrap.h"
#include "ranks.h"

namespace augur::host {
namespace {

using namespace std::chrono_literals;

Status rank_main(const std::string& server_addr, std::uint16_t port, int rank, int size) {
  AUGUR_ASSIGN_OR_RETURN(auto b, TcpBootstrap::connect(server_addr, port, rank, size, 60s));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  AUGUR_RETURN_IF_ERROR(b->put("where", std::to_string(rank) + "@" + host));
  AUGUR_RETURN_IF_ERROR(b->fence());
  for (int r = 0; r < size; ++r) {
    AUGUR_ASSIGN_OR_RETURN(std::string v, b->get(r, "where"));
    if (v.rfind(std::to_string(r) + "@", 0) != 0) return Status(Code::kInternal, "rank " + std::to_string(r) + " put '" + v + "'");
  }
  return Status::Ok();
}

// Each rank is this test re-executed (testing::start_self), with its rank and the port: the
// server's thread runs in this process, so a forked child may only exec.
TEST(BootstrapAcrossHosts, RanksInBothNamespacesExchangeKeys) {
  const char* netns = std::getenv("AUGUR_SOFTROCE_NETNS2");
  const char* addr1 = std::getenv("AUGUR_SOFTROCE_ADDR1");
  constexpr int kSize = 4;
  if (testing::self_role() != nullptr) {  // one rank
    const char* rank = std::getenv("AUGUR_TEST_RANK");
    const char* port = std::getenv("AUGUR_TEST_PORT");
    const int r = rank != nullptr ? std::atoi(rank) : -1;
    Status s = netns && addr1 && port && r >= 0 ? Status::Ok() : Status(Code::kInvalidArgument, "rank, port or namespace not given");
    if (s.ok() && r % 2 == 1) {  // odd ranks live on the second host
      int fd = open((std::string("/var/run/netns/") + netns).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) s = errno_status(errno, "setns");
    }
    if (s.ok()) s = rank_main(r % 2 == 1 ? addr1 : "127.0.0.1", static_cast<std::uint16_t>(std::atoi(port)), r, kSize);
    if (!s.ok()) std::fprintf(stderr, "rank %d: %s\n", r, s.to_string().c_str());
    std::fflush(nullptr);
    _exit(s.ok() ? 0 : 1);
  }
  ASSERT_TRUE(netns && addr1) << "needs scripts/softroce --hosts 2 (AUGUR_SOFTROCE_NETNS2, AUGUR_SOFTROCE_ADDR1)";
  auto server = BootstrapServer::start(kSize, "0.0.0.0", 0, 60s);
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  const std::uint16_t port = server.value()->port();
  pid_t pids[kSize];
  for (int r = 0; r < kSize; ++r) {
    pids[r] = testing::start_self("rank", {"AUGUR_TEST_RANK=" + std::to_string(r), "AUGUR_TEST_PORT=" + std::to_string(port)});
    ASSERT_GE(pids[r], 0);
  }
  for (int r = 0; r < kSize; ++r) {
    int st = 0;
    ASSERT_EQ(pids[r], waitpid(pids[r], &st, 0));
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "rank " << r << " failed";
  }
  Status s = server.value()->wait();
  EXPECT_TRUE(s.ok()) << s.to_string();
}

}  // namespace
}  // namespace augur::host
