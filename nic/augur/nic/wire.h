// Transport wire formats: what one end of an RC connection tells the other out of band, and a
// registered buffer a peer may read or write. The messages of augur's protocols (eager headers,
// credits, run lists) are host/augur/host/protocol.h. Every struct has its layout pinned;
// multi-byte fields are big-endian on the wire; every field from a peer is validated by its
// parse function before use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "augur/status.h"

namespace augur::nic {

// What one side of an RC connection tells the other (out of band, through the bootstrap).
struct QpAddress {
  static constexpr std::uint32_t kMagic = 0x41555150;  // "AUQP"
  static constexpr std::uint16_t kVersion = 1;
  std::uint32_t magic = kMagic;
  std::uint16_t version = kVersion;
  std::uint16_t lid = 0;
  std::uint32_t qp_num = 0;   // 24 bits
  std::uint32_t psn = 0;      // 24 bits
  std::uint8_t gid[16] = {};
  std::uint8_t mtu = 0;       // verbs enum 1..5
  std::uint8_t link_layer = 0;  // LinkLayer
  std::uint8_t reserved[2] = {};
};
static_assert(sizeof(QpAddress) == 36);
static_assert(offsetof(QpAddress, qp_num) == 8);
static_assert(offsetof(QpAddress, gid) == 16);
static_assert(offsetof(QpAddress, mtu) == 32);

// A registered buffer a peer may read or write (rendezvous, RDMA demos).
struct RemoteBuffer {
  static constexpr std::uint32_t kMagic = 0x41554d52;  // "AUMR"
  std::uint32_t magic = kMagic;
  std::uint32_t rkey = 0;
  std::uint64_t addr = 0;
  std::uint64_t length = 0;
};
static_assert(sizeof(RemoteBuffer) == 24);
static_assert(offsetof(RemoteBuffer, addr) == 8);
static_assert(offsetof(RemoteBuffer, length) == 16);

// Encoding to and from the wire. parse_* reject wrong sizes, magic, versions and out-of-range
// fields with kProtocol and a message naming the field.
void encode(const QpAddress& in, std::span<std::byte, sizeof(QpAddress)> out) noexcept;
Result<QpAddress> parse_qp_address(std::span<const std::byte> in);
void encode(const RemoteBuffer& in, std::span<std::byte, sizeof(RemoteBuffer)> out) noexcept;
Result<RemoteBuffer> parse_remote_buffer(std::span<const std::byte> in);

}  // namespace augur::nic
