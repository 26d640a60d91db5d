// augur-perf-mpi-rma: one-sided communication through MPI against the raw verbs operations it
// stands for, on the same device, between the same two processes and buffers, in one run:
// - latency: MPI_Put / MPI_Get, each completed by MPI_Win_flush in a passive-target epoch
//   (osu_put_latency / osu_get_latency with lock_all), against an RC RDMA WRITE / READ and its
//   completion (ib_write_lat / ib_read_lat); issue 21's goal: <= 1.1 at 8 bytes;
// - atomics: MPI_Fetch_and_op, MPI_Compare_and_swap and MPI_Accumulate on one 8-byte word (+
//   flush) against the verbs fetch-and-add / compare-and-swap;
// - bandwidth: windows of --window puts / gets then one flush (osu_put_bw) against as many
//   WRITEs / READs then their completions (ib_write_bw).
// Rounds alternate which side goes first so that noise hits both alike; rows give medians and
// MPI/raw ratios. Rank 0 is the origin; rank 1 only waits at barriers (no target CPU is
// involved). Run it with augurrun -n 2. Usage: augur-perf-mpi-rma [--iters N] [--rounds R]
// [--sizes a,b,c] [--warmup W] [--window K]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "mpi_bench.h"
#include "../host/stopwatch.h"

namespace {

using namespace augur;
using perf::Stopwatch;

struct Options {
  int iters = 200;
  int rounds = 5;
  int warmup = 50;
  int window = 64;
  std::vector<std::size_t> sizes = {8, 64, 4096, 65536};
};

struct Remote {
  std::uint64_t addr;
  std::uint32_t rkey;
};

// `iters` times: `window` raw operations of `n` bytes (RDMA WRITE, READ, or an 8-byte atomic on
// the peer's first word) posted back to back, then their completions; one sample per window.
Status raw_ops(perf::Raw& r, const Remote& peer, nic::SendOp op, std::size_t n, int window, int iters,
               const Stopwatch& clock, std::vector<double>& us) {
  const nic::Sge sge{reinterpret_cast<std::uintptr_t>(r.buf.data()), static_cast<std::uint32_t>(n), r.mr.lkey()};
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t t0 = Stopwatch::now();
    for (int k = 0; k < window; ++k) {
      AUGUR_RETURN_IF_ERROR(r.ep.qp().post_send({.wr_id = 3,
                                                 .op = op,
                                                 .sges = {&sge, 1},
                                                 .remote_addr = peer.addr,
                                                 .rkey = peer.rkey,
                                                 .compare_add = 1,
                                                 .inline_data = op == nic::SendOp::kRdmaWrite && n <= perf::kRawInline}));
    }
    for (int k = 0; k < window; ++k) {
      AUGUR_ASSIGN_OR_RETURN(nic::Completion c, r.ep.wait_completion(perf::kRawTimeoutMs));
      AUGUR_RETURN_IF_ERROR(c.status());
    }
    us.push_back(clock.us(Stopwatch::now() - t0));
  }
  return Status::Ok();
}

enum class MpiOp { kPut, kGet, kFetchAndOp, kCompareAndSwap, kAccumulate };

// The same through MPI: `window` calls, then MPI_Win_flush; one sample per window. The atomics
// act on the target's first 8 bytes: MPI_Fetch_and_op and MPI_Accumulate add 1 (MPI_UINT64_T,
// MPI_SUM), MPI_Compare_and_swap swaps on equality.
int mpi_ops(MpiOp op, MPI_Win win, std::vector<std::byte>& buf, std::size_t n, int window, int iters,
            const Stopwatch& clock, std::vector<double>& us) {
  const int count = static_cast<int>(n);
  std::uint64_t one = 1, cmp = 0, old = 0;
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t t0 = Stopwatch::now();
    for (int k = 0; k < window; ++k) {
      int rc = MPI_SUCCESS;
      switch (op) {
        case MpiOp::kPut: rc = MPI_Put(buf.data(), count, MPI_CHAR, 1, 0, count, MPI_CHAR, win); break;
        case MpiOp::kGet: rc = MPI_Get(buf.data(), count, MPI_CHAR, 1, 0, count, MPI_CHAR, win); break;
        case MpiOp::kFetchAndOp: rc = MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, 1, 0, MPI_SUM, win); break;
        case MpiOp::kCompareAndSwap: rc = MPI_Compare_and_swap(&one, &cmp, &old, MPI_UINT64_T, 1, 0, win); break;
        case MpiOp::kAccumulate: rc = MPI_Accumulate(&one, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, MPI_SUM, win); break;
      }
      if (rc != MPI_SUCCESS) return 1;
    }
    if (MPI_Win_flush(1, win) != MPI_SUCCESS) return 1;
    us.push_back(clock.us(Stopwatch::now() - t0));
  }
  return MPI_SUCCESS;
}

// One comparison: raw and MPI samples of the same work, their rounds interleaved.
struct Pair {
  nic::SendOp raw;
  MpiOp mpi;
  std::size_t n;
  int window;
  std::vector<double> raw_us, mpi_us;
};

// Runs the pairs for `rounds` timed rounds after an untimed one, raw first in even rounds and
// MPI first in odd ones (neither always follows the other); the target waits at each round's
// allreduce. 0, or 1 after a failure (on every rank).
int measure(const Options& opt, bool origin, perf::Raw& raw, const Remote& peer, MPI_Win win, std::vector<Pair>& pairs,
            const Stopwatch& clock) {
  int rc = 0;
  std::vector<double> untimed;
  for (int round = -1; round < opt.rounds && rc == 0; ++round) {  // round -1: untimed
    const bool timed = round >= 0;
    const int iters = timed ? opt.iters : opt.warmup;
    for (Pair& p : pairs) {
      if (!origin || iters == 0 || rc != 0) break;
      const int it = std::max(1, iters / p.window);
      auto raw_part = [&] {
        Status st = raw_ops(raw, peer, p.raw, p.n, p.window, it, clock, timed ? p.raw_us : untimed);
        if (!st.ok()) std::fprintf(stderr, "augur-perf-mpi-rma: raw verbs: %s\n", st.to_string().c_str());
        return st.ok() ? 0 : 1;
      };
      auto mpi_part = [&] {
        const bool bad = mpi_ops(p.mpi, win, raw.buf, p.n, p.window, it, clock, timed ? p.mpi_us : untimed) != MPI_SUCCESS;
        if (bad) std::fprintf(stderr, "augur-perf-mpi-rma: an MPI call failed\n");
        return bad ? 1 : 0;
      };
      rc = (round & 1) == 0 ? (raw_part() != 0 ? 1 : mpi_part()) : (mpi_part() != 0 ? 1 : raw_part());
    }
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  return rc;
}

int run(const Options& opt, int rank) {
  const bool origin = rank == 0;
  std::size_t max = 8;  // the atomics' word at least
  for (std::size_t n : opt.sizes) max = std::max(max, n);
  Result<perf::Raw> raw = perf::raw_over_mpi(max, rank);
  if (!raw.ok()) {
    std::fprintf(stderr, "augur-perf-mpi-rma: raw verbs: %s\n", raw.status().to_string().c_str());
    return 1;
  }
  // Both move the same bytes: the origin's buffer is the raw one (registered again for the MPI
  // side by its registration cache), the target is the window's memory, registered a second time
  // for the raw QP; its address and key are swapped.
  void* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  if (MPI_Win_allocate(static_cast<MPI_Aint>(max), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) != MPI_SUCCESS) {
    std::fprintf(stderr, "augur-perf-mpi-rma: MPI_Win_allocate failed\n");
    return 1;
  }
  Result<nic::MemoryRegion> mr = raw->ep.register_memory(base, max, nic::kLocalWrite | nic::kRemoteWrite | nic::kRemoteRead | nic::kRemoteAtomic);
  if (!mr.ok()) {
    std::fprintf(stderr, "augur-perf-mpi-rma: raw verbs: %s\n", mr.status().to_string().c_str());
    return 1;
  }
  std::optional<nic::MemoryRegion> window_mr(std::move(*mr));  // deregistered before the window goes
  const Remote mine{reinterpret_cast<std::uintptr_t>(base), window_mr->rkey()};
  Remote peer{};
  MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, 1 - rank, 8, &peer, sizeof peer, MPI_BYTE, 1 - rank, 8, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);

  MPI_Win_lock_all(0, win);
  const Stopwatch clock;
  int rc = 0;
  auto us = [](const std::vector<double>& v) { return perf::median(v); };
  // 1. Latency: one operation and its completion.
  if (origin) {
    std::printf("# latency: one operation and its completion, median over %d rounds x %d iterations (us); ratios to raw verbs\n",
                opt.rounds, opt.iters);
    std::printf("# raw: RC RDMA WRITE (inline up to %u bytes) / READ, busy polling (ib_write_lat, ib_read_lat);\n",
                perf::kRawInline);
    std::printf("# MPI: MPI_Put / MPI_Get + MPI_Win_flush inside MPI_Win_lock_all\n");
    std::printf("%8s %10s %10s %8s %10s %10s %8s\n", "#bytes", "raw_write", "mpi_put", "put/raw", "raw_read", "mpi_get",
                "get/raw");
  }
  for (std::size_t n : opt.sizes) {
    std::vector<Pair> pairs = {{nic::SendOp::kRdmaWrite, MpiOp::kPut, n, 1, {}, {}},
                               {nic::SendOp::kRdmaRead, MpiOp::kGet, n, 1, {}, {}}};
    if ((rc = measure(opt, origin, *raw, peer, win, pairs, clock)) != 0) break;
    if (origin) {
      const double w = us(pairs[0].raw_us), p = us(pairs[0].mpi_us), r = us(pairs[1].raw_us), g = us(pairs[1].mpi_us);
      std::printf("%8zu %10.2f %10.2f %8.2f %10.2f %10.2f %8.2f\n", n, w, p, p / w, r, g, g / r);
      std::fflush(stdout);
    }
  }
  // 2. Atomics on one 8-byte word, each against the verbs atomic it is (or, for MPI_Accumulate,
  //    does the work of): latency as above.
  if (rc == 0) {
    std::vector<Pair> pairs = {{nic::SendOp::kFetchAdd, MpiOp::kFetchAndOp, 8, 1, {}, {}},
                               {nic::SendOp::kCompareSwap, MpiOp::kCompareAndSwap, 8, 1, {}, {}},
                               {nic::SendOp::kFetchAdd, MpiOp::kAccumulate, 8, 1, {}, {}}};
    rc = measure(opt, origin, *raw, peer, win, pairs, clock);
    if (rc == 0 && origin) {
      std::printf("# atomics on one 8-byte word (MPI_UINT64_T, MPI_SUM of 1), + MPI_Win_flush; raw: the verbs atomic (us)\n");
      std::printf("%-18s %10s %10s %8s\n", "#operation", "raw", "mpi", "mpi/raw");
      const char* names[] = {"fetch_and_op", "compare_and_swap", "accumulate"};
      for (std::size_t k = 0; k < pairs.size(); ++k) {
        const double r = us(pairs[k].raw_us), m = us(pairs[k].mpi_us);
        std::printf("%-18s %10.2f %10.2f %8.2f\n", names[k], r, m, m / r);
      }
      std::fflush(stdout);
    }
  }
  // 3. Bandwidth: windows of operations, completed together (osu_put_bw, ib_write_bw).
  if (rc == 0 && opt.window > 1) {
    if (origin) {
      std::printf("# bandwidth: windows of %d operations then their completions (MPI_Win_flush), median MB/s\n", opt.window);
      std::printf("%8s %10s %10s %8s %10s %10s %8s\n", "#bytes", "raw_write", "mpi_put", "put/raw", "raw_read", "mpi_get",
                  "get/raw");
    }
    for (std::size_t n : opt.sizes) {
      std::vector<Pair> pairs = {{nic::SendOp::kRdmaWrite, MpiOp::kPut, n, opt.window, {}, {}},
                                 {nic::SendOp::kRdmaRead, MpiOp::kGet, n, opt.window, {}, {}}};
      if ((rc = measure(opt, origin, *raw, peer, win, pairs, clock)) != 0) break;
      if (origin) {
        const double bytes = static_cast<double>(n) * opt.window;  // per sample; MB/s = bytes / us
        const double w = bytes / us(pairs[0].raw_us), p = bytes / us(pairs[0].mpi_us);
        const double r = bytes / us(pairs[1].raw_us), g = bytes / us(pairs[1].mpi_us);
        std::printf("%8zu %10.2f %10.2f %8.2f %10.2f %10.2f %8.2f\n", n, w, p, p / w, r, g, g / r);
        std::fflush(stdout);
      }
    }
  }
  MPI_Win_unlock_all(win);
  window_mr.reset();
  MPI_Barrier(MPI_COMM_WORLD);  // no raw access is left to a window about to go
  MPI_Win_free(&win);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  perf::mpi_start(argc, argv, rank, size);
  Options opt;
  bool bad = size != 2;
  const perf::CommonOptions common{&opt.iters, &opt.rounds, &opt.warmup, &opt.sizes};
  for (int i = 1; i < argc && !bad; ++i) {
    if (std::string(argv[i]) == "--window" && i + 1 < argc) {
      opt.window = std::atoi(argv[++i]);
    } else {
      bad = !perf::common_option(argc, argv, i, common, bad) || bad;
    }
  }
  bad = bad || opt.iters < 1 || opt.rounds < 1 || opt.warmup < 0 || opt.window < 1 || opt.window > 64;
  if (bad) {
    return perf::mpi_usage(rank, "usage: augurrun -n 2 augur-perf-mpi-rma [--iters N] [--rounds R] [--sizes a,b,c] [--warmup W] [--window K]\n"
                                 "(2 ranks; --iters, --rounds >= 1, --warmup >= 0; sizes in [1, 64 MiB]; --window in [1, 64],\n"
                                 " 1: no bandwidth table)\n");
  }
  const int rc = run(opt, rank);
  MPI_Finalize();
  return rc;
}
