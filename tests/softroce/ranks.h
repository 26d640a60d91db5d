// Runs a job of N ranks as forked processes connected through a BootstrapServer on loopback:
// each child runs `body(port, rank)` and exits 0 on OK; the test fails for any rank that does not.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/bootstrap.h"

namespace augur::host::testing {

#define CHECK(cond, msg) \
  if (!(cond)) return Status(Code::kInternal, std::string(msg))

inline void run_ranks(int n, const std::function<Status(std::uint16_t port, int rank)>& body) {
  auto server = BootstrapServer::start(n, "127.0.0.1", 0, std::chrono::seconds(120));
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  std::fflush(nullptr);
  std::vector<pid_t> pids(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      Status s = body(server.value()->port(), r);
      if (!s.ok()) std::fprintf(stderr, "rank %d: %s\n", r, s.to_string().c_str());
      std::fflush(nullptr);
      _exit(s.ok() ? 0 : 1);
    }
    pids[static_cast<std::size_t>(r)] = pid;
  }
  for (int r = 0; r < n; ++r) {
    int st = 0;
    ASSERT_EQ(pids[static_cast<std::size_t>(r)], waitpid(pids[static_cast<std::size_t>(r)], &st, 0));
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "rank " << r << " failed (see above)";
  }
  EXPECT_TRUE(server.value()->wait().ok());
}

}  // namespace augur::host::testing
