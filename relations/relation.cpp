#include "augur/relations/relation.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

namespace augur::relations {
namespace {

bool LessSourceFirst(const Tuple& a, const Tuple& b) {
  return a.src != b.src ? a.src < b.src : a.dst < b.dst;
}
bool LessDestinationFirst(const Tuple& a, const Tuple& b) {
  return a.dst != b.dst ? a.dst < b.dst : a.src < b.src;
}

void SortTuples(std::vector<Tuple>& t, Order order) {
  if (order == Order::kSourceFirst) {
    std::sort(t.begin(), t.end(), LessSourceFirst);
  } else {
    std::sort(t.begin(), t.end(), LessDestinationFirst);
  }
}

}  // namespace

Result<Relation> Relation::Make(std::vector<Tuple> tuples, std::uint64_t src_extent,
                                std::uint64_t dst_extent, std::size_t elem_size, Order order) {
  if (elem_size == 0) return Status(Code::kInvalidArgument, "relation: element size is 0");
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  // Byte offsets must fit in 64 bits so executors can compute them without overflow checks.
  if (src_extent > kMax / elem_size || dst_extent > kMax / elem_size ||
      tuples.size() > kMax / elem_size) {
    return Status(Code::kOutOfRange, "relation: extent * element size overflows 64 bits");
  }
  for (const Tuple& t : tuples) {
    if (t.src >= src_extent || t.dst >= dst_extent) {
      return Status(Code::kOutOfRange, "relation: tuple (" + std::to_string(t.src) + ", " +
                                           std::to_string(t.dst) + ") outside extents (" +
                                           std::to_string(src_extent) + ", " +
                                           std::to_string(dst_extent) + ")");
    }
  }
  // Destinations are unique: checked in destination order, then sorted as asked.
  SortTuples(tuples, Order::kDestinationFirst);
  for (std::size_t i = 1; i < tuples.size(); ++i) {
    if (tuples[i].dst == tuples[i - 1].dst) {
      return Status(Code::kInvalidArgument,
                    "relation: duplicate destination " + std::to_string(tuples[i].dst));
    }
  }
  if (order == Order::kSourceFirst) SortTuples(tuples, order);
  Relation r;
  r.tuples_ = std::move(tuples);
  r.src_extent_ = src_extent;
  r.dst_extent_ = dst_extent;
  r.elem_size_ = elem_size;
  r.order_ = order;
  return r;
}

Result<Relation> Relation::reordered(Order order) const {
  Relation r = *this;
  SortTuples(r.tuples_, order);
  r.order_ = order;
  return r;
}

Result<Relation> Relation::inverse(Order order) const {
  std::vector<Tuple> t(tuples_.size());
  std::transform(tuples_.begin(), tuples_.end(), t.begin(),
                 [](const Tuple& x) { return Tuple{x.dst, x.src}; });
  return Make(std::move(t), dst_extent_, src_extent_, elem_size_, order);
}

Result<Relation> RelationFromOffsets(std::span<const std::uint64_t> src,
                                     std::span<const std::uint64_t> dst, std::uint64_t src_extent,
                                     std::uint64_t dst_extent, std::size_t elem_size, Order order) {
  if (src.size() != dst.size()) {
    return Status(Code::kInvalidArgument, "relation: " + std::to_string(src.size()) +
                                              " source offsets but " + std::to_string(dst.size()) +
                                              " destination offsets");
  }
  std::vector<Tuple> t(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) t[i] = Tuple{src[i], dst[i]};
  return Relation::Make(std::move(t), src_extent, dst_extent, elem_size, order);
}

Result<Relation> GatherRelation(std::span<const std::uint64_t> src, std::uint64_t src_extent,
                                std::size_t elem_size) {
  std::vector<Tuple> t(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) t[i] = Tuple{src[i], i};
  // Destination order keeps the caller's gather order even when sources are not ascending.
  return Relation::Make(std::move(t), src_extent, src.size(), elem_size, Order::kDestinationFirst);
}

}  // namespace augur::relations
