// PageGuard (host/augur/host/page_guard.h): guarded pages, the program's touches, tickets, and
// the program's own SIGSEGV handlers (in fresh processes: page_guard_child).
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

#include <gtest/gtest.h>

#include "augur/host/page_guard.h"
#include "augur/nic/mem_release.h"

extern char** environ;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AUGUR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define AUGUR_SANITIZED 1
#endif
#endif
#ifndef AUGUR_SANITIZED
#define AUGUR_SANITIZED 0
#endif

namespace augur::host {
namespace {

// Page-aligned anonymous memory, unmapped at the end.
struct Pages {
  explicit Pages(std::size_t n)
      : bytes(n * PageGuard::page_size()),
        p(static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))) {}
  ~Pages() { munmap(p, bytes); }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  std::size_t bytes;
  char* p;
};

PageGuard& guard() {
  Result<PageGuard*> g = PageGuard::instance();
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return **g;
}

TEST(PageGuard, ReleasedUntouchedTheMemoryIsTheProgramsAgain) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Pages m(3);
  std::memset(m.p, 7, m.bytes);
  const PageGuard::Counters before = g.counters();
  Result<PageGuard::Ticket> t = g.guard(m.p + page, page);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_FALSE(g.touched(*t));
  m.p[0] = 1;               // the pages around are not guarded
  m.p[2 * page] = 2;
  EXPECT_FALSE(g.touched(*t));
  Result<bool> r = g.release(*t);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE(*r);
  m.p[page] = 3;
  EXPECT_EQ(3, m.p[page]);
  EXPECT_EQ(7, m.p[page + 1]);
  EXPECT_EQ(before.guards + 1, g.counters().guards);
  EXPECT_EQ(before.touches, g.counters().touches);
}

TEST(PageGuard, AStoreLiftsTheGuardLandsAndIsReported) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Pages m(4);
  const PageGuard::Counters before = g.counters();
  Result<PageGuard::Ticket> t = g.guard(m.p, 4 * page);
  ASSERT_TRUE(t.ok());
  static_cast<volatile char*>(m.p)[3 * page + 9] = 42;  // faults, lifted, runs again
  EXPECT_EQ(42, m.p[3 * page + 9]);
  EXPECT_TRUE(g.touched(*t));
  m.p[0] = 1;  // the whole range is lifted: no second fault
  EXPECT_EQ(before.touches + 1, g.counters().touches);
  Result<bool> r = g.release(*t);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_EQ(before.foreign_faults, g.counters().foreign_faults);
}

TEST(PageGuard, ALoadIsATouchToo) {
  PageGuard& g = guard();
  Pages m(1);
  m.p[100] = 9;
  Result<PageGuard::Ticket> t = g.guard(m.p, m.bytes);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(9, static_cast<volatile char*>(m.p)[100]);
  EXPECT_TRUE(g.touched(*t));
  // The touching instruction is known (a report names it): in this test's own code.
  const std::uintptr_t site = g.touch_site(*t);
  Dl_info info{};
  ASSERT_NE(0u, site);
  ASSERT_NE(0, dladdr(reinterpret_cast<void*>(site), &info));
  Dl_info self{};
  ASSERT_NE(0, dladdr(reinterpret_cast<void*>(&guard), &self));
  EXPECT_EQ(self.dli_fbase, info.dli_fbase) << "touch site outside the test binary";
  Result<bool> r = g.release(*t);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
}

// A buffer that does not start or end on a page: the pages holding its edges are guarded too,
// so a touch of the bytes next to it counts (never a silent miss).
TEST(PageGuard, EdgePagesOfAnUnalignedBufferAreGuarded) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Pages m(4);
  const PageGuard::Range r = PageGuard::pages_of(m.p + 100, 2 * page);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.p), r.lo);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.p + 3 * page), r.hi);
  Result<PageGuard::Ticket> t = g.guard(m.p + 100, 2 * page);
  ASSERT_TRUE(t.ok());
  m.p[3 * page] = 1;  // past the last guarded page
  EXPECT_FALSE(g.touched(*t));
  static_cast<volatile char*>(m.p)[50] = 1;  // before the buffer, on its first page
  EXPECT_TRUE(g.touched(*t));
  ASSERT_TRUE(g.release(*t).ok());
}

TEST(PageGuard, TicketsOutliveNothing) {
  PageGuard& g = guard();
  Pages m(1);
  Result<PageGuard::Ticket> a = g.guard(m.p, 1);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(g.release(*a).ok());
  Result<bool> again = g.release(*a);
  EXPECT_EQ(Code::kNotFound, again.status().code());
  Result<PageGuard::Ticket> b = g.guard(m.p, 1);  // may reuse the slot: a new version
  ASSERT_TRUE(b.ok());
  static_cast<volatile char*>(m.p)[0] = 1;
  EXPECT_TRUE(g.touched(*b));
  EXPECT_FALSE(g.touched(*a));
  EXPECT_EQ(Code::kNotFound, g.release(*a).status().code());
  Result<bool> rb = g.release(*b);
  ASSERT_TRUE(rb.ok());
  EXPECT_TRUE(*rb);
  EXPECT_EQ(Code::kNotFound, g.release(PageGuard::Ticket{PageGuard::kMaxGuards, 1}).status().code());
}

TEST(PageGuard, BadRangesAreRefusedAndLeaveTheMemoryAlone) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Pages m(2);
  EXPECT_EQ(Code::kInvalidArgument, g.guard(m.p, 0).status().code());
  EXPECT_EQ(Code::kInvalidArgument, g.guard(nullptr, 8).status().code());
  Result<PageGuard::Ticket> t = g.guard(m.p + 10, page);  // both pages
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Code::kInvalidArgument, g.guard(m.p + page + 100, 8).status().code());  // shares page 2
  ASSERT_TRUE(g.release(*t).ok());
  m.p[page + 100] = 1;  // the refused guard protected nothing
}

TEST(PageGuard, AFullTableIsResourceExhausted) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Pages m(PageGuard::kMaxGuards + 1);
  std::vector<PageGuard::Ticket> tickets;
  for (std::size_t i = 0; i < PageGuard::kMaxGuards; ++i) {
    Result<PageGuard::Ticket> t = g.guard(m.p + i * page, page);
    ASSERT_TRUE(t.ok()) << i << ": " << t.status().to_string();
    tickets.push_back(*t);
  }
  Result<PageGuard::Ticket> more = g.guard(m.p + PageGuard::kMaxGuards * page, page);
  EXPECT_EQ(Code::kResourceExhausted, more.status().code());
  m.p[PageGuard::kMaxGuards * page] = 1;  // not guarded
  for (const PageGuard::Ticket& t : tickets) ASSERT_TRUE(g.release(t).ok());
}

// Threads touching guarded pages at once: every access lands, each range counts one touch.
TEST(PageGuard, ThreadsTouchingAtOnceAllContinue) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  constexpr std::size_t kThreads = 4;
  constexpr std::size_t kRanges = 8;
  Pages m(kRanges);
  for (std::size_t round = 0; round < 20; ++round) {
    std::vector<PageGuard::Ticket> tickets;
    for (std::size_t i = 0; i < kRanges; ++i) {
      Result<PageGuard::Ticket> t = g.guard(m.p + i * page, page);
      ASSERT_TRUE(t.ok());
      tickets.push_back(*t);
    }
    const std::uint64_t touches = g.counters().touches;
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < kThreads; ++k) {
      threads.emplace_back([&, k] {
        while (!go.load()) {
        }
        for (std::size_t i = 0; i < kRanges; ++i) static_cast<volatile char*>(m.p)[i * page + k] = static_cast<char>(round + k);
      });
    }
    go = true;
    for (std::thread& t : threads) t.join();
    for (std::size_t i = 0; i < kRanges; ++i) {
      for (std::size_t k = 0; k < kThreads; ++k) ASSERT_EQ(static_cast<char>(round + k), m.p[i * page + k]);
      EXPECT_TRUE(g.touched(tickets[i]));
      Result<bool> r = g.release(tickets[i]);
      ASSERT_TRUE(r.ok());
      EXPECT_TRUE(*r);
    }
    EXPECT_EQ(touches + kRanges, g.counters().touches);
  }
}

// Waiting guards (guard_until_landed: early release). The pages are filled through a second
// mapping of the same memory, as a NIC writes past the CPU's page protection.
struct Aliased {
  explicit Aliased(std::size_t n)
      : bytes(n * PageGuard::page_size()), fd(memfd_create("page_guard_test", 0)) {
    EXPECT_EQ(0, ftruncate(fd, static_cast<off_t>(bytes)));
    view = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    nic = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  }
  ~Aliased() {
    munmap(view, bytes);
    munmap(nic, bytes);
    close(fd);
  }
  Aliased(const Aliased&) = delete;
  Aliased& operator=(const Aliased&) = delete;
  std::size_t bytes;
  int fd;
  char* view = nullptr;
  char* nic = nullptr;
};

// A waiter that "receives" the data on its n-th call and lands it.
struct Landing {
  PageGuard* g = nullptr;
  PageGuard::Ticket t{};
  char* to = nullptr;
  std::size_t len = 0;
  int land_at = 1;
  int calls = 0;
  static void wait(void* arg) noexcept {
    auto* l = static_cast<Landing*>(arg);
    if (++l->calls != l->land_at) return;
    std::memset(l->to, 0x5a, l->len);
    (void)l->g->land(l->t);
  }
};

TEST(PageGuard, AWaitingGuardHoldsATouchUntilItsDataLands) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Aliased m(4);
  std::memset(m.view, 1, m.bytes);
  Landing l{.g = &g, .to = m.nic + page, .len = 2 * page, .land_at = 3};
  Result<PageGuard::Ticket> t = g.guard_until_landed(m.view + page, 2 * page, &Landing::wait, &l);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  l.t = *t;
  const PageGuard::Counters before = g.counters();
  const char got = static_cast<volatile char*>(m.view)[2 * page + 9];  // waits for three calls
  EXPECT_EQ(0x5a, got);
  EXPECT_EQ(3, l.calls);
  EXPECT_EQ(before.waits + 1, g.counters().waits);
  EXPECT_EQ(before.touches, g.counters().touches);  // a wait is not a touch that lifts a guard
  EXPECT_EQ(0x5a, m.view[page]);
  EXPECT_EQ(1, m.view[0]);  // the pages around it were never guarded
  EXPECT_EQ(1, m.view[3 * page]);
  EXPECT_EQ(Code::kNotFound, g.land(*t).code());  // landed once
  static_cast<volatile char*>(m.view)[page] = 3;  // read-write again, no fault
  EXPECT_EQ(before.waits + 1, g.counters().waits);
}

TEST(PageGuard, AWaitingGuardLandedBeforeATouchCostsNoFault) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Aliased m(2);
  Landing l{.g = &g};
  Result<PageGuard::Ticket> t = g.guard_until_landed(m.view, 2 * page, &Landing::wait, &l);
  ASSERT_TRUE(t.ok());
  std::memset(m.nic, 9, m.bytes);
  const std::uint64_t waits = g.counters().waits;
  ASSERT_TRUE(g.land(*t).ok());
  EXPECT_EQ(9, static_cast<volatile char*>(m.view)[page + 1]);
  EXPECT_EQ(0, l.calls);
  EXPECT_EQ(waits, g.counters().waits);
}

TEST(PageGuard, AWaitingGuardCoversWholePagesAndIsLiftedOnlyByLanding) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Aliased m(3);
  EXPECT_EQ(Code::kInvalidArgument, g.guard_until_landed(m.view + 1, page, nullptr, nullptr).status().code());
  EXPECT_EQ(Code::kInvalidArgument, g.guard_until_landed(m.view, page + 1, nullptr, nullptr).status().code());
  Result<PageGuard::Ticket> t = g.guard_until_landed(m.view, page, nullptr, nullptr);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Code::kInvalidArgument, g.release(*t).status().code());  // not a guard a touch may lift
  EXPECT_FALSE(g.touched(*t));
  EXPECT_EQ(Code::kInvalidArgument, g.guard(m.view, 1).status().code());  // its page is taken
  ASSERT_TRUE(g.land(*t).ok());
  m.view[0] = 1;
}

TEST(PageGuard, AThreadWaitsWhileAnotherLands) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Aliased m(1);
  Result<PageGuard::Ticket> t = g.guard_until_landed(m.view, page, nullptr, nullptr);  // no waiter: it yields
  ASSERT_TRUE(t.ok());
  std::atomic<int> seen{-1};
  std::thread reader([&] { seen = static_cast<volatile char*>(m.view)[100]; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(-1, seen.load());  // still waiting: nothing landed
  std::memset(m.nic, 77, page);
  ASSERT_TRUE(g.land(*t).ok());
  reader.join();
  EXPECT_EQ(77, seen.load());
}

// Write guards (guard_writes_until_landed: early release of a send, whose pages the NIC is still
// reading): loads go on untouched, a store waits until the owner lands the guard.
TEST(PageGuard, AWriteGuardLetsLoadsThroughAndHoldsAStoreUntilLanded) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Aliased m(3);
  std::memset(m.view, 4, m.bytes);
  Landing l{.g = &g, .to = m.nic, .len = 0, .land_at = 2};  // lands on its second call, moving nothing
  Result<PageGuard::Ticket> t = g.guard_writes_until_landed(m.view + page, page, &Landing::wait, &l);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  l.t = *t;
  const std::uint64_t waits = g.counters().waits;
  EXPECT_EQ(4, static_cast<volatile char*>(m.view)[page + 7]);  // a load: no fault, no wait
  EXPECT_EQ(0, l.calls);
  EXPECT_EQ(waits, g.counters().waits);
  static_cast<volatile char*>(m.view)[page + 7] = 8;  // a store: waits for two calls, then lands
  EXPECT_EQ(2, l.calls);
  EXPECT_EQ(waits + 1, g.counters().waits);
  EXPECT_EQ(8, m.nic[page + 7]);  // the store happened once the guard was gone
  EXPECT_EQ(4, m.nic[page + 6]);
  EXPECT_EQ(Code::kNotFound, g.land(*t).code());
  EXPECT_EQ(Code::kInvalidArgument, g.guard_writes_until_landed(m.view + 1, page, nullptr, nullptr).status().code());
}

TEST(PageGuard, AwaitLandedWaitsOnlyForWaitingGuardsItOverlaps) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  Aliased m(4);
  Result<PageGuard::Ticket> t = g.guard_writes_until_landed(m.view + 2 * page, page, nullptr, nullptr);
  ASSERT_TRUE(t.ok());
  Result<bool> apart = g.await_landed(m.view, 2 * page);  // the pages before it: nothing to wait for
  ASSERT_TRUE(apart.ok());
  EXPECT_FALSE(*apart);
  std::atomic<bool> landed{false};
  std::thread owner([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    landed = true;
    EXPECT_TRUE(g.land(*t).ok());
  });
  Result<bool> over = g.await_landed(m.view + page, 2 * page);  // overlaps it: waits for the owner
  owner.join();
  ASSERT_TRUE(over.ok());
  EXPECT_TRUE(*over);
  EXPECT_TRUE(landed.load());
  m.view[2 * page] = 1;  // read-write again
}

// Memory given back while a guard waits for its data (a released send's buffer freed, or
// munmap'd, the moment MPI_Send returns): the call waits until it has landed, so a device that
// works on virtual addresses never reads or writes the memory's next owner.
TEST(PageGuard, MemoryGivenBackWaitsForTheDataOfItsWaitingGuards) {
  PageGuard& g = guard();
  const std::size_t page = PageGuard::page_size();
  const bool by_free = std::strcmp(nic::release_tracking(), "sanitizer-free-hook") == 0;
  if (!by_free) {
    ASSERT_STREQ("malloc-hooks", nic::release_tracking());
  }
  void* mem = nullptr;
  if (by_free) {
    ASSERT_EQ(0, posix_memalign(&mem, page, 3 * page));  // a sanitizer's allocator unmaps or reuses it at once
  } else {
    mem = mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, mem);
  }
  auto* p = static_cast<char*>(mem);
  Result<PageGuard::Ticket> t = g.guard_writes_until_landed(p + page, page, nullptr, nullptr);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  std::atomic<bool> landed{false};
  std::thread owner([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    landed = true;
    EXPECT_TRUE(g.land(*t).ok());
  });
  if (by_free) {
    std::free(mem);
  } else {
    EXPECT_EQ(0, munmap(mem, 3 * page));
  }
  EXPECT_TRUE(landed.load()) << (by_free ? "free" : "munmap") << " returned before the guard's data landed";
  owner.join();
  // Memory no guard holds goes back at once (the gate's fast path).
  void* other = nullptr;
  ASSERT_EQ(0, posix_memalign(&other, page, page));
  std::free(other);
}

struct Child {
  int status = 0;
  std::string out;
};

Child run_child(const char* scenario) {
  int fds[2];
  EXPECT_EQ(0, pipe(fds));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid = 0;
  char* argv[] = {const_cast<char*>(AUGUR_TEST_PAGE_GUARD_CHILD), const_cast<char*>(scenario), nullptr};
  const int rc = posix_spawn(&pid, AUGUR_TEST_PAGE_GUARD_CHILD, &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  Child c;
  EXPECT_EQ(0, rc) << std::strerror(rc);
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) c.out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  EXPECT_EQ(pid, waitpid(pid, &c.status, 0));
  return c;
}

TEST(PageGuard, TheProgramsHandlerInstalledBeforeGetsItsOwnFaults) {
  const Child c = run_child("before");
  EXPECT_TRUE(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) << c.out;
  EXPECT_NE(std::string::npos, c.out.find("before: ok")) << c.out;
}

TEST(PageGuard, TheProgramsHandlerInstalledAfterIsChainedBehindTheGuard) {
  const Child c = run_child("after");
  EXPECT_TRUE(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) << c.out;
  EXPECT_NE(std::string::npos, c.out.find("after: ok")) << c.out;
}

TEST(PageGuard, ATouchOfDataThatWillNotComeEndsTheProcessWithTheReason) {
  const Child c = run_child("lost");
  EXPECT_NE(std::string::npos, c.out.find("lost: touching")) << c.out;
  EXPECT_NE(std::string::npos, c.out.find("augur: page_guard_child: the data of this page will not come")) << c.out;
  EXPECT_EQ(std::string::npos, c.out.find("survived")) << c.out;
  EXPECT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT) << c.status;
}

TEST(PageGuard, WithoutAProgramHandlerAForeignFaultStillEndsTheProcess) {
  const Child c = run_child("none");
  EXPECT_NE(std::string::npos, c.out.find("none: faulting")) << c.out;
  EXPECT_EQ(std::string::npos, c.out.find("survived")) << c.out;
  EXPECT_FALSE(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
#if !AUGUR_SANITIZED
  EXPECT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGSEGV) << c.status;  // sanitizers report it their way
#endif
}

}  // namespace
}  // namespace augur::host
