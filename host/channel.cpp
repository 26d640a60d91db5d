#include "augur/host/channel.h"
#include "augur/compiler.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <random>
#include <string>

namespace augur::host {

namespace {
// wr_id = kind << 32 | slot: one CQ serves every channel, the QP number tells channels apart.
constexpr std::uint64_t kRecv = RecvPool::kRecvKind;
constexpr std::uint64_t kSend = 2;
constexpr std::uint64_t kCredit = 3;
std::uint64_t wr(std::uint64_t kind, std::uint32_t slot) { return kind << 32 | slot; }
}  // namespace

Channel::Channel(const ChannelConfig& cfg, const nic::Context& ctx, nic::CompletionQueue& cq, RecvPool& pool)
    : cfg_(cfg), ctx_(ctx), cq_(cq), pool_(pool), slot_bytes_(cfg.eager_limit + static_cast<std::uint32_t>(sizeof(proto::MsgHeader))) {
  std::random_device rd;
  psn_ = rd() & 0xffffff;
}

// The window's slots that hold no message of the peer go back to the unassigned ones (those that
// do are the owner's until it gives them back to the pool).
Channel::~Channel() { pool_.retire(static_cast<std::uint32_t>(granted_ - std::min(granted_, consumed_))); }

Result<std::unique_ptr<Channel>> Channel::create(const nic::Context& ctx, const nic::ProtectionDomain& pd,
                                                 nic::CompletionQueue& cq, RecvPool& pool, const ChannelConfig& cfg,
                                                 const nic::ConnectOptions& connect) {
  if (cfg.slots < 2 || cfg.slots > 32767) return Status(Code::kInvalidArgument, "channel slots must be in [2, 32767]");
  if (cfg.eager_limit < 64 || cfg.eager_limit > (1u << 20)) {
    return Status(Code::kInvalidArgument, "eager limit must be in [64, 1 MiB]");
  }
  if (cfg.credit_slots < 1 || cfg.credit_slots > proto::kMaxCreditSlots) {
    return Status(Code::kInvalidArgument, "credit slots must be in [1, 255]");
  }
  if (pool.slot_bytes() != cfg.eager_limit + sizeof(proto::MsgHeader) || pool.max_window() > cfg.slots) {
    return Status(Code::kInvalidArgument, "receive pool slots differ from the channel's");
  }
  AUGUR_ASSIGN_OR_RETURN(std::uint32_t window, pool.admit());
  std::unique_ptr<Channel> ch(new Channel(cfg, ctx, cq, pool));
  ch->granted_ = ch->granted_written_ = ch->first_window_ = window;
  ch->connect_ = connect;
  const std::size_t ring = std::size_t{cfg.slots} * ch->slot_bytes_;
  ch->released_.reserve(cfg.slots);  // no allocation on the receive path
  ch->send_ring_.resize(ring);
  ch->words_ = std::make_unique<std::uint64_t[]>(2);
  ch->credit_table_ = std::make_unique<proto::CreditEntry[]>(cfg.credit_slots);  // zero: every slot free
  AUGUR_ASSIGN_OR_RETURN(nic::MemoryRegion smr, nic::MemoryRegion::register_memory(pd, ch->send_ring_.data(), ring, 0));
  AUGUR_ASSIGN_OR_RETURN(nic::MemoryRegion wmr,
                         nic::MemoryRegion::register_memory(pd, ch->words_.get(), 2 * sizeof(std::uint64_t), nic::kRemoteWrite));
  ch->send_mr_ = std::make_unique<nic::MemoryRegion>(std::move(smr));
  ch->words_mr_ = std::make_unique<nic::MemoryRegion>(std::move(wmr));
  AUGUR_ASSIGN_OR_RETURN(nic::MemoryRegion tmr,
                         nic::MemoryRegion::register_memory(pd, ch->credit_table_.get(),
                                                            cfg.credit_slots * sizeof(proto::CreditEntry), nic::kRemoteWrite));
  ch->table_mr_ = std::make_unique<nic::MemoryRegion>(std::move(tmr));
  nic::QpCaps caps;
  caps.max_send_wr = 2 * cfg.slots + 8 + Channel::kMaxReads + Channel::kMaxRma;  // data sends, credit writes, reads, RMA
  // Credit words and entries go inline (their source may change right after posting); small
  // messages too, which saves the device a DMA read.
  caps.max_inline_data = kInlineBytes;
  // Rendezvous READs scatter into non-contiguous receive layouts.
  AUGUR_ASSIGN_OR_RETURN(nic::DeviceLimits lim, ctx.limits());
  ch->max_sge_ = std::clamp<std::uint32_t>(lim.max_sge, 1, kMaxSge);
  caps.max_send_sge = ch->max_sge_;
  AUGUR_ASSIGN_OR_RETURN(nic::QueuePair qp, nic::QueuePair::create_rc(pd, cq, cq, caps, &pool.srq()));
  ch->qp_ = std::make_unique<nic::QueuePair>(std::move(qp));
  return ch;
}

Result<Channel::Address> Channel::address() const {
  Address a;
  AUGUR_ASSIGN_OR_RETURN(a.qp, qp_->local_address(ctx_, connect_, psn_));
  a.credit_word.addr = reinterpret_cast<std::uintptr_t>(&words_[0]);
  a.credit_word.rkey = words_mr_->rkey();
  a.credit_word.length = sizeof(std::uint64_t);
  a.credit_table.addr = reinterpret_cast<std::uintptr_t>(credit_table_.get());
  a.credit_table.rkey = table_mr_->rkey();
  a.credit_table.length = cfg_.credit_slots * sizeof(proto::CreditEntry);
  a.window = first_window_;
  return a;
}

Status Channel::connect(const Address& peer) {
  if (peer.credit_word.length != sizeof(std::uint64_t)) return Status(Code::kProtocol, "peer's credit word has the wrong size");
  AUGUR_ASSIGN_OR_RETURN(nic::QpAddress local, qp_->local_address(ctx_, connect_, psn_));
  if (peer.credit_table.length != cfg_.credit_slots * sizeof(proto::CreditEntry)) {
    return Status(Code::kProtocol, "peer's credit table has a different number of slots (AUGUR_CREDITS differs?)");
  }
  if (peer.window < 1 || peer.window > cfg_.slots) {
    return Status(Code::kProtocol, "peer's first window of " + std::to_string(peer.window) + " slots is outside [1, " +
                                       std::to_string(cfg_.slots) + "] (AUGUR_SLOTS differs?)");
  }
  peer_word_ = peer.credit_word;
  peer_table_ = peer.credit_table;
  peer_granted_ = peer.window;
  // Our receives are in the pool already: the peer may send as soon as the QP is ready.
  return qp_->connect(ctx_, connect_, local, peer.qp).context("channel to rank " + std::to_string(cfg_.peer_rank));
}

std::uint32_t Channel::qp_num() const noexcept { return qp_->qp_num(); }

std::uint64_t Channel::peer_grant() const noexcept {
  // Written by the peer's NIC: an aligned 8-byte store, read atomically here.
  return std::max(peer_granted_, std::atomic_ref<std::uint64_t>(words_[0]).load(std::memory_order_acquire));
}

std::uint32_t Channel::credits() const noexcept {
  const std::uint64_t granted = peer_grant();
  if (granted <= sent_) return 0;
  // Never more than `slots` in flight, whatever the peer writes: our send ring holds that many.
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(granted - sent_, cfg_.slots));
}

Result<bool> Channel::send_slot(std::uint32_t len, std::span<const std::byte> tail) {
  const auto slot = static_cast<std::uint32_t>(sent_ % cfg_.slots);
  const nic::Sge sges[2] = {
      {reinterpret_cast<std::uintptr_t>(send_ring_.data()) + std::size_t{slot} * slot_bytes_, len, send_mr_->lkey()},
      {reinterpret_cast<std::uintptr_t>(tail.data()), static_cast<std::uint32_t>(tail.size()), 0}};
  const auto total = len + tail.size();
  AUGUR_RETURN_IF_ERROR(qp_->post_send({.wr_id = wr(kSend, slot),
                                        .op = nic::SendOp::kSend,
                                        .sges = {sges, tail.empty() ? 1u : 2u},
                                        .inline_data = total <= kInlineBytes}));
  ++sent_;
  ++outstanding_sends_;
  return true;
}

template <typename Fill>
Result<bool> Channel::send_filled(proto::MsgType type, std::uint32_t context, std::int32_t tag, std::uint32_t length,
                                  std::size_t body_bytes, const Fill& fill, std::span<const std::byte> inline_body) {
  if (tag < 0 && type != proto::MsgType::kFin) return Status(Code::kInvalidArgument, "negative tag");
  if (body_bytes > cfg_.eager_limit) {
    return Status(Code::kInvalidArgument, std::to_string(body_bytes) + " bytes exceed the eager limit");
  }
  if (credits() == 0 || outstanding_sends_ >= cfg_.slots) {
    ++counters_.credit_stalls;
    return false;
  }
  proto::MsgHeader h;
  h.type = type;
  h.src = cfg_.my_rank;
  h.context = context;
  h.tag = tag;
  h.seq = next_seq_out_;
  h.length = length;
  h.credits = static_cast<std::uint16_t>(granted_ & 0xffff);  // piggyback: no credit write needed
  granted_written_ = granted_;
  std::byte* slot = next_send_slot();
  const auto header_bytes = static_cast<std::uint32_t>(
      proto::encode_msg_header(h, std::span<std::byte, sizeof(proto::MsgHeader)>(slot, sizeof(proto::MsgHeader))));
  std::uint32_t hb = header_bytes;
  // Queued arm words ride along when the slot has room for them.
  if (const std::size_t ab = proto::arm_block_bytes(queued_.count); ab > 0 && hb + ab + body_bytes <= slot_bytes_) {
    proto::encode_arms(slot, queued_, slot + hb);
    hb += static_cast<std::uint32_t>(ab);
    counters_.arms_carried += queued_.count;
    queued_ = {};
    // The body no longer fits inline with the longer head: copy it into the slot instead.
    if (!inline_body.empty() && hb + inline_body.size() > kInlineBytes) inline_body = {};
  }
  Result<bool> posted = false;
  if (inline_body.empty()) {
    fill(slot + hb);
    posted = send_slot(static_cast<std::uint32_t>(hb + body_bytes));
  } else {
    posted = send_slot(hb, inline_body);
  }
  AUGUR_ASSIGN_OR_RETURN(bool ok, std::move(posted));
  ++next_seq_out_;
  ++counters_.sent;
  counters_.bytes_sent += body_bytes;
  if (header_bytes < sizeof(proto::MsgHeader)) ++counters_.short_headers;
  return ok;
}

Result<bool> Channel::try_send(proto::MsgType type, std::uint32_t context, std::int32_t tag, std::uint32_t length,
                              std::span<const std::byte> body) {
  // Small enough to go inline: header from the slot, body straight from the caller's buffer
  // (the driver copies both at post time), one copy instead of two.
  const bool inline_body =
      !body.empty() && proto::msg_header_bytes(type, context, tag) + body.size() <= kInlineBytes && max_sge_ >= 2;
  return send_filled(
      type, context, tag, length, body.size(),
      [&](std::byte* out) {
        if (!body.empty()) std::memcpy(out, body.data(), body.size());
      },
      inline_body ? body : std::span<const std::byte>{});
}

Result<bool> Channel::try_send_gather(std::uint32_t context, std::int32_t tag, std::uint32_t length,
                                      const relations::Layout& from) {
  return send_filled(proto::MsgType::kEager, context, tag, length, length,
                     [&](std::byte* out) { relations::GatherRuns(from, out, length); });
}

std::byte* Channel::next_send_slot() { return send_ring_.data() + (sent_ % cfg_.slots) * slot_bytes_; }

Result<bool> Channel::post_credit_write(std::span<const std::byte> bytes, std::uint64_t remote_addr) {
  if (outstanding_credit_writes_ >= cfg_.slots) return false;
  nic::Sge sge{reinterpret_cast<std::uintptr_t>(bytes.data()), static_cast<std::uint32_t>(bytes.size()), 0};
  AUGUR_RETURN_IF_ERROR(qp_->post_send({.wr_id = wr(kCredit, 1),
                                        .op = nic::SendOp::kRdmaWrite,
                                        .sges = {&sge, 1},
                                        .remote_addr = remote_addr,
                                        .rkey = peer_table_.rkey,
                                        .inline_data = true}));  // inline: the source is on our stack
  ++outstanding_credit_writes_;
  return true;
}

Result<bool> Channel::write_credit(std::uint32_t slot, const proto::CreditEntry& e) {
  if (slot >= cfg_.credit_slots) return Status(Code::kInvalidArgument, "credit slot " + std::to_string(slot));
  unqueue_arm(slot);  // the entry carries its own arm word
  std::array<std::byte, sizeof(proto::CreditEntry)> bytes{};
  proto::encode(e, bytes);
  return post_credit_write(bytes, peer_table_.addr + std::uint64_t{slot} * sizeof(proto::CreditEntry));
}

Result<bool> Channel::post_arm_write(std::uint32_t slot, std::uint64_t raw) {
  return post_credit_write({reinterpret_cast<const std::byte*>(&raw), sizeof(raw)},
                           peer_table_.addr + std::uint64_t{slot} * sizeof(proto::CreditEntry) + proto::kCreditArmOffset);
}

Result<bool> Channel::write_arm(std::uint32_t slot, const proto::CreditArm& a) {
  if (slot >= cfg_.credit_slots) return Status(Code::kInvalidArgument, "credit slot " + std::to_string(slot));
  unqueue_arm(slot);  // this write supersedes it
  return post_arm_write(slot, proto::encode_arm(a));
}

void Channel::unqueue_arm(std::uint32_t slot) noexcept {
  for (std::uint32_t k = 0; k < queued_.count; ++k) {
    if (queued_.slot[k] != slot) continue;
    for (std::uint32_t j = k + 1; j < queued_.count; ++j) {
      queued_.slot[j - 1] = queued_.slot[j];
      queued_.word[j - 1] = queued_.word[j];
    }
    --queued_.count;
    queued_.slot[queued_.count] = 0;
    return;
  }
}

Result<bool> Channel::queue_arm(std::uint32_t slot, const proto::CreditArm& a) {
  if (slot >= cfg_.credit_slots) return Status(Code::kInvalidArgument, "credit slot " + std::to_string(slot));
  unqueue_arm(slot);  // a later issue of the slot replaces the earlier one
  if (queued_.count == proto::kMaxCarriedArms) AUGUR_RETURN_IF_ERROR(write_queued_arms());
  queued_.slot[queued_.count] = static_cast<std::uint8_t>(slot);
  queued_.word[queued_.count] = proto::encode_arm(a);
  ++queued_.count;
  return true;
}

Status Channel::write_queued_arms() {
  while (queued_.count > 0) {
    const std::uint32_t k = queued_.count - 1;
    AUGUR_ASSIGN_OR_RETURN(bool written, post_arm_write(queued_.slot[k], queued_.word[k]));
    if (!written) return Status::Ok();  // send queue full: the next message or flush takes them
    ++counters_.arms_written;
    queued_.slot[k] = 0;
    --queued_.count;
  }
  return Status::Ok();
}

Status Channel::apply_arms(const proto::CarriedArms& arms) {
  for (std::uint32_t k = 0; k < arms.count; ++k) {
    if (arms.slot[k] >= cfg_.credit_slots) {
      return Status(Code::kProtocol, "malformed message header from peer: arm word for credit slot " +
                                         std::to_string(arms.slot[k]) + " of " + std::to_string(cfg_.credit_slots));
    }
  }
  for (std::uint32_t k = 0; k < arms.count; ++k) {
    std::atomic_ref<std::uint64_t> word(credit_table_[arms.slot[k]].arm);
    // An RDMA write of the slot posted after this message may have landed first (the NIC
    // places it, we apply this one only now): never go back to an earlier generation.
    Result<proto::CreditArm> now = proto::parse_arm(word.load(std::memory_order_acquire));
    Result<proto::CreditArm> carried = proto::parse_arm(arms.word[k]);  // parse_message checked it
    // kFree is only the zeroed table's word: the receiver never writes it.
    if (now.ok() && now->state != proto::CreditState::kFree &&
        ((carried->generation - now->generation) & 0xffffff) >= 0x800000) {
      ++counters_.arms_stale;
      continue;
    }
    word.store(arms.word[k], std::memory_order_release);
    ++counters_.arms_applied;
  }
  return Status::Ok();
}

std::optional<Channel::Credit> Channel::armed_credit(std::uint32_t slot) const {
  if (slot >= cfg_.credit_slots) return std::nullopt;
  proto::CreditEntry& e = credit_table_[slot];
  // The peer's NIC writes the entry with the arm word last; equal arm words before and after
  // reading the fields mean the fields belong to that arm (the generation changes every issue).
  const std::uint64_t before = std::atomic_ref<std::uint64_t>(e.arm).load(std::memory_order_acquire);
  // The state is the first byte in memory: most slots are free, so look before parsing.
  if (const auto state = std::to_integer<std::uint8_t>(reinterpret_cast<const std::byte*>(&before)[0]);
      state != static_cast<std::uint8_t>(proto::CreditState::kArmed) &&
      state != static_cast<std::uint8_t>(proto::CreditState::kLanding)) {
    return std::nullopt;
  }
  Result<proto::CreditArm> arm = proto::parse_arm(before);
  if (!arm.ok() || (arm->state != proto::CreditState::kArmed && arm->state != proto::CreditState::kLanding)) {
    return std::nullopt;
  }
  std::array<std::byte, proto::kCreditArmOffset> fields{};
  std::memcpy(fields.data(), &e, fields.size());
#if defined(__SANITIZE_THREAD__)
  std::atomic_signal_fence(std::memory_order_seq_cst);  // TSan has no fences; only the NIC writes here
#else
  std::atomic_thread_fence(std::memory_order_acquire);
#endif
  if (std::atomic_ref<std::uint64_t>(e.arm).load(std::memory_order_relaxed) != before) return std::nullopt;
  Result<proto::CreditEntry> parsed = proto::parse_credit_entry(fields);
  if (!parsed.ok()) return std::nullopt;  // malformed: never used, the receive falls back to bounce
  return Credit{parsed.value(), arm.value(), before};
}

template <typename Fill>
Result<bool> Channel::send_direct_filled(std::uint32_t slot, const proto::CreditEntry& e, std::uint32_t len, const Fill& fill,
                                         std::span<const std::byte> inline_body) {
  if (slot >= cfg_.credit_slots) return Status(Code::kInvalidArgument, "credit slot " + std::to_string(slot));
  if (len > cfg_.eager_limit || len > e.capacity) {
    return Status(Code::kInvalidArgument, "direct message larger than its credit or the eager limit");
  }
  if (credits() == 0 || outstanding_sends_ >= cfg_.slots) {  // the write consumes one of the peer's receives
    ++counters_.credit_stalls;
    return false;
  }
  const auto ring_slot = static_cast<std::uint32_t>(sent_ % cfg_.slots);
  const std::byte* src = inline_body.data();
  if (inline_body.empty()) {
    std::byte* to = next_send_slot();
    fill(to);
    src = to;
  }
  nic::Sge sge{reinterpret_cast<std::uintptr_t>(src), len, send_mr_->lkey()};
  AUGUR_RETURN_IF_ERROR(qp_->post_send({.wr_id = wr(kSend, ring_slot),
                                        .op = nic::SendOp::kRdmaWriteWithImm,
                                        .sges = {&sge, len > 0 ? 1u : 0u},
                                        .remote_addr = e.addr,
                                        .rkey = e.rkey,
                                        .imm = proto::direct_imm(slot, len),
                                        .inline_data = len <= kInlineBytes}));
  ++sent_;
  ++outstanding_sends_;
  ++next_seq_out_;
  ++counters_.sent;
  counters_.bytes_sent += len;
  return true;
}

Result<bool> Channel::try_send_direct(std::uint32_t slot, const proto::CreditEntry& e, std::span<const std::byte> payload) {
  if (payload.size() > cfg_.eager_limit) {
    return Status(Code::kInvalidArgument, "direct message larger than its credit or the eager limit");
  }
  const auto len = static_cast<std::uint32_t>(payload.size());
  return send_direct_filled(
      slot, e, len,
      [&](std::byte* out) {
        if (len > 0) std::memcpy(out, payload.data(), len);
      },
      len > 0 && len <= kInlineBytes ? payload : std::span<const std::byte>{});  // inline: from the caller's buffer
}

Result<bool> Channel::try_send_direct_gather(std::uint32_t slot, const proto::CreditEntry& e, std::uint32_t length,
                                             const relations::Layout& from) {
  return send_direct_filled(slot, e, length, [&](std::byte* out) { relations::GatherRuns(from, out, length); });
}

Result<bool> Channel::try_write_direct(std::uint32_t slot, const proto::CreditEntry& e, const nic::Sge& from,
                                       std::uint32_t cookie) {
  if (slot >= cfg_.credit_slots) return Status(Code::kInvalidArgument, "credit slot " + std::to_string(slot));
  if (from.length > e.capacity || from.length > proto::kMaxDirectBytes) {
    return Status(Code::kInvalidArgument, "direct write larger than its credit");
  }
  if (credits() == 0 || outstanding_sends_ >= cfg_.slots) {  // the write consumes one of the peer's receives
    ++counters_.credit_stalls;
    return false;
  }
  AUGUR_RETURN_IF_ERROR(qp_->post_send({.wr_id = wr(kWriteKind, cookie),
                                        .op = nic::SendOp::kRdmaWriteWithImm,
                                        .sges = {&from, from.length > 0 ? 1u : 0u},
                                        .remote_addr = e.addr,
                                        .rkey = e.rkey,
                                        .imm = proto::direct_imm(slot, from.length)}));
  ++sent_;
  ++outstanding_sends_;
  ++next_seq_out_;
  ++counters_.sent;
  counters_.bytes_sent += from.length;
  return true;
}

Status Channel::post_read(std::uint32_t cookie, const nic::Sge& local, std::uint64_t remote_addr, std::uint32_t rkey) {
  return qp_->post_send({.wr_id = wr(kReadKind, cookie),
                         .op = nic::SendOp::kRdmaRead,
                         .sges = {&local, 1},
                         .remote_addr = remote_addr,
                         .rkey = rkey});
}

Status Channel::post_read(std::uint32_t cookie, std::span<const nic::Sge> local, std::uint64_t remote_addr,
                          std::uint32_t rkey, std::uint64_t kind) {
  if (local.empty() || local.size() > max_sge_) {
    return Status(Code::kInvalidArgument, "READ with " + std::to_string(local.size()) + " scatter entries");
  }
  return qp_->post_send({.wr_id = wr(kind, cookie), .op = nic::SendOp::kRdmaRead, .sges = local,
                         .remote_addr = remote_addr, .rkey = rkey});
}

Status Channel::post_rma(std::uint32_t cookie, nic::SendRequest w) {
  w.wr_id = wr(kRmaKind, cookie);
  return qp_->post_send(w);
}

Result<bool> Channel::try_send_raw_for_test(std::span<const std::byte> bytes) {
  if (credits() == 0) return false;
  return try_send_ungranted_for_test(bytes);
}

Result<bool> Channel::try_send_ungranted_for_test(std::span<const std::byte> bytes) {
  if (bytes.size() > slot_bytes_) return Status(Code::kInvalidArgument, "raw message larger than a slot");
  if (outstanding_sends_ >= cfg_.slots) return false;
  std::memcpy(send_ring_.data() + (sent_ % cfg_.slots) * slot_bytes_, bytes.data(), bytes.size());
  return send_slot(static_cast<std::uint32_t>(bytes.size()));
}

AUGUR_HOT_PATH Result<std::optional<Arrival>> Channel::on_completion(const nic::Completion& c) {
  const std::uint64_t kind = c.wr_id >> 32;
  const auto slot = static_cast<std::uint32_t>(c.wr_id & 0xffffffffu);
  if (!c.ok()) {
    // A receive that a broken message took goes back to the pool: the SRQ serves other peers.
    if (kind == kRecv && pool_.valid(slot)) (void)pool_.repost(slot);
    return c.status().context("channel to rank " + std::to_string(cfg_.peer_rank));
  }
  if (kind == kSend || kind == kWriteKind) {
    --outstanding_sends_;
    return std::optional<Arrival>{};
  }
  if (kind == kCredit) {
    --outstanding_credit_writes_;
    return std::optional<Arrival>{};
  }
  if (kind != kRecv || !pool_.valid(slot)) return Status(Code::kInternal, "completion with a foreign wr_id");
  if (++consumed_ > granted_) [[unlikely]] {
    // Beyond its grant the peer took a slot of another peer's window: nothing it sent is trusted.
    ++counters_.rejected;
    AUGUR_RETURN_IF_ERROR(pool_.repost(slot));
    return Status(Code::kProtocol, "malformed traffic from rank " + std::to_string(cfg_.peer_rank) + ": message " +
                                       std::to_string(consumed_) + " beyond the " + std::to_string(granted_) +
                                       " granted");
  }
  if (c.opcode == nic::WcOpcode::kRecvRdmaWithImm) {
    // A direct write: the data is already in the credited buffer; the receive slot only
    // carried the immediate. The engine checks the slot and length against its credits.
    proto::MsgHeader h;
    h.type = proto::MsgType::kDirect;
    h.src = cfg_.peer_rank;
    h.context = proto::direct_imm_slot(c.imm);
    h.seq = next_seq_in_++;
    h.length = proto::direct_imm_length(c.imm);
    ++counters_.received;
    counters_.bytes_received += h.length;
    return std::optional<Arrival>(Arrival{h, {}, slot});
  }
  const std::span<const std::byte> bytes = pool_.bytes(slot, std::min(c.byte_len, slot_bytes_));
  const proto::MsgExpect expect{cfg_.peer_rank, next_seq_in_, slot_bytes_};
  Result<proto::Message> m = proto::parse_message(bytes, expect);
  if (m.ok()) {
    // The peer's grant, widened from 16 bits against what we knew (it only grows); a grant of
    // more than a whole window beyond what we sent is a lie.
    const std::uint64_t known = peer_grant();
    const auto ahead = static_cast<std::int16_t>(static_cast<std::uint16_t>(m->header.credits - (known & 0xffff)));
    if (ahead > 0 && known + static_cast<std::uint64_t>(ahead) > sent_ + cfg_.slots) {
      m = Status(Code::kProtocol, "malformed message header from peer: grants " + std::to_string(ahead) +
                                      " slots, more than a window");
    } else if (ahead > 0) {
      peer_granted_ = known + static_cast<std::uint64_t>(ahead);
    }
    if (m.ok() && m->arms.count > 0) [[unlikely]] {
      if (Status st = apply_arms(m->arms); !st.ok()) m = st;
    }
  }
  if (!m.ok()) {
    ++counters_.rejected;
    AUGUR_RETURN_IF_ERROR(release(slot));  // the slot is reused; nothing was delivered or written
    return m.status().context("from rank " + std::to_string(cfg_.peer_rank));
  }
  ++next_seq_in_;
  ++counters_.received;
  counters_.bytes_received += m->header.length;
  return std::optional<Arrival>(Arrival{m->header, m->body, slot});
}

Status Channel::release(std::uint32_t slot) {
  if (!pool_.valid(slot)) return Status(Code::kInvalidArgument, "slot " + std::to_string(slot));
  AUGUR_RETURN_IF_ERROR(pool_.repost(slot));
  granted_ += pool_.regrant(window());
  ++freed_;
  // Batch grants: a quarter window at a time; flush_credits() covers the rest when idle.
  if (granted_ - granted_written_ >= std::max<std::uint32_t>(1, window() / 4)) return write_credits();
  return Status::Ok();
}

bool Channel::release_later(std::uint32_t slot) {
  released_.push_back(slot);
  return released_.size() == 1;
}

Result<bool> Channel::repost_released() {
  if (released_.empty()) return false;
  for (std::uint32_t slot : released_) {
    if (Status st = release(slot); !st.ok()) {
      released_.clear();
      return st;
    }
  }
  released_.clear();
  return true;
}

Status Channel::flush_credits() {
  if (queued_.count > 0) AUGUR_RETURN_IF_ERROR(write_queued_arms());
  if (granted_ == granted_written_) return Status::Ok();
  // A sender stalls only once it has used the whole grant it heard: while more than half a
  // window of it is left nobody can be waiting, and the grant rides on our next header (or the
  // quarter-window batch) for free. Direct writes carry no header, so without this rule a
  // ping-pong through credits would pay one write per message.
  const std::uint32_t w = window();
  if (granted_written_ - std::min(consumed_, granted_written_) > w - std::max<std::uint32_t>(1, w / 2)) {
    return Status::Ok();
  }
  return write_credits();
}

Status Channel::write_credits() {
  if (outstanding_credit_writes_ >= cfg_.slots) return Status::Ok();  // send queue full: flushed later
  words_[1] = granted_;
  nic::Sge sge{reinterpret_cast<std::uintptr_t>(&words_[1]), sizeof(std::uint64_t), words_mr_->lkey()};
  AUGUR_RETURN_IF_ERROR(qp_->post_send({.wr_id = wr(kCredit, 0),
                                        .op = nic::SendOp::kRdmaWrite,
                                        .sges = {&sge, 1},
                                        .remote_addr = peer_word_.addr,
                                        .rkey = peer_word_.rkey,
                                        .inline_data = true}));
  granted_written_ = granted_;
  ++outstanding_credit_writes_;
  ++counters_.credit_writes;
  return Status::Ok();
}

}  // namespace augur::host
