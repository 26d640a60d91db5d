// Inspector: the address relation between one source node and one destination node when an
// N-d array is redistributed between two block-cyclic (HPF-style) distributions.
//
// Each dimension is "*" (not distributed), BLOCK, CYCLIC or CYCLIC(M) over `procs` nodes of the
// process grid; node ids number grid coordinates with dimension 0 fastest. Each node stores its
// local block densely, dimensions in `storage_order` (fastest first; empty means column-major,
// 0, 1, 2, ... as in HPF/Fortran). A transpose is a destination whose storage order differs from
// the source's: the paper's (*,CYCLIC) -> (CYCLIC,*)^T is dst {Cyclic(4), Star()} with storage
// order {1, 0}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "augur/relations/relation.h"
#include "augur/status.h"

namespace augur::relations {

enum class DistKind : std::uint8_t { kStar, kBlock, kCyclic };

struct DimDist {
  DistKind kind = DistKind::kStar;
  std::int64_t procs = 1;  // grid extent in this dimension (1 for "*")
  std::int64_t block = 1;  // CYCLIC(M): M; ignored for BLOCK (ceil(N/procs)) and "*"

  static DimDist Star() { return {DistKind::kStar, 1, 1}; }
  static DimDist Block(std::int64_t procs) { return {DistKind::kBlock, procs, 1}; }
  static DimDist Cyclic(std::int64_t procs, std::int64_t m = 1) { return {DistKind::kCyclic, procs, m}; }
};

struct Distribution {
  std::vector<DimDist> dims;
  std::vector<std::size_t> storage_order;  // fastest first; empty: 0, 1, ..., n-1
};

struct Redistribution {
  std::vector<std::int64_t> shape;  // global array extents
  Distribution src;
  Distribution dst;
  std::size_t elem_size = 8;
  Order order = Order::kSourceFirst;
};

// Nodes in a distribution's process grid.
Result<std::int64_t> NodeCount(const Distribution& dist, std::size_t rank);
// Local block extents of `node` (per dimension, in array-dimension order).
Result<std::vector<std::int64_t>> LocalShape(const Distribution& dist,
                                             const std::vector<std::int64_t>& shape,
                                             std::int64_t node);
// Relation from source node `src_node`'s local array to destination node `dst_node`'s.
Result<Relation> RedistributionRelation(const Redistribution& r, std::int64_t src_node,
                                        std::int64_t dst_node);

}  // namespace augur::relations
