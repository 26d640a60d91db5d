// Remote launch (host/augur/host/launch.h): the request codec, and a daemon on loopback running
// real processes: output and exit status come back, signals are forwarded, a wrong token is
// refused, oversized and malformed frames are refused while the daemon keeps serving, and a
// launcher that dies takes its rank with it.
#include "augur/host/launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace augur::host::launch {
namespace {

using namespace std::chrono_literals;

Request sample() {
  return Request{"tok", "/tmp", {"/bin/sh", "-c", "echo hi"}, {"AUGUR_X=1", "EMPTY="}};
}

TEST(LaunchCodec, RoundTrips) {
  const auto bytes = encode(sample());
  auto r = decode(bytes);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r.value().token, "tok");
  EXPECT_EQ(r.value().cwd, "/tmp");
  EXPECT_EQ(r.value().argv, sample().argv);
  EXPECT_EQ(r.value().env, sample().env);
}

TEST(LaunchCodec, RejectsMalformedRequests) {
  const auto good = encode(sample());
  for (std::size_t cut = 0; cut < good.size(); ++cut) {  // every truncation
    auto r = decode(std::span(good.data(), cut));
    EXPECT_EQ(r.status().code(), Code::kProtocol) << "cut at " << cut;
  }
  auto trailing = good;
  trailing.push_back(0);
  EXPECT_EQ(decode(trailing).status().code(), Code::kProtocol);

  Request no_prog = sample();
  no_prog.argv.clear();
  EXPECT_EQ(decode(encode(no_prog)).status().code(), Code::kProtocol);
  Request nul = sample();
  nul.argv[2] = std::string("echo\0hi", 7);
  EXPECT_EQ(decode(encode(nul)).status().code(), Code::kProtocol);
  Request bad_env = sample();
  bad_env.env.push_back("NOEQUALS");
  auto r = decode(encode(bad_env));
  EXPECT_EQ(r.status().code(), Code::kProtocol);
  EXPECT_NE(r.status().to_string().find("NOEQUALS"), std::string::npos);

  auto huge_count = good;  // argc claims more entries than allowed
  const std::size_t argc_at = 4 + 3 + 4 + 4;
  huge_count[argc_at] = 0x7f;
  EXPECT_EQ(decode(huge_count).status().code(), Code::kProtocol);
}

// A daemon in a child process on a free loopback port, killed (with its handlers) at the end.
// The forks here need no exec: the process has one thread (launch.cpp starts none, and this
// binary has no BootstrapServer or Engine, augur's only threads).
class DaemonTest : public ::testing::Test {
 protected:
  void start(const std::string& token = "") {
    auto d = Daemon::listen("127.0.0.1", 0, token);
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    port_ = d.value().port();
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      setpgid(0, 0);
      (void)d.value().serve();
      _exit(1);
    }
    setpgid(pid_, pid_);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  struct Out {
    Result<int> status = Status(Code::kInternal, "not run");
    std::string out, err;
  };
  Out run(const Request& req, volatile sig_atomic_t* sig = nullptr) {
    // Files, not pipes: nobody reads while run_remote writes.
    FILE* o = std::tmpfile();
    FILE* e = std::tmpfile();
    Out res;
    res.status = run_remote("127.0.0.1", port_, req, fileno(o), fileno(e), sig, 5s);
    auto drain = [](FILE* f, std::string& s) {
      std::rewind(f);
      char b[4096];
      std::size_t n;
      while ((n = std::fread(b, 1, sizeof b, f)) > 0) s.append(b, n);
      std::fclose(f);
    };
    drain(o, res.out);
    drain(e, res.err);
    return res;
  }
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(DaemonTest, RunsTheRankAndReturnsOutputAndStatus) {
  start();
  Request r{"", "/tmp", {"/bin/sh", "-c", "echo \"$AUGUR_X in $(pwd)\"; echo oops >&2; exit 3"}, {"AUGUR_X=forwarded"}};
  Out o = run(r);
  ASSERT_TRUE(o.status.ok()) << o.status.status().to_string();
  ASSERT_TRUE(WIFEXITED(o.status.value()));
  EXPECT_EQ(3, WEXITSTATUS(o.status.value()));
  EXPECT_EQ("forwarded in /tmp\n", o.out);
  EXPECT_EQ("oops\n", o.err);
}

TEST_F(DaemonTest, LargeOutputArrivesWhole) {
  start();
  Out o = run(Request{"", "", {"/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"}, {}});
  ASSERT_TRUE(o.status.ok()) << o.status.status().to_string();
  EXPECT_EQ(std::string(300000, 'x'), o.out);
}

TEST_F(DaemonTest, MissingProgramExits127WithAMessage) {
  start();
  Out o = run(Request{"", "", {"/nonexistent/prog"}, {}});
  ASSERT_TRUE(o.status.ok()) << o.status.status().to_string();
  EXPECT_TRUE(WIFEXITED(o.status.value()) && WEXITSTATUS(o.status.value()) == 127);
  EXPECT_NE(o.err.find("cannot run /nonexistent/prog"), std::string::npos) << o.err;
}

TEST_F(DaemonTest, ForwardsSignalsToTheRank) {
  start();
  volatile sig_atomic_t sig = SIGTERM;
  Out o = run(Request{"", "", {"/bin/sleep", "60"}, {}}, &sig);
  ASSERT_TRUE(o.status.ok()) << o.status.status().to_string();
  ASSERT_TRUE(WIFSIGNALED(o.status.value()));
  EXPECT_EQ(SIGTERM, WTERMSIG(o.status.value()));
  EXPECT_EQ(0, sig);
}

TEST_F(DaemonTest, RefusesAWrongToken) {
  start("s3cret");
  Out o = run(Request{"guess", "", {"/bin/true"}, {}});
  ASSERT_FALSE(o.status.ok());
  EXPECT_NE(o.status.status().to_string().find("AUGUR_HOSTD_TOKEN"), std::string::npos) << o.status.status().to_string();
  Out good = run(Request{"s3cret", "", {"/bin/true"}, {}});
  ASSERT_TRUE(good.status.ok()) << good.status.status().to_string();
  EXPECT_TRUE(WIFEXITED(good.status.value()) && WEXITSTATUS(good.status.value()) == 0);
}

TEST_F(DaemonTest, ARankDiesWithItsLauncher) {
  start();
  char dir[] = "/tmp/augur-launch-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir));
  const std::string pidfile = std::string(dir) + "/pid";
  const pid_t launcher = fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    auto st = run_remote("127.0.0.1", port_, Request{"", "", {"/bin/sh", "-c", "echo $$ > " + pidfile + "; exec sleep 60"}, {}},
                         STDOUT_FILENO, STDERR_FILENO, nullptr, 5s);
    _exit(st.ok() ? 0 : 1);
  }
  pid_t rank = 0;
  for (int i = 0; i < 200 && rank <= 0; ++i) {
    std::this_thread::sleep_for(50ms);
    std::ifstream f(pidfile);
    if (!(f >> rank)) rank = 0;
  }
  ASSERT_GT(rank, 0) << "the rank never started";
  EXPECT_EQ(0, kill(rank, 0));
  kill(launcher, SIGKILL);
  waitpid(launcher, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::this_thread::sleep_for(50ms);
    gone = kill(rank, 0) != 0;
  }
  EXPECT_TRUE(gone) << "rank " << rank << " outlived its launcher";
  std::remove(pidfile.c_str());
  rmdir(dir);
}


// Raw bytes to the daemon, as a hostile or broken launcher would send them; returns what the
// daemon answers before it closes the connection (bounded: 10 s without a byte fails).
std::string send_raw(std::uint16_t port, const std::vector<unsigned char>& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket failed";
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    got = "connect failed";
  } else if (write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size())) {
    char b[4096];
    ssize_t n;
    while ((n = read(fd, b, sizeof b)) > 0) got.append(b, static_cast<std::size_t>(n));
    if (n < 0) got += "<timed out>";
  }
  close(fd);
  return got;
}

std::vector<unsigned char> header(std::uint32_t magic, std::uint8_t type, std::uint32_t length) {
  std::vector<unsigned char> h(sizeof(FrameHeader), 0);
  auto be = [&h](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) h[at + static_cast<std::size_t>(i)] = static_cast<unsigned char>(v >> (24 - 8 * i));
  };
  be(0, magic);
  h[4] = type;
  be(8, length);
  return h;
}

// An error frame (type 6) whose text contains `what`, and nothing after it.
void expect_refusal(const std::string& reply, const std::string& what) {
  ASSERT_GE(reply.size(), sizeof(FrameHeader)) << "no answer: " << reply;
  EXPECT_EQ(6, static_cast<unsigned char>(reply[4])) << "not an error frame";
  const std::size_t len = (std::size_t{static_cast<unsigned char>(reply[8])} << 24) |
                          (std::size_t{static_cast<unsigned char>(reply[9])} << 16) |
                          (std::size_t{static_cast<unsigned char>(reply[10])} << 8) | static_cast<unsigned char>(reply[11]);
  EXPECT_EQ(reply.size(), sizeof(FrameHeader) + len) << "bytes after the error frame";
  EXPECT_NE(reply.find(what), std::string::npos) << reply.substr(sizeof(FrameHeader));
}

TEST_F(DaemonTest, RefusesOversizedAndMalformedFramesAndKeepsServing) {
  start("s3cret");
  // A launch frame claiming 4 GiB - 1 and one claiming one byte over the 1 MiB bound: refused
  // from the header, before any payload is read or memory reserved for it.
  expect_refusal(send_raw(port_, header(FrameHeader::kMagic, 1, 0xffffffffu)), "payload of 4294967295 bytes");
  expect_refusal(send_raw(port_, header(FrameHeader::kMagic, 1, kMaxRequestBytes + 1)),
                 "payload of " + std::to_string(kMaxRequestBytes + 1) + " bytes");
  // A signal frame over its 64 KiB bound, bad magic, an unknown type, a first frame that is not
  // a launch request.
  expect_refusal(send_raw(port_, header(FrameHeader::kMagic, 2, kMaxDataBytes + 1)), "payload of");
  expect_refusal(send_raw(port_, header(0x47455420, 1, 0)), "bad magic");  // "GET "
  expect_refusal(send_raw(port_, header(FrameHeader::kMagic, 9, 0)), "unknown type 9");
  auto sig = header(FrameHeader::kMagic, 2, 4);
  sig.insert(sig.end(), {0, 0, 0, 15});
  expect_refusal(send_raw(port_, sig), "first frame is not a launch request");
  // Well-formed requests with wrong tokens, several in a row.
  for (int i = 0; i < 3; ++i) {
    Out o = run(Request{"guess" + std::to_string(i), "", {"/bin/true"}, {}});
    ASSERT_FALSE(o.status.ok());
    EXPECT_NE(o.status.status().to_string().find("AUGUR_HOSTD_TOKEN"), std::string::npos);
  }
  // The daemon still serves.
  Out good = run(Request{"s3cret", "", {"/bin/sh", "-c", "echo still here"}, {}});
  ASSERT_TRUE(good.status.ok()) << good.status.status().to_string();
  EXPECT_TRUE(WIFEXITED(good.status.value()) && WEXITSTATUS(good.status.value()) == 0);
  EXPECT_EQ("still here\n", good.out);
}

}  // namespace
// Out of descriptors, accept fails (EMFILE) while a connection waits: the daemon must log it and go
// on, not end (as the host's init in the two-host guests, its end took the host down), and serve
// the waiting launcher once descriptors are back.
TEST_F(DaemonTest, SurvivesRunningOutOfDescriptorsAndServesAfterwards) {
  start();
  rlimit was{};
  ASSERT_EQ(0, prlimit(pid_, RLIMIT_NOFILE, nullptr, &was));
  rlimit none = was;
  none.rlim_cur = 3;  // below the listening socket: every accept is EMFILE
  ASSERT_EQ(0, prlimit(pid_, RLIMIT_NOFILE, &none, nullptr));
  std::thread restore([&] {
    std::this_thread::sleep_for(700ms);  // several failed accepts while the launcher below waits
    EXPECT_EQ(0, waitpid(pid_, nullptr, WNOHANG)) << "the daemon ended on EMFILE";
    EXPECT_EQ(0, prlimit(pid_, RLIMIT_NOFILE, &was, nullptr));
  });
  Out o = run(Request{"", "", {"/bin/sh", "-c", "echo served"}, {}});
  restore.join();
  ASSERT_TRUE(o.status.ok()) << o.status.status().to_string();
  EXPECT_TRUE(WIFEXITED(o.status.value()) && WEXITSTATUS(o.status.value()) == 0);
  EXPECT_EQ("served\n", o.out);
}

}  // namespace
