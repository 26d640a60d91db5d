// An address relation: tuples (source offset, destination offset) in element units, with unique
// destinations, held in a total order (source first by default, as in the paper).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "augur/status.h"

namespace augur::relations {

struct Tuple {
  std::uint64_t src = 0;  // element offset in the source layout
  std::uint64_t dst = 0;  // element offset in the destination layout
  friend bool operator==(const Tuple&, const Tuple&) = default;
};

enum class Order : std::uint8_t {
  kSourceFirst,       // (s, d) <= (s', d') iff s < s' or (s == s' and d <= d')
  kDestinationFirst,  // the same with the roles swapped: stores become sequential
};

// Elements are `elem_size` bytes; the source layout holds `src_extent` elements and the
// destination `dst_extent`. Every executor checks its buffers against these once, so decoding
// never needs a bounds check per element.
class Relation {
 public:
  Relation() = default;

  // Validates (offsets inside the extents, unique destinations, sizes that fit in bytes) and
  // sorts into `order`.
  static Result<Relation> Make(std::vector<Tuple> tuples, std::uint64_t src_extent,
                               std::uint64_t dst_extent, std::size_t elem_size,
                               Order order = Order::kSourceFirst);

  [[nodiscard]] std::span<const Tuple> tuples() const noexcept { return tuples_; }
  [[nodiscard]] std::size_t size() const noexcept { return tuples_.size(); }
  [[nodiscard]] bool empty() const noexcept { return tuples_.empty(); }
  [[nodiscard]] std::uint64_t src_extent() const noexcept { return src_extent_; }
  [[nodiscard]] std::uint64_t dst_extent() const noexcept { return dst_extent_; }
  [[nodiscard]] std::size_t elem_size() const noexcept { return elem_size_; }
  [[nodiscard]] Order order() const noexcept { return order_; }
  // Bytes moved by one pack/unpack: size() * elem_size().
  [[nodiscard]] std::uint64_t payload_bytes() const noexcept { return tuples_.size() * elem_size_; }

  // The same relation re-sorted in another order.
  [[nodiscard]] Result<Relation> reordered(Order order) const;
  // (d, s) for every (s, d): fails if sources repeat (they become destinations).
  [[nodiscard]] Result<Relation> inverse(Order order = Order::kSourceFirst) const;

  friend bool operator==(const Relation&, const Relation&) = default;

 private:
  std::vector<Tuple> tuples_;
  std::uint64_t src_extent_ = 0;
  std::uint64_t dst_extent_ = 0;
  std::size_t elem_size_ = 1;
  Order order_ = Order::kSourceFirst;
};

// Inspector for arbitrary offset lists: tuple i is (src[i], dst[i]).
Result<Relation> RelationFromOffsets(std::span<const std::uint64_t> src,
                                     std::span<const std::uint64_t> dst, std::uint64_t src_extent,
                                     std::uint64_t dst_extent, std::size_t elem_size,
                                     Order order = Order::kSourceFirst);

// Gather relation: element src[i] goes to position i of a packed buffer.
Result<Relation> GatherRelation(std::span<const std::uint64_t> src, std::uint64_t src_extent,
                                std::size_t elem_size);

}  // namespace augur::relations
