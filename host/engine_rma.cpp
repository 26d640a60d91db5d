// One-sided communication: RDMA WRITE, READ and 8-byte atomics on memory peers exposed (MPI
// windows, docs/rma.md). The target's CPU takes no part; the origin posts the work request on its
// channel to the target and completes the request at the NIC's completion. Operations beyond
// Channel::kMaxRma in flight to one peer wait in that peer's queue, in order.
#include <cstring>

#include "engine_internal.h"

namespace augur::host {

namespace {
// Registered slots that atomics and small gets land in (copied out at completion): an 8-byte
// old value has no registered home of its own, and a small READ into a slot costs a copy of a
// few bytes instead of a registration-cache lookup. All peers together; more wait (atomics) or
// go through the cache (gets).
constexpr std::int32_t kRmaSlots = 64;
constexpr std::size_t kRmaSlotBytes = 256;
constexpr std::uint32_t kSelfPsn = 0x5e1f;
}  // namespace

Result<std::unique_ptr<nic::MemoryRegion>> Engine::expose(void* addr, std::size_t len) {
  if (addr == nullptr || len == 0) return Status(Code::kInvalidArgument, "exposing an empty region");
  if (must_settle(true)) [[unlikely]] AUGUR_RETURN_IF_ERROR(settle(addr, len));  // registering needs its pages
  Result<std::unique_ptr<nic::MemoryRegion>> out = Status(Code::kInternal, "not run");
  // Registration touches the PD the assist thread also registers through.
  call_in_assist([&] {
    Result<nic::MemoryRegion> mr = nic::MemoryRegion::register_memory(
        *pd_, addr, len, nic::kLocalWrite | nic::kRemoteWrite | nic::kRemoteRead | nic::kRemoteAtomic);
    if (!mr.ok()) {
      out = mr.status().context("exposing " + std::to_string(len) + " bytes for one-sided access");
    } else {
      out = std::make_unique<nic::MemoryRegion>(std::move(*mr));
    }
  });
  return out;
}

Status Engine::check_rma(int peer, RmaOp op, const void* local, std::size_t len, RmaTarget to) const {
  if (peer < 0 || peer >= size_) return Status(Code::kInvalidArgument, "target rank " + std::to_string(peer));
  const bool atomic = op == RmaOp::kFetchAdd || op == RmaOp::kCompareSwap;
  if (atomic && (len != 8 || to.addr % 8 != 0)) {
    return Status(Code::kInvalidArgument, "an RDMA atomic acts on one aligned 8-byte word");
  }
  if (local == nullptr && len > 0) return Status(Code::kInvalidArgument, "null local buffer");
  if (len > 0x7fffffffu) return Status(Code::kInvalidArgument, "one-sided transfers are limited to 2 GiB - 1 bytes");
  if (peer != rank_ && dead_[static_cast<std::size_t>(peer)].load(std::memory_order_acquire)) {
    return Status(Code::kPeerFailure, "rank " + std::to_string(peer) + " is gone");
  }
  return Status::Ok();
}

Result<RequestPtr> Engine::rma(int peer, RmaOp op, void* local, std::size_t len, RmaTarget to, std::uint64_t operand,
                               std::uint64_t swap) {
  AUGUR_RETURN_IF_ERROR(check_rma(peer, op, local, len, to));
  if (must_settle(op != RmaOp::kPut)) [[unlikely]] AUGUR_RETURN_IF_ERROR(settle(local, len, op != RmaOp::kPut));
  auto req = std::make_shared<Request>();
  req->source = peer;
  req->length = len;
  if (len == 0) {
    finish(*req, Path::kOneSided);
    return req;
  }
  rma_pending_[static_cast<std::size_t>(peer)].fetch_add(1, std::memory_order_acq_rel);
  Status st;
  call_in_assist([&] { st = start_rma(peer, {req, op, local, len, to, operand, swap}); });
  if (!st.ok()) return st;
  return req;
}

Status Engine::rma_untracked(int peer, RmaOp op, void* local, std::size_t len, RmaTarget to) {
  if (op != RmaOp::kPut && op != RmaOp::kGet) return Status(Code::kInvalidArgument, "only puts and gets go untracked");
  AUGUR_RETURN_IF_ERROR(check_rma(peer, op, local, len, to));
  if (len == 0) return Status::Ok();
  if (must_settle(op != RmaOp::kPut)) [[unlikely]] AUGUR_RETURN_IF_ERROR(settle(local, len, op != RmaOp::kPut));
  rma_pending_[static_cast<std::size_t>(peer)].fetch_add(1, std::memory_order_acq_rel);
  Status st;
  call_in_assist([&] { st = start_rma(peer, {nullptr, op, local, len, to, 0, 0}); });
  return st;
}

Status Engine::start_rma(int peer, RmaStart op) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  switch (op.op) {
    case RmaOp::kPut: ++counters_.rma_puts; counters_.rma_bytes += op.len; break;
    case RmaOp::kGet: ++counters_.rma_gets; counters_.rma_bytes += op.len; break;
    default: ++counters_.rma_atomics; break;
  }
  if (peer == rank_ && !self_qp_) {
    if (Status st = open_self_rma(); !st.ok()) {
      rma_pending_[static_cast<std::size_t>(peer)].fetch_sub(1, std::memory_order_acq_rel);
      if (op.req) finish(*op.req, Path::kNone, st);
      return st;
    }
  }
  if (peer != rank_ && !p.ready) {  // posted when connected (Engine::ready)
    p.rma_queue.push_back(std::move(op));
    return connect_peer(peer);
  }
  // Nothing queued ahead and room on the send queue: post now, without a trip through the queue.
  if (p.rma_queue.empty() && p.rma_in_flight < Channel::kMaxRma) {
    Result<bool> posted = post_rma(peer, op);
    if (posted.ok() && *posted) return Status::Ok();
    if (!posted.ok()) {  // as a failure from the queue: it stays queued, and progress fails the peer
      p.rma_queue.push_back(std::move(op));
      return posted.status();
    }
  }
  p.rma_queue.push_back(std::move(op));
  return post_rmas(peer);
}

// RMA to oneself: a second QP of ours is the target, so the NIC applies our own atomics with the
// same atomicity as the peers' (a CPU atomic would not be atomic against them).
Status Engine::open_self_rma() {
  const nic::QpCaps caps{.max_send_wr = Channel::kMaxRma + 1, .max_recv_wr = 1, .max_send_sge = 1,
                         .max_recv_sge = 1, .max_inline_data = Channel::kInlineBytes};
  AUGUR_ASSIGN_OR_RETURN(nic::QueuePair a, nic::QueuePair::create_rc(*pd_, *cq_, *cq_, caps));
  AUGUR_ASSIGN_OR_RETURN(nic::QueuePair b, nic::QueuePair::create_rc(*pd_, *cq_, *cq_, caps));
  AUGUR_ASSIGN_OR_RETURN(nic::QpAddress la, a.local_address(*ctx_, connect_opt_, kSelfPsn));
  AUGUR_ASSIGN_OR_RETURN(nic::QpAddress lb, b.local_address(*ctx_, connect_opt_, kSelfPsn + 1));
  AUGUR_RETURN_IF_ERROR(a.connect(*ctx_, connect_opt_, la, lb));
  AUGUR_RETURN_IF_ERROR(b.connect(*ctx_, connect_opt_, lb, la));
  peer_of_qp_[a.qp_num()] = rank_;
  self_qp_ = std::make_unique<nic::QueuePair>(std::move(a));
  self_peer_qp_ = std::make_unique<nic::QueuePair>(std::move(b));
  return Status::Ok();
}

Status Engine::post_rmas(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (peer != rank_ && !p.ready) return Status::Ok();
  while (!p.rma_queue.empty() && p.rma_in_flight < Channel::kMaxRma) {
    AUGUR_ASSIGN_OR_RETURN(bool posted, post_rma(peer, p.rma_queue.front()));
    if (!posted) return Status::Ok();  // an atomic completes first
    p.rma_queue.pop_front();
  }
  return Status::Ok();
}

Result<bool> Engine::post_rma(int peer, RmaStart& op) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  const bool atomic = op.op == RmaOp::kFetchAdd || op.op == RmaOp::kCompareSwap;
  const bool small_get = op.op == RmaOp::kGet && op.len <= kRmaSlotBytes;
  if ((atomic || small_get) && !rma_slots_) {
    constexpr std::size_t kWords = kRmaSlots * kRmaSlotBytes / sizeof(std::uint64_t);
    auto slots = std::make_unique<std::uint64_t[]>(kWords);  // 8-byte aligned, as atomics need
    AUGUR_ASSIGN_OR_RETURN(nic::MemoryRegion mr, nic::MemoryRegion::register_memory(
                                                     *pd_, slots.get(), kWords * sizeof(std::uint64_t), nic::kLocalWrite));
    rma_slots_ = std::move(slots);
    rma_slots_mr_ = std::make_unique<nic::MemoryRegion>(std::move(mr));
    for (std::int32_t w = kRmaSlots - 1; w >= 0; --w) rma_free_slots_.push_back(w);
  }
  if (atomic && rma_free_slots_.empty()) return false;
  const bool slotted = atomic || (small_get && !rma_free_slots_.empty());
  // The in-flight record: a free one again (they stay allocated), else a new one.
  std::uint32_t cookie;
  if (rma_free_.empty()) {
    cookie = static_cast<std::uint32_t>(rma_ops_.size());
    rma_ops_.push_back(std::make_unique<RmaInFlight>());
  } else {
    cookie = rma_free_.back();
    rma_free_.pop_back();
  }
  RmaInFlight& fl = *rma_ops_[cookie];
  auto give_back = [&] {
    if (fl.slot >= 0) rma_free_slots_.push_back(fl.slot);
    fl = RmaInFlight{};
    rma_free_.push_back(cookie);
  };
  if (slotted) {
    fl.slot = rma_free_slots_.back();
    rma_free_slots_.pop_back();
    fl.result = op.local;
    fl.copy = static_cast<std::uint32_t>(atomic ? 8 : op.len);
  }
  std::byte* slot_at =
      slotted ? reinterpret_cast<std::byte*>(rma_slots_.get()) + static_cast<std::size_t>(fl.slot) * kRmaSlotBytes : nullptr;
  nic::Sge sge{reinterpret_cast<std::uintptr_t>(op.local), static_cast<std::uint32_t>(op.len), 0};
  nic::SendRequest wr;
  wr.remote_addr = op.to.addr;
  wr.rkey = op.to.rkey;
  Status st;
  switch (op.op) {
    case RmaOp::kPut: {
      wr.op = nic::SendOp::kRdmaWrite;
      // Small puts go inline: no registration, and the buffer is free once posted.
      wr.inline_data = op.len <= Channel::kInlineBytes;
      if (!wr.inline_data) {
        Result<nic::RegCache::Handle> pin = send_cache_->acquire(op.local, op.len);
        if (!pin.ok()) st = pin.status();
        else fl.pin = std::move(*pin);
        sge.lkey = fl.pin.lkey();
      }
      break;
    }
    case RmaOp::kGet: {
      wr.op = nic::SendOp::kRdmaRead;
      if (slotted) {
        sge = {reinterpret_cast<std::uintptr_t>(slot_at), static_cast<std::uint32_t>(op.len), rma_slots_mr_->lkey()};
        break;
      }
      Result<nic::RegCache::Handle> pin = recv_cache_->acquire(op.local, op.len);
      if (!pin.ok()) st = pin.status();
      else fl.pin = std::move(*pin);
      sge.lkey = fl.pin.lkey();
      break;
    }
    case RmaOp::kFetchAdd:
    case RmaOp::kCompareSwap:
      wr.op = op.op == RmaOp::kFetchAdd ? nic::SendOp::kFetchAdd : nic::SendOp::kCompareSwap;
      wr.compare_add = op.operand;
      wr.swap = op.swap;
      sge = {reinterpret_cast<std::uintptr_t>(slot_at), 8, rma_slots_mr_->lkey()};
      break;
  }
  if (st.ok()) {
    wr.sges = {&sge, 1};
    if (peer == rank_) {
      wr.wr_id = std::uint64_t{Channel::kRmaKind} << 32 | cookie;
      st = self_qp_->post_send(wr);
    } else {
      st = p.ch->post_rma(cookie, wr);
    }
  }
  if (!st.ok()) {
    give_back();
    return st.context("one-sided operation to rank " + std::to_string(peer));
  }
  fl.req = std::move(op.req);
  fl.peer = peer;
  ++p.rma_in_flight;
  return true;
}

Status Engine::on_rma_done(int peer, const nic::Completion& c) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  const auto cookie = static_cast<std::uint32_t>(c.wr_id & 0xffffffffu);
  if (cookie >= rma_ops_.size() || rma_ops_[cookie]->peer < 0) return Status(Code::kInternal, "completion of an unknown RMA");
  RmaInFlight& fl = *rma_ops_[cookie];
  RequestPtr req = std::move(fl.req);
  if (fl.slot >= 0) {
    if (c.ok()) {
      std::memcpy(fl.result, reinterpret_cast<const std::byte*>(rma_slots_.get()) + static_cast<std::size_t>(fl.slot) * kRmaSlotBytes,
                  fl.copy);
    }
    rma_free_slots_.push_back(fl.slot);
  }
  fl = RmaInFlight{};  // the local buffer's pin goes
  rma_free_.push_back(cookie);
  --p.rma_in_flight;
  rma_pending_[static_cast<std::size_t>(peer)].fetch_sub(1, std::memory_order_acq_rel);
  if (!c.ok()) {
    // An access error (a key or range the target never exposed) breaks the connection: the
    // caller fails the peer with this status and everything else in flight to it.
    Status st = c.status().context("one-sided operation on rank " + std::to_string(peer));
    if (req) finish(*req, Path::kNone, st);
    return st;
  }
  if (req) finish(*req, Path::kOneSided);
  return Status::Ok();  // queued operations go at the end of this progress round (progress_once)
}

void Engine::fail_rmas(int peer, const Status& why) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  auto& pending = rma_pending_[static_cast<std::size_t>(peer)];
  for (RmaStart& op : p.rma_queue) {
    pending.fetch_sub(1, std::memory_order_acq_rel);
    if (op.req) finish(*op.req, Path::kNone, why);
  }
  p.rma_queue.clear();
  for (std::size_t cookie = 0; cookie < rma_ops_.size(); ++cookie) {
    RmaInFlight& fl = *rma_ops_[cookie];
    if (fl.peer != peer) continue;
    if (fl.slot >= 0) rma_free_slots_.push_back(fl.slot);
    pending.fetch_sub(1, std::memory_order_acq_rel);
    RequestPtr req = std::move(fl.req);
    fl = RmaInFlight{};
    rma_free_.push_back(static_cast<std::uint32_t>(cookie));
    if (req) finish(*req, Path::kNone, why);
  }
  p.rma_in_flight = 0;
}

}  // namespace augur::host
