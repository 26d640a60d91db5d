/* Bad input under MPI_ERRORS_RETURN returns the right error class (and never crashes or hangs);
 * a user error handler is called with the class; Error_string/Error_class. The fatal default
 * is tested by mpi_fatal.sh. */
#include <string.h>

#include "check.h"

static int cls(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

#define EXPECT_CLASS(call, want)                                                           \
  do {                                                                                     \
    const int rc_ = (call);                                                                \
    CHECK(cls(rc_) == (want), "%s returned class %d, expected %s", #call, cls(rc_), #want); \
  } while (0)

static int g_handler_calls, g_handler_class;
static void handler(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++g_handler_calls;
  g_handler_class = *code;
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  CHECK(eh == MPI_ERRORS_RETURN, "get_errhandler");
  int x[4] = {0}, flag = 0;
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status st;

  EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, g_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Recv(x, 1, MPI_INT, g_size + 3, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Send(x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, 0, -3, MPI_COMM_WORLD), MPI_ERR_TAG);
  EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
  /* A failed start leaves MPI_REQUEST_NULL, not a stale handle a later wait would act on. */
  req = 12345;
  EXPECT_CLASS(MPI_Irecv(x, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
  CHECK(req == MPI_REQUEST_NULL, "a failed MPI_Irecv left request %d", (int)req);
  req = 12345;
  EXPECT_CLASS(MPI_Isend(x, 1, MPI_INT, g_size, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
  CHECK(req == MPI_REQUEST_NULL, "a failed MPI_Isend left request %d", (int)req);
  EXPECT_CLASS(MPI_Wait(&req, &st), MPI_SUCCESS);
  EXPECT_CLASS(MPI_Send(x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Send(x, 1, 12345, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Send(NULL, 3, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Send(x, 1, MPI_INT, 0, 0, 777), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
  MPI_Datatype v;
  MPI_Type_vector(2, 1, 2, MPI_INT, &v);
  EXPECT_CLASS(MPI_Send(x, 1, v, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE); /* not committed */
  MPI_Type_free(&v);
  EXPECT_CLASS(MPI_Type_free(&v), MPI_ERR_TYPE);
  MPI_Datatype pre = MPI_INT;
  EXPECT_CLASS(MPI_Type_free(&pre), MPI_ERR_TYPE);
  MPI_Request bad = 9999;
  EXPECT_CLASS(MPI_Wait(&bad, &st), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Test(&bad, &flag, &st), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Request_free(&req), MPI_ERR_REQUEST); /* MPI_REQUEST_NULL */
  EXPECT_CLASS(MPI_Bcast(x, 1, MPI_INT, g_size, MPI_COMM_WORLD), MPI_ERR_ROOT);
  EXPECT_CLASS(MPI_Reduce(x, x + 1, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
  EXPECT_CLASS(MPI_Allreduce(x, x + 1, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Allreduce(x, x + 1, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Allreduce(x, x + 1, 1, MPI_INT, MPI_MINLOC, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Comm_split(MPI_COMM_WORLD, -4, 0, NULL), MPI_ERR_ARG);
  int coords[2];
  EXPECT_CLASS(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, coords), MPI_ERR_TOPOLOGY);
  int dims[2] = {g_size + 1, 1}, periods[2] = {0, 0};
  MPI_Comm cart;
  EXPECT_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart), MPI_ERR_DIMS);
  MPI_Group g;
  const int twice[2] = {0, 0};
  MPI_Comm_group(MPI_COMM_WORLD, &g);
  EXPECT_CLASS(MPI_Group_incl(g, 2, twice, &g), MPI_ERR_RANK);
  MPI_Group_free(&g);
  EXPECT_CLASS(MPI_Group_size(MPI_GROUP_NULL, &flag), MPI_ERR_GROUP);
  char small[4];
  int pos = 0;
  EXPECT_CLASS(MPI_Pack(x, 4, MPI_INT, small, sizeof small, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  EXPECT_CLASS(MPI_Dims_create(7, 2, (int[]){2, 0}), MPI_ERR_DIMS);

  /* Mismatched collective counts: the receiving side reports MPI_ERR_TRUNCATE, nobody hangs. */
  if (g_size > 1) {
    int big[8] = {0};
    const int rc = MPI_Bcast(big, g_rank == 0 ? 8 : 2, MPI_INT, 0, MPI_COMM_WORLD);
    /* The ranks that receive from the root see it; the rest of the tree gets their 2 ints. */
    CHECK(rc == MPI_SUCCESS || cls(rc) == MPI_ERR_TRUNCATE, "mismatched bcast returned class %d", cls(rc));
    int saw = cls(rc) == MPI_ERR_TRUNCATE, any = 0;
    MPI_Allreduce(&saw, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(any == 1, "no rank reported the mismatched bcast");
  }

  /* The communicator was fine all along: a normal call still works. */
  int one = 1, sum = 0;
  CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && sum == g_size, "allreduce after errors");

  /* A user handler is called with the error class. */
  MPI_Errhandler mine;
  MPI_Comm_create_errhandler(handler, &mine);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine);
  const int rc = MPI_Send(x, 1, MPI_INT, g_size, 0, MPI_COMM_WORLD);
  CHECK(g_handler_calls == 1 && g_handler_class == MPI_ERR_RANK && cls(rc) == MPI_ERR_RANK, "user handler: %d calls, class %d",
        g_handler_calls, g_handler_class);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&mine);

  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(MPI_ERR_TRUNCATE, text, &len);
  CHECK(len > 0 && strstr(text, "truncat") != NULL, "error string '%s'", text);
  CHECK(cls(MPI_ERR_LASTCODE) == MPI_ERR_LASTCODE, "error_class of the last code");
  int version = 0, sub = 0;
  MPI_Get_version(&version, &sub);
  CHECK(version == 3 && sub == 1, "version %d.%d", version, sub);
  int* tag_ub = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  CHECK(flag && *tag_ub >= 32767, "tag_ub");
  void* mem = NULL;
  CHECK(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem) == MPI_SUCCESS && mem != NULL, "alloc_mem");
  memset(mem, 1, 1 << 20);
  MPI_Free_mem(mem);
  return finish("errors");
}
