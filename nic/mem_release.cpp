#include "augur/nic/mem_release.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AUGUR_SANITIZED_ALLOCATOR 1
// From <sanitizer/allocator_interface.h>, which GCC 12 does not install; libasan and libtsan export both.
extern "C" {
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                              void (*free_hook)(const volatile void*));
std::size_t __sanitizer_get_allocated_size(const volatile void* p);
}
#endif

namespace augur::nic {

namespace {
// The registry of watches. Constant-initialized: the interposers may run before any constructor.
constinit std::mutex g_mu;
constinit ReleaseWatch* g_watches = nullptr;
// Union of every watch's span: most releases fail this test without taking the lock.
constinit std::atomic<std::uintptr_t> g_lo{UINTPTR_MAX};
constinit std::atomic<std::uintptr_t> g_hi{0};
constinit const char* g_tracking = "off";
constinit std::atomic<GiveBackGate> g_gate{nullptr};

void give_back(const void* addr, std::size_t len) noexcept {
  const GiveBackGate gate = g_gate.load(std::memory_order_acquire);
  if (gate != nullptr && addr != nullptr && len != 0) gate(addr, len);
}

void widen(std::atomic<std::uintptr_t>& lo, std::atomic<std::uintptr_t>& hi, std::uintptr_t a, std::uintptr_t b) {
  std::uintptr_t cur = lo.load(std::memory_order_relaxed);
  while (a < cur && !lo.compare_exchange_weak(cur, a, std::memory_order_release, std::memory_order_relaxed)) {
  }
  cur = hi.load(std::memory_order_relaxed);
  while (b > cur && !hi.compare_exchange_weak(cur, b, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

#ifdef AUGUR_SANITIZED_ALLOCATOR
void on_malloc(const volatile void*, std::size_t) {}
void on_free(const volatile void* p) {
  if (p == nullptr) return;
  const void* q = const_cast<const void*>(p);
  const std::size_t n = __sanitizer_get_allocated_size(q);
  give_back(q, n);
  note_release(q, n);
}
#endif

// Runs when the library is loaded, before main and before the program allocates its buffers.
__attribute__((constructor)) void install() {
  const char* v = std::getenv("AUGUR_RCACHE_TRACK");
  if (v != nullptr && std::strcmp(v, "0") == 0) return;
#ifdef AUGUR_SANITIZED_ALLOCATOR
  if (__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0) g_tracking = "sanitizer-free-hook";
#else
  // Freed memory stays mapped (no mmap'd chunks, no trimming), so only the interposed calls
  // below can give pages back. Costs: the heap does not shrink after large frees.
  if (mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, -1) == 1) g_tracking = "malloc-hooks";
#endif
}
}  // namespace

void set_give_back_gate(GiveBackGate gate) noexcept { g_gate.store(gate, std::memory_order_release); }

const char* release_tracking() noexcept { return g_tracking; }
bool releases_tracked() noexcept { return std::strcmp(g_tracking, "off") != 0; }

ReleaseWatch::ReleaseWatch() noexcept {
  std::lock_guard lock(g_mu);
  next_ = g_watches;
  g_watches = this;
}

ReleaseWatch::~ReleaseWatch() {
  std::lock_guard lock(g_mu);
  for (ReleaseWatch** w = &g_watches; *w != nullptr; w = &(*w)->next_) {
    if (*w == this) {
      *w = next_;
      break;
    }
  }
}

void ReleaseWatch::watch(std::uintptr_t lo, std::uintptr_t hi) noexcept {
  widen(lo_, hi_, lo, hi);
  widen(g_lo, g_hi, lo, hi);
}

void ReleaseWatch::push(std::uintptr_t lo, std::uintptr_t hi) noexcept {
  if (hi <= lo_.load(std::memory_order_acquire) || lo >= hi_.load(std::memory_order_acquire)) return;
  if (!pending_.all) {
    if (pending_.count < kMaxRanges) {
      pending_.ranges[pending_.count++] = {lo, hi};
    } else {
      pending_.all = true;
    }
  }
  dirty_.store(true, std::memory_order_release);
}

ReleaseWatch::Released ReleaseWatch::take() noexcept {
  Released out;
  if (!pending()) return out;
  std::lock_guard lock(g_mu);
  out = pending_;
  pending_ = Released{};
  dirty_.store(false, std::memory_order_relaxed);
  return out;
}

void note_release(const void* addr, std::size_t len) noexcept {
  const auto lo = reinterpret_cast<std::uintptr_t>(addr);
  const std::uintptr_t hi = len > UINTPTR_MAX - lo ? UINTPTR_MAX : lo + len;
  if (len == 0 || hi <= g_lo.load(std::memory_order_acquire) || lo >= g_hi.load(std::memory_order_acquire)) return;
  std::lock_guard lock(g_mu);
  for (ReleaseWatch* w = g_watches; w != nullptr; w = w->next_) w->push(lo, hi);
}

void note_release_all() noexcept {
  std::lock_guard lock(g_mu);
  for (ReleaseWatch* w = g_watches; w != nullptr; w = w->next_) {
    w->pending_.all = true;
    w->dirty_.store(true, std::memory_order_release);
  }
}

}  // namespace augur::nic

#ifndef AUGUR_SANITIZED_ALLOCATOR
// The interposers: programs and libraries that call these through the PLT reach them before libc.
// Each makes the system call itself and reports the range only when the call succeeded.
extern "C" {

int munmap(void* addr, size_t len) noexcept {
  augur::nic::give_back(addr, len);
  const long rc = syscall(SYS_munmap, addr, len);
  if (rc == 0) augur::nic::note_release(addr, len);
  return static_cast<int>(rc);
}

void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) noexcept {
  if ((flags & MAP_FIXED) != 0) augur::nic::give_back(addr, len);
  void* p = reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
  if (p != MAP_FAILED && (flags & MAP_FIXED) != 0) augur::nic::note_release(p, len);  // replaced what was there
  return p;
}

void* mremap(void* old, size_t old_len, size_t new_len, int flags, ...) noexcept {
  void* target = nullptr;
  if ((flags & MREMAP_FIXED) != 0) {
    va_list ap;
    va_start(ap, flags);
    target = va_arg(ap, void*);
    va_end(ap);
  }
  augur::nic::give_back(old, old_len);
  if (target != nullptr) augur::nic::give_back(target, new_len);
  void* p = reinterpret_cast<void*>(syscall(SYS_mremap, old, old_len, new_len, flags, target));
  if (p != MAP_FAILED) {
    augur::nic::note_release(old, old_len);
    if (target != nullptr) augur::nic::note_release(target, new_len);
  }
  return p;
}

void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) noexcept __attribute__((alias("mmap")));

int madvise(void* addr, size_t len, int advice) noexcept {
  if (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE) augur::nic::give_back(addr, len);
  const long rc = syscall(SYS_madvise, addr, len, advice);
  // These drop the pages; the next touch maps new ones. (DONTFORK and the rest keep them.)
  if (rc == 0 && (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE)) {
    augur::nic::note_release(addr, len);
  }
  return static_cast<int>(rc);
}

int shmdt(const void* addr) noexcept {
  const long rc = syscall(SYS_shmdt, addr);
  if (rc == 0) augur::nic::note_release_all();  // the segment's size is not known here
  return static_cast<int>(rc);
}

}  // extern "C"
#endif
