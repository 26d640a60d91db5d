#include "augur/host/launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "tcp.h"

namespace augur::host::launch {

namespace {

using tcp::Bytes;
using Clock = std::chrono::steady_clock;

Bytes frame(FrameType type, const unsigned char* data, std::size_t n) { return encode_frame(type, {data, n}); }

Bytes u32_frame(FrameType type, std::uint32_t v) {
  unsigned char b[4];
  tcp::put_u32(b, v);
  return frame(type, b, 4);
}

void put_string(Bytes& out, const std::string& s) {
  const std::size_t at = out.size();
  out.resize(at + 4 + s.size());
  tcp::put_u32(&out[at], static_cast<std::uint32_t>(s.size()));
  std::memcpy(&out[at + 4], s.data(), s.size());
}

class Reader {
 public:
  explicit Reader(std::span<const unsigned char> p) : p_(p) {}
  Result<std::uint32_t> u32(const char* what) {
    if (p_.size() - at_ < 4) return Status(Code::kProtocol, std::string("launch request truncated at ") + what);
    const std::uint32_t v = tcp::get_u32(p_.data() + at_);
    at_ += 4;
    return v;
  }
  Result<std::string> str(const char* what) {
    AUGUR_ASSIGN_OR_RETURN(std::uint32_t n, u32(what));
    if (p_.size() - at_ < n) return Status(Code::kProtocol, std::string("launch request truncated in ") + what);
    std::string s(reinterpret_cast<const char*>(p_.data() + at_), n);
    at_ += n;
    if (s.find('\0') != std::string::npos) return Status(Code::kProtocol, std::string("NUL byte inside ") + what);
    return s;
  }
  Result<std::vector<std::string>> list(const char* what) {
    AUGUR_ASSIGN_OR_RETURN(std::uint32_t n, u32(what));
    if (n > kMaxStrings) return Status(Code::kProtocol, std::string("too many entries in ") + what);
    std::vector<std::string> v;
    for (std::uint32_t i = 0; i < n; ++i) {
      AUGUR_ASSIGN_OR_RETURN(std::string s, str(what));
      v.push_back(std::move(s));
    }
    return v;
  }
  [[nodiscard]] bool done() const { return at_ == p_.size(); }

 private:
  std::span<const unsigned char> p_;
  std::size_t at_ = 0;
};

// --- daemon side ---------------------------------------------------------------------------------

void log_line(const std::string& s) { std::fprintf(stderr, "augur-hostd: %s\n", s.c_str()); }

// Reads the launch request (bounded in time: a silent client is dropped).
// Bytes after it stay in `in` (a signal frame may follow right away).
Result<Request> read_request(int fd, Bytes& in) {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    AUGUR_ASSIGN_OR_RETURN(std::optional<Frame> f, take_frame(in));
    if (f) {
      if (f->type != FrameType::kLaunch) return Status(Code::kProtocol, "first frame is not a launch request");
      return decode(f->payload);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Status(Code::kTimeout, "no launch request within 30 s");
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) < 0 && errno != EINTR) return errno_status(errno, "poll");
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      AUGUR_ASSIGN_OR_RETURN(std::size_t n, tcp::read_some(fd, in, "launch"));
      if (n == 0) return Status(Code::kPeerFailure, "launcher closed the connection before its request");
    }
  }
}

[[noreturn]] void exec_rank(const Request& r, int out_fd, int err_fd) {
  ::setpgid(0, 0);  // the rank and whatever it starts form one group, killed together
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::signal(s, SIG_DFL);
  if (!r.cwd.empty() && ::chdir(r.cwd.c_str()) != 0) {
    std::fprintf(stderr, "augur-hostd: cannot enter %s on this host: %s\n", r.cwd.c_str(), std::strerror(errno));
    _exit(127);
  }
  for (const std::string& e : r.env) {
    const auto eq = e.find('=');
    ::setenv(e.substr(0, eq).c_str(), e.c_str() + eq + 1, 1);
  }
  std::vector<char*> argv;
  for (const std::string& a : r.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "augur-hostd: cannot run %s on this host: %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

// One connection: runs one rank and relays until it has exited and its output is drained.
int handle_connection(int fd, const std::string& token, const std::string& peer) {
  tcp::enable_keepalive(fd);  // a launcher cut off ends its rank, as one that closed the connection does
  Bytes in;
  Result<Request> req = read_request(fd, in);
  if (!req.ok()) {
    const std::string why = req.status().to_string();
    log_line("refused a request from " + peer + ": " + why);
    (void)tcp::write_all(fd, frame(FrameType::kError, reinterpret_cast<const unsigned char*>(why.data()), why.size()), "launch");
    return 1;
  }
  if (!token.empty() && req.value().token != token) {
    const std::string why = "AUGUR_HOSTD_TOKEN does not match this daemon's";
    log_line("refused a request from " + peer + ": " + why);
    (void)tcp::write_all(fd, frame(FrameType::kError, reinterpret_cast<const unsigned char*>(why.data()), why.size()), "launch");
    return 1;
  }
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return 1;
  const pid_t pid = ::fork();
  if (pid < 0) return 1;
  if (pid == 0) exec_rank(req.value(), out[1], err[1]);
  ::setpgid(pid, pid);  // also here: a signal may be forwarded before the child ran setpgid
  ::close(out[1]);
  ::close(err[1]);
  log_line("started " + req.value().argv[0] + " (pid " + std::to_string(pid) + ") for " + peer);
  int pipes[2] = {out[0], err[0]};
  std::optional<int> status;
  std::optional<Clock::time_point> exited_at;
  bool launcher_gone = false;
  bool unread = !in.empty();  // frames that came with the request
  for (;;) {
    if (status && ((pipes[0] < 0 && pipes[1] < 0) || Clock::now() - *exited_at > std::chrono::seconds(2))) break;
    pollfd p[3] = {{launcher_gone ? -1 : fd, POLLIN, 0}, {pipes[0], POLLIN, 0}, {pipes[1], POLLIN, 0}};
    (void)::poll(p, 3, 100);
    if (unread || (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      Result<std::size_t> n = unread ? Result<std::size_t>(in.size()) : tcp::read_some(fd, in, "launch");
      unread = false;
      Result<std::optional<Frame>> f = std::optional<Frame>();
      while (n.ok() && *n > 0 && (f = take_frame(in)).ok() && f.value()) {
        if (f.value()->type == FrameType::kSignal && f.value()->payload.size() == 4) {
          const auto sig = static_cast<int>(tcp::get_u32(f.value()->payload.data()));
          if (sig > 0 && sig < NSIG) ::kill(-pid, sig);
        }
      }
      if (!n.ok() || *n == 0 || !f.ok()) {  // the launcher is gone or talks nonsense: end the rank
        launcher_gone = true;
        ::kill(-pid, SIGKILL);
        log_line("launcher " + peer + " went away: killed pid " + std::to_string(pid));
      }
    }
    for (int k = 0; k < 2; ++k) {
      if (pipes[k] < 0 || (p[k + 1].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      unsigned char buf[kMaxDataBytes];
      const ssize_t r = ::read(pipes[k], buf, sizeof buf);
      if (r <= 0) {
        if (r < 0 && errno == EINTR) continue;
        ::close(pipes[k]);
        pipes[k] = -1;
        continue;
      }
      if (!launcher_gone) {
        (void)tcp::write_all(fd, frame(k == 0 ? FrameType::kStdout : FrameType::kStderr, buf, static_cast<std::size_t>(r)), "launch");
      }
    }
    int st = 0;
    if (!status && ::waitpid(pid, &st, WNOHANG) == pid) {
      status = st;
      exited_at = Clock::now();
    }
  }
  if (!launcher_gone) (void)tcp::write_all(fd, u32_frame(FrameType::kExit, static_cast<std::uint32_t>(*status)), "launch");
  return 0;
}

}  // namespace

std::vector<unsigned char> encode_frame(FrameType type, std::span<const unsigned char> payload) {
  Bytes out(sizeof(FrameHeader) + payload.size());
  tcp::put_u32(out.data(), FrameHeader::kMagic);
  out[4] = static_cast<unsigned char>(type);
  tcp::put_u32(out.data() + 8, static_cast<std::uint32_t>(payload.size()));
  if (!payload.empty()) std::memcpy(out.data() + sizeof(FrameHeader), payload.data(), payload.size());
  return out;
}

Result<std::optional<Frame>> take_frame(Bytes& in) {
  if (in.size() < sizeof(FrameHeader)) return std::optional<Frame>();
  if (tcp::get_u32(in.data()) != FrameHeader::kMagic) return Status(Code::kProtocol, "launch frame: bad magic");
  const std::uint8_t type = in[4];
  if (type < 1 || type > 6) return Status(Code::kProtocol, "launch frame: unknown type " + std::to_string(type));
  const std::uint32_t len = tcp::get_u32(in.data() + 8);
  const std::uint32_t max = static_cast<FrameType>(type) == FrameType::kLaunch ? kMaxRequestBytes : kMaxDataBytes;
  if (len > max) return Status(Code::kProtocol, "launch frame: payload of " + std::to_string(len) + " bytes");
  if (in.size() < sizeof(FrameHeader) + len) return std::optional<Frame>();
  const auto body = in.begin() + static_cast<std::ptrdiff_t>(sizeof(FrameHeader));
  Frame f{static_cast<FrameType>(type), Bytes(body, body + len)};
  in.erase(in.begin(), body + len);
  return std::optional<Frame>(std::move(f));
}

std::vector<unsigned char> encode(const Request& r) {
  Bytes out;
  put_string(out, r.token);
  put_string(out, r.cwd);
  for (const auto* list : {&r.argv, &r.env}) {
    const std::size_t at = out.size();
    out.resize(at + 4);
    tcp::put_u32(&out[at], static_cast<std::uint32_t>(list->size()));
    for (const std::string& s : *list) put_string(out, s);
  }
  return out;
}

Result<Request> decode(std::span<const unsigned char> payload) {
  if (payload.size() > kMaxRequestBytes) return Status(Code::kProtocol, "launch request larger than 1 MiB");
  Reader rd(payload);
  Request r;
  AUGUR_ASSIGN_OR_RETURN(r.token, rd.str("token"));
  AUGUR_ASSIGN_OR_RETURN(r.cwd, rd.str("working directory"));
  AUGUR_ASSIGN_OR_RETURN(r.argv, rd.list("argv"));
  AUGUR_ASSIGN_OR_RETURN(r.env, rd.list("environment"));
  if (!rd.done()) return Status(Code::kProtocol, "launch request has trailing bytes");
  if (r.argv.empty() || r.argv[0].empty()) return Status(Code::kProtocol, "launch request has no program");
  for (const std::string& e : r.env) {
    if (e.find('=') == std::string::npos || e.front() == '=') {
      return Status(Code::kProtocol, "environment entry '" + e + "' is not NAME=value");
    }
  }
  return r;
}

Result<int> run_remote(const std::string& host, std::uint16_t port, const Request& req, int out_fd, int err_fd,
                       volatile sig_atomic_t* forward_signal, std::chrono::milliseconds connect_timeout) {
  const std::string where = "augur-hostd on " + host + ":" + std::to_string(port);
  AUGUR_ASSIGN_OR_RETURN(const UniqueFd conn, tcp::connect(host, port, connect_timeout, "augur-hostd"));
  const int fd = conn.get();
  tcp::enable_keepalive(fd);  // a host cut off is reported within seconds, not after TCP's 15 minutes
  const Bytes payload = encode(req);
  if (payload.size() > kMaxRequestBytes) return Status(Code::kInvalidArgument, "launch request larger than 1 MiB");
  AUGUR_RETURN_IF_ERROR(tcp::write_all(fd, frame(FrameType::kLaunch, payload.data(), payload.size()), "launch"));
  Bytes in;
  for (;;) {
    if (forward_signal != nullptr && *forward_signal != 0) {
      const int sig = *forward_signal;
      *forward_signal = 0;
      AUGUR_RETURN_IF_ERROR(tcp::write_all(fd, u32_frame(FrameType::kSignal, static_cast<std::uint32_t>(sig)), "launch"));
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;  // EINTR included: a signal to forward
    AUGUR_ASSIGN_OR_RETURN(std::size_t n, tcp::read_some(fd, in, "launch"));
    for (;;) {
      AUGUR_ASSIGN_OR_RETURN(std::optional<Frame> f, take_frame(in));
      if (!f) break;
      switch (f->type) {
        case FrameType::kStdout:
        case FrameType::kStderr:
          for (std::size_t off = 0; off < f->payload.size();) {
            const ssize_t w = ::write(f->type == FrameType::kStdout ? out_fd : err_fd, f->payload.data() + off,
                                      f->payload.size() - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;  // our own output is gone: keep relaying the status
            off += static_cast<std::size_t>(w);
          }
          break;
        case FrameType::kExit:
          if (f->payload.size() != 4) return Status(Code::kProtocol, where + ": malformed exit frame");
          return static_cast<int>(tcp::get_u32(f->payload.data()));
        case FrameType::kError:
          return Status(Code::kUnavailable, where + " refused the launch: " +
                                                std::string(f->payload.begin(), f->payload.end()));
        default:
          return Status(Code::kProtocol, where + ": unexpected frame type " + std::to_string(static_cast<int>(f->type)));
      }
    }
    if (n == 0) return Status(Code::kPeerFailure, "lost the connection to " + where + " before the rank's exit status");
  }
}

bool is_local_host(const std::string& host) { return tcp::is_local_host(host); }
Result<std::string> local_address_toward(const std::string& host) { return tcp::local_address_toward(host); }

Result<Daemon> Daemon::listen(const std::string& addr, std::uint16_t port, std::string token) {
  AUGUR_ASSIGN_OR_RETURN(tcp::Listener l, tcp::listen(addr, port, "augur-hostd"));
  return Daemon(std::move(l.fd), l.port, std::move(token));
}

Status Daemon::serve() {
  ::signal(SIGPIPE, SIG_IGN);
  for (;;) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    pollfd p{fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    const int c = ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&sa), &len, SOCK_CLOEXEC);
    if (c < 0) {
      // Only a broken listening socket ends the daemon. Linux hands a new connection's pending
      // network error to accept (accept(2): treat those like EAGAIN), and running out of
      // descriptors or memory passes: both must not take down the host's launcher.
      const int e = errno;
      if (e == EBADF || e == EINVAL || e == ENOTSOCK || e == EFAULT) {
        return errno_status(e, "augur-hostd accept");
      }
      if (e != EINTR && e != EAGAIN && e != ECONNABORTED) {
        log_line(std::string("accept: ") + std::strerror(e) + " (going on)");
        if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) ::poll(nullptr, 0, 100);
      }
      continue;
    }
    char ip[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
    const std::string peer = std::string(ip) + ":" + std::to_string(ntohs(sa.sin_port));
    const pid_t h = ::fork();
    if (h == 0) {
      fd_.reset();  // the child serves one connection, not the port
      _exit(handle_connection(c, token_, peer));
    }
    if (h < 0) log_line("fork for " + peer + ": " + std::strerror(errno));
    ::close(c);
  }
}

}  // namespace augur::host::launch
