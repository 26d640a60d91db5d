#include "augur/host/page_guard.h"

#include "augur/nic/mem_release.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>

#include "augur/nic/verbs.h"

namespace augur::host {
namespace {

// The program's handler that foreign faults go to: two copies, the live one named by an index,
// so guard() can replace it while a handler reads the other.
struct sigaction g_prev[2];
std::atomic<int> g_prev_live{0};
std::mutex g_mu;  // guard(), release() and installation; never the handler
PageGuard* g_guard = nullptr;

void trampoline(int sig, siginfo_t* info, void* uc);

bool is_ours(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) != 0 && a.sa_sigaction == trampoline;
}

Status set_ours(struct sigaction* previous) {
  struct sigaction sa{};
  sa.sa_sigaction = trampoline;
  sigemptyset(&sa.sa_mask);
  // SA_ONSTACK: a program that runs its SIGSEGV handler on an alternate stack (stack overflow)
  // keeps doing so through the chain.
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  if (sigaction(SIGSEGV, &sa, previous) != 0) return errno_status(errno, "sigaction(SIGSEGV)");
  return Status::Ok();
}

// What SIGSEGV would have done without us.
void pass_on(int sig, siginfo_t* info, void* uc) {
  const struct sigaction& p = g_prev[g_prev_live.load(std::memory_order_acquire)];
  if ((p.sa_flags & SA_SIGINFO) != 0 && p.sa_sigaction != nullptr) {
    p.sa_sigaction(sig, info, uc);
    return;
  }
  if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
    p.sa_handler(sig);
    return;
  }
  // Default (an ignored fault is fatal too): the faulting instruction runs again and the kernel
  // ends the process; a SIGSEGV sent by kill() is raised again.
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGSEGV, &dfl, nullptr);
  if (info == nullptr || info->si_code <= 0) raise(SIGSEGV);
}

std::uintptr_t fault_pc(void* uc) noexcept {
  if (uc == nullptr) return 0;
  const auto* u = static_cast<const ucontext_t*>(uc);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(u->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(u->uc_mcontext.pc);
#else
  (void)u;
  return 0;
#endif
}

void trampoline(int sig, siginfo_t* info, void* uc) {
  if (g_guard != nullptr && info != nullptr && info->si_code > 0 &&
      g_guard->handle(reinterpret_cast<std::uintptr_t>(info->si_addr), fault_pc(uc))) {
    return;  // the guard is lifted: the instruction runs again
  }
  if (g_guard != nullptr) g_guard->note_foreign();
  pass_on(sig, info, uc);
}

// Memory given back to the kernel or the allocator: data still to land in it, or to be read
// from it, goes first (a failed guard's data is not coming: nothing to wait for).
void await_given_back(const void* addr, std::size_t len) noexcept {
  if (g_guard != nullptr) (void)g_guard->await_landed(addr, len);
}

}  // namespace

std::size_t PageGuard::page_size() noexcept {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

PageGuard::Range PageGuard::pages_of(const void* addr, std::size_t len) noexcept {
  const std::uintptr_t page = page_size();
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  return {a & ~(page - 1), (a + len + page - 1) & ~(page - 1)};
}

Result<PageGuard*> PageGuard::instance() {
  std::lock_guard lock(g_mu);
  if (g_guard == nullptr) {
    // Never destroyed: the handler may run until the process ends.
    auto* g = new PageGuard();  // NOLINT(cppcoreguidelines-owning-memory)
    struct sigaction prev{};
    Status st = set_ours(&prev);
    if (!st.ok()) {
      delete g;  // NOLINT(cppcoreguidelines-owning-memory)
      return Status(Code::kUnsupported, "page guard: " + st.to_string());
    }
    g_prev[0] = prev;
    g_prev_live.store(0, std::memory_order_release);
    g_guard = g;
    nic::set_give_back_gate(await_given_back);
  }
  return g_guard;
}

// Called with g_mu held. A handler the program installed since is chained behind ours.
Status PageGuard::ensure_installed() {
  struct sigaction cur{};
  if (sigaction(SIGSEGV, nullptr, &cur) != 0) return errno_status(errno, "sigaction(SIGSEGV)");
  if (is_ours(cur)) return Status::Ok();
  const int next = 1 - g_prev_live.load(std::memory_order_relaxed);
  g_prev[next] = cur;
  g_prev_live.store(next, std::memory_order_release);
  rechained_.fetch_add(1, std::memory_order_relaxed);
  return set_ours(nullptr);
}

Result<PageGuard::Ticket> PageGuard::guard(const void* addr, std::size_t len) {
  return protect(addr, len, kArmed, nullptr, nullptr, PROT_NONE);
}

Result<PageGuard::Ticket> PageGuard::guard_until_landed(const void* addr, std::size_t len, Waiter waiter, void* arg) {
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  if ((a | len) & (page_size() - 1)) return Status(Code::kInvalidArgument, "page guard: a waiting guard must cover whole pages");
  return protect(addr, len, kWaiting, waiter, arg, PROT_NONE);
}

Result<PageGuard::Ticket> PageGuard::guard_writes_until_landed(const void* addr, std::size_t len, Waiter waiter, void* arg) {
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  if ((a | len) & (page_size() - 1)) return Status(Code::kInvalidArgument, "page guard: a waiting guard must cover whole pages");
  return protect(addr, len, kWaiting, waiter, arg, PROT_READ);
}

Result<bool> PageGuard::await_landed(const void* addr, std::size_t len) noexcept {
  bool waited = false;
  if (len == 0 || waiting_.load(std::memory_order_acquire) == 0) return waited;
  const Range r = pages_of(addr, len);
  for (Slot& s : slots_) {
    const std::uint32_t version = s.version.load(std::memory_order_acquire);
    for (;;) {
      const std::uint32_t st = s.state.load(std::memory_order_acquire);
      if ((st != kWaiting && st != kLost) || s.version.load(std::memory_order_relaxed) != version) break;
      if (r.hi <= s.lo.load(std::memory_order_relaxed) || s.hi.load(std::memory_order_relaxed) <= r.lo) break;
      if (st == kLost) {
        const char* why = s.why.load(std::memory_order_relaxed);
        return Status(Code::kDataLoss, why != nullptr ? why : "page guard: the data will not come");
      }
      waited = true;
      const Waiter w = s.waiter.load(std::memory_order_relaxed);
      if (w != nullptr) {
        w(s.arg.load(std::memory_order_relaxed));
      } else {
        sched_yield();
      }
    }
  }
  return waited;
}

Result<PageGuard::Ticket> PageGuard::protect(const void* addr, std::size_t len, State state, Waiter waiter, void* arg,
                                             int prot) {
  if (addr == nullptr || len == 0) return Status(Code::kInvalidArgument, "page guard: empty range");
  const Range r = pages_of(addr, len);
  std::lock_guard lock(g_mu);
  AUGUR_RETURN_IF_ERROR(ensure_installed());
  nic::note_guarded_memory();  // the loopback device's writes must pass the protection, as a NIC's do
  Slot* free_slot = nullptr;
  for (Slot& s : slots_) {
    if (s.state.load(std::memory_order_acquire) == kFree) {
      if (free_slot == nullptr) free_slot = &s;
      continue;
    }
    if (r.lo < s.hi.load(std::memory_order_relaxed) && s.lo.load(std::memory_order_relaxed) < r.hi) {
      return Status(Code::kInvalidArgument, "page guard: the range shares a page with a guarded one");
    }
  }
  if (free_slot == nullptr) return Status(Code::kResourceExhausted, "page guard: all " + std::to_string(kMaxGuards) + " guards in use");
  Slot& s = *free_slot;
  s.lo.store(r.lo, std::memory_order_relaxed);
  s.hi.store(r.hi, std::memory_order_relaxed);
  s.pc.store(0, std::memory_order_relaxed);
  s.waiter.store(waiter, std::memory_order_relaxed);
  s.arg.store(arg, std::memory_order_relaxed);
  s.why.store(nullptr, std::memory_order_relaxed);
  const std::uint32_t version = s.version.fetch_add(1, std::memory_order_relaxed) + 1;
  // Armed before the pages are protected: no fault can come from them before this store.
  if (state == kWaiting) waiting_.fetch_add(1, std::memory_order_acq_rel);
  s.state.store(state, std::memory_order_release);
  if (mprotect(reinterpret_cast<void*>(r.lo), r.hi - r.lo, prot) != 0) {
    const int err = errno;
    s.state.store(kFree, std::memory_order_release);
    if (state == kWaiting) waiting_.fetch_sub(1, std::memory_order_acq_rel);
    return errno_status(err, "page guard: mprotect");
  }
  guards_.fetch_add(1, std::memory_order_relaxed);
  return Ticket{static_cast<std::uint32_t>(&s - slots_), version};
}

Status PageGuard::land(Ticket t) {
  if (t.slot >= kMaxGuards) return Status(Code::kNotFound, "page guard: no such ticket");
  std::lock_guard lock(g_mu);
  Slot& s = slots_[t.slot];
  const std::uint32_t st = s.state.load(std::memory_order_acquire);
  if ((st != kWaiting && st != kLost) || s.version.load(std::memory_order_relaxed) != t.version) {
    return Status(Code::kNotFound, "page guard: ticket already landed");
  }
  const std::uintptr_t lo = s.lo.load(std::memory_order_relaxed);
  const std::uintptr_t hi = s.hi.load(std::memory_order_relaxed);
  // Read-write before the slot is free: a waiting touch retries once it sees kFree.
  const int rc = mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_READ | PROT_WRITE);
  const int err = errno;
  s.state.store(kFree, std::memory_order_release);
  waiting_.fetch_sub(1, std::memory_order_acq_rel);
  if (rc != 0 && err != ENOMEM) return errno_status(err, "page guard: mprotect");  // ENOMEM: unmapped since
  return Status::Ok();
}

void PageGuard::fail(Ticket t, const char* why) noexcept {
  if (t.slot >= kMaxGuards) return;
  Slot& s = slots_[t.slot];
  if (s.version.load(std::memory_order_relaxed) != t.version) return;
  s.why.store(why, std::memory_order_relaxed);
  std::uint32_t st = kWaiting;
  s.state.compare_exchange_strong(st, kLost, std::memory_order_acq_rel);
}

void PageGuard::drop(Ticket t) noexcept { (void)land(t); }

void PageGuard::lost(const char* why) noexcept {
  static constexpr char kLead[] = "augur: ";
  (void)!write(2, kLead, sizeof kLead - 1);
  if (why != nullptr) {
    std::size_t n = 0;
    while (why[n] != '\0') ++n;
    (void)!write(2, why, n);
  }
  (void)!write(2, "\n", 1);
  abort();
}

Result<bool> PageGuard::release(Ticket t) {
  if (t.slot >= kMaxGuards) return Status(Code::kNotFound, "page guard: no such ticket");
  std::lock_guard lock(g_mu);
  Slot& s = slots_[t.slot];
  for (;;) {
    std::uint32_t st = s.state.load(std::memory_order_acquire);
    if (st == kFree || s.version.load(std::memory_order_relaxed) != t.version) {
      return Status(Code::kNotFound, "page guard: ticket already released");
    }
    if (st == kWaiting || st == kLost) return Status(Code::kInvalidArgument, "page guard: a waiting guard is lifted by land()");
    if (st == kTouched) {
      s.state.store(kFree, std::memory_order_release);
      return true;
    }
    if (st == kArmed && s.state.compare_exchange_strong(st, kLifting, std::memory_order_acq_rel)) {
      const std::uintptr_t lo = s.lo.load(std::memory_order_relaxed);
      const std::uintptr_t hi = s.hi.load(std::memory_order_relaxed);
      const int rc = mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_READ | PROT_WRITE);
      const int err = errno;
      s.state.store(kFree, std::memory_order_release);
      if (rc != 0) return errno_status(err, "page guard: mprotect");
      return false;
    }
    sched_yield();  // a handler is lifting it (kLifting): a few instructions away
  }
}

bool PageGuard::touched(Ticket t) const noexcept {
  if (t.slot >= kMaxGuards) return false;
  const Slot& s = slots_[t.slot];
  return s.state.load(std::memory_order_acquire) == kTouched && s.version.load(std::memory_order_relaxed) == t.version;
}

std::uintptr_t PageGuard::touch_site(Ticket t) const noexcept {
  return touched(t) ? slots_[t.slot].pc.load(std::memory_order_relaxed) : 0;
}

bool PageGuard::handle(std::uintptr_t addr, std::uintptr_t pc) noexcept {
  for (Slot& s : slots_) {
    std::uint32_t st = s.state.load(std::memory_order_acquire);
    if (st == kFree) continue;
    const std::uintptr_t lo = s.lo.load(std::memory_order_relaxed);
    const std::uintptr_t hi = s.hi.load(std::memory_order_relaxed);
    if (addr < lo || addr >= hi) continue;
    if (st == kWaiting) {  // its data is on the way: wait for the owner to land it
      waits_.fetch_add(1, std::memory_order_relaxed);
      const std::uint32_t version = s.version.load(std::memory_order_relaxed);
      const Waiter w = s.waiter.load(std::memory_order_relaxed);
      void* arg = s.arg.load(std::memory_order_relaxed);
      while ((st = s.state.load(std::memory_order_acquire)) == kWaiting && s.version.load(std::memory_order_relaxed) == version) {
        if (w != nullptr) {
          w(arg);
        } else {
          sched_yield();
        }
      }
      if (st != kLost || s.version.load(std::memory_order_relaxed) != version) return true;  // landed: run it again
    }
    if (st == kLost) lost(s.why.load(std::memory_order_relaxed));
    if (st == kArmed && s.state.compare_exchange_strong(st, kLifting, std::memory_order_acq_rel)) {
      mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_READ | PROT_WRITE);
      s.pc.store(pc, std::memory_order_relaxed);
      s.state.store(kTouched, std::memory_order_release);
      touches_.fetch_add(1, std::memory_order_release);  // after the state: see touches()
    }
    // Otherwise another thread or release() is lifting it, or has just lifted it (kTouched: this
    // thread faulted while it was armed): the access runs again and succeeds.
    return true;
  }
  return false;
}

std::uint64_t PageGuard::touches() const noexcept { return touches_.load(std::memory_order_acquire); }

void PageGuard::note_foreign() noexcept { foreign_.fetch_add(1, std::memory_order_relaxed); }

PageGuard::Counters PageGuard::counters() const noexcept {
  return {guards_.load(std::memory_order_relaxed), touches_.load(std::memory_order_relaxed),
          foreign_.load(std::memory_order_relaxed), rechained_.load(std::memory_order_relaxed),
          waits_.load(std::memory_order_relaxed)};
}

}  // namespace augur::host
