// augur-perf-halo: a halo exchange where each rank posts its receives just before its neighbour
// sends (both sides post, then send, then wait — the pattern of a stencil code), run with
// steering off, posted and predicted in one run, interleaved round by round in an order that
// rotates each round (use a multiple of 3 rounds for balance), after untimed warm-up
// iterations. Reports, per mode, the median time per iteration over the rounds, the fraction of halos placed directly into the receive buffers, the
// bytes copied out of bounce slots per iteration, and the prediction and credit figures; ratios
// are to `off`. --compute-us puts work between posting and sending (a wider window for the
// credit to reach the sender). Two ranks in a periodic ring: each has the other on both sides.
// Usage: augur-perf-halo [--iters N] [--rounds R] [--bytes B] [--compute-us U] [--warmup W]
// (--warmup: untimed iterations per mode before the rounds, default 500)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "two_ranks.h"

namespace {

using namespace augur;
using Clock = std::chrono::steady_clock;
constexpr int kTimeoutMs = 60'000;

struct Options {
  int iters = 500;
  int rounds = 6;  // each mode twice in each position
  std::size_t bytes = 4096;
  int compute_us = 0;
  int warmup = 500;  // untimed iterations per mode first (as osu_latency's skip)
};

void compute(int us) {
  if (us <= 0) return;
  const auto until = Clock::now() + std::chrono::microseconds(us);
  while (Clock::now() < until) {
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// One round: `iters` exchanges of a left and a right halo; returns seconds.
Result<double> halo_round(host::Engine& e, const Options& opt, std::vector<std::vector<std::byte>>& in,
                          std::vector<std::vector<std::byte>>& out, int iter0) {
  const int peer = 1 - e.rank();
  const auto t0 = Clock::now();
  for (int i = 0; i < opt.iters; ++i) {
    host::RequestPtr reqs[4];
    for (int side = 0; side < 2; ++side) {
      // My left halo comes from my left neighbour's right edge: tag by the sender's side.
      AUGUR_ASSIGN_OR_RETURN(reqs[side], e.irecv(in[static_cast<std::size_t>(side)].data(), opt.bytes, peer, 1 - side, 0));
    }
    compute(opt.compute_us);
    for (int side = 0; side < 2; ++side) {
      auto& o = out[static_cast<std::size_t>(side)];
      o[0] = static_cast<std::byte>(iter0 + i);  // changes every iteration: checked on arrival
      AUGUR_ASSIGN_OR_RETURN(reqs[2 + side], e.isend(o.data(), opt.bytes, peer, side, 0));
    }
    for (auto& r : reqs) AUGUR_RETURN_IF_ERROR(e.wait(r, kTimeoutMs));
    for (int side = 0; side < 2; ++side) {
      if (in[static_cast<std::size_t>(side)][0] != static_cast<std::byte>(iter0 + i)) {
        return Status(Code::kInternal, "halo of iteration " + std::to_string(iter0 + i) + " is wrong");
      }
    }
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Status run(const std::vector<std::uint16_t>& ports, int rank, const Options& opt) {
  AUGUR_ASSIGN_OR_RETURN(perf::Engines eng, perf::connect_engines(ports, rank));
  const std::size_t modes = std::size(perf::kModes);
  std::vector<std::vector<std::byte>> in(2, std::vector<std::byte>(opt.bytes)), out(2, std::vector<std::byte>(opt.bytes));
  std::vector<std::vector<double>> us(modes);  // per round: microseconds per iteration
  std::vector<int> iter0(modes, 0);
  // Untimed first, and medians over rounds: the first few hundred milliseconds of a run are
  // slower for every mode (seen: 100-170 us/iter against 75-90 later, at 512 bytes), so the
  // mode that ran first read up to 20% slower than the others on the very same path. Counters
  // are reported from after the warm-up.
  std::vector<host::EngineCounters> base(modes);
  Options warm = opt;
  warm.iters = opt.warmup;
  for (std::size_t m = 0; m < modes && warm.iters > 0; ++m) {
    AUGUR_RETURN_IF_ERROR(eng.boot().fence());
    AUGUR_RETURN_IF_ERROR(halo_round(eng.at(m), warm, in, out, iter0[m]).status());
    iter0[m] += warm.iters;
  }
  for (std::size_t m = 0; m < modes; ++m) base[m] = eng.at(m).counters();
  for (int round = 0; round < opt.rounds; ++round) {
    // The order rotates each round, so that no mode always runs first after the fence.
    for (std::size_t k = 0; k < modes; ++k) {
      const std::size_t m = (k + static_cast<std::size_t>(round)) % modes;
      AUGUR_RETURN_IF_ERROR(eng.boot().fence());
      AUGUR_ASSIGN_OR_RETURN(double s, halo_round(eng.at(m), opt, in, out, iter0[m]));
      us[m].push_back(1e6 * s / opt.iters);
      iter0[m] += opt.iters;
    }
    if (rank == 0) std::fprintf(stderr, "augur-perf-halo: round %d of %d done\n", round + 1, opt.rounds);
  }
  AUGUR_RETURN_IF_ERROR(eng.boot().fence());
  if (rank == 0) {
    const double n = static_cast<double>(opt.iters) * opt.rounds;
    std::printf("# halo exchange, 2 ranks, 2 halos of %zu bytes each way per iteration, %d iterations, compute %d us\n",
                opt.bytes, opt.iters * opt.rounds, opt.compute_us);
    std::printf("# us/iter: median over %d rounds of %d iterations, after %d untimed per mode; vs_off: ratio of medians\n",
                opt.rounds, opt.iters, opt.warmup);
    std::printf("%-10s %10s %8s %8s %14s %10s %10s %10s %10s\n", "mode", "us/iter", "vs_off", "direct%",
                "copied_B/iter", "pred_hit%", "cred_used", "cred_void", "cred_iss");
    for (std::size_t m = 0; m < modes; ++m) {
      host::EngineCounters c = eng.at(m).counters();
      const host::EngineCounters& b = base[m];
      c.direct_msgs -= b.direct_msgs;
      c.bounce_msgs -= b.bounce_msgs;
      c.rndv_msgs -= b.rndv_msgs;
      c.bytes_copied -= b.bytes_copied;
      c.pred_hits -= b.pred_hits;
      c.pred_misses -= b.pred_misses;
      c.pred_abstains -= b.pred_abstains;
      c.credits_used -= b.credits_used;
      c.credits_revoked -= b.credits_revoked;
      c.credits_issued -= b.credits_issued;
      const double got = static_cast<double>(c.direct_msgs + c.bounce_msgs + c.rndv_msgs);
      const double preds = static_cast<double>(c.pred_hits + c.pred_misses + c.pred_abstains);
      std::printf("%-10s %10.2f %8.2f %8.1f %14.1f %10.1f %10llu %10llu %10llu\n", perf::mode_name(perf::kModes[m]),
                  median(us[m]), median(us[m]) / median(us[0]), got > 0 ? 100.0 * static_cast<double>(c.direct_msgs) / got : 0.0,
                  static_cast<double>(c.bytes_copied) / n, preds > 0 ? 100.0 * static_cast<double>(c.pred_hits) / preds : 0.0,
                  static_cast<unsigned long long>(c.credits_used), static_cast<unsigned long long>(c.credits_revoked),
                  static_cast<unsigned long long>(c.credits_issued));
    }
  }
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  namespace perf = augur::perf;
  Options opt;
  if (!perf::parse_flags(argc, argv,
                         {perf::int_flag("--iters", opt.iters), perf::int_flag("--rounds", opt.rounds),
                          perf::size_flag("--bytes", opt.bytes), perf::int_flag("--compute-us", opt.compute_us),
                          perf::int_flag("--warmup", opt.warmup)},
                         "[--iters N] [--rounds R] [--bytes B] [--compute-us U] [--warmup W]")) {
    return 2;
  }
  if (opt.iters < 1 || opt.rounds < 1 || opt.bytes < 1 || opt.bytes > (1u << 24) || opt.compute_us < 0 || opt.warmup < 0) {
    std::fprintf(stderr, "augur-perf-halo: --iters, --rounds, --bytes >= 1 (bytes <= 16 MiB), --compute-us, --warmup >= 0\n");
    return 2;
  }
  return augur::perf::run_two_ranks("augur-perf-halo", [&](const std::vector<std::uint16_t>& ports, int rank, int) {
    return run(ports, rank, opt);
  });
}
