// gfortran bindings (mpif.h / `use mpi`): lower case with one trailing underscore, every
// argument by reference, INTEGER handles (the C values), ierror last; character arguments get
// gfortran's hidden lengths at the end. pmpi_x_ does the work, mpi_x_ is a weak alias of it.
// The special buffers and statuses of mpif.h are common blocks defined here and recognised by
// address.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "shim.h"

extern "C" {
// Common blocks of mpif.h (gfortran names them lower case with an underscore).
MPI_Fint augur_mpi_bottom_ = 0;
MPI_Fint augur_mpi_in_place_ = 0;
MPI_Fint augur_mpi_status_ignore_[6] = {};
MPI_Fint augur_mpi_statuses_ignore_[6] = {};
MPI_Fint augur_mpi_errcodes_ignore_[1] = {};
MPI_Fint augur_mpi_unweighted_[1] = {};
MPI_Fint augur_mpi_weights_empty_[1] = {};
}

namespace {

using F = MPI_Fint;

const void* cbuf(const void* b) {
  if (b == &augur_mpi_in_place_) return MPI_IN_PLACE;
  if (b == &augur_mpi_bottom_) return MPI_BOTTOM;
  return b;
}
void* buf(void* b) { return const_cast<void*>(cbuf(b)); }
// Distributed-graph weights: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are common blocks too.
int* wts(F* w) {
  if (w == augur_mpi_unweighted_) return MPI_UNWEIGHTED;
  if (w == augur_mpi_weights_empty_) return MPI_WEIGHTS_EMPTY;
  return w;
}
MPI_Status* st(F* s) {
  if (s == augur_mpi_status_ignore_ || s == augur_mpi_statuses_ignore_) return MPI_STATUS_IGNORE;
  return reinterpret_cast<MPI_Status*>(s);  // six INTEGERs, the C layout (mpi.h)
}

// Copies a C string into a blank-padded Fortran CHARACTER variable.
void to_fortran(const char* s, char* out, std::size_t len) {
  const std::size_t n = std::min(std::strlen(s), len);
  std::memcpy(out, s, n);
  std::memset(out + n, ' ', len - n);
}

// A Fortran CHARACTER argument as a C string: leading and trailing blanks dropped (MPI-3.1
// 17.2.6, as for info keys and values).
std::string from_fortran(const char* s, std::size_t len) {
  std::size_t b = 0, e = len;
  while (e > b && s[e - 1] == ' ') --e;
  while (b < e && s[b] == ' ') ++b;
  return std::string(s + b, e - b);
}

}  // namespace

#define AUGUR_F(name, params, call)                                                    \
  extern "C" void pmpi_##name##_ params { *ierr = (call); }                           \
  extern "C" decltype(pmpi_##name##_) mpi_##name##_ __attribute__((weak, alias("pmpi_" #name "_")));

// Environment.
AUGUR_F(init, (F * ierr), PMPI_Init(nullptr, nullptr))
AUGUR_F(init_thread, (F * required, F* provided, F* ierr), PMPI_Init_thread(nullptr, nullptr, *required, provided))
AUGUR_F(initialized, (F * flag, F* ierr), PMPI_Initialized(flag))
AUGUR_F(finalize, (F * ierr), PMPI_Finalize())
AUGUR_F(finalized, (F * flag, F* ierr), PMPI_Finalized(flag))
AUGUR_F(abort, (F * comm, F* code, F* ierr), PMPI_Abort(*comm, *code))
AUGUR_F(query_thread, (F * provided, F* ierr), PMPI_Query_thread(provided))
AUGUR_F(comm_set_errhandler, (F * comm, F* eh, F* ierr), PMPI_Comm_set_errhandler(*comm, *eh))
AUGUR_F(comm_get_errhandler, (F * comm, F* eh, F* ierr), PMPI_Comm_get_errhandler(*comm, eh))
AUGUR_F(error_class, (F * code, F* cls, F* ierr), PMPI_Error_class(*code, cls))
AUGUR_F(get_version, (F * v, F* sv, F* ierr), PMPI_Get_version(v, sv))
// INTEGER(KIND=MPI_ADDRESS_KIND) size and baseptr: baseptr receives the address (for a Cray
// pointer or c_f_pointer); Free_mem gets the memory itself, so its argument is the address.
AUGUR_F(alloc_mem, (MPI_Aint * size, F* info, MPI_Aint* baseptr, F* ierr), PMPI_Alloc_mem(*size, *info, baseptr))
AUGUR_F(free_mem, (void* base, F* ierr), PMPI_Free_mem(base))

extern "C" double pmpi_wtime_() { return PMPI_Wtime(); }
extern "C" double pmpi_wtick_() { return PMPI_Wtick(); }
extern "C" decltype(pmpi_wtime_) mpi_wtime_ __attribute__((weak, alias("pmpi_wtime_")));
extern "C" decltype(pmpi_wtick_) mpi_wtick_ __attribute__((weak, alias("pmpi_wtick_")));

extern "C" void pmpi_get_processor_name_(char* name, F* len, F* ierr, std::size_t name_len) {
  char tmp[MPI_MAX_PROCESSOR_NAME];
  int n = 0;
  *ierr = PMPI_Get_processor_name(tmp, &n);
  to_fortran(tmp, name, name_len);
  *len = std::min(n, static_cast<int>(name_len));
}
extern "C" decltype(pmpi_get_processor_name_) mpi_get_processor_name_
    __attribute__((weak, alias("pmpi_get_processor_name_")));

extern "C" void pmpi_error_string_(F* code, char* text, F* len, F* ierr, std::size_t text_len) {
  char tmp[MPI_MAX_ERROR_STRING];
  int n = 0;
  *ierr = PMPI_Error_string(*code, tmp, &n);
  to_fortran(tmp, text, text_len);
  *len = std::min(n, static_cast<int>(text_len));
}
extern "C" decltype(pmpi_error_string_) mpi_error_string_ __attribute__((weak, alias("pmpi_error_string_")));

// Point-to-point.
AUGUR_F(send, (void* b, F* n, F* t, F* dest, F* tag, F* comm, F* ierr), PMPI_Send(cbuf(b), *n, *t, *dest, *tag, *comm))
AUGUR_F(ssend, (void* b, F* n, F* t, F* dest, F* tag, F* comm, F* ierr), PMPI_Ssend(cbuf(b), *n, *t, *dest, *tag, *comm))
AUGUR_F(rsend, (void* b, F* n, F* t, F* dest, F* tag, F* comm, F* ierr), PMPI_Rsend(cbuf(b), *n, *t, *dest, *tag, *comm))
AUGUR_F(bsend, (void* b, F* n, F* t, F* dest, F* tag, F* comm, F* ierr), PMPI_Bsend(cbuf(b), *n, *t, *dest, *tag, *comm))
AUGUR_F(buffer_attach, (void* b, F* size, F* ierr), PMPI_Buffer_attach(b, *size))
// Fortran cannot receive the buffer's C address: it is detached into a local, the size returned.
AUGUR_F(buffer_detach, (void* b, F* size, F* ierr),
        [&] {
          (void)b;
          void* addr = nullptr;
          return PMPI_Buffer_detach(&addr, size);
        }())
AUGUR_F(recv, (void* b, F* n, F* t, F* src, F* tag, F* comm, F* s, F* ierr),
        PMPI_Recv(buf(b), *n, *t, *src, *tag, *comm, st(s)))
AUGUR_F(isend, (void* b, F* n, F* t, F* dest, F* tag, F* comm, F* req, F* ierr),
        PMPI_Isend(cbuf(b), *n, *t, *dest, *tag, *comm, req))
AUGUR_F(issend, (void* b, F* n, F* t, F* dest, F* tag, F* comm, F* req, F* ierr),
        PMPI_Issend(cbuf(b), *n, *t, *dest, *tag, *comm, req))
AUGUR_F(irecv, (void* b, F* n, F* t, F* src, F* tag, F* comm, F* req, F* ierr),
        PMPI_Irecv(buf(b), *n, *t, *src, *tag, *comm, req))
AUGUR_F(sendrecv,
        (void* sb, F* sn, F* stype, F* dest, F* stag, void* rb, F* rn, F* rtype, F* src, F* rtag, F* comm, F* s, F* ierr),
        PMPI_Sendrecv(cbuf(sb), *sn, *stype, *dest, *stag, buf(rb), *rn, *rtype, *src, *rtag, *comm, st(s)))
AUGUR_F(sendrecv_replace, (void* b, F* n, F* t, F* dest, F* stag, F* src, F* rtag, F* comm, F* s, F* ierr),
        PMPI_Sendrecv_replace(buf(b), *n, *t, *dest, *stag, *src, *rtag, *comm, st(s)))
AUGUR_F(probe, (F * src, F* tag, F* comm, F* s, F* ierr), PMPI_Probe(*src, *tag, *comm, st(s)))
AUGUR_F(iprobe, (F * src, F* tag, F* comm, F* flag, F* s, F* ierr), PMPI_Iprobe(*src, *tag, *comm, flag, st(s)))
AUGUR_F(mprobe, (F * src, F* tag, F* comm, F* msg, F* s, F* ierr), PMPI_Mprobe(*src, *tag, *comm, msg, st(s)))
AUGUR_F(improbe, (F * src, F* tag, F* comm, F* flag, F* msg, F* s, F* ierr),
        PMPI_Improbe(*src, *tag, *comm, flag, msg, st(s)))
AUGUR_F(mrecv, (void* b, F* n, F* t, F* msg, F* s, F* ierr), PMPI_Mrecv(buf(b), *n, *t, msg, st(s)))
AUGUR_F(imrecv, (void* b, F* n, F* t, F* msg, F* req, F* ierr), PMPI_Imrecv(buf(b), *n, *t, msg, req))
AUGUR_F(get_count, (F * s, F* t, F* n, F* ierr), PMPI_Get_count(st(s), *t, n))
AUGUR_F(wait, (F * req, F* s, F* ierr), PMPI_Wait(req, st(s)))
AUGUR_F(waitall, (F * n, F* reqs, F* s, F* ierr), PMPI_Waitall(*n, reqs, st(s)))
AUGUR_F(waitany, (F * n, F* reqs, F* idx, F* s, F* ierr),
        [&] {
          const int rc = PMPI_Waitany(*n, reqs, idx, st(s));
          if (rc == MPI_SUCCESS && *idx != MPI_UNDEFINED) ++*idx;  // Fortran indices start at 1
          return rc;
        }())
AUGUR_F(waitsome, (F * n, F* reqs, F* outcount, F* indices, F* s, F* ierr),
        [&] {
          const int rc = PMPI_Waitsome(*n, reqs, outcount, indices, st(s));
          if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED) {
            for (int k = 0; k < *outcount; ++k) ++indices[k];  // Fortran indices start at 1
          }
          return rc;
        }())
AUGUR_F(test, (F * req, F* flag, F* s, F* ierr), PMPI_Test(req, flag, st(s)))
AUGUR_F(testall, (F * n, F* reqs, F* flag, F* s, F* ierr), PMPI_Testall(*n, reqs, flag, st(s)))
AUGUR_F(testany, (F * n, F* reqs, F* idx, F* flag, F* s, F* ierr),
        [&] {
          const int rc = PMPI_Testany(*n, reqs, idx, flag, st(s));
          if (rc == MPI_SUCCESS && *idx != MPI_UNDEFINED) ++*idx;  // Fortran indices start at 1
          return rc;
        }())
AUGUR_F(request_free, (F * req, F* ierr), PMPI_Request_free(req))
AUGUR_F(cancel, (F * req, F* ierr), PMPI_Cancel(req))
AUGUR_F(test_cancelled, (F * s, F* flag, F* ierr), PMPI_Test_cancelled(st(s), flag))
AUGUR_F(send_init, (void* b, F* n, F* t, F* dest, F* tag, F* comm, F* req, F* ierr),
        PMPI_Send_init(cbuf(b), *n, *t, *dest, *tag, *comm, req))
AUGUR_F(recv_init, (void* b, F* n, F* t, F* src, F* tag, F* comm, F* req, F* ierr),
        PMPI_Recv_init(buf(b), *n, *t, *src, *tag, *comm, req))
AUGUR_F(start, (F * req, F* ierr), PMPI_Start(req))
AUGUR_F(startall, (F * n, F* reqs, F* ierr), PMPI_Startall(*n, reqs))

// Datatypes.
AUGUR_F(type_contiguous, (F * n, F* old, F* nt, F* ierr), PMPI_Type_contiguous(*n, *old, nt))
AUGUR_F(type_vector, (F * n, F* bl, F* stride, F* old, F* nt, F* ierr), PMPI_Type_vector(*n, *bl, *stride, *old, nt))
AUGUR_F(type_create_hvector, (F * n, F* bl, MPI_Aint* stride, F* old, F* nt, F* ierr),
        PMPI_Type_create_hvector(*n, *bl, *stride, *old, nt))
AUGUR_F(type_indexed, (F * n, F* bl, F* d, F* old, F* nt, F* ierr), PMPI_Type_indexed(*n, bl, d, *old, nt))
AUGUR_F(type_create_hindexed, (F * n, F* bl, MPI_Aint* d, F* old, F* nt, F* ierr),
        PMPI_Type_create_hindexed(*n, bl, d, *old, nt))
AUGUR_F(type_create_indexed_block, (F * n, F* bl, F* d, F* old, F* nt, F* ierr),
        PMPI_Type_create_indexed_block(*n, *bl, d, *old, nt))
AUGUR_F(type_create_struct, (F * n, F* bl, MPI_Aint* d, F* types, F* nt, F* ierr),
        PMPI_Type_create_struct(*n, bl, d, types, nt))
AUGUR_F(type_create_resized, (F * old, MPI_Aint* lb, MPI_Aint* extent, F* nt, F* ierr),
        PMPI_Type_create_resized(*old, *lb, *extent, nt))
AUGUR_F(type_create_darray,
        (F * size, F* rank, F* nd, F* gsizes, F* distribs, F* dargs, F* psizes, F* order, F* old, F* nt, F* ierr),
        PMPI_Type_create_darray(*size, *rank, *nd, gsizes, distribs, dargs, psizes, *order, *old, nt))
AUGUR_F(type_create_subarray, (F * nd, F* sizes, F* subs, F* starts, F* order, F* old, F* nt, F* ierr),
        PMPI_Type_create_subarray(*nd, sizes, subs, starts, *order, *old, nt))
AUGUR_F(type_commit, (F * t, F* ierr), PMPI_Type_commit(t))
AUGUR_F(type_free, (F * t, F* ierr), PMPI_Type_free(t))
AUGUR_F(type_size, (F * t, F* size, F* ierr), PMPI_Type_size(*t, size))
AUGUR_F(type_get_extent, (F * t, MPI_Aint* lb, MPI_Aint* extent, F* ierr), PMPI_Type_get_extent(*t, lb, extent))
AUGUR_F(pack, (void* in, F* n, F* t, void* out, F* outsize, F* pos, F* comm, F* ierr),
        PMPI_Pack(cbuf(in), *n, *t, out, *outsize, pos, *comm))
AUGUR_F(unpack, (void* in, F* insize, F* pos, void* out, F* n, F* t, F* comm, F* ierr),
        PMPI_Unpack(in, *insize, pos, buf(out), *n, *t, *comm))
AUGUR_F(pack_size, (F * n, F* t, F* comm, F* size, F* ierr), PMPI_Pack_size(*n, *t, *comm, size))

// Communicators and topologies.
AUGUR_F(comm_rank, (F * comm, F* rank, F* ierr), PMPI_Comm_rank(*comm, rank))
AUGUR_F(comm_size, (F * comm, F* size, F* ierr), PMPI_Comm_size(*comm, size))
AUGUR_F(comm_dup, (F * comm, F* nc, F* ierr), PMPI_Comm_dup(*comm, nc))
AUGUR_F(comm_idup, (F * comm, F* nc, F* req, F* ierr), PMPI_Comm_idup(*comm, nc, req))
AUGUR_F(comm_split, (F * comm, F* color, F* key, F* nc, F* ierr), PMPI_Comm_split(*comm, *color, *key, nc))
AUGUR_F(comm_create, (F * comm, F* group, F* nc, F* ierr), PMPI_Comm_create(*comm, *group, nc))
AUGUR_F(comm_free, (F * comm, F* ierr), PMPI_Comm_free(comm))
AUGUR_F(comm_compare, (F * a, F* b, F* res, F* ierr), PMPI_Comm_compare(*a, *b, res))
AUGUR_F(comm_group, (F * comm, F* group, F* ierr), PMPI_Comm_group(*comm, group))
AUGUR_F(comm_test_inter, (F * comm, F* flag, F* ierr), PMPI_Comm_test_inter(*comm, flag))
AUGUR_F(comm_remote_size, (F * comm, F* size, F* ierr), PMPI_Comm_remote_size(*comm, size))
AUGUR_F(comm_remote_group, (F * comm, F* group, F* ierr), PMPI_Comm_remote_group(*comm, group))
AUGUR_F(intercomm_create, (F * lc, F* ll, F* pc, F* rl, F* tag, F* nc, F* ierr),
        PMPI_Intercomm_create(*lc, *ll, *pc, *rl, *tag, nc))
AUGUR_F(intercomm_merge, (F * ic, F* high, F* nc, F* ierr), PMPI_Intercomm_merge(*ic, *high, nc))
AUGUR_F(group_size, (F * group, F* size, F* ierr), PMPI_Group_size(*group, size))
AUGUR_F(group_rank, (F * group, F* rank, F* ierr), PMPI_Group_rank(*group, rank))
AUGUR_F(group_incl, (F * group, F* n, F* ranks, F* ng, F* ierr), PMPI_Group_incl(*group, *n, ranks, ng))
AUGUR_F(group_excl, (F * group, F* n, F* ranks, F* ng, F* ierr), PMPI_Group_excl(*group, *n, ranks, ng))
AUGUR_F(group_union, (F * a, F* b, F* ng, F* ierr), PMPI_Group_union(*a, *b, ng))
AUGUR_F(group_translate_ranks, (F * a, F* n, F* ranks_a, F* b, F* ranks_b, F* ierr),
        PMPI_Group_translate_ranks(*a, *n, ranks_a, *b, ranks_b))
AUGUR_F(group_free, (F * group, F* ierr), PMPI_Group_free(group))
AUGUR_F(dims_create, (F * nn, F* nd, F* dims, F* ierr), PMPI_Dims_create(*nn, *nd, dims))
AUGUR_F(cart_create, (F * comm, F* nd, F* dims, F* periods, F* reorder, F* nc, F* ierr),
        PMPI_Cart_create(*comm, *nd, dims, periods, *reorder, nc))
AUGUR_F(cart_coords, (F * comm, F* rank, F* maxd, F* coords, F* ierr), PMPI_Cart_coords(*comm, *rank, *maxd, coords))
AUGUR_F(cart_rank, (F * comm, F* coords, F* rank, F* ierr), PMPI_Cart_rank(*comm, coords, rank))
AUGUR_F(cart_shift, (F * comm, F* dir, F* disp, F* src, F* dst, F* ierr), PMPI_Cart_shift(*comm, *dir, *disp, src, dst))
// remain_dims is LOGICAL: gfortran's default LOGICAL is a 4-byte integer, nonzero for .true.
AUGUR_F(cart_sub, (F * comm, F* remain, F* nc, F* ierr), PMPI_Cart_sub(*comm, remain, nc))

// Collectives.
AUGUR_F(barrier, (F * comm, F* ierr), PMPI_Barrier(*comm))
AUGUR_F(bcast, (void* b, F* n, F* t, F* root, F* comm, F* ierr), PMPI_Bcast(buf(b), *n, *t, *root, *comm))
AUGUR_F(reduce, (void* sb, void* rb, F* n, F* t, F* op, F* root, F* comm, F* ierr),
        PMPI_Reduce(cbuf(sb), buf(rb), *n, *t, *op, *root, *comm))
AUGUR_F(allreduce, (void* sb, void* rb, F* n, F* t, F* op, F* comm, F* ierr),
        PMPI_Allreduce(cbuf(sb), buf(rb), *n, *t, *op, *comm))
AUGUR_F(gather, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* root, F* comm, F* ierr),
        PMPI_Gather(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *root, *comm))
AUGUR_F(gatherv, (void* sb, F* sn, F* st_, void* rb, F* rn, F* d, F* rt, F* root, F* comm, F* ierr),
        PMPI_Gatherv(cbuf(sb), *sn, *st_, buf(rb), rn, d, *rt, *root, *comm))
AUGUR_F(scatter, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* root, F* comm, F* ierr),
        PMPI_Scatter(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *root, *comm))
AUGUR_F(scatterv, (void* sb, F* sn, F* d, F* st_, void* rb, F* rn, F* rt, F* root, F* comm, F* ierr),
        PMPI_Scatterv(cbuf(sb), sn, d, *st_, buf(rb), *rn, *rt, *root, *comm))
AUGUR_F(allgather, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* comm, F* ierr),
        PMPI_Allgather(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *comm))
AUGUR_F(allgatherv, (void* sb, F* sn, F* st_, void* rb, F* rn, F* d, F* rt, F* comm, F* ierr),
        PMPI_Allgatherv(cbuf(sb), *sn, *st_, buf(rb), rn, d, *rt, *comm))
AUGUR_F(alltoall, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* comm, F* ierr),
        PMPI_Alltoall(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *comm))
AUGUR_F(alltoallv, (void* sb, F* sn, F* sd, F* st_, void* rb, F* rn, F* rd, F* rt, F* comm, F* ierr),
        PMPI_Alltoallv(cbuf(sb), sn, sd, *st_, buf(rb), rn, rd, *rt, *comm))
AUGUR_F(reduce_scatter, (void* sb, void* rb, F* rn, F* t, F* op, F* comm, F* ierr),
        PMPI_Reduce_scatter(cbuf(sb), buf(rb), rn, *t, *op, *comm))
AUGUR_F(reduce_scatter_block, (void* sb, void* rb, F* rn, F* t, F* op, F* comm, F* ierr),
        PMPI_Reduce_scatter_block(cbuf(sb), buf(rb), *rn, *t, *op, *comm))
AUGUR_F(scan, (void* sb, void* rb, F* n, F* t, F* op, F* comm, F* ierr), PMPI_Scan(cbuf(sb), buf(rb), *n, *t, *op, *comm))
AUGUR_F(exscan, (void* sb, void* rb, F* n, F* t, F* op, F* comm, F* ierr),
        PMPI_Exscan(cbuf(sb), buf(rb), *n, *t, *op, *comm))
AUGUR_F(alltoallw, (void* sb, F* sn, F* sd, F* st_, void* rb, F* rn, F* rd, F* rt, F* comm, F* ierr),
        PMPI_Alltoallw(cbuf(sb), sn, sd, st_, buf(rb), rn, rd, rt, *comm))

// Nonblocking collectives (INTEGER requests are the C handles).
AUGUR_F(ibarrier, (F * comm, F* req, F* ierr), PMPI_Ibarrier(*comm, req))
AUGUR_F(ibcast, (void* b, F* n, F* t, F* root, F* comm, F* req, F* ierr), PMPI_Ibcast(buf(b), *n, *t, *root, *comm, req))
AUGUR_F(ireduce, (void* sb, void* rb, F* n, F* t, F* op, F* root, F* comm, F* req, F* ierr),
        PMPI_Ireduce(cbuf(sb), buf(rb), *n, *t, *op, *root, *comm, req))
AUGUR_F(iallreduce, (void* sb, void* rb, F* n, F* t, F* op, F* comm, F* req, F* ierr),
        PMPI_Iallreduce(cbuf(sb), buf(rb), *n, *t, *op, *comm, req))
AUGUR_F(igather, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* root, F* comm, F* req, F* ierr),
        PMPI_Igather(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *root, *comm, req))
AUGUR_F(igatherv, (void* sb, F* sn, F* st_, void* rb, F* rn, F* d, F* rt, F* root, F* comm, F* req, F* ierr),
        PMPI_Igatherv(cbuf(sb), *sn, *st_, buf(rb), rn, d, *rt, *root, *comm, req))
AUGUR_F(iscatter, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* root, F* comm, F* req, F* ierr),
        PMPI_Iscatter(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *root, *comm, req))
AUGUR_F(iscatterv, (void* sb, F* sn, F* d, F* st_, void* rb, F* rn, F* rt, F* root, F* comm, F* req, F* ierr),
        PMPI_Iscatterv(cbuf(sb), sn, d, *st_, buf(rb), *rn, *rt, *root, *comm, req))
AUGUR_F(iallgather, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* comm, F* req, F* ierr),
        PMPI_Iallgather(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *comm, req))
AUGUR_F(iallgatherv, (void* sb, F* sn, F* st_, void* rb, F* rn, F* d, F* rt, F* comm, F* req, F* ierr),
        PMPI_Iallgatherv(cbuf(sb), *sn, *st_, buf(rb), rn, d, *rt, *comm, req))
AUGUR_F(ialltoall, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* comm, F* req, F* ierr),
        PMPI_Ialltoall(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *comm, req))
AUGUR_F(ialltoallv, (void* sb, F* sn, F* sd, F* st_, void* rb, F* rn, F* rd, F* rt, F* comm, F* req, F* ierr),
        PMPI_Ialltoallv(cbuf(sb), sn, sd, *st_, buf(rb), rn, rd, *rt, *comm, req))
AUGUR_F(ialltoallw, (void* sb, F* sn, F* sd, F* st_, void* rb, F* rn, F* rd, F* rt, F* comm, F* req, F* ierr),
        PMPI_Ialltoallw(cbuf(sb), sn, sd, st_, buf(rb), rn, rd, rt, *comm, req))
AUGUR_F(ireduce_scatter, (void* sb, void* rb, F* rn, F* t, F* op, F* comm, F* req, F* ierr),
        PMPI_Ireduce_scatter(cbuf(sb), buf(rb), rn, *t, *op, *comm, req))
AUGUR_F(ireduce_scatter_block, (void* sb, void* rb, F* rn, F* t, F* op, F* comm, F* req, F* ierr),
        PMPI_Ireduce_scatter_block(cbuf(sb), buf(rb), *rn, *t, *op, *comm, req))
AUGUR_F(iscan, (void* sb, void* rb, F* n, F* t, F* op, F* comm, F* req, F* ierr),
        PMPI_Iscan(cbuf(sb), buf(rb), *n, *t, *op, *comm, req))
AUGUR_F(iexscan, (void* sb, void* rb, F* n, F* t, F* op, F* comm, F* req, F* ierr),
        PMPI_Iexscan(cbuf(sb), buf(rb), *n, *t, *op, *comm, req))
// A Fortran user function has the C signature already (everything by reference).
AUGUR_F(op_create, (MPI_User_function * fn, F* commute, F* op, F* ierr), PMPI_Op_create(fn, *commute, op))
AUGUR_F(op_free, (F * op, F* ierr), PMPI_Op_free(op))

// Info objects, datatype names, user error classes.
AUGUR_F(info_create, (F * info, F* ierr), PMPI_Info_create(info))
AUGUR_F(info_dup, (F * info, F* newinfo, F* ierr), PMPI_Info_dup(*info, newinfo))
AUGUR_F(info_free, (F * info, F* ierr), PMPI_Info_free(info))
AUGUR_F(info_get_nkeys, (F * info, F* nkeys, F* ierr), PMPI_Info_get_nkeys(*info, nkeys))
extern "C" void pmpi_info_set_(F* info, const char* key, const char* value, F* ierr, std::size_t klen, std::size_t vlen) {
  *ierr = PMPI_Info_set(*info, from_fortran(key, klen).c_str(), from_fortran(value, vlen).c_str());
}
extern "C" void pmpi_info_get_(F* info, const char* key, F* valuelen, char* value, F* flag, F* ierr, std::size_t klen,
                               std::size_t vlen) {
  std::string v(MPI_MAX_INFO_VAL + 1, '\0');
  const int max = std::max(0, std::min({*valuelen, static_cast<int>(vlen), MPI_MAX_INFO_VAL}));
  *ierr = PMPI_Info_get(*info, from_fortran(key, klen).c_str(), max, v.data(), flag);
  if (*ierr == MPI_SUCCESS && *flag) to_fortran(v.c_str(), value, vlen);
}
extern "C" void pmpi_info_get_valuelen_(F* info, const char* key, F* valuelen, F* flag, F* ierr, std::size_t klen) {
  *ierr = PMPI_Info_get_valuelen(*info, from_fortran(key, klen).c_str(), valuelen, flag);
}
extern "C" void pmpi_info_get_nthkey_(F* info, F* n, char* key, F* ierr, std::size_t klen) {
  char k[MPI_MAX_INFO_KEY + 1] = {};
  *ierr = PMPI_Info_get_nthkey(*info, *n, k);
  if (*ierr == MPI_SUCCESS) to_fortran(k, key, klen);
}
extern "C" void pmpi_info_delete_(F* info, const char* key, F* ierr, std::size_t klen) {
  *ierr = PMPI_Info_delete(*info, from_fortran(key, klen).c_str());
}
extern "C" decltype(pmpi_info_set_) mpi_info_set_ __attribute__((weak, alias("pmpi_info_set_")));
extern "C" decltype(pmpi_info_get_) mpi_info_get_ __attribute__((weak, alias("pmpi_info_get_")));
extern "C" decltype(pmpi_info_get_valuelen_) mpi_info_get_valuelen_ __attribute__((weak, alias("pmpi_info_get_valuelen_")));
extern "C" decltype(pmpi_info_get_nthkey_) mpi_info_get_nthkey_ __attribute__((weak, alias("pmpi_info_get_nthkey_")));
extern "C" decltype(pmpi_info_delete_) mpi_info_delete_ __attribute__((weak, alias("pmpi_info_delete_")));
AUGUR_F(comm_set_info, (F * comm, F* info, F* ierr), PMPI_Comm_set_info(*comm, *info))
AUGUR_F(comm_get_info, (F * comm, F* info, F* ierr), PMPI_Comm_get_info(*comm, info))
AUGUR_F(comm_dup_with_info, (F * comm, F* info, F* newcomm, F* ierr), PMPI_Comm_dup_with_info(*comm, *info, newcomm))

// An object's name (MPI_Type_get_name, MPI_Win_get_name) into a blank-padded CHARACTER.
namespace {
int get_name(int (*get)(int, char*, int*), int handle, char* name, F* resultlen, std::size_t len) {
  char tmp[MPI_MAX_OBJECT_NAME] = {};
  int n = 0;
  const int rc = get(handle, tmp, &n);
  to_fortran(tmp, name, len);
  *resultlen = std::min(n, static_cast<int>(len));
  return rc;
}
}  // namespace

extern "C" void pmpi_type_set_name_(F* type, const char* name, F* ierr, std::size_t len) {
  *ierr = PMPI_Type_set_name(*type, from_fortran(name, len).c_str());
}
extern "C" void pmpi_type_get_name_(F* type, char* name, F* resultlen, F* ierr, std::size_t len) {
  *ierr = get_name(PMPI_Type_get_name, *type, name, resultlen, len);
}
extern "C" decltype(pmpi_type_set_name_) mpi_type_set_name_ __attribute__((weak, alias("pmpi_type_set_name_")));
extern "C" decltype(pmpi_type_get_name_) mpi_type_get_name_ __attribute__((weak, alias("pmpi_type_get_name_")));

AUGUR_F(add_error_class, (F * cls, F* ierr), PMPI_Add_error_class(cls))
AUGUR_F(add_error_code, (F * cls, F* code, F* ierr), PMPI_Add_error_code(*cls, code))
extern "C" void pmpi_add_error_string_(F* code, const char* text, F* ierr, std::size_t len) {
  *ierr = PMPI_Add_error_string(*code, from_fortran(text, len).c_str());
}
extern "C" decltype(pmpi_add_error_string_) mpi_add_error_string_ __attribute__((weak, alias("pmpi_add_error_string_")));
// flag is LOGICAL (a 4-byte integer, nonzero for .true.).
AUGUR_F(status_set_cancelled, (F * s, F* flag, F* ierr), PMPI_Status_set_cancelled(st(s), *flag))

// Topologies and neighbourhood collectives (reorder is LOGICAL).
AUGUR_F(comm_split_type, (F * comm, F* type, F* key, F* info, F* newcomm, F* ierr),
        PMPI_Comm_split_type(*comm, *type, *key, *info, newcomm))
AUGUR_F(graph_create, (F * comm, F* nnodes, F* index, F* edges, F* reorder, F* newcomm, F* ierr),
        PMPI_Graph_create(*comm, *nnodes, index, edges, *reorder, newcomm))
AUGUR_F(graphdims_get, (F * comm, F* nnodes, F* nedges, F* ierr), PMPI_Graphdims_get(*comm, nnodes, nedges))
AUGUR_F(graph_neighbors_count, (F * comm, F* rank, F* n, F* ierr), PMPI_Graph_neighbors_count(*comm, *rank, n))
AUGUR_F(graph_neighbors, (F * comm, F* rank, F* max, F* nbrs, F* ierr), PMPI_Graph_neighbors(*comm, *rank, *max, nbrs))
AUGUR_F(dist_graph_neighbors_count, (F * comm, F* indeg, F* outdeg, F* weighted, F* ierr),
        PMPI_Dist_graph_neighbors_count(*comm, indeg, outdeg, weighted))
AUGUR_F(neighbor_allgather, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* comm, F* ierr),
        PMPI_Neighbor_allgather(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *comm))
AUGUR_F(neighbor_allgatherv, (void* sb, F* sn, F* st_, void* rb, F* rn, F* d, F* rt, F* comm, F* ierr),
        PMPI_Neighbor_allgatherv(cbuf(sb), *sn, *st_, buf(rb), rn, d, *rt, *comm))
AUGUR_F(neighbor_alltoall, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* comm, F* ierr),
        PMPI_Neighbor_alltoall(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *comm))
AUGUR_F(neighbor_alltoallv, (void* sb, F* sn, F* sd, F* st_, void* rb, F* rn, F* rd, F* rt, F* comm, F* ierr),
        PMPI_Neighbor_alltoallv(cbuf(sb), sn, sd, *st_, buf(rb), rn, rd, *rt, *comm))
AUGUR_F(ineighbor_allgather, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* comm, F* req, F* ierr),
        PMPI_Ineighbor_allgather(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *comm, req))
AUGUR_F(ineighbor_alltoall, (void* sb, F* sn, F* st_, void* rb, F* rn, F* rt, F* comm, F* req, F* ierr),
        PMPI_Ineighbor_alltoall(cbuf(sb), *sn, *st_, buf(rb), *rn, *rt, *comm, req))

// One-sided communication (docs/rma.md). Sizes, displacements and the base address of
// MPI_Win_allocate are INTEGER(KIND=MPI_ADDRESS_KIND).
using A = MPI_Aint;
AUGUR_F(win_create, (void* base, A* size, F* disp_unit, F* info, F* comm, F* win, F* ierr),
        PMPI_Win_create(buf(base), *size, *disp_unit, *info, *comm, win))
AUGUR_F(win_allocate, (A * size, F* disp_unit, F* info, F* comm, A* baseptr, F* win, F* ierr),
        PMPI_Win_allocate(*size, *disp_unit, *info, *comm, baseptr, win))
AUGUR_F(win_allocate_shared, (A * size, F* disp_unit, F* info, F* comm, A* baseptr, F* win, F* ierr),
        PMPI_Win_allocate_shared(*size, *disp_unit, *info, *comm, baseptr, win))
AUGUR_F(win_shared_query, (F * win, F* rank, A* size, F* disp_unit, A* baseptr, F* ierr),
        PMPI_Win_shared_query(*win, *rank, size, disp_unit, baseptr))
AUGUR_F(win_create_dynamic, (F * info, F* comm, F* win, F* ierr), PMPI_Win_create_dynamic(*info, *comm, win))
AUGUR_F(win_attach, (F * win, void* base, A* size, F* ierr), PMPI_Win_attach(*win, base, *size))
AUGUR_F(win_detach, (F * win, void* base, F* ierr), PMPI_Win_detach(*win, base))
AUGUR_F(win_free, (F * win, F* ierr), PMPI_Win_free(win))
AUGUR_F(put, (void* o, F* oc, F* ot, F* rank, A* disp, F* tc, F* tt, F* win, F* ierr),
        PMPI_Put(cbuf(o), *oc, *ot, *rank, *disp, *tc, *tt, *win))
AUGUR_F(get, (void* o, F* oc, F* ot, F* rank, A* disp, F* tc, F* tt, F* win, F* ierr),
        PMPI_Get(buf(o), *oc, *ot, *rank, *disp, *tc, *tt, *win))
AUGUR_F(rput, (void* o, F* oc, F* ot, F* rank, A* disp, F* tc, F* tt, F* win, F* req, F* ierr),
        PMPI_Rput(cbuf(o), *oc, *ot, *rank, *disp, *tc, *tt, *win, req))
AUGUR_F(rget, (void* o, F* oc, F* ot, F* rank, A* disp, F* tc, F* tt, F* win, F* req, F* ierr),
        PMPI_Rget(buf(o), *oc, *ot, *rank, *disp, *tc, *tt, *win, req))
AUGUR_F(accumulate, (void* o, F* oc, F* ot, F* rank, A* disp, F* tc, F* tt, F* op, F* win, F* ierr),
        PMPI_Accumulate(cbuf(o), *oc, *ot, *rank, *disp, *tc, *tt, *op, *win))
AUGUR_F(get_accumulate,
        (void* o, F* oc, F* ot, void* r, F* rc, F* rt, F* rank, A* disp, F* tc, F* tt, F* op, F* win, F* ierr),
        PMPI_Get_accumulate(cbuf(o), *oc, *ot, buf(r), *rc, *rt, *rank, *disp, *tc, *tt, *op, *win))
AUGUR_F(fetch_and_op, (void* o, void* r, F* dt, F* rank, A* disp, F* op, F* win, F* ierr),
        PMPI_Fetch_and_op(cbuf(o), buf(r), *dt, *rank, *disp, *op, *win))
AUGUR_F(compare_and_swap, (void* o, void* c, void* r, F* dt, F* rank, A* disp, F* win, F* ierr),
        PMPI_Compare_and_swap(cbuf(o), cbuf(c), buf(r), *dt, *rank, *disp, *win))
AUGUR_F(win_fence, (F * assert_, F* win, F* ierr), PMPI_Win_fence(*assert_, *win))
AUGUR_F(win_post, (F * group, F* assert_, F* win, F* ierr), PMPI_Win_post(*group, *assert_, *win))
AUGUR_F(win_start, (F * group, F* assert_, F* win, F* ierr), PMPI_Win_start(*group, *assert_, *win))
AUGUR_F(win_complete, (F * win, F* ierr), PMPI_Win_complete(*win))
AUGUR_F(win_wait, (F * win, F* ierr), PMPI_Win_wait(*win))
AUGUR_F(win_test, (F * win, F* flag, F* ierr), PMPI_Win_test(*win, flag))
AUGUR_F(win_lock, (F * type, F* rank, F* assert_, F* win, F* ierr), PMPI_Win_lock(*type, *rank, *assert_, *win))
AUGUR_F(win_unlock, (F * rank, F* win, F* ierr), PMPI_Win_unlock(*rank, *win))
AUGUR_F(win_lock_all, (F * assert_, F* win, F* ierr), PMPI_Win_lock_all(*assert_, *win))
AUGUR_F(win_unlock_all, (F * win, F* ierr), PMPI_Win_unlock_all(*win))
AUGUR_F(win_flush, (F * rank, F* win, F* ierr), PMPI_Win_flush(*rank, *win))
AUGUR_F(win_flush_all, (F * win, F* ierr), PMPI_Win_flush_all(*win))
AUGUR_F(win_flush_local, (F * rank, F* win, F* ierr), PMPI_Win_flush_local(*rank, *win))
AUGUR_F(win_flush_local_all, (F * win, F* ierr), PMPI_Win_flush_local_all(*win))
AUGUR_F(win_sync, (F * win, F* ierr), PMPI_Win_sync(*win))
AUGUR_F(win_get_group, (F * win, F* group, F* ierr), PMPI_Win_get_group(*win, group))
AUGUR_F(win_set_errhandler, (F * win, F* eh, F* ierr), PMPI_Win_set_errhandler(*win, *eh))
AUGUR_F(win_get_errhandler, (F * win, F* eh, F* ierr), PMPI_Win_get_errhandler(*win, eh))
AUGUR_F(win_set_info, (F * win, F* info, F* ierr), PMPI_Win_set_info(*win, *info))
AUGUR_F(win_get_info, (F * win, F* info, F* ierr), PMPI_Win_get_info(*win, info))
extern "C" void pmpi_win_set_name_(F* win, const char* name, F* ierr, std::size_t len) {
  *ierr = PMPI_Win_set_name(*win, from_fortran(name, len).c_str());
}
extern "C" void pmpi_win_get_name_(F* win, char* name, F* resultlen, F* ierr, std::size_t len) {
  *ierr = get_name(PMPI_Win_get_name, *win, name, resultlen, len);
}
extern "C" decltype(pmpi_win_set_name_) mpi_win_set_name_ __attribute__((weak, alias("pmpi_win_set_name_")));
extern "C" decltype(pmpi_win_get_name_) mpi_win_get_name_ __attribute__((weak, alias("pmpi_win_get_name_")));

// Attribute caching (MPI-3.1 17.2.7). A keyval made from Fortran calls its callbacks with
// Fortran's conventions (Keyval::Lang in shim.h); attribute values and extra states are
// integers: INTEGER(KIND=MPI_ADDRESS_KIND), or default INTEGER for MPI-1's keyval_create and
// attr_*. A predefined attribute (MPI_TAG_UB ...) is returned as its value, not C's pointer.
namespace {
using augur::mpi::Keyval;
template <typename V>
void* as_ptr(V v) {
  return reinterpret_cast<void*>(static_cast<std::intptr_t>(v));
}
int fortran_keyval(Keyval::Kind kind, void* copy, void* del, F* keyval, void* extra, Keyval::Lang lang, const char* fn) {
  const augur::mpi::Err e = augur::mpi::create_keyval_lang(kind, copy, del, keyval, extra, lang);
  return e.ok() ? MPI_SUCCESS : augur::mpi::raise(MPI_COMM_WORLD, fn, e);
}
template <typename V>
int fortran_get_attr(int (*get)(int, int, void*, int*), int handle, int keyval, V* val, F* flag, bool predefined) {
  void* v = nullptr;
  int f = 0;
  const int rc = get(handle, keyval, &v, &f);
  *flag = f;
  if (rc == MPI_SUCCESS && f != 0) {
    *val = predefined ? static_cast<V>(*static_cast<const int*>(v)) : static_cast<V>(reinterpret_cast<std::intptr_t>(v));
  }
  return rc;
}
}  // namespace
AUGUR_F(comm_create_keyval, (void* copy, void* del, F* keyval, A* extra, F* ierr),
        fortran_keyval(Keyval::Kind::kComm, copy, del, keyval, as_ptr(*extra), Keyval::Lang::kFortran,
                       "MPI_Comm_create_keyval"))
AUGUR_F(keyval_create, (void* copy, void* del, F* keyval, F* extra, F* ierr),
        fortran_keyval(Keyval::Kind::kComm, copy, del, keyval, as_ptr(*extra), Keyval::Lang::kFortranInt, "MPI_Keyval_create"))
AUGUR_F(type_create_keyval, (void* copy, void* del, F* keyval, A* extra, F* ierr),
        fortran_keyval(Keyval::Kind::kType, copy, del, keyval, as_ptr(*extra), Keyval::Lang::kFortran,
                       "MPI_Type_create_keyval"))
AUGUR_F(comm_free_keyval, (F * keyval, F* ierr), PMPI_Comm_free_keyval(keyval))
AUGUR_F(keyval_free, (F * keyval, F* ierr), PMPI_Keyval_free(keyval))
AUGUR_F(type_free_keyval, (F * keyval, F* ierr), PMPI_Type_free_keyval(keyval))
AUGUR_F(comm_set_attr, (F * comm, F* keyval, A* val, F* ierr), PMPI_Comm_set_attr(*comm, *keyval, as_ptr(*val)))
AUGUR_F(attr_put, (F * comm, F* keyval, F* val, F* ierr), PMPI_Attr_put(*comm, *keyval, as_ptr(*val)))
AUGUR_F(type_set_attr, (F * t, F* keyval, A* val, F* ierr), PMPI_Type_set_attr(*t, *keyval, as_ptr(*val)))
AUGUR_F(comm_get_attr, (F * comm, F* keyval, A* val, F* flag, F* ierr),
        fortran_get_attr(PMPI_Comm_get_attr, *comm, *keyval, val, flag, *keyval < augur::mpi::kFirstKeyval))
AUGUR_F(attr_get, (F * comm, F* keyval, F* val, F* flag, F* ierr),
        fortran_get_attr(PMPI_Attr_get, *comm, *keyval, val, flag, *keyval < augur::mpi::kFirstKeyval))
AUGUR_F(type_get_attr, (F * t, F* keyval, A* val, F* flag, F* ierr),
        fortran_get_attr(PMPI_Type_get_attr, *t, *keyval, val, flag, false))
AUGUR_F(comm_delete_attr, (F * comm, F* keyval, F* ierr), PMPI_Comm_delete_attr(*comm, *keyval))
AUGUR_F(attr_delete, (F * comm, F* keyval, F* ierr), PMPI_Attr_delete(*comm, *keyval))
AUGUR_F(type_delete_attr, (F * t, F* keyval, F* ierr), PMPI_Type_delete_attr(*t, *keyval))
AUGUR_F(get_address, (void* loc, A* addr, F* ierr), PMPI_Get_address(cbuf(loc), addr))
AUGUR_F(win_create_keyval, (void* copy, void* del, F* keyval, A* extra, F* ierr),
        fortran_keyval(Keyval::Kind::kWin, copy, del, keyval, as_ptr(*extra), Keyval::Lang::kFortran,
                       "MPI_Win_create_keyval"))
AUGUR_F(win_free_keyval, (F * keyval, F* ierr), PMPI_Win_free_keyval(keyval))
AUGUR_F(win_set_attr, (F * win, F* keyval, A* val, F* ierr), PMPI_Win_set_attr(*win, *keyval, as_ptr(*val)))
AUGUR_F(win_delete_attr, (F * win, F* keyval, F* ierr), PMPI_Win_delete_attr(*win, *keyval))
// The predefined window attributes come back as values: the base address itself, the size (an
// MPI_Aint in C), and the INTEGERs disp_unit, create_flavor and model.
extern "C" void pmpi_win_get_attr_(F* win, F* keyval, A* val, F* flag, F* ierr) {
  void* v = nullptr;
  int f = 0;
  *ierr = PMPI_Win_get_attr(*win, *keyval, &v, &f);
  *flag = f;
  if (*ierr != MPI_SUCCESS || f == 0) return;
  switch (*keyval) {
    case MPI_WIN_BASE: *val = static_cast<A>(reinterpret_cast<std::intptr_t>(v)); break;
    case MPI_WIN_SIZE: *val = *static_cast<const MPI_Aint*>(v); break;
    case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL: *val = *static_cast<const int*>(v); break;
    default: *val = static_cast<A>(reinterpret_cast<std::intptr_t>(v));
  }
}
extern "C" decltype(pmpi_win_get_attr_) mpi_win_get_attr_ __attribute__((weak, alias("pmpi_win_get_attr_")));

// Distributed graphs and the neighbourhood collectives that take MPI_Aint displacements.
AUGUR_F(dist_graph_create_adjacent,
        (F * comm, F* indeg, F* srcs, F* sw, F* outdeg, F* dsts, F* dw, F* info, F* reorder, F* nc, F* ierr),
        PMPI_Dist_graph_create_adjacent(*comm, *indeg, srcs, wts(sw), *outdeg, dsts, wts(dw), *info, *reorder, nc))
AUGUR_F(dist_graph_create, (F * comm, F* n, F* srcs, F* degs, F* dsts, F* w, F* info, F* reorder, F* nc, F* ierr),
        PMPI_Dist_graph_create(*comm, *n, srcs, degs, dsts, wts(w), *info, *reorder, nc))
AUGUR_F(dist_graph_neighbors, (F * comm, F* maxin, F* srcs, F* sw, F* maxout, F* dsts, F* dw, F* ierr),
        PMPI_Dist_graph_neighbors(*comm, *maxin, srcs, wts(sw), *maxout, dsts, wts(dw)))
AUGUR_F(neighbor_alltoallw, (void* sb, F* sn, A* sd, F* st_, void* rb, F* rn, A* rd, F* rt, F* comm, F* ierr),
        PMPI_Neighbor_alltoallw(cbuf(sb), sn, sd, st_, buf(rb), rn, rd, rt, *comm))
AUGUR_F(ineighbor_allgatherv, (void* sb, F* sn, F* st_, void* rb, F* rn, F* d, F* rt, F* comm, F* req, F* ierr),
        PMPI_Ineighbor_allgatherv(cbuf(sb), *sn, *st_, buf(rb), rn, d, *rt, *comm, req))
AUGUR_F(ineighbor_alltoallv, (void* sb, F* sn, F* sd, F* st_, void* rb, F* rn, F* rd, F* rt, F* comm, F* req, F* ierr),
        PMPI_Ineighbor_alltoallv(cbuf(sb), sn, sd, *st_, buf(rb), rn, rd, *rt, *comm, req))
AUGUR_F(ineighbor_alltoallw,
        (void* sb, F* sn, A* sd, F* st_, void* rb, F* rn, A* rd, F* rt, F* comm, F* req, F* ierr),
        PMPI_Ineighbor_alltoallw(cbuf(sb), sn, sd, st_, buf(rb), rn, rd, rt, *comm, req))

// "external32" (MPI-3.1 13.5.2): sizes and positions are INTEGER(KIND=MPI_ADDRESS_KIND).
extern "C" void pmpi_pack_external_(const char* rep, void* in, F* n, F* t, void* out, A* outsize, A* pos, F* ierr,
                                    std::size_t rep_len) {
  *ierr = PMPI_Pack_external(from_fortran(rep, rep_len).c_str(), cbuf(in), *n, *t, out, *outsize, pos);
}
extern "C" void pmpi_unpack_external_(const char* rep, void* in, A* insize, A* pos, void* out, F* n, F* t, F* ierr,
                                      std::size_t rep_len) {
  *ierr = PMPI_Unpack_external(from_fortran(rep, rep_len).c_str(), in, *insize, pos, buf(out), *n, *t);
}
extern "C" void pmpi_pack_external_size_(const char* rep, F* n, F* t, A* size, F* ierr, std::size_t rep_len) {
  *ierr = PMPI_Pack_external_size(from_fortran(rep, rep_len).c_str(), *n, *t, size);
}
extern "C" decltype(pmpi_pack_external_) mpi_pack_external_ __attribute__((weak, alias("pmpi_pack_external_")));
extern "C" decltype(pmpi_unpack_external_) mpi_unpack_external_ __attribute__((weak, alias("pmpi_unpack_external_")));
extern "C" decltype(pmpi_pack_external_size_) mpi_pack_external_size_
    __attribute__((weak, alias("pmpi_pack_external_size_")));

// The predefined callbacks, as the Fortran procedures mpif.h declares EXTERNAL.
extern "C" {
void mpi_comm_null_copy_fn_(const F*, const F*, const A*, const A*, A*, F* flag, F* ierr) {
  *flag = 0;
  *ierr = MPI_SUCCESS;
}
void mpi_comm_dup_fn_(const F*, const F*, const A*, const A* in, A* out, F* flag, F* ierr) {
  *out = *in;
  *flag = 1;
  *ierr = MPI_SUCCESS;
}
void mpi_comm_null_delete_fn_(const F*, const F*, const A*, const A*, F* ierr) { *ierr = MPI_SUCCESS; }
void mpi_null_copy_fn_(const F*, const F*, const F*, const F*, F*, F* flag, F* ierr) {
  *flag = 0;
  *ierr = MPI_SUCCESS;
}
void mpi_dup_fn_(const F*, const F*, const F*, const F* in, F* out, F* flag, F* ierr) {
  *out = *in;
  *flag = 1;
  *ierr = MPI_SUCCESS;
}
void mpi_null_delete_fn_(const F*, const F*, const F*, const F*, F* ierr) { *ierr = MPI_SUCCESS; }
decltype(mpi_comm_null_copy_fn_) mpi_type_null_copy_fn_ __attribute__((alias("mpi_comm_null_copy_fn_")));
decltype(mpi_comm_dup_fn_) mpi_type_dup_fn_ __attribute__((alias("mpi_comm_dup_fn_")));
decltype(mpi_comm_null_delete_fn_) mpi_type_null_delete_fn_ __attribute__((alias("mpi_comm_null_delete_fn_")));
decltype(mpi_comm_null_copy_fn_) mpi_win_null_copy_fn_ __attribute__((alias("mpi_comm_null_copy_fn_")));
decltype(mpi_comm_dup_fn_) mpi_win_dup_fn_ __attribute__((alias("mpi_comm_dup_fn_")));
decltype(mpi_comm_null_delete_fn_) mpi_win_null_delete_fn_ __attribute__((alias("mpi_comm_null_delete_fn_")));
}
