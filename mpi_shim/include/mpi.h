/* augur's MPI: the C interface of libaugur_mpi (MPI-3.1 names, constants and semantics).
 *
 * Handles are ints (as in MPICH): MPI_Comm, MPI_Datatype, MPI_Op, MPI_Group, MPI_Request,
 * MPI_Errhandler and MPI_Info are small integers indexing tables inside the library, so a C
 * handle and a Fortran INTEGER handle are the same number (MPI_Comm_f2c is the identity).
 * The null handles are 0. Every MPI_X is a weak alias of PMPI_X, so profiling interposers work.
 * What exists and what does not: docs/mpi.md. */
#ifndef AUGUR_MPI_H
#define AUGUR_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define AUGUR_MPI 1

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Group;
typedef int MPI_Request;
typedef int MPI_Message;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_Fint;
typedef intptr_t MPI_Aint;
typedef long long MPI_Count;
typedef long long MPI_Offset;

/* MPI_SOURCE, MPI_TAG, MPI_ERROR as the standard names them; the rest is private. Six Fortran
 * INTEGERs long (MPI_STATUS_SIZE), so C and Fortran statuses convert by copying. */
typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int augur_cancelled;
  int augur_count_lo; /* received bytes, split so the struct has no padding */
  int augur_count_hi;
} MPI_Status;

/* Null and predefined handles. */
#define MPI_COMM_NULL 0
#define MPI_COMM_WORLD 1
#define MPI_COMM_SELF 2
#define MPI_GROUP_NULL 0
#define MPI_GROUP_EMPTY 1
#define MPI_REQUEST_NULL 0
#define MPI_MESSAGE_NULL 0
#define MPI_MESSAGE_NO_PROC 1
#define MPI_OP_NULL 0
#define MPI_ERRHANDLER_NULL 0
#define MPI_ERRORS_ARE_FATAL 1
#define MPI_ERRORS_RETURN 2
#define MPI_INFO_NULL 0
#define MPI_INFO_ENV 1
#define MPI_DATATYPE_NULL 0

/* Predefined datatypes (the numbering is shared with mpif.h; do not reorder). */
#define MPI_CHAR 1
#define MPI_SIGNED_CHAR 2
#define MPI_UNSIGNED_CHAR 3
#define MPI_BYTE 4
#define MPI_WCHAR 5
#define MPI_SHORT 6
#define MPI_UNSIGNED_SHORT 7
#define MPI_INT 8
#define MPI_UNSIGNED 9
#define MPI_LONG 10
#define MPI_UNSIGNED_LONG 11
#define MPI_LONG_LONG_INT 12
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG 13
#define MPI_FLOAT 14
#define MPI_DOUBLE 15
#define MPI_LONG_DOUBLE 16
#define MPI_INT8_T 17
#define MPI_INT16_T 18
#define MPI_INT32_T 19
#define MPI_INT64_T 20
#define MPI_UINT8_T 21
#define MPI_UINT16_T 22
#define MPI_UINT32_T 23
#define MPI_UINT64_T 24
#define MPI_C_BOOL 25
#define MPI_C_FLOAT_COMPLEX 26
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX 27
#define MPI_C_LONG_DOUBLE_COMPLEX 28
#define MPI_AINT 29
#define MPI_OFFSET 30
#define MPI_COUNT 31
#define MPI_PACKED 32
#define MPI_FLOAT_INT 33
#define MPI_DOUBLE_INT 34
#define MPI_LONG_INT 35
#define MPI_2INT 36
#define MPI_SHORT_INT 37
#define MPI_LONG_DOUBLE_INT 38
/* Fortran types (usable from C for Fortran buffers). */
#define MPI_INTEGER 39
#define MPI_REAL 40
#define MPI_DOUBLE_PRECISION 41
#define MPI_COMPLEX 42
#define MPI_DOUBLE_COMPLEX 43
#define MPI_LOGICAL 44
#define MPI_CHARACTER 45
#define MPI_INTEGER1 46
#define MPI_INTEGER2 47
#define MPI_INTEGER4 48
#define MPI_INTEGER8 49
#define MPI_REAL4 50
#define MPI_REAL8 51
#define MPI_2INTEGER 52
#define MPI_2REAL 53
#define MPI_2DOUBLE_PRECISION 54
#define MPI_CXX_BOOL 55
#define MPI_UB 56 /* deprecated markers: not supported (MPI_ERR_TYPE) */
#define MPI_LB 57

/* Predefined reduction operations. */
#define MPI_MAX 1
#define MPI_MIN 2
#define MPI_SUM 3
#define MPI_PROD 4
#define MPI_LAND 5
#define MPI_BAND 6
#define MPI_LOR 7
#define MPI_BOR 8
#define MPI_LXOR 9
#define MPI_BXOR 10
#define MPI_MINLOC 11
#define MPI_MAXLOC 12
#define MPI_REPLACE 13
#define MPI_NO_OP 14

/* Special values. */
#define MPI_ANY_SOURCE (-1)
#define MPI_ANY_TAG (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID (-1)
#ifdef __cplusplus
#define AUGUR_MPI_PTR(type, v) (reinterpret_cast<type>(v))
#else
#define AUGUR_MPI_PTR(type, v) ((type)(v))
#endif
#define MPI_BOTTOM AUGUR_MPI_PTR(void*, 0)
#define MPI_IN_PLACE AUGUR_MPI_PTR(void*, -1)
#define MPI_STATUS_IGNORE AUGUR_MPI_PTR(MPI_Status*, 1)
#define MPI_STATUSES_IGNORE AUGUR_MPI_PTR(MPI_Status*, 1)
#define MPI_ERRCODES_IGNORE AUGUR_MPI_PTR(int*, 0)
#define MPI_UNWEIGHTED AUGUR_MPI_PTR(int*, 1)
#define MPI_WEIGHTS_EMPTY AUGUR_MPI_PTR(int*, 2)
#define MPI_BSEND_OVERHEAD 64

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024

/* Thread levels. */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* Comparison results. */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* Topologies and array orders. */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3
#define MPI_COMM_TYPE_SHARED 1
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* Predefined attribute keys (MPI_Comm_get_attr on MPI_COMM_WORLD). */
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE 5
#define MPI_APPNUM 6
#define MPI_LASTUSEDCODE 7

/* Error classes (error codes are the classes). */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_NO_MEM 20
#define MPI_ERR_INFO 21
#define MPI_ERR_KEYVAL 22
#define MPI_ERR_UNSUPPORTED_OPERATION 23
#define MPI_ERR_PROC_FAILED 24 /* a rank of the job died (augur: the job is then aborted) */
#define MPI_ERR_INFO_KEY 25
#define MPI_ERR_INFO_VALUE 26
#define MPI_ERR_INFO_NOKEY 27
#define MPI_ERR_WIN 28
#define MPI_ERR_BASE 29
#define MPI_ERR_SIZE 30
#define MPI_ERR_DISP 31
#define MPI_ERR_LOCKTYPE 32
#define MPI_ERR_ASSERT 33
#define MPI_ERR_RMA_CONFLICT 34
#define MPI_ERR_RMA_SYNC 35
#define MPI_ERR_RMA_RANGE 36
#define MPI_ERR_RMA_ATTACH 37
#define MPI_ERR_RMA_SHARED 38
#define MPI_ERR_RMA_FLAVOR 39
#define MPI_ERR_LASTCODE 39 /* MPI_Add_error_class/code give codes above it */

typedef void(MPI_User_function)(void* invec, void* inoutvec, int* len, MPI_Datatype* datatype);
typedef void(MPI_Comm_errhandler_function)(MPI_Comm*, int*, ...);
typedef MPI_Comm_errhandler_function MPI_Handler_function; /* MPI-1 name */

/* Attribute callbacks. The predefined ones: NULL_COPY (not copied), DUP (the value copied),
 * NULL_DELETE (nothing to do). */
typedef int(MPI_Comm_copy_attr_function)(MPI_Comm oldcomm, int comm_keyval, void* extra_state,
                                         void* attribute_val_in, void* attribute_val_out, int* flag);
typedef int(MPI_Comm_delete_attr_function)(MPI_Comm comm, int comm_keyval, void* attribute_val, void* extra_state);
typedef int(MPI_Type_copy_attr_function)(MPI_Datatype oldtype, int type_keyval, void* extra_state,
                                         void* attribute_val_in, void* attribute_val_out, int* flag);
typedef int(MPI_Type_delete_attr_function)(MPI_Datatype datatype, int type_keyval, void* attribute_val,
                                           void* extra_state);
typedef MPI_Comm_copy_attr_function MPI_Copy_function;     /* MPI-1 names */
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
int augur_mpi_dup_fn(int oldobj, int keyval, void* extra_state, void* attribute_val_in, void* attribute_val_out,
                     int* flag);
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function*)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function*)0)
#define MPI_COMM_DUP_FN ((MPI_Comm_copy_attr_function*)augur_mpi_dup_fn)
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function*)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function*)0)
#define MPI_TYPE_DUP_FN ((MPI_Type_copy_attr_function*)augur_mpi_dup_fn)
#define MPI_NULL_COPY_FN ((MPI_Copy_function*)0)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function*)0)
#define MPI_DUP_FN ((MPI_Copy_function*)augur_mpi_dup_fn)

/* Declares MPI_name and its profiling twin PMPI_name. */
#define AUGUR_MPI_DECL(ret, name, params) \
  ret MPI_##name params;                  \
  ret PMPI_##name params;

/* Environment. */
AUGUR_MPI_DECL(int, Init, (int* argc, char*** argv))
AUGUR_MPI_DECL(int, Init_thread, (int* argc, char*** argv, int required, int* provided))
AUGUR_MPI_DECL(int, Initialized, (int* flag))
AUGUR_MPI_DECL(int, Finalize, (void))
AUGUR_MPI_DECL(int, Finalized, (int* flag))
AUGUR_MPI_DECL(int, Abort, (MPI_Comm comm, int errorcode))
AUGUR_MPI_DECL(double, Wtime, (void))
AUGUR_MPI_DECL(double, Wtick, (void))
AUGUR_MPI_DECL(int, Get_processor_name, (char* name, int* resultlen))
AUGUR_MPI_DECL(int, Get_version, (int* version, int* subversion))
AUGUR_MPI_DECL(int, Get_library_version, (char* version, int* resultlen))
AUGUR_MPI_DECL(int, Query_thread, (int* provided))
AUGUR_MPI_DECL(int, Is_thread_main, (int* flag))
AUGUR_MPI_DECL(int, Error_string, (int errorcode, char* string, int* resultlen))
AUGUR_MPI_DECL(int, Error_class, (int errorcode, int* errorclass))
AUGUR_MPI_DECL(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
AUGUR_MPI_DECL(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler* errhandler))
AUGUR_MPI_DECL(int, Comm_create_errhandler, (MPI_Comm_errhandler_function* fn, MPI_Errhandler* errhandler))
AUGUR_MPI_DECL(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
AUGUR_MPI_DECL(int, Errhandler_free, (MPI_Errhandler* errhandler))
AUGUR_MPI_DECL(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
AUGUR_MPI_DECL(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler* errhandler))
AUGUR_MPI_DECL(int, Errhandler_create, (MPI_Handler_function* fn, MPI_Errhandler* errhandler))
AUGUR_MPI_DECL(int, Add_error_class, (int* errorclass))
AUGUR_MPI_DECL(int, Add_error_code, (int errorclass, int* errorcode))
AUGUR_MPI_DECL(int, Add_error_string, (int errorcode, const char* string))

/* Info objects, attribute caching. */
AUGUR_MPI_DECL(int, Info_create, (MPI_Info* info))
AUGUR_MPI_DECL(int, Info_set, (MPI_Info info, const char* key, const char* value))
AUGUR_MPI_DECL(int, Info_get, (MPI_Info info, const char* key, int valuelen, char* value, int* flag))
AUGUR_MPI_DECL(int, Info_get_valuelen, (MPI_Info info, const char* key, int* valuelen, int* flag))
AUGUR_MPI_DECL(int, Info_get_nkeys, (MPI_Info info, int* nkeys))
AUGUR_MPI_DECL(int, Info_get_nthkey, (MPI_Info info, int n, char* key))
AUGUR_MPI_DECL(int, Info_delete, (MPI_Info info, const char* key))
AUGUR_MPI_DECL(int, Info_dup, (MPI_Info info, MPI_Info* newinfo))
AUGUR_MPI_DECL(int, Info_free, (MPI_Info* info))
AUGUR_MPI_DECL(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
AUGUR_MPI_DECL(int, Comm_get_info, (MPI_Comm comm, MPI_Info* info_used))
AUGUR_MPI_DECL(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm))
AUGUR_MPI_DECL(int, Comm_create_keyval, (MPI_Comm_copy_attr_function* copy_fn, MPI_Comm_delete_attr_function* delete_fn,
                                         int* keyval, void* extra_state))
AUGUR_MPI_DECL(int, Comm_free_keyval, (int* keyval))
AUGUR_MPI_DECL(int, Comm_set_attr, (MPI_Comm comm, int keyval, void* attribute_val))
AUGUR_MPI_DECL(int, Comm_delete_attr, (MPI_Comm comm, int keyval))
AUGUR_MPI_DECL(int, Type_create_keyval, (MPI_Type_copy_attr_function* copy_fn, MPI_Type_delete_attr_function* delete_fn,
                                         int* keyval, void* extra_state))
AUGUR_MPI_DECL(int, Type_free_keyval, (int* keyval))
AUGUR_MPI_DECL(int, Type_set_attr, (MPI_Datatype datatype, int keyval, void* attribute_val))
AUGUR_MPI_DECL(int, Type_get_attr, (MPI_Datatype datatype, int keyval, void* attribute_val, int* flag))
AUGUR_MPI_DECL(int, Type_delete_attr, (MPI_Datatype datatype, int keyval))
AUGUR_MPI_DECL(int, Keyval_create, (MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                                    void* extra_state))
AUGUR_MPI_DECL(int, Keyval_free, (int* keyval))
AUGUR_MPI_DECL(int, Attr_put, (MPI_Comm comm, int keyval, void* attribute_val))
AUGUR_MPI_DECL(int, Attr_delete, (MPI_Comm comm, int keyval))
AUGUR_MPI_DECL(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void* baseptr))
AUGUR_MPI_DECL(int, Free_mem, (void* base))
AUGUR_MPI_DECL(int, Comm_get_attr, (MPI_Comm comm, int keyval, void* attribute_val, int* flag))
AUGUR_MPI_DECL(int, Attr_get, (MPI_Comm comm, int keyval, void* attribute_val, int* flag))
AUGUR_MPI_DECL(int, Pcontrol, (const int level, ...))

/* Point-to-point. */
AUGUR_MPI_DECL(int, Send, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
AUGUR_MPI_DECL(int, Ssend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
AUGUR_MPI_DECL(int, Rsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
AUGUR_MPI_DECL(int, Bsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
AUGUR_MPI_DECL(int, Recv,
               (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status))
AUGUR_MPI_DECL(int, Isend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                            MPI_Request* request))
AUGUR_MPI_DECL(int, Issend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request))
AUGUR_MPI_DECL(int, Irsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request))
AUGUR_MPI_DECL(int, Ibsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request))
AUGUR_MPI_DECL(int, Irecv, (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                            MPI_Request* request))
AUGUR_MPI_DECL(int, Buffer_attach, (void* buffer, int size))
AUGUR_MPI_DECL(int, Buffer_detach, (void* buffer_addr, int* size))
AUGUR_MPI_DECL(int, Sendrecv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                               MPI_Comm comm, MPI_Status* status))
AUGUR_MPI_DECL(int, Sendrecv_replace, (void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                                       int source, int recvtag, MPI_Comm comm, MPI_Status* status))
AUGUR_MPI_DECL(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status* status))
AUGUR_MPI_DECL(int, Iprobe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status))
AUGUR_MPI_DECL(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status))
AUGUR_MPI_DECL(int, Improbe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status))
AUGUR_MPI_DECL(int, Mrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status))
AUGUR_MPI_DECL(int, Imrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request))
AUGUR_MPI_DECL(int, Get_count, (const MPI_Status* status, MPI_Datatype datatype, int* count))
AUGUR_MPI_DECL(int, Get_elements, (const MPI_Status* status, MPI_Datatype datatype, int* count))
AUGUR_MPI_DECL(int, Wait, (MPI_Request* request, MPI_Status* status))
AUGUR_MPI_DECL(int, Waitall, (int count, MPI_Request requests[], MPI_Status* statuses))
AUGUR_MPI_DECL(int, Waitany, (int count, MPI_Request requests[], int* index, MPI_Status* status))
AUGUR_MPI_DECL(int, Waitsome,
               (int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status* statuses))
AUGUR_MPI_DECL(int, Test, (MPI_Request* request, int* flag, MPI_Status* status))
AUGUR_MPI_DECL(int, Testall, (int count, MPI_Request requests[], int* flag, MPI_Status* statuses))
AUGUR_MPI_DECL(int, Testany, (int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status))
AUGUR_MPI_DECL(int, Testsome,
               (int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status* statuses))
AUGUR_MPI_DECL(int, Request_free, (MPI_Request* request))
AUGUR_MPI_DECL(int, Request_get_status, (MPI_Request request, int* flag, MPI_Status* status))
AUGUR_MPI_DECL(int, Cancel, (MPI_Request* request))
AUGUR_MPI_DECL(int, Test_cancelled, (const MPI_Status* status, int* flag))
AUGUR_MPI_DECL(int, Send_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                MPI_Request* request))
AUGUR_MPI_DECL(int, Ssend_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                                 MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Recv_init, (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                MPI_Request* request))
AUGUR_MPI_DECL(int, Start, (MPI_Request* request))
AUGUR_MPI_DECL(int, Startall, (int count, MPI_Request requests[]))

/* Datatypes. */
AUGUR_MPI_DECL(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype,
                                  MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                          MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_indexed, (int count, const int blocklengths[], const int displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_create_hindexed, (int count, const int blocklengths[], const MPI_Aint displacements[],
                                           MPI_Datatype oldtype, MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_create_indexed_block, (int count, int blocklength, const int displacements[],
                                                MPI_Datatype oldtype, MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint displacements[],
                                                 MPI_Datatype oldtype, MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_create_darray, (int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[], const int psizes[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_create_subarray, (int ndims, const int sizes[], const int subsizes[], const int starts[],
                                           int order, MPI_Datatype oldtype, MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_create_struct, (int count, const int blocklengths[], const MPI_Aint displacements[],
                                         const MPI_Datatype types[], MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                          MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype* newtype))
/* How a datatype was made (MPI_Type_get_envelope's combiner). */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR_INTEGER 5
#define MPI_COMBINER_HVECTOR 6
#define MPI_COMBINER_INDEXED 7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED 9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_HINDEXED_BLOCK 11
#define MPI_COMBINER_STRUCT_INTEGER 12
#define MPI_COMBINER_STRUCT 13
#define MPI_COMBINER_SUBARRAY 14
#define MPI_COMBINER_DARRAY 15
#define MPI_COMBINER_F90_REAL 16
#define MPI_COMBINER_F90_COMPLEX 17
#define MPI_COMBINER_F90_INTEGER 18
#define MPI_COMBINER_RESIZED 19
AUGUR_MPI_DECL(int, Type_get_envelope, (MPI_Datatype datatype, int* num_integers, int* num_addresses,
                                        int* num_datatypes, int* combiner))
AUGUR_MPI_DECL(int, Type_get_contents, (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                                        int array_of_integers[], MPI_Aint array_of_addresses[],
                                        MPI_Datatype array_of_datatypes[]))
AUGUR_MPI_DECL(int, Type_commit, (MPI_Datatype* datatype))
AUGUR_MPI_DECL(int, Type_free, (MPI_Datatype* datatype))
AUGUR_MPI_DECL(int, Type_size, (MPI_Datatype datatype, int* size))
AUGUR_MPI_DECL(int, Type_size_x, (MPI_Datatype datatype, MPI_Count* size))
AUGUR_MPI_DECL(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent))
AUGUR_MPI_DECL(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent))
AUGUR_MPI_DECL(int, Type_extent, (MPI_Datatype datatype, MPI_Aint* extent))
AUGUR_MPI_DECL(int, Type_lb, (MPI_Datatype datatype, MPI_Aint* displacement))
AUGUR_MPI_DECL(int, Type_ub, (MPI_Datatype datatype, MPI_Aint* displacement))
AUGUR_MPI_DECL(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                   MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_hindexed, (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_struct, (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype types[],
                                  MPI_Datatype* newtype))
AUGUR_MPI_DECL(int, Type_set_name, (MPI_Datatype datatype, const char* name))
AUGUR_MPI_DECL(int, Type_get_name, (MPI_Datatype datatype, char* name, int* resultlen))
AUGUR_MPI_DECL(int, Status_set_cancelled, (MPI_Status* status, int flag))
AUGUR_MPI_DECL(int, Status_set_elements, (MPI_Status* status, MPI_Datatype datatype, int count))
AUGUR_MPI_DECL(int, Status_set_elements_x, (MPI_Status* status, MPI_Datatype datatype, MPI_Count count))
AUGUR_MPI_DECL(int, Pack, (const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
                           int* position, MPI_Comm comm))
AUGUR_MPI_DECL(int, Unpack, (const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                             MPI_Datatype datatype, MPI_Comm comm))
AUGUR_MPI_DECL(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size))
AUGUR_MPI_DECL(int, Pack_external, (const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, MPI_Aint outsize, MPI_Aint* position))
AUGUR_MPI_DECL(int, Unpack_external, (const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype))
AUGUR_MPI_DECL(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size))
AUGUR_MPI_DECL(int, Get_address, (const void* location, MPI_Aint* address))
AUGUR_MPI_DECL(int, Address, (void* location, MPI_Aint* address))

/* Communicators, groups, topologies. */
AUGUR_MPI_DECL(int, Comm_size, (MPI_Comm comm, int* size))
AUGUR_MPI_DECL(int, Comm_rank, (MPI_Comm comm, int* rank))
AUGUR_MPI_DECL(int, Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm))
AUGUR_MPI_DECL(int, Comm_idup, (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request))
AUGUR_MPI_DECL(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm))
AUGUR_MPI_DECL(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm))
AUGUR_MPI_DECL(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm))
AUGUR_MPI_DECL(int, Comm_free, (MPI_Comm* comm))
AUGUR_MPI_DECL(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int* result))
AUGUR_MPI_DECL(int, Comm_group, (MPI_Comm comm, MPI_Group* group))
AUGUR_MPI_DECL(int, Comm_test_inter, (MPI_Comm comm, int* flag))
AUGUR_MPI_DECL(int, Comm_set_name, (MPI_Comm comm, const char* name))
AUGUR_MPI_DECL(int, Comm_get_name, (MPI_Comm comm, char* name, int* resultlen))
AUGUR_MPI_DECL(int, Group_size, (MPI_Group group, int* size))
AUGUR_MPI_DECL(int, Group_rank, (MPI_Group group, int* rank))
AUGUR_MPI_DECL(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup))
AUGUR_MPI_DECL(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup))
AUGUR_MPI_DECL(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
AUGUR_MPI_DECL(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
AUGUR_MPI_DECL(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
AUGUR_MPI_DECL(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                                            int ranks2[]))
AUGUR_MPI_DECL(int, Group_compare, (MPI_Group group1, MPI_Group group2, int* result))
AUGUR_MPI_DECL(int, Group_free, (MPI_Group* group))
AUGUR_MPI_DECL(int, Dims_create, (int nnodes, int ndims, int dims[]))
AUGUR_MPI_DECL(int, Cart_create, (MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                                  int reorder, MPI_Comm* comm_cart))
AUGUR_MPI_DECL(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
AUGUR_MPI_DECL(int, Cart_rank, (MPI_Comm comm, const int coords[], int* rank))
AUGUR_MPI_DECL(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest))
AUGUR_MPI_DECL(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm))
AUGUR_MPI_DECL(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
AUGUR_MPI_DECL(int, Cartdim_get, (MPI_Comm comm, int* ndims))
AUGUR_MPI_DECL(int, Topo_test, (MPI_Comm comm, int* status))
AUGUR_MPI_DECL(int, Comm_remote_size, (MPI_Comm comm, int* size))
AUGUR_MPI_DECL(int, Comm_remote_group, (MPI_Comm comm, MPI_Group* group))
AUGUR_MPI_DECL(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm* newintercomm))
AUGUR_MPI_DECL(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm))
AUGUR_MPI_DECL(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm))
AUGUR_MPI_DECL(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                                   MPI_Comm* comm_graph))
AUGUR_MPI_DECL(int, Graphdims_get, (MPI_Comm comm, int* nnodes, int* nedges))
AUGUR_MPI_DECL(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]))
AUGUR_MPI_DECL(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int* nneighbors))
AUGUR_MPI_DECL(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
AUGUR_MPI_DECL(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree, const int sources[],
                                                 const int sourceweights[], int outdegree, const int destinations[],
                                                 const int destweights[], MPI_Info info, int reorder,
                                                 MPI_Comm* comm_dist_graph))
AUGUR_MPI_DECL(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                        const int destinations[], const int weights[], MPI_Info info, int reorder,
                                        MPI_Comm* comm_dist_graph))
AUGUR_MPI_DECL(int, Dist_graph_neighbors_count, (MPI_Comm comm, int* indegree, int* outdegree, int* weighted))
AUGUR_MPI_DECL(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                           int maxoutdegree, int destinations[], int destweights[]))
AUGUR_MPI_DECL(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup))
AUGUR_MPI_DECL(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup))

/* Collectives and reduction operations. */
AUGUR_MPI_DECL(int, Barrier, (MPI_Comm comm))
AUGUR_MPI_DECL(int, Bcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
AUGUR_MPI_DECL(int, Reduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             int root, MPI_Comm comm))
AUGUR_MPI_DECL(int, Allreduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm))
AUGUR_MPI_DECL(int, Gather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
AUGUR_MPI_DECL(int, Gatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                              MPI_Comm comm))
AUGUR_MPI_DECL(int, Scatter, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
AUGUR_MPI_DECL(int, Scatterv, (const void* sendbuf, const int sendcounts[], const int displs[],
                               MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm))
AUGUR_MPI_DECL(int, Allgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
AUGUR_MPI_DECL(int, Allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
AUGUR_MPI_DECL(int, Alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
AUGUR_MPI_DECL(int, Alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm))
AUGUR_MPI_DECL(int, Reduce_scatter, (const void* sendbuf, void* recvbuf, const int recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
AUGUR_MPI_DECL(int, Reduce_scatter_block, (const void* sendbuf, void* recvbuf, int recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
AUGUR_MPI_DECL(int, Scan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm))
AUGUR_MPI_DECL(int, Exscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm))
AUGUR_MPI_DECL(int, Alltoallw, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))

/* Neighbourhood collectives on cartesian and graph topologies, blocking and nonblocking. */
AUGUR_MPI_DECL(int, Neighbor_allgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
AUGUR_MPI_DECL(int, Neighbor_allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                          MPI_Comm comm))
AUGUR_MPI_DECL(int, Neighbor_alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
AUGUR_MPI_DECL(int, Neighbor_alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                         MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                         const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
AUGUR_MPI_DECL(int, Neighbor_alltoallw, (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
AUGUR_MPI_DECL(int, Ineighbor_allgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Ineighbor_allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                           MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Ineighbor_alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Ineighbor_alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                          MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                          const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                          MPI_Request* request))
AUGUR_MPI_DECL(int, Ineighbor_alltoallw, (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                          const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                          MPI_Request* request))

/* Nonblocking collectives (MPI-3.1): the same algorithms, progressed by MPI_Test/MPI_Wait and by
 * every other MPI call. */
AUGUR_MPI_DECL(int, Ibarrier, (MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Ibcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                             MPI_Request* request))
AUGUR_MPI_DECL(int, Ireduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              int root, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Iallreduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Igather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Igatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Iscatter, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Iscatterv, (const void* sendbuf, const int sendcounts[], const int displs[],
                                MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Iallgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Iallgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Request* request))
AUGUR_MPI_DECL(int, Ialltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Ialltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Ialltoallw, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                 const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                 MPI_Request* request))
AUGUR_MPI_DECL(int, Ireduce_scatter, (const void* sendbuf, void* recvbuf, const int recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Ireduce_scatter_block, (const void* sendbuf, void* recvbuf, int recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Iscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Iexscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request))
AUGUR_MPI_DECL(int, Op_create, (MPI_User_function* user_fn, int commute, MPI_Op* op))
AUGUR_MPI_DECL(int, Op_free, (MPI_Op* op))
AUGUR_MPI_DECL(int, Op_commutative, (MPI_Op op, int* commute))
AUGUR_MPI_DECL(int, Reduce_local, (const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))

/* Generalized requests: operations the program completes itself. */
typedef int(MPI_Grequest_query_function)(void* extra_state, MPI_Status* status);
typedef int(MPI_Grequest_free_function)(void* extra_state);
typedef int(MPI_Grequest_cancel_function)(void* extra_state, int complete);
AUGUR_MPI_DECL(int, Grequest_start, (MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                                     MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request))
AUGUR_MPI_DECL(int, Grequest_complete, (MPI_Request request))

/* One-sided communication (docs/rma.md). */
#define MPI_WIN_NULL 0
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
#define MPI_WIN_BASE 10 /* predefined window attributes (MPI_Win_get_attr) */
#define MPI_WIN_SIZE 11
#define MPI_WIN_DISP_UNIT 12
#define MPI_WIN_CREATE_FLAVOR 13
#define MPI_WIN_MODEL 14
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2
typedef void(MPI_Win_errhandler_function)(MPI_Win*, int*, ...);
typedef int(MPI_Win_copy_attr_function)(MPI_Win oldwin, int win_keyval, void* extra_state, void* attribute_val_in,
                                        void* attribute_val_out, int* flag);
typedef int(MPI_Win_delete_attr_function)(MPI_Win win, int win_keyval, void* attribute_val, void* extra_state);
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function*)0)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function*)0)
#define MPI_WIN_DUP_FN ((MPI_Win_copy_attr_function*)augur_mpi_dup_fn)
AUGUR_MPI_DECL(int, Win_create, (void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win))
AUGUR_MPI_DECL(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win))
AUGUR_MPI_DECL(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr))
AUGUR_MPI_DECL(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                                   MPI_Win* win))
AUGUR_MPI_DECL(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win* win))
AUGUR_MPI_DECL(int, Win_attach, (MPI_Win win, void* base, MPI_Aint size))
AUGUR_MPI_DECL(int, Win_detach, (MPI_Win win, const void* base))
AUGUR_MPI_DECL(int, Win_free, (MPI_Win* win))
AUGUR_MPI_DECL(int, Put, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                          MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
AUGUR_MPI_DECL(int, Get, (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                          MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
AUGUR_MPI_DECL(int, Accumulate, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                 int target_rank, MPI_Aint target_disp, int target_count,
                                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
AUGUR_MPI_DECL(int, Get_accumulate, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                     void* result_addr, int result_count, MPI_Datatype result_datatype,
                                     int target_rank, MPI_Aint target_disp, int target_count,
                                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
AUGUR_MPI_DECL(int, Fetch_and_op, (const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                                   int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win))
AUGUR_MPI_DECL(int, Compare_and_swap, (const void* origin_addr, const void* compare_addr, void* result_addr,
                                       MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
AUGUR_MPI_DECL(int, Rput, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                           MPI_Request* request))
AUGUR_MPI_DECL(int, Rget, (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                           MPI_Request* request))
AUGUR_MPI_DECL(int, Raccumulate, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                  int target_rank, MPI_Aint target_disp, int target_count,
                                  MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request))
AUGUR_MPI_DECL(int, Rget_accumulate, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                      void* result_addr, int result_count, MPI_Datatype result_datatype,
                                      int target_rank, MPI_Aint target_disp, int target_count,
                                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request))
AUGUR_MPI_DECL(int, Win_fence, (int assert, MPI_Win win))
AUGUR_MPI_DECL(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
AUGUR_MPI_DECL(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
AUGUR_MPI_DECL(int, Win_complete, (MPI_Win win))
AUGUR_MPI_DECL(int, Win_wait, (MPI_Win win))
AUGUR_MPI_DECL(int, Win_test, (MPI_Win win, int* flag))
AUGUR_MPI_DECL(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
AUGUR_MPI_DECL(int, Win_unlock, (int rank, MPI_Win win))
AUGUR_MPI_DECL(int, Win_lock_all, (int assert, MPI_Win win))
AUGUR_MPI_DECL(int, Win_unlock_all, (MPI_Win win))
AUGUR_MPI_DECL(int, Win_flush, (int rank, MPI_Win win))
AUGUR_MPI_DECL(int, Win_flush_all, (MPI_Win win))
AUGUR_MPI_DECL(int, Win_flush_local, (int rank, MPI_Win win))
AUGUR_MPI_DECL(int, Win_flush_local_all, (MPI_Win win))
AUGUR_MPI_DECL(int, Win_sync, (MPI_Win win))
AUGUR_MPI_DECL(int, Win_get_group, (MPI_Win win, MPI_Group* group))
AUGUR_MPI_DECL(int, Win_set_name, (MPI_Win win, const char* win_name))
AUGUR_MPI_DECL(int, Win_get_name, (MPI_Win win, char* win_name, int* resultlen))
AUGUR_MPI_DECL(int, Win_set_info, (MPI_Win win, MPI_Info info))
AUGUR_MPI_DECL(int, Win_get_info, (MPI_Win win, MPI_Info* info_used))
AUGUR_MPI_DECL(int, Win_create_errhandler, (MPI_Win_errhandler_function* fn, MPI_Errhandler* errhandler))
AUGUR_MPI_DECL(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
AUGUR_MPI_DECL(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler* errhandler))
AUGUR_MPI_DECL(int, Win_call_errhandler, (MPI_Win win, int errorcode))
AUGUR_MPI_DECL(int, Win_create_keyval, (MPI_Win_copy_attr_function* copy_fn, MPI_Win_delete_attr_function* delete_fn,
                                        int* keyval, void* extra_state))
AUGUR_MPI_DECL(int, Win_free_keyval, (int* keyval))
AUGUR_MPI_DECL(int, Win_set_attr, (MPI_Win win, int keyval, void* attribute_val))
AUGUR_MPI_DECL(int, Win_get_attr, (MPI_Win win, int keyval, void* attribute_val, int* flag))
AUGUR_MPI_DECL(int, Win_delete_attr, (MPI_Win win, int keyval))
AUGUR_MPI_DECL(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
AUGUR_MPI_DECL(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
AUGUR_MPI_DECL(MPI_Win, Win_f2c, (MPI_Fint win))
AUGUR_MPI_DECL(MPI_Fint, Win_c2f, (MPI_Win win))

/* Handle conversion (handles are the same numbers in C and Fortran). */
AUGUR_MPI_DECL(MPI_Comm, Comm_f2c, (MPI_Fint comm))
AUGUR_MPI_DECL(MPI_Fint, Comm_c2f, (MPI_Comm comm))
AUGUR_MPI_DECL(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
AUGUR_MPI_DECL(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
AUGUR_MPI_DECL(MPI_Group, Group_f2c, (MPI_Fint group))
AUGUR_MPI_DECL(MPI_Fint, Group_c2f, (MPI_Group group))
AUGUR_MPI_DECL(MPI_Request, Request_f2c, (MPI_Fint request))
AUGUR_MPI_DECL(MPI_Fint, Request_c2f, (MPI_Request request))
AUGUR_MPI_DECL(MPI_Message, Message_f2c, (MPI_Fint message))
AUGUR_MPI_DECL(MPI_Fint, Message_c2f, (MPI_Message message))
AUGUR_MPI_DECL(MPI_Op, Op_f2c, (MPI_Fint op))
AUGUR_MPI_DECL(MPI_Fint, Op_c2f, (MPI_Op op))

#ifdef __cplusplus
}
#endif
#endif /* AUGUR_MPI_H */
