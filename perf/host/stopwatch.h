// Per-iteration timestamps for latency benchmarks. On x86 this is the TSC, calibrated once
// against steady_clock, as perftest's get_cycles: a clock_gettime can be a system call (the
// soft-RoCE guest's hpet clock: about 1 us) whose cost would land in every sample, raw verbs
// and engine alike, and flatten their ratio. Elsewhere it is steady_clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace augur::perf {

class Stopwatch {
 public:
  Stopwatch() {
#if defined(__x86_64__) || defined(__i386__)
    using std::chrono::steady_clock;
    const auto t0 = steady_clock::now();
    const std::uint64_t c0 = __rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::uint64_t c1 = __rdtsc();
    const auto t1 = steady_clock::now();
    ticks_per_us_ = static_cast<double>(c1 - c0) / std::chrono::duration<double, std::micro>(t1 - t0).count();
#endif
  }
  [[nodiscard]] static std::uint64_t now() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
#endif
  }
  [[nodiscard]] double us(std::uint64_t ticks) const noexcept { return static_cast<double>(ticks) / ticks_per_us_; }
  // Whether the ticks are the TSC's (else steady_clock's nanoseconds).
#if defined(__x86_64__) || defined(__i386__)
  static constexpr bool kTsc = true;
#else
  static constexpr bool kTsc = false;
#endif

 private:
  double ticks_per_us_ = 1000.0;  // steady_clock nanoseconds
};

}  // namespace augur::perf
