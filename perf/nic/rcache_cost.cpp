// augur-perf-rcache: what memory-release tracking buys and costs, side by side in one run.
//  - per buffer size: registering and deregistering for every operation (AUGUR_RCACHE_TRACK=0)
//    against a registration-cache hit (tracking on), and the ratio;
//  - the interposed munmap (syscall + release report) against the bare system call, for a
//    mapping the cache does not hold and for one it does (the report then takes the lock).
// Medians of --rounds rounds of --iters operations each, interleaved. Needs a verbs device.
// Usage: augur-perf-rcache [--iters N] [--rounds R] [--device NAME]
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "augur/nic/mem_release.h"
#include "augur/nic/reg_cache.h"
#include "augur/nic/verbs.h"

namespace {

using namespace augur;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double time_us(int iters, F&& f) {
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) f();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters;
}

Status run(int iters, int rounds, const std::string& device) {
  AUGUR_ASSIGN_OR_RETURN(nic::Context ctx, nic::Context::open(device));
  AUGUR_ASSIGN_OR_RETURN(nic::ProtectionDomain pd, nic::ProtectionDomain::create(ctx));
  const std::uint32_t access = nic::kLocalWrite | nic::kRemoteWrite;
  std::printf("# device %s, release tracking: %s; medians of %d rounds x %d operations (us)\n", ctx.name().c_str(),
              nic::release_tracking(), rounds, iters);
  std::printf("%10s %14s %14s %10s\n", "#bytes", "reg+dereg", "cache_hit", "ratio");
  for (std::size_t n : {std::size_t{4096}, std::size_t{65536}, std::size_t{1} << 20, std::size_t{16} << 20}) {
    std::vector<std::byte> buf(n, std::byte{1});
    nic::RegCache cache(nic::pd_registrar(pd, access), {});
    std::vector<double> reg, hit;
    Status failed = Status::Ok();
    for (int r = 0; r < rounds; ++r) {
      reg.push_back(time_us(iters, [&] {
        auto mr = nic::MemoryRegion::register_memory(pd, buf.data(), n, access);
        if (!mr.ok()) failed = mr.status();
      }));
      hit.push_back(time_us(iters, [&] {
        auto h = cache.acquire(buf.data(), n);
        if (!h.ok()) failed = h.status();
      }));
      AUGUR_RETURN_IF_ERROR(failed);
    }
    std::printf("%10zu %14.3f %14.3f %9.0fx\n", n, median(reg), median(hit), median(reg) / median(hit));
  }

  // munmap: a 64 KiB mapping made and dropped per operation.
  constexpr std::size_t kMap = 65536;
  std::vector<double> bare, hooked, watched;
  auto cycle = [&](bool via_hook) {
    void* p = ::mmap(nullptr, kMap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    if (via_hook) {
      ::munmap(p, kMap);
    } else {
      syscall(SYS_munmap, p, kMap);
    }
  };
  for (int r = 0; r < rounds; ++r) {
    bare.push_back(time_us(iters, [&] { cycle(false); }));
    hooked.push_back(time_us(iters, [&] { cycle(true); }));
    // A watch spanning the whole address space: every munmap is reported (takes the lock).
    nic::ReleaseWatch wide;
    wide.watch(0, UINTPTR_MAX);
    watched.push_back(time_us(iters, [&] { cycle(true); }));
    (void)wide.take();
  }
  std::printf("# mmap+munmap of 64 KiB (us): bare syscall %.3f, interposed %.3f (%.2fx), interposed and reported %.3f (%.2fx)\n",
              median(bare), median(hooked), median(hooked) / median(bare), median(watched),
              median(watched) / median(bare));
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 200, rounds = 5;
  std::string device;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iters" && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (a == "--device" && i + 1 < argc) {
      device = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--iters N] [--rounds R] [--device NAME]\n", argv[0]);
      return 2;
    }
  }
  if (iters < 1 || rounds < 1) {
    std::fprintf(stderr, "augur-perf-rcache: --iters and --rounds must be >= 1\n");
    return 2;
  }
  Status s = run(iters, rounds, device);
  if (!s.ok()) {
    std::fprintf(stderr, "augur-perf-rcache: %s\n", s.to_string().c_str());
    return 1;
  }
  return 0;
}
