#include "tcp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>

namespace augur::host::tcp {

namespace {

Result<sockaddr_in> resolve(const std::string& host, std::uint16_t port, int socktype) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = socktype;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0) {
    return Status(Code::kNotFound, "host '" + host + "': " + gai_strerror(rc));
  }
  sockaddr_in sa{};
  std::memcpy(&sa, res->ai_addr, sizeof sa);
  ::freeaddrinfo(res);
  return sa;
}

// One attempt, bounded by the deadline: a blocking connect() toward a host that drops SYNs waits
// out the kernel's retries (about 2 minutes) whatever the caller's bound, and a signal (SIGCHLD
// in the launcher) ends it with EINTR. Returns 0 or the attempt's errno.
int connect_until(int fd, const sockaddr_in& sa, std::chrono::steady_clock::time_point deadline) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return 0;
  if (errno != EINPROGRESS && errno != EINTR) return errno;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLOUT, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
    return err;
  }
}

}  // namespace

Status write_all(int fd, const Bytes& b, std::string_view what) {
  std::size_t off = 0;
  while (off < b.size()) {
    const ssize_t w = ::send(fd, b.data() + off, b.size() - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno_status(errno, std::string(what) + " send");
    off += static_cast<std::size_t>(w);
  }
  return Status::Ok();
}

Result<std::size_t> read_some(int fd, Bytes& in, std::string_view what) {
  unsigned char buf[65536];
  for (;;) {
    const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno_status(errno, std::string(what) + " recv");
    in.insert(in.end(), buf, buf + r);
    return static_cast<std::size_t>(r);
  }
}

Result<Listener> listen(const std::string& addr, std::uint16_t port, std::string_view what, int backlog) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) {
    return Status(Code::kInvalidArgument, std::string(what) + " bind address '" + addr + "' is not an IPv4 address");
  }
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return errno_status(errno, "socket");
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd.get(), backlog) != 0) {
    return errno_status(errno, std::string(what) + " bind/listen on " + addr + ":" + std::to_string(port));
  }
  socklen_t len = sizeof sa;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  return Listener{std::move(fd), ntohs(sa.sin_port)};
}

Result<UniqueFd> connect(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout, std::string_view what) {
  AUGUR_ASSIGN_OR_RETURN(sockaddr_in sa, resolve(host, port, SOCK_STREAM));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {  // the server may not be listening yet
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return errno_status(errno, "socket");
    const int err = connect_until(fd.get(), sa, deadline);
    if (err == 0) {
      const int flags = ::fcntl(fd.get(), F_GETFL);
      if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) return errno_status(errno, "fcntl");
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    fd.reset();
    if (std::chrono::steady_clock::now() > deadline) {
      return errno_status(err, std::string(what) + " connect to " + host + ":" + std::to_string(port))
          .context("within " + std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void enable_keepalive(int fd) {
  int on = 1, idle = kKeepaliveIdleS, intvl = kKeepaliveIntervalS, cnt = kKeepaliveProbes;
  unsigned user_timeout_ms = static_cast<unsigned>(1000 * (kKeepaliveIdleS + kKeepaliveIntervalS * kKeepaliveProbes));
  // Best effort: a socket without these still reports EOF when the peer process dies.
  (void)::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

Result<std::string> local_address_toward(const std::string& host) {
  AUGUR_ASSIGN_OR_RETURN(sockaddr_in sa, resolve(host, 9, SOCK_DGRAM));
  const UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return errno_status(errno, "socket");
  sockaddr_in me{};
  socklen_t len = sizeof me;
  // connect() on a datagram socket only picks the route and source address.
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&me), &len) != 0) {
    return errno_status(errno, "route to " + host);
  }
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &me.sin_addr, buf, sizeof buf);
  return std::string(buf);
}

bool is_local_host(const std::string& host) {
  if (host == "localhost" || host.rfind("127.", 0) == 0) return true;
  char self[256] = {};
  if (::gethostname(self, sizeof self - 1) == 0 && host == self) return true;
  in_addr want{};
  if (inet_pton(AF_INET, host.c_str(), &want) != 1) return false;
  ifaddrs* ifs = nullptr;
  if (::getifaddrs(&ifs) != 0) return false;
  bool local = false;
  for (ifaddrs* i = ifs; i != nullptr && !local; i = i->ifa_next) {
    if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET) {
      local = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == want.s_addr;
    }
  }
  ::freeifaddrs(ifs);
  return local;
}

}  // namespace augur::host::tcp
