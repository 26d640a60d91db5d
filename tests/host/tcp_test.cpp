// The TCP plumbing under bootstrap and remote launch: bounds that hold when the network does not.
#include "../../host/tcp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <vector>

#include <gtest/gtest.h>

namespace augur::host {
namespace {

// A listener whose accept queue is full: Linux drops every further SYN, as a host behind a cut
// link does, so a connect() toward it gets no answer at all.
struct FullListener {
  UniqueFd fd;
  std::uint16_t port = 0;
  std::vector<UniqueFd> queued;
};

FullListener full_listener() {
  FullListener l;
  l.fd = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(l.fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  EXPECT_EQ(::listen(l.fd.get(), 0), 0);
  socklen_t len = sizeof sa;
  EXPECT_EQ(::getsockname(l.fd.get(), reinterpret_cast<sockaddr*>(&sa), &len), 0);
  l.port = ntohs(sa.sin_port);
  for (int i = 0; i < 3; ++i) {  // backlog 0 holds one; the rest stay unanswered
    UniqueFd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    (void)::connect(c.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    l.queued.push_back(std::move(c));
  }
  return l;
}

TEST(Tcp, ConnectTowardAHostThatNeverAnswersEndsAtItsBound) {
  FullListener l = full_listener();
  const auto t0 = std::chrono::steady_clock::now();
  Result<UniqueFd> c = tcp::connect("127.0.0.1", l.port, std::chrono::milliseconds(400), "test");
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kTimeout) << c.status().to_string();
  EXPECT_NE(c.status().to_string().find("within 400 ms"), std::string::npos) << c.status().to_string();
  // A blocking connect() waits out the kernel's SYN retries (about 2 minutes at the default
  // tcp_syn_retries) whatever the bound; this bounds the call, not its speed.
  EXPECT_LT(took, std::chrono::seconds(30));
}

TEST(Tcp, ConnectRetriesUntilTheServerListensAndReturnsABlockingSocket) {
  Result<tcp::Listener> l = tcp::listen("127.0.0.1", 0, "test");
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  Result<UniqueFd> c = tcp::connect("127.0.0.1", l->port, std::chrono::milliseconds(2000), "test");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(::fcntl(c->get(), F_GETFL) & O_NONBLOCK, 0);  // callers read and write it blocking
  // Nobody listens on a port that was just closed: refused, retried, then reported.
  const std::uint16_t port = l->port;
  l->fd.reset();
  Result<UniqueFd> none = tcp::connect("127.0.0.1", port, std::chrono::milliseconds(200), "test");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().to_string().find("within 200 ms"), std::string::npos) << none.status().to_string();
}

}  // namespace
}  // namespace augur::host
