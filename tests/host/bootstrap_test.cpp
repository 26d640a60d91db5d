// The bootstrap key-value exchange: ranks as threads of this process, each with its own TCP
// connection; misbehaving peers as raw sockets.
#include "augur/host/bootstrap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../../host/bootstrap_wire.h"
#include "augur/settings.h"
#include "augur/unique_fd.h"

namespace augur::host {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<BootstrapServer> start_server(int size, std::chrono::milliseconds timeout = 20s) {
  auto s = BootstrapServer::start(size, "127.0.0.1", 0, timeout);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return std::move(s).value();
}

// A raw connection that speaks the wire format by hand (or does not).
int raw_connect(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(0, ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa));
  return fd;
}

void raw_send(int fd, wire::MsgType type, std::uint32_t rank, std::vector<unsigned char> payload, std::uint32_t magic = wire::Header::kMagic) {
  std::vector<unsigned char> b(16 + payload.size(), 0);
  wire::put_u32(b.data(), magic);
  b[4] = static_cast<unsigned char>(type);
  wire::put_u32(b.data() + 8, rank);
  wire::put_u32(b.data() + 12, static_cast<std::uint32_t>(payload.size()));
  std::copy(payload.begin(), payload.end(), b.begin() + 16);
  ASSERT_EQ(static_cast<ssize_t>(b.size()), ::send(fd, b.data(), b.size(), MSG_NOSIGNAL));
}

std::vector<unsigned char> hello_payload(std::uint32_t size) {
  std::vector<unsigned char> p(4);
  wire::put_u32(p.data(), size);
  return p;
}

TEST(Bootstrap, FourRanksExchangeKeysOverTwoFences) {
  constexpr int kSize = 4;
  auto server = start_server(kSize);
  std::vector<std::thread> ranks;
  std::vector<Status> results(kSize);
  for (int r = 0; r < kSize; ++r) {
    ranks.emplace_back([&, r] {
      results[static_cast<std::size_t>(r)] = [&]() -> Status {
        AUGUR_ASSIGN_OR_RETURN(auto b, TcpBootstrap::connect("127.0.0.1", server->port(), r, kSize, 20s));
        AUGUR_RETURN_IF_ERROR(b->put("qp", "address-of-" + std::to_string(r)));
        AUGUR_RETURN_IF_ERROR(b->put("big", std::string(60000, static_cast<char>('a' + r))));
        AUGUR_RETURN_IF_ERROR(b->fence());
        for (int p = 0; p < kSize; ++p) {
          AUGUR_ASSIGN_OR_RETURN(std::string v, b->get(p, "qp"));
          if (v != "address-of-" + std::to_string(p)) return Status(Code::kInternal, "wrong value " + v);
          AUGUR_ASSIGN_OR_RETURN(std::string big, b->get(p, "big"));
          if (big != std::string(60000, static_cast<char>('a' + p))) return Status(Code::kInternal, "big value corrupted");
        }
        if (b->get(0, "second").ok()) return Status(Code::kInternal, "a key was visible before its fence");
        AUGUR_RETURN_IF_ERROR(b->put("second", std::to_string(r * r)));
        AUGUR_RETURN_IF_ERROR(b->fence());
        for (int p = 0; p < kSize; ++p) {
          AUGUR_ASSIGN_OR_RETURN(std::string v, b->get(p, "second"));
          if (v != std::to_string(p * p)) return Status(Code::kInternal, "second round: wrong value " + v);
        }
        if (b->get(1, "never-put").status().code() != Code::kNotFound) return Status(Code::kInternal, "missing key not kNotFound");
        return Status::Ok();
      }();
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kSize; ++r) EXPECT_TRUE(results[static_cast<std::size_t>(r)].ok()) << "rank " << r << ": " << results[static_cast<std::size_t>(r)].to_string();
  Status s = server->wait();
  EXPECT_TRUE(s.ok()) << s.to_string();
}

TEST(Bootstrap, DeadRankIsReportedToTheOthersInsteadOfAHang) {
  auto server = start_server(3);
  int dead = raw_connect(server->port());
  raw_send(dead, wire::MsgType::kHello, 2, hello_payload(3));
  std::vector<std::thread> ranks;
  std::vector<Status> results(2);
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      auto b = TcpBootstrap::connect("127.0.0.1", server->port(), r, 3, 20s);
      results[static_cast<std::size_t>(r)] = b.ok() ? b.value()->fence() : b.status();
    });
  }
  std::this_thread::sleep_for(200ms);
  ::close(dead);  // rank 2 dies without a word
  for (auto& t : ranks) t.join();
  for (const Status& s : results) {
    EXPECT_EQ(s.code(), Code::kPeerFailure) << s.to_string();
    EXPECT_NE(s.message().find("rank 2 disconnected"), std::string::npos) << s.to_string();
  }
  EXPECT_EQ(server->wait().code(), Code::kPeerFailure);
}

TEST(Bootstrap, MissingRankTimesOutNamingIt) {
  auto server = start_server(2, 300ms);
  auto b = TcpBootstrap::connect("127.0.0.1", server->port(), 0, 2, 300ms);
  ASSERT_TRUE(b.ok());
  Status s = b.value()->fence();
  EXPECT_EQ(s.code(), Code::kPeerFailure) << s.to_string();
  EXPECT_NE(s.message().find("ranks 1 did not connect within 300 ms"), std::string::npos) << s.to_string();
  EXPECT_EQ(server->wait().code(), Code::kTimeout);
}

// The deadline covers waiting on the exchange only: a job that computes for many times the
// timeout between fences (as every real job does between MPI_Init and MPI_Finalize) lives.
TEST(Bootstrap, JobComputingLongerThanTheTimeoutBetweenFencesLives) {
  constexpr auto kTimeout = 200ms;
  auto server = start_server(2, kTimeout);
  std::vector<std::thread> ranks;
  std::vector<Status> results(2);
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      results[static_cast<std::size_t>(r)] = [&]() -> Status {
        AUGUR_ASSIGN_OR_RETURN(auto b, TcpBootstrap::connect("127.0.0.1", server->port(), r, 2, kTimeout));
        AUGUR_RETURN_IF_ERROR(b->fence());
        for (int i = 0; i < 10; ++i) {  // 2 s of "computation", alive all along
          std::this_thread::sleep_for(kTimeout);
          int dead = -2;
          AUGUR_RETURN_IF_ERROR(b->check_alive(&dead));
        }
        AUGUR_RETURN_IF_ERROR(b->put("k", std::to_string(r)));
        AUGUR_RETURN_IF_ERROR(b->fence());
        AUGUR_ASSIGN_OR_RETURN(std::string v, b->get(1 - r, "k"));
        if (v != std::to_string(1 - r)) return Status(Code::kInternal, "wrong value " + v);
        return Status::Ok();
      }();
    });
  }
  for (auto& t : ranks) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_TRUE(server->wait().ok());
}

// Once one rank is in a fence, the deadline runs: a rank that never arrives is named.
TEST(Bootstrap, RankThatNeverReachesTheFenceIsCaughtAfterALongJob) {
  constexpr auto kTimeout = 200ms;
  auto server = start_server(2, kTimeout);
  Status first, late;
  std::thread r1([&] {
    auto b = TcpBootstrap::connect("127.0.0.1", server->port(), 1, 2, kTimeout);
    ASSERT_TRUE(b.ok());
    ASSERT_TRUE(b.value()->fence().ok());
    std::this_thread::sleep_for(1500ms);  // computes past the timeout, then hangs: never fences again
    int dead = -2;
    late = b.value()->check_alive(&dead);
  });
  auto b0 = TcpBootstrap::connect("127.0.0.1", server->port(), 0, 2, kTimeout);
  ASSERT_TRUE(b0.ok());
  ASSERT_TRUE(b0.value()->fence().ok());
  std::this_thread::sleep_for(4 * kTimeout);  // longer than the timeout: nothing may fire yet
  int dead = -2;
  EXPECT_TRUE(b0.value()->check_alive(&dead).ok());
  first = b0.value()->fence();
  r1.join();
  EXPECT_EQ(first.code(), Code::kPeerFailure) << first.to_string();
  EXPECT_NE(first.message().find("ranks 1 did not reach the fence within 200 ms"), std::string::npos) << first.to_string();
  EXPECT_EQ(late.code(), Code::kPeerFailure) << late.to_string();  // the laggard learns the job is over
  EXPECT_EQ(server->wait().code(), Code::kTimeout);
}

// Between fences, a rank that dies is seen through its connection, long after any deadline.
TEST(Bootstrap, RankDyingLongAfterTheLastFenceIsReported) {
  constexpr auto kTimeout = 200ms;
  auto server = start_server(2, kTimeout);
  int raw = raw_connect(server->port());
  raw_send(raw, wire::MsgType::kHello, 1, hello_payload(2));
  raw_send(raw, wire::MsgType::kFence, 1, {});
  auto b = TcpBootstrap::connect("127.0.0.1", server->port(), 0, 2, kTimeout);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(b.value()->fence().ok());
  std::this_thread::sleep_for(5 * kTimeout);
  int dead = -2;
  ASSERT_TRUE(b.value()->check_alive(&dead).ok());
  ::close(raw);  // rank 1's process ends without BYE
  Status s;
  for (int i = 0; i < 200 && s.ok(); ++i) {
    std::this_thread::sleep_for(10ms);
    s = b.value()->check_alive(&dead);
  }
  EXPECT_EQ(s.code(), Code::kPeerFailure) << s.to_string();
  EXPECT_EQ(dead, 1);
  EXPECT_EQ(server->wait().code(), Code::kPeerFailure);
}

TEST(Bootstrap, MalformedMessageFromARankAbortsTheJob) {
  auto server = start_server(2);
  int bad = raw_connect(server->port());
  raw_send(bad, wire::MsgType::kHello, 1, hello_payload(2));
  std::vector<unsigned char> put = {0xff, 0xff, 'k'};  // key length 65535, 1 byte present
  raw_send(bad, wire::MsgType::kPut, 1, put);
  auto b = TcpBootstrap::connect("127.0.0.1", server->port(), 0, 2, 20s);
  ASSERT_TRUE(b.ok());
  Status s = b.value()->fence();
  EXPECT_EQ(s.code(), Code::kPeerFailure) << s.to_string();
  EXPECT_NE(s.message().find("rank 1 sent a malformed bootstrap message: malformed PUT"), std::string::npos) << s.to_string();
  EXPECT_EQ(server->wait().code(), Code::kProtocol);
  ::close(bad);
}

TEST(Bootstrap, StrayConnectionIsDroppedAndTheJobGoesOn) {
  auto server = start_server(1);
  int stray = raw_connect(server->port());
  raw_send(stray, wire::MsgType::kPut, 0, {0, 1, 'k'}, 0x12345678);  // bad magic, never said HELLO
  {
    auto b = TcpBootstrap::connect("127.0.0.1", server->port(), 0, 1, 20s);
    ASSERT_TRUE(b.ok());
    ASSERT_TRUE(b.value()->put("k", "v").ok());
    Status s = b.value()->fence();
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(b.value()->get(0, "k").value(), "v");
  }
  EXPECT_TRUE(server->wait().ok());
  ::close(stray);
}

TEST(Bootstrap, DuplicateRankIsRejected) {
  auto server = start_server(2);
  auto a = TcpBootstrap::connect("127.0.0.1", server->port(), 0, 2, 20s);
  ASSERT_TRUE(a.ok());
  auto dup = TcpBootstrap::connect("127.0.0.1", server->port(), 0, 2, 20s);
  ASSERT_TRUE(dup.ok());  // connecting succeeds; the server notices at HELLO
  Status s = a.value()->fence();
  EXPECT_NE(s.message().find("rank already connected"), std::string::npos) << s.to_string();
}

// The settings table's ranges for AUGUR_SIZE and AUGUR_RANK are the bootstrap's bounds.
TEST(Bootstrap, SettingsRangesAreTheBootstrapBounds) {
  int checked = 0;
  for (const Setting& s : settings()) {
    if (s.name == "AUGUR_SIZE") {
      EXPECT_EQ(s.max, kMaxRanks);
      ++checked;
    } else if (s.name == "AUGUR_RANK") {
      EXPECT_EQ(s.max, kMaxRanks - 1);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2);
}

TEST(Bootstrap, BadArgumentsAndSettingsAreClearErrors) {
  EXPECT_EQ(TcpBootstrap::connect("127.0.0.1", 1, 3, 2, 1s).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(BootstrapServer::start(0, "127.0.0.1", 0, 1s).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(BootstrapServer::start(2, "not-an-ip", 0, 1s).status().code(), Code::kInvalidArgument);
  setenv("AUGUR_BOOTSTRAP", "no-port-here", 1);
  Status s = TcpBootstrap::from_settings().status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("expected host:port"), std::string::npos);
  setenv("AUGUR_BOOTSTRAP", "127.0.0.1:1", 1);
  setenv("AUGUR_SIZE", "2", 1);
  setenv("AUGUR_RANK", "2", 1);
  EXPECT_EQ(TcpBootstrap::from_settings().status().message(), "AUGUR_RANK=2: expected an integer in [0, 1] (AUGUR_SIZE=2)");
  setenv("AUGUR_SIZE", "65537", 1);
  EXPECT_EQ(TcpBootstrap::from_settings().status().message(), "AUGUR_SIZE=65537: expected an integer in [1, 65536]");
  unsetenv("AUGUR_BOOTSTRAP");
  unsetenv("AUGUR_SIZE");
  unsetenv("AUGUR_RANK");

  auto server = start_server(1);
  auto b = TcpBootstrap::connect("127.0.0.1", server->port(), 0, 1, 5s);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.value()->put(std::string(300, 'k'), "v").code(), Code::kInvalidArgument);
  EXPECT_EQ(b.value()->put("k", std::string(70000, 'v')).code(), Code::kInvalidArgument);
  EXPECT_EQ(b.value()->put("", "v").code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace augur::host

namespace augur::host {
namespace {
TEST(Bootstrap, CheckAliveNamesTheRankThatDied) {
  auto server = BootstrapServer::start(3, "127.0.0.1", 0, std::chrono::seconds(20));
  ASSERT_TRUE(server.ok());
  auto a = TcpBootstrap::connect("127.0.0.1", server.value()->port(), 0, 3, std::chrono::seconds(20));
  auto b = TcpBootstrap::connect("127.0.0.1", server.value()->port(), 1, 3, std::chrono::seconds(20));
  ASSERT_TRUE(a.ok() && b.ok());
  int dead = 7;
  EXPECT_TRUE(a.value()->check_alive(&dead).ok());
  EXPECT_EQ(dead, -1);
  int fd = raw_connect(server.value()->port());
  raw_send(fd, wire::MsgType::kHello, 2, hello_payload(3));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::close(fd);  // rank 2 dies
  Status s;
  for (int i = 0; i < 100 && s.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s = a.value()->check_alive(&dead);
  }
  EXPECT_EQ(s.code(), Code::kPeerFailure) << s.to_string();
  EXPECT_EQ(dead, 2);
  EXPECT_NE(s.message().find("rank 2 disconnected"), std::string::npos);
  dead = -5;
  EXPECT_FALSE(a.value()->check_alive(&dead).ok());  // sticky, and still names the rank
  EXPECT_EQ(dead, 2);
}
}  // namespace
}  // namespace augur::host

namespace augur::host {
namespace {
// A launcher whose host drops off the network: the rank's connection is reset (or given up by
// keepalive, ETIMEDOUT). Every other rank is then out of reach: the program sees failed
// processes (MPI_ERR_PROC_FAILED), not an unclassified I/O error.
TEST(Bootstrap, ALostServerConnectionIsAPeerFailure) {
  const UniqueFd lfd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(lfd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(::listen(lfd.get(), 1), 0);
  socklen_t len = sizeof sa;
  ASSERT_EQ(::getsockname(lfd.get(), reinterpret_cast<sockaddr*>(&sa), &len), 0);
  auto b = TcpBootstrap::connect("127.0.0.1", ntohs(sa.sin_port), 0, 2, std::chrono::seconds(5));
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  UniqueFd conn(::accept(lfd.get(), nullptr, nullptr));
  ASSERT_TRUE(conn.valid());
  int dead = 7;
  EXPECT_TRUE(b.value()->check_alive(&dead).ok());
  const linger rst{1, 0};  // close with a reset
  ASSERT_EQ(::setsockopt(conn.get(), SOL_SOCKET, SO_LINGER, &rst, sizeof rst), 0);
  conn.reset();
  Status s;
  for (int i = 0; i < 100 && s.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    s = b.value()->check_alive(&dead);
  }
  EXPECT_EQ(s.code(), Code::kPeerFailure) << s.to_string();
  EXPECT_NE(s.message().find("lost the connection to the bootstrap server"), std::string::npos) << s.to_string();
  EXPECT_EQ(dead, -1);  // no one rank is named: all are out of reach
}
}  // namespace
}  // namespace augur::host
