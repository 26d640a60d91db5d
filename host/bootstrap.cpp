#include "augur/host/bootstrap.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "augur/settings.h"
#include "bootstrap_wire.h"
#include "tcp.h"

namespace augur::host {

namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<unsigned char>;

Status write_all(int fd, const Bytes& b) { return tcp::write_all(fd, b, "bootstrap"); }

using wire::frame;  // the codec lives in bootstrap_wire.h (tests/fuzz drives it)
using wire::Frame;
using wire::take_frame;

// Reads whatever is available (after poll said so); 0 bytes read means the peer closed.
Result<std::size_t> read_some(int fd, Bytes& in) { return tcp::read_some(fd, in, "bootstrap"); }

using wire::append_entry;
using wire::Entry;

Status check_key_value(std::size_t key_len, std::size_t value_len) {
  if (key_len == 0 || key_len > kMaxKeyBytes) return Status(Code::kInvalidArgument, "key length " + std::to_string(key_len) + " not in [1, 256]");
  if (value_len > kMaxValueBytes) return Status(Code::kInvalidArgument, "value of " + std::to_string(value_len) + " bytes exceeds 64 KiB");
  return Status::Ok();
}

struct Conn {
  int fd = -1;
  int rank = -1;  // -1 until HELLO
  Bytes in;
  bool fenced = false;
  bool bye = false;
  std::size_t keys = 0;
};

}  // namespace

BootstrapServer::BootstrapServer(int size, UniqueFd listen_fd, std::uint16_t port, std::chrono::milliseconds timeout)
    : size_(size), listen_fd_(std::move(listen_fd)), port_(port), timeout_(timeout) {}

Result<std::unique_ptr<BootstrapServer>> BootstrapServer::start(int size, const std::string& bind_addr, std::uint16_t port,
                                                                std::chrono::milliseconds timeout) {
  if (size < 1 || size > kMaxRanks) return Status(Code::kInvalidArgument, "job size " + std::to_string(size));
  AUGUR_ASSIGN_OR_RETURN(tcp::Listener l, tcp::listen(bind_addr, port, "bootstrap"));
  std::unique_ptr<BootstrapServer> srv(new BootstrapServer(size, std::move(l.fd), l.port, timeout));
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) return errno_status(errno, "pipe2");
  srv->wake_rd_.reset(wake[0]);
  srv->wake_wr_.reset(wake[1]);
  srv->thread_ = std::thread([s = srv.get()] { s->run(); });
  return srv;
}

BootstrapServer::~BootstrapServer() {
  if (thread_.joinable()) {
    const char c = 'q';
    (void)!::write(wake_wr_.get(), &c, 1);
    thread_.join();
  }
}

Status BootstrapServer::wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return done_; });
  return result_;
}

void BootstrapServer::finish(Status result) {
  std::lock_guard lock(mu_);
  if (done_) return;
  result_ = std::move(result);
  done_ = true;
  cv_.notify_all();
}

void BootstrapServer::run() {
  std::vector<Conn> conns;
  std::vector<Entry> pending;  // puts since the last fence, delivered with the next FenceDone
  int said_bye = 0;
  // Deadlines run only while the job waits on the exchange: until every rank has connected, and
  // from the first FENCE of a round until the round completes. Between fences a rank may compute
  // for days; its liveness is its connection (EOF when the process dies, keepalive when the host
  // does), never a timer.
  const auto connect_deadline = Clock::now() + timeout_;
  auto fence_deadline = Clock::time_point::max();  // armed by the first FENCE of a round
  int joined = 0;

  // After a failure the server stays up until destroyed: every rank, also one that connects late,
  // is told why the job aborted instead of waiting for its own timeout.
  Bytes abort_msg;
  auto fail = [&](const Status& why, int dead_rank = -1) {
    // header.rank carries the rank that died, or 0xffffffff when no single rank did.
    abort_msg = frame(wire::MsgType::kAbort, dead_rank < 0 ? 0xffffffffu : static_cast<std::uint32_t>(dead_rank),
                      Bytes(why.message().begin(), why.message().end()));
    for (Conn& c : conns) {
      if (c.fd >= 0 && !c.bye) (void)write_all(c.fd, abort_msg);
    }
    finish(why);
  };
  auto missing = [&](auto pred) {
    std::vector<bool> seen(static_cast<std::size_t>(size_), false);
    for (const Conn& c : conns) {
      if (c.rank >= 0 && pred(c)) seen[static_cast<std::size_t>(c.rank)] = true;
    }
    std::string list;
    for (int r = 0; r < size_; ++r) {
      if (!seen[static_cast<std::size_t>(r)]) list += (list.empty() ? "" : ",") + std::to_string(r);
    }
    return list;
  };

  for (;;) {
    std::vector<pollfd> pfds{{wake_rd_.get(), POLLIN, 0}, {listen_fd_.get(), POLLIN, 0}};
    for (const Conn& c : conns) pfds.push_back({c.fd, POLLIN, 0});
    const bool failed_before = !abort_msg.empty();
    const auto deadline = std::min(joined < size_ ? connect_deadline : Clock::time_point::max(), fence_deadline);
    int wait_ms = -1;
    if (!failed_before && deadline != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      wait_ms = static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
    }
    const int rc = ::poll(pfds.data(), pfds.size(), wait_ms);
    if (rc < 0 && errno == EINTR) continue;
    if (pfds[0].revents) {
      if (!failed_before) fail(Status(Code::kUnavailable, "bootstrap server shut down"));
      break;
    }
    if (rc == 0 && !failed_before && Clock::now() >= deadline) {
      const bool connecting = joined < size_;
      const std::string who =
          connecting ? missing([](const Conn&) { return true; }) : missing([](const Conn& c) { return c.fenced; });
      fail(Status(Code::kTimeout, "bootstrap: ranks " + who + (connecting ? " did not connect" : " did not reach the fence") +
                                      " within " + std::to_string(timeout_.count()) + " ms"));
      continue;
    }
    const std::size_t polled = pfds.size() - 2;  // connections accepted below were not polled
    if (pfds[1].revents & POLLIN) {
      int fd = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        tcp::enable_keepalive(fd);
        Conn c;
        c.fd = fd;
        if (failed_before) (void)write_all(fd, abort_msg);
        conns.push_back(std::move(c));
      }
    }
    if (failed_before) {  // discard input; close connections as their ranks go away
      for (std::size_t i = 0; i < polled; ++i) {
        Conn& c = conns[i];
        if (!(pfds[i + 2].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        c.in.clear();
        Result<std::size_t> n = read_some(c.fd, c.in);
        if (!n.ok() || n.value() == 0) {
          ::close(c.fd);
          c.fd = -1;
        }
      }
      conns.erase(std::remove_if(conns.begin(), conns.end(), [](const Conn& c) { return c.fd < 0; }), conns.end());
      continue;
    }
    bool failed = false;
    for (std::size_t i = 0; i < polled && !failed; ++i) {
      Conn& c = conns[i];
      if (!(pfds[i + 2].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Result<std::size_t> n = read_some(c.fd, c.in);
      if (!n.ok() || n.value() == 0) {
        if (c.rank >= 0 && !c.bye) {
          fail(Status(Code::kPeerFailure, "rank " + std::to_string(c.rank) + " disconnected from the bootstrap"), c.rank);
          failed = true;
        }
        ::close(c.fd);
        c.fd = -1;
        continue;
      }
      Frame f;
      for (;;) {
        Result<bool> got = take_frame(c.in, f);
        Status bad;
        if (!got.ok()) {
          bad = got.status();
        } else if (!got.value()) {
          break;
        } else if (c.rank < 0 && f.type != wire::MsgType::kHello) {
          bad = Status(Code::kProtocol, "first message is not HELLO");
        } else if (f.type == wire::MsgType::kHello) {
          const bool dup = std::any_of(conns.begin(), conns.end(), [&](const Conn& o) { return o.rank == static_cast<int>(f.rank); });
          if (c.rank >= 0 || f.payload.size() != 4 || f.rank >= static_cast<std::uint32_t>(size_) || dup ||
              wire::get_u32(f.payload.data()) != static_cast<std::uint32_t>(size_)) {
            bad = Status(Code::kProtocol, "bad HELLO (rank " + std::to_string(f.rank) + " of a job of " +
                                              std::to_string(size_) + (dup ? ", rank already connected)" : ")"));
          } else {
            c.rank = static_cast<int>(f.rank);
          }
        } else if (f.type == wire::MsgType::kPut) {
          const std::size_t kl = f.payload.size() >= 2 ? wire::get_u16(f.payload.data()) : 0;
          if (f.payload.size() < 2 || kl > f.payload.size() - 2) {
            bad = Status(Code::kProtocol, "malformed PUT");
          } else if (Status s = check_key_value(kl, f.payload.size() - 2 - kl); !s.ok()) {
            bad = s;
          } else if (++c.keys > kMaxKeysPerRank) {
            bad = Status(Code::kResourceExhausted, "more than 4096 keys");
          } else {
            const auto* p = reinterpret_cast<const char*>(f.payload.data()) + 2;
            pending.push_back({static_cast<std::uint32_t>(c.rank), std::string(p, kl),
                               std::string(p + kl, f.payload.size() - 2 - kl)});
          }
        } else if (f.type == wire::MsgType::kFence) {
          if (c.fenced) bad = Status(Code::kProtocol, "second FENCE before the first completed");
          if (!std::any_of(conns.begin(), conns.end(), [](const Conn& o) { return o.fenced; })) {
            fence_deadline = Clock::now() + timeout_;  // the first rank to fence starts the clock
          }
          c.fenced = true;
        } else if (f.type == wire::MsgType::kBye) {
          c.bye = true;
          ++said_bye;
        } else {
          bad = Status(Code::kProtocol, "unexpected message type");
        }
        if (!bad.ok()) {
          const bool stray = c.rank < 0 && !(got.ok() && f.type == wire::MsgType::kHello);
          if (stray) {  // never claimed a rank (a port scanner, a stale client): drop it only
            ::close(c.fd);
            c.fd = -1;
            break;
          }
          const int who = c.rank >= 0 ? c.rank : static_cast<int>(f.rank);
          fail(bad.context("rank " + std::to_string(who) + " sent a malformed bootstrap message"));
          failed = true;
          break;
        }
      }
    }
    conns.erase(std::remove_if(conns.begin(), conns.end(), [](const Conn& c) { return c.fd < 0; }), conns.end());
    if (failed) continue;
    if (said_bye == size_) {
      finish(Status::Ok());
      break;
    }
    joined = std::max(joined, static_cast<int>(std::count_if(conns.begin(), conns.end(), [](const Conn& c) { return c.rank >= 0; })));
    const int fenced = static_cast<int>(std::count_if(conns.begin(), conns.end(), [](const Conn& c) { return c.fenced; }));
    const int present = static_cast<int>(std::count_if(conns.begin(), conns.end(), [](const Conn& c) { return c.rank >= 0; }));
    if (present == size_ && fenced == size_) {
      Bytes payload;
      for (const Entry& e : pending) append_entry(payload, e);
      pending.clear();
      const Bytes msg = frame(wire::MsgType::kFenceDone, 0, payload);
      for (Conn& c : conns) {
        c.fenced = false;
        (void)write_all(c.fd, msg);
      }
      fence_deadline = Clock::time_point::max();  // until the next round's first FENCE
    }
  }
  for (Conn& c : conns) ::close(c.fd);
}

Result<std::unique_ptr<TcpBootstrap>> TcpBootstrap::connect(const std::string& host, std::uint16_t port, int rank, int size,
                                                            std::chrono::milliseconds timeout) {
  if (size < 1 || size > kMaxRanks || rank < 0 || rank >= size) {
    return Status(Code::kInvalidArgument, "rank " + std::to_string(rank) + " of a job of " + std::to_string(size));
  }
  AUGUR_ASSIGN_OR_RETURN(UniqueFd fd, tcp::connect(host, port, timeout, "bootstrap"));
  tcp::enable_keepalive(fd.get());  // a launcher whose host vanished is seen, not waited for
  Bytes hello(4);
  wire::put_u32(hello.data(), static_cast<std::uint32_t>(size));
  std::unique_ptr<TcpBootstrap> b(new TcpBootstrap(std::move(fd), rank, size, timeout));
  AUGUR_RETURN_IF_ERROR(write_all(b->fd_.get(), frame(wire::MsgType::kHello, static_cast<std::uint32_t>(rank), hello)));
  return b;
}

Result<std::unique_ptr<TcpBootstrap>> TcpBootstrap::from_settings() {
  AUGUR_ASSIGN_OR_RETURN(std::string where, setting_string("AUGUR_BOOTSTRAP"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t size, setting_int("AUGUR_SIZE"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t rank, setting_int("AUGUR_RANK"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t secs, setting_int("AUGUR_BOOTSTRAP_TIMEOUT"));
  if (rank >= size) {  // the one bound the table cannot hold: it depends on another setting
    return Status(Code::kInvalidArgument, "AUGUR_RANK=" + std::to_string(rank) + ": expected an integer in [0, " +
                                              std::to_string(size - 1) + "] (AUGUR_SIZE=" + std::to_string(size) + ")");
  }
  const auto colon = where.rfind(':');
  if (where.empty() || colon == std::string::npos) {
    return Status(Code::kInvalidArgument, "AUGUR_BOOTSTRAP='" + where + "': expected host:port (set by augurrun)");
  }
  const std::string host = where.substr(0, colon);
  char* end = nullptr;
  const unsigned long port = std::strtoul(where.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port == 0 || port > 65535) {
    return Status(Code::kInvalidArgument, "AUGUR_BOOTSTRAP='" + where + "': bad port");
  }
  return connect(host, static_cast<std::uint16_t>(port), static_cast<int>(rank), static_cast<int>(size),
                 std::chrono::seconds(secs));
}

TcpBootstrap::~TcpBootstrap() {
  (void)write_all(fd_.get(), frame(wire::MsgType::kBye, static_cast<std::uint32_t>(rank_), {}));
}

Status TcpBootstrap::put(std::string_view key, std::string_view value) {
  const std::lock_guard lock(mu_);
  AUGUR_RETURN_IF_ERROR(check_key_value(key.size(), value.size()));
  if (++keys_put_ > kMaxKeysPerRank) return Status(Code::kResourceExhausted, "more than 4096 bootstrap keys");
  Bytes p(2 + key.size() + value.size());
  wire::put_u16(p.data(), static_cast<std::uint16_t>(key.size()));
  std::memcpy(p.data() + 2, key.data(), key.size());
  std::memcpy(p.data() + 2 + key.size(), value.data(), value.size());
  AUGUR_RETURN_IF_ERROR(write_all(fd_.get(), frame(wire::MsgType::kPut, static_cast<std::uint32_t>(rank_), p)));
  kv_[{rank_, std::string(key)}] = std::string(value);
  return Status::Ok();
}

Status TcpBootstrap::fence() {
  const std::lock_guard lock(mu_);
  AUGUR_RETURN_IF_ERROR(write_all(fd_.get(), frame(wire::MsgType::kFence, static_cast<std::uint32_t>(rank_), {})));
  const auto deadline = Clock::now() + timeout_ + std::chrono::seconds(5);  // the server times out first
  Frame f;
  for (;;) {
    AUGUR_ASSIGN_OR_RETURN(bool got, take_frame(in_, f));
    if (got) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Status(Code::kTimeout, "bootstrap fence: no answer from the server");
    pollfd pfd{fd_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left)) <= 0) continue;
    AUGUR_ASSIGN_OR_RETURN(std::size_t n, read_some(fd_.get(), in_));
    if (n == 0) return Status(Code::kPeerFailure, "bootstrap server closed the connection during a fence");
  }
  if (f.type == wire::MsgType::kAbort) {
    return Status(Code::kPeerFailure, "job aborted: " + std::string(f.payload.begin(), f.payload.end()));
  }
  if (f.type != wire::MsgType::kFenceDone) return Status(Code::kProtocol, "bootstrap: unexpected reply to FENCE");
  return wire::parse_fence_done(f.payload, static_cast<std::uint32_t>(size_), [this](Entry&& e) {
    kv_[{static_cast<int>(e.rank), std::move(e.key)}] = std::move(e.value);
  });
}

Status TcpBootstrap::check_alive(int* dead_rank) {
  // An assist thread asks while the application may be in a fence (which itself reports a dead
  // rank): never wait for it, just look again next time.
  const std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return Status::Ok();
  *dead_rank = last_dead_;
  if (!aborted_.ok()) return aborted_;
  // Between fences the server only ever sends ABORT. Bytes read earlier (with the last
  // FenceDone) are kept in in_, so an ABORT that arrived right behind it is not lost.
  Frame f;
  AUGUR_ASSIGN_OR_RETURN(bool got, take_frame(in_, f));
  if (!got) {
    pollfd pfd{fd_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 0) <= 0) return Status::Ok();
    AUGUR_ASSIGN_OR_RETURN(std::size_t n, read_some(fd_.get(), in_));
    if (n == 0) {
      aborted_ = Status(Code::kPeerFailure, "bootstrap server closed the connection (launcher gone?)");
      return aborted_;
    }
    AUGUR_ASSIGN_OR_RETURN(got, take_frame(in_, f));
    if (!got) return Status::Ok();  // the rest of the frame is on its way
  }
  if (f.type != wire::MsgType::kAbort) {
    aborted_ = Status(Code::kProtocol, "bootstrap: unexpected message between fences");
    return aborted_;
  }
  aborted_ = Status(Code::kPeerFailure, "job aborted: " + std::string(f.payload.begin(), f.payload.end()));
  last_dead_ = f.rank >= static_cast<std::uint32_t>(size_) ? -1 : static_cast<int>(f.rank);
  *dead_rank = last_dead_;
  return aborted_;
}

Result<std::string> TcpBootstrap::get(int rank, std::string_view key) const {
  const std::lock_guard lock(mu_);
  if (rank < 0 || rank >= size_) return Status(Code::kInvalidArgument, "rank " + std::to_string(rank));
  auto it = kv_.find(std::pair<int, std::string>{rank, std::string(key)});
  if (it == kv_.end()) return Status(Code::kNotFound, "rank " + std::to_string(rank) + " put no key '" + std::string(key) + "'");
  return it->second;
}

}  // namespace augur::host
