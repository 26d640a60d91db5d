// augur-perf-lat: ping-pong latency of augur's engine against a raw-verbs ping-pong on the same
// device, between two processes, in one run. The raw side is what perftest's ib_send_lat does
// (RC SEND/RECV, inline up to kInline bytes, busy polling); the engine runs in each steering
// mode. All variants are interleaved round by round, so machine noise hits them alike; each
// row gives medians of half round trips (us) and ratios to raw verbs — under emulated RoCE only
// the ratios mean anything. The ping-pong is osu_latency's: send then receive on one side,
// receive then send on the other, so a receive is posted only after its own send.
// Usage: augur-perf-lat [--iters N] [--rounds R] [--sizes a,b,c] [--modes off,posted,predicted] [--stats] [--warmup W]
// (--stats: each rank's counters per mode on stderr at the end; --warmup: untimed iterations per
// variant and size first, default 100)
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "raw_pingpong.h"
#include "stopwatch.h"
#include "two_ranks.h"

namespace {

using namespace augur;
using perf::Stopwatch;
constexpr int kTimeoutMs = 60'000;
using perf::Raw;
using perf::raw_round;

struct Options {
  int iters = 200;
  int rounds = 5;
  std::vector<std::size_t> sizes = {1, 8, 64, 512, 4096, 8192, 65536, 1 << 20};
  std::vector<host::Steering> modes = {std::begin(perf::kModes), std::end(perf::kModes)};
  bool stats = false;  // each rank's counters per mode on stderr at the end
  int warmup = 100;    // untimed iterations per variant and size first (osu_latency's skip)
};

Status engine_round(host::Engine& e, bool initiator, std::size_t n, int iters, std::vector<std::byte>& tx,
                    std::vector<std::byte>& rx, const Stopwatch& clock, std::vector<double>& us) {
  const int peer = 1 - e.rank();
  auto send = [&]() -> Status {
    AUGUR_ASSIGN_OR_RETURN(host::RequestPtr s, e.isend(tx.data(), n, peer, 1, 0));
    return e.wait(s, kTimeoutMs);
  };
  auto recv = [&]() -> Status {
    AUGUR_ASSIGN_OR_RETURN(host::RequestPtr r, e.irecv(rx.data(), n, peer, 1, 0));
    return e.wait(r, kTimeoutMs);
  };
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t t0 = Stopwatch::now();
    if (initiator) {
      AUGUR_RETURN_IF_ERROR(send());
      AUGUR_RETURN_IF_ERROR(recv());
    } else {
      AUGUR_RETURN_IF_ERROR(recv());
      AUGUR_RETURN_IF_ERROR(send());
    }
    us.push_back(clock.us(Stopwatch::now() - t0) / 2);
  }
  return Status::Ok();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

Status run(const std::vector<std::uint16_t>& ports, int rank, int fd, const Options& opt) {
  const bool initiator = rank == 0;
  AUGUR_ASSIGN_OR_RETURN(perf::Engines eng, perf::connect_engines(ports, rank, opt.modes));
  const std::size_t max = *std::max_element(opt.sizes.begin(), opt.sizes.end());
  AUGUR_ASSIGN_OR_RETURN(Raw raw, perf::raw_setup(max, [fd](const nic::QpAddress& mine) { return nic::exchange(fd, mine, kTimeoutMs); }));
  std::vector<std::byte> tx(max, std::byte{1}), rx(max);
  const std::size_t modes = opt.modes.size();
  const Stopwatch clock;
  if (initiator) {
    const host::EngineConfig& cfg = eng.at(0).config();
    std::printf("# half round trip, median over %d rounds x %d iterations after %d untimed (us); ratios to raw verbs\n",
                opt.rounds, opt.iters, opt.warmup);
    std::printf("# engine: AUGUR_WAIT=%s AUGUR_SPIN_US=%u, assist thread %s, eager limit %u\n",
                host::wait_policy_name(eng.at(0).wait_policy()),
                cfg.spin_us, eng.at(0).assist_placement() != nullptr ? "on" : "off", cfg.eager_limit);
    std::printf("# direct%%: messages the initiator received by direct placement\n");
    std::printf("# timestamps: %s\n", Stopwatch::kTsc ? "TSC (as perftest), no clock_gettime per sample" : "steady_clock");
    // Columns: bytes, raw, one latency per mode, one ratio per mode, direct% per steering mode
    // (with all three modes: the layout scripts/main-job plots).
    std::printf("%8s %10s", "#bytes", "raw_verbs");
    for (host::Steering m : opt.modes) std::printf(" %10s", perf::mode_name(m));
    for (host::Steering m : opt.modes) std::printf(" %8s", (std::string(perf::mode_name(m)).substr(0, 4) + "/raw").c_str());
    for (host::Steering m : opt.modes) {
      if (m != host::Steering::kOff) std::printf(" %8s", m == host::Steering::kPosted ? "direct%" : "pdirect%");
    }
    std::printf("\n");
  }
  for (std::size_t n : opt.sizes) {
    std::vector<double> raw_us;
    std::vector<std::vector<double>> us(modes);
    std::vector<std::uint64_t> direct0(modes), recvd0(modes);
    // Untimed first: the start of a run is slower for everything, and raw verbs run first.
    // A tenth of it above 64 KiB, as osu_latency skips 100 iterations, 10 for large messages.
    const int warm = n > 65536 ? std::max(opt.warmup / 10, opt.warmup > 0 ? 1 : 0) : opt.warmup;
    if (warm > 0) {
      std::vector<double> untimed;
      AUGUR_RETURN_IF_ERROR(eng.boot().fence());
      AUGUR_RETURN_IF_ERROR(raw_round(raw, initiator, n, warm, clock, untimed));
      for (std::size_t m = 0; m < modes; ++m) {
        AUGUR_RETURN_IF_ERROR(eng.boot().fence());
        AUGUR_RETURN_IF_ERROR(engine_round(eng.at(m), initiator, n, warm, tx, rx, clock, untimed));
      }
    }
    for (std::size_t m = 0; m < modes; ++m) {
      const host::EngineCounters& c = eng.at(m).counters();
      direct0[m] = c.direct_msgs;
      recvd0[m] = c.direct_msgs + c.bounce_msgs + c.rndv_msgs;
    }
    for (int round = 0; round < opt.rounds; ++round) {
      AUGUR_RETURN_IF_ERROR(eng.boot().fence());  // both sides start each variant together
      AUGUR_RETURN_IF_ERROR(raw_round(raw, initiator, n, opt.iters, clock, raw_us));
      for (std::size_t m = 0; m < modes; ++m) {
        AUGUR_RETURN_IF_ERROR(eng.boot().fence());
        AUGUR_RETURN_IF_ERROR(engine_round(eng.at(m), initiator, n, opt.iters, tx, rx, clock, us[m]));
      }
    }
    if (initiator) {
      const double r = median(raw_us);
      std::vector<double> med(modes), frac(modes);
      for (std::size_t m = 0; m < modes; ++m) {
        med[m] = median(us[m]);
        const host::EngineCounters& c = eng.at(m).counters();
        const double got = static_cast<double>(c.direct_msgs + c.bounce_msgs + c.rndv_msgs - recvd0[m]);
        frac[m] = got > 0 ? 100.0 * static_cast<double>(c.direct_msgs - direct0[m]) / got : 0;
      }
      std::printf("%8zu %10.2f", n, r);
      for (std::size_t m = 0; m < modes; ++m) std::printf(" %10.2f", med[m]);
      for (std::size_t m = 0; m < modes; ++m) std::printf(" %8.2f", med[m] / r);
      for (std::size_t m = 0; m < modes; ++m) {
        if (opt.modes[m] != host::Steering::kOff) std::printf(" %8.1f", frac[m]);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  if (opt.stats) {
    for (std::size_t m = 0; m < modes; ++m) {
      std::fprintf(stderr, "%-9s %s\n", perf::mode_name(opt.modes[m]), eng.at(m).stats_line().c_str());
    }
  }
  return eng.boot().fence();
}

}  // namespace

int main(int argc, char** argv) {
  namespace perf = augur::perf;
  Options opt;
  const std::vector<perf::Flag> flags = {
      perf::int_flag("--iters", opt.iters),
      perf::int_flag("--rounds", opt.rounds),
      perf::int_flag("--warmup", opt.warmup),
      {"--sizes", true,
       [&](const char* v) {
         opt.sizes.clear();
         std::stringstream ss(v);
         for (std::string tok; std::getline(ss, tok, ',');) opt.sizes.push_back(std::strtoull(tok.c_str(), nullptr, 10));
         return true;
       }},
      {"--stats", false, [&](const char*) { return opt.stats = true; }},
      {"--modes", true, [&](const char* v) { return !(opt.modes = perf::parse_modes(v)).empty(); }},
  };
  if (!perf::parse_flags(argc, argv, flags,
                         "[--iters N] [--rounds R] [--sizes a,b,c] [--modes off,posted,predicted] [--stats] [--warmup W]")) {
    return 2;
  }
  if (opt.iters < 1 || opt.rounds < 1 || opt.warmup < 0 || opt.sizes.empty() ||
      std::any_of(opt.sizes.begin(), opt.sizes.end(), [](std::size_t s) { return s == 0 || s > (1u << 26); })) {
    std::fprintf(stderr, "augur-perf-lat: --iters, --rounds >= 1, --warmup >= 0; sizes in [1, 64 MiB]\n");
    return 2;
  }
  return augur::perf::run_two_ranks(
      "augur-perf-lat", [&](const std::vector<std::uint16_t>& ports, int rank, int fd) { return run(ports, rank, fd, opt); },
      opt.modes.size());
}
