// Helpers shared by the libFuzzer harnesses (docs/fuzzing.md): splitting an input into the
// parameters a parser gets from its own side and the bytes a peer sent, and invariant checks
// that abort, so that libFuzzer keeps the input as a crash artifact.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "augur/status.h"

// Not assert(): it must hold in every build type, and say which harness line failed.
#define AUGUR_FUZZ_CHECK(cond) ((cond) ? static_cast<void>(0) : ::augur::fuzz::fail(#cond, __FILE__, __LINE__))

namespace augur::fuzz {

[[noreturn]] inline void fail(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: invariant violated: %s\n", file, line, what);
  std::abort();
}

// The input, consumed from the front: first the receiver's own parameters (fixed size, host byte
// order, zero when the input is short), then the bytes under test.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : rest_(data, size) {}
  template <typename T>
  T take() {
    T v{};
    const std::size_t n = std::min(sizeof(T), rest_.size());
    if (n > 0) std::memcpy(&v, rest_.data(), n);
    rest_ = rest_.subspan(n);
    return v;
  }
  [[nodiscard]] std::span<const std::uint8_t> rest() const { return rest_; }
  [[nodiscard]] std::span<const std::byte> rest_bytes() const { return std::as_bytes(rest_); }

 private:
  std::span<const std::uint8_t> rest_;
};

template <typename A, typename B>
bool same_bytes(std::span<A> a, std::span<B> b) {
  static_assert(sizeof(A) == 1 && sizeof(B) == 1);
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

// Is `inner` a subrange of `outer`?
template <typename T>
bool inside(std::span<const T> inner, std::span<const T> outer) {
  if (inner.empty()) return true;
  const auto* lo = outer.data();
  return std::less_equal<>()(lo, inner.data()) && std::less_equal<>()(inner.data() + inner.size(), lo + outer.size());
}

using Bytes = std::vector<unsigned char>;

// A stream framing (bootstrap, launch): `take(in)` takes one frame off the front of `in`
// (Result<std::optional<Bytes>>: the frame re-encoded from what was parsed, nullopt while
// incomplete). Checks that each frame re-encodes to exactly the bytes it consumed, apart from
// the header bytes in `ignored` (reserved fields the parser does not read); that an error or an
// incomplete frame consumes nothing; and that the frames and the outcome are the same whether the
// bytes arrive at once or `chunk` bytes at a time (as TCP may deliver them). Returns the frames.
template <typename Take>
std::vector<Bytes> check_framing(std::span<const unsigned char> data, std::size_t chunk, std::span<const std::size_t> ignored,
                                 Take take) {
  // What is still buffered must be exactly the stream's bytes from `taken` to `fed`.
  auto buffered_is = [&](const Bytes& in, std::size_t taken, std::size_t fed) {
    return in.size() == fed - taken && std::equal(in.begin(), in.end(), data.begin() + static_cast<std::ptrdiff_t>(taken));
  };
  auto run = [&](std::size_t step, bool& failed) {
    std::vector<Bytes> frames;
    Bytes in;
    std::size_t fed = 0;
    std::size_t taken = 0;
    failed = false;
    for (;;) {
      auto r = take(in);
      if (!r.ok()) {
        AUGUR_FUZZ_CHECK(r.status().code() == Code::kProtocol);
        AUGUR_FUZZ_CHECK(buffered_is(in, taken, fed));
        failed = true;
        break;
      }
      if (!r.value()) {
        AUGUR_FUZZ_CHECK(in.size() == fed - taken);  // (the contents are checked after each frame)
        if (fed == data.size()) break;
        const std::size_t n = std::min(step, data.size() - fed);
        in.insert(in.end(), data.begin() + static_cast<std::ptrdiff_t>(fed), data.begin() + static_cast<std::ptrdiff_t>(fed + n));
        fed += n;
        continue;
      }
      Bytes frame = std::move(*r.value());
      AUGUR_FUZZ_CHECK(frame.size() <= fed - taken);
      Bytes consumed(data.begin() + static_cast<std::ptrdiff_t>(taken), data.begin() + static_cast<std::ptrdiff_t>(taken + frame.size()));
      for (std::size_t i : ignored) consumed[i] = frame[i];
      AUGUR_FUZZ_CHECK(consumed == frame);
      taken += frame.size();
      AUGUR_FUZZ_CHECK(buffered_is(in, taken, fed));
      frames.push_back(std::move(frame));
    }
    return frames;
  };
  bool failed_at_once = false;
  bool failed_chunked = false;
  std::vector<Bytes> at_once = run(std::max<std::size_t>(data.size(), 1), failed_at_once);
  std::vector<Bytes> chunked = run(std::max<std::size_t>(chunk, 1), failed_chunked);
  AUGUR_FUZZ_CHECK(at_once == chunked && failed_at_once == failed_chunked);
  return at_once;
}

}  // namespace augur::fuzz
