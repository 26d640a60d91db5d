/* libaugur_trace: a PMPI interposer that records every MPI_Recv/MPI_Irecv (C and Fortran
 * mpif.h/use mpi entry points) of a rank into an augur trace (docs/trace-format.md).
 *
 *   LD_PRELOAD=libaugur_trace.so AUGUR_TRACE_DIR=out mpirun ... ./app
 *
 * Only the standard MPI API is used, so the same source compiles against any mpi.h (Open MPI
 * pointer handles, MPICH int handles, augur's own shim): add one target per implementation. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AUGUR_EXPORT __attribute__((visibility("default")))
#define MAX_HANDLES 1024

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* MPI_THREAD_MULTIPLE programs */
static FILE* g_out;
static int g_failed;          /* could not open the trace: record nothing, never fail the app */
static __thread int g_inside; /* a Fortran wrapper is calling: the C wrapper must not record */

/* Datatype and communicator handles become small integers, stable per handle within a rank.
 * A handle's bytes are the key, whatever its type (pointer or int). */
struct handle_table {
  uint64_t keys[MAX_HANDLES];
  unsigned n;
};
static struct handle_table g_types, g_comms;

static unsigned handle_index(struct handle_table* t, const void* handle, size_t size) {
  uint64_t key = 0;
  memcpy(&key, handle, size < sizeof key ? size : sizeof key);
  for (unsigned i = 0; i < t->n; ++i) {
    if (t->keys[i] == key) return i;
  }
  if (t->n == MAX_HANDLES) return MAX_HANDLES; /* shared overflow index, still valid */
  t->keys[t->n] = key;
  return t->n++;
}

static void close_trace(void) {
  if (g_out != NULL) {
    fclose(g_out);
    g_out = NULL;
  }
}

/* The implementation this copy was compiled for. Its handle types (an int in augur and MPICH, a
 * pointer in Open MPI) are those of every wrapper's signature, so under another MPI the wrappers
 * would truncate the program's handles on their way through: the first MPI_Recv crashes. */
#if defined(AUGUR_MPI)
#define EXPECTED_MPI "augur"
#define EXPECTED_LIB "libaugur_trace_mpi.so"
#elif defined(OMPI_MAJOR_VERSION)
#define EXPECTED_MPI "Open MPI"
#define EXPECTED_LIB "libaugur_trace.so built against Open MPI"
#elif defined(MPICH_VERSION)
#define EXPECTED_MPI "MPICH"
#define EXPECTED_LIB "libaugur_trace.so built against MPICH"
#endif

/* At load, before the program's first MPI call: MPI_Get_library_version may be called before
 * MPI_Init. A process without MPI (mpirun itself, a shell under LD_PRELOAD) is left alone. */
__attribute__((constructor)) static void check_mpi(void) {
#ifdef EXPECTED_MPI
  void* f = dlsym(RTLD_NEXT, "PMPI_Get_library_version");
  if (f == NULL) return;
  int (*get_version)(char*, int*);
  memcpy(&get_version, &f, sizeof get_version);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  get_version(version, &len);
  if (strstr(version, EXPECTED_MPI) != NULL) return;
  fprintf(stderr,
          "augur_trace: this recorder is built for %s's mpi.h (%s), but the program runs \"%.*s\"; "
          "its handles would be corrupted. Preload the recorder built for that MPI "
          "(docs/trace-format.md). Exiting.\n",
          EXPECTED_MPI, EXPECTED_LIB, (int)strcspn(version, ",\n"), version);
  _exit(2);
#endif
}

static int open_trace(void) {
  if (g_out != NULL) return 1;
  if (g_failed) return 0;
  int ready = 0;
  PMPI_Initialized(&ready);
  if (!ready) return 0;
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* dir = getenv("AUGUR_TRACE_DIR");
  const char* prefix = getenv("AUGUR_TRACE_PREFIX");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%d.txt", dir != NULL && dir[0] != '\0' ? dir : ".",
           prefix != NULL && prefix[0] != '\0' ? prefix : "augur-trace", rank);
  g_out = fopen(path, "w");
  if (g_out == NULL) {
    g_failed = 1;
    fprintf(stderr, "augur_trace: rank %d: cannot write %s, not recording\n", rank, path);
    return 0;
  }
  static char buf[1 << 16];
  setvbuf(g_out, buf, _IOFBF, sizeof buf);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  PMPI_Get_library_version(version, &len);
  /* The first word of the library version, e.g. "Open", "MPICH": no spaces in key=value. */
  size_t w = strcspn(version, " \t\n");
  fprintf(g_out, "# augur-trace 1\n# rank %d size %d pid=%ld mpi=%.*s\n", rank, size,
          (long)getpid(), (int)w, version);
  atexit(close_trace);
  return 1;
}

static void record(const char* call, const void* buf, int count, MPI_Datatype type, int source,
                   int tag, MPI_Comm comm, const void* site) {
  if (source == MPI_PROC_NULL) return; /* a PROC_NULL receive is a no-op */
  pthread_mutex_lock(&g_lock);
  if (!open_trace()) {
    pthread_mutex_unlock(&g_lock);
    return;
  }
  fprintf(g_out, "%s %d %d %d %u 0x%llx %u 0x%llx\n", call,
          source == MPI_ANY_SOURCE ? -1 : source, tag == MPI_ANY_TAG ? -1 : tag, count,
          handle_index(&g_types, &type, sizeof type), (unsigned long long)(uintptr_t)buf,
          handle_index(&g_comms, &comm, sizeof comm), (unsigned long long)(uintptr_t)site);
  pthread_mutex_unlock(&g_lock);
}

AUGUR_EXPORT int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag,
                          MPI_Comm comm, MPI_Status* status) {
  if (!g_inside) record("recv", buf, count, type, source, tag, comm, __builtin_return_address(0));
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

AUGUR_EXPORT int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                           MPI_Comm comm, MPI_Request* request) {
  if (!g_inside) record("irecv", buf, count, type, source, tag, comm, __builtin_return_address(0));
  return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

AUGUR_EXPORT int MPI_Finalize(void) {
  pthread_mutex_lock(&g_lock);
  close_trace();
  pthread_mutex_unlock(&g_lock);
  return PMPI_Finalize();
}

/* Fortran (gfortran's trailing underscore). The implementation's own Fortran binding is found
 * with RTLD_NEXT: it may call PMPI_Recv (Open MPI) or MPI_Recv, hence g_inside. */
typedef void (*fortran_recv_fn)(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
                                MPI_Fint*, MPI_Fint*);

static fortran_recv_fn next_fortran(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == NULL) {
    fprintf(stderr, "augur_trace: %s not found in the MPI library\n", name);
    abort();
  }
  fortran_recv_fn fn;
  memcpy(&fn, &f, sizeof fn); /* object to function pointer without a cast warning */
  return fn;
}

static void fortran_recv(const char* call, const char* next, void* buf, MPI_Fint* count,
                         MPI_Fint* type, MPI_Fint* source, MPI_Fint* tag, MPI_Fint* comm,
                         MPI_Fint* out, MPI_Fint* ierr, const void* site) {
  record(call, buf, (int)*count, MPI_Type_f2c(*type), (int)*source, (int)*tag,
         MPI_Comm_f2c(*comm), site);
  g_inside = 1;
  next_fortran(next)(buf, count, type, source, tag, comm, out, ierr);
  g_inside = 0;
}

AUGUR_EXPORT void mpi_recv_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* source,
                            MPI_Fint* tag, MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierr) {
  fortran_recv("recv", "mpi_recv_", buf, count, type, source, tag, comm, status, ierr,
               __builtin_return_address(0));
}

AUGUR_EXPORT void mpi_irecv_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* source,
                             MPI_Fint* tag, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  fortran_recv("irecv", "mpi_irecv_", buf, count, type, source, tag, comm, request, ierr,
               __builtin_return_address(0));
}
