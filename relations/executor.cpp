#include "augur/relations/executor.h"

#include <algorithm>
#include <chrono>
#include <vector>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <string>

#include "run_stream.h"

namespace augur::relations {
namespace {

using detail::Wrap;

// Copies below this many bytes are inlined: a call to memcpy costs as much as moving the data.
constexpr std::size_t kInlineCopy = 128;

// An inline copy of n bytes, n a multiple of 8 below kInlineCopy. Built without loop-pattern
// distribution, which would turn the loop back into a memcpy call.
__attribute__((optimize("no-tree-loop-distribute-patterns"))) inline void CopyWords(
    std::byte* d, const std::byte* s, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::uint64_t a, b;
    std::memcpy(&a, s + i, 8);
    std::memcpy(&b, s + i + 8, 8);
    std::memcpy(d + i, &a, 8);
    std::memcpy(d + i + 8, &b, 8);
  }
  if (i < n) std::memcpy(d + i, s + i, 8);
}

// kEs != 0: element size known at compile time, so each element copy is one load and store.
template <std::size_t kEs>
struct Mover {
  std::size_t es;
  [[nodiscard]] std::size_t size() const { return kEs != 0 ? kEs : es; }
  void one(std::byte* d, const std::byte* s) const { std::memcpy(d, s, kEs != 0 ? kEs : es); }

  void contiguous(std::byte* d, const std::byte* s, std::size_t n) const {
    if (kEs % 8 == 0 && kEs != 0 && n < kInlineCopy) {
      CopyWords(d, s, n);
    } else {
      std::memcpy(d, s, n);
    }
  }

  // Gather (kGather) or scatter with a small constant stride ratio: one induction variable and a
  // scaled address, the loop a compiler emits for out[i] = in[4 * i]; on the development
  // machine nearly twice as fast as two pointer bumps.
  template <int kScale, bool kGather>
  void Scaled(std::byte* d, const std::byte* s, std::uint64_t bytes) const {
    const std::size_t e = size();
    for (std::uint64_t i = 0; i < bytes; i += e) {
      if constexpr (kGather) {
        one(d + i, s + i * kScale);
      } else {
        one(d + i * kScale, s + i);
      }
    }
  }

  // A gather or scatter at any stride, four elements a turn: a halo column (1024 doubles 512
  // bytes apart) then costs fewer instructions per element than the plain one-element loop
  // that MPI_Pack is compared with; the call's fixed cost is paid back (most visibly under
  // qemu's emulation, where every loop turn costs a translated block).
  void Strided(std::byte* d, std::ptrdiff_t sd, const std::byte* s, std::ptrdiff_t ss, std::uint64_t len) const {
    std::uint64_t j = 0;
    for (; j + 4 <= len; j += 4, d += 4 * sd, s += 4 * ss) {
      one(d, s);
      one(d + sd, s + ss);
      one(d + 2 * sd, s + 2 * ss);
      one(d + 3 * sd, s + 3 * ss);
    }
    for (; j < len; ++j, d += sd, s += ss) one(d, s);
  }

  // `len` elements, byte steps `ss`/`sd` (modular, so negative steps wrap). The common shapes
  // get their own loops: contiguous, gather into contiguous, scatter from contiguous. The
  // pointer-bumping form is what a compiler emits for a plain stride loop.
  void run(std::byte* d, std::uint64_t sd, const std::byte* s, std::uint64_t ss,
           std::uint64_t len) const {
    const std::size_t e = size();
    const auto sst = static_cast<std::ptrdiff_t>(ss);
    const auto dst = static_cast<std::ptrdiff_t>(sd);
    if (ss == e && sd == e) {
      contiguous(d, s, len * e);
    } else if (sd == e) {
      if (ss == 2 * e) return Scaled<2, true>(d, s, len * e);
      if (ss == 4 * e) return Scaled<4, true>(d, s, len * e);
      if (ss == 8 * e) return Scaled<8, true>(d, s, len * e);
      Strided(d, static_cast<std::ptrdiff_t>(e), s, sst, len);
    } else if (ss == e) {
      if (sd == 2 * e) return Scaled<2, false>(d, s, len * e);
      if (sd == 4 * e) return Scaled<4, false>(d, s, len * e);
      if (sd == 8 * e) return Scaled<8, false>(d, s, len * e);
      Strided(d, dst, s, static_cast<std::ptrdiff_t>(e), len);
    } else {
      Strided(d, dst, s, sst, len);
    }
  }
};

enum class Op { kPack, kUnpack, kCopy };

// Merges consecutive decoded runs that continue one strided pattern, so the copy loop sees
// what the relation does to memory rather than how it was encoded: a column-by-column DMRLE
// stream over a contiguous source becomes one memcpy, and alternating symbols (4,1,63),
// (4,193,1) packing a stride-4 source become one stride-4 loop with no loop exit per symbol.
// A pending single element takes whatever stride continues it. Strided merged runs are flushed
// every kChunk elements so decoding interleaves with copying; contiguous ones grow into one
// memcpy.
//
// Pack and unpack track one side (the packed buffer always continues); copy tracks both.
constexpr std::uint64_t kChunk = 4096;

// Cache-blocked moves for transposes. Runs whose layout-side stride is large (a column of a
// transpose: every element on its own cache line) are held back while following runs have the
// same shape and start a few bytes further on (the next columns); then the group is moved
// element row by element row, kTile bytes across, so each cache line of the strided side is
// filled by neighbouring runs before it is evicted. Any order is valid for pack and unpack:
// every packed position and every destination is written exactly once.
constexpr std::int64_t kTileMinStride = 512;  // bytes: stride of a run on the layout side
constexpr std::int64_t kTileMaxShift = 64;    // bytes: shift between neighbouring runs
constexpr std::uint64_t kTile = 256;          // bytes of neighbouring runs moved together

inline std::uint64_t AbsBytes(std::uint64_t step, std::uint64_t e) {
  const auto v = static_cast<std::int64_t>(step * e);
  return static_cast<std::uint64_t>(v < 0 ? -v : v);
}

template <std::size_t kEs, Op kOp>
class Tiler {
 public:
  Tiler(const Mover<kEs>& m, const std::byte* src, std::byte* dst)
      : m_(m), e_(m.size()), src_(src), dst_(dst) {}

  // A run of `len` elements at layout element x (stride sx) and packed position y.
  void Add(std::uint64_t x, std::uint64_t y, std::uint64_t len, std::uint64_t sx) {
    if (n_ != 0) {
      if (len == len_ && sx == sx_ && y == y0_ + n_ * len_) {
        if (n_ == 1 && x != x0_ && AbsBytes(x - x0_, e_) <= kTileMaxShift) {
          dx_ = x - x0_;
          max_ = std::max<std::uint64_t>(2, kTile / AbsBytes(dx_, e_));
        }
        if (n_ > 1 || dx_ == x - x0_) {
          if (x == x0_ + n_ * dx_) {
            if (++n_ == max_) Drain();
            return;
          }
        }
      }
      Drain();
    }
    if (len >= 2 && AbsBytes(sx, e_) >= static_cast<std::uint64_t>(kTileMinStride)) {
      x0_ = x;
      y0_ = y;
      len_ = len;
      sx_ = sx;
      dx_ = 0;
      n_ = 1;
      return;
    }
    Move(x, y, len, sx);
  }

  void Drain() {
    if (n_ == 1) {
      Move(x0_, y0_, len_, sx_);
    } else if (n_ > 1) {
      for (std::uint64_t j = 0; j < len_; ++j) Move(x0_ + j * sx_, y0_ + j, n_, dx_, len_);
    }
    n_ = 0;
  }

 private:
  // `len` elements: layout side from x stepping sx, packed side from y stepping sy.
  void Move(std::uint64_t x, std::uint64_t y, std::uint64_t len, std::uint64_t sx,
            std::uint64_t sy = 1) const {
    if constexpr (kOp == Op::kPack) {
      m_.run(dst_ + y * e_, sy * e_, src_ + x * e_, sx * e_, len);
    } else {
      m_.run(dst_ + x * e_, sx * e_, src_ + y * e_, sy * e_, len);
    }
  }

  const Mover<kEs>& m_;
  const std::uint64_t e_;
  const std::byte* src_;
  std::byte* dst_;
  std::uint64_t x0_ = 0, y0_ = 0, len_ = 0, sx_ = 0, dx_ = 0, n_ = 0, max_ = 2;
};

template <std::size_t kEs, Op kOp>
class Coalescer {
 public:
  static constexpr bool kBoth = kOp == Op::kCopy;

  Coalescer(const Mover<kEs>& m, const std::byte* src, std::byte* dst)
      : m_(m), e_(m.size()), src_(src), dst_(dst), tiler_(m, src, dst) {}

  // (x, sx): the layout side (both sides' source for copy); (y, sy): the other side.
  void Add(std::uint64_t x, std::uint64_t y, std::uint64_t len, std::uint64_t sx, std::uint64_t sy) {
    if (len_ == 1) {
      sx_ = x - x_;
      if constexpr (kBoth) sy_ = y - y_;
      nx_ = x;
      ny_ = y;
    }
    if (len_ != 0 && x == nx_ && (!kBoth || y == ny_) &&
        (len == 1 || (sx == sx_ && (!kBoth || sy == sy_)))) {
      len_ += len;
      nx_ = x + len * sx_;
      if constexpr (kBoth) ny_ = y + len * sy_;
      if (len_ >= kChunk && (sx_ != 1 || (kBoth && sy_ != 1))) Flush();
      return;
    }
    Flush();
    x_ = x;
    y_ = y;
    len_ = len;
    sx_ = sx;
    sy_ = sy;
    nx_ = x + len * sx;
    if constexpr (kBoth) ny_ = y + len * sy;
  }

  // Out of line, with the tiler and the mover's loops inlined once here: inlined at each of
  // Add's call sites in every flattened Execute, they took this file to 16 minutes of -O3.
  __attribute__((noinline)) void Flush() {
    if (len_ == 0) return;
    if constexpr (kBoth) {
      m_.run(dst_ + y_ * e_, sy_ * e_, src_ + x_ * e_, sx_ * e_, len_);
    } else {
      tiler_.Add(x_, y_, len_, sx_);
    }
    len_ = 0;
  }
  // Flush and move whatever the tiler still holds.
  void Finish() {
    Flush();
    if constexpr (!kBoth) tiler_.Drain();
  }

 private:
  const Mover<kEs>& m_;
  const std::uint64_t e_;
  const std::byte* src_;
  std::byte* dst_;
  std::uint64_t x_ = 0, y_ = 0, len_ = 0, sx_ = 0, sy_ = 1;
  std::uint64_t nx_ = 0, ny_ = 0;  // where the pending run's next element would be
  Tiler<kEs, kOp> tiler_;
};

struct EncodedStream {
  const EncodedRelation& e;
  template <class F>
  void operator()(F&& f) const { detail::ForEachRun(e, f); }
};

struct TupleStream {
  const Relation& r;
  template <class F>
  void operator()(F&& f) const {
    for (const Tuple& t : r.tuples()) f(t.src, t.dst, std::uint64_t{1}, std::int64_t{1}, std::int64_t{1});
  }
};

// NESTED pack/unpack of a nest of one run whose layout-side stride is large (a column of a
// transpose) while consecutive blocks are close (the next column): the elements are moved in
// tiles of kTile bytes across blocks, so each cache line of the strided side is filled by
// neighbouring blocks before it is evicted (a cache-blocked transpose). Any order is valid:
// every packed position and every destination is written exactly once.

template <Op kOp, std::size_t kEs>
bool TryTiledNest(const Mover<kEs>& m, const Nest& n, const Run& r, const std::byte* src,
                  std::byte* dst, std::uint64_t pos) {
  const auto e = static_cast<std::int64_t>(m.size());
  const std::int64_t inner = (kOp == Op::kPack ? r.ss : r.sd) * e;
  const std::int64_t outer = (kOp == Op::kPack ? n.os : n.od) * e;
  if (n.count < 2 || r.len < 2 || outer == 0 || std::abs(inner) < kTileMinStride ||
      std::abs(outer) > kTileMaxShift) {
    return false;
  }
  const std::uint64_t tile = std::max<std::uint64_t>(1, kTile / static_cast<std::uint64_t>(std::abs(outer)));
  const std::uint64_t ue = static_cast<std::uint64_t>(e);
  const std::uint64_t x0 = kOp == Op::kPack ? n.s + r.s : n.d + r.d;  // layout element offset
  const std::uint64_t packed_step = r.len * ue;                        // between blocks
  for (std::uint64_t k0 = 0; k0 < n.count; k0 += tile) {
    const std::uint64_t kn = std::min(tile, n.count - k0);
    for (std::uint64_t j = 0; j < r.len; ++j) {
      const std::uint64_t x = (x0 + k0 * Wrap(kOp == Op::kPack ? n.os : n.od) +
                               j * Wrap(kOp == Op::kPack ? r.ss : r.sd)) * ue;
      const std::uint64_t p = (pos + k0 * r.len + j) * ue;
      if constexpr (kOp == Op::kPack) {
        m.run(dst + p, packed_step, src + x, Wrap(outer), kn);
      } else {
        m.run(dst + x, Wrap(outer), src + p, packed_step, kn);
      }
    }
  }
  return true;
}

// The NESTED executor: tiles what TryTiledNest accepts, streams the rest.
template <Op kOp, std::size_t kEs>
void ExecuteNested(const EncodedRelation& e, const std::byte* src, std::byte* dst, std::size_t es) {
  const Mover<kEs> m{es};
  Coalescer<kEs, kOp> c(m, src, dst);
  std::uint64_t pos = 0;
  for (const Nest& n : e.nests()) {
    const Run* first = e.runs().data() + n.first_run;
    if (n.run_count == 1 && TryTiledNest<kOp>(m, n, *first, src, dst, pos)) {
      pos += n.count * first->len;
      continue;
    }
    if (n.run_count == 1) {
      // Blocks that continue their run's stride on the layout side are one long run: O(1).
      const std::int64_t stride = kOp == Op::kPack ? first->ss : first->sd;
      const std::int64_t outer = kOp == Op::kPack ? n.os : n.od;
      if (Wrap(outer) == first->len * Wrap(stride)) {
        const std::uint64_t x = kOp == Op::kPack ? n.s + first->s : n.d + first->d;
        c.Add(x, pos, n.count * first->len, Wrap(stride), 1);
        pos += n.count * first->len;
        continue;
      }
    }
    std::uint64_t bs = n.s;
    std::uint64_t bd = n.d;
    for (std::uint64_t k = 0; k < n.count; ++k) {
      for (const Run* r = first; r != first + n.run_count; ++r) {
        if constexpr (kOp == Op::kPack) {
          c.Add(bs + r->s, pos, r->len, Wrap(r->ss), 1);
        } else {
          c.Add(bd + r->d, pos, r->len, Wrap(r->sd), 1);
        }
        pos += r->len;
      }
      bs += Wrap(n.os);
      bd += Wrap(n.od);
    }
  }
  c.Finish();
}

// A block of n bytes, 8 <= n <= 64, copied with a fixed sequence of loads and stores whatever
// n is: 16-byte word i goes at min(16 i, n - 16) (two 8-byte words below 16), so the last
// words overlap and every store lands inside the block. Irregular block lengths (an indexed
// type of 1-8 doubles) then cost no mispredicted branch per block, where a loop over the length
// mispredicts on most blocks once other code has evicted the lengths' pattern from the branch
// predictor (pack_time's indexed shape: 0.49 of a plain loop before, 1.5 after).
inline void CopyUpTo64(std::byte* d, const std::byte* s, std::size_t n) {
  if (n >= 16) {
    for (std::size_t i = 0; i < 4; ++i) {
      const std::size_t o = std::min<std::size_t>(16 * i, n - 16);
      unsigned char w[16];
      std::memcpy(w, s + o, 16);
      std::memcpy(d + o, w, 16);
    }
    return;
  }
  std::uint64_t a, b;
  std::memcpy(&a, s, 8);
  std::memcpy(&b, s + n - 8, 8);
  std::memcpy(d, &a, 8);
  std::memcpy(d + n - 8, &b, 8);
}

// AABLK in its compact form with the packed side implicit (every pack and unpack relation of a
// datatype): each block is one contiguous copy at the next packed position. Blocks are not
// merged; small ones take CopyUpTo64.
template <Op kOp>
void ExecuteBlocks(const EncodedRelation& e, const std::byte* src, std::byte* dst, std::size_t es) {
  std::size_t pos = 0;  // bytes into the packed buffer
  for (const PackedBlock& b : e.packed_blocks()) {
    const std::size_t n = std::size_t{b.len} * es;
    const std::size_t x = std::size_t{b.x} * es;
    std::byte* d = kOp == Op::kPack ? dst + pos : dst + x;
    const std::byte* s = kOp == Op::kPack ? src + x : src + pos;
    if (n - 8 <= 56) {
      CopyUpTo64(d, s, n);
    } else {
      std::memcpy(d, s, n);
    }
    pos += n;
  }
}

// One element-size specialisation of one operation over any run stream. flatten: the decoder,
// the coalescer and the copy loop become one loop nest with its state in registers (without
// it GCC keeps the per-key lambda out of line).
template <Op kOp, std::size_t kEs, class Stream>
__attribute__((flatten)) void Execute(const Stream& stream, const std::byte* src, std::byte* dst,
                                      std::size_t es) {
  if constexpr (kOp != Op::kCopy && std::is_same_v<Stream, EncodedStream>) {
    if (stream.e.encoding() == Encoding::kNested) {
      ExecuteNested<kOp, kEs>(stream.e, src, dst, es);
      return;
    }
    if (stream.e.encoding() == Encoding::kAablk &&
        stream.e.implicit_side() == (kOp == Op::kPack ? ImplicitSide::kDestination : ImplicitSide::kSource)) {
      ExecuteBlocks<kOp>(stream.e, src, dst, kEs != 0 ? kEs : es);
      return;
    }
  }
  const Mover<kEs> m{es};
  Coalescer<kEs, kOp> c(m, src, dst);
  std::uint64_t pos = 0;  // packed-buffer element position
  stream([&](std::uint64_t s, std::uint64_t d, std::uint64_t len, std::int64_t ss,
             std::int64_t sd) {
    if constexpr (kOp == Op::kPack) {
      c.Add(s, pos, len, Wrap(ss), 1);
    } else if constexpr (kOp == Op::kUnpack) {
      c.Add(d, pos, len, Wrap(sd), 1);
    } else {
      c.Add(s, d, len, Wrap(ss), Wrap(sd));
    }
    pos += len;
  });
  c.Finish();
}

template <Op kOp, class Stream>
void Dispatch(const Stream& stream, const std::byte* src, std::byte* dst, std::size_t es) {
  switch (es) {
    case 1: Execute<kOp, 1>(stream, src, dst, es); return;
    case 2: Execute<kOp, 2>(stream, src, dst, es); return;
    case 4: Execute<kOp, 4>(stream, src, dst, es); return;
    case 8: Execute<kOp, 8>(stream, src, dst, es); return;
    case 16: Execute<kOp, 16>(stream, src, dst, es); return;
    default: Execute<kOp, 0>(stream, src, dst, es); return;
  }
}

bool Overlap(const std::byte* a, std::size_t na, const std::byte* b, std::size_t nb) {
  if (na == 0 || nb == 0) return false;
  const auto pa = reinterpret_cast<std::uintptr_t>(a);
  const auto pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + nb && pb < pa + na;
}

Status CheckBuffer(const char* what, std::size_t have, std::uint64_t elems, std::size_t es) {
  if (have / es < elems) {
    return Status(Code::kOutOfRange, std::string(what) + " buffer holds " + std::to_string(have) +
                                         " bytes, the relation needs " +
                                         std::to_string(elems * es));
  }
  return Status::Ok();
}

// Shared checks: src needs `src_elems` elements, dst `dst_elems`; they must not overlap.
Status CheckBuffers(std::span<const std::byte> src, std::uint64_t src_elems,
                    std::span<std::byte> dst, std::uint64_t dst_elems, std::size_t es) {
  AUGUR_RETURN_IF_ERROR(CheckBuffer("source", src.size(), src_elems, es));
  AUGUR_RETURN_IF_ERROR(CheckBuffer("destination", dst.size(), dst_elems, es));
  if (Overlap(src.data(), src_elems * es, dst.data(), dst_elems * es)) {
    return Status(Code::kInvalidArgument, "source and destination buffers overlap");
  }
  return Status::Ok();
}


// Element counts each operation needs in its (src, dst) buffers.
template <class R>
std::uint64_t SrcNeed(Op op, const R& r) { return op == Op::kUnpack ? r.payload_bytes() / r.elem_size() : r.src_extent(); }
template <class R>
std::uint64_t DstNeed(Op op, const R& r) { return op == Op::kPack ? r.payload_bytes() / r.elem_size() : r.dst_extent(); }

template <Op kOp, class R, class Stream>
Status RunOp(const R& r, const Stream& stream, std::span<const std::byte> src, std::span<std::byte> dst) {
  AUGUR_RETURN_IF_ERROR(CheckBuffers(src, SrcNeed(kOp, r), dst, DstNeed(kOp, r), r.elem_size()));
  if (r.payload_bytes() == 0) return Status::Ok();
  Dispatch<kOp>(stream, src.data(), dst.data(), r.elem_size());
  return Status::Ok();
}

// The first `n` elements of an encoding's run stream; `*next` gets the layout offset of element
// n (where a trailing partial element goes), if there is one.
struct PrefixStream {
  const EncodedRelation& e;
  std::uint64_t n;
  std::uint64_t* next;
  template <class F>
  void operator()(F&& f) const {
    std::uint64_t pos = 0;
    detail::ForEachRun(e, [&](std::uint64_t s, std::uint64_t d, std::uint64_t len, std::int64_t ss,
                              std::int64_t sd) {
      if (pos < n) f(s, d, std::min(len, n - pos), ss, sd);
      if (pos <= n && n < pos + len) *next = d + (n - pos) * Wrap(sd);
      pos += len;
    });
  }
};

}  // namespace

Status UnpackPrefix(const EncodedRelation& r, std::span<const std::byte> in, std::span<std::byte> dst) {
  const std::size_t es = r.elem_size();
  if (in.size() > r.payload_bytes()) {
    return Status(Code::kOutOfRange, "prefix of " + std::to_string(in.size()) +
                                         " bytes is longer than the message of " +
                                         std::to_string(r.payload_bytes()));
  }
  AUGUR_RETURN_IF_ERROR(CheckBuffer("destination", dst.size(), r.dst_extent(), es));
  if (Overlap(in.data(), in.size(), dst.data(), r.dst_extent() * es)) {
    return Status(Code::kInvalidArgument, "source and destination buffers overlap");
  }
  if (in.size() == r.payload_bytes()) return Unpack(r, in, dst);
  const std::uint64_t whole = in.size() / es;
  std::uint64_t next = 0;
  Dispatch<Op::kUnpack>(PrefixStream{r, whole, &next}, in.data(), dst.data(), es);
  if (const std::size_t tail = in.size() % es; tail != 0) std::memcpy(dst.data() + next * es, in.data() + whole * es, tail);
  return Status::Ok();
}

Status Pack(const EncodedRelation& r, std::span<const std::byte> src, std::span<std::byte> out) {
  return RunOp<Op::kPack>(r, EncodedStream{r}, src, out);
}
Status Unpack(const EncodedRelation& r, std::span<const std::byte> in, std::span<std::byte> dst) {
  return RunOp<Op::kUnpack>(r, EncodedStream{r}, in, dst);
}
Status Copy(const EncodedRelation& r, std::span<const std::byte> src, std::span<std::byte> dst) {
  return RunOp<Op::kCopy>(r, EncodedStream{r}, src, dst);
}
Status Pack(const Relation& r, std::span<const std::byte> src, std::span<std::byte> out) {
  return RunOp<Op::kPack>(r, TupleStream{r}, src, out);
}
Status Unpack(const Relation& r, std::span<const std::byte> in, std::span<std::byte> dst) {
  return RunOp<Op::kUnpack>(r, TupleStream{r}, in, dst);
}
Status Copy(const Relation& r, std::span<const std::byte> src, std::span<std::byte> dst) {
  return RunOp<Op::kCopy>(r, TupleStream{r}, src, dst);
}

Result<EncodedRelation> EncodeFastestMeasured(const Relation& relation, int rounds,
                                              std::uint64_t max_scratch_bytes) {
  const std::uint64_t es = relation.elem_size();
  const std::uint64_t need = (relation.src_extent() + relation.dst_extent() + relation.size()) * es;
  if (need / es < relation.src_extent() || need > max_scratch_bytes) {
    return Status(Code::kResourceExhausted, "measured encoding choice: scratch buffers of " +
                                                std::to_string(need) + " bytes exceed the bound");
  }
  std::vector<EncodedRelation> all;
  for (Encoding enc : kAllEncodings) {
    AUGUR_ASSIGN_OR_RETURN(EncodedRelation e, EncodedRelation::Encode(relation, enc));
    all.push_back(std::move(e));
  }
  std::vector<std::byte> src(relation.src_extent() * es), packed(relation.size() * es),
      dst(relation.dst_extent() * es);
  std::vector<std::vector<double>> times(all.size());
  // One untimed round first: the first pass of each executor pays for its cold code, branch
  // history and caches (without it, a process's first choice for pack_time's indexed shape was
  // once NESTED, at half of AABLK's speed).
  for (int r = -1; r < std::max(1, rounds); ++r) {
    for (std::size_t i = 0; i < all.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      AUGUR_RETURN_IF_ERROR(Pack(all[i], src, packed));
      AUGUR_RETURN_IF_ERROR(Unpack(all[i], packed, dst));
      if (r >= 0) times[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  std::vector<double> median(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    std::sort(times[i].begin(), times[i].end());
    median[i] = times[i][times[i].size() / 2];
  }
  const double fastest = *std::min_element(median.begin(), median.end());
  std::size_t best = all.size();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (median[i] > fastest * 1.03) continue;
    if (best == all.size() || all[i].size_bytes() < all[best].size_bytes()) best = i;
  }
  return std::move(all[best]);
}

}  // namespace augur::relations
