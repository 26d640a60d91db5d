// MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size: the portable "external32"
// representation (MPI-3.1 13.5.2): big-endian, IEEE formats, and the standard's sizes rather than
// the host's (MPI_LONG is 4 bytes there, MPI_WCHAR 2, MPI_LONG_DOUBLE the 16-byte IEEE quad).
//
// The data is packed natively first (pack(): the type map's bytes in order), then converted one
// basic element at a time. Which basic element comes next is read off the type's constructors
// (its envelope, as MPI_Type_get_contents gives it), down to the predefined types.
#include <cstring>
#include <string>
#include <vector>

#include "shim.h"

namespace augur::mpi {

namespace {

enum class Kind : std::uint8_t { kBytes, kSigned, kUnsigned, kFloat, kLongDouble };

// One basic element: its bytes here and in external32.
struct Comp {
  std::uint8_t native;
  std::uint8_t ext;
  Kind kind;
  bool operator==(const Comp&) const = default;
};

struct Run {
  Comp c;
  std::int64_t n;
};

// Signatures longer than this are refused rather than expanded (a vector of a struct repeats the
// struct's elements once per block).
constexpr std::size_t kMaxRuns = std::size_t{1} << 22;

class Signature {
 public:
  std::vector<Run> runs;
  Err add(Comp c, std::int64_t n) {
    if (n == 0) return ok();
    if (!runs.empty() && runs.back().c == c) {
      runs.back().n += n;
      return ok();
    }
    if (runs.size() >= kMaxRuns) return err(MPI_ERR_TYPE, "datatype too complex for external32 (more than 2^22 element runs)");
    runs.push_back({c, n});
    return ok();
  }
  // Appends `sub` `reps` times.
  Err repeat(const Signature& sub, std::int64_t reps) {
    if (sub.runs.size() == 1) return add(sub.runs[0].c, sub.runs[0].n * reps);
    for (std::int64_t r = 0; r < reps; ++r) {
      for (const Run& x : sub.runs) AUGUR_ERR_RETURN(add(x.c, x.n));
    }
    return ok();
  }
};

constexpr Comp kB1{1, 1, Kind::kBytes};
constexpr Comp kI2{2, 2, Kind::kSigned}, kU2{2, 2, Kind::kUnsigned};
constexpr Comp kI4{4, 4, Kind::kSigned}, kU4{4, 4, Kind::kUnsigned};
constexpr Comp kI8{8, 8, Kind::kSigned}, kU8{8, 8, Kind::kUnsigned};
constexpr Comp kLong{8, 4, Kind::kSigned}, kULong{8, 4, Kind::kUnsigned};
constexpr Comp kWchar{4, 2, Kind::kUnsigned};
constexpr Comp kF4{4, 4, Kind::kFloat}, kF8{8, 8, Kind::kFloat};
constexpr Comp kLD{16, 16, Kind::kLongDouble};

// The basic elements of one predefined type, by MPI-3.1 table 13.2.
Err predefined(MPI_Datatype h, Signature* s) {
  switch (h) {
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_UNSIGNED_CHAR: case MPI_BYTE: case MPI_PACKED: case MPI_C_BOOL:
    case MPI_CXX_BOOL: case MPI_CHARACTER: case MPI_INT8_T: case MPI_UINT8_T: case MPI_INTEGER1:
      return s->add(kB1, 1);
    case MPI_SHORT: case MPI_INT16_T: case MPI_INTEGER2: return s->add(kI2, 1);
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: return s->add(kU2, 1);
    case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: case MPI_INTEGER4: case MPI_LOGICAL: return s->add(kI4, 1);
    case MPI_UNSIGNED: case MPI_UINT32_T: return s->add(kU4, 1);
    case MPI_LONG: return s->add(kLong, 1);
    case MPI_UNSIGNED_LONG: return s->add(kULong, 1);
    case MPI_LONG_LONG_INT: case MPI_INT64_T: case MPI_INTEGER8: case MPI_AINT: case MPI_OFFSET: case MPI_COUNT:
      return s->add(kI8, 1);
    case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: return s->add(kU8, 1);
    case MPI_WCHAR: return s->add(kWchar, 1);
    case MPI_FLOAT: case MPI_REAL: case MPI_REAL4: return s->add(kF4, 1);
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_REAL8: return s->add(kF8, 1);
    case MPI_LONG_DOUBLE: return s->add(kLD, 1);
    case MPI_C_FLOAT_COMPLEX: case MPI_COMPLEX: case MPI_2REAL: return s->add(kF4, 2);
    case MPI_C_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX: case MPI_2DOUBLE_PRECISION: return s->add(kF8, 2);
    case MPI_C_LONG_DOUBLE_COMPLEX: return s->add(kLD, 2);
    case MPI_2INT: case MPI_2INTEGER: return s->add(kI4, 2);
    case MPI_FLOAT_INT: AUGUR_ERR_RETURN(s->add(kF4, 1)); return s->add(kI4, 1);
    case MPI_DOUBLE_INT: AUGUR_ERR_RETURN(s->add(kF8, 1)); return s->add(kI4, 1);
    case MPI_LONG_INT: AUGUR_ERR_RETURN(s->add(kLong, 1)); return s->add(kI4, 1);
    case MPI_SHORT_INT: AUGUR_ERR_RETURN(s->add(kI2, 1)); return s->add(kI4, 1);
    case MPI_LONG_DOUBLE_INT: AUGUR_ERR_RETURN(s->add(kLD, 1)); return s->add(kI4, 1);
    default: return err(MPI_ERR_TYPE, "predefined type " + std::to_string(h) + " has no external32 form here");
  }
}

std::int64_t product(const std::vector<int>& v, std::size_t from, std::size_t n) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < from + n && i < v.size(); ++i) p *= v[i];
  return p;
}

// One copy of `t` as basic elements in type-map order (the envelope layouts of MPI-3.1 4.1.13).
Err signature(const Type& t, Signature* out, int depth = 0) {
  if (depth > 64) return err(MPI_ERR_TYPE, "datatype nested too deeply for external32");
  const Type::Envelope& e = t.env;
  if (e.combiner == MPI_COMBINER_NAMED) return predefined(t.handle, out);
  if (e.types.empty() || !e.types[0]) return err(MPI_ERR_INTERN, "a derived datatype without its components");
  const std::vector<int>& i = e.ints;
  auto at = [&](std::size_t k) { return k < i.size() ? static_cast<std::int64_t>(i[k]) : 0; };
  std::int64_t reps = 1;
  switch (e.combiner) {
    case MPI_COMBINER_DUP: case MPI_COMBINER_RESIZED: reps = 1; break;
    case MPI_COMBINER_CONTIGUOUS: reps = at(0); break;
    case MPI_COMBINER_VECTOR: case MPI_COMBINER_HVECTOR: case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
      reps = at(0) * at(1);
      break;
    case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED:
      reps = 0;
      for (std::int64_t k = 0; k < at(0); ++k) reps += at(static_cast<std::size_t>(1 + k));
      break;
    case MPI_COMBINER_SUBARRAY: {
      const auto nd = static_cast<std::size_t>(at(0));
      reps = product(i, 1 + nd, nd);
      break;
    }
    case MPI_COMBINER_DARRAY:  // this process's block of the global array: nelems counts it
      reps = e.types[0]->nelems > 0 ? t.nelems / e.types[0]->nelems : 0;
      break;
    case MPI_COMBINER_STRUCT: {
      for (std::int64_t k = 0; k < at(0); ++k) {
        const auto& sub = e.types[static_cast<std::size_t>(k)];
        Signature s;
        AUGUR_ERR_RETURN(signature(*sub, &s, depth + 1));
        AUGUR_ERR_RETURN(out->repeat(s, at(static_cast<std::size_t>(1 + k))));
      }
      return ok();
    }
    default: return err(MPI_ERR_TYPE, "combiner " + std::to_string(e.combiner) + " has no external32 form here");
  }
  Signature s;
  AUGUR_ERR_RETURN(signature(*e.types[0], &s, depth + 1));
  return out->repeat(s, reps);
}

// Integers: the low `ext` bytes of the native value, most significant first; back with sign or
// zero extension.
void int_out(const std::byte* in, std::size_t native, std::size_t ext, std::byte* out) {
  std::uint64_t v = 0;
  std::memcpy(&v, in, native);  // little-endian host
  for (std::size_t b = 0; b < ext; ++b) out[b] = static_cast<std::byte>(v >> (8 * (ext - 1 - b)));
}
void int_in(const std::byte* in, std::size_t ext, bool is_signed, std::size_t native, std::byte* out) {
  std::uint64_t v = 0;
  for (std::size_t b = 0; b < ext; ++b) v = (v << 8) | static_cast<std::uint8_t>(in[b]);
  if (is_signed && ext < 8 && (v >> (8 * ext - 1)) != 0) v |= ~std::uint64_t{0} << (8 * ext);
  std::memcpy(out, &v, native);
}
void reversed(const std::byte* in, std::size_t n, std::byte* out) {
  for (std::size_t b = 0; b < n; ++b) out[b] = in[n - 1 - b];
}

void convert_out(const Comp& c, const std::byte* in, std::byte* out) {
  switch (c.kind) {
    case Kind::kBytes: std::memcpy(out, in, c.ext); break;
    case Kind::kSigned: case Kind::kUnsigned: int_out(in, c.native, c.ext, out); break;
    case Kind::kFloat: reversed(in, c.ext, out); break;
    case Kind::kLongDouble: {
      long double v = 0;
      std::memcpy(&v, in, sizeof v);
      const auto q = static_cast<__float128>(v);
      std::byte le[16];
      std::memcpy(le, &q, 16);
      reversed(le, 16, out);
      break;
    }
  }
}

void convert_in(const Comp& c, const std::byte* in, std::byte* out) {
  switch (c.kind) {
    case Kind::kBytes: std::memcpy(out, in, c.ext); break;
    case Kind::kSigned: case Kind::kUnsigned: int_in(in, c.ext, c.kind == Kind::kSigned, c.native, out); break;
    case Kind::kFloat: reversed(in, c.ext, out); break;
    case Kind::kLongDouble: {
      std::byte le[16];
      reversed(in, 16, le);
      __float128 q = 0;
      std::memcpy(&q, le, 16);
      const auto v = static_cast<long double>(q);
      std::memset(out, 0, c.native);
      std::memcpy(out, &v, sizeof v < c.native ? sizeof v : c.native);
      break;
    }
  }
}

template <typename Step>
Err walk(std::int64_t count, const Type& t, Step&& step) {
  Signature s;
  AUGUR_ERR_RETURN(signature(t, &s));
  for (std::int64_t k = 0; k < count; ++k) {
    for (const Run& r : s.runs) {
      for (std::int64_t j = 0; j < r.n; ++j) step(r.c);
    }
  }
  return ok();
}

}  // namespace

Err external32_size(std::int64_t count, const Type& t, std::int64_t* bytes) {
  Signature s;
  AUGUR_ERR_RETURN(signature(t, &s));
  std::int64_t one = 0;
  for (const Run& r : s.runs) one += r.n * r.c.ext;
  *bytes = one * count;
  return ok();
}

Err to_external32(const std::byte* native, std::int64_t count, const Type& t, std::byte* out) {
  return walk(count, t, [&](const Comp& c) {
    convert_out(c, native, out);
    native += c.native;
    out += c.ext;
  });
}

Err from_external32(const std::byte* in, std::int64_t count, const Type& t, std::byte* native) {
  return walk(count, t, [&](const Comp& c) {
    convert_in(c, in, native);
    in += c.ext;
    native += c.native;
  });
}

}  // namespace augur::mpi

using namespace augur::mpi;

namespace {

Err check_datarep(const char* datarep) {
  if (datarep == nullptr) return err(MPI_ERR_ARG, "null data representation");
  if (std::strcmp(datarep, "external32") != 0) {
    return err(MPI_ERR_ARG, std::string("data representation \"") + datarep + "\" (only \"external32\")");
  }
  return ok();
}

Err check_external(const char* datarep, std::int64_t count, MPI_Datatype datatype) {
  AUGUR_ERR_RETURN(check_running());
  AUGUR_ERR_RETURN(check_datarep(datarep));
  AUGUR_ERR_RETURN(check_type(datatype));
  AUGUR_ERR_RETURN(check_count(count));
  return check_bytes(count, *type_of(datatype));
}

Err pack_external(const char* datarep, const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                  MPI_Aint outsize, MPI_Aint* position) {
  AUGUR_ERR_RETURN(check_external(datarep, incount, datatype));
  const Type& t = *type_of(datatype);
  AUGUR_ERR_RETURN(check_buf(inbuf, incount, t));
  if (position == nullptr || *position < 0 || (outbuf == nullptr && outsize > 0)) {
    return err(MPI_ERR_ARG, "bad position or output buffer");
  }
  std::int64_t n = 0;
  AUGUR_ERR_RETURN(external32_size(incount, t, &n));
  if (*position + n > outsize) {
    return err(MPI_ERR_TRUNCATE, "packing " + std::to_string(n) + " external32 bytes at " + std::to_string(*position) +
                                     " overflows " + std::to_string(outsize));
  }
  std::vector<std::byte> native(static_cast<std::size_t>(incount * t.size));
  AUGUR_ERR_RETURN(pack(inbuf, incount, t, native.data()));
  AUGUR_ERR_RETURN(to_external32(native.data(), incount, t, static_cast<std::byte*>(outbuf) + *position));
  *position += n;
  return ok();
}

Err unpack_external(const char* datarep, const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                    int outcount, MPI_Datatype datatype) {
  AUGUR_ERR_RETURN(check_external(datarep, outcount, datatype));
  const Type& t = *type_of(datatype);
  AUGUR_ERR_RETURN(check_buf(outbuf, outcount, t));
  if (position == nullptr || *position < 0 || (inbuf == nullptr && insize > 0)) {
    return err(MPI_ERR_ARG, "bad position or input buffer");
  }
  std::int64_t n = 0;
  AUGUR_ERR_RETURN(external32_size(outcount, t, &n));
  if (*position + n > insize) {
    return err(MPI_ERR_TRUNCATE, "unpacking " + std::to_string(n) + " external32 bytes at " + std::to_string(*position) +
                                     " passes the end of the " + std::to_string(insize) + "-byte buffer");
  }
  std::vector<std::byte> native(static_cast<std::size_t>(outcount * t.size));
  AUGUR_ERR_RETURN(from_external32(static_cast<const std::byte*>(inbuf) + *position, outcount, t, native.data()));
  AUGUR_ERR_RETURN(unpack(native.data(), native.size(), outbuf, outcount, t));
  *position += n;
  return ok();
}

}  // namespace

AUGUR_MPI_FN(int, Pack_external,
             (const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, MPI_Aint outsize,
              MPI_Aint* position),
             (datarep, inbuf, incount, datatype, outbuf, outsize, position)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Pack_external",
                  pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Unpack_external,
             (const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf, int outcount,
              MPI_Datatype datatype),
             (datarep, inbuf, insize, position, outbuf, outcount, datatype)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Unpack_external",
                  unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size),
             (datarep, incount, datatype, size)) {
  const char* fn = "MPI_Pack_external_size";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_external(datarep, incount, datatype));
  if (size == nullptr) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null size"));
  std::int64_t n = 0;
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, external32_size(incount, *type_of(datatype), &n));
  *size = n;
  return MPI_SUCCESS;
}
