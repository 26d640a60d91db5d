// Attribute caching (keyvals with copy and delete callbacks on communicators and datatypes, the
// MPI-1 keyval names too), MPI_Info objects, and the info hints of communicators.
//
// Attributes are pointers the library keeps per object and keyval. MPI_Comm_dup / MPI_Type_dup
// pass each through its keyval's copy callback; freeing the object, replacing an attribute or
// deleting it calls the delete callback (MPI-3.1 6.7). MPI_Finalize deletes MPI_COMM_SELF's
// attributes first, then MPI_COMM_WORLD's, so that programs can hook finalization as MPI allows.
#include <cstring>
#include <string>

#include "shim.h"

extern "C" int augur_mpi_dup_fn(int, int, void*, void* in, void* out, int* flag) {
  std::memcpy(out, &in, sizeof in);
  *flag = 1;
  return MPI_SUCCESS;
}

namespace augur::mpi {

namespace {

using CopyFn = int(int, int, void*, void*, void*, int*);
using DeleteFn = int(int, int, void*, void*);
// Fortran callbacks: every argument by reference; `V` is the attribute and extra-state integer.
template <typename V>
using FortranCopyFn = void(const MPI_Fint*, const MPI_Fint*, const V*, const V*, V*, MPI_Fint*, MPI_Fint*);
template <typename V>
using FortranDeleteFn = void(const MPI_Fint*, const MPI_Fint*, const V*, const V*, MPI_Fint*);

template <typename V>
V as_int(void* p) {
  return static_cast<V>(reinterpret_cast<std::intptr_t>(p));
}

// A keyval's copy callback on one attribute: *out and *flag as the callback sets them.
int call_copy(const Keyval& kv, int handle, int k, void* value, void** out, int* flag) {
  if (kv.lang == Keyval::Lang::kC) return reinterpret_cast<CopyFn*>(kv.copy)(handle, k, kv.extra, value, out, flag);
  const MPI_Fint h = handle, key = k;
  MPI_Fint f = 0, ierr = MPI_SUCCESS;
  auto run = [&](auto zero) {
    using V = decltype(zero);
    const V extra = as_int<V>(kv.extra), in = as_int<V>(value);
    V o = 0;
    reinterpret_cast<FortranCopyFn<V>*>(kv.copy)(&h, &key, &extra, &in, &o, &f, &ierr);
    *out = reinterpret_cast<void*>(static_cast<std::intptr_t>(o));
  };
  if (kv.lang == Keyval::Lang::kFortran) {
    run(MPI_Aint{0});
  } else {
    run(MPI_Fint{0});
  }
  *flag = f != 0 ? 1 : 0;
  return ierr;
}

Keyval* keyval_of(int k, Keyval::Kind kind) {
  auto& v = S().keyvals;
  if (k < kFirstKeyval || static_cast<std::size_t>(k - kFirstKeyval) >= v.size()) return nullptr;
  Keyval& kv = v[static_cast<std::size_t>(k - kFirstKeyval)];
  return kv.kind == kind ? &kv : nullptr;
}

Err call_delete(const Keyval& kv, int handle, int k, void* value) {
  if (kv.del == nullptr) return ok();
  int rc = MPI_SUCCESS;
  if (kv.lang == Keyval::Lang::kC) {
    rc = reinterpret_cast<DeleteFn*>(kv.del)(handle, k, value, kv.extra);
  } else {
    const MPI_Fint h = handle, key = k;
    MPI_Fint ierr = MPI_SUCCESS;
    auto run = [&](auto zero) {
      using V = decltype(zero);
      const V v = as_int<V>(value), extra = as_int<V>(kv.extra);
      reinterpret_cast<FortranDeleteFn<V>*>(kv.del)(&h, &key, &v, &extra, &ierr);
    };
    if (kv.lang == Keyval::Lang::kFortran) {
      run(MPI_Aint{0});
    } else {
      run(MPI_Fint{0});
    }
    rc = ierr;
  }
  if (rc != MPI_SUCCESS) return err(rc, "the attribute's delete callback failed (keyval " + std::to_string(k) + ")");
  return ok();
}

Err create_keyval(Keyval::Kind kind, void* copy, void* del, int* keyval, void* extra,
                  Keyval::Lang lang = Keyval::Lang::kC) {
  AUGUR_ERR_RETURN(check_running());
  if (keyval == nullptr) return err(MPI_ERR_ARG, "null keyval pointer");
  S().keyvals.push_back(Keyval{kind, copy, del, extra, false, lang});
  *keyval = kFirstKeyval + static_cast<int>(S().keyvals.size() - 1);
  return ok();
}

Err free_keyval(Keyval::Kind kind, int* keyval) {
  AUGUR_ERR_RETURN(check_running());
  if (keyval == nullptr) return err(MPI_ERR_ARG, "null keyval pointer");
  Keyval* kv = keyval_of(*keyval, kind);
  if (kv == nullptr || kv->freed) return err(MPI_ERR_KEYVAL, "invalid keyval " + std::to_string(*keyval));
  kv->freed = true;
  *keyval = MPI_KEYVAL_INVALID;
  return ok();
}

Err set_attr(Keyval::Kind kind, int handle, std::map<int, void*>& attrs, int k, void* value) {
  Keyval* kv = keyval_of(k, kind);
  if (kv == nullptr || kv->freed) return err(MPI_ERR_KEYVAL, "invalid keyval " + std::to_string(k));
  if (auto it = attrs.find(k); it != attrs.end()) {
    AUGUR_ERR_RETURN(call_delete(*kv, handle, k, it->second));
    it->second = value;
  } else {
    attrs.emplace(k, value);
  }
  return ok();
}

Err get_attr(Keyval::Kind kind, const std::map<int, void*>& attrs, int k, void* value, int* flag) {
  if (value == nullptr || flag == nullptr) return err(MPI_ERR_ARG, "null argument");
  if (keyval_of(k, kind) == nullptr) return err(MPI_ERR_KEYVAL, "invalid keyval " + std::to_string(k));
  const auto it = attrs.find(k);
  *flag = it != attrs.end() ? 1 : 0;
  if (*flag) std::memcpy(value, &it->second, sizeof(void*));
  return ok();
}

Err delete_attr(Keyval::Kind kind, int handle, std::map<int, void*>& attrs, int k) {
  Keyval* kv = keyval_of(k, kind);
  if (kv == nullptr) return err(MPI_ERR_KEYVAL, "invalid keyval " + std::to_string(k));
  const auto it = attrs.find(k);
  if (it == attrs.end()) return err(MPI_ERR_KEYVAL, "no attribute for keyval " + std::to_string(k));
  AUGUR_ERR_RETURN(call_delete(*kv, handle, k, it->second));
  attrs.erase(it);
  return ok();
}

using Hints = std::vector<std::pair<std::string, std::string>>;

Hints* info_of(MPI_Info info) {
  auto& v = S().infos;
  if (info < 0 || static_cast<std::size_t>(info) >= v.size()) return nullptr;
  return v[static_cast<std::size_t>(info)].get();
}

MPI_Info new_info(Hints h) {
  auto& v = S().infos;
  if (v.size() < 2) v.resize(2);  // 0: MPI_INFO_NULL; 1: MPI_INFO_ENV, made on first use
  for (std::size_t i = 2; i < v.size(); ++i) {
    if (!v[i]) {
      v[i] = std::make_unique<Hints>(std::move(h));
      return static_cast<MPI_Info>(i);
    }
  }
  v.push_back(std::make_unique<Hints>(std::move(h)));
  return static_cast<MPI_Info>(v.size() - 1);
}

// MPI_INFO_ENV: how the job was started (MPI-3.1 8.10).
void make_env_info() {
  auto& v = S().infos;
  if (v.size() < 2) v.resize(2);
  if (v[1]) return;
  Hints h;
  if (const char* p = std::getenv("AUGUR_PROGRAM")) h.emplace_back("command", p);
  h.emplace_back("maxprocs", std::to_string(S().world_size));
  h.emplace_back("thread_level", S().thread_level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                                 : S().thread_level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                 : S().thread_level == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED"
                                                                           : "MPI_THREAD_SINGLE");
  v[1] = std::make_unique<Hints>(std::move(h));
}

Err check_info(MPI_Info info) {
  AUGUR_ERR_RETURN(check_running());
  if (info == MPI_INFO_ENV) make_env_info();
  if (info == MPI_INFO_NULL || info_of(info) == nullptr) {
    return err(MPI_ERR_INFO, "invalid info object " + std::to_string(info));
  }
  return ok();
}

Err check_key(const char* key) {
  if (key == nullptr) return err(MPI_ERR_INFO_KEY, "null key");
  const std::size_t n = std::strlen(key);
  if (n == 0 || n > MPI_MAX_INFO_KEY) {
    return err(MPI_ERR_INFO_KEY, "info key of " + std::to_string(n) + " characters (1 to " +
                                     std::to_string(MPI_MAX_INFO_KEY) + ")");
  }
  return ok();
}

Hints::iterator find_key(Hints& h, const char* key) {
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it->first == key) return it;
  }
  return h.end();
}

}  // namespace

Err create_keyval_lang(Keyval::Kind kind, void* copy, void* del, int* keyval, void* extra, Keyval::Lang lang) {
  return create_keyval(kind, copy, del, keyval, extra, lang);
}

Err copy_attrs(Keyval::Kind kind, int old_handle, const std::map<int, void*>& from, std::map<int, void*>* to) {
  to->clear();
  for (const auto& [k, value] : from) {
    Keyval* kv = keyval_of(k, kind);
    if (kv == nullptr || kv->copy == nullptr) continue;  // NULL_COPY_FN: not copied
    void* out = nullptr;
    int flag = 0;
    const int rc = call_copy(*kv, old_handle, k, value, &out, &flag);
    if (rc != MPI_SUCCESS) return err(rc, "the attribute's copy callback failed (keyval " + std::to_string(k) + ")");
    if (flag) to->emplace(k, out);
  }
  return ok();
}

Err delete_attrs(Keyval::Kind kind, int handle, std::map<int, void*>* attrs) {
  Err first;
  for (const auto& [k, value] : *attrs) {
    if (Keyval* kv = keyval_of(k, kind)) {
      if (Err e = call_delete(*kv, handle, k, value); !e.ok() && first.ok()) first = e;
    }
  }
  attrs->clear();
  return first;
}

}  // namespace augur::mpi

using namespace augur::mpi;

// --- keyvals and attributes --------------------------------------------------------------------

AUGUR_MPI_FN(int, Comm_create_keyval,
             (MPI_Comm_copy_attr_function * copy_fn, MPI_Comm_delete_attr_function* delete_fn, int* keyval,
              void* extra_state),
             (copy_fn, delete_fn, keyval, extra_state)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Comm_create_keyval",
                  create_keyval(Keyval::Kind::kComm, reinterpret_cast<void*>(copy_fn), reinterpret_cast<void*>(delete_fn),
                                keyval, extra_state));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Keyval_create,
             (MPI_Copy_function * copy_fn, MPI_Delete_function* delete_fn, int* keyval, void* extra_state),
             (copy_fn, delete_fn, keyval, extra_state)) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

AUGUR_MPI_FN(int, Comm_free_keyval, (int* keyval), (keyval)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Comm_free_keyval", free_keyval(Keyval::Kind::kComm, keyval));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Keyval_free, (int* keyval), (keyval)) { return PMPI_Comm_free_keyval(keyval); }

AUGUR_MPI_FN(int, Comm_set_attr, (MPI_Comm comm, int keyval, void* attribute_val), (comm, keyval, attribute_val)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_set_attr", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_set_attr", check_comm(comm));
  AUGUR_MPI_CHECK(comm, "MPI_Comm_set_attr",
                  set_attr(Keyval::Kind::kComm, comm, comm_of(comm)->attrs, keyval, attribute_val));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Attr_put, (MPI_Comm comm, int keyval, void* attribute_val), (comm, keyval, attribute_val)) {
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

AUGUR_MPI_FN(int, Comm_delete_attr, (MPI_Comm comm, int keyval), (comm, keyval)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_delete_attr", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_delete_attr", check_comm(comm));
  AUGUR_MPI_CHECK(comm, "MPI_Comm_delete_attr", delete_attr(Keyval::Kind::kComm, comm, comm_of(comm)->attrs, keyval));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Attr_delete, (MPI_Comm comm, int keyval), (comm, keyval)) { return PMPI_Comm_delete_attr(comm, keyval); }

namespace augur::mpi {
// The user attributes half of MPI_Comm_get_attr (runtime.cpp answers the predefined keys).
Err get_comm_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return get_attr(Keyval::Kind::kComm, comm_of(comm)->attrs, keyval, attribute_val, flag);
}
}  // namespace augur::mpi

AUGUR_MPI_FN(int, Type_create_keyval,
             (MPI_Type_copy_attr_function * copy_fn, MPI_Type_delete_attr_function* delete_fn, int* keyval,
              void* extra_state),
             (copy_fn, delete_fn, keyval, extra_state)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_create_keyval",
                  create_keyval(Keyval::Kind::kType, reinterpret_cast<void*>(copy_fn), reinterpret_cast<void*>(delete_fn),
                                keyval, extra_state));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_free_keyval, (int* keyval), (keyval)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_free_keyval", free_keyval(Keyval::Kind::kType, keyval));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_set_attr, (MPI_Datatype datatype, int keyval, void* attribute_val),
             (datatype, keyval, attribute_val)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_set_attr", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_set_attr", check_type(datatype, false));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_set_attr",
                  set_attr(Keyval::Kind::kType, datatype, type_of(datatype)->attrs, keyval, attribute_val));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_get_attr, (MPI_Datatype datatype, int keyval, void* attribute_val, int* flag),
             (datatype, keyval, attribute_val, flag)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_attr", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_attr", check_type(datatype, false));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_get_attr",
                  get_attr(Keyval::Kind::kType, type_of(datatype)->attrs, keyval, attribute_val, flag));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Type_delete_attr, (MPI_Datatype datatype, int keyval), (datatype, keyval)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_delete_attr", check_running());
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_delete_attr", check_type(datatype, false));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Type_delete_attr",
                  delete_attr(Keyval::Kind::kType, datatype, type_of(datatype)->attrs, keyval));
  return MPI_SUCCESS;
}

// --- info objects ----------------------------------------------------------------------------

AUGUR_MPI_FN(int, Info_create, (MPI_Info * info), (info)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Info_create", check_running());
  if (info == nullptr) return raise(MPI_COMM_WORLD, "MPI_Info_create", err(MPI_ERR_ARG, "null argument"));
  *info = new_info({});
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Info_set, (MPI_Info info, const char* key, const char* value), (info, key, value)) {
  const char* fn = "MPI_Info_set";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_info(info));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_key(key));
  if (value == nullptr || std::strlen(value) == 0 || std::strlen(value) > MPI_MAX_INFO_VAL) {
    return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_INFO_VALUE, "info value empty or longer than MPI_MAX_INFO_VAL"));
  }
  Hints& h = *info_of(info);
  if (auto it = find_key(h, key); it != h.end()) {
    it->second = value;
  } else {
    h.emplace_back(key, value);
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Info_get, (MPI_Info info, const char* key, int valuelen, char* value, int* flag),
             (info, key, valuelen, value, flag)) {
  const char* fn = "MPI_Info_get";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_info(info));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_key(key));
  if (flag == nullptr || valuelen < 0 || (value == nullptr && valuelen > 0)) {
    return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null flag or value, or negative valuelen"));
  }
  Hints& h = *info_of(info);
  const auto it = find_key(h, key);
  *flag = it != h.end() ? 1 : 0;
  if (*flag) {  // at most valuelen characters and the terminating NUL (MPI-3.1 9.1)
    const std::size_t n = std::min(it->second.size(), static_cast<std::size_t>(valuelen));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Info_get_valuelen, (MPI_Info info, const char* key, int* valuelen, int* flag),
             (info, key, valuelen, flag)) {
  const char* fn = "MPI_Info_get_valuelen";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_info(info));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_key(key));
  if (valuelen == nullptr || flag == nullptr) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null argument"));
  Hints& h = *info_of(info);
  const auto it = find_key(h, key);
  *flag = it != h.end() ? 1 : 0;
  if (*flag) *valuelen = static_cast<int>(it->second.size());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Info_get_nkeys, (MPI_Info info, int* nkeys), (info, nkeys)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Info_get_nkeys", check_info(info));
  if (nkeys == nullptr) return raise(MPI_COMM_WORLD, "MPI_Info_get_nkeys", err(MPI_ERR_ARG, "null argument"));
  *nkeys = static_cast<int>(info_of(info)->size());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Info_get_nthkey, (MPI_Info info, int n, char* key), (info, n, key)) {
  const char* fn = "MPI_Info_get_nthkey";
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, fn, check_info(info));
  const Hints& h = *info_of(info);
  if (key == nullptr) return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "null key"));
  if (n < 0 || static_cast<std::size_t>(n) >= h.size()) {
    return raise(MPI_COMM_WORLD, fn, err(MPI_ERR_ARG, "key number " + std::to_string(n) + " of " + std::to_string(h.size())));
  }
  std::memcpy(key, h[static_cast<std::size_t>(n)].first.c_str(), h[static_cast<std::size_t>(n)].first.size() + 1);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Info_delete, (MPI_Info info, const char* key), (info, key)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Info_delete", check_info(info));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Info_delete", check_key(key));
  Hints& h = *info_of(info);
  const auto it = find_key(h, key);
  if (it == h.end()) return raise(MPI_COMM_WORLD, "MPI_Info_delete", err(MPI_ERR_INFO_NOKEY, std::string("no key ") + key));
  h.erase(it);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Info_dup, (MPI_Info info, MPI_Info* newinfo), (info, newinfo)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Info_dup", check_info(info));
  if (newinfo == nullptr) return raise(MPI_COMM_WORLD, "MPI_Info_dup", err(MPI_ERR_ARG, "null argument"));
  *newinfo = new_info(*info_of(info));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Info_free, (MPI_Info * info), (info)) {
  if (info == nullptr) return raise(MPI_COMM_WORLD, "MPI_Info_free", err(MPI_ERR_ARG, "null argument"));
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Info_free", check_info(*info));
  if (*info == MPI_INFO_ENV) return raise(MPI_COMM_WORLD, "MPI_Info_free", err(MPI_ERR_INFO, "cannot free MPI_INFO_ENV"));
  S().infos[static_cast<std::size_t>(*info)].reset();
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

// --- communicators' info hints -------------------------------------------------------------------
// augur takes no hints yet; they are kept and given back (MPI_Comm_get_info), as MPI allows.

AUGUR_MPI_FN(int, Comm_set_info, (MPI_Comm comm, MPI_Info info), (comm, info)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_set_info", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_set_info", check_comm(comm));
  AUGUR_MPI_CHECK(comm, "MPI_Comm_set_info", check_info(info));
  comm_of(comm)->hints = *info_of(info);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_get_info, (MPI_Comm comm, MPI_Info* info_used), (comm, info_used)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_get_info", check_running());
  AUGUR_MPI_CHECK(comm, "MPI_Comm_get_info", check_comm(comm));
  if (info_used == nullptr) return raise(comm, "MPI_Comm_get_info", err(MPI_ERR_ARG, "null argument"));
  *info_used = new_info(comm_of(comm)->hints);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm), (comm, info, newcomm)) {
  AUGUR_MPI_CHECK(comm, "MPI_Comm_dup_with_info", check_running());
  if (info != MPI_INFO_NULL) AUGUR_MPI_CHECK(comm, "MPI_Comm_dup_with_info", check_info(info));
  const int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  comm_of(*newcomm)->hints = info == MPI_INFO_NULL ? Hints{} : *info_of(info);
  return MPI_SUCCESS;
}

// --- windows' keyvals, attributes and hints ----------------------------------------------------

namespace augur::mpi {
std::vector<std::pair<std::string, std::string>>* info_hints(MPI_Info info) {
  if (info == MPI_INFO_ENV) make_env_info();
  return info == MPI_INFO_NULL ? nullptr : info_of(info);
}
MPI_Info make_info(std::vector<std::pair<std::string, std::string>> hints) { return new_info(std::move(hints)); }
}  // namespace augur::mpi

AUGUR_MPI_FN(int, Win_create_keyval,
             (MPI_Win_copy_attr_function * copy_fn, MPI_Win_delete_attr_function* delete_fn, int* keyval,
              void* extra_state),
             (copy_fn, delete_fn, keyval, extra_state)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Win_create_keyval",
                  create_keyval(Keyval::Kind::kWin, reinterpret_cast<void*>(copy_fn), reinterpret_cast<void*>(delete_fn),
                                keyval, extra_state));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_free_keyval, (int* keyval), (keyval)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Win_free_keyval", free_keyval(Keyval::Kind::kWin, keyval));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_set_attr, (MPI_Win win, int keyval, void* attribute_val), (win, keyval, attribute_val)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Win_set_attr", check_running());
  if (Err e = check_win(win); !e.ok()) return raise_win(win, "MPI_Win_set_attr", e);
  if (Err e = set_attr(Keyval::Kind::kWin, win, *win_attrs(win), keyval, attribute_val); !e.ok()) {
    return raise_win(win, "MPI_Win_set_attr", e);
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_get_attr, (MPI_Win win, int keyval, void* attribute_val, int* flag),
             (win, keyval, attribute_val, flag)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Win_get_attr", check_running());
  if (Err e = check_win(win); !e.ok()) return raise_win(win, "MPI_Win_get_attr", e);
  if (attribute_val == nullptr || flag == nullptr) return raise_win(win, "MPI_Win_get_attr", err(MPI_ERR_ARG, "null argument"));
  if (win_predefined_attr(win, keyval, attribute_val, flag)) return MPI_SUCCESS;
  if (Err e = get_attr(Keyval::Kind::kWin, *win_attrs(win), keyval, attribute_val, flag); !e.ok()) {
    return raise_win(win, "MPI_Win_get_attr", e);
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_delete_attr, (MPI_Win win, int keyval), (win, keyval)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Win_delete_attr", check_running());
  if (Err e = check_win(win); !e.ok()) return raise_win(win, "MPI_Win_delete_attr", e);
  if (Err e = delete_attr(Keyval::Kind::kWin, win, *win_attrs(win), keyval); !e.ok()) {
    return raise_win(win, "MPI_Win_delete_attr", e);
  }
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_set_info, (MPI_Win win, MPI_Info info), (win, info)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Win_set_info", check_running());
  if (Err e = check_win(win); !e.ok()) return raise_win(win, "MPI_Win_set_info", e);
  if (Err e = check_info(info); !e.ok()) return raise_win(win, "MPI_Win_set_info", e);
  *win_hints(win) = *info_of(info);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_get_info, (MPI_Win win, MPI_Info* info_used), (win, info_used)) {
  AUGUR_MPI_CHECK(MPI_COMM_WORLD, "MPI_Win_get_info", check_running());
  if (Err e = check_win(win); !e.ok()) return raise_win(win, "MPI_Win_get_info", e);
  if (info_used == nullptr) return raise_win(win, "MPI_Win_get_info", err(MPI_ERR_ARG, "null argument"));
  *info_used = new_info(*win_hints(win));
  return MPI_SUCCESS;
}
