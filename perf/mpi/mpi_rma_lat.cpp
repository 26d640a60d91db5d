// augur-perf-mpi-rma: one-sided latency through MPI (MPI_Put / MPI_Get, each completed by
// MPI_Win_flush in a passive-target epoch, as osu_put_latency / osu_get_latency with lock_all)
// against the raw verbs operations they stand for (an RC RDMA WRITE / READ and its completion,
// perftest's ib_write_lat / ib_read_lat pattern) on the same device, between the same two
// processes, in one run. Rounds alternate raw and MPI so that noise hits both alike; each row
// gives medians of whole operations (us) and the MPI/raw ratios (issue 21's goal: <= 1.1 at 8
// bytes). Both sides move the same bytes between the same buffers. Rank 0 is the origin; rank 1 only waits at barriers (no target CPU is involved).
// Run it with augurrun -n 2. Usage: augur-perf-mpi-rma [--iters N] [--rounds R] [--sizes a,b,c]
// [--warmup W]
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
  std::vector<std::size_t> sizes = {8, 64, 4096, 65536};
};

struct Remote {
  std::uint64_t addr;
  std::uint32_t rkey;
};

// `iters` RDMA WRITEs (or READs) of `n` bytes into (from) the peer's buffer, each waited for.
Status raw_ops(perf::Raw& r, const Remote& peer, nic::SendOp op, std::size_t n, int iters, const Stopwatch& clock,
               std::vector<double>& us) {
  const nic::Sge sge{reinterpret_cast<std::uintptr_t>(r.buf.data()), static_cast<std::uint32_t>(n), r.mr.lkey()};
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t t0 = Stopwatch::now();
    AUGUR_RETURN_IF_ERROR(r.ep.qp().post_send({.wr_id = 3,
                                               .op = op,
                                               .sges = {&sge, 1},
                                               .remote_addr = peer.addr,
                                               .rkey = peer.rkey,
                                               .inline_data = op == nic::SendOp::kRdmaWrite && n <= perf::kRawInline}));
    AUGUR_ASSIGN_OR_RETURN(nic::Completion c, r.ep.wait_completion(perf::kRawTimeoutMs));
    AUGUR_RETURN_IF_ERROR(c.status());
    us.push_back(clock.us(Stopwatch::now() - t0));
  }
  return Status::Ok();
}

int mpi_ops(bool put, MPI_Win win, std::vector<std::byte>& buf, std::size_t n, int iters, const Stopwatch& clock,
            std::vector<double>& us) {
  const int count = static_cast<int>(n);
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t t0 = Stopwatch::now();
    const int rc = put ? MPI_Put(buf.data(), count, MPI_CHAR, 1, 0, count, MPI_CHAR, win)
                       : MPI_Get(buf.data(), count, MPI_CHAR, 1, 0, count, MPI_CHAR, win);
    if (rc != MPI_SUCCESS || MPI_Win_flush(1, win) != MPI_SUCCESS) return 1;
    us.push_back(clock.us(Stopwatch::now() - t0));
  }
  return MPI_SUCCESS;
}

int run(const Options& opt, int rank) {
  const bool origin = rank == 0;
  std::size_t max = 0;
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
  Result<nic::MemoryRegion> mr = raw->ep.register_memory(base, max, nic::kLocalWrite | nic::kRemoteWrite | nic::kRemoteRead);
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
  if (origin) {
    std::printf("# one operation and its completion, median over %d rounds x %d iterations (us); ratios to raw verbs\n",
                opt.rounds, opt.iters);
    std::printf("# raw: RC RDMA WRITE (inline up to %u bytes) / READ, busy polling (ib_write_lat, ib_read_lat);\n",
                perf::kRawInline);
    std::printf("# MPI: MPI_Put / MPI_Get + MPI_Win_flush inside MPI_Win_lock_all\n");
    std::printf("%8s %10s %10s %8s %10s %10s %8s\n", "#bytes", "raw_write", "mpi_put", "put/raw", "raw_read", "mpi_get",
                "get/raw");
  }
  int rc = 0;
  for (std::size_t n : opt.sizes) {
    std::vector<double> w, p, rd, g, untimed;
    for (int round = -1; round < opt.rounds && rc == 0; ++round) {  // round -1: untimed
      const bool timed = round >= 0;
      const int iters = timed ? opt.iters : opt.warmup;
      if (origin && iters > 0) {
        // Raw first in even rounds, MPI first in odd ones: neither always follows the other.
        auto raw_part = [&] {
          Status st = raw_ops(*raw, peer, nic::SendOp::kRdmaWrite, n, iters, clock, timed ? w : untimed);
          if (st.ok()) st = raw_ops(*raw, peer, nic::SendOp::kRdmaRead, n, iters, clock, timed ? rd : untimed);
          if (!st.ok()) std::fprintf(stderr, "augur-perf-mpi-rma: raw verbs: %s\n", st.to_string().c_str());
          return st.ok() ? 0 : 1;
        };
        auto mpi_part = [&] {
          const bool bad = mpi_ops(true, win, raw->buf, n, iters, clock, timed ? p : untimed) != MPI_SUCCESS ||
                           mpi_ops(false, win, raw->buf, n, iters, clock, timed ? g : untimed) != MPI_SUCCESS;
          if (bad) std::fprintf(stderr, "augur-perf-mpi-rma: an MPI call failed\n");
          return bad ? 1 : 0;
        };
        rc = (round & 1) == 0 ? (raw_part() != 0 ? 1 : mpi_part()) : (mpi_part() != 0 ? 1 : raw_part());
      }
      MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);  // the target waits here
    }
    if (rc != 0) break;
    if (origin) {
      const double mw = perf::median(w), mp = perf::median(p), mr_ = perf::median(rd), mg = perf::median(g);
      std::printf("%8zu %10.2f %10.2f %8.2f %10.2f %10.2f %8.2f\n", n, mw, mp, mp / mw, mr_, mg, mg / mr_);
      std::fflush(stdout);
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
  for (int i = 1; i < argc && !bad; ++i) bad = !perf::common_option(argc, argv, i, common, bad) || bad;
  bad = bad || opt.iters < 1 || opt.rounds < 1 || opt.warmup < 0;
  if (bad) {
    return perf::mpi_usage(rank, "usage: augurrun -n 2 augur-perf-mpi-rma [--iters N] [--rounds R] [--sizes a,b,c] [--warmup W]\n"
                                 "(2 ranks; --iters, --rounds >= 1, --warmup >= 0; sizes in [1, 64 MiB])\n");
  }
  const int rc = run(opt, rank);
  MPI_Finalize();
  return rc;
}
