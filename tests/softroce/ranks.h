// Runs a job of N ranks as processes (threads on the loopback device) connected through a BootstrapServer: each rank runs
// `body(port, rank)`, connecting to bootstrap_host():port, and exits 0 on OK; the test fails for
// any rank that does not. Ranks are fresh processes (fork + exec of this test binary, filtered to
// the running test), as augurrun starts them: no thread of the parent's is half-inherited (which
// TSan cannot follow). When AUGUR_HOSTS names several hosts (scripts/softroce --vms 2), the job
// is started by augurrun instead, so its ranks are spread over the hosts.
#pragma once

#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/bootstrap.h"
#include "augur/host/spawn.h"

namespace augur::host::testing {

#define CHECK(cond, msg) \
  if (!(cond)) return Status(Code::kInternal, std::string(msg))

// Where a rank finds the job's BootstrapServer: augurrun's address, or loopback.
inline std::string bootstrap_host() {
  const char* b = std::getenv("AUGUR_BOOTSTRAP");
  if (std::getenv("AUGUR_TEST_VIA_LAUNCHER") == nullptr || b == nullptr) return "127.0.0.1";
  const std::string where = b;
  return where.substr(0, where.rfind(':'));
}

inline bool spread_over_hosts() {
  const char* h = std::getenv("AUGUR_HOSTS");
  return h != nullptr && std::string(h).find(',') != std::string::npos;
}

// Every rank re-executes the running test and runs its first run_ranks call, whatever the
// parent's loop was at: a second call in one test (say, a loop over modes) would run the first
// job again and pass without running its own. So a test may call it once; this refuses more.
inline bool first_job_of_this_test() {
  static const ::testing::TestInfo* test = nullptr;
  static long long started = -1;  // tells --gtest_repeat's runs of one test apart
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const long long at = t->result()->start_timestamp();
  if (t == test && at == started) return false;
  test = t;
  started = at;
  return true;
}

// The running test's filter, for a process that re-executes it.
inline std::string this_test_filter() {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string("--gtest_filter=") + t->test_suite_name() + "." + t->name();
}

// AUGUR_DEVICE=loopback: the loopback device connects only threads of one process, so the
// ranks are threads (the native stage runs these tests so, without an RDMA device).
inline bool ranks_are_threads() {
  const char* d = std::getenv("AUGUR_DEVICE");
  return d != nullptr && std::string(d) == "loopback";
}

inline void run_rank_threads(int n, const std::function<Status(std::uint16_t port, int rank)>& body) {
  auto server = BootstrapServer::start(n, "127.0.0.1", 0, std::chrono::seconds(120));
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  std::vector<Status> results(static_cast<std::size_t>(n));
  std::vector<std::thread> ranks;
  for (int r = 0; r < n; ++r) {
    ranks.emplace_back([&, r] { results[static_cast<std::size_t>(r)] = body(server.value()->port(), r); });
  }
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(results[static_cast<std::size_t>(r)].ok()) << "rank " << r << ": " << results[static_cast<std::size_t>(r)].to_string();
  }
  EXPECT_TRUE(server.value()->wait().ok());
}

inline void run_ranks(int n, const std::function<Status(std::uint16_t port, int rank)>& body) {
  if (ranks_are_threads()) return run_rank_threads(n, body);
  const char* me = std::getenv("AUGUR_TEST_RANK");
  const char* port = std::getenv("AUGUR_TEST_PORT");
  if (std::getenv("AUGUR_TEST_VIA_LAUNCHER") != nullptr) {  // started by augurrun
    me = std::getenv("AUGUR_RANK");
    const char* b = std::getenv("AUGUR_BOOTSTRAP");
    port = b != nullptr && std::strchr(b, ':') != nullptr ? std::strrchr(b, ':') + 1 : nullptr;
  }
  if (me != nullptr) {  // one rank of a job started below
    Status s = port != nullptr ? body(static_cast<std::uint16_t>(std::atoi(port)), std::atoi(me))
                               : Status(Code::kInvalidArgument, "no bootstrap port in the environment");
    if (!s.ok()) std::fprintf(stderr, "rank %s: %s\n", me, s.to_string().c_str());
    std::fflush(nullptr);
    _exit(s.ok() ? 0 : 1);
  }
  if (!first_job_of_this_test()) {
    ADD_FAILURE() << "run_ranks called twice in one test: its ranks would run the first call's job again "
                     "(one TEST, or a parameterised test, per job)";
    return;
  }
  const std::string filter = this_test_filter();
  if (spread_over_hosts()) {
    char self[PATH_MAX] = {};
    ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
    // The exchange's fence bound covers a 64 MiB transfer over emulated Ethernet between guests.
    const std::string cmd = std::string("AUGUR_TEST_VIA_LAUNCHER=1 AUGUR_BOOTSTRAP_TIMEOUT=${AUGUR_BOOTSTRAP_TIMEOUT:-300} '") +
                            AUGUR_TEST_AUGURRUN + "' -n " +
                            std::to_string(n) + " -x GTEST_COLOR '" + self + "' " + filter + " --gtest_brief=1";
    std::fflush(nullptr);
    const int st = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "augurrun over " << std::getenv("AUGUR_HOSTS")
                                                        << " failed (see above): " << cmd;
    return;
  }
  auto server = BootstrapServer::start(n, "127.0.0.1", 0, std::chrono::seconds(120));
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  std::fflush(nullptr);
  std::vector<pid_t> pids(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    // Built before fork: the server's thread runs (spawn.h).
    const PreparedExec exec({"/proc/self/exe", filter, "--gtest_brief=1"},
                            {"AUGUR_TEST_RANK=" + std::to_string(r), "AUGUR_TEST_PORT=" + std::to_string(server.value()->port())},
                            "exec of the test binary for rank " + std::to_string(r) + ": ");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) exec.exec();
    pids[static_cast<std::size_t>(r)] = pid;
  }
  for (int r = 0; r < n; ++r) {
    int st = 0;
    ASSERT_EQ(pids[static_cast<std::size_t>(r)], waitpid(pids[static_cast<std::size_t>(r)], &st, 0));
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "rank " << r << " failed (see above)";
  }
  EXPECT_TRUE(server.value()->wait().ok());
}

// For tests whose processes play different parts (not the ranks of one body): the part given to
// this process by start_self, or nullptr in the test's own process. A test checks it first.
inline const char* self_role() { return std::getenv("AUGUR_TEST_ROLE"); }

// Starts the running test again in a fresh process (fork + exec of this binary, filtered to the
// test) with AUGUR_TEST_ROLE=role and `env` added, so that a parent with threads (a bootstrap
// server's) only execs in the child. Returns the child's pid, or -1 after failing the test.
inline pid_t start_self(const std::string& role, std::vector<std::string> env = {}) {
  env.push_back("AUGUR_TEST_ROLE=" + role);
  const PreparedExec exec({"/proc/self/exe", this_test_filter(), "--gtest_brief=1"}, env,
                          "exec of the test binary as " + role + ": ");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) exec.exec();
  if (pid < 0) ADD_FAILURE() << "fork: " << std::strerror(errno);
  return pid;
}

}  // namespace augur::host::testing
