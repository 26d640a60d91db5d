#include "augur/host/layout.h"

#include <algorithm>
#include <cstring>

namespace augur::host {

void gather(std::span<const IoRun> runs, std::byte* out, std::size_t n) noexcept {
  for (const IoRun& r : runs) {
    if (n == 0) return;
    const std::size_t k = std::min(n, r.length);
    std::memcpy(out, r.addr, k);
    out += k;
    n -= k;
  }
}

void scatter(const std::byte* in, std::size_t n, std::span<const IoRun> runs) noexcept {
  for (const IoRun& r : runs) {
    if (n == 0) return;
    const std::size_t k = std::min(n, r.length);
    std::memcpy(r.addr, in, k);
    in += k;
    n -= k;
  }
}

ReadPlan plan_reads(std::span<const proto::RemoteRun> remote, std::span<const IoRun> local,
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
    while (n > 0 && roff < r.length && li < local.size() && wr.count < max_sge && in_wr < max_bytes) {
      const IoRun& l = local[li];
      if (l.length == 0) {
        ++li;
        continue;
      }
      const std::uint64_t take = std::min<std::uint64_t>({l.length - loff, r.length - roff, n, max_bytes - in_wr});
      plan.sges.push_back({reinterpret_cast<std::uintptr_t>(l.addr) + loff, static_cast<std::uint32_t>(take), lkeys[li]});
      ++wr.count;
      in_wr += take;
      roff += take;
      loff += take;
      n -= take;
      if (loff == l.length) {
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
