#include "augur/relations/runs.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "run_stream.h"

namespace augur::relations {

Result<std::vector<ByteRun>> NormalizeRuns(std::span<const ByteRun> runs, std::uint64_t max_bytes) {
  std::vector<ByteRun> out;
  out.reserve(runs.size());
  std::uint64_t total = 0;
  for (const ByteRun& r : runs) {
    if (r.length < 0) return Status(Code::kInvalidArgument, "a run of negative length " + std::to_string(r.length));
    if (r.length == 0) continue;
    total += static_cast<std::uint64_t>(r.length);
    if (total > max_bytes) {
      return Status(Code::kInvalidArgument, "the runs hold more than " + std::to_string(max_bytes) + " bytes");
    }
    if (!out.empty() && out.back().offset + out.back().length == r.offset) {
      out.back().length += r.length;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

void GatherRuns(const Layout& from, std::byte* out, std::size_t n) noexcept {
  for (const ByteRun& r : from.runs) {
    if (n == 0) return;
    const std::size_t k = std::min(n, static_cast<std::size_t>(r.length));
    std::memcpy(out, from.at(r), k);
    out += k;
    n -= k;
  }
}

void ScatterRuns(const std::byte* in, std::size_t n, const Layout& to) noexcept {
  for (const ByteRun& r : to.runs) {
    if (n == 0) return;
    const std::size_t k = std::min(n, static_cast<std::size_t>(r.length));
    std::memcpy(to.at(r), in, k);
    in += k;
    n -= k;
  }
}

namespace {

// Appends elements one at a time, merging each into the last run when it follows on.
class RunBuilder {
 public:
  explicit RunBuilder(std::int64_t es) : es_(es) {}
  void Add(std::uint64_t element) {
    const auto at = static_cast<std::int64_t>(element) * es_;
    if (!runs_.empty() && runs_.back().offset + runs_.back().length == at) {
      runs_.back().length += es_;
    } else {
      runs_.push_back({at, es_});
    }
  }
  std::vector<ByteRun> Take() { return std::move(runs_); }

 private:
  std::int64_t es_;
  std::vector<ByteRun> runs_;
};

Status CheckExtent(std::uint64_t extent, std::size_t es) {
  if (extent > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / es) {
    return Status(Code::kOutOfRange, "relation runs: a layout of " + std::to_string(extent) + " elements of " +
                                         std::to_string(es) + " bytes passes 2^63 bytes");
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<ByteRun>> RelationRuns(const Relation& r, Side side) {
  const bool src = side == Side::kSource;
  AUGUR_RETURN_IF_ERROR(CheckExtent(src ? r.src_extent() : r.dst_extent(), r.elem_size()));
  RunBuilder b(static_cast<std::int64_t>(r.elem_size()));
  for (const Tuple& t : r.tuples()) b.Add(src ? t.src : t.dst);
  return b.Take();
}

Result<std::vector<ByteRun>> RelationRuns(const EncodedRelation& r, Side side) {
  const bool src = side == Side::kSource;
  AUGUR_RETURN_IF_ERROR(CheckExtent(src ? r.src_extent() : r.dst_extent(), r.elem_size()));
  RunBuilder b(static_cast<std::int64_t>(r.elem_size()));
  detail::ForEachRun(r, [&](std::uint64_t s, std::uint64_t d, std::uint64_t len, std::int64_t ss, std::int64_t sd) {
    const std::uint64_t start = src ? s : d;
    const std::uint64_t step = detail::Wrap(src ? ss : sd);
    for (std::uint64_t j = 0; j < len; ++j) b.Add(start + j * step);
  });
  return b.Take();
}

}  // namespace augur::relations
