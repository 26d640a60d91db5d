// augur-perf-mpi-lat: ping-pong latency through the MPI interface (blocking MPI_Send/MPI_Recv, as
// osu_latency) against a raw-verbs ping-pong (perftest's ib_send_lat pattern) on the same device,
// between the same two processes, in one run. Rounds alternate raw and MPI so that machine noise
// hits both alike; each row gives medians of half round trips (us) and the MPI/raw ratio, the
// figure issue 19 asks to bring to 1.15 or less. Run it with augurrun -n 2; what the MPI layer
// adds over the engine shows beside augur-perf-lat's engine/raw ratio (scripts/mpi-lat runs both).
// Usage: augur-perf-mpi-lat [--iters N] [--rounds R] [--sizes a,b,c] [--warmup W] [--isend]
// (--isend: also a column with MPI_Isend/MPI_Irecv/MPI_Wait, the nonblocking calls of the same
// ping-pong)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  int warmup = 100;
  bool isend = false;
  std::vector<std::size_t> sizes = {1, 8, 64, 512, 4096, 8192, 65536};
};

// One ping-pong variant through MPI: blocking calls, or the nonblocking ones waited at once.
int mpi_round(bool initiator, bool nonblocking, std::size_t n, int iters, std::vector<char>& tx, std::vector<char>& rx,
              const Stopwatch& clock, std::vector<double>& us) {
  const int peer = initiator ? 1 : 0;
  const int count = static_cast<int>(n);
  auto send = [&] {
    if (!nonblocking) return MPI_Send(tx.data(), count, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
    MPI_Request r;
    const int rc = MPI_Isend(tx.data(), count, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&r, MPI_STATUS_IGNORE);
  };
  auto recv = [&] {
    if (!nonblocking) return MPI_Recv(rx.data(), count, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request r;
    const int rc = MPI_Irecv(rx.data(), count, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&r, MPI_STATUS_IGNORE);
  };
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t t0 = Stopwatch::now();
    const int rc = initiator ? (send() != MPI_SUCCESS ? 1 : recv()) : (recv() != MPI_SUCCESS ? 1 : send());
    if (rc != MPI_SUCCESS) return rc;
    us.push_back(clock.us(Stopwatch::now() - t0) / 2);
  }
  return MPI_SUCCESS;
}

int run(const Options& opt, int rank) {
  const bool initiator = rank == 0;
  const std::size_t max = *std::max_element(opt.sizes.begin(), opt.sizes.end());
  Result<perf::Raw> raw = perf::raw_over_mpi(max, rank);
  if (!raw.ok()) {
    std::fprintf(stderr, "augur-perf-mpi-lat: raw verbs: %s\n", raw.status().to_string().c_str());
    return 1;
  }
  std::vector<char> tx(max, 1), rx(max);
  const Stopwatch clock;
  const int variants = opt.isend ? 2 : 1;
  if (initiator) {
    std::printf("# half round trip, median over %d rounds x %d iterations after %d untimed (us); ratios to raw verbs\n",
                opt.rounds, opt.iters, opt.warmup);
    std::printf("# raw verbs: RC SEND/RECV, inline up to %u bytes, busy polling (ib_send_lat); MPI: %s\n",
                perf::kRawInline, opt.isend ? "MPI_Send/MPI_Recv, and MPI_Isend/MPI_Irecv/MPI_Wait" : "MPI_Send/MPI_Recv");
    std::printf("# timestamps: %s\n", Stopwatch::kTsc ? "TSC (as perftest)" : "steady_clock");
    std::printf("%8s %10s %10s%s %8s%s\n", "#bytes", "raw_verbs", "mpi", opt.isend ? "   mpi_nb" : "", "mpi/raw",
                opt.isend ? "   nb/raw" : "");
  }
  for (std::size_t n : opt.sizes) {
    std::vector<double> raw_us, untimed;
    std::vector<std::vector<double>> us(static_cast<std::size_t>(variants));
    const int warm = n > 65536 ? std::max(opt.warmup / 10, opt.warmup > 0 ? 1 : 0) : opt.warmup;
    for (int round = -1; round < opt.rounds; ++round) {  // round -1: untimed
      const bool timed = round >= 0;
      const int iters = timed ? opt.iters : warm;
      if (iters == 0) continue;
      MPI_Barrier(MPI_COMM_WORLD);
      if (Status st = perf::raw_round(*raw, initiator, n, iters, clock, timed ? raw_us : untimed); !st.ok()) {
        std::fprintf(stderr, "augur-perf-mpi-lat: raw verbs: %s\n", st.to_string().c_str());
        return 1;
      }
      for (int v = 0; v < variants; ++v) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (mpi_round(initiator, v == 1, n, iters, tx, rx, clock, timed ? us[static_cast<std::size_t>(v)] : untimed) !=
            MPI_SUCCESS) {
          std::fprintf(stderr, "augur-perf-mpi-lat: an MPI call failed\n");
          return 1;
        }
      }
    }
    if (initiator) {
      const double r = perf::median(raw_us);
      std::printf("%8zu %10.2f", n, r);
      for (const auto& u : us) std::printf(" %10.2f", perf::median(u));
      for (const auto& u : us) std::printf(" %8.2f", perf::median(u) / r);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  perf::mpi_start(argc, argv, rank, size);
  Options opt;
  bool bad = size != 2;
  const perf::CommonOptions common{&opt.iters, &opt.rounds, &opt.warmup, &opt.sizes};
  for (int i = 1; i < argc && !bad; ++i) {
    if (perf::common_option(argc, argv, i, common, bad)) continue;
    if (std::string(argv[i]) == "--isend") {
      opt.isend = true;
    } else {
      bad = true;
    }
  }
  bad = bad || opt.iters < 1 || opt.rounds < 1 || opt.warmup < 0;
  if (bad) {
    return perf::mpi_usage(rank, "usage: augurrun -n 2 augur-perf-mpi-lat [--iters N] [--rounds R] [--sizes a,b,c] [--warmup W] [--isend]\n"
                                 "(2 ranks; --iters, --rounds >= 1, --warmup >= 0; sizes in [1, 64 MiB])\n");
  }
  const int rc = run(opt, rank);
  MPI_Finalize();
  return rc;
}
