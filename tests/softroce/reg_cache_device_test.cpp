// The registration cache over real memory registrations: keys come from the device and carry an
// RDMA WRITE between two QPs; eviction really deregisters; a re-registration works again.
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "augur/nic/endpoint.h"
#include "augur/nic/reg_cache.h"

namespace augur::nic {
namespace {

constexpr std::size_t kLen = 3 * 4096 + 123;

Status write_and_check(Endpoint& from, const RegCache::Handle& src_reg, const std::vector<std::uint8_t>& src,
                       const RegCache::Handle& dst_reg, std::vector<std::uint8_t>& dst) {
  std::fill(dst.begin(), dst.end(), 0);
  Sge s{reinterpret_cast<std::uintptr_t>(src.data()), static_cast<std::uint32_t>(src.size()), src_reg.lkey()};
  AUGUR_RETURN_IF_ERROR(from.qp().post_send({.wr_id = 1,
                                             .op = SendOp::kRdmaWrite,
                                             .sges = {&s, 1},
                                             .remote_addr = reinterpret_cast<std::uintptr_t>(dst.data()),
                                             .rkey = dst_reg.rkey()}));
  AUGUR_ASSIGN_OR_RETURN(Completion c, from.wait_completion(60'000));
  AUGUR_RETURN_IF_ERROR(c.status());
  if (dst != src) return Status(Code::kInternal, "destination differs from source after RDMA WRITE");
  return Status::Ok();
}

TEST(RegCacheOnDevice, CachedKeysCarryRdmaAndEvictionDeregisters) {
  auto opt = endpoint_options_from_settings();
  ASSERT_TRUE(opt.ok()) << opt.status().to_string();
  auto a = Endpoint::create(opt.value());
  auto b = Endpoint::create(opt.value());
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().to_string() << b.status().to_string();
  auto aa = a->address();
  auto ba = b->address();
  ASSERT_TRUE(aa.ok() && ba.ok());
  ASSERT_TRUE(a->connect(ba.value()).ok());
  ASSERT_TRUE(b->connect(aa.value()).ok());

  RegCache src_cache(pd_registrar(a->pd(), kLocalWrite), {.max_bytes = 1 << 20, .max_entries = 1});
  RegCache dst_cache(pd_registrar(b->pd(), kRemoteWrite), {});
  std::vector<std::uint8_t> src(kLen), other(4096), dst(kLen);
  for (std::size_t i = 0; i < kLen; ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);

  std::weak_ptr<void> first_mr;
  {
    auto hs = src_cache.acquire(src.data(), src.size());
    auto hd = dst_cache.acquire(dst.data(), dst.size());
    ASSERT_TRUE(hs.ok() && hd.ok()) << hs.status().to_string() << hd.status().to_string();
    first_mr = hs->reg().owner;
    Status s = write_and_check(a.value(), hs.value(), src, hd.value(), dst);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  ASSERT_FALSE(first_mr.expired());  // released, but still cached
  {
    auto h = src_cache.acquire(other.data(), other.size());  // one entry allowed: evicts src's MR
    ASSERT_TRUE(h.ok());
  }
  EXPECT_TRUE(first_mr.expired()) << "eviction did not deregister";
  EXPECT_EQ(src_cache.counters().evictions, 1u);

  auto hs = src_cache.acquire(src.data(), src.size());  // a miss: registered again
  auto hd = dst_cache.acquire(dst.data(), dst.size());  // a hit
  ASSERT_TRUE(hs.ok() && hd.ok());
  EXPECT_EQ(src_cache.counters().misses, 3u);
  EXPECT_EQ(dst_cache.counters().hits, 1u);
  Status s = write_and_check(a.value(), hs.value(), src, hd.value(), dst);
  EXPECT_TRUE(s.ok()) << s.to_string();
}

}  // namespace
}  // namespace augur::nic
