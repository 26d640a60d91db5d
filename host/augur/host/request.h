// Request: one send or receive in flight, as the engine and its protocol parts complete it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "augur/relations/runs.h"
#include "augur/status.h"

namespace augur::host {

// How a message travelled: to oneself, through a bounce slot, by RDMA READ, written straight
// into the receive buffer through a credit, or written early into a landing zone and moved into
// the receive buffer at the match (by remap or copy; docs/early.md).
// kOneSided: an RDMA operation on a peer's exposed memory (Engine::rma), not a message.
enum class Path : std::uint8_t { kNone, kSelf, kBounce, kRendezvous, kDirect, kLanding, kOneSided };

struct Request {
  // Set last, with release order, by whichever thread runs the protocols; the other fields are
  // final once it reads true.
  std::atomic<bool> done{false};
  bool cancelled = false;     // a receive removed by Engine::cancel before it matched
  Status status;              // kTruncated: message longer than the buffer (length says how long)
  Path path = Path::kNone;
  // Receive results.
  std::int32_t source = -1;
  std::int32_t tag = -1;
  std::size_t length = 0;     // bytes of the message (as sent), even when truncated
  // Engine-internal: the direct-placement credit this receive holds (-1: none).
  std::int32_t credit_peer = -1;
  std::int32_t credit_slot = -1;
  // Engine-internal: may complete before all of a rendezvous message is in (early release).
  bool releasable = false;
  // Engine-internal: the layout of a non-contiguous request (isendv/irecvv; empty: contiguous).
  std::byte* base = nullptr;
  std::vector<relations::ByteRun> runs;
  [[nodiscard]] relations::Layout layout() const noexcept { return {base, runs}; }
};
using RequestPtr = std::shared_ptr<Request>;

}  // namespace augur::host
