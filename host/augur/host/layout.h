// Non-contiguous buffers at the engine level: a layout is a relations::Layout, runs of (offset,
// length) from a base in packed message order (relations/augur/relations/runs.h: the one run-list
// model, which the MPI shim's datatypes also give). Eager messages are gathered from the runs
// into a send slot and scattered from the bounce slot into the runs (one copy each side, by
// relations::GatherRuns/ScatterRuns); rendezvous READs scatter straight into the runs through
// local SGE lists, planned here. Pure functions, so the arithmetic is tested natively.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "augur/host/protocol.h"
#include "augur/nic/verbs.h"
#include "augur/relations/runs.h"

namespace augur::host {

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
// in all. `lkeys[i]` is the key of local.runs[i]. The caller guarantees both sides hold `n` bytes.
ReadPlan plan_reads(std::span<const proto::RemoteRun> remote, const relations::Layout& local,
                    std::span<const std::uint32_t> lkeys, std::size_t n, std::uint32_t max_sge,
                    std::uint32_t max_bytes = 1u << 30);

}  // namespace augur::host
