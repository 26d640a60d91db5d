// Executors: move data as a relation says, decoding its encoding on the fly.
//   Pack   (message assembly):    out[i]   = src[s_i]  for the i-th tuple in relation order
//   Unpack (message disassembly): dst[d_i] = in[i]
//   Copy   (layout to layout):    dst[d_i] = src[s_i]
// Buffers are checked once against the relation's extents (element units * elem_size);
// overlapping source and destination buffers are rejected.
#pragma once

#include <cstddef>
#include <span>

#include "augur/relations/encoding.h"
#include "augur/relations/relation.h"
#include "augur/status.h"

namespace augur::relations {

Status Pack(const EncodedRelation& r, std::span<const std::byte> src, std::span<std::byte> out);
Status Unpack(const EncodedRelation& r, std::span<const std::byte> in, std::span<std::byte> dst);
Status Copy(const EncodedRelation& r, std::span<const std::byte> src, std::span<std::byte> dst);
// Unpack of the first in.size() bytes of the message (at most payload_bytes()), as a receive of
// a shorter message needs: whole elements, then the leading bytes of the next element. The rest
// of `dst` is untouched.
Status UnpackPrefix(const EncodedRelation& r, std::span<const std::byte> in, std::span<std::byte> dst);

// Reference executors straight from the tuples (the AAPAIR loop without the copy into pairs).
Status Pack(const Relation& r, std::span<const std::byte> src, std::span<std::byte> out);
Status Unpack(const Relation& r, std::span<const std::byte> in, std::span<std::byte> dst);
Status Copy(const Relation& r, std::span<const std::byte> src, std::span<std::byte> dst);

// Automatic choice by measurement: encodes in every encoding, times Pack then Unpack of each on
// scratch buffers (interleaved, median of `rounds`) and keeps the fastest; encodings within 3%
// of the fastest count as equal and the smallest of them wins. Refuses relations whose scratch
// buffers would exceed `max_scratch_bytes`.
Result<EncodedRelation> EncodeFastestMeasured(const Relation& relation, int rounds = 5,
                                              std::uint64_t max_scratch_bytes = 1ULL << 30);

}  // namespace augur::relations
