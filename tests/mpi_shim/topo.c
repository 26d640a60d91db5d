/* Graph and distributed-graph topologies, MPI_Comm_split_type, and the neighbourhood
 * collectives (blocking and nonblocking) on cartesian, graph and distributed-graph
 * communicators, each checked against the neighbour lists MPI-3.1 7.6 defines: cartesian
 * neighbours per dimension negative then positive, MPI_PROC_NULL edges leaving their blocks
 * untouched, a periodic pair that are neighbours twice receiving each message in its own slot. */
#include <string.h>

#include "check.h"

static void cart_neighbors(void) {
  /* A periodic ring: with 2 ranks, left and right are the same rank. */
  MPI_Comm ring;
  int dims[1] = {g_size}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  int send[2] = {100 * g_rank + 0, 100 * g_rank + 1}, recv[2] = {-1, -1};
  MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, ring);
  /* Slot 0 (negative neighbour) gets what it sent towards its positive side, and vice versa. */
  CHECK(recv[0] == 100 * left + 1 && recv[1] == 100 * right + 0, "ring alltoall: %d %d", recv[0], recv[1]);
  int all[2] = {-1, -1};
  MPI_Request rq;
  MPI_Ineighbor_allgather(&g_rank, 1, MPI_INT, all, 1, MPI_INT, ring, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(all[0] == left && all[1] == right, "ring ineighbor_allgather: %d %d", all[0], all[1]);
  MPI_Comm_free(&ring);
  /* A non-periodic 2-D grid: edge neighbours are MPI_PROC_NULL and their blocks stay as they were. */
  int d2[2] = {0, 0}, p2[2] = {0, 0};
  MPI_Dims_create(g_size, 2, d2);
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &grid);
  int nb[4], got[4] = {-7, -7, -7, -7};
  MPI_Cart_shift(grid, 0, 1, &nb[0], &nb[1]);
  MPI_Cart_shift(grid, 1, 1, &nb[2], &nb[3]);
  MPI_Neighbor_allgather(&g_rank, 1, MPI_INT, got, 1, MPI_INT, grid);
  int ok = 1;
  for (int k = 0; k < 4; ++k) ok &= nb[k] == MPI_PROC_NULL ? got[k] == -7 : got[k] == nb[k];
  CHECK(ok, "grid %dx%d allgather: %d %d %d %d", d2[0], d2[1], got[0], got[1], got[2], got[3]);
  MPI_Comm_free(&grid);
}

static void graph_topology(void) {
  /* An undirected ring as a graph: neighbours left and right (one of them if 2 ranks). */
  int* index = malloc(sizeof(int) * (size_t)g_size);
  int* edges = malloc(sizeof(int) * (size_t)(2 * g_size));
  int e = 0;
  for (int r = 0; r < g_size; ++r) {
    edges[e++] = (r + g_size - 1) % g_size;
    if (g_size > 2) edges[e++] = (r + 1) % g_size;
    index[r] = e;
  }
  MPI_Comm g;
  MPI_Graph_create(MPI_COMM_WORLD, g_size, index, edges, 0, &g);
  int status = -1, nn = -1, ne = -1, cnt = -1, nbrs[2] = {-1, -1};
  MPI_Topo_test(g, &status);
  MPI_Graphdims_get(g, &nn, &ne);
  MPI_Graph_neighbors_count(g, g_rank, &cnt);
  MPI_Graph_neighbors(g, g_rank, 2, nbrs);
  const int want = g_size > 2 ? 2 : 1;
  CHECK(status == MPI_GRAPH && nn == g_size && ne == e && cnt == want && nbrs[0] == (g_rank + g_size - 1) % g_size,
        "graph: topo %d, %d nodes, %d edges, %d neighbours", status, nn, ne, cnt);
  int got[2] = {-1, -1};
  MPI_Neighbor_allgather(&g_rank, 1, MPI_INT, got, 1, MPI_INT, g);
  CHECK(got[0] == nbrs[0] && (want == 1 || got[1] == nbrs[1]), "graph allgather: %d %d", got[0], got[1]);
  MPI_Comm d;
  MPI_Comm_dup(g, &d);
  MPI_Topo_test(d, &status);
  CHECK(status == MPI_GRAPH, "dup keeps the graph");
  MPI_Comm_free(&d);
  MPI_Comm_free(&g);
  free(index);
  free(edges);
}

static void dist_graphs(void) {
  /* Adjacent: rank r sends to r+1 and r+2, receives from r-1 and r-2 (weights = distance). */
  const int n = g_size;
  int src[2] = {(g_rank + n - 1) % n, (g_rank + n - 2) % n}, dst[2] = {(g_rank + 1) % n, (g_rank + 2) % n};
  int sw[2] = {1, 2}, dw[2] = {1, 2};
  MPI_Comm dg;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &dg);
  int status = -1, indeg = -1, outdeg = -1, weighted = -1;
  MPI_Topo_test(dg, &status);
  MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
  int s2[2], w2[2], d2[2], dw2[2];
  MPI_Dist_graph_neighbors(dg, 2, s2, w2, 2, d2, dw2);
  CHECK(status == MPI_DIST_GRAPH && indeg == 2 && outdeg == 2 && weighted == 1 && s2[1] == src[1] && w2[1] == 2 &&
            d2[0] == dst[0] && dw2[0] == 1,
        "dist graph adjacent: topo %d in %d out %d weighted %d", status, indeg, outdeg, weighted);
  /* alltoallv: block j (j+1 ints) to destination j; from source i, i+1 ints. */
  int sbuf[3] = {g_rank * 10, g_rank * 10 + 1, g_rank * 10 + 2}, scounts[2] = {1, 2}, sdispls[2] = {0, 1};
  int rbuf[3] = {-1, -1, -1}, rcounts[2] = {1, 2}, rdispls[2] = {0, 1};
  MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, dg);
  /* From source 0 (r-1): its block 0 = (r-1)*10; from source 1 (r-2): its block 1 = (r-2)*10+1, +2. */
  CHECK(rbuf[0] == src[0] * 10 && rbuf[1] == src[1] * 10 + 1 && rbuf[2] == src[1] * 10 + 2,
        "dist graph alltoallv: %d %d %d", rbuf[0], rbuf[1], rbuf[2]);
  /* alltoallw with byte displacements, nonblocking. */
  MPI_Aint sb[2] = {0, sizeof(int)}, rb[2] = {0, sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  int one[2] = {1, 1};
  memset(rbuf, 0xff, sizeof rbuf);
  MPI_Request rq;
  MPI_Ineighbor_alltoallw(sbuf, one, sb, types, rbuf, one, rb, types, dg, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(rbuf[0] == src[0] * 10 && rbuf[1] == src[1] * 10 + 1, "dist graph ialltoallw: %d %d", rbuf[0], rbuf[1]);
  MPI_Comm_free(&dg);
  /* The general constructor: rank 0 names every edge r -> r+1 (weight r); each rank learns its own. */
  int* srcs = malloc(sizeof(int) * (size_t)n);
  int* degs = malloc(sizeof(int) * (size_t)n);
  int* dsts = malloc(sizeof(int) * (size_t)n);
  int* wts = malloc(sizeof(int) * (size_t)n);
  for (int r = 0; r < n; ++r) {
    srcs[r] = r;
    degs[r] = 1;
    dsts[r] = (r + 1) % n;
    wts[r] = r;
  }
  MPI_Dist_graph_create(MPI_COMM_WORLD, g_rank == 0 ? n : 0, srcs, degs, dsts, wts, MPI_INFO_NULL, 0, &dg);
  MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
  int in1 = -1, inw = -1, out1 = -1, outw = -1;
  MPI_Dist_graph_neighbors(dg, 1, &in1, &inw, 1, &out1, &outw);
  const int left = (g_rank + n - 1) % n;
  CHECK(indeg == 1 && outdeg == 1 && in1 == left && inw == left && out1 == (g_rank + 1) % n && outw == g_rank,
        "dist graph: in %d (%d, w %d) out %d (%d, w %d)", indeg, in1, inw, outdeg, out1, outw);
  int x = -1;
  MPI_Neighbor_allgather(&g_rank, 1, MPI_INT, &x, 1, MPI_INT, dg);
  CHECK(x == left, "dist graph allgather from the left: %d", x);
  MPI_Comm_free(&dg);
  free(srcs);
  free(degs);
  free(dsts);
  free(wts);
}

static void split_type(void) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
  int ns = 0, nr = -1;
  MPI_Comm_size(node, &ns);
  MPI_Comm_rank(node, &nr);
  /* Every member on this host, and the hosts' groups add up to the job. */
  char name[MPI_MAX_PROCESSOR_NAME] = {0}, first[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  if (nr == 0) memcpy(first, name, sizeof first);
  MPI_Bcast(first, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, node);
  CHECK(strcmp(first, name) == 0, "shared communicator spans hosts %s and %s", first, name);
  int leaders = 0, is_leader = nr == 0;
  MPI_Allreduce(&is_leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int total = 0, mine = nr == 0 ? ns : 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == g_size && leaders >= 1, "shared groups add up to %d of %d", total, g_size);
  MPI_Comm_free(&node);
  MPI_Comm none = MPI_COMM_WORLD;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none);
  CHECK(none == MPI_COMM_NULL, "MPI_UNDEFINED gives MPI_COMM_NULL");
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  for (int round = 0; round < 2; ++round) {
    cart_neighbors();
    graph_topology();
    dist_graphs();
    split_type();
  }
  return finish("topo");
}
