// One scenario of PageGuard in a fresh process, for page_guard_test (which spawns it and checks
// its exit): how the guard's SIGSEGV handler lives with the program's own.
//   before: the program's handler is installed first, then the guard's;
//   after:  the guard's first, then the program's (guard() chains it back);
//   none:   no program handler: a fault that is not the guard's must end the process by SIGSEGV;
//   lost:   a waiting guard whose data will not come (fail()): a touch ends the process with the
//           reason on stderr, rather than wait forever or read what is there.
// Prints what it saw; exits 0 when everything went as expected, 1 otherwise.
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>

#include "augur/host/page_guard.h"

using augur::host::PageGuard;

namespace {

sigjmp_buf g_jump;
volatile sig_atomic_t g_program_faults = 0;

void program_handler(int /*sig*/, siginfo_t* /*info*/, void* /*uc*/) {
  g_program_faults = g_program_faults + 1;
  siglongjmp(g_jump, 1);
}

void install_program_handler() {
  struct sigaction sa{};
  sa.sa_sigaction = program_handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, nullptr);
}

// A page no guard knows: touching it is the program's own fault.
volatile char* foreign_page() {
  void* p = mmap(nullptr, PageGuard::page_size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<volatile char*>(p);
}

#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "page_guard_child: failed: %s\n", #cond);   \
      return 1;                                                        \
    }                                                                  \
  } while (0)

int both_handlers(bool program_first) {
  if (program_first) install_program_handler();
  augur::Result<PageGuard*> g = PageGuard::instance();
  EXPECT(g.ok());
  if (!program_first) install_program_handler();  // replaces the guard's handler
  const std::size_t page = PageGuard::page_size();
  auto* buf = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  EXPECT(buf != MAP_FAILED);
  augur::Result<PageGuard::Ticket> t = (*g)->guard(buf, 2 * page);  // puts its handler back first
  EXPECT(t.ok());
  EXPECT((*g)->counters().rechained == (program_first ? 0u : 1u));
  // The guard's fault: lifted, the store lands, the program's handler never sees it.
  static_cast<volatile char*>(buf)[page + 5] = 42;
  EXPECT(buf[page + 5] == 42);
  EXPECT((*g)->touched(*t));
  EXPECT(g_program_faults == 0);
  // The program's own fault reaches its handler, through the guard's.
  volatile char* f = foreign_page();
  EXPECT(f != nullptr);
  if (sigsetjmp(g_jump, 1) == 0) {
    f[0] = 1;
    EXPECT(false);  // not reached: the program's handler jumps back
  }
  EXPECT(g_program_faults == 1);
  EXPECT((*g)->counters().foreign_faults == 1);
  augur::Result<bool> r = (*g)->release(*t);
  EXPECT(r.ok() && *r);
  std::printf("page_guard_child: %s: ok\n", program_first ? "before" : "after");
  return 0;
}

int no_handler() {
  augur::Result<PageGuard*> g = PageGuard::instance();
  EXPECT(g.ok());
  volatile char* f = foreign_page();
  EXPECT(f != nullptr);
  std::printf("page_guard_child: none: faulting\n");
  std::fflush(stdout);
  f[0] = 1;  // must end the process
  std::printf("page_guard_child: none: survived a fault\n");
  return 1;
}

int lost() {
  augur::Result<PageGuard*> g = PageGuard::instance();
  EXPECT(g.ok());
  const std::size_t page = PageGuard::page_size();
  auto* buf = static_cast<char*>(mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  EXPECT(buf != MAP_FAILED);
  augur::Result<PageGuard::Ticket> t = (*g)->guard_until_landed(buf, page, nullptr, nullptr);
  EXPECT(t.ok());
  (*g)->fail(*t, "page_guard_child: the data of this page will not come");
  std::printf("page_guard_child: lost: touching\n");
  std::fflush(stdout);
  std::printf("%d\n", static_cast<volatile char*>(buf)[7]);  // must end the process
  std::printf("page_guard_child: lost: survived the touch\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "before") == 0) return both_handlers(true);
  if (argc == 2 && std::strcmp(argv[1], "after") == 0) return both_handlers(false);
  if (argc == 2 && std::strcmp(argv[1], "none") == 0) return no_handler();
  if (argc == 2 && std::strcmp(argv[1], "lost") == 0) return lost();
  std::fprintf(stderr, "usage: page_guard_child before|after|none|lost\n");
  return 2;
}
