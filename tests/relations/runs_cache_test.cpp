#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "augur/relations/cache.h"
#include "augur/relations/encoding.h"
#include "augur/relations/executor.h"
#include "augur/relations/runs.h"
#include "test_util.h"

namespace augur::relations {
namespace {

TEST(Runs, OfARelationGatherAndScatterAsPackAndUnpack) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 80; ++iter) {
    const std::size_t es = (iter % 2 == 0) ? 8 : 3;
    Relation r = testing::RandomRelation(rng, es);
    const std::vector<std::byte> src = testing::Pattern(r.src_extent() * es, 5);
    const std::vector<std::byte> packed = testing::RefPack(r, src);
    for (Encoding enc : {Encoding::kDmrlec, Encoding::kNested}) {
      EncodedRelation e = EncodedRelation::Encode(r, enc).value();
      const std::vector<ByteRun> gather = RelationRuns(e, Side::kSource).value();
      EXPECT_EQ(gather, RelationRuns(r, Side::kSource).value());
      EXPECT_EQ(RunBytes(gather), packed.size());
      for (std::size_t i = 1; i < gather.size(); ++i)  // merged: no run follows on from the last
        EXPECT_NE(gather[i - 1].offset + gather[i - 1].length, gather[i].offset);
      std::vector<std::byte> out(packed.size());
      GatherRuns({const_cast<std::byte*>(src.data()), gather}, out.data(), out.size());
      EXPECT_EQ(out, packed);
      // Scatter: the packed bytes through the destination side's runs equal Unpack.
      std::vector<std::byte> dst = testing::Pattern(r.dst_extent() * es, 9);
      std::vector<std::byte> expect = dst;
      testing::RefUnpack(r, packed, expect);
      const std::vector<ByteRun> scatter = RelationRuns(e, Side::kDestination).value();
      EXPECT_EQ(RunBytes(scatter), packed.size());
      ScatterRuns(packed.data(), packed.size(), {dst.data(), scatter});
      EXPECT_EQ(dst, expect);
    }
  }
}

TEST(Runs, MergeAdjacentElementsAndStopAtTheCount) {
  // 3 blocks of 4 doubles at a stride of 10 elements: 3 runs of 32 bytes; the packed side is one.
  std::vector<Tuple> t;
  for (std::uint64_t b = 0; b < 3; ++b)
    for (std::uint64_t i = 0; i < 4; ++i) t.push_back({b * 10 + i, b * 4 + i});
  Relation r = Relation::Make(t, 30, 12, 8).value();
  EXPECT_EQ(RelationRuns(r, Side::kSource).value(), (std::vector<ByteRun>{{0, 32}, {80, 32}, {160, 32}}));
  EXPECT_EQ(RelationRuns(r, Side::kDestination).value(), (std::vector<ByteRun>{{0, 96}}));
  // Gather and scatter move only the first n bytes, never past the runs.
  std::vector<std::byte> mem(240), out(40, std::byte{0x77});
  for (std::size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<std::byte>(i);
  const std::vector<ByteRun> runs = RelationRuns(r, Side::kSource).value();
  GatherRuns({mem.data(), runs}, out.data(), 36);
  EXPECT_EQ(out[31], std::byte{31});
  EXPECT_EQ(out[32], std::byte{80});
  EXPECT_EQ(out[35], std::byte{83});
  EXPECT_EQ(out[36], std::byte{0x77});
  std::vector<std::byte> back(240, std::byte{0});
  ScatterRuns(out.data(), 36, {back.data(), runs});
  EXPECT_EQ(back[83], std::byte{83});
  EXPECT_EQ(back[84], std::byte{0});
  EXPECT_EQ(back[32], std::byte{0});
}

TEST(Runs, NormalizeDropsEmptyRunsMergesAndBoundsTheTotal) {
  const std::vector<ByteRun> in = {{-16, 8}, {-8, 8}, {0, 0}, {64, 8}, {72, 0}, {72, 8}, {8, 4}};
  EXPECT_EQ(NormalizeRuns(in, 1000).value(), (std::vector<ByteRun>{{-16, 16}, {64, 16}, {8, 4}}));
  EXPECT_EQ(NormalizeRuns(in, 35).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(NormalizeRuns(std::vector<ByteRun>{{0, -1}}, 1000).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(NormalizeRuns({}, 0).value().empty());
  // A layout past 2^63 bytes has no run list.
  Relation huge = Relation::Make({{0, 0}}, (std::uint64_t{1} << 61) - 1, 1, 8).value();
  EXPECT_EQ(RelationRuns(huge, Side::kSource).status().code(), Code::kOutOfRange);
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
