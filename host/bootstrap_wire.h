// The bootstrap's TCP framing (internal to host/). Big-endian; layout pinned.
#pragma once

#include <cstddef>
#include <cstdint>

namespace augur::host::wire {

enum class MsgType : std::uint8_t {
  kHello = 1,      // rank -> server: header.rank, payload u32 size
  kPut = 2,        // rank -> server: u16 key length, key, value
  kFence = 3,      // rank -> server
  kFenceDone = 4,  // server -> rank: entries {u32 rank, u16 key length, u32 value length, key, value}
  kAbort = 5,      // server -> rank: reason text
  kBye = 6,        // rank -> server: clean exit
};

struct Header {
  static constexpr std::uint32_t kMagic = 0x41554253;  // "AUBS"
  std::uint32_t magic;
  std::uint8_t type;
  std::uint8_t reserved[3];
  std::uint32_t rank;
  std::uint32_t length;  // payload bytes that follow
};
static_assert(sizeof(Header) == 16);
static_assert(offsetof(Header, type) == 4);
static_assert(offsetof(Header, rank) == 8);
static_assert(offsetof(Header, length) == 12);

// Upper bound on any payload: a FenceDone for the largest job with full keys is far smaller.
inline constexpr std::uint32_t kMaxPayload = 64u << 20;

inline void put_u32(unsigned char* p, std::uint32_t v) {
  p[0] = static_cast<unsigned char>(v >> 24);
  p[1] = static_cast<unsigned char>(v >> 16);
  p[2] = static_cast<unsigned char>(v >> 8);
  p[3] = static_cast<unsigned char>(v);
}
inline void put_u16(unsigned char* p, std::uint16_t v) {
  p[0] = static_cast<unsigned char>(v >> 8);
  p[1] = static_cast<unsigned char>(v);
}
inline std::uint32_t get_u32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}
inline std::uint16_t get_u16(const unsigned char* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

}  // namespace augur::host::wire
