// PageGuard: protects the pages of a program buffer and learns when the program touches them.
//
// Speculative placement (issue 23, AUGUR_STEERING=speculative) writes an early message straight
// into the buffer the predictor names before its receive is posted; it may do so only while the
// program leaves that buffer alone. Early release and prefetching (issue 18) ask the same
// question of other buffers. The answer is page protection: guard() makes the pages that hold
// any byte of the range inaccessible (PROT_NONE); a load or store there raises SIGSEGV, which
// the handler installed here recognises, and it lifts the guard (the pages become read-write
// again, the faulting instruction is retried and the program continues as if nothing happened)
// and records the touch, which the runtime reads later with touched() or release(). A touch of
// another buffer's bytes on a shared edge page counts too: the guard is conservative, never
// silent.
//
// A guard can instead make the touch wait (guard_until_landed, for early release, issue 18): the
// pages are being filled by the NIC, and a load or store there must see the data. The handler
// then calls the guard's waiter until the owner lifts the guard with land(), and the access runs
// again. If the data will never come (the sender died), fail() makes a later touch end the
// process with a report rather than wait forever or read a hole.
//
// Faults that are not the guard's go to the handler the program had: the one installed before
// the first guard, or one installed later (guard() notices, puts its own back first and chains
// to the program's). With no program handler a foreign fault ends the process as SIGSEGV would.
//
// One per process (a signal handler is); the handler is async-signal-safe: a fixed table of
// ranges scanned with atomics, no allocation, no locks. A slot's version tells a ticket from a
// later guard of the same slot.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "augur/status.h"

namespace augur::host {

class PageGuard {
 public:
  static constexpr std::size_t kMaxGuards = 256;  // ranges guarded at once

  // The process's guard; installs the SIGSEGV handler on first use. Fails (kUnsupported) if the
  // handler cannot be installed.
  static Result<PageGuard*> instance();

  struct Ticket {
    std::uint32_t slot = 0;
    std::uint32_t version = 0;
  };
  struct Range {
    std::uintptr_t lo = 0;  // page-aligned
    std::uintptr_t hi = 0;
  };

  // Protects every page holding a byte of [addr, addr + len), which must be read-write memory
  // (a lifted or released guard leaves its pages read-write). kInvalidArgument for an empty
  // range, kResourceExhausted when kMaxGuards ranges are guarded, kIo if mprotect fails (the
  // range is then left as it was). Two guards must not share a page (kInvalidArgument).
  Result<Ticket> guard(const void* addr, std::size_t len);

  // Lifts the guard if the program has not: true if the program touched the range first. A
  // ticket whose guard was already released is kNotFound.
  Result<bool> release(Ticket t);

  // A guard whose touches wait: the faulting thread calls waiter(arg) (from the signal handler:
  // it must be async-signal-safe in practice, and never fault on a guarded page itself) until
  // land() lifts the guard, then its access runs again. `addr` and `len` must be page-aligned.
  using Waiter = void (*)(void* arg) noexcept;
  Result<Ticket> guard_until_landed(const void* addr, std::size_t len, Waiter waiter, void* arg);
  // The same for a range the NIC is still reading (early release of a send): the pages stay
  // readable (PROT_READ), and only a store waits, until land().
  Result<Ticket> guard_writes_until_landed(const void* addr, std::size_t len, Waiter waiter, void* arg);
  // Waits (calling each guard's waiter) until no waiting guard holds a page of [addr, addr + len):
  // for a caller about to hand the memory to something a fault would not stop (a NIC, a system
  // call); true if it waited. kDataLoss if one of them was failed. One atomic load when no
  // waiting guard is set. The guard also runs it before memory is given back (free, munmap:
  // nic::set_give_back_gate), so that no data lands in, or is read from, its next owner.
  Result<bool> await_landed(const void* addr, std::size_t len) noexcept;
  // The owner's side: the range's data is in; the pages become read-write and waiting touches go
  // on. kNotFound for a ticket already landed or released.
  Status land(Ticket t);
  // The data will not come: a touch from now on writes `why` (kept by the caller until land or
  // drop) to stderr and aborts the process. The pages stay protected.
  void fail(Ticket t, const char* why) noexcept;
  // Lifts a waiting guard without the data (teardown: the memory may be gone; errors ignored).
  void drop(Ticket t) noexcept;

  // Whether the program has touched the range since guard() (false for a released ticket).
  [[nodiscard]] bool touched(Ticket t) const noexcept;
  // Touches so far, of any range. Once a caller sees it grow, touched() of that range is true:
  // a poller need look at its tickets only when this changed.
  [[nodiscard]] std::uint64_t touches() const noexcept;
  // The address of the instruction that touched it (0: not touched, unknown, or released): the
  // call site a report names.
  [[nodiscard]] std::uintptr_t touch_site(Ticket t) const noexcept;

  // The pages guard() protects for [addr, addr + len).
  static Range pages_of(const void* addr, std::size_t len) noexcept;
  static std::size_t page_size() noexcept;

  struct Counters {
    std::uint64_t guards = 0;          // guard() calls that protected a range
    std::uint64_t touches = 0;         // guards lifted by a fault of the program
    std::uint64_t foreign_faults = 0;  // faults passed on to the program's own handler
    std::uint64_t rechained = 0;       // times guard() found another handler and chained to it
    std::uint64_t waits = 0;           // touches of a waiting guard (guard_until_landed) that waited
  };
  [[nodiscard]] Counters counters() const noexcept;

  PageGuard(const PageGuard&) = delete;
  PageGuard& operator=(const PageGuard&) = delete;

  // The signal handler's entry points (async-signal-safe): whether a fault at `addr` was a
  // guard's (then lifted, or being lifted by another thread), and the count of the others.
  bool handle(std::uintptr_t addr, std::uintptr_t pc = 0) noexcept;
  void note_foreign() noexcept;

 private:
  PageGuard() = default;
  Status ensure_installed();

  enum State : std::uint32_t { kFree = 0, kArmed, kTouched, kLifting, kWaiting, kLost };
  Result<Ticket> protect(const void* addr, std::size_t len, State state, Waiter waiter, void* arg, int prot);
  [[noreturn]] static void lost(const char* why) noexcept;
  struct Slot {
    std::atomic<std::uint32_t> state{kFree};
    std::atomic<std::uint32_t> version{0};
    std::atomic<std::uintptr_t> lo{0};
    std::atomic<std::uintptr_t> hi{0};
    std::atomic<std::uintptr_t> pc{0};  // the touching instruction
    std::atomic<Waiter> waiter{nullptr};  // kWaiting
    std::atomic<void*> arg{nullptr};
    std::atomic<const char*> why{nullptr};  // kLost
  };
  Slot slots_[kMaxGuards];
  std::atomic<std::uint64_t> guards_{0}, touches_{0}, foreign_{0}, rechained_{0}, waits_{0};
  std::atomic<std::uint32_t> waiting_{0};  // slots in kWaiting or kLost
};

}  // namespace augur::host
