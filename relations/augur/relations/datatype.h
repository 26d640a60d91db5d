// augur's own description of MPI derived datatypes (no mpi.h): a small immutable tree the MPI
// shim builds from its handles, with extent, lb, size and true extent computed as MPI defines
// them, and the inspector that turns `count` copies of a type into pack/unpack relations.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "augur/relations/relation.h"
#include "augur/relations/runs.h"
#include "augur/status.h"

namespace augur::relations {

enum class ArrayOrder : std::uint8_t { kC, kFortran };

class Datatype {
 public:
  // A predefined type: `size` bytes, extent `size`; `alignment` (0: size if it is 1, 2, 4, 8
  // or 16, else 1) pads structs the way Open MPI does.
  static Result<Datatype> Base(std::int64_t size, std::int64_t alignment = 0);
  static Result<Datatype> Contiguous(std::int64_t count, const Datatype& old);
  // stride in extents of `old`.
  static Result<Datatype> Vector(std::int64_t count, std::int64_t blocklen, std::int64_t stride,
                                 const Datatype& old);
  static Result<Datatype> Hvector(std::int64_t count, std::int64_t blocklen,
                                  std::int64_t stride_bytes, const Datatype& old);
  // displacements in extents of `old`.
  static Result<Datatype> Indexed(std::span<const std::int64_t> blocklens,
                                  std::span<const std::int64_t> displs, const Datatype& old);
  static Result<Datatype> Hindexed(std::span<const std::int64_t> blocklens,
                                   std::span<const std::int64_t> displs_bytes, const Datatype& old);
  static Result<Datatype> IndexedBlock(std::int64_t blocklen, std::span<const std::int64_t> displs,
                                       const Datatype& old);
  static Result<Datatype> Subarray(std::span<const std::int64_t> sizes,
                                   std::span<const std::int64_t> subsizes,
                                   std::span<const std::int64_t> starts, ArrayOrder order,
                                   const Datatype& old);
  static Result<Datatype> Struct(std::span<const std::int64_t> blocklens,
                                 std::span<const std::int64_t> displs_bytes,
                                 std::span<const Datatype> types);
  static Result<Datatype> Resized(const Datatype& old, std::int64_t lb, std::int64_t extent);

  [[nodiscard]] std::int64_t size() const noexcept;
  [[nodiscard]] std::int64_t lb() const noexcept;
  [[nodiscard]] std::int64_t ub() const noexcept;
  [[nodiscard]] std::int64_t extent() const noexcept { return ub() - lb(); }
  [[nodiscard]] std::int64_t true_lb() const noexcept;
  [[nodiscard]] std::int64_t true_extent() const noexcept;
  [[nodiscard]] std::int64_t alignment() const noexcept;

  // The type map of `count` copies (copy k displaced by k * extent) as byte runs in type-map
  // order, adjacent runs merged. Refuses more than `max_runs` runs.
  [[nodiscard]] Result<std::vector<ByteRun>> Flatten(std::int64_t count,
                                                     std::size_t max_runs = 1U << 26) const;

  struct Node;
  // Internal: the node, for the inspector and constructors.
  [[nodiscard]] const Node& node_for_bounds() const noexcept;

 private:
  explicit Datatype(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  std::shared_ptr<const Node> node_;
};

// A relation over a typed buffer: element 0 of the relation's typed side is at byte
// `base_bytes` from the buffer pointer (the true lb of the `count` copies), elements are
// `relation.elem_size()` bytes (the gcd of the runs' offsets and lengths).
struct TypedRelation {
  Relation relation;
  std::int64_t base_bytes = 0;
};

// MPI_Pack of `count` copies: typed buffer -> packed buffer, in type-map order (ordered by
// destination). Overlapping type maps are allowed, as for sends.
Result<TypedRelation> PackRelation(const Datatype& type, std::int64_t count);
// MPI_Unpack: packed buffer -> typed buffer. A type map that writes a byte twice is rejected.
Result<TypedRelation> UnpackRelation(const Datatype& type, std::int64_t count);

}  // namespace augur::relations
