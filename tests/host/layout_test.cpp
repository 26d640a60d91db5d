// Native tests of the layout arithmetic behind non-contiguous messages: gather/scatter copies
// through relations' run lists and the pairing of a sender's remote runs with a receiver's
// scatter list into RDMA READs.
#include "augur/host/layout.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace augur::host {
namespace {

using relations::ByteRun;
using relations::Layout;

// Runs of random lengths (1..max_len) with random gaps, laid out in `mem`, in shuffled order
// when `shuffle` (packed order need not be address order).
std::vector<ByteRun> random_runs(std::vector<std::byte>& mem, std::size_t count, std::size_t max_len, std::mt19937& rng,
                                 bool shuffle) {
  std::vector<ByteRun> runs;
  std::size_t at = 1;
  std::uniform_int_distribution<std::size_t> len(1, max_len), gap(0, 7);
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t l = len(rng);
    spans.emplace_back(at, l);
    at += l + gap(rng) + 1;
  }
  mem.assign(at + 64, std::byte{0});
  if (shuffle) std::shuffle(spans.begin(), spans.end(), rng);
  for (auto [off, l] : spans) runs.push_back({static_cast<std::int64_t>(off), static_cast<std::int64_t>(l)});
  return runs;
}

TEST(Layout, GatherThenScatterRoundTripsAndNeverWritesPastTheRuns) {
  std::mt19937 rng(7);
  std::vector<std::byte> src_mem, dst_mem;
  auto src = random_runs(src_mem, 37, 50, rng, true);
  for (std::size_t i = 0; i < src_mem.size(); ++i) src_mem[i] = static_cast<std::byte>(i * 29 + 3);
  const std::size_t n = relations::RunBytes(src);
  std::vector<std::byte> packed(n);
  relations::GatherRuns({src_mem.data(), src}, packed.data(), n);
  std::size_t k = 0;
  for (const ByteRun& r : src) {
    for (std::int64_t i = 0; i < r.length; ++i) ASSERT_EQ(packed[k++], src_mem[static_cast<std::size_t>(r.offset + i)]);
  }
  // Scatter into a shorter layout: only its bytes change.
  auto dst = random_runs(dst_mem, 11, 40, rng, false);
  const std::size_t cap = relations::RunBytes(dst);
  ASSERT_LT(cap, n);
  std::fill(dst_mem.begin(), dst_mem.end(), std::byte{0xcc});
  relations::ScatterRuns(packed.data(), std::min(n, cap), {dst_mem.data(), dst});
  std::vector<bool> inside(dst_mem.size());
  k = 0;
  for (const ByteRun& r : dst) {
    for (std::int64_t i = 0; i < r.length; ++i) {
      const auto at = static_cast<std::size_t>(r.offset + i);
      ASSERT_EQ(dst_mem[at], packed[k++]);
      inside[at] = true;
    }
  }
  for (std::size_t i = 0; i < dst_mem.size(); ++i) {
    if (!inside[i]) {
      ASSERT_EQ(dst_mem[i], std::byte{0xcc}) << "byte " << i << " outside the layout was written";
    }
  }
}

// Executes a plan as the NIC would and checks it against pack-then-unpack.
void check_plan(std::size_t remote_count, std::size_t local_count, std::uint32_t max_sge, std::uint32_t max_bytes,
                bool truncate, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> src_mem, dst_mem;
  auto src = random_runs(src_mem, remote_count, 300, rng, true);
  for (std::size_t i = 0; i < src_mem.size(); ++i) src_mem[i] = static_cast<std::byte>(i * 13 + seed);
  auto dst = random_runs(dst_mem, local_count, 300, rng, true);
  std::fill(dst_mem.begin(), dst_mem.end(), std::byte{0xcc});
  const std::size_t total = relations::RunBytes(src), cap = relations::RunBytes(dst);
  const Layout src_at{src_mem.data(), src}, dst_at{dst_mem.data(), dst};
  const std::size_t n = truncate ? std::min(total, cap) / 2 : std::min(total, cap);
  std::vector<proto::RemoteRun> remote;
  for (std::size_t i = 0; i < src.size(); ++i) {
    remote.push_back({reinterpret_cast<std::uintptr_t>(src_at.at(src[i])), static_cast<std::uint32_t>(src[i].length),
                      static_cast<std::uint32_t>(100 + i)});
  }
  std::vector<std::uint32_t> keys(dst.size());
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::uint32_t>(500 + i);
  const ReadPlan plan = plan_reads(remote, dst_at, keys, n, max_sge, max_bytes);
  std::size_t moved = 0;
  for (const ReadWr& w : plan.wrs) {
    ASSERT_GE(w.count, 1u);
    ASSERT_LE(w.count, max_sge);
    // Within one remote run, with that run's key.
    const auto ri = w.rkey - 100;
    ASSERT_LT(ri, remote.size());
    const std::uint64_t end = remote[ri].addr + remote[ri].length;
    std::uint64_t from = w.remote_addr, bytes = 0;
    for (std::uint32_t s = w.first; s < w.first + w.count; ++s) {
      const nic::Sge& g = plan.sges[s];
      ASSERT_GT(g.length, 0u);
      bytes += g.length;
      ASSERT_LE(from + g.length, end);
      std::memcpy(reinterpret_cast<void*>(g.addr), reinterpret_cast<const void*>(from), g.length);
      from += g.length;
    }
    ASSERT_LE(bytes, max_bytes);
    moved += bytes;
  }
  ASSERT_EQ(moved, n);
  std::vector<std::byte> packed(total), want(dst_mem.size(), std::byte{0xcc});
  relations::GatherRuns(src_at, packed.data(), total);
  for (std::size_t i = 0, k = 0; i < dst.size() && k < n; ++i) {
    for (std::int64_t j = 0; j < dst[i].length && k < n; ++j) want[static_cast<std::size_t>(dst[i].offset + j)] = packed[k++];
  }
  ASSERT_EQ(dst_mem, want);
  // The keys follow the local runs.
  for (const nic::Sge& g : plan.sges) {
    const std::size_t li = g.lkey - 500;
    ASSERT_LT(li, dst.size());
    const auto lo = reinterpret_cast<std::uintptr_t>(dst_at.at(dst[li]));
    ASSERT_GE(g.addr, lo);
    ASSERT_LE(g.addr + g.length, lo + static_cast<std::uint64_t>(dst[li].length));
  }
}

TEST(Layout, ReadPlanMatchesPackThenUnpack) {
  unsigned seed = 1;
  for (auto [r, l] : {std::pair{1, 1}, {1, 100}, {100, 1}, {3, 70}, {70, 3}, {64, 64}, {200, 17}}) {
    for (std::uint32_t sge : {1u, 2u, 32u}) {
      for (bool truncate : {false, true}) {
        SCOPED_TRACE(testing::Message() << r << " remote, " << l << " local, max_sge " << sge << (truncate ? ", truncated" : ""));
        check_plan(static_cast<std::size_t>(r), static_cast<std::size_t>(l), sge, 1u << 30, truncate, seed++);
        check_plan(static_cast<std::size_t>(r), static_cast<std::size_t>(l), sge, 97, truncate, seed++);
      }
    }
  }
}

TEST(Layout, OneRemoteRunIntoManyLocalRunsTakesSeveralReads) {
  std::vector<std::byte> src(64 * 10), dst(64 * 20);
  std::vector<ByteRun> runs;
  for (std::int64_t i = 0; i < 64; ++i) runs.push_back({20 * i, 10});
  const Layout local{dst.data(), runs};
  const std::vector<proto::RemoteRun> remote = {{reinterpret_cast<std::uintptr_t>(src.data()), 640, 1}};
  const std::vector<std::uint32_t> keys(runs.size(), 2);
  const ReadPlan plan = plan_reads(remote, local, keys, 640, 32);
  ASSERT_EQ(plan.wrs.size(), 2u);  // 64 slices, 32 per READ
  EXPECT_EQ(plan.wrs[1].remote_addr, remote[0].addr + 320);
  EXPECT_EQ(plan_reads(remote, local, keys, 0, 32).wrs.size(), 0u);
}

}  // namespace
}  // namespace augur::host
