// What the tests of early arrivals share (early_test.cpp, speculative_test.cpp): a job of two
// engines, the empty "go" messages that order a round between them, and page-aligned memory.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "augur/host/bootstrap.h"
#include "augur/host/engine.h"

namespace augur::host::testing {

inline constexpr int kWaitMs = 120'000;
inline constexpr std::uint32_t kGoCtx = 99;  // control messages of the test itself

struct Job {
  std::unique_ptr<TcpBootstrap> boot;
  std::unique_ptr<Engine> e;
};

inline Status signal(Engine& e, int to) {
  AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.isend(nullptr, 0, to, 0, kGoCtx));
  return e.wait(r, kWaitMs);
}

inline Status await_signal(Engine& e, int from) {
  AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e.irecv(nullptr, 0, from, 0, kGoCtx));
  return e.wait(r, kWaitMs);
}

// Page-aligned memory of at least `bytes` (rounded up to whole pages, as aligned_alloc requires).
struct Pages {
  static std::size_t page() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
  explicit Pages(std::size_t bytes)
      : n((bytes + page() - 1) / page() * page()), p(static_cast<std::byte*>(std::aligned_alloc(page(), n))) {}
  ~Pages() { std::free(p); }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  std::size_t n;
  std::byte* p;
};

}  // namespace augur::host::testing
