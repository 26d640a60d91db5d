#include "augur/host/recv_pool.h"

#include <algorithm>
#include <string>

namespace augur::host {

RecvPool::~RecvPool() = default;

Result<std::unique_ptr<RecvPool>> RecvPool::create(const nic::Context& ctx, const nic::ProtectionDomain& pd,
                                                   const RecvPoolConfig& cfg) {
  if (cfg.slot_bytes == 0 || cfg.chunk_slots == 0) return Status(Code::kInvalidArgument, "empty receive pool");
  if (cfg.peer_window < 1 || cfg.peer_window > cfg.max_window) {
    return Status(Code::kInvalidArgument, "AUGUR_SRQ_PEER_SLOTS must be in [1, AUGUR_SLOTS]");
  }
  if (cfg.max_slots < cfg.chunk_slots) return Status(Code::kInvalidArgument, "AUGUR_SRQ_MAX_SLOTS below AUGUR_SRQ_SLOTS");
  AUGUR_ASSIGN_OR_RETURN(nic::DeviceLimits lim, ctx.limits());
  if (lim.max_srq_wr == 0) return Status(Code::kUnavailable, ctx.name() + " has no shared receive queues");
  std::unique_ptr<RecvPool> p(new RecvPool(cfg, pd));
  // The SRQ is sized for the largest pool at once: growing it (ibv_modify_srq) is optional for
  // a device, the queue's entries are small, and the slots are registered only as needed.
  p->cfg_.max_slots = std::min(cfg.max_slots, lim.max_srq_wr);
  p->cfg_.chunk_slots = std::min(cfg.chunk_slots, p->cfg_.max_slots);
  AUGUR_ASSIGN_OR_RETURN(nic::SharedReceiveQueue srq, nic::SharedReceiveQueue::create(pd, p->cfg_.max_slots));
  p->srq_ = std::make_unique<nic::SharedReceiveQueue>(std::move(srq));
  p->slots_.reserve(p->cfg_.max_slots);
  AUGUR_RETURN_IF_ERROR(p->grow());
  return p;
}

Status RecvPool::grow() {
  const std::uint32_t n = std::min(cfg_.chunk_slots, cfg_.max_slots - slots());
  if (n == 0) return Status(Code::kResourceExhausted, "the eager receive pool is at AUGUR_SRQ_MAX_SLOTS (" +
                                                          std::to_string(cfg_.max_slots) + " slots)");
  Chunk c;
  const std::size_t bytes = std::size_t{n} * cfg_.slot_bytes;
  c.mem = std::make_unique<std::byte[]>(bytes);  // zeroed: a short message never shows old bytes
  AUGUR_ASSIGN_OR_RETURN(nic::MemoryRegion mr, nic::MemoryRegion::register_memory(pd_, c.mem.get(), bytes, nic::kLocalWrite));
  c.mr = std::make_unique<nic::MemoryRegion>(std::move(mr));
  const std::uint32_t first = slots();
  for (std::uint32_t i = 0; i < n; ++i) slots_.push_back({c.mem.get() + std::size_t{i} * cfg_.slot_bytes, c.mr->lkey()});
  chunks_.push_back(std::move(c));
  for (std::uint32_t s = first; s < first + n; ++s) AUGUR_RETURN_IF_ERROR(repost(s));
  unassigned_ += n;
  ++counters_.chunks;
  return Status::Ok();
}

Result<std::uint32_t> RecvPool::admit() {
  if (unassigned_ < cfg_.peer_window && slots() < cfg_.max_slots) AUGUR_RETURN_IF_ERROR(grow());
  const std::uint32_t w = std::min(unassigned_, cfg_.peer_window);
  if (w == 0) {
    return Status(Code::kResourceExhausted, "no eager receive slot left for another peer (AUGUR_SRQ_MAX_SLOTS = " +
                                                std::to_string(cfg_.max_slots) + ")");
  }
  unassigned_ -= w;
  return w;
}

std::uint32_t RecvPool::regrant(std::uint32_t window) noexcept {
  if (unassigned_ > cfg_.peer_window && window < cfg_.max_window) {
    --unassigned_;
    ++counters_.windows_grown;
    return 2;
  }
  if (unassigned_ < cfg_.peer_window && window > cfg_.peer_window) {
    ++unassigned_;
    ++counters_.windows_shrunk;
    return 0;
  }
  return 1;
}

Status RecvPool::repost(std::uint32_t slot) {
  if (!valid(slot)) return Status(Code::kInvalidArgument, "receive pool slot " + std::to_string(slot));
  const nic::Sge sge{reinterpret_cast<std::uintptr_t>(slots_[slot].addr), cfg_.slot_bytes, slots_[slot].lkey};
  return srq_->post_recv(kRecvKind << 32 | slot, {&sge, 1});
}

}  // namespace augur::host
