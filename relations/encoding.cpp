#include "augur/relations/encoding.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "run_stream.h"

namespace augur::relations {
namespace {

using detail::Wrap;

std::int64_t Diff(std::uint64_t a, std::uint64_t b) { return static_cast<std::int64_t>(a - b); }

std::vector<Block> BuildBlocks(std::span<const Tuple> t) {
  std::vector<Block> out;
  for (const Tuple& x : t) {
    if (!out.empty()) {
      Block& b = out.back();
      if (x.src == b.s + b.len && x.dst == b.d + b.len) {
        ++b.len;
        continue;
      }
    }
    out.push_back(Block{x.src, x.dst, 1});
  }
  return out;
}

struct SymbolHash {
  std::size_t operator()(const Symbol& y) const noexcept {
    std::uint64_t h = Wrap(y.ds) * 0x9E3779B97F4A7C15ULL;
    h ^= Wrap(y.dd) + 0x7F4A7C15ULL + (h << 6) + (h >> 2);
    h ^= y.len + 0x85EBCA6BULL + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

// Greedy maximal strided runs with absolute starts; a one-element run gets strides (0, 0) so
// that runs compare by shape regardless of what followed them.
std::vector<Run> BuildRuns(std::span<const Tuple> t) {
  std::vector<Run> runs;
  std::size_t i = 0;
  while (i < t.size()) {
    Run r{t[i].src, t[i].dst, 1, 0, 0};
    if (i + 1 < t.size()) {
      r.ss = Diff(t[i + 1].src, t[i].src);
      r.sd = Diff(t[i + 1].dst, t[i].dst);
      std::size_t j = i + 1;
      while (j + 1 < t.size() && Diff(t[j + 1].src, t[j].src) == r.ss &&
             Diff(t[j + 1].dst, t[j].dst) == r.sd) {
        ++j;
      }
      r.len = j - i + 1;
    }
    i += r.len;
    runs.push_back(r);
  }
  return runs;
}

bool SameShape(const Run& a, const Run& b) {
  return a.len == b.len && a.ss == b.ss && a.sd == b.sd;
}

// How many times the block runs[i, i+b) repeats from i with one constant shift.
std::size_t Repeats(const std::vector<Run>& runs, std::size_t i, std::size_t b) {
  const std::size_t n = runs.size();
  if (i + 2 * b > n) return 1;
  const std::int64_t os = Diff(runs[i + b].s, runs[i].s);
  const std::int64_t od = Diff(runs[i + b].d, runs[i].d);
  std::size_t reps = 1;
  for (std::size_t k = i + b; k + b <= n; k += b, ++reps) {
    if (Diff(runs[k].s, runs[k - b].s) != os || Diff(runs[k].d, runs[k - b].d) != od) break;
    bool same = true;
    for (std::size_t r = 0; r < b && same; ++r) {
      same = SameShape(runs[k + r], runs[i + r]) && runs[k + r].s - runs[k].s == runs[i + r].s - runs[i].s &&
             runs[k + r].d - runs[k].d == runs[i + r].d - runs[i].d;
    }
    if (!same) break;
  }
  return reps;
}

constexpr std::size_t kMaxNestBlock = 16;

Status BuildNests(std::span<const Tuple> t, std::vector<Nest>& nests, std::vector<Run>& out_runs) {
  const std::vector<Run> runs = BuildRuns(t);
  std::size_t i = 0;
  while (i < runs.size()) {
    std::size_t best_b = 1;
    std::size_t best_reps = Repeats(runs, i, 1);
    for (std::size_t b = 2; b <= kMaxNestBlock && i + 2 * b <= runs.size(); ++b) {
      const std::size_t reps = Repeats(runs, i, b);
      if (reps > 1 && reps * b > best_reps * best_b) {
        best_b = b;
        best_reps = reps;
      }
    }
    if (out_runs.size() + best_b > std::numeric_limits<std::uint32_t>::max()) {
      return Status(Code::kOutOfRange, "NESTED: more than 2^32 runs");
    }
    Nest n{runs[i].s, runs[i].d, best_reps, 0, 0, static_cast<std::uint32_t>(out_runs.size()),
           static_cast<std::uint32_t>(best_b)};
    if (best_reps > 1) {
      n.os = Diff(runs[i + best_b].s, runs[i].s);
      n.od = Diff(runs[i + best_b].d, runs[i].d);
    }
    for (std::size_t r = 0; r < best_b; ++r) {
      Run x = runs[i + r];
      x.s -= runs[i].s;
      x.d -= runs[i].d;
      out_runs.push_back(x);
    }
    nests.push_back(n);
    i += best_b * best_reps;
  }
  return Status::Ok();
}

}  // namespace

std::string_view EncodingName(Encoding e) noexcept {
  switch (e) {
    case Encoding::kAapair: return "AAPAIR";
    case Encoding::kAablk: return "AABLK";
    case Encoding::kDmrle: return "DMRLE";
    case Encoding::kDmrlec: return "DMRLEC";
    case Encoding::kNested: return "NESTED";
  }
  return "?";
}

std::vector<Symbol> DifferenceMapRle(std::span<const Tuple> tuples) {
  std::vector<Symbol> out;
  std::uint64_t ps = 0;
  std::uint64_t pd = 0;
  for (const Tuple& x : tuples) {
    const std::int64_t ds = Diff(x.src, ps);
    const std::int64_t dd = Diff(x.dst, pd);
    if (!out.empty() && out.back().ds == ds && out.back().dd == dd) {
      ++out.back().len;
    } else {
      out.push_back(Symbol{ds, dd, 1});
    }
    ps = x.src;
    pd = x.dst;
  }
  return out;
}

unsigned DmrlecKeyBits(std::uint64_t unique_symbols) noexcept {
  unsigned bits = 1;
  while (bits < 64 && (std::uint64_t{1} << bits) < unique_symbols) bits *= 2;
  return bits;
}

Result<EncodedRelation> EncodedRelation::Encode(const Relation& relation, Encoding encoding) {
  EncodedRelation e;
  e.encoding_ = encoding;
  e.tuple_count_ = relation.size();
  e.src_extent_ = relation.src_extent();
  e.dst_extent_ = relation.dst_extent();
  e.elem_size_ = relation.elem_size();
  e.order_ = relation.order();
  const std::span<const Tuple> t = relation.tuples();
  switch (encoding) {
    case Encoding::kAapair:
      e.pairs_.assign(t.begin(), t.end());
      break;
    case Encoding::kAablk:
      e.StoreBlocks(BuildBlocks(t));
      break;
    case Encoding::kDmrle:
      e.symbols_ = DifferenceMapRle(t);
      break;
    case Encoding::kDmrlec: {
      const std::vector<Symbol> seq = DifferenceMapRle(t);
      std::unordered_map<Symbol, std::uint64_t, SymbolHash> index;
      std::vector<std::uint64_t> keys;
      keys.reserve(seq.size());
      for (const Symbol& y : seq) {
        auto [it, fresh] = index.try_emplace(y, e.symbols_.size());
        if (fresh) e.symbols_.push_back(y);
        keys.push_back(it->second);
      }
      e.key_bits_ = DmrlecKeyBits(e.symbols_.size());
      if (e.key_bits_ > 32) return Status(Code::kOutOfRange, "DMRLEC: more than 2^32 symbols");
      const unsigned per = 64 / e.key_bits_;
      e.key_count_ = keys.size();
      e.keys_.assign((keys.size() + per - 1) / per, 0);
      for (std::size_t i = 0; i < keys.size(); ++i) {
        e.keys_[i / per] |= keys[i] << ((i % per) * e.key_bits_);
      }
      break;
    }
    case Encoding::kNested:
      AUGUR_RETURN_IF_ERROR(BuildNests(t, e.nests_, e.runs_));
      break;
    default:
      return Status(Code::kInvalidArgument, "unknown encoding");
  }
  return e;
}

// The compact form when one side follows on from block to block and the other side's offsets
// and the lengths fit in 32 bits; the wide form otherwise.
void EncodedRelation::StoreBlocks(std::vector<Block> blocks) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
  bool d_follows = true, s_follows = true, s_fits = true, d_fits = true;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    if (i > 0) {
      d_follows = d_follows && b.d == blocks[i - 1].d + blocks[i - 1].len;
      s_follows = s_follows && b.s == blocks[i - 1].s + blocks[i - 1].len;
    }
    s_fits = s_fits && b.s <= kMax && b.len <= kMax;
    d_fits = d_fits && b.d <= kMax && b.len <= kMax;
  }
  implicit_ = d_follows && s_fits ? ImplicitSide::kDestination
              : s_follows && d_fits ? ImplicitSide::kSource
                                    : ImplicitSide::kNone;
  if (implicit_ == ImplicitSide::kNone || blocks.empty()) {
    implicit_ = ImplicitSide::kNone;
    blocks_ = std::move(blocks);
    return;
  }
  const bool dst = implicit_ == ImplicitSide::kDestination;
  implicit_base_ = dst ? blocks[0].d : blocks[0].s;
  packed_.reserve(blocks.size());
  for (const Block& b : blocks) {
    packed_.push_back(PackedBlock{static_cast<std::uint32_t>(dst ? b.s : b.d), static_cast<std::uint32_t>(b.len)});
  }
}

std::vector<Block> EncodedRelation::blocks() const {
  std::vector<Block> out;
  if (encoding_ != Encoding::kAablk) return out;
  detail::ForEachRun(*this, [&](std::uint64_t s, std::uint64_t d, std::uint64_t len, std::int64_t, std::int64_t) {
    out.push_back(Block{s, d, len});
  });
  return out;
}

std::uint64_t EncodedRelation::size_bytes() const noexcept {
  switch (encoding_) {
    case Encoding::kAapair: return pairs_.size() * sizeof(Tuple);
    case Encoding::kAablk: return blocks_.size() * sizeof(Block) + packed_.size() * sizeof(PackedBlock);
    case Encoding::kDmrle: return symbols_.size() * sizeof(Symbol);
    case Encoding::kDmrlec: return symbols_.size() * sizeof(Symbol) + keys_.size() * sizeof(std::uint64_t);
    case Encoding::kNested: return nests_.size() * sizeof(Nest) + runs_.size() * sizeof(Run);
  }
  return 0;
}

std::uint64_t EncodedRelation::decode_steps() const noexcept {
  switch (encoding_) {
    case Encoding::kAapair: return pairs_.size();
    case Encoding::kAablk: return blocks_.size() + packed_.size();
    case Encoding::kDmrle: return symbols_.size();
    case Encoding::kDmrlec: return key_count_;
    case Encoding::kNested: {
      std::uint64_t steps = 0;
      for (const Nest& n : nests_) steps += n.count * n.run_count;
      return steps;
    }
  }
  return 0;
}

std::vector<Tuple> EncodedRelation::Decode() const {
  std::vector<Tuple> out;
  out.reserve(tuple_count_);
  detail::ForEachRun(*this, [&](std::uint64_t s, std::uint64_t d, std::uint64_t len,
                                std::int64_t ss, std::int64_t sd) {
    for (std::uint64_t j = 0; j < len; ++j) out.push_back(Tuple{s + j * Wrap(ss), d + j * Wrap(sd)});
  });
  return out;
}

Result<Relation> EncodedRelation::ToRelation() const {
  return Relation::Make(Decode(), src_extent_, dst_extent_, elem_size_, order_);
}

Result<EncodedRelation> EncodeAuto(const Relation& relation, Goal goal) {
  Result<EncodedRelation> best = Status(Code::kInternal, "no encoding");
  for (Encoding enc : kAllEncodings) {
    AUGUR_ASSIGN_OR_RETURN(EncodedRelation e, EncodedRelation::Encode(relation, enc));
    if (!best.ok()) {
      best = std::move(e);
      continue;
    }
    const EncodedRelation& b = best.value();
    bool better = false;
    if (goal == Goal::kSmallest) {
      better = e.size_bytes() < b.size_bytes();
    } else {
      // One decode step costs a few instructions; one byte of encoding read costs a load.
      // Fewer steps wins, then fewer bytes (a smaller footprint stays in L1).
      better = e.decode_steps() < b.decode_steps() ||
               (e.decode_steps() == b.decode_steps() && e.size_bytes() < b.size_bytes());
    }
    if (better) best = std::move(e);
  }
  return best;
}

}  // namespace augur::relations
