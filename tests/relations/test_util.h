// Shared helpers for the relations tests: random relations and byte-exact reference executors.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "augur/relations/relation.h"

namespace augur::relations::testing {

// Bytes 0..n-1 filled with a pattern that differs per byte.
inline std::vector<std::byte> Pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + seed * 17 + 7) & 0xFF);
  return v;
}

// A relation of one of several shapes: random scatter, strided blocks, a 2-D transpose-like
// pattern, or contiguous; optionally in destination-first order.
inline Relation RandomRelation(std::mt19937_64& rng, std::size_t elem_size) {
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  std::vector<Tuple> t;
  std::uint64_t src_extent = 0;
  std::uint64_t dst_extent = 0;
  switch (pick(0, 3)) {
    case 0: {  // random: duplicate sources allowed, destinations a random subset
      const std::uint64_t n = pick(0, 300);
      src_extent = pick(1, 400);
      dst_extent = n + pick(0, 50);
      std::vector<std::uint64_t> dsts(dst_extent);
      std::iota(dsts.begin(), dsts.end(), 0);
      std::shuffle(dsts.begin(), dsts.end(), rng);
      for (std::uint64_t i = 0; i < n; ++i) t.push_back({pick(0, src_extent - 1), dsts[i]});
      break;
    }
    case 1: {  // rows x cols block with strides on both sides
      const std::uint64_t rows = pick(1, 20), cols = pick(1, 20);
      const std::uint64_t ss = pick(1, 4), sd = pick(1, 4);
      const std::uint64_t sld = cols * ss + pick(0, 5), dld = cols * sd + pick(0, 5);
      src_extent = rows * sld;
      dst_extent = rows * dld;
      for (std::uint64_t r = 0; r < rows; ++r)
        for (std::uint64_t c = 0; c < cols; ++c) t.push_back({r * sld + c * ss, r * dld + c * sd});
      break;
    }
    case 2: {  // transpose
      const std::uint64_t rows = pick(1, 25), cols = pick(1, 25);
      src_extent = dst_extent = rows * cols;
      for (std::uint64_t r = 0; r < rows; ++r)
        for (std::uint64_t c = 0; c < cols; ++c) t.push_back({r * cols + c, c * rows + r});
      break;
    }
    default: {  // contiguous with an offset
      const std::uint64_t n = pick(0, 500), off = pick(0, 10);
      src_extent = dst_extent = n + off;
      for (std::uint64_t i = 0; i < n; ++i) t.push_back({i + off, i});
      break;
    }
  }
  const Order order = pick(0, 1) == 0 ? Order::kSourceFirst : Order::kDestinationFirst;
  return Relation::Make(std::move(t), src_extent, dst_extent, elem_size, order).value();
}

// Reference executors, one element at a time, written without the library.
inline std::vector<std::byte> RefPack(const Relation& r, const std::vector<std::byte>& src) {
  const std::size_t e = r.elem_size();
  std::vector<std::byte> out(r.size() * e);
  for (std::size_t i = 0; i < r.size(); ++i)
    std::memcpy(out.data() + i * e, src.data() + r.tuples()[i].src * e, e);
  return out;
}
inline void RefUnpack(const Relation& r, const std::vector<std::byte>& in, std::vector<std::byte>& dst) {
  const std::size_t e = r.elem_size();
  for (std::size_t i = 0; i < r.size(); ++i)
    std::memcpy(dst.data() + r.tuples()[i].dst * e, in.data() + i * e, e);
}
inline void RefCopy(const Relation& r, const std::vector<std::byte>& src, std::vector<std::byte>& dst) {
  const std::size_t e = r.elem_size();
  for (const Tuple& t : r.tuples()) std::memcpy(dst.data() + t.dst * e, src.data() + t.src * e, e);
}

}  // namespace augur::relations::testing
