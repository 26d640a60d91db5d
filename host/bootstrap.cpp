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
#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include "augur/settings.h"
#include "bootstrap_wire.h"
#include "tcp.h"

namespace augur::host {

Status check_key_value(std::size_t key_len, std::size_t value_len) {
  if (key_len == 0 || key_len > kMaxKeyBytes) return Status(Code::kInvalidArgument, "key length " + std::to_string(key_len) + " not in [1, 256]");
  if (value_len > kMaxValueBytes) return Status(Code::kInvalidArgument, "value of " + std::to_string(value_len) + " bytes exceeds 64 KiB");
  return Status::Ok();
}

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

struct Conn {
  UniqueFd fd;    // empty once closed (dropped at the end of the poll round)
  int rank = -1;  // -1 until HELLO
  Bytes in;
  bool fenced = false;
  bool bye = false;
  std::size_t keys = 0;
};

// The server thread's state between two polls: the connections, the puts of the round, the
// deadlines, and after a failure the abort message every rank is told.
class Exchange {
 public:
  Exchange(int size, std::chrono::milliseconds timeout, std::function<void(Status)> finish)
      : size_(size), timeout_(timeout), finish_(std::move(finish)), connect_deadline_(Clock::now() + timeout) {}

  [[nodiscard]] const std::vector<Conn>& conns() const { return conns_; }
  [[nodiscard]] bool failed() const { return !abort_msg_.empty(); }
  [[nodiscard]] bool all_said_bye() const { return said_bye_ == size_; }

  // Deadlines run only while the job waits on the exchange: until every rank has connected, and
  // from the first FENCE of a round until the round completes. Between fences a rank may compute
  // for days; its liveness is its connection (EOF when the process dies, keepalive when the host
  // does), never a timer. -1: no deadline.
  [[nodiscard]] int wait_ms() const {
    const auto d = deadline();
    if (failed() || d == Clock::time_point::max()) return -1;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(d - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
  }
  [[nodiscard]] bool past_deadline() const { return !failed() && Clock::now() >= deadline(); }

  // After a failure the server stays up until destroyed: every rank, also one that connects
  // late, is told why the job aborted instead of waiting for its own timeout.
  void fail(const Status& why, int dead_rank = -1) {
    // header.rank carries the rank that died, or 0xffffffff when no single rank did.
    abort_msg_ = frame(wire::MsgType::kAbort, dead_rank < 0 ? 0xffffffffu : static_cast<std::uint32_t>(dead_rank),
                       Bytes(why.message().begin(), why.message().end()));
    for (Conn& c : conns_) {
      if (c.fd.valid() && !c.bye) (void)write_all(c.fd.get(), abort_msg_);
    }
    finish_(why);
  }

  // The deadline passed: names the ranks the job waits for.
  void time_out() {
    const bool connecting = joined_ < size_;
    const std::string who =
        connecting ? missing([](const Conn&) { return true; }) : missing([](const Conn& c) { return c.fenced; });
    fail(Status(Code::kTimeout, "bootstrap: ranks " + who + (connecting ? " did not connect" : " did not reach the fence") +
                                    " within " + std::to_string(timeout_.count()) + " ms"));
  }

  void accept(int listen_fd) {
    UniqueFd fd(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) return;
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    tcp::enable_keepalive(fd.get());
    if (failed()) (void)write_all(fd.get(), abort_msg_);
    Conn c;
    c.fd = std::move(fd);
    conns_.push_back(std::move(c));
  }

  // After a failure: input is discarded, connections close as their ranks go away.
  void discard(std::span<const pollfd> polled) {
    for (std::size_t i = 0; i < polled.size(); ++i) {
      Conn& c = conns_[i];
      if (!(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      c.in.clear();
      Result<std::size_t> n = read_some(c.fd.get(), c.in);
      if (!n.ok() || n.value() == 0) c.fd.reset();
    }
    drop_closed();
  }

  // Reads what the polled connections sent and acts on every whole frame. False: the job failed
  // (the rest of the round's input is left unread).
  bool read(std::span<const pollfd> polled) {
    bool ok = true;
    for (std::size_t i = 0; i < polled.size() && ok; ++i) {
      if (polled[i].revents & (POLLIN | POLLHUP | POLLERR)) ok = read_conn(conns_[i]);
    }
    drop_closed();
    if (ok) joined_ = std::max(joined_, count([](const Conn& c) { return c.rank >= 0; }));
    return ok;
  }

  // Every rank present has fenced: FenceDone carries the round's puts to all.
  void complete_fence_if_ready() {
    if (count([](const Conn& c) { return c.rank >= 0; }) != size_ || count([](const Conn& c) { return c.fenced; }) != size_) {
      return;
    }
    Bytes payload;
    for (const Entry& e : pending_) append_entry(payload, e);
    pending_.clear();
    const Bytes msg = frame(wire::MsgType::kFenceDone, 0, payload);
    for (Conn& c : conns_) {
      c.fenced = false;
      (void)write_all(c.fd.get(), msg);
    }
    fence_deadline_ = Clock::time_point::max();  // until the next round's first FENCE
  }

 private:
  [[nodiscard]] Clock::time_point deadline() const {
    return std::min(joined_ < size_ ? connect_deadline_ : Clock::time_point::max(), fence_deadline_);
  }
  template <class Pred>
  [[nodiscard]] int count(Pred pred) const {
    return static_cast<int>(std::count_if(conns_.begin(), conns_.end(), pred));
  }
  template <class Pred>
  [[nodiscard]] std::string missing(Pred pred) const {
    std::vector<bool> seen(static_cast<std::size_t>(size_), false);
    for (const Conn& c : conns_) {
      if (c.rank >= 0 && pred(c)) seen[static_cast<std::size_t>(c.rank)] = true;
    }
    std::string list;
    for (int r = 0; r < size_; ++r) {
      if (seen[static_cast<std::size_t>(r)]) continue;
      // Appends, not operator+: GCC 12 reports a false -Wstringop-overflow on the latter under LTO.
      if (!list.empty()) list.append(",");
      list.append(std::to_string(r));
    }
    return list;
  }
  void drop_closed() {
    conns_.erase(std::remove_if(conns_.begin(), conns_.end(), [](const Conn& c) { return !c.fd.valid(); }), conns_.end());
  }

  // False: the job failed.
  bool read_conn(Conn& c) {
    Result<std::size_t> n = read_some(c.fd.get(), c.in);
    if (!n.ok() || n.value() == 0) {
      c.fd.reset();
      if (c.rank >= 0 && !c.bye) {
        fail(Status(Code::kPeerFailure, "rank " + std::to_string(c.rank) + " disconnected from the bootstrap"), c.rank);
        return false;
      }
      return true;
    }
    Frame f;
    for (;;) {
      Result<bool> got = take_frame(c.in, f);
      if (got.ok() && !got.value()) return true;  // no whole frame left
      const Status bad = got.ok() ? handle(c, f) : got.status();
      if (bad.ok()) continue;
      if (c.rank < 0 && !(got.ok() && f.type == wire::MsgType::kHello)) {
        c.fd.reset();  // never claimed a rank (a port scanner, a stale client): drop it only
        return true;
      }
      const int who = c.rank >= 0 ? c.rank : static_cast<int>(f.rank);
      fail(bad.context("rank " + std::to_string(who) + " sent a malformed bootstrap message"));
      return false;
    }
  }

  // One whole frame from `c`; an error is a protocol violation.
  Status handle(Conn& c, const Frame& f) {
    if (c.rank < 0 && f.type != wire::MsgType::kHello) return Status(Code::kProtocol, "first message is not HELLO");
    switch (f.type) {
      case wire::MsgType::kHello: {
        const bool dup = std::any_of(conns_.begin(), conns_.end(), [&](const Conn& o) { return o.rank == static_cast<int>(f.rank); });
        if (c.rank >= 0 || f.payload.size() != 4 || f.rank >= static_cast<std::uint32_t>(size_) || dup ||
            wire::get_u32(f.payload.data()) != static_cast<std::uint32_t>(size_)) {
          return Status(Code::kProtocol, "bad HELLO (rank " + std::to_string(f.rank) + " of a job of " +
                                             std::to_string(size_) + (dup ? ", rank already connected)" : ")"));
        }
        c.rank = static_cast<int>(f.rank);
        return Status::Ok();
      }
      case wire::MsgType::kPut: {
        const std::size_t kl = f.payload.size() >= 2 ? wire::get_u16(f.payload.data()) : 0;
        if (f.payload.size() < 2 || kl > f.payload.size() - 2) return Status(Code::kProtocol, "malformed PUT");
        AUGUR_RETURN_IF_ERROR(check_key_value(kl, f.payload.size() - 2 - kl));
        if (++c.keys > kMaxKeysPerRank) return Status(Code::kResourceExhausted, "more than 4096 keys");
        const auto* p = reinterpret_cast<const char*>(f.payload.data()) + 2;
        pending_.push_back({static_cast<std::uint32_t>(c.rank), std::string(p, kl), std::string(p + kl, f.payload.size() - 2 - kl)});
        return Status::Ok();
      }
      case wire::MsgType::kFence: {
        const bool second = c.fenced;
        if (count([](const Conn& o) { return o.fenced; }) == 0) {
          fence_deadline_ = Clock::now() + timeout_;  // the first rank to fence starts the clock
        }
        c.fenced = true;
        return second ? Status(Code::kProtocol, "second FENCE before the first completed") : Status::Ok();
      }
      case wire::MsgType::kBye:
        c.bye = true;
        ++said_bye_;
        return Status::Ok();
      default:
        return Status(Code::kProtocol, "unexpected message type");
    }
  }

  int size_;
  std::chrono::milliseconds timeout_;
  std::function<void(Status)> finish_;
  std::vector<Conn> conns_;
  std::vector<Entry> pending_;  // puts since the last fence, delivered with the next FenceDone
  int said_bye_ = 0;
  int joined_ = 0;  // most ranks connected at once: once all were, the connect deadline is off
  Clock::time_point connect_deadline_;
  Clock::time_point fence_deadline_ = Clock::time_point::max();  // armed by the first FENCE of a round
  Bytes abort_msg_;
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
  Exchange ex(size_, timeout_, [this](Status st) { finish(std::move(st)); });
  for (;;) {
    std::vector<pollfd> pfds{{wake_rd_.get(), POLLIN, 0}, {listen_fd_.get(), POLLIN, 0}};
    for (const Conn& c : ex.conns()) pfds.push_back({c.fd.get(), POLLIN, 0});
    const bool failed_before = ex.failed();
    const int rc = ::poll(pfds.data(), pfds.size(), ex.wait_ms());
    if (rc < 0 && errno == EINTR) continue;
    if (pfds[0].revents) {
      if (!failed_before) ex.fail(Status(Code::kUnavailable, "bootstrap server shut down"));
      break;
    }
    if (rc == 0 && ex.past_deadline()) {
      ex.time_out();
      continue;
    }
    // Connections accepted below were not polled.
    const std::span<const pollfd> polled(pfds.data() + 2, pfds.size() - 2);
    if (pfds[1].revents & POLLIN) ex.accept(listen_fd_.get());
    if (failed_before) {
      ex.discard(polled);
      continue;
    }
    if (!ex.read(polled)) continue;
    if (ex.all_said_bye()) {
      finish(Status::Ok());
      break;
    }
    ex.complete_fence_if_ready();
  }
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
    Result<std::size_t> n = read_some(fd_.get(), in_);
    if (!n.ok() || *n == 0) {
      // Closed, reset, or given up by TCP keepalive (ETIMEDOUT: the launcher's host unreachable,
      // often seconds before the RC retries to a peer on that host run out): every rank is now
      // out of reach as far as this one knows, which the program sees as failed processes.
      aborted_ = Status(Code::kPeerFailure, "lost the connection to the bootstrap server (launcher gone or its host "
                                            "unreachable): " + (n.ok() ? std::string("closed") : n.status().to_string()));
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
