#include "augur/relations/executor.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "run_stream.h"

namespace augur::relations {
namespace {

using detail::Wrap;

// kEs != 0: element size known at compile time, so each element copy is one load and store.
template <std::size_t kEs>
struct Mover {
  std::size_t es;
  [[nodiscard]] std::size_t size() const { return kEs != 0 ? kEs : es; }
  void one(std::byte* d, const std::byte* s) const { std::memcpy(d, s, kEs != 0 ? kEs : es); }
  // `len` elements, byte steps `ss`/`sd` (modular); contiguous runs become one memcpy.
  void run(std::byte* d, std::uint64_t sd, const std::byte* s, std::uint64_t ss,
           std::uint64_t len) const {
    const std::size_t e = size();
    if (ss == e && sd == e) {
      std::memcpy(d, s, len * e);
      return;
    }
    std::uint64_t so = 0;
    std::uint64_t dof = 0;
    for (std::uint64_t j = 0; j < len; ++j) {
      one(d + dof, s + so);
      so += ss;
      dof += sd;
    }
  }
};

enum class Op { kPack, kUnpack, kCopy };

// One element-size specialisation of one operation over any run stream.
template <Op kOp, std::size_t kEs, class Stream>
void Execute(const Stream& stream, const std::byte* src, std::byte* dst, std::size_t es) {
  const Mover<kEs> m{es};
  const std::uint64_t e = m.size();
  std::byte* cursor = dst;        // pack: next output byte
  const std::byte* in = src;      // unpack: next input byte
  stream([&](std::uint64_t s, std::uint64_t d, std::uint64_t len, std::int64_t ss,
             std::int64_t sd) {
    if constexpr (kOp == Op::kPack) {
      m.run(cursor, e, src + s * e, Wrap(ss) * e, len);
      cursor += len * e;
    } else if constexpr (kOp == Op::kUnpack) {
      m.run(dst + d * e, Wrap(sd) * e, in, e, len);
      in += len * e;
    } else {
      m.run(dst + d * e, Wrap(sd) * e, src + s * e, Wrap(ss) * e, len);
    }
  });
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

// Element counts each operation needs in its (src, dst) buffers.
template <class R>
std::uint64_t SrcNeed(Op op, const R& r) { return op == Op::kUnpack ? r.payload_bytes() / r.elem_size() : r.src_extent(); }
template <class R>
std::uint64_t DstNeed(Op op, const R& r) { return op == Op::kPack ? r.payload_bytes() / r.elem_size() : r.dst_extent(); }

template <Op kOp, class R, class Stream>
Status Run(const R& r, const Stream& stream, std::span<const std::byte> src, std::span<std::byte> dst) {
  AUGUR_RETURN_IF_ERROR(CheckBuffers(src, SrcNeed(kOp, r), dst, DstNeed(kOp, r), r.elem_size()));
  if (r.payload_bytes() == 0) return Status::Ok();
  Dispatch<kOp>(stream, src.data(), dst.data(), r.elem_size());
  return Status::Ok();
}

}  // namespace

Status Pack(const EncodedRelation& r, std::span<const std::byte> src, std::span<std::byte> out) {
  return Run<Op::kPack>(r, EncodedStream{r}, src, out);
}
Status Unpack(const EncodedRelation& r, std::span<const std::byte> in, std::span<std::byte> dst) {
  return Run<Op::kUnpack>(r, EncodedStream{r}, in, dst);
}
Status Copy(const EncodedRelation& r, std::span<const std::byte> src, std::span<std::byte> dst) {
  return Run<Op::kCopy>(r, EncodedStream{r}, src, dst);
}
Status Pack(const Relation& r, std::span<const std::byte> src, std::span<std::byte> out) {
  return Run<Op::kPack>(r, TupleStream{r}, src, out);
}
Status Unpack(const Relation& r, std::span<const std::byte> in, std::span<std::byte> dst) {
  return Run<Op::kUnpack>(r, TupleStream{r}, in, dst);
}
Status Copy(const Relation& r, std::span<const std::byte> src, std::span<std::byte> dst) {
  return Run<Op::kCopy>(r, TupleStream{r}, src, dst);
}

}  // namespace augur::relations
