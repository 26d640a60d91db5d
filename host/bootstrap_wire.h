// The bootstrap's TCP framing (internal to host/). Big-endian; layout pinned.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "augur/status.h"

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

// The codec, pure so that tests/fuzz can drive it with arbitrary bytes (docs/fuzzing.md).
using Bytes = std::vector<unsigned char>;

struct Frame {
  MsgType type;
  std::uint32_t rank;
  Bytes payload;
};

inline Bytes frame(MsgType type, std::uint32_t rank, std::span<const unsigned char> payload) {
  Bytes out(sizeof(Header) + payload.size());
  put_u32(out.data(), Header::kMagic);
  out[4] = static_cast<unsigned char>(type);
  put_u32(out.data() + 8, rank);
  put_u32(out.data() + 12, static_cast<std::uint32_t>(payload.size()));
  std::copy(payload.begin(), payload.end(), out.begin() + sizeof(Header));
  return out;
}

// Takes one complete frame off the front of `in`, if there is one. Malformed headers are kProtocol.
inline Result<bool> take_frame(Bytes& in, Frame& out) {
  if (in.size() < sizeof(Header)) return false;
  if (get_u32(in.data()) != Header::kMagic) return Status(Code::kProtocol, "bad magic");
  const std::uint8_t type = in[4];
  if (type < 1 || type > 6) return Status(Code::kProtocol, "unknown message type " + std::to_string(type));
  const std::uint32_t len = get_u32(in.data() + 12);
  if (len > kMaxPayload) return Status(Code::kProtocol, "payload of " + std::to_string(len) + " bytes");
  if (in.size() < sizeof(Header) + len) return false;
  out.type = static_cast<MsgType>(type);
  out.rank = get_u32(in.data() + 8);
  out.payload.assign(in.begin() + sizeof(Header), in.begin() + static_cast<std::ptrdiff_t>(sizeof(Header) + len));
  in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(sizeof(Header) + len));
  return true;
}

// One key-value pair of a FenceDone.
struct Entry {
  std::uint32_t rank;
  std::string key;
  std::string value;
};

inline void append_entry(Bytes& out, const Entry& e) {
  const std::size_t at = out.size();
  out.resize(at + 10 + e.key.size() + e.value.size());
  put_u32(&out[at], e.rank);
  put_u16(&out[at + 4], static_cast<std::uint16_t>(e.key.size()));
  put_u32(&out[at + 6], static_cast<std::uint32_t>(e.value.size()));
  std::copy(e.key.begin(), e.key.end(), out.begin() + static_cast<std::ptrdiff_t>(at + 10));
  std::copy(e.value.begin(), e.value.end(), out.begin() + static_cast<std::ptrdiff_t>(at + 10 + e.key.size()));
}

// Calls on_entry(Entry&&) for each entry of a FenceDone payload, in order, until the first
// malformed one (kProtocol): a truncated entry, a rank outside [0, size), lengths past the end.
template <typename OnEntry>
Status parse_fence_done(std::span<const unsigned char> payload, std::uint32_t size, OnEntry&& on_entry) {
  const unsigned char* p = payload.data();
  std::size_t left = payload.size();
  while (left > 0) {
    if (left < 10) return Status(Code::kProtocol, "bootstrap: truncated entry");
    const std::uint32_t r = get_u32(p);
    const std::size_t kl = get_u16(p + 4);
    const std::size_t vl = get_u32(p + 6);
    if (r >= size || kl > left - 10 || vl > left - 10 - kl) return Status(Code::kProtocol, "bootstrap: entry out of range");
    on_entry(Entry{r, std::string(reinterpret_cast<const char*>(p + 10), kl),
                   std::string(reinterpret_cast<const char*>(p + 10 + kl), vl)});
    p += 10 + kl + vl;
    left -= 10 + kl + vl;
  }
  return Status::Ok();
}

}  // namespace augur::host::wire
