#include "augur/relations/redistribution.h"

#include <limits>
#include <string>
#include <utility>

namespace augur::relations {
namespace {

constexpr std::int64_t kMaxI64 = std::numeric_limits<std::int64_t>::max();

struct DimMap {
  std::int64_t n;
  DimDist d;
  std::int64_t block;  // effective block size

  [[nodiscard]] std::int64_t owner(std::int64_t g) const { return (g / block) % d.procs; }
  [[nodiscard]] std::int64_t local(std::int64_t g) const {
    return (g / (block * d.procs)) * block + g % block;
  }
};

Status CheckDist(const Distribution& dist, std::size_t rank, const char* side) {
  const std::string who = std::string("redistribution ") + side + ": ";
  if (dist.dims.size() != rank) {
    return Status(Code::kInvalidArgument, who + std::to_string(dist.dims.size()) +
                                              " dimension distributions for a rank-" +
                                              std::to_string(rank) + " array");
  }
  for (const DimDist& d : dist.dims) {
    if (d.procs < 1) return Status(Code::kInvalidArgument, who + "process count < 1");
    if (d.kind == DistKind::kStar && d.procs != 1) {
      return Status(Code::kInvalidArgument, who + "\"*\" dimension over more than one node");
    }
    if (d.kind == DistKind::kCyclic && d.block < 1) {
      return Status(Code::kInvalidArgument, who + "CYCLIC(M) block size < 1");
    }
  }
  if (!dist.storage_order.empty()) {
    if (dist.storage_order.size() != rank) {
      return Status(Code::kInvalidArgument, who + "storage order has the wrong length");
    }
    std::vector<bool> seen(rank, false);
    for (std::size_t k : dist.storage_order) {
      if (k >= rank || seen[k]) {
        return Status(Code::kInvalidArgument, who + "storage order is not a permutation");
      }
      seen[k] = true;
    }
  }
  return Status::Ok();
}

Result<std::vector<DimMap>> Maps(const Distribution& dist, const std::vector<std::int64_t>& shape) {
  std::vector<DimMap> maps;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const DimDist& d = dist.dims[k];
    std::int64_t block = 1;
    if (d.kind == DistKind::kStar) {
      block = shape[k] > 0 ? shape[k] : 1;
    } else if (d.kind == DistKind::kBlock) {
      block = shape[k] > 0 ? (shape[k] + d.procs - 1) / d.procs : 1;
    } else {
      block = d.block;
    }
    if (block > kMaxI64 / d.procs) return Status(Code::kOutOfRange, "redistribution: block * procs overflows");
    maps.push_back(DimMap{shape[k], d, block});
  }
  return maps;
}

Result<std::vector<std::int64_t>> Coords(const Distribution& dist, std::int64_t node) {
  AUGUR_ASSIGN_OR_RETURN(std::int64_t nodes, NodeCount(dist, dist.dims.size()));
  if (node < 0 || node >= nodes) {
    return Status(Code::kOutOfRange, "redistribution: node " + std::to_string(node) +
                                         " outside a grid of " + std::to_string(nodes));
  }
  std::vector<std::int64_t> c;
  for (const DimDist& d : dist.dims) {
    c.push_back(node % d.procs);
    node /= d.procs;
  }
  return c;
}

std::vector<std::size_t> StorageOrder(const Distribution& dist, std::size_t rank) {
  if (!dist.storage_order.empty()) return dist.storage_order;
  std::vector<std::size_t> o(rank);
  for (std::size_t k = 0; k < rank; ++k) o[k] = k;
  return o;
}

// Element strides of each array dimension in a dense local block stored in `order`.
Result<std::vector<std::uint64_t>> Strides(const std::vector<std::int64_t>& local,
                                           const std::vector<std::size_t>& order,
                                           std::uint64_t& total) {
  std::vector<std::uint64_t> strides(local.size());
  total = 1;
  for (std::size_t k : order) {
    strides[k] = total;
    const auto n = static_cast<std::uint64_t>(local[k]);
    if (n != 0 && total > std::numeric_limits<std::uint64_t>::max() / n) {
      return Status(Code::kOutOfRange, "redistribution: local block size overflows");
    }
    total *= n;
  }
  return strides;
}

}  // namespace

Result<std::int64_t> NodeCount(const Distribution& dist, std::size_t rank) {
  AUGUR_RETURN_IF_ERROR(CheckDist(dist, rank, "distribution"));
  std::int64_t n = 1;
  for (const DimDist& d : dist.dims) {
    if (n > kMaxI64 / d.procs) return Status(Code::kOutOfRange, "process grid too large");
    n *= d.procs;
  }
  return n;
}

Result<std::vector<std::int64_t>> LocalShape(const Distribution& dist,
                                             const std::vector<std::int64_t>& shape,
                                             std::int64_t node) {
  for (std::int64_t n : shape) {
    if (n < 0) return Status(Code::kInvalidArgument, "redistribution: negative array extent");
  }
  AUGUR_RETURN_IF_ERROR(CheckDist(dist, shape.size(), "distribution"));
  AUGUR_ASSIGN_OR_RETURN(std::vector<DimMap> maps, Maps(dist, shape));
  AUGUR_ASSIGN_OR_RETURN(std::vector<std::int64_t> c, Coords(dist, node));
  std::vector<std::int64_t> local(shape.size());
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const DimMap& m = maps[k];
    const std::int64_t period = m.block * m.d.procs;
    const std::int64_t full = m.n / period;  // complete cycles: `block` elements each
    const std::int64_t rest = m.n % period - c[k] * m.block;
    local[k] = full * m.block + (rest <= 0 ? 0 : (rest < m.block ? rest : m.block));
  }
  return local;
}

Result<Relation> RedistributionRelation(const Redistribution& r, std::int64_t src_node,
                                        std::int64_t dst_node) {
  const std::size_t rank = r.shape.size();
  if (rank == 0) return Status(Code::kInvalidArgument, "redistribution: rank-0 array");
  AUGUR_RETURN_IF_ERROR(CheckDist(r.src, rank, "source"));
  AUGUR_RETURN_IF_ERROR(CheckDist(r.dst, rank, "destination"));
  AUGUR_ASSIGN_OR_RETURN(std::vector<std::int64_t> src_local, LocalShape(r.src, r.shape, src_node));
  AUGUR_ASSIGN_OR_RETURN(std::vector<std::int64_t> dst_local, LocalShape(r.dst, r.shape, dst_node));
  AUGUR_ASSIGN_OR_RETURN(std::vector<DimMap> sm, Maps(r.src, r.shape));
  AUGUR_ASSIGN_OR_RETURN(std::vector<DimMap> dm, Maps(r.dst, r.shape));
  AUGUR_ASSIGN_OR_RETURN(std::vector<std::int64_t> sc, Coords(r.src, src_node));
  AUGUR_ASSIGN_OR_RETURN(std::vector<std::int64_t> dc, Coords(r.dst, dst_node));
  std::uint64_t src_extent = 0;
  std::uint64_t dst_extent = 0;
  AUGUR_ASSIGN_OR_RETURN(std::vector<std::uint64_t> ss,
                         Strides(src_local, StorageOrder(r.src, rank), src_extent));
  AUGUR_ASSIGN_OR_RETURN(std::vector<std::uint64_t> ds,
                         Strides(dst_local, StorageOrder(r.dst, rank), dst_extent));

  // Per dimension, the (source, destination) local-offset contributions of the indices both
  // nodes own; the relation is their Cartesian product (Stichnoth's observation in the paper).
  std::vector<std::vector<Tuple>> per_dim(rank);
  std::uint64_t count = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    for (std::int64_t g = 0; g < r.shape[k]; ++g) {
      if (sm[k].owner(g) == sc[k] && dm[k].owner(g) == dc[k]) {
        per_dim[k].push_back(Tuple{static_cast<std::uint64_t>(sm[k].local(g)) * ss[k],
                                   static_cast<std::uint64_t>(dm[k].local(g)) * ds[k]});
      }
    }
    count *= per_dim[k].size();  // bounded by the local block sizes checked above
  }
  std::vector<Tuple> tuples;
  tuples.reserve(count);
  if (count != 0) {
    std::vector<std::size_t> idx(rank, 0);
    for (;;) {
      Tuple t;
      for (std::size_t k = 0; k < rank; ++k) {
        t.src += per_dim[k][idx[k]].src;
        t.dst += per_dim[k][idx[k]].dst;
      }
      tuples.push_back(t);
      std::size_t k = 0;
      while (k < rank && ++idx[k] == per_dim[k].size()) idx[k++] = 0;
      if (k == rank) break;
    }
  }
  return Relation::Make(std::move(tuples), src_extent, dst_extent, r.elem_size, r.order);
}

}  // namespace augur::relations
