#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "augur/relations/encoding.h"
#include "augur/relations/redistribution.h"

namespace augur::relations {
namespace {

// Brute force, independent of the inspector's per-dimension formulas: walk every global
// element in a node's storage order; its local offset is how many owned elements came before.
struct Side {
  const Distribution* dist;
  std::vector<std::int64_t> coords;
};

std::int64_t Owner(const DimDist& d, std::int64_t n, std::int64_t g) {
  if (d.kind == DistKind::kStar) return 0;
  const std::int64_t b = d.kind == DistKind::kBlock ? (n + d.procs - 1) / d.procs : d.block;
  return (g / b) % d.procs;
}

bool Owns(const Side& s, const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& g) {
  for (std::size_t k = 0; k < shape.size(); ++k)
    if (Owner(s.dist->dims[k], shape[k], g[k]) != s.coords[k]) return false;
  return true;
}

// Global multi-index (as a vector) -> local offset, for every element the node owns.
std::map<std::vector<std::int64_t>, std::uint64_t> LocalOffsets(const Side& s,
                                                               const std::vector<std::int64_t>& shape) {
  std::vector<std::size_t> order = s.dist->storage_order;
  if (order.empty())
    for (std::size_t k = 0; k < shape.size(); ++k) order.push_back(k);
  std::map<std::vector<std::int64_t>, std::uint64_t> out;
  std::vector<std::int64_t> g(shape.size(), 0);
  for (std::int64_t n : shape)
    if (n == 0) return out;
  std::uint64_t next = 0;
  for (;;) {
    if (Owns(s, shape, g)) out[g] = next++;
    std::size_t i = 0;
    while (i < order.size() && ++g[order[i]] == shape[order[i]]) g[order[i++]] = 0;
    if (i == order.size()) break;
  }
  return out;
}

std::vector<std::int64_t> CoordsOf(const Distribution& d, std::int64_t node) {
  std::vector<std::int64_t> c;
  for (const DimDist& x : d.dims) {
    c.push_back(node % x.procs);
    node /= x.procs;
  }
  return c;
}

std::vector<Tuple> BruteForce(const Redistribution& r, std::int64_t sn, std::int64_t dn) {
  auto so = LocalOffsets(Side{&r.src, CoordsOf(r.src, sn)}, r.shape);
  auto dof = LocalOffsets(Side{&r.dst, CoordsOf(r.dst, dn)}, r.shape);
  std::vector<Tuple> t;
  for (const auto& [g, s] : so)
    if (auto it = dof.find(g); it != dof.end()) t.push_back({s, it->second});
  std::sort(t.begin(), t.end(), [](const Tuple& a, const Tuple& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  return t;
}

DimDist RandomDim(std::mt19937_64& rng) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  switch (pick(0, 3)) {
    case 0: return DimDist::Star();
    case 1: return DimDist::Block(pick(1, 4));
    case 2: return DimDist::Cyclic(pick(1, 4));
    default: return DimDist::Cyclic(pick(1, 3), pick(1, 4));
  }
}

Distribution RandomDist(std::mt19937_64& rng, std::size_t rank) {
  Distribution d;
  for (std::size_t k = 0; k < rank; ++k) d.dims.push_back(RandomDim(rng));
  if (rng() % 2 == 0) {
    for (std::size_t k = 0; k < rank; ++k) d.storage_order.push_back(k);
    std::shuffle(d.storage_order.begin(), d.storage_order.end(), rng);
  }
  return d;
}

TEST(Redistribution, MatchesBruteForceOnRandomShapes) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 120; ++iter) {
    Redistribution r;
    const std::size_t rank = 1 + rng() % 3;
    for (std::size_t k = 0; k < rank; ++k)
      r.shape.push_back(std::uniform_int_distribution<std::int64_t>(0, 11)(rng));
    r.src = RandomDist(rng, rank);
    r.dst = RandomDist(rng, rank);
    const std::int64_t sn = NodeCount(r.src, rank).value();
    const std::int64_t dn = NodeCount(r.dst, rank).value();
    for (int pair = 0; pair < 4; ++pair) {
      const auto s = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(sn));
      const auto d = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(dn));
      SCOPED_TRACE("iter " + std::to_string(iter) + " nodes " + std::to_string(s) + "->" +
                   std::to_string(d));
      Relation rel = RedistributionRelation(r, s, d).value();
      EXPECT_EQ(std::vector<Tuple>(rel.tuples().begin(), rel.tuples().end()), BruteForce(r, s, d));
      const auto sl = LocalShape(r.src, r.shape, s).value();
      std::uint64_t ext = 1;
      for (std::int64_t n : sl) ext *= static_cast<std::uint64_t>(n);
      EXPECT_EQ(rel.src_extent(), ext);
    }
    // Every source element goes to exactly one destination node.
    std::uint64_t total = 0;
    for (std::int64_t d = 0; d < dn; ++d) total += RedistributionRelation(r, 0, d).value().size();
    EXPECT_EQ(total, RedistributionRelation(r, 0, 0).value().src_extent());
  }
}

Redistribution Paper(int which) {
  Redistribution r;
  r.shape = {1024, 1024};
  const DimDist s = DimDist::Star(), b = DimDist::Block(4), c = DimDist::Cyclic(4);
  switch (which) {
    case 0: r.src.dims = {b, s}; r.dst.dims = {s, b}; break;
    case 1: r.src.dims = {b, s}; r.dst.dims = {c, s}; break;
    case 2: r.src.dims = {c, s}; r.dst.dims = {b, s}; break;
    default: r.src.dims = {s, c}; r.dst.dims = {c, s}; r.dst.storage_order = {1, 0}; break;
  }
  return r;
}

// The paper's Figure 2: 65536 tuples node 0 -> node 0, 262144 node 0 -> all, and DMRLEC
// about 1 KB (the bound: under 2 KiB).
TEST(Redistribution, PaperRepresentativeRelations) {
  const std::int64_t first_src_stride[] = {1, 4, 1, 4};
  const std::int64_t first_dst_stride[] = {1, 1, 4, 1024};
  for (int which = 0; which < 4; ++which) {
    SCOPED_TRACE(which);
    Redistribution r = Paper(which);
    Relation rel = RedistributionRelation(r, 0, 0).value();
    EXPECT_EQ(rel.size(), 65536u);
    std::uint64_t all = 0;
    for (std::int64_t d = 0; d < 4; ++d) all += RedistributionRelation(r, 0, d).value().size();
    EXPECT_EQ(all, 262144u);
    // The basic read stride on assembly and write stride on disassembly, as in the table.
    EXPECT_EQ(static_cast<std::int64_t>(rel.tuples()[2].src - rel.tuples()[1].src), first_src_stride[which]);
    EXPECT_EQ(static_cast<std::int64_t>(rel.tuples()[2].dst - rel.tuples()[1].dst), first_dst_stride[which]);
    EncodedRelation c = EncodedRelation::Encode(rel, Encoding::kDmrlec).value();
    EncodedRelation p = EncodedRelation::Encode(rel, Encoding::kAapair).value();
    EXPECT_LT(c.size_bytes(), 2048u);
    EXPECT_GT(p.size_bytes() / c.size_bytes(), 1000u);
    EXPECT_LT(EncodedRelation::Encode(rel, Encoding::kNested).value().size_bytes(), 256u);
  }
}

TEST(Redistribution, RejectsBadInput) {
  Redistribution r = Paper(0);
  EXPECT_EQ(RedistributionRelation(r, 4, 0).status().code(), Code::kOutOfRange);
  EXPECT_EQ(RedistributionRelation(r, 0, -1).status().code(), Code::kOutOfRange);
  Redistribution neg = r;
  neg.shape[1] = -5;
  EXPECT_EQ(RedistributionRelation(neg, 0, 0).status().code(), Code::kInvalidArgument);
  Redistribution rank = r;
  rank.dst.dims.pop_back();
  EXPECT_EQ(RedistributionRelation(rank, 0, 0).status().code(), Code::kInvalidArgument);
  Redistribution procs = r;
  procs.src.dims[0].procs = 0;
  EXPECT_EQ(RedistributionRelation(procs, 0, 0).status().code(), Code::kInvalidArgument);
  Redistribution star = r;
  star.src.dims[1] = DimDist{DistKind::kStar, 2, 1};
  EXPECT_EQ(RedistributionRelation(star, 0, 0).status().code(), Code::kInvalidArgument);
  Redistribution m = r;
  m.src.dims[0] = DimDist::Cyclic(4, 0);
  EXPECT_EQ(RedistributionRelation(m, 0, 0).status().code(), Code::kInvalidArgument);
  Redistribution perm = r;
  perm.dst.storage_order = {0, 0};
  EXPECT_EQ(RedistributionRelation(perm, 0, 0).status().code(), Code::kInvalidArgument);
  Redistribution es = r;
  es.elem_size = 0;
  EXPECT_EQ(RedistributionRelation(es, 0, 0).status().code(), Code::kInvalidArgument);
  Redistribution big = r;
  big.shape = {std::int64_t{1} << 40, std::int64_t{1} << 40};
  big.src.dims = {DimDist::Star(), DimDist::Star()};
  EXPECT_EQ(RedistributionRelation(big, 0, 0).status().code(), Code::kOutOfRange);
}

}  // namespace
}  // namespace augur::relations
