// TCP plumbing shared by the bootstrap exchange and remote launch (internal to host/).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "augur/status.h"
#include "augur/unique_fd.h"

namespace augur::host::tcp {

using Bytes = std::vector<unsigned char>;

// Sends all of `b` (retrying short writes and EINTR; never raises SIGPIPE).
Status write_all(int fd, const Bytes& b, std::string_view what);
// Appends whatever one recv returns to `in`; 0 means the peer closed.
Result<std::size_t> read_some(int fd, Bytes& in, std::string_view what);

struct Listener {
  UniqueFd fd;
  std::uint16_t port = 0;
};
// A listening IPv4 socket on `addr`:`port` (port 0: any free port), close-on-exec, with room
// for `backlog` connections not yet accepted (the kernel caps it at net.core.somaxconn).
Result<Listener> listen(const std::string& addr, std::uint16_t port, std::string_view what, int backlog = 128);

// Connects to host:port (a name or IPv4 address), retrying until `timeout` while nobody listens
// yet. TCP_NODELAY is set: every protocol above is request/response.
Result<UniqueFd> connect(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout, std::string_view what);

// Liveness of a long-lived control connection without a timer above it: TCP keepalive probes
// after kKeepaliveIdle of silence, kKeepaliveProbes of them kKeepaliveInterval apart, and a bound
// on unacknowledged data. A rank computing for hours still answers (the kernel does); a host that
// powered off or lost its link is seen in about 10 s instead of the kernel's default 2 hours
// (twohost_mpi_link cuts a link under a job: docs/faults.md).
inline constexpr int kKeepaliveIdleS = 5, kKeepaliveIntervalS = 1, kKeepaliveProbes = 5;
void enable_keepalive(int fd);

// The local IPv4 address this host would use to reach `host` (no packet is sent).
Result<std::string> local_address_toward(const std::string& host);

// Is `host` this machine: localhost, 127.x, its hostname, or an address of one of its interfaces?
bool is_local_host(const std::string& host);

inline void put_u32(unsigned char* p, std::uint32_t v) {
  p[0] = static_cast<unsigned char>(v >> 24);
  p[1] = static_cast<unsigned char>(v >> 16);
  p[2] = static_cast<unsigned char>(v >> 8);
  p[3] = static_cast<unsigned char>(v);
}
inline std::uint32_t get_u32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

}  // namespace augur::host::tcp
