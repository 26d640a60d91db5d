// Connection wire-up on first use (host/wireup.cpp): what two ranks say over a short-lived TCP
// connection to connect their RC channel, and the listener entry each rank publishes through
// the bootstrap. Internal to host/; big-endian; layout pinned. Pure, so that tests/fuzz drives
// the parsers with arbitrary bytes (docs/fuzzing.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "augur/status.h"

namespace augur::host::wireup {

// REQ: "connect to this address" (the initiator's channel address for the receiver). REP: the
// answer, sent after the receiver connected its side, with its own address. RTU: the initiator
// connected too. A side may send on a channel once it has connected and heard REP or RTU.
enum class Type : std::uint8_t { kReq = 1, kRep = 2, kRtu = 3 };

struct Header {
  static constexpr std::uint32_t kMagic = 0x41555755;  // "AUWU"
  static constexpr std::uint16_t kVersion = 1;
  std::uint32_t magic = kMagic;
  std::uint16_t version = kVersion;
  std::uint8_t type = 0;
  std::uint8_t reserved = 0;
  std::uint32_t from = 0;   // sender's rank
  std::uint32_t to = 0;     // receiver's rank
  std::uint64_t nonce = 0;  // the acceptor's, from its bootstrap entry: only this job's ranks know it
  std::uint32_t address_bytes = 0;  // REQ, REP: the channel address that follows; RTU: 0
  std::uint32_t reserved2 = 0;
};
static_assert(sizeof(Header) == 32);
static_assert(offsetof(Header, type) == 6);
static_assert(offsetof(Header, from) == 8);
static_assert(offsetof(Header, to) == 12);
static_assert(offsetof(Header, nonce) == 16);
static_assert(offsetof(Header, address_bytes) == 24);
inline constexpr std::size_t kHeaderBytes = sizeof(Header);

using Bytes = std::vector<unsigned char>;

namespace detail {
inline void put(unsigned char* p, std::uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<unsigned char>(v);
}
inline std::uint64_t get(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}
}  // namespace detail

inline Bytes encode(Type type, std::uint32_t from, std::uint32_t to, std::uint64_t nonce,
                    std::span<const std::byte> address) {
  Bytes b(kHeaderBytes + address.size());
  detail::put(&b[0], Header::kMagic, 4);
  detail::put(&b[4], Header::kVersion, 2);
  b[6] = static_cast<unsigned char>(type);
  detail::put(&b[8], from, 4);
  detail::put(&b[12], to, 4);
  detail::put(&b[16], nonce, 8);
  detail::put(&b[24], address.size(), 4);
  for (std::size_t i = 0; i < address.size(); ++i) b[kHeaderBytes + i] = static_cast<unsigned char>(address[i]);
  return b;
}

// What the receiving side knows: who it is, the job's size, the acceptor's nonce (its own on a
// connection it accepted, the peer's on one it made), the one address size, and on a connection
// it made, the only rank that may answer (-1: any).
struct Expect {
  std::uint32_t self = 0;
  std::uint32_t size = 0;
  std::uint64_t nonce = 0;
  std::uint32_t address_bytes = 0;
  std::int64_t from = -1;
};

// Parses the first kHeaderBytes of `in` (fewer: kProtocol). Any field that is not exactly what
// this job's peer would send is rejected with kProtocol naming it; nothing is trusted before.
inline Result<Header> parse_header(std::span<const unsigned char> in, const Expect& e) {
  auto bad = [](const std::string& what) { return Status(Code::kProtocol, "wire-up message: " + what); };
  if (in.size() < kHeaderBytes) return bad("short header (" + std::to_string(in.size()) + " bytes)");
  Header h;
  h.magic = static_cast<std::uint32_t>(detail::get(&in[0], 4));
  h.version = static_cast<std::uint16_t>(detail::get(&in[4], 2));
  h.type = in[6];
  h.reserved = in[7];
  h.from = static_cast<std::uint32_t>(detail::get(&in[8], 4));
  h.to = static_cast<std::uint32_t>(detail::get(&in[12], 4));
  h.nonce = detail::get(&in[16], 8);
  h.address_bytes = static_cast<std::uint32_t>(detail::get(&in[24], 4));
  h.reserved2 = static_cast<std::uint32_t>(detail::get(&in[28], 4));
  if (h.magic != Header::kMagic) return bad("bad magic");
  if (h.version != Header::kVersion) return bad("version " + std::to_string(h.version));
  if (h.type < 1 || h.type > 3) return bad("type " + std::to_string(h.type));
  if (h.reserved != 0 || h.reserved2 != 0) return bad("reserved bits set");
  if (h.from >= e.size || h.from == e.self) return bad("sender rank " + std::to_string(h.from));
  if (e.from >= 0 && h.from != static_cast<std::uint64_t>(e.from)) return bad("answer from rank " + std::to_string(h.from));
  if (h.to != e.self) return bad("addressed to rank " + std::to_string(h.to));
  if (h.nonce != e.nonce) return bad("from another job (nonce)");
  const std::uint32_t want = static_cast<Type>(h.type) == Type::kRtu ? 0 : e.address_bytes;
  if (h.address_bytes != want) return bad("address of " + std::to_string(h.address_bytes) + " bytes");
  return h;
}

// The bootstrap entry "a.b.c.d port nonce" (nonce in hex): where a rank listens for wire-up.
struct Listen {
  std::string host;
  std::uint16_t port = 0;
  std::uint64_t nonce = 0;
};

inline std::string encode_listen(const Listen& l) {
  char nonce[17];
  for (int i = 0; i < 16; ++i) nonce[i] = "0123456789abcdef"[(l.nonce >> (60 - 4 * i)) & 0xf];
  nonce[16] = '\0';
  return l.host + " " + std::to_string(l.port) + " " + nonce;
}

// Rejects a malformed entry (another process wrote it) with a message naming `rank`.
inline Result<Listen> parse_listen(std::string_view s, int rank) {
  auto bad = [&](const std::string& what) {
    return Status(Code::kProtocol, "rank " + std::to_string(rank) + "'s wire-up entry: " + what);
  };
  const std::size_t a = s.find(' ');
  if (a == std::string_view::npos || a == 0 || a > 255) return bad("no host");
  const std::size_t b = s.find(' ', a + 1);
  if (b == std::string_view::npos) return bad("no port");
  Listen l;
  l.host = std::string(s.substr(0, a));
  for (char c : l.host) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-' || c == '_';
    if (!ok) return bad("host has a character outside [A-Za-z0-9._-]");
  }
  const std::string_view port = s.substr(a + 1, b - a - 1);
  if (port.empty() || port.size() > 5 || port[0] == '0') return bad("port '" + std::string(port) + "'");
  std::uint32_t p = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return bad("port '" + std::string(port) + "'");
    p = p * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (p == 0 || p > 65535) return bad("port " + std::to_string(p));
  l.port = static_cast<std::uint16_t>(p);
  const std::string_view nonce = s.substr(b + 1);
  if (nonce.size() != 16) return bad("nonce of " + std::to_string(nonce.size()) + " characters, not 16");
  for (char c : nonce) {
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    if (v < 0) return bad("nonce is not lower-case hex");
    l.nonce = (l.nonce << 4) | static_cast<std::uint64_t>(v);
  }
  return l;
}

}  // namespace augur::host::wireup
