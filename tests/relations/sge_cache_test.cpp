#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "augur/relations/cache.h"
#include "augur/relations/encoding.h"
#include "augur/relations/executor.h"
#include "augur/relations/sge.h"
#include "test_util.h"

namespace augur::relations {
namespace {

// Concatenating the gather list's bytes must reproduce Pack's output exactly.
std::vector<std::byte> Gather(const std::vector<SgeList>& lists) {
  std::vector<std::byte> out;
  for (const SgeList& l : lists)
    for (const SgeEntry& e : l) {
      const auto* p = reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(e.addr));
      out.insert(out.end(), p, p + e.length);
    }
  return out;
}

TEST(Sge, GatherAndScatterListsReproducePackAndUnpack) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 80; ++iter) {
    const std::size_t es = (iter % 2 == 0) ? 8 : 3;
    Relation r = testing::RandomRelation(rng, es);
    const std::vector<std::byte> src = testing::Pattern(r.src_extent() * es, 5);
    const SgeOptions opt{static_cast<std::uint32_t>(1 + rng() % 6), 64};
    const auto base = reinterpret_cast<std::uintptr_t>(src.data());
    for (Encoding enc : {Encoding::kDmrlec, Encoding::kNested}) {
      EncodedRelation e = EncodedRelation::Encode(r, enc).value();
      auto lists = ExportSge(e, Side::kSource, base, opt).value();
      EXPECT_EQ(lists, ExportSge(r, Side::kSource, base, opt).value());
      EXPECT_EQ(Gather(lists), testing::RefPack(r, src));
      for (const SgeList& l : lists) {
        EXPECT_FALSE(l.empty());
        EXPECT_LE(l.size(), opt.max_sge);
        for (const SgeEntry& x : l) EXPECT_LE(x.length, opt.max_length);
      }
      // Scatter: writing packed bytes entry by entry equals Unpack.
      const std::vector<std::byte> packed = testing::RefPack(r, src);
      std::vector<std::byte> dst = testing::Pattern(r.dst_extent() * es, 9);
      std::vector<std::byte> expect = dst;
      testing::RefUnpack(r, packed, expect);
      const auto dbase = reinterpret_cast<std::uintptr_t>(dst.data());
      std::size_t off = 0;
      const std::vector<SgeList> scatter = ExportSge(e, Side::kDestination, dbase, opt).value();
      for (const SgeList& l : scatter)
        for (const SgeEntry& x : l) {
          std::memcpy(reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(x.addr)), packed.data() + off, x.length);
          off += x.length;
        }
      EXPECT_EQ(off, packed.size());
      EXPECT_EQ(dst, expect);
    }
  }
}

TEST(Sge, MergesRunsAndSplitsLists) {
  // 3 runs of 4 doubles at stride 10 elements: 3 entries of 32 bytes, max 2 per list.
  std::vector<Tuple> t;
  for (std::uint64_t b = 0; b < 3; ++b)
    for (std::uint64_t i = 0; i < 4; ++i) t.push_back({b * 10 + i, b * 4 + i});
  Relation r = Relation::Make(t, 30, 12, 8).value();
  auto lists = ExportSge(r, Side::kSource, 1000, {2, 1U << 31}).value();
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0], (SgeList{{1000, 32}, {1080, 32}}));
  EXPECT_EQ(lists[1], (SgeList{{1160, 32}}));
  // The destination side is one contiguous run, cut at max_length.
  auto d = ExportSge(r, Side::kDestination, 0, {32, 40}).value();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], (SgeList{{0, 40}, {40, 40}, {80, 16}}));
}

TEST(Sge, RejectsBadOptions) {
  Relation r = Relation::Make({{0, 0}}, 1, 1, 8).value();
  EXPECT_EQ(ExportSge(r, Side::kSource, 0, {0, 64}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ExportSge(r, Side::kSource, 0, {4, 4}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ExportSge(r, Side::kSource, ~std::uint64_t{0} - 4, {4, 64}).status().code(),
            Code::kOutOfRange);
}

EncodedRelation Sized(std::uint64_t tuples) {
  std::vector<Tuple> t;
  for (std::uint64_t i = 0; i < tuples; ++i) t.push_back({i, i});
  return EncodedRelation::Encode(Relation::Make(t, tuples, tuples, 8).value(), Encoding::kAapair).value();
}

TEST(Cache, BoundLruAndCounters) {
  RelationCache cache(100 * 16);  // room for 100 AAPAIR tuples
  EXPECT_EQ(cache.Find("a"), nullptr);
  ASSERT_TRUE(cache.Insert("a", Sized(40)).ok());
  ASSERT_TRUE(cache.Insert("b", Sized(40)).ok());
  ASSERT_NE(cache.Find("a"), nullptr);  // a is now most recent
  ASSERT_TRUE(cache.Insert("c", Sized(40)).ok());  // evicts b
  EXPECT_EQ(cache.Find("b"), nullptr);
  EXPECT_NE(cache.Find("a"), nullptr);
  EXPECT_NE(cache.Find("c"), nullptr);
  CacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.bytes, 80u * 16);
  EXPECT_LE(s.bytes, cache.max_bytes());
  EXPECT_EQ(cache.Insert("huge", Sized(101)).status().code(), Code::kResourceExhausted);
  // Replacing a key does not double count.
  ASSERT_TRUE(cache.Insert("a", Sized(10)).ok());
  EXPECT_EQ(cache.stats().bytes, 50u * 16);
  EXPECT_TRUE(cache.Erase("a"));
  EXPECT_FALSE(cache.Erase("a"));
  cache.Clear();
  EXPECT_EQ(cache.stats().bytes, 0u);
}

TEST(Cache, FindOrBuildBuildsOnceAndStaysBounded) {
  RelationCache cache(1000);
  int builds = 0;
  auto build = [&] {
    ++builds;
    return Result<EncodedRelation>(Sized(20));
  };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.FindOrBuild("k", build).ok());
  EXPECT_EQ(builds, 1);
  for (int i = 0; i < 50; ++i) {
    std::string key = "k";
    key += std::to_string(i);
    ASSERT_TRUE(cache.FindOrBuild(key, build).ok());
    EXPECT_LE(cache.stats().bytes, 1000u);
  }
  auto failing = [] { return Result<EncodedRelation>(Status(Code::kInvalidArgument, "bad")); };
  EXPECT_EQ(cache.FindOrBuild("bad", failing).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace augur::relations
