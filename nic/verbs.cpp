#include "augur/nic/verbs.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "augur/nic/wire.h"
#include "loopback.h"

namespace augur::nic {

namespace {
std::atomic<std::uint64_t> g_pinned_bytes{0};
std::atomic<std::uint64_t> g_pinned_regions{0};
std::atomic<std::uint64_t> g_pinned_peak{0};

void count_registered(std::size_t length) noexcept {
  const std::uint64_t now = g_pinned_bytes.fetch_add(length, std::memory_order_relaxed) + length;
  g_pinned_regions.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t peak = g_pinned_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_pinned_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}
}  // namespace

PinnedCounters pinned_counters() noexcept {
  return {g_pinned_bytes.load(std::memory_order_relaxed), g_pinned_regions.load(std::memory_order_relaxed),
          g_pinned_peak.load(std::memory_order_relaxed)};
}

namespace detail {
void ContextDeleter::operator()(ibv_context* p) const noexcept { ibv_close_device(p); }
void PdDeleter::operator()(ibv_pd* p) const noexcept { ibv_dealloc_pd(p); }
void ChannelDeleter::operator()(ibv_comp_channel* p) const noexcept { ibv_destroy_comp_channel(p); }
void CqDeleter::operator()(ibv_cq* p) const noexcept { ibv_destroy_cq(p); }
void QpDeleter::operator()(ibv_qp* p) const noexcept { ibv_destroy_qp(p); }
void MrDeleter::operator()(ibv_mr* p) const noexcept {
  g_pinned_bytes.fetch_sub(p->length, std::memory_order_relaxed);
  g_pinned_regions.fetch_sub(1, std::memory_order_relaxed);
  ibv_dereg_mr(p);
}
void LoopMrDeleter::operator()(loop::Mr* p) const noexcept { loop::deregister(p); }
void LoopChannelDeleter::operator()(loop::Channel* p) const noexcept { loop::destroy(p); }
void LoopCqDeleter::operator()(loop::Cq* p) const noexcept { loop::destroy(p); }
void LoopQpDeleter::operator()(loop::Qp* p) const noexcept { loop::destroy(p); }
void LoopSrqDeleter::operator()(loop::Srq* p) const noexcept { loop::destroy(p); }
void SrqDeleter::operator()(ibv_srq* p) const noexcept { ibv_destroy_srq(p); }
}  // namespace detail

namespace {

// Verbs calls return an errno value directly (ibv_modify_qp, ibv_post_*), or fail with errno set.
Status verbs_error(int rc, const char* what) { return errno_status(rc > 0 ? rc : errno, what); }

constexpr const char* kNoDeviceHint =
    "(run under scripts/softroce, or load rdma_rxe and 'rdma link add rxe0 type rxe netdev <if>')";

// ibv_get_device_list fails with ENOSYS when the kernel has no verbs support at all.
Status device_list_error(int err) {
  if (err == ENOSYS) return {Code::kNotFound, std::string("no RDMA support in this kernel ") + kNoDeviceHint};
  return errno_status(err, "ibv_get_device_list");
}

struct DeviceList {
  ibv_device** list = nullptr;
  int n = 0;
  DeviceList() { list = ibv_get_device_list(&n); }
  ~DeviceList() {
    if (list) ibv_free_device_list(list);
  }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
};

}  // namespace

Status wc_status_to_status(int wc_status, std::uint32_t vendor_err) {
  if (wc_status == IBV_WC_SUCCESS) return Status::Ok();
  Code code = Code::kIo;
  switch (static_cast<ibv_wc_status>(wc_status)) {
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
      code = Code::kPeerFailure;  // the peer stopped answering
      break;
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
      code = Code::kTruncated;  // message longer than the posted buffer
      break;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_MW_BIND_ERR:
      code = Code::kInvalidArgument;  // bad lkey/rkey or range
      break;
    case IBV_WC_WR_FLUSH_ERR:
      code = Code::kUnavailable;  // the QP went to error; later work is flushed
      break;
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_BAD_RESP_ERR:
    case IBV_WC_FATAL_ERR:
    case IBV_WC_RESP_TIMEOUT_ERR:
    case IBV_WC_GENERAL_ERR:
      code = Code::kPeerFailure;
      break;
    default:
      break;
  }
  char msg[160];
  std::snprintf(msg, sizeof msg, "completion error: %s (wc status %d, vendor error 0x%x)",
                ibv_wc_status_str(static_cast<ibv_wc_status>(wc_status)), wc_status, vendor_err);
  return {code, msg};
}

Status Completion::status() const { return wc_status_to_status(wc_status, vendor_err); }

bool Gid::is_zero() const noexcept {
  return std::all_of(raw.begin(), raw.end(), [](std::uint8_t b) { return b == 0; });
}

std::string Gid::to_string() const {
  std::string s;
  char buf[8];
  for (std::size_t i = 0; i < raw.size(); i += 2) {
    std::snprintf(buf, sizeof buf, "%s%02x%02x", i ? ":" : "", raw[i], raw[i + 1]);
    s += buf;
  }
  return s;
}

Result<std::vector<std::string>> list_devices() {
  DeviceList devs;
  if (devs.list == nullptr) return device_list_error(errno);
  std::vector<std::string> names;
  for (int i = 0; i < devs.n; ++i) names.emplace_back(ibv_get_device_name(devs.list[i]));
  return names;
}

Result<Context> Context::open(std::string_view name) {
  if (name == loop::kDeviceName) return Context(nullptr, std::string(name));
  DeviceList devs;
  if (devs.list == nullptr) return device_list_error(errno);
  if (devs.n == 0) return Status(Code::kNotFound, std::string("no RDMA device on this host ") + kNoDeviceHint);
  for (int i = 0; i < devs.n; ++i) {
    std::string dev_name = ibv_get_device_name(devs.list[i]);
    if (!name.empty() && dev_name != name) continue;
    ibv_context* ctx = ibv_open_device(devs.list[i]);
    if (ctx == nullptr) return errno_status(errno, "ibv_open_device(" + dev_name + ")");
    return Context(ctx, std::move(dev_name));
  }
  std::string known;
  for (int i = 0; i < devs.n; ++i) known += std::string(i ? ", " : "") + ibv_get_device_name(devs.list[i]);
  return Status(Code::kNotFound, "RDMA device '" + std::string(name) + "' not found (have: " + known + ")");
}

Result<PortAttr> Context::query_port(std::uint8_t port) const {
  if (loopback()) return loop::port_attr(port);
  ibv_port_attr attr{};
  if (int rc = ibv_query_port(ctx_.get(), port, &attr); rc != 0) return verbs_error(rc, "ibv_query_port");
  PortAttr out;
  out.port = port;
  out.link_layer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? LinkLayer::kEthernet : LinkLayer::kInfiniBand;
  out.active = attr.state == IBV_PORT_ACTIVE;
  out.lid = attr.lid;
  out.active_mtu = static_cast<std::uint8_t>(attr.active_mtu);
  out.active_mtu_bytes = 128u << static_cast<unsigned>(attr.active_mtu);
  return out;
}

Result<DeviceLimits> Context::limits() const {
  if (loopback()) return loop::limits();
  ibv_device_attr attr{};
  if (int rc = ibv_query_device(ctx_.get(), &attr); rc != 0) return verbs_error(rc, "ibv_query_device");
  DeviceLimits l;
  l.max_sge = static_cast<std::uint32_t>(attr.max_sge);
  l.max_qp_wr = static_cast<std::uint32_t>(attr.max_qp_wr);
  l.max_cqe = static_cast<std::uint32_t>(attr.max_cqe);
  l.max_qp_rd_atom = static_cast<std::uint32_t>(attr.max_qp_rd_atom);
  l.max_mr_size = attr.max_mr_size;
  l.max_srq_wr = attr.max_srq > 0 ? static_cast<std::uint32_t>(attr.max_srq_wr) : 0;
  // The kernel's soft devices by their vendor ids (drivers/infiniband/sw: rxe's RXE_VENDOR_ID,
  // siw's SIW_VENDOR_ID, "bmt").
  l.software = attr.vendor_id == 0xffffff || attr.vendor_id == 0x626d74;
  return l;
}

Result<Gid> Context::query_gid(std::uint8_t port, int index) const {
  if (loopback()) return index == 0 && port == 1 ? Result<Gid>(loop::gid()) : errno_status(EINVAL, "loopback: no such GID");
  ibv_gid gid{};
  if (int rc = ibv_query_gid(ctx_.get(), port, index, &gid); rc != 0) return verbs_error(rc, "ibv_query_gid");
  Gid out;
  std::memcpy(out.raw.data(), gid.raw, out.raw.size());
  return out;
}

Result<int> Context::select_gid_index(std::uint8_t port) const {
  AUGUR_ASSIGN_OR_RETURN(PortAttr pa, query_port(port));
  if (pa.link_layer == LinkLayer::kInfiniBand || loopback()) return 0;
  ibv_port_attr attr{};
  if (int rc = ibv_query_port(ctx_.get(), port, &attr); rc != 0) return verbs_error(rc, "ibv_query_port");
  int first_v2 = -1;
  for (int i = 0; i < attr.gid_tbl_len; ++i) {
    ibv_gid_entry e{};
    if (ibv_query_gid_ex(ctx_.get(), port, static_cast<std::uint32_t>(i), &e, 0) != 0) continue;
    if (e.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
    const auto* g = e.gid.raw;
    bool v4_mapped = std::all_of(g, g + 10, [](std::uint8_t b) { return b == 0; }) && g[10] == 0xff && g[11] == 0xff;
    if (v4_mapped) return i;
    if (first_v2 < 0) first_v2 = i;
  }
  if (first_v2 >= 0) return first_v2;
  return 0;
}

Result<ProtectionDomain> ProtectionDomain::create(const Context& ctx) {
  if (ctx.loopback()) return ProtectionDomain(nullptr);
  ibv_pd* pd = ibv_alloc_pd(ctx.get());
  if (pd == nullptr) return errno_status(errno, "ibv_alloc_pd");
  return ProtectionDomain(pd);
}

Result<MemoryRegion> MemoryRegion::register_memory(const ProtectionDomain& pd, void* addr, std::size_t length,
                                                   std::uint32_t access) {
  if (pd.loopback()) {
    AUGUR_ASSIGN_OR_RETURN(loop::Mr * mr, loop::register_memory(addr, length, access));
    return MemoryRegion(mr);
  }
  unsigned flags = 0;
  if (access & kLocalWrite) flags |= IBV_ACCESS_LOCAL_WRITE;
  if (access & kRemoteWrite) flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
  if (access & kRemoteRead) flags |= IBV_ACCESS_REMOTE_READ;
  if (access & kRemoteAtomic) flags |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
  // The function, not the macro: the macro's access-flag arithmetic trips -Wsign-conversion.
  ibv_mr* mr = (ibv_reg_mr)(pd.get(), addr, length, static_cast<int>(flags));
  if (mr == nullptr) return errno_status(errno, "ibv_reg_mr");
  count_registered(mr->length);
  return MemoryRegion(mr);
}

void* MemoryRegion::addr() const noexcept { return loop_ ? loop::mr_addr(*loop_) : mr_->addr; }
std::size_t MemoryRegion::length() const noexcept { return loop_ ? loop::mr_length(*loop_) : mr_->length; }
std::uint32_t MemoryRegion::lkey() const noexcept { return loop_ ? loop::mr_key(*loop_) : mr_->lkey; }
std::uint32_t MemoryRegion::rkey() const noexcept { return loop_ ? loop::mr_key(*loop_) : mr_->rkey; }

Result<CompletionChannel> CompletionChannel::create(const Context& ctx) {
  if (ctx.loopback()) {
    AUGUR_ASSIGN_OR_RETURN(loop::Channel * ch, loop::create_channel());
    return CompletionChannel(ch);
  }
  ibv_comp_channel* ch = ibv_create_comp_channel(ctx.get());
  if (ch == nullptr) return errno_status(errno, "ibv_create_comp_channel");
  return CompletionChannel(ch);
}

int CompletionChannel::fd() const noexcept { return loop_ ? loop::channel_fd(*loop_) : ch_->fd; }

Result<CompletionQueue> CompletionQueue::create(const Context& ctx, int min_entries, CompletionChannel* channel) {
  if (ctx.loopback()) {
    AUGUR_ASSIGN_OR_RETURN(loop::Cq * cq, loop::create_cq(min_entries, channel ? channel->loop_.get() : nullptr));
    return CompletionQueue(cq);
  }
  ibv_cq* cq = ibv_create_cq(ctx.get(), min_entries, nullptr, channel ? channel->get() : nullptr, 0);
  if (cq == nullptr) return errno_status(errno, "ibv_create_cq");
  return CompletionQueue(cq);
}

Status CompletionQueue::resize(int min_entries) {
  if (loop_) return loop::resize(*loop_, min_entries);
  if (int rc = ibv_resize_cq(cq_.get(), min_entries); rc != 0) return verbs_error(rc, "ibv_resize_cq");
  return Status::Ok();
}

namespace {
WcOpcode to_opcode(ibv_wc_opcode op) {
  switch (op) {
    case IBV_WC_SEND: return WcOpcode::kSend;
    case IBV_WC_RDMA_WRITE: return WcOpcode::kRdmaWrite;
    case IBV_WC_RDMA_READ: return WcOpcode::kRdmaRead;
    case IBV_WC_RECV: return WcOpcode::kRecv;
    case IBV_WC_RECV_RDMA_WITH_IMM: return WcOpcode::kRecvRdmaWithImm;
    case IBV_WC_FETCH_ADD:
    case IBV_WC_COMP_SWAP: return WcOpcode::kAtomic;
    default: return WcOpcode::kOther;
  }
}
}  // namespace

Result<std::size_t> CompletionQueue::poll(std::span<Completion> out) {
  if (loop_) return loop::poll(*loop_, out);
  constexpr int kBatch = 16;
  ibv_wc wc[kBatch];
  std::size_t done = 0;
  while (done < out.size()) {
    int want = static_cast<int>(std::min<std::size_t>(kBatch, out.size() - done));
    int n = ibv_poll_cq(cq_.get(), want, wc);
    if (n < 0) return Status(Code::kIo, "ibv_poll_cq failed");
    for (int i = 0; i < n; ++i) {
      Completion& c = out[done++];
      c.wr_id = wc[i].wr_id;
      c.wc_status = wc[i].status;
      // The opcode is only defined for successful completions.
      c.opcode = wc[i].status == IBV_WC_SUCCESS ? to_opcode(wc[i].opcode) : WcOpcode::kOther;
      c.byte_len = wc[i].byte_len;
      c.has_imm = (wc[i].wc_flags & IBV_WC_WITH_IMM) != 0;
      c.imm = c.has_imm ? ntohl(wc[i].imm_data) : 0;
      c.qp_num = wc[i].qp_num;
      c.vendor_err = wc[i].vendor_err;
    }
    if (n < want) break;
  }
  return done;
}

Status CompletionQueue::request_notify() {
  if (loop_) return loop::request_notify(*loop_);
  if (int rc = ibv_req_notify_cq(cq_.get(), 0); rc != 0) return verbs_error(rc, "ibv_req_notify_cq");
  return Status::Ok();
}

Status CompletionQueue::wait_event(CompletionChannel& channel, int timeout_ms) {
  pollfd pfd{channel.fd(), POLLIN, 0};
  int rc = ::poll(&pfd, 1, timeout_ms);
  if (rc < 0) return errno_status(errno, "poll(completion channel)");
  if (rc == 0) return Status(Code::kTimeout, "no completion event within " + std::to_string(timeout_ms) + " ms");
  return consume_event(channel);
}

Status CompletionQueue::consume_event(CompletionChannel& channel) {
  if (loop_) return channel.loop_ ? loop::consume_event(*channel.loop_) : Status(Code::kInvalidArgument, "not a loopback channel");
  ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  if (ibv_get_cq_event(channel.get(), &ev_cq, &ev_ctx) != 0) return errno_status(errno, "ibv_get_cq_event");
  ibv_ack_cq_events(ev_cq, 1);
  if (ev_cq != cq_.get()) return Status(Code::kInternal, "completion event for another CQ on this channel");
  return Status::Ok();
}

Result<QueuePair> QueuePair::create_rc(const ProtectionDomain& pd, const CompletionQueue& send_cq,
                                       const CompletionQueue& recv_cq, const QpCaps& caps,
                                       const SharedReceiveQueue* srq) {
  if (pd.loopback()) {
    if (!send_cq.loop_ || !recv_cq.loop_ || (srq != nullptr && !srq->loop_)) {
      return Status(Code::kInvalidArgument, "loopback QP on another device's CQ or SRQ");
    }
    AUGUR_ASSIGN_OR_RETURN(loop::Qp * qp, loop::create_qp(*send_cq.loop_, *recv_cq.loop_, caps,
                                                          srq != nullptr ? srq->loop_.get() : nullptr));
    return QueuePair(qp);
  }
  ibv_qp_init_attr attr{};
  attr.send_cq = send_cq.get();
  attr.recv_cq = recv_cq.get();
  attr.srq = srq != nullptr ? srq->get() : nullptr;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = caps.max_send_wr;
  attr.cap.max_recv_wr = srq != nullptr ? 0 : caps.max_recv_wr;
  attr.cap.max_send_sge = caps.max_send_sge;
  attr.cap.max_recv_sge = srq != nullptr ? 0 : caps.max_recv_sge;
  attr.cap.max_inline_data = caps.max_inline_data;
  ibv_qp* qp = ibv_create_qp(pd.get(), &attr);
  if (qp == nullptr) return errno_status(errno, "ibv_create_qp(RC)");
  return QueuePair(qp);
}

std::uint32_t QueuePair::qp_num() const noexcept { return loop_ ? loop::qp_num(*loop_) : qp_->qp_num; }

Result<QpAddress> QueuePair::local_address(const Context& ctx, const ConnectOptions& opt, std::uint32_t psn) const {
  AUGUR_ASSIGN_OR_RETURN(PortAttr pa, ctx.query_port(opt.port));
  if (!pa.active) return Status(Code::kUnavailable, ctx.name() + " port " + std::to_string(opt.port) + " is not active");
  int gid_index = opt.gid_index;
  if (gid_index < 0) {
    AUGUR_ASSIGN_OR_RETURN(gid_index, ctx.select_gid_index(opt.port));
  }
  AUGUR_ASSIGN_OR_RETURN(Gid gid, ctx.query_gid(opt.port, gid_index));
  if (pa.link_layer == LinkLayer::kEthernet && gid.is_zero()) {
    return Status(Code::kNotFound, ctx.name() + ": GID index " + std::to_string(gid_index) +
                                       " is empty (no IP address on the RoCE netdev?)");
  }
  QpAddress a;
  a.lid = pa.lid;
  a.qp_num = qp_num();
  a.psn = psn & 0xffffff;
  std::memcpy(a.gid, gid.raw.data(), sizeof a.gid);
  a.mtu = pa.active_mtu;
  a.link_layer = static_cast<std::uint8_t>(pa.link_layer);
  return a;
}

Status QueuePair::to_error() {
  if (loop_) return loop::to_error(*loop_);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  if (int rc = ibv_modify_qp(qp_.get(), &attr, IBV_QP_STATE); rc != 0) return verbs_error(rc, "ibv_modify_qp(ERR)");
  return Status::Ok();
}

Result<bool> QueuePair::in_error() const {
  if (loop_) return loop::in_error(*loop_);
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (int rc = ibv_query_qp(qp_.get(), &attr, IBV_QP_STATE, &init); rc != 0) return verbs_error(rc, "ibv_query_qp");
  return attr.qp_state == IBV_QPS_ERR;
}

Status QueuePair::connect(const Context& ctx, const ConnectOptions& opt, const QpAddress& local,
                          const QpAddress& remote) {
  if (loop_) return loop::connect(*loop_, remote);
  AUGUR_ASSIGN_OR_RETURN(DeviceLimits lim, ctx.limits());
  int gid_index = opt.gid_index;
  if (gid_index < 0) {
    AUGUR_ASSIGN_OR_RETURN(gid_index, ctx.select_gid_index(opt.port));
  }
  const auto rd_atom = static_cast<std::uint8_t>(std::min<std::uint32_t>(opt.max_rd_atomic, lim.max_qp_rd_atom));

  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = opt.port;
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  if (int rc = ibv_modify_qp(qp_.get(), &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
      rc != 0) {
    return verbs_error(rc, "ibv_modify_qp(INIT)");
  }

  attr = {};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(std::min(local.mtu, remote.mtu));
  attr.dest_qp_num = remote.qp_num;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = rd_atom;
  attr.min_rnr_timer = opt.min_rnr_timer;
  attr.ah_attr.port_num = opt.port;
  attr.ah_attr.dlid = remote.lid;
  Gid remote_gid;
  std::memcpy(remote_gid.raw.data(), remote.gid, sizeof remote.gid);
  if (remote.link_layer == static_cast<std::uint8_t>(LinkLayer::kEthernet) || !remote_gid.is_zero()) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid, sizeof remote.gid);
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gid_index);
    attr.ah_attr.grh.hop_limit = 64;
  }
  if (int rc = ibv_modify_qp(qp_.get(), &attr,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      rc != 0) {
    return verbs_error(rc, "ibv_modify_qp(RTR)");
  }

  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = opt.timeout;
  attr.retry_cnt = opt.retry_cnt;
  attr.rnr_retry = opt.rnr_retry;
  attr.sq_psn = local.psn;
  attr.max_rd_atomic = rd_atom;
  if (int rc = ibv_modify_qp(qp_.get(), &attr,
                             IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                 IBV_QP_MAX_QP_RD_ATOMIC);
      rc != 0) {
    return verbs_error(rc, "ibv_modify_qp(RTS)");
  }
  return Status::Ok();
}

namespace {
constexpr std::size_t kMaxSge = 32;  // rxe's max_sge; larger lists are split by the caller

Status fill_sges(std::span<const Sge> in, ibv_sge* out) {
  if (in.size() > kMaxSge) return Status(Code::kInvalidArgument, "more than 32 SGEs in one work request");
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = ibv_sge{in[i].addr, in[i].length, in[i].lkey};
  return Status::Ok();
}
}  // namespace

Status QueuePair::post_send(const SendRequest& wr) {
  if (loop_) return loop::post_send(*loop_, wr);
  ibv_sge sge[kMaxSge];
  AUGUR_RETURN_IF_ERROR(fill_sges(wr.sges, sge));
  ibv_send_wr w{};
  w.wr_id = wr.wr_id;
  w.sg_list = sge;
  w.num_sge = static_cast<int>(wr.sges.size());
  switch (wr.op) {
    case SendOp::kSend: w.opcode = IBV_WR_SEND; break;
    case SendOp::kSendWithImm: w.opcode = IBV_WR_SEND_WITH_IMM; break;
    case SendOp::kRdmaWrite: w.opcode = IBV_WR_RDMA_WRITE; break;
    case SendOp::kRdmaWriteWithImm: w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM; break;
    case SendOp::kRdmaRead: w.opcode = IBV_WR_RDMA_READ; break;
    case SendOp::kFetchAdd: w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD; break;
    case SendOp::kCompareSwap: w.opcode = IBV_WR_ATOMIC_CMP_AND_SWP; break;
  }
  if (wr.op == SendOp::kSendWithImm || wr.op == SendOp::kRdmaWriteWithImm) w.imm_data = htonl(wr.imm);
  if (wr.op == SendOp::kFetchAdd || wr.op == SendOp::kCompareSwap) {
    w.wr.atomic.remote_addr = wr.remote_addr;
    w.wr.atomic.rkey = wr.rkey;
    w.wr.atomic.compare_add = wr.compare_add;
    w.wr.atomic.swap = wr.swap;
  } else {
    w.wr.rdma.remote_addr = wr.remote_addr;
    w.wr.rdma.rkey = wr.rkey;
  }
  unsigned flags = 0;
  if (wr.signaled) flags |= IBV_SEND_SIGNALED;
  if (wr.inline_data) flags |= IBV_SEND_INLINE;
  w.send_flags = flags;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_.get(), &w, &bad); rc != 0) return verbs_error(rc, "ibv_post_send");
  return Status::Ok();
}

namespace {
// One receive work request, posted by `post` (ibv_post_recv or ibv_post_srq_recv), named `what`.
template <typename Post>
Status post_one_recv(std::uint64_t wr_id, std::span<const Sge> sges, const Post& post, const char* what) {
  ibv_sge sge[kMaxSge];
  AUGUR_RETURN_IF_ERROR(fill_sges(sges, sge));
  ibv_recv_wr w{};
  w.wr_id = wr_id;
  w.sg_list = sge;
  w.num_sge = static_cast<int>(sges.size());
  ibv_recv_wr* bad = nullptr;
  if (int rc = post(&w, &bad); rc != 0) return verbs_error(rc, what);
  return Status::Ok();
}
}  // namespace

Status QueuePair::post_recv(std::uint64_t wr_id, std::span<const Sge> sges) {
  if (loop_) return loop::post_recv(*loop_, wr_id, sges);
  return post_one_recv(wr_id, sges, [&](ibv_recv_wr* w, ibv_recv_wr** bad) { return ibv_post_recv(qp_.get(), w, bad); },
                       "ibv_post_recv");
}

Result<SharedReceiveQueue> SharedReceiveQueue::create(const ProtectionDomain& pd, std::uint32_t max_wr) {
  if (max_wr == 0) return Status(Code::kInvalidArgument, "SRQ of 0 receives");
  if (pd.loopback()) {
    AUGUR_ASSIGN_OR_RETURN(loop::Srq * srq, loop::create_srq(max_wr));
    return SharedReceiveQueue(srq, max_wr);
  }
  ibv_srq_init_attr attr{};
  attr.attr.max_wr = max_wr;
  attr.attr.max_sge = 1;
  ibv_srq* srq = ibv_create_srq(pd.get(), &attr);
  if (srq == nullptr) return errno_status(errno, "ibv_create_srq(" + std::to_string(max_wr) + " receives)");
  return SharedReceiveQueue(srq, max_wr);
}

Status SharedReceiveQueue::post_recv(std::uint64_t wr_id, std::span<const Sge> sges) {
  if (loop_) return loop::post_srq_recv(*loop_, wr_id, sges);
  return post_one_recv(wr_id, sges, [&](ibv_recv_wr* w, ibv_recv_wr** bad) { return ibv_post_srq_recv(srq_.get(), w, bad); },
                       "ibv_post_srq_recv");
}

}  // namespace augur::nic
