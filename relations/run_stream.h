// Internal: every encoding decodes to a stream of strided runs (s, d, len, ss, sd) — element i
// of a run is (s + i*ss, d + i*sd). Executors and Decode() are visitors over this stream, so
// each encoding has exactly one decoder. Offsets are modular (uint64 wrap-around) so negative
// steps need no branches.
#pragma once

#include <cstdint>

#include "augur/relations/encoding.h"

namespace augur::relations::detail {

inline std::uint64_t Wrap(std::int64_t v) { return static_cast<std::uint64_t>(v); }

template <unsigned kBits, class F>
inline void ForEachKey(const std::uint64_t* words, std::uint64_t n, F&& f) {
  constexpr unsigned kPer = 64 / kBits;
  constexpr std::uint64_t kMask = (std::uint64_t{1} << kBits) - 1;
  const std::uint64_t full = n / kPer;
  for (std::uint64_t w = 0; w < full; ++w) {
    std::uint64_t word = words[w];
    for (unsigned j = 0; j < kPer; ++j) {
      f(word & kMask);
      word >>= kBits;
    }
  }
  std::uint64_t word = full * kPer < n ? words[full] : 0;
  for (std::uint64_t j = full * kPer; j < n; ++j) {
    f(word & kMask);
    word >>= kBits;
  }
}

template <class F>
inline void ForEachRun(const EncodedRelation& e, F&& f) {
  switch (e.encoding()) {
    case Encoding::kAapair:
      for (const Tuple& t : e.pairs()) f(t.src, t.dst, std::uint64_t{1}, std::int64_t{1}, std::int64_t{1});
      return;
    case Encoding::kAablk: {
      std::uint64_t at = e.implicit_base();
      switch (e.implicit_side()) {
        case ImplicitSide::kNone:
          for (const Block& b : e.wide_blocks()) f(b.s, b.d, b.len, std::int64_t{1}, std::int64_t{1});
          return;
        case ImplicitSide::kDestination:
          for (const PackedBlock& b : e.packed_blocks()) {
            f(std::uint64_t{b.x}, at, std::uint64_t{b.len}, std::int64_t{1}, std::int64_t{1});
            at += b.len;
          }
          return;
        case ImplicitSide::kSource:
          for (const PackedBlock& b : e.packed_blocks()) {
            f(at, std::uint64_t{b.x}, std::uint64_t{b.len}, std::int64_t{1}, std::int64_t{1});
            at += b.len;
          }
          return;
      }
      return;
    }
    case Encoding::kDmrle: {
      std::uint64_t cs = 0;
      std::uint64_t cd = 0;
      for (const Symbol& y : e.symbols()) {
        f(cs + Wrap(y.ds), cd + Wrap(y.dd), y.len, y.ds, y.dd);
        cs += y.len * Wrap(y.ds);
        cd += y.len * Wrap(y.dd);
      }
      return;
    }
    case Encoding::kDmrlec: {
      std::uint64_t cs = 0;
      std::uint64_t cd = 0;
      const Symbol* table = e.symbols().data();
      auto step = [&](std::uint64_t key) {
        const Symbol& y = table[key];
        f(cs + Wrap(y.ds), cd + Wrap(y.dd), y.len, y.ds, y.dd);
        cs += y.len * Wrap(y.ds);
        cd += y.len * Wrap(y.dd);
      };
      const std::uint64_t* w = e.key_words().data();
      const std::uint64_t n = e.key_count();
      switch (e.key_bits()) {
        case 1: ForEachKey<1>(w, n, step); return;
        case 2: ForEachKey<2>(w, n, step); return;
        case 4: ForEachKey<4>(w, n, step); return;
        case 8: ForEachKey<8>(w, n, step); return;
        case 16: ForEachKey<16>(w, n, step); return;
        default: ForEachKey<32>(w, n, step); return;
      }
    }
    case Encoding::kNested: {
      const Run* runs = e.runs().data();
      for (const Nest& n : e.nests()) {
        std::uint64_t bs = n.s;
        std::uint64_t bd = n.d;
        const Run* first = runs + n.first_run;
        const Run* last = first + n.run_count;
        for (std::uint64_t k = 0; k < n.count; ++k) {
          for (const Run* r = first; r != last; ++r) f(bs + r->s, bd + r->d, r->len, r->ss, r->sd);
          bs += Wrap(n.os);
          bd += Wrap(n.od);
        }
      }
      return;
    }
  }
}

}  // namespace augur::relations::detail
