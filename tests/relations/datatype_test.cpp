#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "augur/relations/datatype.h"
#include "augur/relations/encoding.h"
#include "augur/relations/executor.h"

namespace augur::relations {
namespace {

// A datatype with its type map expanded naively, byte by byte, in type-map order.
struct Typed {
  Datatype type;
  std::vector<std::int64_t> bytes;
};

std::vector<std::int64_t> Blocks(const std::vector<std::int64_t>& bl, const std::vector<std::int64_t>& displs,
                                 const std::vector<const Typed*>& kids) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < bl.size(); ++i) {
    const Typed& k = *kids[kids.size() == 1 ? 0 : i];
    for (std::int64_t j = 0; j < bl[i]; ++j)
      for (std::int64_t b : k.bytes) out.push_back(displs[i] + j * k.type.extent() + b);
  }
  return out;
}

class Gen {
 public:
  explicit Gen(std::uint64_t seed) : rng_(seed) {}
  std::int64_t Pick(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }

  Typed Make(int depth) {
    if (depth == 0) {
      const std::int64_t sizes[] = {1, 2, 4, 8};
      const std::int64_t s = sizes[Pick(0, 3)];
      std::vector<std::int64_t> b;
      for (std::int64_t i = 0; i < s; ++i) b.push_back(i);
      return {Datatype::Base(s).value(), b};
    }
    Typed c = Make(depth - 1);
    const std::int64_t ext = c.type.extent();
    switch (Pick(0, 8)) {
      case 0: {
        const std::int64_t n = Pick(0, 3);
        return {Datatype::Contiguous(n, c.type).value(), Blocks({n}, {0}, {&c})};
      }
      case 1: {
        const std::int64_t n = Pick(1, 3), bl = Pick(0, 2), st = Pick(-3, 4);
        std::vector<std::int64_t> d;
        for (std::int64_t i = 0; i < n; ++i) d.push_back(i * st * ext);
        return {Datatype::Vector(n, bl, st, c.type).value(), Blocks(std::vector<std::int64_t>(static_cast<std::size_t>(n), bl), d, {&c})};
      }
      case 2: {
        const std::int64_t n = Pick(1, 3), bl = Pick(1, 2), st = Pick(-20, 40);
        std::vector<std::int64_t> d;
        for (std::int64_t i = 0; i < n; ++i) d.push_back(i * st);
        return {Datatype::Hvector(n, bl, st, c.type).value(), Blocks(std::vector<std::int64_t>(static_cast<std::size_t>(n), bl), d, {&c})};
      }
      case 3: case 4: {
        const std::size_t n = static_cast<std::size_t>(Pick(1, 3));
        std::vector<std::int64_t> bl, d, db;
        for (std::size_t i = 0; i < n; ++i) {
          bl.push_back(Pick(0, 2));
          d.push_back(Pick(-4, 6));
          db.push_back(d.back() * ext);
        }
        if (Pick(0, 1) == 0) return {Datatype::Indexed(bl, d, c.type).value(), Blocks(bl, db, {&c})};
        return {Datatype::Hindexed(bl, db, c.type).value(), Blocks(bl, db, {&c})};
      }
      case 5: {
        const std::int64_t bl = Pick(1, 2);
        std::vector<std::int64_t> d = {Pick(0, 5), Pick(-3, 5)}, db = {d[0] * ext, d[1] * ext};
        return {Datatype::IndexedBlock(bl, d, c.type).value(), Blocks({bl, bl}, db, {&c})};
      }
      case 6: {
        Typed c2 = Make(depth - 1);
        std::vector<std::int64_t> bl = {Pick(1, 2), Pick(0, 2)}, d = {Pick(0, 8), Pick(-16, 32)};
        std::vector<Datatype> ts = {c.type, c2.type};
        return {Datatype::Struct(bl, d, ts).value(), Blocks(bl, d, {&c, &c2})};
      }
      case 7: {
        const std::int64_t lb = Pick(-8, 8), e = Pick(1, 24);
        return {Datatype::Resized(c.type, lb, e).value(), c.bytes};
      }
      default: {
        const std::int64_t sizes[] = {Pick(1, 4), Pick(1, 4)};
        const std::int64_t sub[] = {Pick(1, sizes[0]), Pick(1, sizes[1])};
        const std::int64_t st[] = {Pick(0, sizes[0] - sub[0]), Pick(0, sizes[1] - sub[1])};
        const bool c_order = Pick(0, 1) == 0;
        std::vector<std::int64_t> b;
        // C order: the last index is fastest; Fortran: the first.
        const std::int64_t outer = c_order ? 0 : 1, inner = 1 - outer;
        for (std::int64_t i = 0; i < sub[outer]; ++i)
          for (std::int64_t j = 0; j < sub[inner]; ++j) {
            const std::int64_t o = st[outer] + i, in = st[inner] + j;
            const std::int64_t lin = c_order ? o * sizes[1] + in : o * sizes[0] + in;
            for (std::int64_t x : c.bytes) b.push_back(lin * ext + x);
          }
        return {Datatype::Subarray(sizes, sub, st, c_order ? ArrayOrder::kC : ArrayOrder::kFortran, c.type).value(), b};
      }
    }
  }

 private:
  std::mt19937_64 rng_;
};

// The bytes a typed relation touches, in relation order.
std::vector<std::int64_t> TypedBytes(const TypedRelation& tr, bool pack) {
  std::vector<std::int64_t> out;
  const auto g = static_cast<std::int64_t>(tr.relation.elem_size());
  for (const Tuple& t : tr.relation.tuples()) {
    const auto e = static_cast<std::int64_t>(pack ? t.src : t.dst);
    for (std::int64_t k = 0; k < g; ++k) out.push_back(tr.base_bytes + e * g + k);
  }
  return out;
}

TEST(Datatype, RandomTypesMatchNaiveTypeMap) {
  Gen gen(11);
  for (int iter = 0; iter < 400; ++iter) {
    SCOPED_TRACE(iter);
    Typed t = gen.Make(static_cast<int>(gen.Pick(1, 3)));
    const std::int64_t count = gen.Pick(0, 3);
    std::vector<std::int64_t> ref;
    for (std::int64_t k = 0; k < count; ++k)
      for (std::int64_t b : t.bytes) ref.push_back(k * t.type.extent() + b);
    EXPECT_EQ(t.type.size(), static_cast<std::int64_t>(t.bytes.size()));
    if (!t.bytes.empty()) {
      EXPECT_EQ(t.type.true_lb(), *std::min_element(t.bytes.begin(), t.bytes.end()));
      EXPECT_EQ(t.type.true_lb() + t.type.true_extent(), *std::max_element(t.bytes.begin(), t.bytes.end()) + 1);
    }
    TypedRelation p = PackRelation(t.type, count).value();
    ASSERT_EQ(TypedBytes(p, true), ref);
    const std::set<std::int64_t> unique(ref.begin(), ref.end());
    Result<TypedRelation> u = UnpackRelation(t.type, count);
    if (unique.size() == ref.size()) {
      ASSERT_TRUE(u.ok()) << u.status().to_string();
      EXPECT_EQ(TypedBytes(u.value(), false), ref);
    } else {
      EXPECT_EQ(u.status().code(), Code::kInvalidArgument);
    }
    // End to end: packing through an encoding gathers exactly the type-map bytes.
    if (ref.empty()) continue;
    const std::int64_t lo = p.base_bytes;
    std::vector<std::byte> buf(p.relation.src_extent() * p.relation.elem_size());
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::byte>(i * 7 + 3);
    std::vector<std::byte> packed(ref.size()), expect(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) expect[i] = buf[static_cast<std::size_t>(ref[i] - lo)];
    EncodedRelation e = EncodedRelation::Encode(p.relation, Encoding::kDmrlec).value();
    ASSERT_TRUE(Pack(e, buf, packed).ok());
    EXPECT_EQ(packed, expect);
  }
}

// Bounds as Open MPI 4 reports them for the same constructors.
TEST(Datatype, BoundsMatchOpenMpi) {
  const Datatype d = Datatype::Base(8).value(), ch = Datatype::Base(1).value();
  const Datatype in = Datatype::Base(4).value(), sh = Datatype::Base(2).value();
  const std::int64_t bl2[] = {1, 1};
  const std::int64_t disp2[] = {0, 8};
  const Datatype dc[] = {d, ch};
  Datatype s = Datatype::Struct(bl2, disp2, dc).value();
  EXPECT_EQ(s.lb(), 0);
  EXPECT_EQ(s.extent(), 16);
  EXPECT_EQ(s.true_extent(), 9);
  const std::int64_t bl3[] = {1, 1, 1};
  const std::int64_t disp3[] = {0, 4, 8};
  const Datatype ics[] = {in, ch, sh};
  EXPECT_EQ(Datatype::Struct(bl3, disp3, ics).value().extent(), 12);
  Datatype v = Datatype::Vector(3, 2, -4, d).value();
  EXPECT_EQ(v.lb(), -64);
  EXPECT_EQ(v.extent(), 80);
  EXPECT_EQ(v.true_lb(), -64);
  EXPECT_EQ(v.true_extent(), 80);
  Datatype c = Datatype::Contiguous(2, Datatype::Resized(d, -8, 32).value()).value();
  EXPECT_EQ(c.lb(), -8);
  EXPECT_EQ(c.extent(), 64);
  EXPECT_EQ(c.true_lb(), 0);
  EXPECT_EQ(c.true_extent(), 40);
  const std::int64_t sizes[] = {4, 5}, sub[] = {2, 3}, st[] = {1, 1};
  Datatype a = Datatype::Subarray(sizes, sub, st, ArrayOrder::kC, d).value();
  EXPECT_EQ(a.lb(), 0);
  EXPECT_EQ(a.extent(), 160);
  EXPECT_EQ(a.true_lb(), 48);
  EXPECT_EQ(a.true_extent(), 64);
  EXPECT_EQ(a.size(), 48);
}

TEST(Datatype, VectorOfDoublesBecomesACompactRelation) {
  const Datatype d = Datatype::Base(8).value();
  Datatype col = Datatype::Vector(1024, 1, 1024, d).value();  // one matrix column
  TypedRelation p = PackRelation(col, 1).value();
  EXPECT_EQ(p.relation.elem_size(), 8u);
  EXPECT_EQ(p.relation.size(), 1024u);
  EncodedRelation e = EncodedRelation::Encode(p.relation, Encoding::kDmrlec).value();
  EXPECT_LT(e.size_bytes(), 100u);
  // A contiguous type is one element of its whole size.
  TypedRelation c = PackRelation(Datatype::Contiguous(100, d).value(), 2).value();
  EXPECT_EQ(c.relation.size(), 1u);
  EXPECT_EQ(c.relation.elem_size(), 1600u);
}

TEST(Datatype, RejectsBadInput) {
  const Datatype d = Datatype::Base(8).value();
  EXPECT_EQ(Datatype::Base(0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Datatype::Base(4, -1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Datatype::Contiguous(-1, d).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Datatype::Vector(-2, 1, 1, d).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Datatype::Vector(2, -1, 1, d).status().code(), Code::kInvalidArgument);
  const std::int64_t bl[] = {1, -1}, disp[] = {0, 8}, one[] = {1};
  EXPECT_EQ(Datatype::Hindexed(bl, disp, d).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Datatype::Hindexed(one, disp, d).status().code(), Code::kInvalidArgument);
  const Datatype ts[] = {d};
  EXPECT_EQ(Datatype::Struct(one, disp, ts).status().code(), Code::kInvalidArgument);
  const std::int64_t sizes[] = {4, 4}, sub[] = {2, 3}, bad_start[] = {3, 0}, neg[] = {-1, 0};
  EXPECT_EQ(Datatype::Subarray(sizes, sub, bad_start, ArrayOrder::kC, d).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Datatype::Subarray(sizes, sub, neg, ArrayOrder::kC, d).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Datatype::Subarray(sizes, sub, one, ArrayOrder::kC, d).status().code(), Code::kInvalidArgument);
  // Overflowing strides and counts.
  EXPECT_EQ(Datatype::Vector(3, 1, std::int64_t{1} << 61, d).status().code(), Code::kOutOfRange);
  EXPECT_EQ(Datatype::Hvector(2, std::int64_t{1} << 61, 8, d).status().code(), Code::kOutOfRange);
  Datatype big = Datatype::Resized(d, 0, std::int64_t{1} << 62).value();
  EXPECT_EQ(big.Flatten(4).status().code(), Code::kOutOfRange);
  EXPECT_EQ(PackRelation(d, -1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Datatype::Contiguous(1000, d).value().Flatten(1000, 10).status().code(), Code::kOk);
  EXPECT_EQ(Datatype::Vector(1000, 1, 2, d).value().Flatten(1, 10).status().code(), Code::kResourceExhausted);
  // Unpacking into an overlapping type map would write a byte twice.
  const std::int64_t same[] = {0, 0}, ones[] = {1, 1};
  Datatype twice = Datatype::Hindexed(ones, same, d).value();
  EXPECT_TRUE(PackRelation(twice, 1).ok());
  EXPECT_EQ(UnpackRelation(twice, 1).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace augur::relations
