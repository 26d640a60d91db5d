// What the MPI-level benchmarks that measure against raw verbs share: a raw-verbs endpoint
// connected to the other rank through MPI, and the MPI start-up and size-list parsing of main.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "../host/raw_pingpong.h"

namespace augur::perf {

// Raw verbs between ranks 0 and 1 of MPI_COMM_WORLD: the QP addresses travel by MPI_Sendrecv.
inline Result<Raw> raw_over_mpi(std::size_t max, int rank) {
  return raw_setup(max, [rank](const nic::QpAddress& mine) -> Result<nic::QpAddress> {
    std::byte out[sizeof(nic::QpAddress)], in[sizeof(nic::QpAddress)];
    nic::encode(mine, out);
    if (MPI_Sendrecv(out, sizeof out, MPI_BYTE, 1 - rank, 7, in, sizeof in, MPI_BYTE, 1 - rank, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      return Status(Code::kInternal, "MPI_Sendrecv of the raw QP address failed");
    }
    return nic::parse_qp_address(in);
  });
}

// "a,b,c" -> sizes; `ok` false if one is 0 or above 64 MiB.
inline std::vector<std::size_t> parse_sizes(const char* list, bool& ok) {
  std::vector<std::size_t> v;
  std::stringstream ss(list);
  for (std::string tok; std::getline(ss, tok, ',');) {
    v.push_back(std::strtoull(tok.c_str(), nullptr, 10));
    ok = ok && v.back() > 0 && v.back() <= (std::size_t{1} << 26);
  }
  ok = ok && !v.empty();
  return v;
}

// The middle element (the upper one of an even count); 0 for none.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// MPI_Init; rank and size of MPI_COMM_WORLD.
// AUGUR_PERF_THREAD_MULTIPLE=1: MPI_Init_thread(MPI_THREAD_MULTIPLE), to measure what the
// library's thread safety costs a program that asks for it.
inline void mpi_start(int& argc, char**& argv, int& rank, int& size) {
  const char* multiple = std::getenv("AUGUR_PERF_THREAD_MULTIPLE");
  if (multiple != nullptr && std::string(multiple) == "1") {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) std::fprintf(stderr, "MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
}

// The options the MPI benchmarks share, where each keeps them (null: not an option of it).
struct CommonOptions {
  int* iters = nullptr;
  int* rounds = nullptr;
  int* warmup = nullptr;
  std::vector<std::size_t>* sizes = nullptr;
};

// Reads one shared option at argv[i] (i moves past its value): false if argv[i] is not one of
// them; `bad` is set if its value is not valid.
inline bool common_option(int argc, char** argv, int& i, const CommonOptions& o, bool& bad) {
  const std::string a = argv[i];
  if (i + 1 >= argc) return false;
  int* n = a == "--iters" ? o.iters : a == "--rounds" ? o.rounds : a == "--warmup" ? o.warmup : nullptr;
  if (n != nullptr) {
    *n = std::atoi(argv[++i]);
    return true;
  }
  if (a == "--sizes" && o.sizes != nullptr) {
    bool ok = true;
    *o.sizes = parse_sizes(argv[++i], ok);
    bad = bad || !ok;
    return true;
  }
  return false;
}

// Rank 0 prints the usage; every rank leaves MPI; the exit status for a bad command line.
inline int mpi_usage(int rank, const char* usage) {
  if (rank == 0) std::fputs(usage, stderr);
  MPI_Finalize();
  return 2;
}

}  // namespace augur::perf
