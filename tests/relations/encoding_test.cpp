#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "augur/relations/encoding.h"
#include "augur/relations/executor.h"
#include "augur/relations/relation.h"
#include "test_util.h"

namespace augur::relations {
namespace {

using testing::Pattern;
using testing::RandomRelation;

std::vector<Tuple> Tuples(const Relation& r) { return {r.tuples().begin(), r.tuples().end()}; }

TEST(Relation, SortsSourceFirstOrDestinationFirst) {
  std::vector<Tuple> t = {{3, 0}, {1, 2}, {1, 1}, {0, 3}};
  Relation s = Relation::Make(t, 4, 4, 8).value();
  EXPECT_EQ(Tuples(s), (std::vector<Tuple>{{0, 3}, {1, 1}, {1, 2}, {3, 0}}));
  Relation d = Relation::Make(t, 4, 4, 8, Order::kDestinationFirst).value();
  EXPECT_EQ(Tuples(d), (std::vector<Tuple>{{3, 0}, {1, 1}, {1, 2}, {0, 3}}));
  EXPECT_EQ(Tuples(s.reordered(Order::kDestinationFirst).value()), Tuples(d));
  EXPECT_EQ(s.payload_bytes(), 32u);
}

TEST(Relation, RejectsBadInput) {
  EXPECT_EQ(Relation::Make({{0, 1}, {2, 1}}, 4, 4, 8).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Relation::Make({{4, 0}}, 4, 4, 8).status().code(), Code::kOutOfRange);
  EXPECT_EQ(Relation::Make({{0, 4}}, 4, 4, 8).status().code(), Code::kOutOfRange);
  EXPECT_EQ(Relation::Make({}, 4, 4, 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Relation::Make({}, std::uint64_t{1} << 62, 4, 8).status().code(), Code::kOutOfRange);
  const std::uint64_t s[] = {0, 1};
  const std::uint64_t d[] = {0};
  EXPECT_EQ(RelationFromOffsets(s, d, 4, 4, 8).status().code(), Code::kInvalidArgument);
  // Replication (one source, two destinations) is a relation; its inverse is not.
  Relation rep = Relation::Make({{0, 0}, {0, 1}}, 1, 2, 4).value();
  EXPECT_EQ(rep.inverse().status().code(), Code::kInvalidArgument);
}

TEST(Relation, GatherKeepsCallerOrder) {
  const std::uint64_t s[] = {5, 2, 9};
  Relation g = GatherRelation(s, 10, 4).value();
  EXPECT_EQ(Tuples(g), (std::vector<Tuple>{{5, 0}, {2, 1}, {9, 2}}));
  Relation inv = g.inverse().value();
  EXPECT_EQ(Tuples(inv), (std::vector<Tuple>{{0, 5}, {1, 2}, {2, 9}}));
}

// The paper's Figure 1 pattern: stride-2 to stride-1, four times, repeated stride-8 to
// stride-8 16 times.
Relation PaperFigure1() {
  std::vector<Tuple> t;
  for (std::uint64_t b = 0; b < 16; ++b)
    for (std::uint64_t i = 0; i < 4; ++i) t.push_back({b * 8 + 2 * i, b * 8 + i});
  return Relation::Make(std::move(t), 128, 128, 8).value();
}

TEST(Encoding, PaperSymbolsForFigure1) {
  Relation r = PaperFigure1();
  EXPECT_EQ(DifferenceMapRle(r.tuples()),
            (std::vector<Symbol>{{0, 0, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3},
                                 {2, 5, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3},
                                 {2, 5, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3},
                                 {2, 5, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3},
                                 {2, 5, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3}, {2, 5, 1}, {2, 1, 3},
                                 {2, 5, 1}, {2, 1, 3}}));
  EncodedRelation c = EncodedRelation::Encode(r, Encoding::kDmrlec).value();
  EXPECT_EQ(c.symbols().size(), 3u);
  EXPECT_EQ(c.key_bits(), 2u);
  EXPECT_EQ(c.key_count(), 32u);
  EXPECT_EQ(c.size_bytes(), 3 * sizeof(Symbol) + 8);  // 32 two-bit keys fill one word
  EncodedRelation a = EncodedRelation::Encode(r, Encoding::kAablk).value();
  EXPECT_EQ(a.blocks().size(), 64u);  // no stride-1 to stride-1 runs at all
  EncodedRelation n = EncodedRelation::Encode(r, Encoding::kNested).value();
  ASSERT_EQ(n.nests().size(), 1u);  // constant size: one block of one run, 16 times
  EXPECT_EQ(n.nests()[0].count, 16u);
  EXPECT_EQ(n.nests()[0].os, 8);
  EXPECT_EQ(n.runs(), (std::vector<relations::Run>{{0, 0, 4, 2, 1}}));
}

TEST(Encoding, KeyBitsArePowersOfTwo) {
  EXPECT_EQ(DmrlecKeyBits(0), 1u);
  EXPECT_EQ(DmrlecKeyBits(1), 1u);
  EXPECT_EQ(DmrlecKeyBits(2), 1u);
  EXPECT_EQ(DmrlecKeyBits(3), 2u);
  EXPECT_EQ(DmrlecKeyBits(4), 2u);
  EXPECT_EQ(DmrlecKeyBits(5), 4u);
  EXPECT_EQ(DmrlecKeyBits(17), 8u);
  EXPECT_EQ(DmrlecKeyBits(257), 16u);
  EXPECT_EQ(DmrlecKeyBits(65537), 32u);
}

TEST(Encoding, DmrlecWideKeysRoundTrip) {
  // 300 distinct symbols force 16-bit keys.
  std::vector<Tuple> t;
  std::uint64_t s = 0;
  for (std::uint64_t i = 0; i < 300; ++i) {
    s += i + 1;
    t.push_back({s, i});
  }
  Relation r = Relation::Make(t, s + 1, 300, 1).value();
  EncodedRelation c = EncodedRelation::Encode(r, Encoding::kDmrlec).value();
  EXPECT_EQ(c.key_bits(), 16u);
  EXPECT_EQ(c.Decode(), Tuples(r));
}

// Every encoding: decode gives the exact tuples, and pack/unpack/copy match the one-element
// reference byte for byte, for every element size the executors specialise and two they don't.
TEST(Encoding, RandomRoundTripsAndExecutors) {
  std::mt19937_64 rng(42);
  const std::size_t sizes[] = {1, 2, 3, 4, 8, 16, 24};
  for (int iter = 0; iter < 150; ++iter) {
    const std::size_t es = sizes[static_cast<std::size_t>(iter) % std::size(sizes)];
    Relation r = RandomRelation(rng, es);
    const std::vector<std::byte> src = Pattern(r.src_extent() * es, 1);
    const std::vector<std::byte> packed_ref = testing::RefPack(r, src);
    std::vector<std::byte> unpack_ref = Pattern(r.dst_extent() * es, 2);
    testing::RefUnpack(r, packed_ref, unpack_ref);
    std::vector<std::byte> copy_ref = Pattern(r.dst_extent() * es, 3);
    testing::RefCopy(r, src, copy_ref);
    for (Encoding enc : kAllEncodings) {
      SCOPED_TRACE(std::string(EncodingName(enc)) + " iter " + std::to_string(iter));
      EncodedRelation e = EncodedRelation::Encode(r, enc).value();
      ASSERT_EQ(e.Decode(), Tuples(r));
      EXPECT_EQ(e.ToRelation().value(), r);
      EXPECT_EQ(e.tuple_count(), r.size());
      std::vector<std::byte> packed(r.size() * es);
      ASSERT_TRUE(Pack(e, src, packed).ok());
      EXPECT_EQ(packed, packed_ref);
      std::vector<std::byte> dst = Pattern(r.dst_extent() * es, 2);
      ASSERT_TRUE(Unpack(e, packed_ref, dst).ok());
      EXPECT_EQ(dst, unpack_ref);
      dst = Pattern(r.dst_extent() * es, 3);
      ASSERT_TRUE(Copy(e, src, dst).ok());
      EXPECT_EQ(dst, copy_ref);
    }
    std::vector<std::byte> packed(r.size() * es);
    ASSERT_TRUE(Pack(r, src, packed).ok());
    EXPECT_EQ(packed, packed_ref);
  }
}

// Pack relations (the packed side follows on) and their inverses, unpack relations, store AABLK
// in 8 bytes a block; every executor and Decode() give what the relation says.
TEST(Encoding, AablkOfPackAndUnpackRelationsIsCompactAndExact) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 40; ++iter) {
    std::vector<std::uint64_t> offs;  // irregular blocks of 1-8 elements, gaps of 0-7
    std::uint64_t at = 0;
    for (int b = 0; b < 200; ++b) {
      at += rng() % 8;
      const std::uint64_t len = 1 + rng() % 8;
      for (std::uint64_t j = 0; j < len; ++j) offs.push_back(at + j);
      at += len;
    }
    const std::size_t es = iter % 2 == 0 ? 8 : 3;
    const Relation pack = GatherRelation(offs, at, es).value();
    const Relation unpack = pack.inverse().value();
    for (const Relation* r : {&pack, &unpack}) {
      SCOPED_TRACE(std::string(r == &pack ? "pack" : "unpack") + " iter " + std::to_string(iter));
      const EncodedRelation e = EncodedRelation::Encode(*r, Encoding::kAablk).value();
      EXPECT_EQ(e.implicit_side(), r == &pack ? ImplicitSide::kDestination : ImplicitSide::kSource);
      EXPECT_TRUE(e.wide_blocks().empty());
      EXPECT_EQ(e.size_bytes(), e.packed_blocks().size() * sizeof(PackedBlock));
      EXPECT_EQ(e.blocks().size(), e.packed_blocks().size());
      ASSERT_EQ(e.Decode(), Tuples(*r));
      const std::vector<std::byte> src = Pattern(r->src_extent() * es, 1);
      std::vector<std::byte> want = Pattern(r->dst_extent() * es, 2), got = want;
      testing::RefCopy(*r, src, want);
      ASSERT_TRUE(Copy(e, src, got).ok());
      EXPECT_EQ(got, want);
      const std::vector<std::byte> packed_ref = testing::RefPack(*r, src);
      std::vector<std::byte> packed(r->size() * es);
      ASSERT_TRUE(Pack(e, src, packed).ok());
      EXPECT_EQ(packed, packed_ref);
      want = Pattern(r->dst_extent() * es, 3);
      got = want;
      testing::RefUnpack(*r, packed_ref, want);
      ASSERT_TRUE(Unpack(e, packed_ref, got).ok());
      EXPECT_EQ(got, want);
    }
  }
  // Neither side following on (the paper's Figure 1 is stride 2 to stride 1 in blocks of 4):
  // the wide form, exact.
  const EncodedRelation w = EncodedRelation::Encode(PaperFigure1(), Encoding::kAablk).value();
  EXPECT_EQ(w.implicit_side(), ImplicitSide::kNone);
  EXPECT_TRUE(w.packed_blocks().empty());
  EXPECT_EQ(w.Decode(), Tuples(PaperFigure1()));
}

// The compact AABLK executor copies blocks of 8-64 bytes with a fixed sequence of overlapping
// words: at every block length across its edges (below 8, 8, 16, 64, above 64) it writes
// exactly the blocks, unpack leaves the gaps between them as they were, and blocks that start
// at odd offsets are copied as well as aligned ones.
TEST(Encoding, AablkBlocksOfEveryLengthAreExactAndLeaveTheGaps) {
  for (const std::size_t es : {std::size_t{1}, std::size_t{8}}) {
    for (std::uint64_t len = 1; len * es <= 136; ++len) {
      SCOPED_TRACE("element size " + std::to_string(es) + ", block length " + std::to_string(len));
      std::vector<std::uint64_t> offs;
      std::uint64_t at = 1;  // odd start: blocks not aligned to their size
      for (int b = 0; b < 9; ++b) {
        for (std::uint64_t j = 0; j < len; ++j) offs.push_back(at + j);
        at += len + 1 + static_cast<std::uint64_t>(b % 3);
      }
      const Relation pack = GatherRelation(offs, at, es).value();
      const Relation unpack = pack.inverse().value();
      const EncodedRelation ep = EncodedRelation::Encode(pack, Encoding::kAablk).value();
      const EncodedRelation eu = EncodedRelation::Encode(unpack, Encoding::kAablk).value();
      ASSERT_EQ(ep.implicit_side(), ImplicitSide::kDestination);
      ASSERT_EQ(eu.implicit_side(), ImplicitSide::kSource);
      const std::vector<std::byte> typed = Pattern(at * es, 5);
      std::vector<std::byte> packed(pack.size() * es);
      ASSERT_TRUE(Pack(ep, typed, packed).ok());
      EXPECT_EQ(packed, testing::RefPack(pack, typed));
      std::vector<std::byte> want = Pattern(at * es, 6), got = want;
      testing::RefUnpack(unpack, packed, want);
      ASSERT_TRUE(Unpack(eu, packed, got).ok());
      EXPECT_EQ(got, want);
    }
  }
}

TEST(Encoding, SizesFollowThePaper) {
  Relation r = PaperFigure1();
  EXPECT_EQ(EncodedRelation::Encode(r, Encoding::kAapair).value().size_bytes(), 64u * 16);
  EXPECT_EQ(EncodedRelation::Encode(r, Encoding::kAablk).value().size_bytes(), 64u * 24);
  EXPECT_EQ(EncodedRelation::Encode(r, Encoding::kDmrle).value().size_bytes(), 32u * 24);
}

TEST(Encoding, AutoChoice) {
  Relation r = PaperFigure1();
  EncodedRelation small = EncodeAuto(r, Goal::kSmallest).value();
  for (Encoding enc : kAllEncodings)
    EXPECT_LE(small.size_bytes(), EncodedRelation::Encode(r, enc).value().size_bytes());
  EncodedRelation fast = EncodeAuto(r, Goal::kFastest).value();
  EXPECT_EQ(fast.encoding(), Encoding::kNested);  // 16 runs of 4 beat 32 symbols
  EXPECT_EQ(fast.Decode(), Tuples(r));
  // Random scatter: nothing beats one pair per tuple for steps; smallest is still exact.
  std::vector<Tuple> t = {{7, 0}, {2, 1}, {9, 2}, {0, 3}};
  Relation irregular = Relation::Make(t, 10, 4, 8).value();
  EXPECT_EQ(EncodeAuto(irregular, Goal::kSmallest).value().Decode(), Tuples(irregular));
}

TEST(Encoding, MeasuredChoiceIsExactAndBounded) {
  Relation r = PaperFigure1();
  EncodedRelation e = EncodeFastestMeasured(r, 3).value();
  // Whatever wins (timing decides), it is an exact encoding of the relation.
  EXPECT_EQ(e.Decode(), Tuples(r));
  EXPECT_EQ(e.tuple_count(), r.size());
  EXPECT_EQ(EncodeFastestMeasured(r, 3, 100).status().code(), Code::kResourceExhausted);
}

TEST(Executor, RejectsShortAndOverlappingBuffers) {
  Relation r = PaperFigure1();
  for (Encoding enc : kAllEncodings) {
    EncodedRelation e = EncodedRelation::Encode(r, enc).value();
    std::vector<std::byte> src(128 * 8), packed(64 * 8), dst(128 * 8);
    const std::vector<std::byte> before = dst;
    EXPECT_EQ(Pack(e, std::span(src).first(127 * 8), packed).code(), Code::kOutOfRange);
    EXPECT_EQ(Pack(e, src, std::span(packed).first(63 * 8 + 7)).code(), Code::kOutOfRange);
    EXPECT_EQ(Unpack(e, std::span(packed).first(8), dst).code(), Code::kOutOfRange);
    EXPECT_EQ(Unpack(e, packed, std::span(dst).first(100)).code(), Code::kOutOfRange);
    EXPECT_EQ(Copy(e, src, std::span(dst).first(127 * 8)).code(), Code::kOutOfRange);
    EXPECT_EQ(dst, before);  // nothing written on a rejected call
    std::vector<std::byte> one(200 * 8);
    EXPECT_EQ(Copy(e, std::span(one).first(128 * 8), std::span(one).subspan(64 * 8, 128 * 8)).code(),
              Code::kInvalidArgument);
    EXPECT_TRUE(Pack(e, src, packed).ok());
  }
}

// Large transposes take the tiled paths (strided side >= 512 bytes, neighbouring runs <= 64
// bytes apart): every encoding, both orders, several element sizes, run counts that are not a
// tile multiple.
TEST(Executor, TiledTransposeMatchesReference) {
  for (std::size_t es : {std::size_t{4}, std::size_t{8}, std::size_t{16}, std::size_t{24}}) {
    for (Order order : {Order::kSourceFirst, Order::kDestinationFirst}) {
      const std::uint64_t rows = 70, cols = 37;
      std::vector<Tuple> t;
      for (std::uint64_t r = 0; r < rows; ++r)
        for (std::uint64_t c = 0; c < cols; ++c) t.push_back({r * cols + c, c * rows + r});
      Relation rel = Relation::Make(t, rows * cols, rows * cols, es, order).value();
      const std::vector<std::byte> src = Pattern(rows * cols * es, 4);
      const std::vector<std::byte> packed_ref = testing::RefPack(rel, src);
      std::vector<std::byte> unpack_ref = Pattern(rows * cols * es, 6);
      testing::RefUnpack(rel, src, unpack_ref);
      for (Encoding enc : kAllEncodings) {
        SCOPED_TRACE(std::string(EncodingName(enc)) + " es " + std::to_string(es));
        EncodedRelation e = EncodedRelation::Encode(rel, enc).value();
        std::vector<std::byte> packed(rows * cols * es);
        ASSERT_TRUE(Pack(e, src, packed).ok());
        EXPECT_EQ(packed, packed_ref);
        std::vector<std::byte> dst = Pattern(rows * cols * es, 6);
        ASSERT_TRUE(Unpack(e, src, dst).ok());
        EXPECT_EQ(dst, unpack_ref);
      }
    }
  }
}

// A receive of a shorter message: every prefix length (whole elements, a partial element, none,
// all) writes exactly the reference's first bytes and leaves the rest of the layout alone.
TEST(Executor, UnpackPrefixMatchesReference) {
  std::mt19937_64 rng(7);
  const std::size_t sizes[] = {1, 3, 4, 8, 16, 24};
  for (int iter = 0; iter < 60; ++iter) {
    const std::size_t es = sizes[static_cast<std::size_t>(iter) % std::size(sizes)];
    Relation r = RandomRelation(rng, es);
    const std::vector<std::byte> in = Pattern(r.size() * es, 3);
    const std::size_t full = in.size();
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, es - 1, full / 2, full / 2 + 1, full - 1, full}) {
      if (n > full) continue;
      // Reference: the first n / es tuples, then the leading bytes of the next one.
      std::vector<std::byte> ref = Pattern(r.dst_extent() * es, 5);
      for (std::size_t i = 0; i * es < n; ++i) {
        std::memcpy(ref.data() + r.tuples()[i].dst * es, in.data() + i * es, std::min(es, n - i * es));
      }
      for (Encoding enc : kAllEncodings) {
        SCOPED_TRACE(std::string(EncodingName(enc)) + " es " + std::to_string(es) + " n " + std::to_string(n));
        EncodedRelation e = EncodedRelation::Encode(r, enc).value();
        std::vector<std::byte> dst = Pattern(r.dst_extent() * es, 5);
        ASSERT_TRUE(UnpackPrefix(e, std::span(in).first(n), dst).ok());
        EXPECT_EQ(dst, ref);
      }
    }
  }
  Relation r = PaperFigure1();
  EncodedRelation e = EncodedRelation::Encode(r, Encoding::kNested).value();
  std::vector<std::byte> in(64 * 8 + 1), dst(128 * 8);
  EXPECT_EQ(UnpackPrefix(e, in, dst).code(), Code::kOutOfRange);  // longer than the message
  EXPECT_EQ(UnpackPrefix(e, std::span(in).first(8), std::span(dst).first(127 * 8)).code(), Code::kOutOfRange);
  EXPECT_EQ(UnpackPrefix(e, std::span(dst).first(8), dst).code(), Code::kInvalidArgument);
}

TEST(Executor, EmptyRelationIsANoOp) {
  Relation r = Relation::Make({}, 0, 0, 8).value();
  for (Encoding enc : kAllEncodings) {
    EncodedRelation e = EncodedRelation::Encode(r, enc).value();
    EXPECT_EQ(e.size_bytes(), 0u);
    EXPECT_TRUE(Pack(e, {}, {}).ok());
    EXPECT_TRUE(Unpack(e, {}, {}).ok());
  }
}

}  // namespace
}  // namespace augur::relations
