/* A SIGSEGV handler of the program's own, for the tests that run beside augur's page guard
 * (early.c, release.c): own_fault_install() maps a page and installs the handler (after
 * MPI_Init, so it goes in behind augur's); own_fault() protects the page and touches it, and the
 * handler opens it again and counts. A fault elsewhere is not the program's: it faults again and
 * dies. */
#ifndef AUGUR_MPI_OWN_FAULT_H
#define AUGUR_MPI_OWN_FAULT_H
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char* g_own_page;
static long g_page;
static volatile sig_atomic_t g_own_faults;

static void own_handler(int sig, siginfo_t* info, void* uc) {
  (void)sig, (void)uc;
  char* a = (char*)info->si_addr;
  if (a >= g_own_page && a < g_own_page + g_page) {
    ++g_own_faults;
    mprotect(g_own_page, (size_t)g_page, PROT_READ | PROT_WRITE);
    return;
  }
  signal(SIGSEGV, SIG_DFL); /* not ours: fault again and die */
}

static void own_fault_install(void) {
  g_page = sysconf(_SC_PAGESIZE);
  g_own_page = mmap(NULL, (size_t)g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = own_handler;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
}

static void own_fault(void) {
  mprotect(g_own_page, (size_t)g_page, PROT_NONE);
  ((volatile char*)g_own_page)[0] = 1;
}

static void own_fault_remove(void) { munmap(g_own_page, (size_t)g_page); }
#endif
