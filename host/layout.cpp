#include "augur/host/layout.h"

#include <algorithm>
#include <cstring>

namespace augur::host {

ReadPlan plan_reads(std::span<const proto::RemoteRun> remote, const relations::Layout& local,
                    std::span<const std::uint32_t> lkeys, std::size_t n, std::uint32_t max_sge, std::uint32_t max_bytes) {
  ReadPlan plan;
  std::size_t ri = 0, li = 0;
  std::uint64_t roff = 0;
  std::size_t loff = 0;
  while (n > 0 && ri < remote.size()) {
    const proto::RemoteRun& r = remote[ri];
    ReadWr wr{r.addr + roff, r.rkey, static_cast<std::uint32_t>(plan.sges.size()), 0};
    std::uint64_t in_wr = 0;
    // Fill this READ from the remote run's rest, slice by local slice.
    while (n > 0 && roff < r.length && li < local.runs.size() && wr.count < max_sge && in_wr < max_bytes) {
      const relations::ByteRun& l = local.runs[li];
      if (l.length == 0) {
        ++li;
        continue;
      }
      const auto length = static_cast<std::size_t>(l.length);
      const std::uint64_t take = std::min<std::uint64_t>({length - loff, r.length - roff, n, max_bytes - in_wr});
      plan.sges.push_back({reinterpret_cast<std::uintptr_t>(local.at(l)) + loff, static_cast<std::uint32_t>(take), lkeys[li]});
      ++wr.count;
      in_wr += take;
      roff += take;
      loff += take;
      n -= take;
      if (loff == length) {
        ++li;
        loff = 0;
      }
    }
    if (wr.count == 0) break;  // the local side ran out (the caller's sizes disagree)
    plan.wrs.push_back(wr);
    if (roff == r.length) {
      ++ri;
      roff = 0;
    }
  }
  return plan;
}

}  // namespace augur::host
