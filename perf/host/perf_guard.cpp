// augur-perf-guard: what the page guard (host/augur/host/page_guard.h) costs, against what it
// would save: copying the buffer. Per buffer size, interleaved in one run, medians over rounds:
//   copy     memcpy of the buffer (what a bounce-buffer delivery pays);
//   mprot    two bare mprotect calls (none, then read-write): the floor under any guard;
//   guard    guard() then release() with no touch (a speculation the program left alone);
//   fault    guard(), one store into the buffer (the fault, the handler lifting the guard, the
//            store run again), release() (a speculation the program's touch revoked);
//   fault1   the fault alone: a store into a guarded buffer, i.e. fault minus guard;
// each in microseconds, and guard and fault as a ratio to copy (below 1: cheaper than a copy),
// guard as a ratio to mprot (the guard's own bookkeeping).
// The early-release paper reports mprotect and fault costs this way; docs/early.md quotes them.
// Usage: augur-perf-guard [--sizes 4096,65536,...] [--reps N] [--rounds R]
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "augur/host/page_guard.h"
#include "stopwatch.h"
#include "two_ranks.h"

namespace {

using namespace augur;

struct Options {
  std::vector<std::size_t> sizes = {4096, 16384, 65536, 262144, 1048576, 4194304};
  int reps = 50;
  int rounds = 15;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double time_us(const perf::Stopwatch& sw, int reps, F&& f) {
  const std::uint64_t t0 = perf::Stopwatch::now();
  for (int i = 0; i < reps; ++i) f();
  return sw.us(perf::Stopwatch::now() - t0) / reps;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!perf::parse_flags(argc, argv,
                         {perf::int_flag("--reps", o.reps), perf::int_flag("--rounds", o.rounds),
                          perf::sizes_flag("--sizes", o.sizes)},
                         "[--sizes 4096,65536,...] [--reps N] [--rounds R]") ||
      o.reps < 1 || o.rounds < 1) {
    return 2;
  }
  Result<host::PageGuard*> pg = host::PageGuard::instance();
  if (!pg.ok()) {
    std::fprintf(stderr, "augur-perf-guard: %s\n", pg.status().to_string().c_str());
    return 1;
  }
  host::PageGuard& g = **pg;
  const perf::Stopwatch sw;
  std::printf("%10s %9s %9s %9s %9s %9s %9s %9s %9s  (us per operation, median of %d rounds of %d)\n", "bytes", "copy",
              "mprot", "guard", "fault", "fault1", "guard/cp", "fault/cp", "guard/mp", o.rounds, o.reps);
  for (const std::size_t n : o.sizes) {
    const std::size_t bytes = (n + host::PageGuard::page_size() - 1) / host::PageGuard::page_size() * host::PageGuard::page_size();
    auto* buf = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    std::vector<char> src(bytes, 3);
    if (buf == MAP_FAILED) return 1;
    std::memset(buf, 1, bytes);
    bool ok = true;
    std::vector<double> copy, mprot, guard, fault, fault1;
    for (int r = 0; r < o.rounds && ok; ++r) {
      copy.push_back(time_us(sw, o.reps, [&] { std::memcpy(buf, src.data(), n); asm volatile("" ::: "memory"); }));
      mprot.push_back(time_us(sw, o.reps, [&] {
        ok &= mprotect(buf, bytes, PROT_NONE) == 0 && mprotect(buf, bytes, PROT_READ | PROT_WRITE) == 0;
      }));
      guard.push_back(time_us(sw, o.reps, [&] {
        Result<host::PageGuard::Ticket> t = g.guard(buf, n);
        ok &= t.ok() && g.release(*t).ok();
      }));
      fault.push_back(time_us(sw, o.reps, [&] {
        Result<host::PageGuard::Ticket> t = g.guard(buf, n);
        static_cast<volatile char*>(buf)[n / 2] = 2;
        ok &= t.ok() && g.touched(*t) && g.release(*t).ok();
      }));
      // The fault alone: guards made outside the timed loop.
      std::vector<host::PageGuard::Ticket> ts;
      double us = 0;
      for (int i = 0; i < o.reps && ok; ++i) {
        Result<host::PageGuard::Ticket> t = g.guard(buf, n);
        ok &= t.ok();
        if (!ok) break;
        us += time_us(sw, 1, [&] { static_cast<volatile char*>(buf)[n / 2] = 2; });
        ok &= g.release(*t).ok();
      }
      fault1.push_back(us / o.reps);
    }
    munmap(buf, bytes);
    if (!ok) {
      std::fprintf(stderr, "augur-perf-guard: a guard failed at %zu bytes\n", n);
      return 1;
    }
    const double c = median(copy), mp = median(mprot), gd = median(guard), f = median(fault), f1 = median(fault1);
    std::printf("%10zu %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", n, c, mp, gd, f, f1, gd / c, f / c, gd / mp);
  }
  const host::PageGuard::Counters k = g.counters();
  std::printf("guards %llu, touches %llu, foreign faults %llu\n", static_cast<unsigned long long>(k.guards),
              static_cast<unsigned long long>(k.touches), static_cast<unsigned long long>(k.foreign_faults));
  return 0;
}
