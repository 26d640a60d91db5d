// Memory-release tracking for the registration caches.
//
// A registration pins the physical pages behind a virtual range. When the program gives that
// range back to the kernel (munmap, madvise(DONTNEED), mremap, a MAP_FIXED mmap over it, or
// malloc doing one of those inside free) and later gets the same addresses again, they name new
// pages: a cache hit would then let the NIC write into, or read from, the old ones. UCX and
// Open MPI solve this with memory hooks; augur does the same, in the way that needs no code
// patching:
//  - glibc malloc is told (mallopt) never to unmap or trim memory, so free() keeps pages mapped;
//  - munmap, mremap, madvise, mmap(MAP_FIXED) and shmdt are interposed (calls through the PLT,
//    which includes other allocators such as jemalloc) and report the range after the call;
//  - in sanitizer builds, whose allocators unmap internally, a sanitizer free hook reports every
//    freed block instead (the interposers would hide the sanitizers' own interceptors).
// Each ReleaseWatch (one per cache) collects the ranges that overlap what it has registered; its
// owner drains them before every lookup. AUGUR_RCACHE_TRACK=0 turns the hooks off: caches then
// deregister every region as soon as no operation uses it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace augur::nic {

// How this process sees releases: "malloc-hooks", "sanitizer-free-hook" or "off".
const char* release_tracking() noexcept;
// True unless tracking is off: cached registrations may then outlive the operations that made them.
bool releases_tracked() noexcept;
// Reports [addr, addr+len) as given back to the kernel (the interposers call it; so can tests).
void note_release(const void* addr, std::size_t len) noexcept;
// Everything may have changed (shmdt of an unknown size, or too many ranges to keep).
void note_release_all() noexcept;

// Runs before memory is given back (every free() in sanitizer builds, whose allocators unmap and
// reuse at once; munmap, mremap, madvise(DONTNEED/FREE/REMOVE) and MAP_FIXED mmap otherwise), on
// the thread giving it back. The page guard installs one that waits for data still to be read
// from, or written into, that memory by a released send or receive: a device that works on
// virtual addresses (loopback) would otherwise read or write the memory's next owner, and a
// waiting wait is what the MPI call itself would have done without early release.
using GiveBackGate = void (*)(const void* addr, std::size_t len) noexcept;
void set_give_back_gate(GiveBackGate gate) noexcept;

class ReleaseWatch {
 public:
  static constexpr std::size_t kMaxRanges = 32;
  struct Range {
    std::uintptr_t lo = 0, hi = 0;
  };
  struct Released {
    std::array<Range, kMaxRanges> ranges{};
    std::size_t count = 0;
    bool all = false;  // more than kMaxRanges: treat everything as released
  };

  ReleaseWatch() noexcept;
  ~ReleaseWatch();
  ReleaseWatch(const ReleaseWatch&) = delete;
  ReleaseWatch& operator=(const ReleaseWatch&) = delete;

  // Widens the span this watch listens to (called for every registration).
  void watch(std::uintptr_t lo, std::uintptr_t hi) noexcept;
  // Cheap check (one atomic load) before take().
  [[nodiscard]] bool pending() const noexcept { return dirty_.load(std::memory_order_acquire); }
  // The ranges released since the last call.
  Released take() noexcept;

 private:
  friend void note_release(const void*, std::size_t) noexcept;
  friend void note_release_all() noexcept;
  void push(std::uintptr_t lo, std::uintptr_t hi) noexcept;  // under the registry lock

  std::atomic<bool> dirty_{false};
  std::atomic<std::uintptr_t> lo_{UINTPTR_MAX};
  std::atomic<std::uintptr_t> hi_{0};
  Released pending_;  // under the registry lock
  ReleaseWatch* next_ = nullptr;
};

}  // namespace augur::nic
