// Run lists: the one model of a non-contiguous buffer in augur. A message's bytes, in message
// (packed) order, are runs of (offset, length) from one base address. A datatype's type map is
// one (Datatype::Flatten), the MPI shim hands the engine one for a non-contiguous send or
// receive, and the engine gathers, scatters, registers and reads through the same runs.
// Offsets are signed: MPI type maps may start below the buffer pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "augur/relations/encoding.h"
#include "augur/relations/relation.h"
#include "augur/status.h"

namespace augur::relations {

struct ByteRun {
  std::int64_t offset = 0;  // bytes from the base
  std::int64_t length = 0;
  friend bool operator==(const ByteRun&, const ByteRun&) = default;
};

// A run list over memory: the runs' offsets are from `base`. A view: the runs are not owned.
// `base` is writable because the same layouts serve receives; sends only read through it.
struct Layout {
  std::byte* base = nullptr;
  std::span<const ByteRun> runs;
  [[nodiscard]] bool empty() const noexcept { return runs.empty(); }
  [[nodiscard]] std::byte* at(const ByteRun& r) const noexcept { return base + r.offset; }
};

inline std::uint64_t RunBytes(std::span<const ByteRun> runs) noexcept {
  std::uint64_t n = 0;
  for (const ByteRun& r : runs) n += static_cast<std::uint64_t>(r.length);
  return n;
}

// Empty runs dropped, each run that starts where the previous one ends merged into it: the
// fewest runs for the same message. Refuses negative lengths and totals above `max_bytes`.
Result<std::vector<ByteRun>> NormalizeRuns(std::span<const ByteRun> runs, std::uint64_t max_bytes);

// Copies the first `n` bytes of the message the layout describes to `out`.
void GatherRuns(const Layout& from, std::byte* out, std::size_t n) noexcept;
// Copies `n` message bytes from `in` into the layout's runs, in order; never past their total.
void ScatterRuns(const std::byte* in, std::size_t n, const Layout& to) noexcept;

enum class Side : std::uint8_t {
  kSource,       // where a relation reads (for a pack relation: the typed buffer)
  kDestination,  // where it writes (for an unpack relation: the typed buffer)
};

// One side of a relation as a run list, in relation order: offsets in bytes from that side's
// element 0, adjacent elements merged. Concatenating the runs' bytes is the packed message
// (source side) or where its bytes land (destination side). Splitting into gather/scatter lists
// of a NIC's limits is the engine's work (host/layout.h).
Result<std::vector<ByteRun>> RelationRuns(const Relation& r, Side side);
Result<std::vector<ByteRun>> RelationRuns(const EncodedRelation& r, Side side);

}  // namespace augur::relations
