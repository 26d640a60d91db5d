#include "augur/relations/sge.h"

#include <limits>
#include <string>

#include "run_stream.h"

namespace augur::relations {
namespace {

class Builder {
 public:
  Builder(std::uint64_t base, std::size_t es, const SgeOptions& o) : base_(base), es_(es), o_(o) {}

  // One element at element offset `off` of the exported side.
  void Add(std::uint64_t off) {
    const std::uint64_t addr = base_ + off * es_;
    if (!lists_.empty() && !lists_.back().empty()) {
      SgeEntry& last = lists_.back().back();
      if (last.addr + last.length == addr && last.length + es_ <= o_.max_length) {
        last.length += static_cast<std::uint32_t>(es_);
        return;
      }
    }
    if (lists_.empty() || lists_.back().size() == o_.max_sge) lists_.emplace_back();
    lists_.back().push_back(SgeEntry{addr, static_cast<std::uint32_t>(es_)});
  }
  std::vector<SgeList> Take() { return std::move(lists_); }

 private:
  std::uint64_t base_;
  std::size_t es_;
  SgeOptions o_;
  std::vector<SgeList> lists_;
};

Status Check(std::uint64_t extent, std::size_t es, std::uint64_t base, const SgeOptions& o) {
  if (o.max_sge == 0) return Status(Code::kInvalidArgument, "SGE export: max_sge is 0");
  if (es > o.max_length) {
    return Status(Code::kInvalidArgument, "SGE export: element of " + std::to_string(es) +
                                              " bytes exceeds max_length");
  }
  if (base > std::numeric_limits<std::uint64_t>::max() - extent * es) {
    return Status(Code::kOutOfRange, "SGE export: base + layout size overflows 64 bits");
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<SgeList>> ExportSge(const Relation& r, Side side, std::uint64_t base,
                                       const SgeOptions& options) {
  const bool src = side == Side::kSource;
  AUGUR_RETURN_IF_ERROR(Check(src ? r.src_extent() : r.dst_extent(), r.elem_size(), base, options));
  Builder b(base, r.elem_size(), options);
  for (const Tuple& t : r.tuples()) b.Add(src ? t.src : t.dst);
  return b.Take();
}

Result<std::vector<SgeList>> ExportSge(const EncodedRelation& r, Side side, std::uint64_t base,
                                       const SgeOptions& options) {
  const bool src = side == Side::kSource;
  AUGUR_RETURN_IF_ERROR(Check(src ? r.src_extent() : r.dst_extent(), r.elem_size(), base, options));
  Builder b(base, r.elem_size(), options);
  detail::ForEachRun(r, [&](std::uint64_t s, std::uint64_t d, std::uint64_t len, std::int64_t ss,
                            std::int64_t sd) {
    const std::uint64_t start = src ? s : d;
    const std::uint64_t step = detail::Wrap(src ? ss : sd);
    for (std::uint64_t j = 0; j < len; ++j) b.Add(start + j * step);
  });
  return b.Take();
}

}  // namespace augur::relations
