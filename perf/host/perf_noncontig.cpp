// augur-perf-noncontig: a strided (vector) message — `runs` blocks, each followed by a gap of the
// same size — sent ping-pong between two ranks, two ways interleaved in one run: packed (the
// sender copies the runs into a contiguous buffer and sends it; the receiver receives into a
// contiguous buffer and copies it out, as the MPI shim does over AUGUR_SGE_MAX_RUNS) and by
// gather/scatter lists (isendv/irecvv). Reports per (runs, bytes) the medians over rounds of the
// half round trip and pack/sge; only the ratios mean anything under emulated RoCE. Every
// received message is checked. Steering is the engine's default (AUGUR_STEERING), so the packed
// receive may be placed directly into its contiguous buffer.
// Usage: augur-perf-noncontig [--iters N] [--rounds R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "augur/settings.h"
#include "two_ranks.h"

namespace {

using namespace augur;
using Clock = std::chrono::steady_clock;
constexpr int kTimeoutMs = 120'000;

struct Options {
  int iters = 50;
  int rounds = 5;
};

struct Config {
  std::size_t runs;
  std::size_t bytes;
};
const std::vector<std::size_t> kRuns = {4, 16, 64, 256};
const std::vector<std::size_t> kBytes = {4096, 65536, 1u << 20};

// A vector layout over `mem`: block k at 2k*blk.
std::vector<relations::ByteRun> strided(std::vector<std::byte>& mem, const Config& c) {
  const auto blk = static_cast<std::int64_t>(c.bytes / c.runs);
  mem.assign(2 * c.bytes, std::byte{0});
  std::vector<relations::ByteRun> runs;
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(c.runs); ++k) runs.push_back({2 * k * blk, blk});
  return runs;
}

// `iters` ping-pongs (rank 0 starts); returns the mean half round trip in microseconds.
Result<double> pingpong(host::Engine& e, const Config& c, bool sge, int iters, std::uint8_t stamp) {
  const int peer = 1 - e.rank();
  std::vector<std::byte> out_mem, in_mem, tmp_out(c.bytes), tmp_in(c.bytes);
  const auto out_runs = strided(out_mem, c);
  const auto in_runs = strided(in_mem, c);
  const relations::Layout out{out_mem.data(), out_runs}, in{in_mem.data(), in_runs};
  auto send = [&]() -> Status {
    host::RequestPtr r;
    if (sge) {
      AUGUR_ASSIGN_OR_RETURN(r, e.isendv(out, peer, 1, 0));
    } else {
      relations::GatherRuns(out, tmp_out.data(), c.bytes);
      AUGUR_ASSIGN_OR_RETURN(r, e.isend(tmp_out.data(), c.bytes, peer, 1, 0));
    }
    return e.wait(r, kTimeoutMs);
  };
  auto recv = [&]() -> Status {
    host::RequestPtr r;
    if (sge) {
      AUGUR_ASSIGN_OR_RETURN(r, e.irecvv(in, peer, 1, 0));
      return e.wait(r, kTimeoutMs);
    }
    AUGUR_ASSIGN_OR_RETURN(r, e.irecv(tmp_in.data(), c.bytes, peer, 1, 0));
    AUGUR_RETURN_IF_ERROR(e.wait(r, kTimeoutMs));
    relations::ScatterRuns(tmp_in.data(), c.bytes, in);
    return Status::Ok();
  };
  // The first and last byte of every run carry the stamp: checked after the last iteration.
  for (const relations::ByteRun& r : out.runs) out.at(r)[0] = out.at(r)[r.length - 1] = static_cast<std::byte>(stamp);
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    if (e.rank() == 0) {
      AUGUR_RETURN_IF_ERROR(send());
      AUGUR_RETURN_IF_ERROR(recv());
    } else {
      AUGUR_RETURN_IF_ERROR(recv());
      AUGUR_RETURN_IF_ERROR(send());
    }
  }
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / (2.0 * iters);
  for (const relations::ByteRun& r : in.runs) {
    if (in.at(r)[0] != static_cast<std::byte>(stamp) || in.at(r)[r.length - 1] != static_cast<std::byte>(stamp)) {
      return Status(Code::kInternal, "received data is wrong");
    }
  }
  return us;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

Status run(const std::vector<std::uint16_t>& ports, int rank, const Options& opt) {
  AUGUR_ASSIGN_OR_RETURN(perf::Engines eng, perf::connect_engines(ports, rank));
  // The default steering mode's engine (predicted unless AUGUR_STEERING says otherwise).
  AUGUR_ASSIGN_OR_RETURN(host::Steering mode, setting_enum<host::Steering>("AUGUR_STEERING"));
  host::Engine& e = eng.at(static_cast<std::size_t>(mode));  // engines in kModes order, as the enum
  std::vector<Config> configs;
  for (std::size_t b : kBytes) {
    for (std::size_t r : kRuns) configs.push_back({r, b});
  }
  if (e.max_layout_runs() < kRuns.back()) return Status(Code::kInvalidArgument, "AUGUR_SGE_MAX_RUNS below 256");
  std::vector<std::vector<double>> packed(configs.size()), sge(configs.size());
  std::uint8_t stamp = 1;
  for (int round = 0; round < opt.rounds; ++round) {
    for (std::size_t i = 0; i < configs.size(); ++i) {
      // Alternate which goes first, so neither always runs on a warmer cache.
      for (int k = 0; k < 2; ++k) {
        const bool use_sge = (k == 0) == (round % 2 == 0);
        AUGUR_ASSIGN_OR_RETURN(double us, pingpong(e, configs[i], use_sge, opt.iters, ++stamp));
        (use_sge ? sge : packed)[i].push_back(us);
      }
    }
    if (rank == 0) std::fprintf(stderr, "augur-perf-noncontig: round %d of %d done\n", round + 1, opt.rounds);
  }
  if (rank == 0) {
    const host::EngineCounters c = e.counters();
    std::printf("# strided message ping-pong, 2 ranks, steering %s, eager limit %u, %d iterations x %d rounds, medians\n",
                perf::mode_name(mode), e.config().eager_limit, opt.iters, opt.rounds);
    std::printf("%8s %10s %10s %12s %12s %10s\n", "runs", "bytes", "run_bytes", "pack_us", "sge_us", "pack/sge");
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const double p = median(packed[i]), s = median(sge[i]);
      std::printf("%8zu %10zu %10zu %12.2f %12.2f %10.2f\n", configs[i].runs, configs[i].bytes,
                  configs[i].bytes / configs[i].runs, p, s, p / s);
    }
    std::printf("# rank 0: sge_sends=%llu sge_recvs=%llu\n", static_cast<unsigned long long>(c.sge_sends),
                static_cast<unsigned long long>(c.sge_recvs));
  }
  return eng.boot().fence();
}

}  // namespace

int main(int argc, char** argv) {
  namespace perf = augur::perf;
  Options opt;
  if (!perf::parse_flags(argc, argv, {perf::int_flag("--iters", opt.iters), perf::int_flag("--rounds", opt.rounds)},
                         "[--iters N] [--rounds R]")) {
    return 2;
  }
  if (opt.iters < 1 || opt.rounds < 1) {
    std::fprintf(stderr, "augur-perf-noncontig: --iters and --rounds >= 1\n");
    return 2;
  }
  setenv("AUGUR_SGE_MAX_RUNS", "256", 0);  // the widest layout measured
  return augur::perf::run_two_ranks("augur-perf-noncontig", [&](const std::vector<std::uint16_t>& ports, int rank, int) {
    return run(ports, rank, opt);
  });
}
