// Non-contiguous buffers at the engine level: a layout is a list of runs (address, length) in
// packed message order, as relations::ExportSge or the MPI shim's flattened datatypes give them.
// Eager messages are gathered from the runs into a send slot and scattered from the bounce slot
// into the runs (one copy each side); rendezvous READs scatter straight into the runs through
// local SGE lists. Pure functions here, so the arithmetic is tested natively.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "augur/nic/verbs.h"
#include "augur/host/protocol.h"

namespace augur::host {

struct IoRun {
  std::byte* addr = nullptr;
  std::size_t length = 0;
  friend bool operator==(const IoRun&, const IoRun&) = default;
};

inline std::size_t layout_bytes(std::span<const IoRun> runs) noexcept {
  std::size_t n = 0;
  for (const IoRun& r : runs) n += r.length;
  return n;
}

// Copies the first `n` bytes of the packed message the runs describe to `out`.
void gather(std::span<const IoRun> runs, std::byte* out, std::size_t n) noexcept;
// Copies `n` packed bytes from `in` into the runs, in order; never past their total.
void scatter(const std::byte* in, std::size_t n, std::span<const IoRun> runs) noexcept;

// One RDMA READ of a rendezvous message: a remote range read into sges[first, first + count).
struct ReadWr {
  std::uint64_t remote_addr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t first = 0;
  std::uint32_t count = 0;
};
struct ReadPlan {
  std::vector<nic::Sge> sges;
  std::vector<ReadWr> wrs;
};

// Pairs the remote runs with the local ones for the first `n` bytes of the message: each READ
// reads within one remote run into at most `max_sge` local slices of at most `max_bytes` bytes
// in all. `lkeys[i]` is the key of local[i]. The caller guarantees both sides hold `n` bytes.
ReadPlan plan_reads(std::span<const proto::RemoteRun> remote, std::span<const IoRun> local,
                    std::span<const std::uint32_t> lkeys, std::size_t n, std::uint32_t max_sge,
                    std::uint32_t max_bytes = 1u << 30);

}  // namespace augur::host
