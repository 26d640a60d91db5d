#include "augur/nic/endpoint.h"

#include "augur/settings.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <random>
#include <thread>

namespace augur::nic {

struct Endpoint::Parts {  // declared in creation order: destroyed in reverse
  Context ctx;
  ProtectionDomain pd;
  CompletionQueue cq;
  QueuePair qp;
  ConnectOptions connect;
  std::uint32_t psn;
};

Endpoint::Endpoint(std::unique_ptr<Parts> p) : p_(std::move(p)) {}
Endpoint::Endpoint(Endpoint&&) noexcept = default;
Endpoint& Endpoint::operator=(Endpoint&&) noexcept = default;
Endpoint::~Endpoint() = default;

Result<Endpoint> Endpoint::create(const EndpointOptions& opt) {
  AUGUR_ASSIGN_OR_RETURN(Context ctx, Context::open(opt.device));
  AUGUR_ASSIGN_OR_RETURN(ProtectionDomain pd, ProtectionDomain::create(ctx));
  AUGUR_ASSIGN_OR_RETURN(CompletionQueue cq, CompletionQueue::create(ctx, opt.cq_entries, nullptr));
  AUGUR_ASSIGN_OR_RETURN(QueuePair qp, QueuePair::create_rc(pd, cq, cq, opt.caps));
  std::random_device rd;
  const std::uint32_t psn = rd() & 0xffffff;
  return Endpoint(std::unique_ptr<Parts>(
      new Parts{std::move(ctx), std::move(pd), std::move(cq), std::move(qp), opt.connect, psn}));
}

Result<QpAddress> Endpoint::address() const { return p_->qp.local_address(p_->ctx, p_->connect, p_->psn); }

Status Endpoint::connect(const QpAddress& remote) {
  AUGUR_ASSIGN_OR_RETURN(QpAddress local, address());
  return p_->qp.connect(p_->ctx, p_->connect, local, remote).context("connect to QP " + std::to_string(remote.qp_num));
}

Result<MemoryRegion> Endpoint::register_memory(void* addr, std::size_t length, std::uint32_t access) const {
  return MemoryRegion::register_memory(p_->pd, addr, length, access);
}

Result<Completion> Endpoint::wait_completion(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  Completion c;
  for (unsigned spins = 0;; ++spins) {
    AUGUR_ASSIGN_OR_RETURN(std::size_t n, p_->cq.poll({&c, 1}));
    if (n == 1) return c;
    if (spins > 1000) std::this_thread::yield();  // emulated devices are slow: do not starve them
    // A tight poll, as perftest's: the clock is read now and then only, since a read can be a
    // system call (hpet under qemu: ~1 us) that would delay noticing the completion.
    if (spins % 64 != 63) continue;
    if (std::chrono::steady_clock::now() > deadline) {
      return Status(Code::kTimeout, "no completion within " + std::to_string(timeout_ms) + " ms");
    }
  }
}

const Context& Endpoint::context() const { return p_->ctx; }
const ProtectionDomain& Endpoint::pd() const { return p_->pd; }
QueuePair& Endpoint::qp() { return p_->qp; }

Status send_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno_status(errno, "send");
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return Status::Ok();
}

Status recv_all(int fd, void* data, std::size_t n, int timeout_ms) {
  auto* p = static_cast<char*>(data);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (n > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status(Code::kTimeout, "peer sent nothing within " + std::to_string(timeout_ms) + " ms");
    pollfd pfd{fd, POLLIN, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return errno_status(errno, "poll");
    if (rc == 0) continue;
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno_status(errno, "recv");
    if (r == 0) return Status(Code::kPeerFailure, "peer closed the connection");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return Status::Ok();
}

namespace {
template <typename T, typename Parse>
Result<T> exchange_wire(int fd, const T& mine, int timeout_ms, Parse parse) {
  std::array<std::byte, sizeof(T)> out{};
  std::array<std::byte, sizeof(T)> in{};
  encode(mine, out);
  AUGUR_RETURN_IF_ERROR(send_all(fd, out.data(), out.size()));
  AUGUR_RETURN_IF_ERROR(recv_all(fd, in.data(), in.size(), timeout_ms));
  return parse(in);
}
}  // namespace

Result<QpAddress> exchange(int fd, const QpAddress& mine, int timeout_ms) {
  return exchange_wire(fd, mine, timeout_ms, [](auto in) { return parse_qp_address(in); });
}

Result<RemoteBuffer> exchange(int fd, const RemoteBuffer& mine, int timeout_ms) {
  return exchange_wire(fd, mine, timeout_ms, [](auto in) { return parse_remote_buffer(in); });
}

}  // namespace augur::nic

namespace augur::nic {
Result<EndpointOptions> endpoint_options_from_settings() {
  EndpointOptions o;
  AUGUR_ASSIGN_OR_RETURN(o.device, setting_string("AUGUR_DEVICE"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t port, setting_int("AUGUR_PORT"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t gid, setting_int("AUGUR_GID_INDEX"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t timeout, setting_int("AUGUR_QP_TIMEOUT"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t retry, setting_int("AUGUR_QP_RETRY_COUNT"));
  o.connect.port = static_cast<std::uint8_t>(port);
  o.connect.gid_index = static_cast<int>(gid);
  o.connect.timeout = static_cast<std::uint8_t>(timeout);
  o.connect.retry_cnt = static_cast<std::uint8_t>(retry);
  return o;
}
}  // namespace augur::nic
