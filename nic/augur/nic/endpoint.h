// Endpoint: one device context, PD, CQ and RC QP — the resources of one side of one RC link.
// The runtime (host/) builds per-peer links from the same parts; tests and the demo use this.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "augur/nic/verbs.h"
#include "augur/nic/wire.h"

namespace augur::nic {

struct EndpointOptions {
  std::string device;     // empty: first device
  ConnectOptions connect;
  QpCaps caps;
  int cq_entries = 256;
};

class Endpoint {
 public:
  static Result<Endpoint> create(const EndpointOptions& opt);
  Endpoint(Endpoint&&) noexcept;
  Endpoint& operator=(Endpoint&&) noexcept;
  ~Endpoint();

  [[nodiscard]] Result<QpAddress> address() const;  // with a random 24-bit PSN chosen at create
  Status connect(const QpAddress& remote);
  Result<MemoryRegion> register_memory(void* addr, std::size_t length, std::uint32_t access) const;
  // Polls the CQ until one completion arrives or `timeout_ms` passes (kTimeout).
  Result<Completion> wait_completion(int timeout_ms);

  [[nodiscard]] const Context& context() const;
  [[nodiscard]] const ProtectionDomain& pd() const;
  QueuePair& qp();

 private:
  struct Parts;
  explicit Endpoint(std::unique_ptr<Parts> p);
  std::unique_ptr<Parts> p_;
};

// Out-of-band exchange over a connected stream socket (a stand-in for the job's bootstrap):
// writes ours, reads theirs, validates it. Each side calls it once; the order does not matter.
Result<QpAddress> exchange(int fd, const QpAddress& mine, int timeout_ms);
Result<RemoteBuffer> exchange(int fd, const RemoteBuffer& mine, int timeout_ms);

// Whole-buffer socket I/O with a deadline; a closed peer is kPeerFailure.
Status send_all(int fd, const void* data, std::size_t n);
Status recv_all(int fd, void* data, std::size_t n, int timeout_ms);

}  // namespace augur::nic

namespace augur::nic {
// EndpointOptions from the AUGUR_* settings (device, port, GID index, QP timeout and retries).
Result<EndpointOptions> endpoint_options_from_settings();
}  // namespace augur::nic
