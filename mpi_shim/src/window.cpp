// One-sided communication (MPI-3.1 chapter 11) on RDMA (docs/rma.md).
//
// A window's memory is registered once, for peers' RDMA READ, WRITE and atomics. MPI_Put and
// MPI_Get are RDMA WRITEs and READs straight into or out of the target's memory: the target's CPU
// takes no part, and they complete at the next synchronisation (fence, flush, unlock, complete).
// Accumulates are atomic per element as MPI requires through an accumulate lock at the target
// (an 8-byte word taken and released by RDMA atomics): READ, combine here, WRITE back. The
// passive-target lock is another such word: exclusive is one bit, shared holders are counted.
// Fences are a flush and a barrier; post/start/complete/wait are zero-byte messages on the
// window's own context.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "augur/host/job_hosts.h"
#include "augur/nic/verbs.h"
#include "coll_task.h"
#include "shim.h"

namespace augur::mpi {

namespace {

// What every rank exposes beside a window's memory: the two lock words origins take by RDMA
// atomics, and a dynamic window's table of attached regions, which origins read by RDMA: bytes
// from another process, validated before use.
constexpr int kMaxAttach = 64;
struct WireRegion {
  std::uint64_t addr;
  std::uint64_t len;
  std::uint32_t rkey;
  std::uint32_t pad;
};
static_assert(sizeof(WireRegion) == 24);
struct WinCtl {
  std::uint64_t lock;      // passive target: kExclusiveBit while held exclusively, plus shared holders
  std::uint64_t acc_lock;  // accumulates: 0 free, else the holder's comm rank + 1
  std::uint64_t nregions;  // dynamic windows: entries of `regions` in use
  std::uint64_t reserved;
  WireRegion regions[kMaxAttach];
};
static_assert(sizeof(WinCtl) == 32 + 24 * kMaxAttach);
static_assert(offsetof(WinCtl, acc_lock) == 8 && offsetof(WinCtl, nregions) == 16 && offsetof(WinCtl, regions) == 32);
constexpr std::uint64_t kExclusiveBit = std::uint64_t{1} << 32;

// What each rank tells the others when a window is made (one allgather).
struct WinShare {
  std::uint64_t base;
  std::uint64_t size;
  std::uint64_t ctl;
  std::uint32_t rkey;
  std::uint32_t ctl_rkey;
  std::int64_t disp_unit;
};
static_assert(sizeof(WinShare) == 40 && offsetof(WinShare, rkey) == 24 && offsetof(WinShare, disp_unit) == 32);

// PSCW notifications on the window's own context.
constexpr std::int32_t kPostTag = 1;
constexpr std::int32_t kCompleteTag = 2;

// A contiguous byte range in a target's window.
struct Span {
  std::uint64_t addr;
  std::uint64_t len;
};

enum class Held : std::uint8_t { kNone, kShared, kExclusive, kNoCheck };

// Work whose local side outlives the call: packed origin data of a put, or a get into a
// non-contiguous origin (unpacked once its target's operations are complete).
struct Deferred {
  int target;
  std::vector<std::byte> tmp;
  void* ubuf = nullptr;  // non-null: unpack tmp into ubuf (count copies of type) at completion
  std::int64_t count = 0;
  TypePtr type;
};

struct Win {
  CommPtr comm;  // private: its context carries PSCW notifications, its barrier the fences
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  void* base = nullptr;
  MPI_Aint size = 0;
  int disp_unit = 1;
  void* allocated = nullptr;  // MPI_Win_allocate(_shared)'s memory (munmap'd at free)
  std::size_t allocated_len = 0;
  std::vector<MPI_Aint> shared_offsets;  // MPI_Win_allocate_shared: each rank's part in `allocated`
  std::unique_ptr<nic::MemoryRegion> mr;
  std::unique_ptr<WinCtl> ctl;
  std::unique_ptr<nic::MemoryRegion> ctl_mr;
  std::vector<WinShare> peers;  // by comm rank
  struct Attached {
    void* addr;
    std::size_t len;
    std::unique_ptr<nic::MemoryRegion> mr;
  };
  std::vector<Attached> attached;                       // dynamic: ours
  std::vector<std::vector<WireRegion>> remote_regions;  // dynamic: theirs as last read
  std::vector<char> regions_known;
  MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
  std::string name;
  std::map<int, void*> attrs;
  std::vector<std::pair<std::string, std::string>> hints;
  std::vector<Held> held;  // passive target, by comm rank
  int lock_all = 0;        // held by MPI_Win_lock_all (1: with MPI_MODE_NOCHECK 2)
  std::vector<int> access;  // PSCW: targets of the access epoch
  bool accessing = false;
  std::vector<int> exposed;  // PSCW: origins of the exposure epoch
  std::vector<host::RequestPtr> completes;  // their completion notices, received at wait/test
  bool exposing = false;
  std::vector<Deferred> deferred;
  std::uint64_t release_word = 0;  // old values of lock releases nobody reads
  std::vector<Span> spans;         // put_get's, kept: no allocation per call
};

std::vector<std::shared_ptr<Win>> g_wins(1);  // handle 0: MPI_WIN_NULL
std::vector<int> g_free_wins;

Win* win_of(MPI_Win w) {
  if (w <= 0 || static_cast<std::size_t>(w) >= g_wins.size()) return nullptr;
  return g_wins[static_cast<std::size_t>(w)].get();
}

host::Engine& engine() { return *S().engine; }
int world_of(const Win& w, int r) { return w.comm->world[static_cast<std::size_t>(r)]; }

// --- RDMA building blocks ------------------------------------------------------------------------

Result<host::RequestPtr> start(const Win& w, int target, host::RmaOp op, void* local, std::size_t len,
                               std::uint64_t addr, std::uint32_t rkey, std::uint64_t operand = 0,
                               std::uint64_t swap = 0) {
  return engine().rma(world_of(w, target), op, local, len, {addr, rkey}, operand, swap);
}

Err wait_rma(Result<host::RequestPtr> r) {
  if (!r.ok()) return from_status(r.status());
  return wait_engine(*r);
}

// An RDMA atomic on one of `target`'s control words; its old value.
Result<std::uint64_t> ctl_atomic(Win& w, int target, std::size_t offset, host::RmaOp op, std::uint64_t operand,
                                 std::uint64_t swap = 0) {
  std::uint64_t old = 0;
  const WinShare& p = w.peers[static_cast<std::size_t>(target)];
  Result<host::RequestPtr> r = start(w, target, op, &old, 8, p.ctl + offset, p.ctl_rkey, operand, swap);
  if (!r.ok()) return r.status();
  if (Err e = wait_engine(*r); !e.ok()) return Status(e.cls == MPI_ERR_PROC_FAILED ? Code::kPeerFailure : Code::kIo, e.msg);
  return old;
}

// Adds to a control word without waiting: a release. Operations to one target are carried out in
// order, so the holder's next acquire comes after it; completion points wait for it.
Err ctl_release(Win& w, int target, std::size_t offset, std::uint64_t operand) {
  const WinShare& p = w.peers[static_cast<std::size_t>(target)];
  Result<host::RequestPtr> r = start(w, target, host::RmaOp::kFetchAdd, &w.release_word, 8, p.ctl + offset,
                                     p.ctl_rkey, operand);
  if (!r.ok()) return from_status(r.status());
  return ok();
}

// Waits until every operation of this rank to `target` (-1: to every member) is complete, then
// finishes the deferred work that waited for it.
Err complete_ops(Win& w, int target) {
  const int lo = target < 0 ? 0 : target, hi = target < 0 ? w.comm->size : target + 1;
  for (int t = lo; t < hi; ++t) {
    const int peer = world_of(w, t);
    AUGUR_ERR_RETURN(wait_until([&] { return engine().rma_pending(peer) == 0; }));
  }
  Err first;
  auto keep = std::remove_if(w.deferred.begin(), w.deferred.end(), [&](Deferred& d) {
    if (target >= 0 && d.target != target) return false;
    if (d.ubuf != nullptr) {
      if (Err e = unpack(d.tmp.data(), d.tmp.size(), d.ubuf, d.count, *d.type); !e.ok() && first.ok()) first = e;
    }
    return true;
  });
  w.deferred.erase(keep, w.deferred.end());
  return first;
}

// --- addressing -------------------------------------------------------------------------------


// A dynamic window's regions at `target`, read by RDMA.
Err read_regions(Win& w, int target) {
  auto tbl = std::make_unique<WinCtl>();
  const WinShare& p = w.peers[static_cast<std::size_t>(target)];
  AUGUR_ERR_RETURN(wait_rma(start(w, target, host::RmaOp::kGet, tbl.get(), sizeof(WinCtl), p.ctl, p.ctl_rkey)));
  if (tbl->nregions > kMaxAttach) {
    return err(MPI_ERR_INTERN, "rank " + std::to_string(target) + "'s region table claims " +
                                   std::to_string(tbl->nregions) + " regions (at most " + std::to_string(kMaxAttach) + ")");
  }
  auto& out = w.remote_regions[static_cast<std::size_t>(target)];
  out.assign(tbl->regions, tbl->regions + tbl->nregions);
  w.regions_known[static_cast<std::size_t>(target)] = 1;
  return ok();
}

// Where `count` copies of `t` at displacement `disp` lie in `target`'s window: the byte ranges in
// type-map order and the key. MPI_ERR_RMA_RANGE if any byte is outside the window (an RDMA
// access outside registered memory would break the connection, so nothing is posted).
Err target_spans(Win& w, int target, MPI_Aint disp, std::int64_t count, const Type& t, std::vector<Span>* spans,
                 std::uint32_t* rkey) {
  spans->clear();
  if (count == 0 || t.size == 0) return ok();
  const WinShare& p = w.peers[static_cast<std::size_t>(target)];
  const std::int64_t start_off = static_cast<std::int64_t>(disp) * p.disp_unit;
  // The lowest and highest byte touched.
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const relations::ByteRun& r : t.runs) {
    lo = std::min(lo, r.offset);
    hi = std::max(hi, r.offset + r.length);
  }
  if (count > 1) {
    lo = std::min(lo, lo + (count - 1) * t.extent);
    hi = std::max(hi, hi + (count - 1) * t.extent);
  }
  std::uint64_t base = 0;
  if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    const std::uint64_t a = static_cast<std::uint64_t>(start_off + lo), b = static_cast<std::uint64_t>(start_off + hi);
    auto find = [&]() -> const WireRegion* {
      for (const WireRegion& r : w.remote_regions[static_cast<std::size_t>(target)]) {
        if (a >= r.addr && b <= r.addr + r.len && b >= a) return &r;
      }
      return nullptr;
    };
    const WireRegion* r = w.regions_known[static_cast<std::size_t>(target)] ? find() : nullptr;
    if (r == nullptr) {
      AUGUR_ERR_RETURN(read_regions(w, target));
      r = find();
    }
    if (r == nullptr) {
      return err(MPI_ERR_RMA_RANGE, "bytes [" + std::to_string(a) + ", " + std::to_string(b) + ") are in no region rank " +
                                        std::to_string(target) + " attached");
    }
    *rkey = r->rkey;
  } else {
    if (start_off + lo < 0 || start_off + hi > static_cast<std::int64_t>(p.size)) {
      return err(MPI_ERR_RMA_RANGE, "bytes [" + std::to_string(start_off + lo) + ", " + std::to_string(start_off + hi) +
                                        ") of rank " + std::to_string(target) + "'s window of " + std::to_string(p.size) +
                                        " bytes");
    }
    base = p.base;
    *rkey = p.rkey;
  }
  const auto at = [&](std::int64_t off) { return base + static_cast<std::uint64_t>(start_off + off); };
  if (t.contig) {  // one span, not one merge per element (65536 of them for 64 KiB of MPI_CHAR)
    spans->push_back({at(t.true_lb), static_cast<std::uint64_t>(count * t.size)});
    return ok();
  }
  for (std::int64_t k = 0; k < count; ++k) {
    for (const relations::ByteRun& r : t.runs) {
      if (r.length == 0) continue;
      const std::uint64_t a = at(k * t.extent + r.offset);
      if (!spans->empty() && spans->back().addr + spans->back().len == a) {
        spans->back().len += static_cast<std::uint64_t>(r.length);
      } else {
        spans->push_back({a, static_cast<std::uint64_t>(r.length)});
      }
    }
  }
  return ok();
}

Err check_rank(const Win& w, int target) {
  if (target == MPI_PROC_NULL) return ok();
  if (target < 0 || target >= w.comm->size) {
    return err(MPI_ERR_RANK, "target rank " + std::to_string(target) + " (window of " + std::to_string(w.comm->size) + ")");
  }
  return ok();
}

// check_xfer's answer when everything is valid, in one pass and without building an Err (a put
// of 8 bytes spent 323 instructions in the step-by-step checks); false: check_xfer says what is
// wrong.
bool xfer_args_valid(const void* obuf, std::int64_t ocount, MPI_Datatype ot, std::int64_t tcount, MPI_Datatype tt) {
  if (ocount < 0 || tcount < 0 || ot == MPI_UB || ot == MPI_LB || tt == MPI_UB || tt == MPI_LB) return false;
  const Type* o = type_of(ot);
  const Type* t = type_of(tt);
  if (o == nullptr || t == nullptr || !o->committed || !t->committed) return false;
  if (obuf == nullptr && ocount > 0 && o->size > 0 && o->true_lb == 0) return false;
  return ocount * o->size == tcount * t->size;
}

Err check_xfer(const void* obuf, std::int64_t ocount, MPI_Datatype ot, std::int64_t tcount, MPI_Datatype tt) {
  if (xfer_args_valid(obuf, ocount, ot, tcount, tt)) return ok();
  AUGUR_ERR_RETURN(check_count(ocount));
  AUGUR_ERR_RETURN(check_count(tcount));
  AUGUR_ERR_RETURN(check_type(ot));
  AUGUR_ERR_RETURN(check_type(tt));
  AUGUR_ERR_RETURN(check_buf(obuf, ocount, *type_of(ot)));
  if (ocount * type_of(ot)->size != tcount * type_of(tt)->size) {
    return err(MPI_ERR_TYPE, std::to_string(ocount * type_of(ot)->size) + " origin bytes against " +
                                 std::to_string(tcount * type_of(tt)->size) + " target bytes");
  }
  return ok();
}

// Puts or gets: one RDMA operation per contiguous target span; *last: the last request (they
// complete in order). `last` null: no requests (MPI_Put, MPI_Get), the epoch's synchronisation
// completes them.
Err put_get(Win& w, bool put, void* obuf, std::int64_t ocount, MPI_Datatype ot, int target, MPI_Aint disp,
            std::int64_t tcount, MPI_Datatype tt, host::RequestPtr* last, Deferred** deferred) {
  std::vector<Span>& spans = w.spans;
  std::uint32_t rkey = 0;
  AUGUR_ERR_RETURN(target_spans(w, target, disp, tcount, *type_of(tt), &spans, &rkey));
  const Type& o = *type_of(ot);
  std::byte* local = nullptr;
  if (o.contig || ocount * o.size == 0) {
    local = static_cast<std::byte*>(obuf) + (o.runs.empty() ? 0 : o.runs[0].offset);
  } else {
    Deferred d{target, std::vector<std::byte>(static_cast<std::size_t>(ocount * o.size)), nullptr, ocount, type_ptr(ot)};
    if (put) {
      AUGUR_ERR_RETURN(pack(obuf, ocount, o, d.tmp.data()));
    } else {
      d.ubuf = obuf;
    }
    w.deferred.push_back(std::move(d));
    local = w.deferred.back().tmp.data();
    if (deferred != nullptr) *deferred = &w.deferred.back();
  }
  const host::RmaOp op = put ? host::RmaOp::kPut : host::RmaOp::kGet;
  for (const Span& s : spans) {
    if (last == nullptr) {
      const augur::Status st =
          engine().rma_untracked(world_of(w, target), op, local, static_cast<std::size_t>(s.len), {s.addr, rkey});
      if (!st.ok()) return from_status(st);
    } else {
      Result<host::RequestPtr> r = start(w, target, op, local, static_cast<std::size_t>(s.len), s.addr, rkey);
      if (!r.ok()) return from_status(r.status());
      *last = std::move(*r);
    }
    local += s.len;
  }
  return ok();
}

// The predefined type of one basic element of `t` (accumulates combine element by element).
MPI_Datatype basic_of(MPI_Datatype th) {
  const Type& t = *type_of(th);
  if (t.predefined) return th;
  for (std::size_t h = 1; h < S().types.size(); ++h) {
    const Type* b = S().types[h].get();
    if (b != nullptr && b->predefined && b->elem == t.elem && b->nelems == 1 && b->size == elem_size(t.elem)) {
      return static_cast<MPI_Datatype>(h);
    }
  }
  return MPI_DATATYPE_NULL;
}


// Does the NIC's 8-byte fetch-and-add act on memory as this CPU reads it? (rxe does; an adapter
// that treats the word as big-endian does not.) Asked once, of a word of our own through the NIC.
bool nic_atomics_native() {
  static int known = -1;
  if (known >= 0) return known == 1;
  known = 0;
  alignas(8) static std::uint64_t word = 1;
  std::uint64_t old = 0;
  Result<std::unique_ptr<nic::MemoryRegion>> mr = engine().expose(&word, sizeof word);
  if (!mr.ok()) return false;
  const int me = S().world_rank;
  Result<host::RequestPtr> r = engine().rma(me, host::RmaOp::kFetchAdd, &old, 8,
                                            {reinterpret_cast<std::uintptr_t>(&word), (*mr)->rkey()}, 2);
  if (r.ok() && wait_engine(*r).ok() && old == 1 && std::atomic_ref<std::uint64_t>(word).load() == 3) known = 1;
  return known == 1;
}

// 8-byte integers are updated by the NIC's own atomics, element by element: fetch-and-add for
// MPI_SUM and MPI_NO_OP (all posted at once), a compare-and-swap loop for the other operations.
// Every accumulate-family call on such an element goes this way, so they are atomic against
// each other (MPI guarantees atomicity only between accesses of one basic type), and cost one
// round trip instead of the lock's four.
bool by_nic_atomics(MPI_Datatype basic, const std::vector<Span>& spans) {
  const Type& b = *type_of(basic);
  if ((b.elem != Elem::kI64 && b.elem != Elem::kU64) || b.size != 8) return false;
  for (const Span& s : spans) {
    if (s.addr % 8 != 0) return false;  // the NIC needs aligned words; such elements take the lock
  }
  return nic_atomics_native();
}

Err atomic_accumulate(Win& w, const std::vector<Span>& spans, std::uint32_t rkey, const std::vector<std::byte>& in,
                      std::vector<std::byte>& cur, MPI_Op op, MPI_Datatype basic, int target, const void* compare) {
  const std::size_t n = cur.size() / 8;
  auto* old = reinterpret_cast<std::uint64_t*>(cur.data());
  std::vector<std::uint64_t> addr;
  addr.reserve(n);
  for (const Span& s : spans) {
    for (std::uint64_t a = s.addr; a < s.addr + s.len; a += 8) addr.push_back(a);
  }
  auto word_in = [&](std::size_t i) {
    std::uint64_t v = 0;
    if (!in.empty()) std::memcpy(&v, in.data() + 8 * i, 8);
    return v;
  };
  if (compare != nullptr) {  // compare-and-swap: one element
    std::uint64_t c = 0;
    std::memcpy(&c, compare, 8);
    return wait_rma(start(w, target, host::RmaOp::kCompareSwap, &old[0], 8, addr[0], rkey, c, word_in(0)));
  }
  if (op == MPI_SUM || op == MPI_NO_OP) {
    host::RequestPtr last;
    for (std::size_t i = 0; i < n; ++i) {
      Result<host::RequestPtr> r =
          start(w, target, host::RmaOp::kFetchAdd, &old[i], 8, addr[i], rkey, op == MPI_SUM ? word_in(i) : 0);
      if (!r.ok()) return from_status(r.status());
      last = *r;
    }
    return last ? wait_engine(last) : ok();
  }
  const Type& b = *type_of(basic);
  for (std::size_t i = 0; i < n; ++i) {
    AUGUR_ERR_RETURN(wait_rma(start(w, target, host::RmaOp::kFetchAdd, &old[i], 8, addr[i], rkey, 0)));
    for (;;) {
      std::uint64_t want = old[i];
      const std::uint64_t x = word_in(i);
      apply_op(op, &x, &want, 1, basic, b);  // want = x op old (REPLACE: x)
      std::uint64_t seen = 0;
      AUGUR_ERR_RETURN(wait_rma(start(w, target, host::RmaOp::kCompareSwap, &seen, 8, addr[i], rkey, old[i], want)));
      if (seen == old[i]) break;
      old[i] = seen;  // somebody else's update came first: combine with theirs
    }
  }
  return ok();
}

// Accumulate, get-accumulate, fetch-and-op and compare-and-swap: by the NIC's atomics for 8-byte
// integers, else under the target's accumulate lock: read the target data, hand the old data
// back, combine, write back. `compare` non-null: compare-and-swap (one element). The old data
// is in the result buffer when it returns; the update completes with this rank's next
// completion point.
Err accumulate(Win& w, const void* obuf, std::int64_t ocount, MPI_Datatype ot, void* rbuf, std::int64_t rcount,
               MPI_Datatype rt, int target, MPI_Aint disp, std::int64_t tcount, MPI_Datatype tt, MPI_Op op,
               const void* compare = nullptr) {
  const Type& t = *type_of(tt);
  const MPI_Datatype basic = basic_of(tt);
  const MPI_Datatype obasic = op == MPI_NO_OP ? basic : basic_of(ot);
  if (basic == MPI_DATATYPE_NULL || obasic == MPI_DATATYPE_NULL || type_of(obasic)->elem != type_of(basic)->elem) {
    return err(MPI_ERR_TYPE, "accumulate needs origin and target of one predefined basic type");
  }
  if (op != MPI_REPLACE && op != MPI_NO_OP && (op < MPI_MAX || op > MPI_NO_OP)) {
    return err(MPI_ERR_OP, "accumulate takes predefined operations only (MPI-3.1 11.3.4)");
  }
  AUGUR_ERR_RETURN(check_op(op, *type_of(basic)));
  std::vector<Span>& spans = w.spans;
  std::uint32_t rkey = 0;
  AUGUR_ERR_RETURN(target_spans(w, target, disp, tcount, t, &spans, &rkey));
  const auto bytes = static_cast<std::size_t>(tcount * t.size);
  // One 8-byte integer by one NIC atomic (MPI_Fetch_and_op, MPI_Compare_and_swap, a one-element
  // MPI_Accumulate of MPI_SUM): no buffers of its own, one round trip.
  const bool one_word = bytes == 8 && spans.size() == 1 && (compare != nullptr || op == MPI_SUM || op == MPI_NO_OP);
  const Type& ov = *type_of(ot);
  if (one_word && (op == MPI_NO_OP || ov.contig) && (rbuf == nullptr || type_of(rt)->contig) && by_nic_atomics(basic, spans)) {
    std::uint64_t x = 0, c = 0, old = 0;
    if (op != MPI_NO_OP) std::memcpy(&x, static_cast<const std::byte*>(obuf) + ov.true_lb, 8);
    if (compare != nullptr) std::memcpy(&c, compare, 8);
    AUGUR_ERR_RETURN(wait_rma(compare != nullptr
                                  ? start(w, target, host::RmaOp::kCompareSwap, &old, 8, spans[0].addr, rkey, c, x)
                                  : start(w, target, host::RmaOp::kFetchAdd, &old, 8, spans[0].addr, rkey, x)));
    if (rbuf != nullptr) std::memcpy(static_cast<std::byte*>(rbuf) + type_of(rt)->true_lb, &old, 8);
    return ok();
  }
  std::vector<std::byte> in(op == MPI_NO_OP ? 0 : bytes), cur(bytes);
  if (op != MPI_NO_OP) AUGUR_ERR_RETURN(pack(obuf, ocount, *type_of(ot), in.data()));
  if (bytes > 0 && by_nic_atomics(basic, spans)) {
    AUGUR_ERR_RETURN(atomic_accumulate(w, spans, rkey, in, cur, op, basic, target, compare));
    return rbuf != nullptr ? unpack(cur.data(), bytes, rbuf, rcount, *type_of(rt)) : ok();
  }
  // The lock's compare-and-swap and the READ of the target data go out together (one round
  // trip): the responder carries them out in order, so if the swap took the lock the data read
  // is the locked data; if not, it is dropped and both are tried again.
  const bool need_old = rbuf != nullptr || compare != nullptr || (op != MPI_REPLACE && op != MPI_NO_OP);
  const auto me = static_cast<std::uint64_t>(w.comm->rank) + 1;
  const WinShare& p = w.peers[static_cast<std::size_t>(target)];
  auto each = [&](host::RmaOp kind, host::RequestPtr* last) -> Err {
    std::byte* local = cur.data();
    for (const Span& s : spans) {
      Result<host::RequestPtr> r = start(w, target, kind, local, static_cast<std::size_t>(s.len), s.addr, rkey);
      if (!r.ok()) return from_status(r.status());
      *last = *r;
      local += s.len;
    }
    return ok();
  };
  for (;;) {
    std::uint64_t holder = 0;
    Result<host::RequestPtr> lock = start(w, target, host::RmaOp::kCompareSwap, &holder, 8,
                                          p.ctl + offsetof(WinCtl, acc_lock), p.ctl_rkey, 0, me);
    if (!lock.ok()) return from_status(lock.status());
    host::RequestPtr read;
    if (need_old) AUGUR_ERR_RETURN(each(host::RmaOp::kGet, &read));
    AUGUR_ERR_RETURN(wait_engine(*lock));
    if (read) AUGUR_ERR_RETURN(wait_engine(read));
    if (holder == 0) break;
    AUGUR_ERR_RETURN(relax());
  }
  Err result;
  if (rbuf != nullptr) result = unpack(cur.data(), bytes, rbuf, rcount, *type_of(rt));
  bool write = op != MPI_NO_OP;
  if (result.ok() && compare != nullptr) {
    write = std::memcmp(cur.data(), compare, bytes) == 0;
    if (write) std::memcpy(cur.data(), in.data(), bytes);
  } else if (result.ok() && write) {
    const Type& b = *type_of(basic);
    apply_op(op, in.data(), cur.data(), static_cast<std::int64_t>(bytes) / b.size, basic, b);
  }
  // The WRITE back and the release go out together and are not waited for: the release comes
  // after the WRITE at the target, so the next holder reads the new data; this rank's completion
  // points (flush, unlock, fence) wait for both. The data stays alive until then.
  if (result.ok() && write) {
    host::RequestPtr last;
    result = each(host::RmaOp::kPut, &last);
    w.deferred.push_back(Deferred{target, std::move(cur), nullptr, 0, nullptr});
  }
  // Released even after an error, so that the others are not locked out.
  if (Err e = ctl_release(w, target, offsetof(WinCtl, acc_lock), ~me + 1); !e.ok() && result.ok()) result = e;
  return result;
}

// --- creation ------------------------------------------------------------------------------

Err make_window(MPI_Comm comm, void* base, MPI_Aint size, int disp_unit, MPI_Info info, int flavor, MPI_Win* out) {
  AUGUR_ERR_RETURN(check_running());
  AUGUR_ERR_RETURN(check_comm(comm));
  if (out == nullptr) return err(MPI_ERR_ARG, "null window pointer");
  if (size < 0) return err(MPI_ERR_SIZE, "negative window size " + std::to_string(size));
  if (disp_unit <= 0) return err(MPI_ERR_DISP, "displacement unit " + std::to_string(disp_unit));
  if (size > 0 && base == nullptr) return err(MPI_ERR_BASE, "null base for a window of " + std::to_string(size) + " bytes");
  auto w = std::make_shared<Win>();
  const CommPtr parent = comm_ptr(comm);
  if (parent->inter()) return err(MPI_ERR_COMM, "windows are made over an intracommunicator");
  Result<std::uint32_t> id = agree_comm_id(parent);
  if (!id.ok()) return from_status(id.status());
  w->comm = make_comm(*id, parent->world, S().world_rank);
  w->flavor = flavor;
  w->base = base;
  w->size = size;
  w->disp_unit = disp_unit;
  if (info != MPI_INFO_NULL) {
    auto* h = info_hints(info);
    if (h == nullptr) return err(MPI_ERR_INFO, "invalid info object " + std::to_string(info));
    w->hints = *h;
  }
  w->ctl = std::make_unique<WinCtl>();
  std::memset(w->ctl.get(), 0, sizeof(WinCtl));
  Result<std::unique_ptr<nic::MemoryRegion>> cmr = engine().expose(w->ctl.get(), sizeof(WinCtl));
  if (!cmr.ok()) return err(MPI_ERR_NO_MEM, cmr.status().message());
  w->ctl_mr = std::move(*cmr);
  WinShare mine{reinterpret_cast<std::uintptr_t>(base), static_cast<std::uint64_t>(size),
                reinterpret_cast<std::uintptr_t>(w->ctl.get()), 0, w->ctl_mr->rkey(), disp_unit};
  if (size > 0) {
    Result<std::unique_ptr<nic::MemoryRegion>> mr = engine().expose(base, static_cast<std::size_t>(size));
    if (!mr.ok()) return err(MPI_ERR_NO_MEM, mr.status().message());
    w->mr = std::move(*mr);
    mine.rkey = w->mr->rkey();
  }
  const int n = w->comm->size;
  w->peers.resize(static_cast<std::size_t>(n));
  AUGUR_ERR_RETURN(allgather_impl(&mine, sizeof mine, type_ptr(MPI_BYTE), w->peers.data(), sizeof mine,
                                  type_ptr(MPI_BYTE), w->comm));
  w->held.assign(static_cast<std::size_t>(n), Held::kNone);
  w->remote_regions.resize(static_cast<std::size_t>(n));
  w->regions_known.assign(static_cast<std::size_t>(n), 0);
  int h;
  if (!g_free_wins.empty()) {
    h = g_free_wins.back();
    g_free_wins.pop_back();
    g_wins[static_cast<std::size_t>(h)] = std::move(w);
  } else {
    g_wins.push_back(std::move(w));
    h = static_cast<int>(g_wins.size() - 1);
  }
  *out = h;
  return ok();
}

Err free_window(MPI_Win* win) {
  AUGUR_ERR_RETURN(check_running());
  if (win == nullptr) return err(MPI_ERR_ARG, "null window pointer");
  AUGUR_ERR_RETURN(check_win(*win));
  Win& w = *win_of(*win);
  if (w.lock_all != 0 || w.accessing || w.exposing ||
      std::any_of(w.held.begin(), w.held.end(), [](Held x) { return x != Held::kNone; })) {
    return err(MPI_ERR_RMA_SYNC, "MPI_Win_free inside an access or exposure epoch");
  }
  // Nobody may still be reading or writing our memory when it is deregistered.
  AUGUR_ERR_RETURN(complete_ops(w, -1));
  AUGUR_ERR_RETURN(barrier_impl(w.comm));
  Err first = delete_attrs(Keyval::Kind::kWin, *win, &w.attrs);
  if (w.allocated != nullptr) {
    w.mr.reset();
    ::munmap(w.allocated, w.allocated_len);
  }
  g_wins[static_cast<std::size_t>(*win)].reset();
  g_free_wins.push_back(*win);
  *win = MPI_WIN_NULL;
  return first;
}

// Every entry point starts so: MPI running, the window valid.
#define AUGUR_WIN_CHECK(win, fn, expr)                              \
  do {                                                              \
    ::augur::mpi::Err augur_e_ = (expr);                            \
    if (!augur_e_.ok()) return ::augur::mpi::raise_win((win), (fn), augur_e_); \
  } while (0)

Err check_running_win(MPI_Win w) {
  if (S().initialized && !S().finalized && win_of(w) != nullptr) return ok();  // the common case, no Err built
  AUGUR_ERR_RETURN(check_running());
  return check_win(w);
}

Err ranks_of_group(const Win& w, MPI_Group g, std::vector<int>* out) {
  const Group* grp = group_of(g);
  if (grp == nullptr) return err(MPI_ERR_GROUP, "invalid group " + std::to_string(g));
  out->clear();
  for (int world : grp->world) {
    const int r = static_cast<std::size_t>(world) < w.comm->rank_of.size() ? w.comm->rank_of[static_cast<std::size_t>(world)] : -1;
    if (r < 0) return err(MPI_ERR_GROUP, "world rank " + std::to_string(world) + " is not in the window's group");
    out->push_back(r);
  }
  return ok();
}

Err notify(const Win& w, int to, std::int32_t tag) {
  Result<host::RequestPtr> r = engine().isend(nullptr, 0, world_of(w, to), tag, w.comm->p2p_ctx());
  if (!r.ok()) return from_status(r.status());
  return ok();
}

Result<host::RequestPtr> expect(const Win& w, int from, std::int32_t tag) {
  return engine().irecv(nullptr, 0, world_of(w, from), tag, w.comm->p2p_ctx());
}

Err lock_one(Win& w, int type, int target) {
  if (type == MPI_LOCK_EXCLUSIVE) {
    for (;;) {
      Result<std::uint64_t> old = ctl_atomic(w, target, offsetof(WinCtl, lock), host::RmaOp::kCompareSwap, 0, kExclusiveBit);
      if (!old.ok()) return err(MPI_ERR_OTHER, old.status().message());
      if (*old == 0) return ok();
      AUGUR_ERR_RETURN(relax());
    }
  }
  for (;;) {
    Result<std::uint64_t> old = ctl_atomic(w, target, offsetof(WinCtl, lock), host::RmaOp::kFetchAdd, 1);
    if (!old.ok()) return err(MPI_ERR_OTHER, old.status().message());
    if ((*old & kExclusiveBit) == 0) return ok();
    // Held exclusively: take our count back and try again.
    AUGUR_ERR_RETURN(ctl_release(w, target, offsetof(WinCtl, lock), ~std::uint64_t{0}));
    AUGUR_ERR_RETURN(relax());
  }
}

Err unlock_one(Win& w, Held how, int target) {
  AUGUR_ERR_RETURN(complete_ops(w, target));
  if (how == Held::kExclusive) return ctl_release(w, target, offsetof(WinCtl, lock), ~kExclusiveBit + 1);
  if (how == Held::kShared) return ctl_release(w, target, offsetof(WinCtl, lock), ~std::uint64_t{0});
  return ok();
}

}  // namespace

bool windows_open() {
  return std::any_of(g_wins.begin() + 1, g_wins.end(), [](const std::shared_ptr<Win>& w) { return w != nullptr; });
}

// --- shim-internal interface (shim.h) --------------------------------------------------------------

Err drop_windows() {
  Err first;
  for (auto& w : g_wins) {
    if (!w) continue;
    if (Err e = complete_ops(*w, -1); !e.ok() && first.ok()) first = e;
    if (w->allocated != nullptr) {
      w->mr.reset();
      ::munmap(w->allocated, w->allocated_len);
    }
    w.reset();
  }
  g_wins.resize(1);
  g_free_wins.clear();
  return first;
}

Err check_win(MPI_Win w) {
  if (win_of(w) == nullptr) return err(MPI_ERR_WIN, "invalid window " + std::to_string(w));
  return ok();
}

int raise_win(MPI_Win w, const char* fn, const Err& e) {
  const Win* x = win_of(w);
  return raise_to(x != nullptr ? x->eh : MPI_ERRORS_ARE_FATAL, w, fn, e);
}

std::map<int, void*>* win_attrs(MPI_Win w) {
  Win* x = win_of(w);
  return x != nullptr ? &x->attrs : nullptr;
}

std::vector<std::pair<std::string, std::string>>* win_hints(MPI_Win w) {
  Win* x = win_of(w);
  return x != nullptr ? &x->hints : nullptr;
}

bool win_predefined_attr(MPI_Win win, int keyval, void* attribute_val, int* flag) {
  Win& w = *win_of(win);
  void* p = nullptr;
  switch (keyval) {
    case MPI_WIN_BASE: p = w.base; break;
    case MPI_WIN_SIZE: p = &w.size; break;
    case MPI_WIN_DISP_UNIT: p = &w.disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: p = &w.flavor; break;
    case MPI_WIN_MODEL: p = &w.model; break;
    default: return false;
  }
  std::memcpy(attribute_val, &p, sizeof p);
  *flag = 1;
  return true;
}

}  // namespace augur::mpi

using namespace augur;
using namespace augur::mpi;

// --- windows -------------------------------------------------------------------------------------

AUGUR_MPI_FN(int, Win_create, (void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win),
             (base, size, disp_unit, info, comm, win)) {
  AUGUR_MPI_CHECK(comm, "MPI_Win_create", make_window(comm, base, size, disp_unit, info, MPI_WIN_FLAVOR_CREATE, win));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win),
             (size, disp_unit, info, comm, baseptr, win)) {
  if (baseptr == nullptr) return raise(comm, "MPI_Win_allocate", err(MPI_ERR_ARG, "null base pointer"));
  if (size < 0) return raise(comm, "MPI_Win_allocate", err(MPI_ERR_SIZE, "negative size"));
  // Whole pages of their own: registering them pins nothing the program uses otherwise.
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t len = size == 0 ? 0 : (static_cast<std::size_t>(size) + page - 1) / page * page;
  void* mem = nullptr;
  if (len > 0) {
    mem = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return raise(comm, "MPI_Win_allocate", err(MPI_ERR_NO_MEM, "mmap of " + std::to_string(len) + " bytes"));
  }
  if (Err e = make_window(comm, mem, size, disp_unit, info, MPI_WIN_FLAVOR_ALLOCATE, win); !e.ok()) {
    if (mem != nullptr) ::munmap(mem, len);
    return raise(comm, "MPI_Win_allocate", e);
  }
  Win& w = *win_of(*win);
  w.allocated = mem;
  w.allocated_len = len;
  std::memcpy(baseptr, &mem, sizeof mem);
  return MPI_SUCCESS;
}

namespace {

// MPI_Win_allocate_shared: one POSIX shared-memory segment that every rank of the communicator
// maps (they must all be on this host), rank r's part right after rank r - 1's (MPI's default
// contiguous layout). The window over each part is an ordinary one as well: registered, so that
// MPI_Put and the rest work on it by RDMA like on any other window.
Err allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  AUGUR_ERR_RETURN(check_running());
  AUGUR_ERR_RETURN(check_comm(comm));
  if (baseptr == nullptr || win == nullptr) return err(MPI_ERR_ARG, "null base or window pointer");
  if (size < 0) return err(MPI_ERR_SIZE, "negative window size " + std::to_string(size));
  const CommPtr c = comm_ptr(comm);
  if (c->inter()) return err(MPI_ERR_COMM, "windows are made over an intracommunicator");
  struct Part {
    std::int64_t size;
    std::uint64_t host;
  };
  const Part mine{size, std::hash<std::string>{}(host::this_host_name())};
  std::vector<Part> all(static_cast<std::size_t>(c->size));
  AUGUR_ERR_RETURN(allgather_impl(&mine, sizeof mine, type_ptr(MPI_BYTE), all.data(), sizeof mine, type_ptr(MPI_BYTE), c));
  std::vector<MPI_Aint> offsets(all.size());
  std::int64_t total = 0;
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].host != all[0].host) {
      return err(MPI_ERR_COMM, "rank " + std::to_string(r) + " is on another host than rank 0: no memory to share " +
                                   "(split the communicator with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) first)");
    }
    offsets[r] = total;
    total += all[r].size;
  }
  const auto page = static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
  const auto len = static_cast<std::size_t>((total + page - 1) / page * page);
  char name[64] = {};
  int fd = -1;
  if (c->rank == 0 && len > 0) {
    static std::atomic<unsigned> serial{0};
    std::snprintf(name, sizeof name, "/augur-win-%d-%u", static_cast<int>(::getpid()), serial.fetch_add(1));
    fd = ::shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(len)) != 0) {
      if (fd >= 0) {
        ::close(fd);
        ::shm_unlink(name);
        fd = -1;
      }
      name[0] = '\0';
    }
  }
  AUGUR_ERR_RETURN(run_blocking(bcast_algo(Coll{c}, name, sizeof name, type_ptr(MPI_BYTE), 0)));
  void* seg = nullptr;
  if (len > 0) {
    if (name[0] == '\0') return err(MPI_ERR_NO_MEM, "rank 0 could not create a shared segment of " + std::to_string(len) + " bytes");
    if (c->rank != 0) fd = ::shm_open(name, O_RDWR, 0);
    if (fd >= 0) {
      seg = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      ::close(fd);
    }
  }
  Err mapped = len > 0 && (seg == nullptr || seg == MAP_FAILED)
                   ? err(MPI_ERR_NO_MEM, std::string("mapping the shared segment ") + name + ": " + std::strerror(errno))
                   : ok();
  if (seg == MAP_FAILED) seg = nullptr;
  Err all_mapped = barrier_impl(c);  // every rank has it mapped: the name can go
  if (c->rank == 0 && len > 0) ::shm_unlink(name);
  if (!mapped.ok() || !all_mapped.ok()) {
    if (seg != nullptr) ::munmap(seg, len);
    return mapped.ok() ? all_mapped : mapped;
  }
  void* base = seg == nullptr ? nullptr : static_cast<std::byte*>(seg) + offsets[static_cast<std::size_t>(c->rank)];
  if (Err e = make_window(comm, size > 0 ? base : nullptr, size, disp_unit, info, MPI_WIN_FLAVOR_SHARED, win); !e.ok()) {
    if (seg != nullptr) ::munmap(seg, len);
    return e;
  }
  Win& w = *win_of(*win);
  w.allocated = seg;
  w.allocated_len = len;
  w.shared_offsets = std::move(offsets);
  std::memcpy(baseptr, &base, sizeof base);
  return ok();
}

Err shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  AUGUR_ERR_RETURN(check_win(win));
  if (size == nullptr || disp_unit == nullptr || baseptr == nullptr) return err(MPI_ERR_ARG, "null argument");
  const Win& w = *win_of(win);
  if (w.flavor != MPI_WIN_FLAVOR_SHARED) return err(MPI_ERR_RMA_FLAVOR, "not a window of MPI_Win_allocate_shared");
  const int n = w.comm->size;
  if (rank == MPI_PROC_NULL) {  // the lowest rank with memory
    rank = 0;
    while (rank < n - 1 && w.peers[static_cast<std::size_t>(rank)].size == 0) ++rank;
  } else if (rank < 0 || rank >= n) {
    return err(MPI_ERR_RANK, "rank " + std::to_string(rank) + " of a window of " + std::to_string(n));
  }
  const auto r = static_cast<std::size_t>(rank);
  *size = static_cast<MPI_Aint>(w.peers[r].size);
  *disp_unit = static_cast<int>(w.peers[r].disp_unit);
  void* base = w.allocated == nullptr ? nullptr : static_cast<std::byte*>(w.allocated) + w.shared_offsets[r];
  std::memcpy(baseptr, &base, sizeof base);
  return ok();
}

}  // namespace

AUGUR_MPI_FN(int, Win_allocate_shared,
             (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win),
             (size, disp_unit, info, comm, baseptr, win)) {
  AUGUR_MPI_CHECK(comm, "MPI_Win_allocate_shared", allocate_shared(size, disp_unit, info, comm, baseptr, win));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr),
             (win, rank, size, disp_unit, baseptr)) {
  if (Err e = shared_query(win, rank, size, disp_unit, baseptr); !e.ok()) return raise_win(win, "MPI_Win_shared_query", e);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win* win), (info, comm, win)) {
  AUGUR_MPI_CHECK(comm, "MPI_Win_create_dynamic", make_window(comm, nullptr, 0, 1, info, MPI_WIN_FLAVOR_DYNAMIC, win));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_attach, (MPI_Win win, void* base, MPI_Aint size), (win, base, size)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_attach", check_running_win(win));
  Win& w = *win_of(win);
  if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    return raise_win(win, "MPI_Win_attach", err(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a dynamic window"));
  }
  if (size < 0 || (size > 0 && base == nullptr)) return raise_win(win, "MPI_Win_attach", err(MPI_ERR_ARG, "bad region"));
  if (size == 0) return MPI_SUCCESS;
  if (w.attached.size() >= kMaxAttach) {
    return raise_win(win, "MPI_Win_attach",
                     err(MPI_ERR_RMA_ATTACH, "at most " + std::to_string(kMaxAttach) + " regions attached at once"));
  }
  Result<std::unique_ptr<nic::MemoryRegion>> mr = engine().expose(base, static_cast<std::size_t>(size));
  if (!mr.ok()) return raise_win(win, "MPI_Win_attach", err(MPI_ERR_RMA_ATTACH, mr.status().message()));
  WinCtl& c = *w.ctl;
  const std::size_t i = w.attached.size();
  c.regions[i] = {reinterpret_cast<std::uintptr_t>(base), static_cast<std::uint64_t>(size), (*mr)->rkey(), 0};
  // The entry is whole before the count says it is there (origins read both by RDMA).
  std::atomic_ref<std::uint64_t>(c.nregions).store(i + 1, std::memory_order_release);
  w.attached.push_back({base, static_cast<std::size_t>(size), std::move(*mr)});
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_detach, (MPI_Win win, const void* base), (win, base)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_detach", check_running_win(win));
  Win& w = *win_of(win);
  if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    return raise_win(win, "MPI_Win_detach", err(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a dynamic window"));
  }
  auto it = std::find_if(w.attached.begin(), w.attached.end(), [&](const Win::Attached& a) { return a.addr == base; });
  if (it == w.attached.end()) return raise_win(win, "MPI_Win_detach", err(MPI_ERR_RMA_ATTACH, "no region attached at this address"));
  w.attached.erase(it);
  WinCtl& c = *w.ctl;
  std::atomic_ref<std::uint64_t>(c.nregions).store(0, std::memory_order_release);
  for (std::size_t i = 0; i < w.attached.size(); ++i) {
    c.regions[i] = {reinterpret_cast<std::uintptr_t>(w.attached[i].addr), w.attached[i].len, w.attached[i].mr->rkey(), 0};
  }
  std::atomic_ref<std::uint64_t>(c.nregions).store(w.attached.size(), std::memory_order_release);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_free, (MPI_Win * win), (win)) {
  const MPI_Win h = win != nullptr ? *win : MPI_WIN_NULL;
  AUGUR_WIN_CHECK(h, "MPI_Win_free", free_window(win));
  return MPI_SUCCESS;
}

// --- communication -------------------------------------------------------------------------------

namespace {
// Put, Get, Rput and Rget: the checks, then the RDMA operations. *proc_null: nothing to do.
Err transfer(MPI_Win win, bool put, const void* obuf, int ocount, MPI_Datatype ot, int target, MPI_Aint disp,
             int tcount, MPI_Datatype tt, host::RequestPtr* last, Deferred** d, bool* proc_null) {
  AUGUR_ERR_RETURN(check_running_win(win));
  Win& w = *win_of(win);
  AUGUR_ERR_RETURN(check_rank(w, target));
  AUGUR_ERR_RETURN(check_xfer(obuf, ocount, ot, tcount, tt));
  *proc_null = target == MPI_PROC_NULL;
  if (*proc_null) return ok();
  return put_get(w, put, const_cast<void*>(obuf), ocount, ot, target, disp, tcount, tt, last, d);
}
}  // namespace

AUGUR_MPI_FN(int, Put,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win)) {
  bool proc_null = false;
  AUGUR_WIN_CHECK(win, "MPI_Put", transfer(win, true, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                         target_count, target_datatype, nullptr, nullptr, &proc_null));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Get,
             (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
              int target_count, MPI_Datatype target_datatype, MPI_Win win),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win)) {
  bool proc_null = false;
  AUGUR_WIN_CHECK(win, "MPI_Get", transfer(win, false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                         target_count, target_datatype, nullptr, nullptr, &proc_null));
  return MPI_SUCCESS;
}

namespace {

// Rput/Rget: the request completes with the last of its RDMA operations (in order per target);
// a get into a non-contiguous buffer unpacks then.
int request_for(MPI_Win win, const char* fn, const Err& e, host::RequestPtr last, Deferred* d, MPI_Request* request) {
  if (!e.ok()) return raise_win(win, fn, e);
  auto q = std::make_shared<Req>();
  q->kind = ReqKind::kRma;
  q->er = std::move(last);
  if (!q->er) q->done_local = true;
  if (d != nullptr) {  // the request owns the packed data now
    Win& w = *win_of(win);
    q->tmp = std::move(d->tmp);
    q->unpack = d->ubuf != nullptr;
    q->rbuf = d->ubuf;
    q->count = d->count;
    q->type = d->type;
    w.deferred.erase(w.deferred.begin() + (d - w.deferred.data()));
  }
  *request = new_req(std::move(q));
  return MPI_SUCCESS;
}

int done_request(MPI_Request* request) {
  auto q = std::make_shared<Req>();
  q->kind = ReqKind::kRma;
  q->done_local = true;
  *request = new_req(std::move(q));
  return MPI_SUCCESS;
}

}  // namespace

AUGUR_MPI_FN(int, Rput,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request)) {
  if (request == nullptr) return raise_win(win, "MPI_Rput", err(MPI_ERR_ARG, "null request pointer"));
  host::RequestPtr last;
  Deferred* d = nullptr;
  bool proc_null = false;
  const Err e = transfer(win, true, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                         target_datatype, &last, &d, &proc_null);
  if (e.ok() && proc_null) return done_request(request);
  return request_for(win, "MPI_Rput", e, std::move(last), d, request);
}

AUGUR_MPI_FN(int, Rget,
             (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
              int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request)) {
  if (request == nullptr) return raise_win(win, "MPI_Rget", err(MPI_ERR_ARG, "null request pointer"));
  host::RequestPtr last;
  Deferred* d = nullptr;
  bool proc_null = false;
  const Err e = transfer(win, false, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                         target_datatype, &last, &d, &proc_null);
  if (e.ok() && proc_null) return done_request(request);
  return request_for(win, "MPI_Rget", e, std::move(last), d, request);
}

namespace {

Err accumulate_call(MPI_Win win, const void* obuf, int ocount, MPI_Datatype ot, void* rbuf, int rcount,
                    MPI_Datatype rt, int target, MPI_Aint disp, int tcount, MPI_Datatype tt, MPI_Op op, bool fetch) {
  AUGUR_ERR_RETURN(check_running_win(win));
  Win& w = *win_of(win);
  AUGUR_ERR_RETURN(check_rank(w, target));
  AUGUR_ERR_RETURN(check_count(tcount));
  AUGUR_ERR_RETURN(check_type(tt));
  if (op != MPI_NO_OP) AUGUR_ERR_RETURN(check_xfer(obuf, ocount, ot, tcount, tt));
  if (fetch) {
    AUGUR_ERR_RETURN(check_type(rt));
    AUGUR_ERR_RETURN(check_count(rcount));
    if (static_cast<std::int64_t>(rcount) * type_of(rt)->size != static_cast<std::int64_t>(tcount) * type_of(tt)->size) {
      return err(MPI_ERR_TYPE, "result and target sizes differ");
    }
  }
  if (target == MPI_PROC_NULL) return ok();
  return accumulate(w, obuf, ocount, op == MPI_NO_OP ? tt : ot, fetch ? rbuf : nullptr, rcount, rt, target, disp, tcount,
                    tt, op);
}

}  // namespace

AUGUR_MPI_FN(int, Accumulate,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
              win)) {
  AUGUR_WIN_CHECK(win, "MPI_Accumulate",
                  accumulate_call(win, origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                                  target_rank, target_disp, target_count, target_datatype, op, false));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Get_accumulate,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
              int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
             (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
              target_disp, target_count, target_datatype, op, win)) {
  AUGUR_WIN_CHECK(win, "MPI_Get_accumulate",
                  accumulate_call(win, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                  result_datatype, target_rank, target_disp, target_count, target_datatype, op, true));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Fetch_and_op,
             (const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
              MPI_Op op, MPI_Win win),
             (origin_addr, result_addr, datatype, target_rank, target_disp, op, win)) {
  AUGUR_WIN_CHECK(win, "MPI_Fetch_and_op",
                  accumulate_call(win, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
                                  datatype, op, true));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Compare_and_swap,
             (const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype,
              int target_rank, MPI_Aint target_disp, MPI_Win win),
             (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win)) {
  AUGUR_WIN_CHECK(win, "MPI_Compare_and_swap", check_running_win(win));
  Win& w = *win_of(win);
  AUGUR_WIN_CHECK(win, "MPI_Compare_and_swap", check_rank(w, target_rank));
  AUGUR_WIN_CHECK(win, "MPI_Compare_and_swap", check_type(datatype));
  if (origin_addr == nullptr || compare_addr == nullptr || result_addr == nullptr) {
    return raise_win(win, "MPI_Compare_and_swap", err(MPI_ERR_BUFFER, "null buffer"));
  }
  if (!type_of(datatype)->predefined) {
    return raise_win(win, "MPI_Compare_and_swap", err(MPI_ERR_TYPE, "compare-and-swap takes a predefined type"));
  }
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  AUGUR_WIN_CHECK(win, "MPI_Compare_and_swap",
                  accumulate(w, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
                             datatype, MPI_REPLACE, compare_addr));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Raccumulate,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
              MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
              win, request)) {
  if (request == nullptr) return raise_win(win, "MPI_Raccumulate", err(MPI_ERR_ARG, "null request pointer"));
  // Accumulates complete when they return (docs/rma.md): the request is complete at once.
  AUGUR_WIN_CHECK(win, "MPI_Raccumulate",
                  accumulate_call(win, origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                                  target_rank, target_disp, target_count, target_datatype, op, false));
  return done_request(request);
}

AUGUR_MPI_FN(int, Rget_accumulate,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
              int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
              target_disp, target_count, target_datatype, op, win, request)) {
  if (request == nullptr) return raise_win(win, "MPI_Rget_accumulate", err(MPI_ERR_ARG, "null request pointer"));
  AUGUR_WIN_CHECK(win, "MPI_Rget_accumulate",
                  accumulate_call(win, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                  result_datatype, target_rank, target_disp, target_count, target_datatype, op, true));
  return done_request(request);
}

// --- synchronisation -------------------------------------------------------------------------------

AUGUR_MPI_FN(int, Win_fence, (int assert, MPI_Win win), (assert, win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_fence", check_running_win(win));
  Win& w = *win_of(win);
  if ((assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) != 0) {
    return raise_win(win, "MPI_Win_fence", err(MPI_ERR_ASSERT, "assertion " + std::to_string(assert)));
  }
  AUGUR_WIN_CHECK(win, "MPI_Win_fence", complete_ops(w, -1));
  // Everybody's operations are at their targets before anybody reads its window.
  AUGUR_WIN_CHECK(win, "MPI_Win_fence", barrier_impl(w.comm));
  std::fill(w.regions_known.begin(), w.regions_known.end(), 0);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_post, (MPI_Group group, int assert, MPI_Win win), (group, assert, win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_post", check_running_win(win));
  Win& w = *win_of(win);
  if (w.exposing) return raise_win(win, "MPI_Win_post", err(MPI_ERR_RMA_SYNC, "already in an exposure epoch"));
  AUGUR_WIN_CHECK(win, "MPI_Win_post", ranks_of_group(w, group, &w.exposed));
  (void)assert;
  w.completes.clear();
  for (int o : w.exposed) {
    Result<host::RequestPtr> r = expect(w, o, kCompleteTag);  // posted first: the notice may come any time
    if (!r.ok()) return raise_win(win, "MPI_Win_post", from_status(r.status()));
    w.completes.push_back(*r);
    AUGUR_WIN_CHECK(win, "MPI_Win_post", notify(w, o, kPostTag));
  }
  w.exposing = true;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_start, (MPI_Group group, int assert, MPI_Win win), (group, assert, win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_start", check_running_win(win));
  Win& w = *win_of(win);
  if (w.accessing) return raise_win(win, "MPI_Win_start", err(MPI_ERR_RMA_SYNC, "already in an access epoch"));
  AUGUR_WIN_CHECK(win, "MPI_Win_start", ranks_of_group(w, group, &w.access));
  // Waits for every target's post (MPI allows MPI_Win_start to block until then).
  if ((assert & MPI_MODE_NOCHECK) == 0) {
    for (int t : w.access) {
      Result<host::RequestPtr> r = expect(w, t, kPostTag);
      AUGUR_WIN_CHECK(win, "MPI_Win_start", wait_rma(r));
    }
  }
  std::fill(w.regions_known.begin(), w.regions_known.end(), 0);
  w.accessing = true;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_complete, (MPI_Win win), (win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_complete", check_running_win(win));
  Win& w = *win_of(win);
  if (!w.accessing) return raise_win(win, "MPI_Win_complete", err(MPI_ERR_RMA_SYNC, "no access epoch (MPI_Win_start)"));
  for (int t : w.access) AUGUR_WIN_CHECK(win, "MPI_Win_complete", complete_ops(w, t));
  for (int t : w.access) AUGUR_WIN_CHECK(win, "MPI_Win_complete", notify(w, t, kCompleteTag));
  w.access.clear();
  w.accessing = false;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_wait, (MPI_Win win), (win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_wait", check_running_win(win));
  Win& w = *win_of(win);
  if (!w.exposing) return raise_win(win, "MPI_Win_wait", err(MPI_ERR_RMA_SYNC, "no exposure epoch (MPI_Win_post)"));
  for (const host::RequestPtr& r : w.completes) AUGUR_WIN_CHECK(win, "MPI_Win_wait", wait_engine(r));
  w.completes.clear();
  w.exposed.clear();
  w.exposing = false;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_test, (MPI_Win win, int* flag), (win, flag)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_test", check_running_win(win));
  Win& w = *win_of(win);
  if (flag == nullptr) return raise_win(win, "MPI_Win_test", err(MPI_ERR_ARG, "null flag"));
  if (!w.exposing) return raise_win(win, "MPI_Win_test", err(MPI_ERR_RMA_SYNC, "no exposure epoch (MPI_Win_post)"));
  AUGUR_WIN_CHECK(win, "MPI_Win_test", progress_once());
  *flag = std::all_of(w.completes.begin(), w.completes.end(), [](const host::RequestPtr& r) { return r->done.load(); });
  if (*flag) return PMPI_Win_wait(win);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win), (lock_type, rank, assert, win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_lock", check_running_win(win));
  Win& w = *win_of(win);
  if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED) {
    return raise_win(win, "MPI_Win_lock", err(MPI_ERR_LOCKTYPE, "lock type " + std::to_string(lock_type)));
  }
  if ((assert & ~MPI_MODE_NOCHECK) != 0) return raise_win(win, "MPI_Win_lock", err(MPI_ERR_ASSERT, "assertion " + std::to_string(assert)));
  AUGUR_WIN_CHECK(win, "MPI_Win_lock", check_rank(w, rank));
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  Held& h = w.held[static_cast<std::size_t>(rank)];
  if (h != Held::kNone || w.lock_all != 0) {
    return raise_win(win, "MPI_Win_lock", err(MPI_ERR_RMA_SYNC, "rank " + std::to_string(rank) + " is locked already"));
  }
  if ((assert & MPI_MODE_NOCHECK) != 0) {
    h = Held::kNoCheck;
  } else {
    AUGUR_WIN_CHECK(win, "MPI_Win_lock", lock_one(w, lock_type, rank));
    h = lock_type == MPI_LOCK_EXCLUSIVE ? Held::kExclusive : Held::kShared;
  }
  w.regions_known[static_cast<std::size_t>(rank)] = 0;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_unlock, (int rank, MPI_Win win), (rank, win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_unlock", check_running_win(win));
  Win& w = *win_of(win);
  AUGUR_WIN_CHECK(win, "MPI_Win_unlock", check_rank(w, rank));
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  Held& h = w.held[static_cast<std::size_t>(rank)];
  if (h == Held::kNone) return raise_win(win, "MPI_Win_unlock", err(MPI_ERR_RMA_SYNC, "rank " + std::to_string(rank) + " is not locked"));
  const Held how = h;
  h = Held::kNone;
  AUGUR_WIN_CHECK(win, "MPI_Win_unlock", unlock_one(w, how, rank));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_lock_all, (int assert, MPI_Win win), (assert, win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_lock_all", check_running_win(win));
  Win& w = *win_of(win);
  if ((assert & ~MPI_MODE_NOCHECK) != 0) return raise_win(win, "MPI_Win_lock_all", err(MPI_ERR_ASSERT, "assertion " + std::to_string(assert)));
  if (w.lock_all != 0 || std::any_of(w.held.begin(), w.held.end(), [](Held x) { return x != Held::kNone; })) {
    return raise_win(win, "MPI_Win_lock_all", err(MPI_ERR_RMA_SYNC, "a lock is held already"));
  }
  if ((assert & MPI_MODE_NOCHECK) == 0) {
    for (int t = 0; t < w.comm->size; ++t) AUGUR_WIN_CHECK(win, "MPI_Win_lock_all", lock_one(w, MPI_LOCK_SHARED, t));
    w.lock_all = 1;
  } else {
    w.lock_all = 2;
  }
  std::fill(w.regions_known.begin(), w.regions_known.end(), 0);
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_unlock_all, (MPI_Win win), (win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_unlock_all", check_running_win(win));
  Win& w = *win_of(win);
  if (w.lock_all == 0) return raise_win(win, "MPI_Win_unlock_all", err(MPI_ERR_RMA_SYNC, "no MPI_Win_lock_all"));
  const Held how = w.lock_all == 1 ? Held::kShared : Held::kNoCheck;
  w.lock_all = 0;
  AUGUR_WIN_CHECK(win, "MPI_Win_unlock_all", complete_ops(w, -1));
  for (int t = 0; t < w.comm->size; ++t) AUGUR_WIN_CHECK(win, "MPI_Win_unlock_all", unlock_one(w, how, t));
  return MPI_SUCCESS;
}

namespace {
int flush(MPI_Win win, int rank, const char* fn) {
  AUGUR_WIN_CHECK(win, fn, check_running_win(win));
  Win& w = *win_of(win);
  AUGUR_WIN_CHECK(win, fn, check_rank(w, rank));
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  AUGUR_WIN_CHECK(win, fn, complete_ops(w, rank));
  return MPI_SUCCESS;
}
}  // namespace

// An RDMA operation is complete at the origin only once the target has it (RC acknowledges
// after placement), so the local flushes are the remote ones.
AUGUR_MPI_FN(int, Win_flush, (int rank, MPI_Win win), (rank, win)) { return flush(win, rank, "MPI_Win_flush"); }
AUGUR_MPI_FN(int, Win_flush_local, (int rank, MPI_Win win), (rank, win)) { return flush(win, rank, "MPI_Win_flush_local"); }

AUGUR_MPI_FN(int, Win_flush_all, (MPI_Win win), (win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_flush_all", check_running_win(win));
  AUGUR_WIN_CHECK(win, "MPI_Win_flush_all", complete_ops(*win_of(win), -1));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_flush_local_all, (MPI_Win win), (win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_flush_local_all", check_running_win(win));
  AUGUR_WIN_CHECK(win, "MPI_Win_flush_local_all", complete_ops(*win_of(win), -1));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_sync, (MPI_Win win), (win)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_sync", check_running_win(win));
  // The unified model: the NIC writes memory directly; only the compiler and CPU order remain.
  // A sequentially consistent read-modify-write is a full fence (and, unlike
  // atomic_thread_fence, understood by ThreadSanitizer).
  static std::atomic<int> fence_word{0};
  fence_word.fetch_add(0, std::memory_order_seq_cst);
  return MPI_SUCCESS;
}

// --- window objects --------------------------------------------------------------------------------

AUGUR_MPI_FN(int, Win_get_group, (MPI_Win win, MPI_Group* group), (win, group)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_get_group", check_running_win(win));
  if (group == nullptr) return raise_win(win, "MPI_Win_get_group", err(MPI_ERR_ARG, "null argument"));
  auto g = std::make_shared<Group>();
  g->world = win_of(win)->comm->world;
  *group = new_group(std::move(g));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_set_name, (MPI_Win win, const char* win_name), (win, win_name)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_set_name", check_running_win(win));
  if (win_name == nullptr) return raise_win(win, "MPI_Win_set_name", err(MPI_ERR_ARG, "null name"));
  win_of(win)->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_get_name, (MPI_Win win, char* win_name, int* resultlen), (win, win_name, resultlen)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_get_name", check_running_win(win));
  if (win_name == nullptr || resultlen == nullptr) return raise_win(win, "MPI_Win_get_name", err(MPI_ERR_ARG, "null argument"));
  const std::string& n = win_of(win)->name;
  std::memcpy(win_name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_create_errhandler, (MPI_Win_errhandler_function * fn, MPI_Errhandler* errhandler),
             (fn, errhandler)) {
  // Window and communicator handlers have the same shape: one table holds both.
  return PMPI_Comm_create_errhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(fn), errhandler);
}

AUGUR_MPI_FN(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler), (win, errhandler)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_set_errhandler", check_running_win(win));
  if (errhandler <= 0 || static_cast<std::size_t>(errhandler) >= S().errhandlers.size()) {
    return raise_win(win, "MPI_Win_set_errhandler", err(MPI_ERR_ARG, "invalid error handler " + std::to_string(errhandler)));
  }
  win_of(win)->eh = errhandler;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler* errhandler), (win, errhandler)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_get_errhandler", check_running_win(win));
  if (errhandler == nullptr) return raise_win(win, "MPI_Win_get_errhandler", err(MPI_ERR_ARG, "null argument"));
  *errhandler = win_of(win)->eh;
  return MPI_SUCCESS;
}

AUGUR_MPI_FN(int, Win_call_errhandler, (MPI_Win win, int errorcode), (win, errorcode)) {
  AUGUR_WIN_CHECK(win, "MPI_Win_call_errhandler", check_running_win(win));
  raise_win(win, "MPI_Win_call_errhandler", err(errorcode, "MPI_Win_call_errhandler"));
  return MPI_SUCCESS;
}

extern "C" MPI_Win PMPI_Win_f2c(MPI_Fint win) { return win; }
extern "C" MPI_Fint PMPI_Win_c2f(MPI_Win win) { return win; }
extern "C" decltype(PMPI_Win_f2c) MPI_Win_f2c __attribute__((weak, alias("PMPI_Win_f2c")));
extern "C" decltype(PMPI_Win_c2f) MPI_Win_c2f __attribute__((weak, alias("PMPI_Win_c2f")));

// Addresses as MPI_Get_address gives them (absolute in a dynamic window) do arithmetic as integers.
extern "C" MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(disp));
}
extern "C" MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(addr1) - static_cast<std::uintptr_t>(addr2));
}
extern "C" decltype(PMPI_Aint_add) MPI_Aint_add __attribute__((weak, alias("PMPI_Aint_add")));
extern "C" decltype(PMPI_Aint_diff) MPI_Aint_diff __attribute__((weak, alias("PMPI_Aint_diff")));
