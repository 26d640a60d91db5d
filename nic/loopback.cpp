#include "loopback.h"

#include <infiniband/verbs.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <utility>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "augur/unique_fd.h"

#if defined(__SANITIZE_THREAD__)
#define AUGUR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define AUGUR_TSAN 1
#endif
#endif
#ifndef AUGUR_TSAN
#define AUGUR_TSAN 0
#endif
#if AUGUR_TSAN
extern "C" {  // ThreadSanitizer's dynamic annotations (its runtime defines them)
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
}
#endif

namespace augur::nic::loop {

struct Mr {
  std::uint32_t key = 0;
  std::byte* addr = nullptr;
  std::size_t length = 0;
  std::uint32_t access = 0;
};

struct Channel {
  UniqueFd fd;  // eventfd: one count per CQ event
};

// A ring of its capacity: polling neither allocates nor frees, as a NIC's CQ (a touch of an
// early-released page polls from the SIGSEGV handler).
struct Cq {
  std::vector<Completion> ring;
  std::size_t head = 0;
  std::size_t count = 0;
  Channel* ch = nullptr;
  bool armed = false;
  bool overrun = false;
};

struct Op {
  SendRequest wr;                // sges point into `sges`
  std::vector<Sge> sges;
  std::vector<std::byte> inline_bytes;
};

struct Recv {
  std::uint64_t wr_id = 0;
  std::vector<Sge> sges;
};

struct Srq {
  std::deque<Recv> rq;
  std::uint32_t max_wr = 0;
};

enum class State : std::uint8_t { kReset, kRts, kError };

struct Qp {
  std::uint32_t num = 0;
  Cq* send_cq = nullptr;
  Cq* recv_cq = nullptr;
  QpCaps caps;
  State state = State::kReset;
  std::uint32_t remote = 0;
  std::deque<Op> sq;  // posted, not yet executed (waiting for a receive at the peer)
  std::deque<Recv> rq;
  Srq* srq = nullptr;  // receives come from here instead of rq
  [[nodiscard]] std::deque<Recv>& receives() noexcept { return srq != nullptr ? srq->rq : rq; }
};

namespace {

// Process-wide and never destroyed: engines may end during exit, after static destructors.
struct Device {
  std::mutex mu;
  std::unordered_map<std::uint32_t, Mr*> mrs;
  std::unordered_map<std::uint32_t, Qp*> qps;
  std::uint32_t next_key = 0x1000;
  std::uint32_t next_qp = 0x100;
};

Device& dev() {
  static auto* d = new Device;
  return *d;
}

struct Seg {
  std::byte* p;
  std::size_t n;
};

// The device's DMA. A peer reads some of this memory without a lock (credit and arm words, read
// between two equal reads of the arm word), as it reads a NIC's writes: outside the language's
// memory model, so ThreadSanitizer is told not to record these accesses.
std::atomic<int> g_mem_fd{-1};  // /proc/self/mem once memory may be guarded (note_guarded_memory)

// Through the kernel, as a NIC's DMA, past page protection: false if that failed.
bool dma_through_kernel(int fd, std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  thread_local std::vector<std::byte> tmp;
  tmp.resize(n);  // the source may be guarded too, and may overlap the destination
  auto offset = [](const std::byte* p) { return static_cast<off_t>(reinterpret_cast<std::uintptr_t>(p)); };
  return ::pread(fd, tmp.data(), n, offset(src)) == static_cast<ssize_t>(n) &&
         ::pwrite(fd, tmp.data(), n, offset(dst)) == static_cast<ssize_t>(n);
}

void dma(std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  if (const int fd = g_mem_fd.load(std::memory_order_acquire); fd >= 0 && n > 0 && dma_through_kernel(fd, dst, src, n)) {
    return;
  }
#if AUGUR_TSAN
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
  std::memmove(dst, src, n);
#if AUGUR_TSAN
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
}

// Copies the bytes of `src` into `dst` in order (dst holds at least as many).
void copy_segments(const std::vector<Seg>& dst, const std::vector<Seg>& src) {
  std::size_t di = 0, doff = 0;
  for (const Seg& s : src) {
    std::size_t soff = 0;
    while (soff < s.n) {
      while (dst[di].n == doff) {
        ++di;
        doff = 0;
      }
      const std::size_t k = std::min(s.n - soff, dst[di].n - doff);
      dma(dst[di].p + doff, s.p + soff, k);
      soff += k;
      doff += k;
    }
  }
}

std::size_t total(const std::vector<Seg>& v) {
  std::size_t n = 0;
  for (const Seg& s : v) n += s.n;
  return n;
}

// The registered range [addr, addr+len) under `key` with `access`, if there is one.
bool lookup(Device& d, std::uint32_t key, std::uint64_t addr, std::size_t len, std::uint32_t access, Seg* out) {
  auto it = d.mrs.find(key);
  if (it == d.mrs.end()) return false;
  const Mr& m = *it->second;
  const auto lo = reinterpret_cast<std::uintptr_t>(m.addr);
  if (addr < lo || addr - lo > m.length || len > m.length - (addr - lo)) return false;
  if ((m.access & access) != access) return false;
  *out = {m.addr + (addr - lo), len};
  return true;
}

bool local_segments(Device& d, std::span<const Sge> sges, std::uint32_t access, std::vector<Seg>* out) {
  out->clear();
  for (const Sge& s : sges) {
    Seg seg{};
    if (s.length == 0) continue;
    if (!lookup(d, s.lkey, s.addr, s.length, access, &seg)) return false;
    out->push_back(seg);
  }
  return true;
}

void push(Cq& cq, const Completion& c) {
  if (cq.count >= cq.ring.size()) {
    cq.overrun = true;  // a NIC raises a CQ error event; the next poll reports it
    return;
  }
  cq.ring[(cq.head + cq.count) % cq.ring.size()] = c;
  ++cq.count;
  if (cq.armed && cq.ch != nullptr) {
    cq.armed = false;
    const std::uint64_t one = 1;
    (void)!::write(cq.ch->fd.get(), &one, sizeof one);
  }
}

Completion completion(const Qp& qp, std::uint64_t wr_id, int status, WcOpcode op) {
  Completion c;
  c.wr_id = wr_id;
  c.wc_status = status;
  c.opcode = status == IBV_WC_SUCCESS ? op : WcOpcode::kOther;
  c.qp_num = qp.num;
  return c;
}

// The error state: every outstanding request completes flushed, signaled or not.
void enter_error(Qp& qp) {
  qp.state = State::kError;
  for (const Op& op : qp.sq) push(*qp.send_cq, completion(qp, op.wr.wr_id, IBV_WC_WR_FLUSH_ERR, WcOpcode::kOther));
  qp.sq.clear();
  for (const Recv& r : qp.rq) push(*qp.recv_cq, completion(qp, r.wr_id, IBV_WC_WR_FLUSH_ERR, WcOpcode::kOther));
  qp.rq.clear();
}

// The head of the send queue failed with `status`: it completes so, and the QP breaks.
void fail_head(Qp& qp, int status) {
  const Op op = std::move(qp.sq.front());
  qp.sq.pop_front();
  push(*qp.send_cq, completion(qp, op.wr.wr_id, status, WcOpcode::kOther));
  enter_error(qp);
}

enum class Step : std::uint8_t { kDone, kBlocked, kFailed };

WcOpcode send_opcode(SendOp op) {
  switch (op) {
    case SendOp::kRdmaWrite:
    case SendOp::kRdmaWriteWithImm: return WcOpcode::kRdmaWrite;
    case SendOp::kRdmaRead: return WcOpcode::kRdmaRead;
    case SendOp::kFetchAdd:
    case SendOp::kCompareSwap: return WcOpcode::kAtomic;
    default: return WcOpcode::kSend;
  }
}

bool reads_into_local(SendOp op) {
  return op == SendOp::kRdmaRead || op == SendOp::kFetchAdd || op == SendOp::kCompareSwap;
}

// Executes the head of qp's send queue against the peer `r`.
Step execute(Device& d, Qp& qp, Qp& r) {
  Op& op = qp.sq.front();
  const SendRequest& wr = op.wr;
  const bool consumes_recv = wr.op == SendOp::kSend || wr.op == SendOp::kSendWithImm || wr.op == SendOp::kRdmaWriteWithImm;
  if (consumes_recv && r.receives().empty()) return Step::kBlocked;  // receiver not ready: retried forever
  std::vector<Seg> local;
  if (wr.inline_data) {
    if (!op.inline_bytes.empty()) local.push_back({op.inline_bytes.data(), op.inline_bytes.size()});
  } else if (!local_segments(d, op.sges, reads_into_local(wr.op) ? std::uint32_t{kLocalWrite} : 0u, &local)) {
    fail_head(qp, IBV_WC_LOC_PROT_ERR);
    return Step::kFailed;
  }
  const std::size_t len = total(local);
  Seg remote{};
  if (wr.op == SendOp::kRdmaRead || wr.op == SendOp::kRdmaWrite || wr.op == SendOp::kRdmaWriteWithImm) {
    const std::uint32_t access = wr.op == SendOp::kRdmaRead ? kRemoteRead : kRemoteWrite;
    if (!lookup(d, wr.rkey, wr.remote_addr, len, access, &remote)) {
      fail_head(qp, IBV_WC_REM_ACCESS_ERR);
      return Step::kFailed;
    }
  }
  if (wr.op == SendOp::kFetchAdd || wr.op == SendOp::kCompareSwap) {
    // One aligned 8-byte word, as verbs requires; atomic against the other side's CPU too.
    if (len != 8 || local.size() != 1 || wr.remote_addr % 8 != 0 ||
        !lookup(d, wr.rkey, wr.remote_addr, 8, kRemoteAtomic, &remote)) {
      fail_head(qp, len != 8 || wr.remote_addr % 8 != 0 ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_REM_ACCESS_ERR);
      return Step::kFailed;
    }
    std::atomic_ref<std::uint64_t> word(*reinterpret_cast<std::uint64_t*>(remote.p));
    std::uint64_t old = 0;
    if (wr.op == SendOp::kFetchAdd) {
      old = word.fetch_add(wr.compare_add);
    } else {
      old = wr.compare_add;
      word.compare_exchange_strong(old, wr.swap);  // old: the value found either way
    }
    std::memcpy(local[0].p, &old, sizeof old);
  }
  Completion rc;  // the receiver's completion, when one is due
  bool recv_done = false;
  if (wr.op == SendOp::kFetchAdd || wr.op == SendOp::kCompareSwap) {
    // done above
  } else if (wr.op == SendOp::kRdmaRead) {
    copy_segments(local, {remote});
  } else if (wr.op != SendOp::kRdmaWrite && wr.op != SendOp::kRdmaWriteWithImm) {  // a SEND
    const Recv recv = std::move(r.receives().front());
    r.receives().pop_front();
    std::vector<Seg> target;
    if (!local_segments(d, recv.sges, kLocalWrite, &target)) {
      push(*r.recv_cq, completion(r, recv.wr_id, IBV_WC_LOC_PROT_ERR, WcOpcode::kOther));
      enter_error(r);
      fail_head(qp, IBV_WC_REM_OP_ERR);
      return Step::kFailed;
    }
    if (total(target) < len) {
      push(*r.recv_cq, completion(r, recv.wr_id, IBV_WC_LOC_LEN_ERR, WcOpcode::kOther));
      enter_error(r);
      fail_head(qp, IBV_WC_REM_INV_REQ_ERR);
      return Step::kFailed;
    }
    copy_segments(target, local);
    rc = completion(r, recv.wr_id, IBV_WC_SUCCESS, WcOpcode::kRecv);
    recv_done = true;
  } else {
    copy_segments({remote}, local);
    if (wr.op == SendOp::kRdmaWriteWithImm) {
      const Recv recv = std::move(r.receives().front());
      r.receives().pop_front();
      rc = completion(r, recv.wr_id, IBV_WC_SUCCESS, WcOpcode::kRecvRdmaWithImm);
      recv_done = true;
    }
  }
  if (recv_done) {
    rc.byte_len = static_cast<std::uint32_t>(len);
    rc.has_imm = wr.op == SendOp::kSendWithImm || wr.op == SendOp::kRdmaWriteWithImm;
    rc.imm = rc.has_imm ? wr.imm : 0;
    push(*r.recv_cq, rc);
  }
  if (wr.signaled) {
    Completion sc = completion(qp, wr.wr_id, IBV_WC_SUCCESS, send_opcode(wr.op));
    sc.byte_len = reads_into_local(wr.op) ? static_cast<std::uint32_t>(len) : 0;
    push(*qp.send_cq, sc);
  }
  qp.sq.pop_front();
  return Step::kDone;
}

// Runs qp's queued work in order until it is empty or waits for a receive at the peer.
void drain(Device& d, Qp& qp) {
  while (qp.state == State::kRts && !qp.sq.empty()) {
    auto it = d.qps.find(qp.remote);
    if (it == d.qps.end() || it->second->state == State::kError) {
      fail_head(qp, IBV_WC_RETRY_EXC_ERR);  // the peer is gone or broken: no ACK ever comes
      return;
    }
    if (it->second->state != State::kRts) return;  // not connected yet: RC retries
    if (execute(d, qp, *it->second) == Step::kBlocked) return;
  }
}

Status queue_full(const char* which) { return errno_status(ENOMEM, std::string("loopback ") + which + " queue full"); }

}  // namespace

Result<Mr*> register_memory(void* addr, std::size_t length, std::uint32_t access) {
  if (addr == nullptr && length != 0) return Status(Code::kInvalidArgument, "loopback: registering a null address");
  Device& d = dev();
  std::lock_guard lock(d.mu);
  auto* m = new Mr{d.next_key++, static_cast<std::byte*>(addr), length, access};
  if ((access & kRemoteAtomic) != 0) m->access |= kLocalWrite;
  if ((access & kRemoteWrite) != 0) m->access |= kLocalWrite;  // as verbs requires
  d.mrs[m->key] = m;
  return m;
}

// Drops `obj` from its table and frees it (a peer's lookups stop finding it at once).
template <typename T>
void forget(std::unordered_map<std::uint32_t, T*> Device::*table, std::uint32_t key, T* obj) noexcept {
  Device& d = dev();
  std::lock_guard lock(d.mu);
  (d.*table).erase(key);
  delete obj;
}

void deregister(Mr* mr) noexcept { forget(&Device::mrs, mr->key, mr); }

void* mr_addr(const Mr& mr) noexcept { return mr.addr; }
std::size_t mr_length(const Mr& mr) noexcept { return mr.length; }
std::uint32_t mr_key(const Mr& mr) noexcept { return mr.key; }

Result<Channel*> create_channel() {
  UniqueFd fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!fd.valid()) return errno_status(errno, "loopback: eventfd");
  auto* ch = new Channel;
  ch->fd = std::move(fd);
  return ch;
}

void destroy(Channel* ch) noexcept { delete ch; }
int channel_fd(const Channel& ch) noexcept { return ch.fd.get(); }

Result<Cq*> create_cq(int min_entries, Channel* ch) {
  if (min_entries < 1 || static_cast<std::uint32_t>(min_entries) > limits().max_cqe) {
    return Status(Code::kInvalidArgument, "loopback: CQ of " + std::to_string(min_entries) + " entries");
  }
  auto* cq = new Cq;
  cq->ring.resize(static_cast<std::size_t>(min_entries));
  cq->ch = ch;
  return cq;
}

void destroy(Cq* cq) noexcept {
  Device& d = dev();
  std::lock_guard lock(d.mu);  // a peer's post may be pushing to it until its QPs are gone
  delete cq;
}

Status resize(Cq& cq, int min_entries) {
  if (min_entries < 1 || static_cast<std::uint32_t>(min_entries) > limits().max_cqe) {
    return Status(Code::kInvalidArgument, "loopback: CQ of " + std::to_string(min_entries) + " entries");
  }
  Device& d = dev();
  std::lock_guard lock(d.mu);
  if (static_cast<std::size_t>(min_entries) < cq.count) return Status(Code::kInvalidArgument, "loopback: CQ resized below its fill");
  std::vector<Completion> ring(static_cast<std::size_t>(min_entries));
  for (std::size_t i = 0; i < cq.count; ++i) ring[i] = cq.ring[(cq.head + i) % cq.ring.size()];
  cq.ring = std::move(ring);
  cq.head = 0;
  return Status::Ok();
}

Result<std::size_t> poll(Cq& cq, std::span<Completion> out) {
  Device& d = dev();
  std::lock_guard lock(d.mu);
  if (cq.overrun) return Status(Code::kIo, "loopback: CQ overrun (more completions than its entries)");
  std::size_t n = 0;
  while (n < out.size() && cq.count > 0) {
    out[n++] = cq.ring[cq.head];
    cq.head = (cq.head + 1) % cq.ring.size();
    --cq.count;
  }
  return n;
}

Status request_notify(Cq& cq) {
  Device& d = dev();
  std::lock_guard lock(d.mu);
  cq.armed = true;
  return Status::Ok();
}

Status consume_event(Channel& ch) {
  std::uint64_t n = 0;
  if (::read(ch.fd.get(), &n, sizeof n) != sizeof n) return errno_status(errno, "loopback: no CQ event to take");
  return Status::Ok();
}

Result<Srq*> create_srq(std::uint32_t max_wr) {
  if (max_wr == 0 || max_wr > limits().max_srq_wr) return errno_status(EINVAL, "loopback: SRQ beyond the device's limits");
  auto* srq = new Srq;
  srq->max_wr = max_wr;
  return srq;
}

void destroy(Srq* srq) noexcept {
  Device& d = dev();
  std::lock_guard lock(d.mu);
  delete srq;
}

Status post_srq_recv(Srq& srq, std::uint64_t wr_id, std::span<const Sge> sges) {
  if (sges.size() > 1) return errno_status(EINVAL, "loopback: more SGEs than the SRQ's max_sge");
  Device& d = dev();
  std::lock_guard lock(d.mu);
  if (srq.rq.size() >= srq.max_wr) return queue_full("shared receive");
  srq.rq.push_back({wr_id, std::vector<Sge>(sges.begin(), sges.end())});
  // Every sender into a QP of this SRQ may have been waiting for it.
  for (auto& [num, qp] : d.qps) {
    if (qp->state != State::kRts || qp->sq.empty()) continue;
    if (auto it = d.qps.find(qp->remote); it != d.qps.end() && it->second->srq == &srq) drain(d, *qp);
    if (srq.rq.empty()) break;
  }
  return Status::Ok();
}

Result<Qp*> create_qp(Cq& send_cq, Cq& recv_cq, const QpCaps& caps, Srq* srq) {
  const DeviceLimits l = limits();
  if (caps.max_send_wr > l.max_qp_wr || (srq == nullptr && caps.max_recv_wr > l.max_qp_wr) ||
      caps.max_send_sge > l.max_sge || (srq == nullptr && caps.max_recv_sge > l.max_sge)) {
    return errno_status(EINVAL, "loopback: QP capabilities beyond the device's limits");
  }
  Device& d = dev();
  std::lock_guard lock(d.mu);
  auto* qp = new Qp;
  qp->num = d.next_qp++ & 0xffffff;
  qp->send_cq = &send_cq;
  qp->recv_cq = &recv_cq;
  qp->caps = caps;
  qp->srq = srq;
  d.qps[qp->num] = qp;
  return qp;
}

void destroy(Qp* qp) noexcept { forget(&Device::qps, qp->num, qp); }

std::uint32_t qp_num(const Qp& qp) noexcept { return qp.num; }

Status connect(Qp& qp, const QpAddress& remote) {
  Device& d = dev();
  std::lock_guard lock(d.mu);
  if (std::memcmp(remote.gid, gid().raw.data(), sizeof remote.gid) != 0 || d.qps.find(remote.qp_num) == d.qps.end()) {
    return Status(Code::kUnavailable, "loopback: QP " + std::to_string(remote.qp_num) +
                                          " is not in this process (the loopback device connects threads of one "
                                          "process; ranks in other processes need an RDMA device)");
  }
  if (qp.state != State::kReset) return errno_status(EINVAL, "loopback: connecting a QP twice");
  qp.remote = remote.qp_num;
  qp.state = State::kRts;
  drain(d, qp);
  // The peer's work that waited for us to connect goes now (RC retries until the receiver is
  // ready; receives from an SRQ were posted before the connection).
  if (auto it = d.qps.find(remote.qp_num); it != d.qps.end() && it->second->remote == qp.num) drain(d, *it->second);
  return Status::Ok();
}

Status post_send(Qp& qp, const SendRequest& wr) {
  if (wr.sges.size() > qp.caps.max_send_sge) return errno_status(EINVAL, "loopback: more SGEs than the QP's max_send_sge");
  Device& d = dev();
  std::lock_guard lock(d.mu);
  if (qp.state == State::kReset) return errno_status(EINVAL, "loopback: posting to an unconnected QP");
  if (qp.sq.size() >= qp.caps.max_send_wr) return queue_full("send");
  Op op;
  op.sges.assign(wr.sges.begin(), wr.sges.end());
  op.wr = wr;
  op.wr.sges = op.sges;
  if (wr.inline_data) {  // copied now: the caller may reuse its buffer when the post returns
    std::size_t n = 0;
    for (const Sge& s : wr.sges) n += s.length;
    if (n > qp.caps.max_inline_data) return errno_status(EINVAL, "loopback: inline data beyond max_inline_data");
    for (const Sge& s : wr.sges) {
      const auto* p = reinterpret_cast<const std::byte*>(s.addr);
      op.inline_bytes.insert(op.inline_bytes.end(), p, p + s.length);
    }
  }
  qp.sq.push_back(std::move(op));
  qp.sq.back().wr.sges = qp.sq.back().sges;  // the deque's copy owns them now
  if (qp.state == State::kError) {
    enter_error(qp);  // flushed at once, as on a QP in the error state
    return Status::Ok();
  }
  drain(d, qp);
  return Status::Ok();
}

Status post_recv(Qp& qp, std::uint64_t wr_id, std::span<const Sge> sges) {
  if (qp.srq != nullptr) return errno_status(EINVAL, "loopback: post_recv on a QP that takes its receives from an SRQ");
  if (sges.size() > qp.caps.max_recv_sge) return errno_status(EINVAL, "loopback: more SGEs than the QP's max_recv_sge");
  Device& d = dev();
  std::lock_guard lock(d.mu);
  if (qp.rq.size() >= qp.caps.max_recv_wr) return queue_full("receive");
  qp.rq.push_back({wr_id, std::vector<Sge>(sges.begin(), sges.end())});
  if (qp.state == State::kError) {
    enter_error(qp);
    return Status::Ok();
  }
  if (auto it = d.qps.find(qp.remote); qp.state == State::kRts && it != d.qps.end()) drain(d, *it->second);
  return Status::Ok();
}

bool in_error(const Qp& qp) {
  Device& d = dev();
  std::lock_guard lock(d.mu);
  return qp.state == State::kError;
}

Status to_error(Qp& qp) {
  Device& d = dev();
  std::lock_guard lock(d.mu);
  enter_error(qp);
  return Status::Ok();
}

PortAttr port_attr(std::uint8_t port) {
  PortAttr p;
  p.port = port;
  p.link_layer = LinkLayer::kEthernet;
  p.active = port == 1;
  p.active_mtu = 5;
  p.active_mtu_bytes = 4096;
  return p;
}

DeviceLimits limits() {
  DeviceLimits l;
  l.max_sge = 32;
  l.max_qp_wr = 16384;
  l.max_cqe = 1u << 20;
  l.max_qp_rd_atom = 128;
  l.max_mr_size = std::uint64_t{1} << 40;
  l.max_srq_wr = 1u << 16;
  l.software = true;
  return l;
}

Gid gid() {
  Gid g;  // the process id, then ::ffff:127.0.0.1: a QP number means a QP of this process only
  const auto pid = static_cast<std::uint32_t>(::getpid());
  std::memcpy(g.raw.data(), &pid, sizeof pid);
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  g.raw[12] = 127;
  g.raw[15] = 1;
  return g;
}

}  // namespace augur::nic::loop

namespace augur::nic {

void note_guarded_memory() noexcept {
  if (loop::g_mem_fd.load(std::memory_order_acquire) >= 0) return;
  const int fd = ::open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  int none = -1;
  if (fd >= 0 && !loop::g_mem_fd.compare_exchange_strong(none, fd, std::memory_order_acq_rel)) ::close(fd);
}

}  // namespace augur::nic
