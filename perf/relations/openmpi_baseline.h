// The Open MPI baseline, kept in its own translation unit so mpi.h stays out of the benchmark.
#pragma once

#include <cstdint>
#include <memory>

namespace augur::bench {

// A two-level strided layout of doubles, outer loop first: element (o, i) is at
// o * outer_stride + i * inner_stride (in doubles).
struct Strided2 {
  std::uint64_t outer_n;
  std::uint64_t outer_stride;
  std::uint64_t inner_n;
  std::uint64_t inner_stride;
};

class MpiPacker {
 public:
  virtual ~MpiPacker() = default;
  // MPI_Pack of one element of the derived datatype for `layout` from `src` into `out`.
  virtual void Pack(const double* src, void* out, int out_bytes) = 0;
  virtual void Unpack(const void* in, int in_bytes, double* dst) = 0;
};

// Calls MPI_Init once (as a singleton, no mpirun). nullptr when built without MPI.
bool MpiAvailable();
std::unique_ptr<MpiPacker> MakeMpiPacker(const Strided2& layout);
void MpiFinalize();

}  // namespace augur::bench
