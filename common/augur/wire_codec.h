// Big-endian field writers and readers for wire formats (the wire is independent of the host's
// byte order), and the one error a parser of peer bytes returns. Used by nic/wire.cpp (transport
// addresses) and host/protocol.cpp (the messages of augur's protocols).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "augur/status.h"

namespace augur::wire_codec {

// Big-endian field writers/readers: the wire is independent of the host's byte order.
class Writer {
 public:
  explicit Writer(std::byte* p) : p_(p) {}
  template <typename T>
  void put(T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      p_[i] = static_cast<std::byte>((v >> (8 * (sizeof(T) - 1 - i))) & 0xff);
    }
    p_ += sizeof(T);
  }
  void put_bytes(const std::uint8_t* src, std::size_t n) {
    std::memcpy(p_, src, n);
    p_ += n;
  }

 private:
  std::byte* p_;
};

class Reader {
 public:
  explicit Reader(const std::byte* p) : p_(p) {}
  template <typename T>
  T get() {
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>((v << 8) | std::to_integer<T>(p_[i]));
    p_ += sizeof(T);
    return v;
  }
  void get_bytes(std::uint8_t* dst, std::size_t n) {
    std::memcpy(dst, p_, n);
    p_ += n;
  }

 private:
  const std::byte* p_;
};

inline Status bad(const char* what, const std::string& detail) {
  return {Code::kProtocol, std::string("malformed ") + what + " from peer: " + detail};
}

}  // namespace augur::wire_codec
