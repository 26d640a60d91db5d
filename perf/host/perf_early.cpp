// augur-perf-early: the early-arrival experiment (docs/early.md). The sender runs ahead: each
// iteration it sends one message and a "go"; the receiver, on the go (the message is here), posts
// its receive and times the post to the completion; then it acks, and the sender goes on. Three
// engines in one run, interleaved round by round in a rotating order: `off` (AUGUR_EARLY=off: a
// large early message waits as an RTS and the post pays a READ round trip and a FIN), `remap`
// (landing zones, whole pages remapped: AUGUR_REMAP_MIN=4096) and `copy` (landing zones,
// AUGUR_REMAP_MIN=0). All three predict (AUGUR_STEERING=predicted). Reported per size and mode:
// the median over rounds of the mean post-to-completion time, the iteration time, the share of
// messages that landed early and that were remapped, and ratios to `off`.
// --micro first measures, on rank 0 alone, what a delivery costs: memcpy of the message against
// the remap of a zone's whole pages (with the edges' copies), and the zone's making (mmap and
// registration) and unmaking, which a remap adds (a copied zone is reused).
// Usage: augur-perf-early [--sizes 16384,65536,...] [--iters N] [--rounds R] [--warmup W] [--micro]
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "augur/host/landing.h"
#include "stopwatch.h"
#include "two_ranks.h"

namespace {

using namespace augur;
constexpr int kTimeoutMs = 60'000;
constexpr std::uint32_t kGoCtx = 99;
constexpr const char* kNames[] = {"off", "remap", "copy"};

struct Options {
  std::vector<std::size_t> sizes = {16384, 65536, 262144, 1048576, 4194304};
  int iters = 100;
  int rounds = 6;
  int warmup = 20;
  bool micro = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

Status signal(host::Engine& e, int to) {
  AUGUR_ASSIGN_OR_RETURN(host::RequestPtr r, e.isend(nullptr, 0, to, 0, kGoCtx));
  return e.wait(r, kTimeoutMs);
}
Status await_signal(host::Engine& e, int from) {
  AUGUR_ASSIGN_OR_RETURN(host::RequestPtr r, e.irecv(nullptr, 0, from, 0, kGoCtx));
  return e.wait(r, kTimeoutMs);
}

struct Sample {
  double post_us = 0;  // mean post-to-completion
  double iter_us = 0;  // mean iteration
};

// `iters` iterations at one size; rank 0 receives late and returns its means.
Result<Sample> round_of(host::Engine& e, const perf::Stopwatch& sw, std::byte* buf, std::size_t bytes, int iters, int iter0) {
  Sample s;
  const std::uint64_t t0 = perf::Stopwatch::now();
  std::uint64_t post_ticks = 0;
  for (int i = 0; i < iters; ++i) {
    const auto mark = static_cast<std::byte>(iter0 + i);
    if (e.rank() == 1) {
      buf[0] = mark;
      buf[bytes - 1] = mark;
      AUGUR_ASSIGN_OR_RETURN(host::RequestPtr r, e.isend(buf, bytes, 0, 1, 0));
      AUGUR_RETURN_IF_ERROR(signal(e, 0));
      AUGUR_RETURN_IF_ERROR(await_signal(e, 0));
      AUGUR_RETURN_IF_ERROR(e.wait(r, kTimeoutMs));
      continue;
    }
    AUGUR_RETURN_IF_ERROR(await_signal(e, 1));  // the message is here (or its RTS)
    const std::uint64_t p0 = perf::Stopwatch::now();
    AUGUR_ASSIGN_OR_RETURN(host::RequestPtr r, e.irecv(buf, bytes, 1, 1, 0));
    AUGUR_RETURN_IF_ERROR(e.wait(r, kTimeoutMs));
    post_ticks += perf::Stopwatch::now() - p0;
    if (buf[0] != mark || buf[bytes - 1] != mark) return Status(Code::kInternal, "message of iteration " + std::to_string(iter0 + i) + " is wrong");
    AUGUR_RETURN_IF_ERROR(signal(e, 1));
  }
  s.post_us = sw.us(post_ticks) / iters;
  s.iter_us = sw.us(perf::Stopwatch::now() - t0) / iters;
  return s;
}

Status run(const std::vector<std::uint16_t>& ports, int rank, const Options& opt) {
  const perf::Stopwatch sw;
  AUGUR_ASSIGN_OR_RETURN(perf::Engines eng,
                         perf::connect_engines(ports, rank, {host::Steering::kPredicted, host::Steering::kPredicted, host::Steering::kPredicted},
                                               [](std::size_t i, host::EngineConfig& c) {
                                                 c.early = i == 0 ? host::EngineConfig::Early::kOff : host::EngineConfig::Early::kLanding;
                                                 c.remap_min = i == 1 ? 4096 : 0;
                                               }));
  constexpr std::size_t kModes = 3;
  if (rank == 0) {
    std::printf("# early arrivals, 2 ranks: the receive is posted after its message arrived; %d rounds of %d iterations per size and mode, after %d untimed\n",
                opt.rounds, opt.iters, opt.warmup);
    std::printf("# post_us: mean post-to-completion (median over rounds); iter_us: mean iteration; ratios to off\n");
    std::printf("%10s %-6s %10s %8s %10s %8s %8s %9s\n", "bytes", "mode", "post_us", "vs_off", "iter_us", "vs_off", "landed%", "remapped%");
  }
  const std::size_t page = host::LandingZone::page_size();
  for (std::size_t bytes : opt.sizes) {
    // Page-aligned, as a large application buffer from malloc usually is.
    std::byte* buf = static_cast<std::byte*>(std::aligned_alloc(page, (bytes + page - 1) / page * page));
    std::memset(buf, 0, bytes);
    std::vector<std::vector<double>> post(kModes), iter(kModes);
    std::vector<int> iter0(kModes, 0);
    std::vector<host::EngineCounters> base(kModes);
    for (std::size_t m = 0; m < kModes; ++m) {
      AUGUR_RETURN_IF_ERROR(eng.boot().fence());
      AUGUR_RETURN_IF_ERROR(round_of(eng.at(m), sw, buf, bytes, opt.warmup, iter0[m]).status());
      iter0[m] += opt.warmup;
      base[m] = eng.at(m).counters();
    }
    for (int round = 0; round < opt.rounds; ++round) {
      for (std::size_t k = 0; k < kModes; ++k) {
        const std::size_t m = (k + static_cast<std::size_t>(round)) % kModes;
        AUGUR_RETURN_IF_ERROR(eng.boot().fence());
        AUGUR_ASSIGN_OR_RETURN(Sample s, round_of(eng.at(m), sw, buf, bytes, opt.iters, iter0[m]));
        iter0[m] += opt.iters;
        post[m].push_back(s.post_us);
        iter[m].push_back(s.iter_us);
      }
    }
    AUGUR_RETURN_IF_ERROR(eng.boot().fence());
    if (rank == 0) {
      for (std::size_t m = 0; m < kModes; ++m) {
        const host::EngineCounters c = eng.at(m).counters();
        const double n = static_cast<double>(opt.iters) * opt.rounds;
        std::printf("%10zu %-6s %10.1f %8.2f %10.1f %8.2f %8.1f %9.1f\n", bytes, kNames[m], median(post[m]),
                    median(post[m]) / median(post[0]), median(iter[m]), median(iter[m]) / median(iter[0]),
                    100.0 * static_cast<double>(c.landing_early - base[m].landing_early) / n,
                    100.0 * static_cast<double>(c.landing_remapped - base[m].landing_remapped) / n);
      }
      std::fflush(stdout);
      std::fprintf(stderr, "augur-perf-early: %zu bytes done\n", bytes);
    }
    std::free(buf);
  }
  return Status::Ok();
}

// What one delivery costs on this machine, without the network: copy against remap, and the
// zone's making and unmaking that a remap adds.
Status micro(const Options& opt) {
  const perf::Stopwatch sw;
  const char* dev = std::getenv("AUGUR_DEVICE");
  AUGUR_ASSIGN_OR_RETURN(nic::Context ctx, nic::Context::open(dev != nullptr ? dev : ""));
  AUGUR_ASSIGN_OR_RETURN(nic::ProtectionDomain pd, nic::ProtectionDomain::create(ctx));
  const std::size_t page = host::LandingZone::page_size();
  constexpr int kReps = 30;
  std::printf("# one delivery on %s, median of %d: memcpy of the message, remap of its whole pages (edges copied),\n"
              "# and the zone's mmap+registration and deregistration+munmap that each remap adds\n",
              ctx.name().c_str(), kReps);
  std::printf("%10s %10s %10s %8s %10s %10s %10s\n", "bytes", "copy_us", "remap_us", "ratio", "make_us", "unmake_us", "remap+mk");
  for (std::size_t bytes : opt.sizes) {
    std::byte* dst = static_cast<std::byte*>(std::aligned_alloc(page, (bytes + page - 1) / page * page));
    std::memset(dst, 1, bytes);
    std::vector<double> copy, remap, make, unmake;
    for (int rep = 0; rep < kReps; ++rep) {
      std::uint64_t t = perf::Stopwatch::now();
      AUGUR_ASSIGN_OR_RETURN(std::unique_ptr<host::LandingZone> z, host::LandingZone::create(pd, bytes));
      make.push_back(sw.us(perf::Stopwatch::now() - t));
      z->aim_at(reinterpret_cast<std::uintptr_t>(dst));
      std::memset(z->data(), rep & 0xff, bytes);  // the NIC would have written it: pages present
      t = perf::Stopwatch::now();
      (void)z->deliver(dst, bytes, 0);  // copy
      copy.push_back(sw.us(perf::Stopwatch::now() - t));
      t = perf::Stopwatch::now();
      const host::LandingZone::Delivered d = z->deliver(dst, bytes, 1);  // remap
      remap.push_back(sw.us(perf::Stopwatch::now() - t));
      if (d.remapped == 0 && bytes >= page) return Status(Code::kInternal, "the remap did not happen");
      t = perf::Stopwatch::now();
      z.reset();
      unmake.push_back(sw.us(perf::Stopwatch::now() - t));
    }
    const double mk = median(make) + median(unmake);
    std::printf("%10zu %10.2f %10.2f %8.2f %10.2f %10.2f %10.2f\n", bytes, median(copy), median(remap),
                median(remap) / median(copy), median(make), median(unmake), median(remap) + mk);
    std::free(dst);
  }
  std::fflush(stdout);
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  namespace perf = augur::perf;
  Options opt;
  if (!perf::parse_flags(argc, argv,
                         {perf::sizes_flag("--sizes", opt.sizes),
                          perf::int_flag("--iters", opt.iters), perf::int_flag("--rounds", opt.rounds),
                          perf::int_flag("--warmup", opt.warmup), {"--micro", false, [&](const char*) { opt.micro = true; return true; }}},
                         "[--sizes B,B,...] [--iters N] [--rounds R] [--warmup W] [--micro]")) {
    return 2;
  }
  const bool bad_size = std::any_of(opt.sizes.begin(), opt.sizes.end(), [](std::size_t b) { return b < 8192 + 1 || b > (1u << 22); });
  if (opt.iters < 1 || opt.rounds < 1 || opt.warmup < 1 || bad_size) {
    std::fprintf(stderr, "augur-perf-early: --iters, --rounds, --warmup >= 1; sizes above the eager limit (8193) up to 4 MiB\n");
    return 2;
  }
  if (opt.micro && std::getenv("AUGUR_PERF_RANK1") == nullptr) {
    if (augur::Status s = micro(opt); !s.ok()) {
      std::fprintf(stderr, "augur-perf-early: %s\n", s.to_string().c_str());
      return 1;
    }
  }
  return augur::perf::run_two_ranks("augur-perf-early", [&](const std::vector<std::uint16_t>& ports, int rank, int) {
    return run(ports, rank, opt);
  });
}
