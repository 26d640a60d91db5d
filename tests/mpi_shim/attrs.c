/* Info objects, attribute caching with copy and delete callbacks (communicators, datatypes, the
 * MPI-1 names), datatype names, group ranges, status setters, user error classes and codes, and
 * the MPI-1 datatype constructors, each against what MPI-3.1 says. MPI_COMM_SELF's attribute is
 * deleted at MPI_Finalize, before MPI is finalized (checked at exit). */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int err_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

static void info_objects(void) {
  MPI_Info info, dup;
  char value[64];
  int flag = 0, n = -1, len = -1;
  MPI_Info_create(&info);
  MPI_Info_get_nkeys(info, &n);
  CHECK(n == 0, "new info has %d keys", n);
  MPI_Info_set(info, "first", "one");
  MPI_Info_set(info, "second", "two-two");
  MPI_Info_set(info, "first", "uno");  /* replaces, keeps its place */
  MPI_Info_get_nkeys(info, &n);
  MPI_Info_get_nthkey(info, 0, value);
  CHECK(n == 2 && strcmp(value, "first") == 0, "keys %d, first key %s", n, value);
  MPI_Info_get(info, "first", sizeof value - 1, value, &flag);
  CHECK(flag && strcmp(value, "uno") == 0, "get first: %d %s", flag, value);
  MPI_Info_get_valuelen(info, "second", &len, &flag);
  CHECK(flag && len == 7, "valuelen %d", len);
  MPI_Info_get(info, "second", 3, value, &flag);
  CHECK(flag && strcmp(value, "two") == 0, "get truncated to valuelen: %s", value);
  MPI_Info_get(info, "third", sizeof value - 1, value, &flag);
  CHECK(!flag, "absent key found");
  MPI_Info_dup(info, &dup);
  MPI_Info_delete(info, "first");
  MPI_Info_get_nkeys(info, &n);
  CHECK(n == 1, "after delete: %d keys", n);
  MPI_Info_get(dup, "first", sizeof value - 1, value, &flag);
  CHECK(flag && strcmp(value, "uno") == 0, "the dup keeps its own keys");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(err_class(MPI_Info_delete(info, "first")) == MPI_ERR_INFO_NOKEY, "delete of an absent key");
  char longkey[MPI_MAX_INFO_KEY + 2];
  memset(longkey, 'k', sizeof longkey - 1);
  longkey[sizeof longkey - 1] = '\0';
  CHECK(err_class(MPI_Info_set(info, longkey, "v")) == MPI_ERR_INFO_KEY, "key past MPI_MAX_INFO_KEY");
  CHECK(err_class(MPI_Info_set(MPI_INFO_NULL, "k", "v")) == MPI_ERR_INFO, "MPI_INFO_NULL refused");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Info_free(&info);
  MPI_Info_free(&dup);
  CHECK(info == MPI_INFO_NULL && dup == MPI_INFO_NULL, "free sets MPI_INFO_NULL");
  MPI_Info_get(MPI_INFO_ENV, "maxprocs", sizeof value - 1, value, &flag);
  CHECK(flag && atoi(value) == g_size, "MPI_INFO_ENV maxprocs %s", flag ? value : "(none)");
  /* Hints on communicators: kept, copied by dup, replaced by dup_with_info. */
  MPI_Comm a, b;
  MPI_Info_create(&info);
  MPI_Info_set(info, "augur_hint", "yes");
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_set_info(a, info);
  MPI_Info_free(&info);
  MPI_Comm_dup(a, &b);
  MPI_Comm_get_info(b, &info);
  MPI_Info_get(info, "augur_hint", sizeof value - 1, value, &flag);
  CHECK(flag && strcmp(value, "yes") == 0, "hints copied by dup");
  MPI_Info_free(&info);
  MPI_Comm_free(&b);
  MPI_Info_create(&info);
  MPI_Comm_dup_with_info(a, info, &b);
  MPI_Info_free(&info);
  MPI_Comm_get_info(b, &info);
  MPI_Info_get_nkeys(info, &n);
  CHECK(n == 0, "dup_with_info takes the new hints: %d keys", n);
  MPI_Info_free(&info);
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

static int copies, deletes;
static int copy_plus_one(MPI_Comm old, int key, void* extra, void* in, void* out, int* flag) {
  (void)old;
  (void)key;
  ++copies;
  CHECK(extra == &copies, "extra_state passed through");
  *(intptr_t*)out = (intptr_t)in + 1;
  *flag = 1;
  return MPI_SUCCESS;
}
static int count_delete(MPI_Comm c, int key, void* val, void* extra) {
  (void)c;
  (void)key;
  (void)val;
  (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}

static void comm_attributes(void) {
  int key, flag = 0;
  void* v = NULL;
  MPI_Comm a, b;
  copies = deletes = 0;
  MPI_Comm_create_keyval(copy_plus_one, count_delete, &key, &copies);
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_get_attr(a, key, &v, &flag);
  CHECK(!flag, "no attribute yet");
  MPI_Comm_set_attr(a, key, (void*)(intptr_t)40);
  MPI_Comm_get_attr(a, key, &v, &flag);
  CHECK(flag && (intptr_t)v == 40, "get after set: %ld", (long)(intptr_t)v);
  MPI_Comm_dup(a, &b);
  MPI_Comm_get_attr(b, key, &v, &flag);
  CHECK(copies == 1 && flag && (intptr_t)v == 41, "dup through the copy callback: %d copies, value %ld", copies,
        (long)(intptr_t)v);
  MPI_Comm_set_attr(a, key, (void*)(intptr_t)50);
  CHECK(deletes == 1, "replacing calls delete: %d", deletes);
  MPI_Comm_delete_attr(a, key);
  MPI_Comm_get_attr(a, key, &v, &flag);
  CHECK(deletes == 2 && !flag, "delete_attr: %d deletes, flag %d", deletes, flag);
  MPI_Comm_free(&b);
  CHECK(deletes == 3, "comm_free deletes: %d", deletes);
  /* A freed keyval: the attributes already set stay until deleted; no new ones. */
  MPI_Comm_set_attr(a, key, (void*)(intptr_t)60);
  int k2 = key;
  MPI_Comm_free_keyval(&k2);
  CHECK(k2 == MPI_KEYVAL_INVALID, "free_keyval sets MPI_KEYVAL_INVALID");
  MPI_Comm_get_attr(a, key, &v, &flag);
  CHECK(flag && (intptr_t)v == 60, "attribute outlives its freed keyval");
  MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
  CHECK(err_class(MPI_Comm_set_attr(a, key, NULL)) == MPI_ERR_KEYVAL, "set with a freed keyval refused");
  CHECK(err_class(MPI_Comm_set_attr(a, MPI_TAG_UB, NULL)) == MPI_ERR_KEYVAL, "predefined keys are read-only");
  MPI_Comm_free(&a);
  CHECK(deletes == 4, "comm_free after free_keyval still deletes: %d", deletes);
  /* Predefined copy functions and the MPI-1 names. */
  int kd, kn;
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kd, NULL);
  MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &kn, NULL);
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_set_attr(a, kd, (void*)(intptr_t)7);
  MPI_Attr_put(a, kn, (void*)(intptr_t)8);
  MPI_Comm_dup(a, &b);
  int fd = 0, fn = 1;
  MPI_Comm_get_attr(b, kd, &v, &fd);
  CHECK(fd && (intptr_t)v == 7, "MPI_COMM_DUP_FN copies the value");
  MPI_Attr_get(b, kn, &v, &fn);
  CHECK(!fn, "MPI_NULL_COPY_FN does not copy");
  MPI_Attr_get(a, kn, &v, &fn);
  CHECK(fn && (intptr_t)v == 8, "MPI_Attr_get");
  MPI_Attr_delete(a, kn);
  MPI_Attr_get(a, kn, &v, &fn);
  CHECK(!fn, "MPI_Attr_delete");
  MPI_Keyval_free(&kn);
  MPI_Comm_free_keyval(&kd);
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  int* tag_ub = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB still answered");
}

static int type_deletes;
static int type_delete(MPI_Datatype t, int key, void* val, void* extra) {
  (void)t;
  (void)key;
  (void)val;
  (void)extra;
  ++type_deletes;
  return MPI_SUCCESS;
}

static void type_attributes_and_names(void) {
  int key, flag = 0;
  void* v = NULL;
  MPI_Datatype t, d;
  type_deletes = 0;
  MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &key, NULL);
  MPI_Type_contiguous(3, MPI_INT, &t);
  MPI_Type_set_attr(t, key, (void*)(intptr_t)9);
  MPI_Type_dup(t, &d);
  MPI_Type_get_attr(d, key, &v, &flag);
  CHECK(flag && (intptr_t)v == 9, "type attribute copied by dup");
  MPI_Type_free(&d);
  MPI_Type_free(&t);
  CHECK(type_deletes == 2, "type_free deletes: %d", type_deletes);
  MPI_Type_free_keyval(&key);
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Type_get_name(MPI_INT, name, &len);
  CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "predefined name: %s", name);
  MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &t);
  MPI_Type_set_name(t, "two of three");
  MPI_Type_get_name(t, name, &len);
  CHECK(strcmp(name, "two of three") == 0 && len == 12, "set name: %s", name);
  MPI_Type_free(&t);
}

static void groups_status_errors(void) {
  MPI_Group world, even, odd;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int ranges[1][3] = {{0, g_size - 1, 2}};
  MPI_Group_range_incl(world, 1, ranges, &even);
  MPI_Group_range_excl(world, 1, ranges, &odd);
  int ne = -1, no = -1;
  MPI_Group_size(even, &ne);
  MPI_Group_size(odd, &no);
  CHECK(ne == (g_size + 1) / 2 && no == g_size / 2, "range incl %d, excl %d", ne, no);
  int r1 = 1, w1 = -1;
  if (ne > 1) {
    MPI_Group_translate_ranks(even, 1, &r1, world, &w1);
    CHECK(w1 == 2, "even group's rank 1 is world rank %d", w1);
  }
  int back[1][3] = {{g_size - 1, 0, -1}};  /* a negative stride: all ranks, reversed */
  MPI_Group rev;
  MPI_Group_range_incl(world, 1, back, &rev);
  int zero = 0, wr = -1;
  MPI_Group_translate_ranks(rev, 1, &zero, world, &wr);
  CHECK(wr == g_size - 1, "reversed group's rank 0 is world rank %d", wr);
  MPI_Group_free(&rev);
  MPI_Group_free(&even);
  MPI_Group_free(&odd);
  MPI_Group_free(&world);

  MPI_Status st;
  int flag = 0, count = -1;
  MPI_Status_set_cancelled(&st, 1);
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag, "status_set_cancelled");
  MPI_Status_set_elements(&st, MPI_INT, 5);
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == 5, "status_set_elements: count %d", count);
  MPI_Get_elements(&st, MPI_INT, &count);
  CHECK(count == 5, "status_set_elements: elements %d", count);

  int cls, code, got = -1, len = 0, *last = NULL;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Add_error_class(&cls);
  MPI_Add_error_code(cls, &code);
  MPI_Add_error_string(code, "augur test: a user error");
  MPI_Error_class(code, &got);
  MPI_Error_string(code, text, &len);
  CHECK(cls > MPI_ERR_LASTCODE && code > cls && got == cls, "class %d code %d (class of code %d)", cls, code, got);
  CHECK(strcmp(text, "augur test: a user error") == 0 && len == (int)strlen(text), "error string: %s", text);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
  CHECK(flag && *last >= code, "MPI_LASTUSEDCODE %d", flag ? *last : -1);
}

static void mpi1_datatypes(void) {
  MPI_Datatype s1, s2, h1, h2;
  int bl[2] = {1, 2};
  MPI_Aint disp[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_struct(2, bl, disp, types, &s1);
  MPI_Type_create_struct(2, bl, disp, types, &s2);
  MPI_Aint lb1, ex1, lb2, ex2, ub = 0;
  int sz1, sz2;
  MPI_Type_get_extent(s1, &lb1, &ex1);
  MPI_Type_get_extent(s2, &lb2, &ex2);
  MPI_Type_size(s1, &sz1);
  MPI_Type_size(s2, &sz2);
  CHECK(lb1 == lb2 && ex1 == ex2 && sz1 == sz2 && sz1 == 20, "Type_struct as Type_create_struct");
  MPI_Type_hvector(3, 1, 16, MPI_INT, &h1);
  MPI_Type_hindexed(2, bl, disp, MPI_INT, &h2);
  MPI_Type_get_extent(h1, &lb1, &ex1);
  MPI_Type_ub(h1, &ub);
  CHECK(ex1 == 36 && ub == 36, "Type_hvector extent %ld, ub %ld", (long)ex1, (long)ub);
  MPI_Type_size(h2, &sz2);
  MPI_Type_lb(h2, &lb2);
  CHECK(sz2 == 12 && lb2 == 0, "Type_hindexed size %d lb %ld", sz2, (long)lb2);
  MPI_Type_free(&s1);
  MPI_Type_free(&s2);
  MPI_Type_free(&h1);
  MPI_Type_free(&h2);
}

/* MPI_COMM_SELF's attribute is deleted inside MPI_Finalize, while MPI is still running. */
static int self_deleted_running = -1;
static int self_delete(MPI_Comm c, int key, void* val, void* extra) {
  (void)c;
  (void)key;
  (void)val;
  (void)extra;
  int fin = 1;
  MPI_Finalized(&fin);
  self_deleted_running = fin == 0;
  return MPI_SUCCESS;
}
static void check_at_exit(void) {
  if (self_deleted_running != 1) {
    fprintf(stderr, "rank %d: MPI_COMM_SELF's attribute was not deleted in MPI_Finalize (%d)\n", g_rank,
            self_deleted_running);
    _exit(1);
  }
}

/* Generalized requests (MPI-3.1 12.2): the library calls the program's query, free and cancel
 * callbacks at the points the standard names, and no others. */
static int g_q, g_f, g_c, g_cancel_complete = -1;
static int greq_query(void* extra, MPI_Status* st) {
  ++g_q;
  MPI_Status_set_elements(st, MPI_INT, 3);
  MPI_Status_set_cancelled(st, 0);
  st->MPI_SOURCE = MPI_UNDEFINED;
  st->MPI_TAG = MPI_UNDEFINED;
  return *(int*)extra == 7 ? MPI_SUCCESS : MPI_ERR_OTHER;
}
static int greq_free(void* extra) {
  (void)extra;
  ++g_f;
  return MPI_SUCCESS;
}
static int greq_cancel(void* extra, int complete) {
  (void)extra;
  ++g_c;
  g_cancel_complete = complete;
  return MPI_SUCCESS;
}

static void generalized_requests(void) {
  int extra = 7, flag = -1, count = -1;
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Status st;
  CHECK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &extra, &r) == MPI_SUCCESS && r != MPI_REQUEST_NULL,
        "grequest_start");
  MPI_Test(&r, &flag, &st);
  CHECK(flag == 0 && g_q == 0 && g_f == 0 && r != MPI_REQUEST_NULL, "an incomplete generalized request tests false");
  MPI_Cancel(&r);
  CHECK(g_c == 1 && g_cancel_complete == 0, "cancel callback: %d calls, complete=%d", g_c, g_cancel_complete);
  MPI_Grequest_complete(r);
  MPI_Request_get_status(r, &flag, &st);
  CHECK(flag == 1 && g_q == 1 && g_f == 0 && r != MPI_REQUEST_NULL, "get_status queries and keeps the request");
  MPI_Wait(&r, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(r == MPI_REQUEST_NULL && g_q == 2 && g_f == 1 && count == 3 && st.MPI_SOURCE == MPI_UNDEFINED,
        "wait: query then free (%d, %d), count %d", g_q, g_f, count);
  /* A query callback's error reaches the caller of the completion. */
  int bad = 8;
  MPI_Grequest_start(greq_query, greq_free, greq_cancel, &bad, &r);
  MPI_Grequest_complete(r);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = MPI_Wait(&r, &st);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  CHECK(rc != MPI_SUCCESS && g_f == 2, "a failing query callback: rc %d, free calls %d", rc, g_f);
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  generalized_requests();
  info_objects();
  comm_attributes();
  type_attributes_and_names();
  groups_status_errors();
  mpi1_datatypes();
  int key;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &key, NULL);
  MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
  atexit(check_at_exit);
  return finish("attrs");
}
