// Export a relation as gather/scatter lists for the NIC: runs of (address, length) in relation
// order, split into lists of at most `max_sge` entries (rxe reports max_sge 32). No verbs
// types here: nic/ converts SgeEntry to ibv_sge.
#pragma once

#include <cstdint>
#include <vector>

#include "augur/relations/encoding.h"
#include "augur/relations/relation.h"
#include "augur/status.h"

namespace augur::relations {

struct SgeEntry {
  std::uint64_t addr = 0;
  std::uint32_t length = 0;
  friend bool operator==(const SgeEntry&, const SgeEntry&) = default;
};
using SgeList = std::vector<SgeEntry>;

enum class Side : std::uint8_t {
  kSource,       // gather list: where a send reads (packed message order)
  kDestination,  // scatter list: where a receive writes
};

struct SgeOptions {
  std::uint32_t max_sge = 32;            // entries per list
  std::uint32_t max_length = 1U << 31;   // bytes per entry (verbs messages are < 2 GiB)
};

// `base` is the address of element 0 of the chosen side's layout. Adjacent elements merge into
// one entry; concatenating the lists' entries reproduces the packed message byte for byte.
Result<std::vector<SgeList>> ExportSge(const Relation& r, Side side, std::uint64_t base,
                                       const SgeOptions& options = {});
Result<std::vector<SgeList>> ExportSge(const EncodedRelation& r, Side side, std::uint64_t base,
                                       const SgeOptions& options = {});

}  // namespace augur::relations
