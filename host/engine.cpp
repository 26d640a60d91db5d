// The engine's core: construction and connections (Engine::create publishes the wire-up listener through
// the bootstrap; channels are made on first use, host/augur/host/wireup.h), the public entry points that post work (isend, irecv, probe, cancel,
// the matched-probe receives), matching a message to its receive (match_and_start), completion dispatch
// (progress_once, deliver for every message type but eager) and failing a peer. The protocols these call
// live in the other engine_*.cpp files, one concern each, so that each can be read alone
// (docs/architecture.md). The per-message path crosses these files (send_eager -> CreditBook::usable,
// deliver_eager -> match_and_start); optimised GCC builds compile libaugur_host into fat LTO objects and
// link libaugur_mpi and the benchmarks with LTO (cmake/AugurOptions.cmake), where those calls are inlined
// as they were within one file (checked on augur-perf-lat: the same Engine functions stay out of line).
// Without LTO (sanitizer builds, tests, AUGUR_LTO=OFF) they stay calls.

#include "augur/host/engine.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "augur/host/job_hosts.h"
#include "augur/nic/endpoint.h"
#include "engine_internal.h"

namespace augur::host {

namespace {

constexpr std::size_t kRb = sizeof(nic::RemoteBuffer);
// QP address, credit word, credit table, first window (4 bytes, little-endian).
constexpr std::size_t kAddressBytes = sizeof(nic::QpAddress) + 2 * kRb + 4;
static_assert(kAddressBytes == 88, "the channel address is a wire format: the wire-up carries it");

// What a peer that broke the protocol is failed with: the program sees a failed process, and why.
Status malformed(int peer, const Status& st) {
  return Status(Code::kPeerFailure,
                "rank " + std::to_string(peer) + " sent a malformed message (" + st.message() + "); it is treated as failed");
}

// A channel address as the wire-up carries it (the peer's decode_address checks every field).
std::vector<std::byte> encode_address(const Channel::Address& a) {
  std::vector<std::byte> s(kAddressBytes);
  std::byte* p = s.data();
  nic::encode(a.qp, std::span<std::byte, sizeof(nic::QpAddress)>(p, sizeof(nic::QpAddress)));
  p += sizeof(nic::QpAddress);
  nic::encode(a.credit_word, std::span<std::byte, kRb>(p, kRb));
  nic::encode(a.credit_table, std::span<std::byte, kRb>(p + kRb, kRb));
  for (int i = 0; i < 4; ++i) p[2 * kRb + static_cast<std::size_t>(i)] = static_cast<std::byte>(a.window >> (8 * i));
  return s;
}

Result<Channel::Address> decode_address(std::span<const std::byte> s) {
  if (s.size() != kAddressBytes) return Status(Code::kProtocol, "channel address of the wrong size");
  const std::byte* p = s.data();
  Channel::Address a;
  AUGUR_ASSIGN_OR_RETURN(a.qp, nic::parse_qp_address({p, sizeof(nic::QpAddress)}));
  p += sizeof(nic::QpAddress);
  AUGUR_ASSIGN_OR_RETURN(a.credit_word, nic::parse_remote_buffer({p, kRb}));
  AUGUR_ASSIGN_OR_RETURN(a.credit_table, nic::parse_remote_buffer({p + kRb, kRb}));
  for (int i = 0; i < 4; ++i) a.window |= std::to_integer<std::uint32_t>(p[2 * kRb + static_cast<std::size_t>(i)]) << (8 * i);
  return a;  // Channel::connect checks the window against its bounds
}

}  // namespace

Status unreachable(int peer, const Status& st) {
  return Status(Code::kPeerFailure, "connection to rank " + std::to_string(peer) + " failed: " + st.to_string());
}

namespace {

constexpr std::uint32_t kIdlePollsBeforeCreditFlush = 64;
// Progress rounds between two looks at the wire-up (an epoll_wait): a peer asking to connect
// waits at most this many rounds while we are busy, and the look costs nothing per message.
constexpr std::uint32_t kRoundsPerWireupPoll = 256;

// The address peers reach this rank's wire-up listener at: on RoCE the IPv4 address of the GID
// the channels use (reachable by definition, as RoCE v2 is IP), the loopback device 127.0.0.1,
// otherwise (InfiniBand) the host's name.
Result<std::string> wireup_host(const nic::Context& ctx, const nic::ConnectOptions& opt) {
  if (ctx.loopback()) return std::string("127.0.0.1");
  AUGUR_ASSIGN_OR_RETURN(int index, opt.gid_index >= 0 ? Result<int>(opt.gid_index) : ctx.select_gid_index(opt.port));
  AUGUR_ASSIGN_OR_RETURN(nic::Gid gid, ctx.query_gid(opt.port, index));
  const auto& g = gid.raw;
  if (std::all_of(g.begin(), g.begin() + 10, [](std::uint8_t b) { return b == 0; }) && g[10] == 0xff && g[11] == 0xff) {
    return std::to_string(g[12]) + "." + std::to_string(g[13]) + "." + std::to_string(g[14]) + "." + std::to_string(g[15]);
  }
  return this_host_name();
}

Status truncation(std::size_t length, std::size_t cap) {
  return {Code::kTruncated, "message of " + std::to_string(length) + " bytes, receive buffer of " + std::to_string(cap)};
}

}  // namespace

Engine::Engine(Bootstrap& boot, const EngineConfig& cfg)
    : boot_(boot),
      rank_(boot.rank()),
      size_(boot.size()),
      cfg_(cfg),
      driver_(*this, {.wait = cfg.wait, .spin_us = cfg.spin_us, .keepalive_ms = cfg.keepalive_ms}) {}

Engine::~Engine() {
  driver_.stop_assist();  // from here on everything runs on this thread
  while (AssistCommand* c = driver_.next_command()) delete static_cast<Command*>(c);  // never ran: the engine is going away
  end_speculations(-1);  // the program's buffers are its own again
  for (auto& rd : reads_) {  // data still on its way into released buffers will not come now
    if (rd && rd->released) lose_released(*rd, "the runtime ended (MPI_Finalize or an error) before the message had arrived");
  }
  for (Peer& p : peers_) {  // released sends never read: their memory is the program's again
    for (OutMsg& m : p.out) end_release_send(m);
    for (auto& [seq, m] : p.awaiting_fin) end_release_send(m);
  }
  if (staging_ != nullptr) {
    staging_pin_ = {};
    munmap(staging_, std::size_t{kStagingSlots} * 2 * PageGuard::page_size());
  }
  if (cfg_.stats) std::fprintf(stderr, "%s\n", stats_line().c_str());
}

Result<std::unique_ptr<Engine>> Engine::create(Bootstrap& boot, const EngineConfig& cfg) {
  std::unique_ptr<Engine> e(new Engine(boot, cfg));
  AUGUR_ASSIGN_OR_RETURN(nic::EndpointOptions opt, nic::endpoint_options_from_settings());
  AUGUR_ASSIGN_OR_RETURN(nic::Context ctx, nic::Context::open(opt.device));
  e->ctx_ = std::make_unique<nic::Context>(std::move(ctx));
  AUGUR_ASSIGN_OR_RETURN(nic::ProtectionDomain pd, nic::ProtectionDomain::create(*e->ctx_));
  e->pd_ = std::make_unique<nic::ProtectionDomain>(std::move(pd));
  AUGUR_ASSIGN_OR_RETURN(nic::CompletionChannel events, nic::CompletionChannel::create(*e->ctx_));
  e->events_ = std::make_unique<nic::CompletionChannel>(std::move(events));
  // Room for one-sided operations to oneself and a first peer; open_channel grows it per peer.
  e->cq_entries_ = e->cq_per_peer() + static_cast<int>(Channel::kMaxRma);
  AUGUR_ASSIGN_OR_RETURN(nic::CompletionQueue cq, nic::CompletionQueue::create(*e->ctx_, e->cq_entries_, e->events_.get()));
  e->cq_ = std::make_unique<nic::CompletionQueue>(std::move(cq));
  AUGUR_ASSIGN_OR_RETURN(nic::RegCacheLimits lim, nic::reg_cache_limits_from_settings());
  e->send_cache_ = std::make_unique<nic::RegCache>(nic::pd_registrar(*e->pd_, nic::kRemoteRead), lim);
  // Receive buffers are written by RDMA READ (rendezvous) and by the peer's direct writes.
  e->recv_cache_ = std::make_unique<nic::RegCache>(nic::pd_registrar(*e->pd_, nic::kLocalWrite | nic::kRemoteWrite), lim);
  // The job's hosts first: the eager limit, which both ends of every channel must agree on,
  // depends on whether any host is oversubscribed (start-up's one fence).
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // Ranks group by node: the launcher's node name when it gives one (PMIx), else the host name.
  // Every rank reads every entry, so all reach the same grouping (the eager limit depends on it).
  const NodePlacement placed = boot.placement();
  e->node_name_ = node_name_from(placed.node);
  AUGUR_RETURN_IF_ERROR(boot.put("augur.host", encode_host_share({e->node_name_, cores})));
  // Where this rank listens for connections, published in the same fence: the only per-rank
  // key of a connection, however many peers the job has.
  AUGUR_ASSIGN_OR_RETURN(std::string wire_host, wireup_host(*e->ctx_, opt.connect));
  AUGUR_ASSIGN_OR_RETURN(e->wire_, Wireup::create(e->rank_, e->size_, static_cast<std::uint32_t>(kAddressBytes), wire_host));
  AUGUR_RETURN_IF_ERROR(boot.put("augur.wire", e->wire_->entry()));
  AUGUR_RETURN_IF_ERROR(boot.fence());
  std::vector<HostShare> shares(static_cast<std::size_t>(e->size_));
  for (int p = 0; p < e->size_; ++p) {
    AUGUR_ASSIGN_OR_RETURN(std::string s, boot.get(p, "augur.host"));
    AUGUR_ASSIGN_OR_RETURN(shares[static_cast<std::size_t>(p)], parse_host_share(s, p));
  }
  const JobHosts hosts = job_hosts(shares, e->rank_);
  e->local_ranks_ = hosts.local_ranks;
  if (const std::string w = placement_mismatch(e->rank_, e->node_name_, placed.local_size, hosts.local_ranks); !w.empty()) {
    std::fprintf(stderr, "%s\n", w.c_str());
  }
  // On an oversubscribed host each rendezvous hand-off waits for its peer to get a core; a
  // larger eager limit saves two of the three (docs/runtime.md, "Oversubscribed hosts").
  e->oversubscribed_job_ = hosts.any_oversubscribed;
  if (hosts.any_oversubscribed) e->cfg_.eager_limit = std::max(cfg.eager_limit, cfg.oversub_eager_limit);
  const std::uint32_t eager_limit = e->cfg_.eager_limit;
  AUGUR_ASSIGN_OR_RETURN(SteeringPolicy steer, SteeringPolicy::create({.mode = cfg.steering,
                                                                       .rank = e->rank_,
                                                                       .size = e->size_,
                                                                       .direct_min = cfg.direct_min,
                                                                       .eager_limit = eager_limit,
                                                                       .direct_max = cfg.direct_max == 0 ? eager_limit
                                                                                                         : std::min(cfg.direct_max, proto::kMaxDirectBytes),
                                                                       .landing_max = cfg.early == EngineConfig::Early::kLanding
                                                                                          ? cfg.landing_max
                                                                                          : 0,
                                                                       .predict_depth = cfg.predict_depth,
                                                                       .predictor = cfg.predictor}));
  e->steer_.emplace(std::move(steer));
  if (cfg.steering == Steering::kSpeculative && cfg.guard) {
    Result<PageGuard*> g = PageGuard::instance();
    if (!g.ok()) return g.status().context("AUGUR_STEERING=speculative with AUGUR_GUARD=1");
    e->guard_ = g.value();
  }
  if (cfg.steering == Steering::kSpeculative) e->spec_release_ = std::make_unique<nic::ReleaseWatch>();
  // One pool of eager receives for every peer, sized now that the eager limit is known.
  AUGUR_ASSIGN_OR_RETURN(e->pool_, RecvPool::create(*e->ctx_, *e->pd_,
                                                    {.slot_bytes = eager_limit + static_cast<std::uint32_t>(sizeof(proto::MsgHeader)),
                                                     .chunk_slots = cfg.srq_slots,
                                                     .peer_window = std::min(cfg.srq_peer_slots, cfg.slots),
                                                     .max_window = cfg.slots,
                                                     .max_slots = std::max(cfg.srq_max_slots, cfg.srq_slots)}));
  e->peers_.resize(static_cast<std::size_t>(e->size_));
  e->repost_peers_.reserve(static_cast<std::size_t>(e->size_));  // no allocation on the receive path
  e->dead_ = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(e->size_));
  e->rma_pending_ = std::make_unique<std::atomic<std::uint32_t>[]>(static_cast<std::size_t>(e->size_));
  e->connect_opt_ = opt.connect;
  e->active_.reserve(static_cast<std::size_t>(e->size_));
  // auto: only with cores to spare. On a 2-core host even a single rank's application thread
  // shares the assist thread's core (the OS places an unbound thread anywhere), and every
  // hand-off then waits for the scheduler: measured 3x slower on the p2p suite.
  // More ranks than cores here: a waiting rank yields its core now and then (Engine::relax), so
  // that the rank it waits for gets to run. Otherwise yielding only costs a system call per wait.
  e->driver_.set_oversubscribed(hosts.here_oversubscribed);
  const int local_ranks = hosts.local_ranks;
  const bool assist = cfg.assist == EngineConfig::Assist::kOn ||
                      (cfg.assist == EngineConfig::Assist::kAuto && cores >= 4 &&
                       cores >= 2u * static_cast<unsigned>(std::max(1, local_ranks)));
  // AUGUR_WAIT=auto: a waiter that sleeps pays a wake-up at every completion it slept through
  // (docs/runtime.md, "How waits wait"); it is worth it only when the core is needed elsewhere:
  // by another rank, the assist thread, or a software device (rxe's work is the kernel's, on
  // these cores: spinning made the MPI suites slower there).
  AUGUR_ASSIGN_OR_RETURN(nic::DeviceLimits dev, e->ctx_->limits());
  e->driver_.resolve_auto_wait(!hosts.here_oversubscribed && !assist && !dev.software);
  // Early release of receives waits in the fault handler by polling the CQ itself, which the
  // assist thread owns: not combined yet. Sends are released only with an assist thread: a store
  // into a released send waits for its FIN, which needs progress on this rank (the READs and
  // FINs it owes peers that wait for it) that the faulting thread cannot make from the handler
  // (docs/early-release.md).
  e->release_ = cfg.early_release && !assist;
  e->release_sends_ = cfg.early_release && assist;
  if (cfg.early_release && assist) {
    static std::once_flag said;
    std::call_once(said, [] {
      std::fprintf(stderr, "augur: AUGUR_EARLY_RELEASE=1 with an assist thread releases blocking sends, not receives (not combined yet)\n");
    });
  }
  if (e->release_ || e->release_sends_) {
    Result<PageGuard*> g = PageGuard::instance();
    if (!g.ok()) return g.status().context("AUGUR_EARLY_RELEASE=1");
    e->guard_ = g.value();
  }
  if (e->release_sends_) AUGUR_RETURN_IF_ERROR(e->open_staging().context("AUGUR_EARLY_RELEASE=1"));
  if (e->cfg_.connect_all) AUGUR_RETURN_IF_ERROR(e->connect_all_peers());
  if (assist) AUGUR_RETURN_IF_ERROR(e->start_assist());
  return e;
}

int Engine::cq_per_peer() const noexcept {
  return static_cast<int>(3 * cfg_.slots + Channel::kMaxReads + Channel::kMaxRma + 8);
}

Status Engine::open_channel(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.ch) return Status::Ok();
  // Every channel's completions share the CQ: grow it before the channel can post work.
  const int need = static_cast<int>(active_.size() + 1) * cq_per_peer() + static_cast<int>(Channel::kMaxRma);
  if (need > cq_entries_) {
    const int want = std::max(need, 2 * cq_entries_);
    AUGUR_RETURN_IF_ERROR(cq_->resize(want).context("growing the CQ for a connection to rank " + std::to_string(peer)));
    cq_entries_ = want;
  }
  const ChannelConfig cc{static_cast<std::uint32_t>(rank_), static_cast<std::uint32_t>(peer), cfg_.slots, cfg_.eager_limit,
                         cfg_.credit_slots};
  AUGUR_ASSIGN_OR_RETURN(p.ch, Channel::create(*ctx_, *pd_, *cq_, *pool_, cc, connect_opt_));
  peer_of_qp_[p.ch->qp_num()] = peer;
  p.credits.emplace(cfg_.credit_slots, credit_counters_);
  active_.push_back(peer);
  return Status::Ok();
}

Status Engine::connect_peer(int peer) {
  if (wire_->begun(peer) || peers_[static_cast<std::size_t>(peer)].dead) return Status::Ok();
  AUGUR_ASSIGN_OR_RETURN(std::string entry, boot_.get(peer, "augur.wire"));
  Status st = wire_->start(peer, entry, *this);
  if (!st.ok()) return fail_peer(peer, unreachable(peer, st));
  return Status::Ok();
}

Result<std::vector<std::byte>> Engine::local_address(int peer) {
  AUGUR_RETURN_IF_ERROR(open_channel(peer));
  AUGUR_ASSIGN_OR_RETURN(Channel::Address a, peers_[static_cast<std::size_t>(peer)].ch->address());
  return encode_address(a);
}

Status Engine::remote_address(int peer, std::span<const std::byte> address) {
  AUGUR_ASSIGN_OR_RETURN(Channel::Address a, decode_address(address));
  return peers_[static_cast<std::size_t>(peer)].ch->connect(a);
}

void Engine::ready(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.dead) return;
  p.ready = true;
  // Receives from it posted before the connection get the credits they could not get then
  // (under the rule start_recv applies: none posted before them could take their message).
  Status st;
  if (cfg_.steering != Steering::kOff) {
    match_.for_each_posted_from(peer, [&](std::uint32_t context, std::int32_t tag, PostedRecv& r, bool earlier) {
      // (Layout receives are never credited: start_recv_layout gives none.)
      if (!st.ok() || earlier || r.req->credit_slot >= 0 || !r.req->runs.empty() || !steer_->creditable(r.cap, peer, tag) ||
          steer_->skip_credit(peer)) {
        return;
      }
      st = give_credit(peer, r.req, r.buf, r.cap, context, tag);
    });
  }
  // What waited for the connection goes now, in order.
  if (st.ok()) st = push_sends(peer);
  if (st.ok() && !p.rma_queue.empty()) st = post_rmas(peer);
  if (!st.ok()) st = fail_peer(peer, unreachable(peer, st));
  if (!st.ok() && deferred_.ok()) deferred_ = st;
}

void Engine::failed(int peer, const Status& why) {
  Status st = fail_peer(peer, unreachable(peer, why));
  if (deferred_.ok()) deferred_ = st;
}

Status Engine::on_wire_event() {
  wire_tick_ = 0;
  return wire_->poll(*this);
}

Status Engine::connect_all_peers() {
  // Lower ranks ask higher ones, so that each pair makes one exchange.
  for (int p = rank_ + 1; p < size_; ++p) AUGUR_RETURN_IF_ERROR(connect_peer(p));
  return await_ready(0, size_, std::chrono::seconds(60));
}

Status Engine::await_ready(int first, int last, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (int p = first; p < last; ++p) {
    while (p != rank_ && !peers_[static_cast<std::size_t>(p)].ready) {
      AUGUR_RETURN_IF_ERROR(on_wire_event());
      AUGUR_RETURN_IF_ERROR(progress_once());
      if (std::chrono::steady_clock::now() > deadline) {
        return Status(Code::kTimeout, "rank " + std::to_string(p) + " not connected within " + std::to_string(limit.count()) + " s");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  return Status::Ok();
}

Result<RequestPtr> Engine::isend(const void* buf, std::size_t len, int dest, std::int32_t tag, std::uint32_t context,
                                 bool synchronous, bool releasable) {
  AUGUR_RETURN_IF_ERROR(check_send(dest, tag));
  if (buf == nullptr && len > 0) return Status(Code::kInvalidArgument, "null send buffer with a non-zero count");
  if (len > 0xffffffffu) return Status(Code::kInvalidArgument, "messages are limited to 4 GiB - 1 bytes");
  if (must_settle(false)) [[unlikely]] AUGUR_RETURN_IF_ERROR(settle(buf, len, false));  // its data first
  auto req = std::make_shared<Request>();
  if (driver_.assisted()) {
    enqueue(Command::Kind::kSend, {.req = req, .sbuf = buf, .len = len, .peer = dest, .tag = tag, .context = context,
                                   .synchronous = synchronous, .releasable = releasable});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_send(req, buf, len, dest, tag, context, synchronous, releasable));
  return req;
}

Status Engine::check_send(int dest, std::int32_t tag) const {
  if (dest < 0 || dest >= size_) return Status(Code::kInvalidArgument, "destination rank " + std::to_string(dest));
  if (tag < 0) return Status(Code::kInvalidArgument, "negative tag " + std::to_string(tag));
  if (dest != rank_ && dead_[static_cast<std::size_t>(dest)].load(std::memory_order_acquire)) {
    return Status(Code::kPeerFailure, "rank " + std::to_string(dest) + " is gone");
  }
  return Status::Ok();
}

Status Engine::check_recv(int source, std::int32_t tag) const {
  if (source != kAnySource && (source < 0 || source >= size_)) {
    return Status(Code::kInvalidArgument, "source rank " + std::to_string(source));
  }
  if (tag < 0 && tag != kAnyTag) return Status(Code::kInvalidArgument, "tag " + std::to_string(tag));
  if (source >= 0 && source != rank_ && dead_[static_cast<std::size_t>(source)].load(std::memory_order_acquire)) {
    return Status(Code::kPeerFailure, "rank " + std::to_string(source) + " is gone");
  }
  return Status::Ok();
}

Status Engine::start_send(const RequestPtr& req, const void* buf, std::size_t len, int dest, std::int32_t tag,
                          std::uint32_t context, bool synchronous, bool releasable) {
  // A guarded buffer the program touched since the last call has its credit revoked before this
  // message leaves: the revoke goes ahead of it on the connection, so a peer that sends only
  // once it hears from us cannot write into memory the program has touched.
  if (!specs_.empty()) [[unlikely]] AUGUR_RETURN_IF_ERROR(check_speculations());
  if (observe_later_) [[unlikely]] AUGUR_RETURN_IF_ERROR(observe_pending());  // its arm words may ride on this message
  if (!req->runs.empty()) {  // a layout (isendv): buf is null, len its total
    ++counters_.sge_sends;
    if (dest == rank_) {  // matched locally from a packed copy, as a contiguous send to oneself
      std::vector<std::byte> packed(len);
      relations::GatherRuns(req->layout(), packed.data(), len);
      req->runs.clear();  // from here on a contiguous send of the packed copy
      return start_send(req, packed.data(), len, dest, tag, context, synchronous);
    }
  }
  if (dest == rank_) {  // matched locally, from a copy: the send completes at once
    Incoming in{};
    in.peer = rank_;
    in.type = proto::MsgType::kEager;
    in.length = len;
    in.self_copy.assign(static_cast<const std::byte*>(buf), static_cast<const std::byte*>(buf) + len);
    in.payload = in.self_copy;
    if (synchronous) in.self_sender = req;
    ++counters_.self_msgs;
    auto r = match_.arrive({context, rank_, tag}, std::move(in));
    if (r) {
      // The Incoming moved into the queue was not kept: rebuild the view for the copy.
      Incoming again{};
      again.peer = rank_;
      again.type = proto::MsgType::kEager;
      again.length = len;
      again.payload = {static_cast<const std::byte*>(buf), len};
      AUGUR_RETURN_IF_ERROR(match_and_start(*r, again, tag));
    } else {
      ++counters_.unexpected_msgs;
      if (synchronous) return Status::Ok();  // completes when a receive takes it
    }
    finish(*req, Path::kSelf);
    return Status::Ok();
  }
  Peer& peer = peers_[static_cast<std::size_t>(dest)];
  if (peer.dead) return Status(Code::kPeerFailure, "rank " + std::to_string(dest) + " is gone");
  if (!peer.ready) AUGUR_RETURN_IF_ERROR(connect_peer(dest));  // queued below until connected
  const bool eager = len <= cfg_.eager_limit && !synchronous;
  if (eager && peer.out.empty() && peer.ready) {  // nothing queued ahead of it: send now, no queue entry
    AUGUR_ASSIGN_OR_RETURN(Path path, send_eager(peer, context, tag, buf, static_cast<std::uint32_t>(len), req->layout()));
    if (path != Path::kNone) {
      finish(*req, path);  // copied into the send slot: the user buffer is free
      return Status::Ok();
    }
  }
  OutMsg m{};
  m.context = context;
  m.tag = tag;
  m.length = static_cast<std::uint32_t>(len);
  m.req = req;
  bool released = false;  // early release of a send: done now, its pages write-guarded until the FIN
  if (releasable && release_sends_ && !eager && !synchronous && req->runs.empty()) [[unlikely]] {
    AUGUR_ASSIGN_OR_RETURN(released, start_release_send(m, buf, len));
  }
  if (released) {
    m.req = nullptr;
  } else if (eager) {
    m.type = proto::MsgType::kEager;
    m.user = buf;
    m.gather = !req->runs.empty();  // straight from the runs into the send slot
  } else if (!req->runs.empty()) {
    AUGUR_ASSIGN_OR_RETURN(m.body, run_list_rts(req->layout(), len, m.pins));
    m.type = proto::MsgType::kRtsRuns;
  } else {
    m.type = proto::MsgType::kRts;
    m.user = buf;
    // A landing credit, or the receive's own when receives this large are credited, may carry it
    // (docs/early.md, docs/runtime.md); otherwise push_sends need not look for one. A synchronous
    // send must wait for its match.
    const bool credited = cfg_.steering != Steering::kOff && len <= steer_->config().direct_max;
    m.may_write = !synchronous && len > 0 && len <= proto::kMaxDirectBytes &&
                  (cfg_.early != EngineConfig::Early::kOff || credited);
    nic::RemoteBuffer rb;
    if (len > 0) {
      AUGUR_ASSIGN_OR_RETURN(m.pin, send_cache_->acquire(buf, len));
      rb.addr = reinterpret_cast<std::uintptr_t>(buf);
      rb.rkey = m.pin.rkey();
    }
    rb.length = len;
    m.body.resize(sizeof(nic::RemoteBuffer));
    nic::encode(rb, std::span<std::byte, sizeof(nic::RemoteBuffer)>(m.body.data(), m.body.size()));
  }
  peer.out.push_back(std::move(m));
  if (released) finish(*req, Path::kRendezvous);
  return push_sends(dest);
}

Result<RequestPtr> Engine::irecv(void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context,
                                 bool releasable) {
  AUGUR_RETURN_IF_ERROR(check_recv(source, tag));
  if (buf == nullptr && len > 0) return Status(Code::kInvalidArgument, "null receive buffer with a non-zero count");
  if (must_settle(true)) [[unlikely]] AUGUR_RETURN_IF_ERROR(settle(buf, len));  // the earlier message's data first
  auto req = std::make_shared<Request>();
  req->releasable = releasable && release_;
  if (driver_.assisted()) {
    enqueue(Command::Kind::kRecv, {.req = req, .rbuf = buf, .len = len, .peer = source, .tag = tag, .context = context});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_recv(req, buf, len, source, tag, context));
  return req;
}

Status Engine::start_recv(const RequestPtr& req, void* buf, std::size_t len, int source, std::int32_t tag,
                          std::uint32_t context) {
  if (observe_later_) [[unlikely]] AUGUR_RETURN_IF_ERROR(observe_pending());  // the last receive may predict this one
  if (source >= 0 && source != rank_ && peers_[static_cast<std::size_t>(source)].dead) {
    finish(*req, Path::kNone, Status(Code::kPeerFailure, "rank " + std::to_string(source) + " is gone"));
    return Status::Ok();
  }
  PostedRecv recv{req, buf, len, source};
  bool adopted = false;  // speculative: the credit armed ahead for this receive is its own now
  if (cfg_.steering == Steering::kSpeculative) {
    if (!specs_.empty()) AUGUR_RETURN_IF_ERROR(speculation_at_post(req, buf, len, source, tag, context, adopted));
    if (len > 0) busy_.push_back({req.get(), reinterpret_cast<std::uintptr_t>(buf), reinterpret_cast<std::uintptr_t>(buf) + len});
  }
  // A credit is only safe when no earlier receive could take the message it names.
  const bool creditable =
      !adopted && steer_->creditable(len, source, tag) && !match_.posted_conflicts(context, source, tag);
  if (auto m = match_.post({context, source, tag}, recv)) {
    AUGUR_RETURN_IF_ERROR(match_and_start(recv, m->msg, m->envelope.tag));
  } else {
    if (creditable && !steer_->skip_credit(source)) AUGUR_RETURN_IF_ERROR(give_credit(source, req, buf, len, context, tag));
  }
  if (steer_->predicting()) AUGUR_RETURN_IF_ERROR(note_receive(buf, len, source, tag, context));
  return Status::Ok();
}

Status Engine::match_and_start(PostedRecv& recv, Incoming& msg, std::int32_t tag) {
  Request& r = *recv.req;
  drop_credit(r);
  r.source = msg.peer;
  r.tag = tag;
  r.length = msg.length;
  const std::size_t n = std::min(msg.length, recv.cap);
  const Status st = msg.length > recv.cap ? truncation(msg.length, recv.cap) : Status::Ok();
  if (!st.ok()) ++counters_.truncated;
  const bool layout = !r.runs.empty();
  if (layout) ++counters_.sge_recvs;
  if (msg.type == proto::MsgType::kDirect) {  // landed early in a zone, or in the predicted buffer
    Path path = Path::kLanding;
    if (msg.spec != 0) {
      AUGUR_RETURN_IF_ERROR(place_speculative(recv, msg, n, path));
    } else {
      land_into(recv, msg, n);
    }
    finish(r, path, st);
    return Status::Ok();
  }
  if (msg.type == proto::MsgType::kEager) {
    if (layout) {
      relations::ScatterRuns(msg.payload.data(), n, r.layout());  // never past the layout
    } else if (n > 0) {
      std::memcpy(recv.buf, msg.payload.data(), n);  // never past the buffer
    }
    counters_.bytes_copied += n;
    const bool self = msg.peer == rank_;
    if (!self) release_later(msg.peer, msg.slot);
    if (msg.self_sender) finish(*msg.self_sender, Path::kSelf);
    finish(r, self ? Path::kSelf : Path::kBounce, st);
    return Status::Ok();
  }
  // Rendezvous: read straight into the receive buffer (or layout).
  r.status = st;  // kept until the read completes
  Peer& p = peers_[static_cast<std::size_t>(msg.peer)];
  p.read_queue.push_back(PendingRead{.req = recv.req,
                                     .buf = layout ? nullptr : static_cast<std::byte*>(recv.buf),
                                     .n = n,
                                     .remote = msg.remote,
                                     .rts_seq = msg.seq,
                                     .remote_runs = std::move(msg.remote_runs)});
  return start_reads(msg.peer);
}

void Engine::deliver(int peer, const Arrival& a) {
  Channel& ch = *peers_[static_cast<std::size_t>(peer)].ch;
  const proto::MsgHeader& h = a.header;
  Status st;
  switch (h.type) {
    case proto::MsgType::kEager:  // progress_once calls deliver_eager itself; here for completeness
      deliver_eager(peer, a);
      break;
    case proto::MsgType::kRts:
    case proto::MsgType::kRtsRuns:
      st = deliver_rts(peer, a);
      break;
    case proto::MsgType::kFin:
      st = ch.release(a.slot);
      if (st.ok()) st = on_fin(peer, h.length);
      break;
    case proto::MsgType::kCredit:
      st = ch.release(a.slot);
      break;
    case proto::MsgType::kDirect:
      st = ch.release(a.slot);
      if (st.ok()) st = on_direct(peer, h.context, h.length);
      break;
    case proto::MsgType::kRevoke:  // from now on the credit is not ours to use; any write through it is already queued
      st = ch.release(a.slot);
      if (st.ok()) st = peers_[static_cast<std::size_t>(peer)].credits->on_revoked(h.context, h.length);
      if (st.ok()) queue_control(peer, proto::MsgType::kRevokeAck, h.context, h.length);
      break;
    case proto::MsgType::kRevokeAck:
      st = ch.release(a.slot);
      if (st.ok()) st = on_revoke_ack(peer, h.context, h.length);
      break;
    case proto::MsgType::kEagerShort:  // wire only: parse_message hands it over as kEager
      st = ch.release(a.slot);
      if (st.ok()) st = Status(Code::kInternal, "a short eager header reached delivery");
      break;
  }
  if (st.ok()) return;
  if (st.code() == Code::kProtocol) {
    // A peer that breaks the protocol cannot be trusted with anything further: fail it, so that
    // every request that involves it ends with the reason and the program is told.
    st = fail_peer(peer, malformed(peer, st));  // names the rank already
  } else {
    st = st.context("from rank " + std::to_string(peer));
  }
  if (deferred_.ok()) deferred_ = st;
}

Status Engine::fail_peer(int peer, const Status& why) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.dead) return why;
  p.dead = true;
  dead_[static_cast<std::size_t>(peer)].store(true, std::memory_order_release);
  for (OutMsg& m : p.out) {
    if (m.req) finish(*m.req, Path::kNone, why);
    if (m.release_guard) end_release_send(m);  // done already: the memory is the program's again
  }
  for (auto& [seq, m] : p.awaiting_fin) {
    if (m.req) finish(*m.req, Path::kNone, why);
    if (m.release_guard) end_release_send(m);
  }
  for (OutMsg& m : p.writing) finish(*m.req, Path::kNone, why);
  p.writing.clear();
  p.zones.clear();
  if (!specs_.empty()) end_speculations(peer);
  for (PendingRead& pr : p.read_queue) finish(*pr.req, Path::kNone, why);
  p.out.clear();
  p.awaiting_fin.clear();
  p.read_queue.clear();
  p.posting = -1;
  for (auto& rd : reads_) {
    if (rd && rd->peer == peer) {
      if (rd->released) {  // the program was told it has the message: a touch of what is missing stops the run
        lose_released(*rd, "rank " + std::to_string(peer) + " failed before the message had arrived: " + why.to_string());
      } else {
        finish(*rd->req, Path::kNone, why);
      }
      rd.reset();
    }
  }
  std::vector<RequestPtr> doomed;
  while (match_.cancel([&](const PostedRecv& r) {
    if (r.source != peer) return false;
    doomed.push_back(r.req);
    return true;
  })) {
  }
  for (auto& r : doomed) finish(*r, Path::kNone, why);
  fail_rmas(peer, why);
  if (p.credits) p.credits->reset();
  return why;
}

void Engine::release_later(int peer, std::uint32_t slot) {
  if (peers_[static_cast<std::size_t>(peer)].ch->release_later(slot)) repost_peers_.push_back(peer);
}

Status Engine::repost_released() {
  Status first_error;
  for (int peer : repost_peers_) {
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    if (!p.ch || p.dead) continue;
    Result<bool> r = p.ch->repost_released();
    if (!r.ok() && first_error.ok()) first_error = fail_peer(peer, unreachable(peer, r.status()));
  }
  repost_peers_.clear();
  return first_error;
}

Status Engine::progress_once() {
  // Slots copied out since the last call go back first: by now the caller has replied.
  Status first_error = repost_peers_.empty() ? Status::Ok() : repost_released();
  const InEngine mark(release_ || release_sends_);  // a guarded touch's wait must never run inside this
  std::span<nic::Completion> wc(wc_);  // a member: no per-poll initialisation on the hot path
  std::size_t n = 0;
  if (stash_n_ == 0) [[likely]] {
    AUGUR_ASSIGN_OR_RETURN(n, cq_->poll(wc));
  } else {  // polled by a guarded touch's wait: handled first, in the CQ's order (copied out, as
            // handling them may grow the stash)
    n = std::min(stash_n_, wc_.size());
    std::copy_n(stash_.begin(), n, wc_.begin());
    std::copy(stash_.begin() + static_cast<std::ptrdiff_t>(n), stash_.begin() + static_cast<std::ptrdiff_t>(stash_n_), stash_.begin());
    stash_n_ -= n;
  }
  idle_polls_ = n == 0 ? idle_polls_ + 1 : 0;
  if (n == 0 && observe_later_) {  // nothing arrived: the wait has time to predict and arm
    if (Status st = observe_pending(); !st.ok() && first_error.ok()) first_error = st;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const nic::Completion& c = wc[i];
    auto pit = peer_of_qp_.find(c.qp_num);
    if (pit == peer_of_qp_.end()) return Status(Code::kInternal, "completion for an unknown QP");
    const int peer = pit->second;
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    Status st;
    if ((c.wr_id >> 32) == Channel::kWriteKind) {
      if (!p.dead) st = on_write_done(peer, c);  // after a failure the writes were failed already
    } else if ((c.wr_id >> 32) == Channel::kReadKind) {
      auto& rd = reads_[c.wr_id & 0xffffffffu];
      --p.reads_in_flight;
      if (!rd || rd->peer != peer) continue;  // its peer was already failed (a flushed READ)
      if (!c.ok()) {
        st = c.status().context("RDMA READ from rank " + std::to_string(peer));
      } else if (--rd->left > 0) {  // a layout read: the FIN waits for its last READ
        st = start_reads(peer);
      } else {
        finish(*rd->req, Path::kRendezvous, rd->req->status);
        queue_fin(peer, rd->rts_seq);
        rd.reset();
        st = start_reads(peer);
      }
    } else if ((c.wr_id >> 32) == Channel::kReleaseReadKind) {
      st = on_release_read(peer, c);
    } else if ((c.wr_id >> 32) == Channel::kRmaKind) {  // one-sided: after the message kinds
      if (!p.dead) st = on_rma_done(peer, c);  // after a failure its operations were failed already
    } else {
      if (!p.ready) [[unlikely]] wire_->peer_spoke(peer, *this);
      Result<std::optional<Arrival>> a = p.ch->on_completion(c);
      if (!a.ok()) {
        st = a.status();
      } else if (a->has_value() && p.dead) {
        st = p.ch->release((*a)->slot);  // nothing from a failed peer is delivered
      } else if (a->has_value()) {
        if ((*a)->header.type == proto::MsgType::kEager) {
          deliver_eager(peer, **a);  // the common case, flattened
        } else {
          deliver(peer, **a);
        }
      }
    }
    if (!st.ok() && !p.dead) {  // once failed, a peer's flushed work reports nothing new
      st = fail_peer(peer, st.code() == Code::kProtocol ? malformed(peer, st) : unreachable(peer, st));
      if (first_error.ok()) first_error = st;
    }
  }
  if (Peer& self = peers_[static_cast<std::size_t>(rank_)]; !self.rma_queue.empty()) {
    if (Status st = post_rmas(rank_); !st.ok() && first_error.ok()) first_error = st;
  }
  if (!specs_.empty()) [[unlikely]] {  // touches of guarded buffers: revoke, or stop the run
    if (Status st = check_speculations(); !st.ok() && first_error.ok()) first_error = st;
  }
  for (int peer : active_) {  // the peers with a channel: the rest have nothing to push
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    if (!p.rma_queue.empty() && !p.dead) {
      if (Status st = post_rmas(peer); !st.ok() && first_error.ok()) first_error = fail_peer(peer, unreachable(peer, st));
    }
    if (p.dead) continue;
    Status st = push_sends(peer);
    // Credits ride on our messages; only a receiver that stays quiet writes them out.
    if (st.ok() && idle_polls_ >= kIdlePollsBeforeCreditFlush) st = p.ch->flush_credits();
    if (!st.ok() && first_error.ok()) first_error = fail_peer(peer, unreachable(peer, st));
  }
  if (++wire_tick_ >= kRoundsPerWireupPoll) {
    if (Status st = on_wire_event(); !st.ok() && first_error.ok()) first_error = st;
  }
  if (!deferred_.ok()) {
    if (first_error.ok()) first_error = deferred_;
    deferred_ = Status::Ok();
  }
  return first_error;
}

Result<bool> Engine::test(const RequestPtr& r) {
  if (driver_.assisted()) return r->done.load(std::memory_order_acquire);
  if (!r->done) {
    Status st = progress();
    if (!st.ok() && !r->done) return st;
  }
  return r->done.load(std::memory_order_acquire);
}

bool Engine::cancel(const RequestPtr& r) {
  bool out = false;
  call_in_assist([&] { out = do_cancel(r); });
  return out;
}

bool Engine::do_cancel(const RequestPtr& r) {
  if (r->done) return false;
  if (r->credit_slot >= 0) {
    // The sender may be writing through the credit right now: ask it to give the credit back;
    // the receive completes as cancelled at its answer, or with the message it already sent.
    Peer& p = peers_[static_cast<std::size_t>(r->credit_peer)];
    if (std::optional<std::uint32_t> generation = p.credits->revoke(static_cast<std::uint32_t>(r->credit_slot))) {
      queue_revoke(p, static_cast<std::uint32_t>(r->credit_slot), *generation);
      (void)push_sends(r->credit_peer);
    }
    return true;
  }
  if (!match_.cancel([&](const PostedRecv& p) { return p.req == r; })) return false;
  r->cancelled = true;
  finish(*r, Path::kNone);
  return true;
}

Result<bool> Engine::iprobe(int source, std::int32_t tag, std::uint32_t context, Request* out) {
  Result<bool> found = false;
  call_in_assist([&] {
    if (Status st = progress_once(); !st.ok()) {
      found = st;
      return;
    }
    const auto* m = match_.probe({context, source, tag});
    if (!m) return;
    out->source = m->envelope.source;
    out->tag = m->envelope.tag;
    out->length = m->msg.length;
    found = true;
  });
  return found;
}

Result<std::uint64_t> Engine::improbe(int source, std::int32_t tag, std::uint32_t context, Request* out) {
  AUGUR_RETURN_IF_ERROR(check_recv(source, tag));
  Result<std::uint64_t> id = std::uint64_t{0};
  call_in_assist([&] {
    if (Status st = progress_once(); !st.ok()) {
      id = st;
      return;
    }
    auto m = match_.take({context, source, tag});
    if (!m) return;
    out->source = m->envelope.source;
    out->tag = m->envelope.tag;
    out->length = m->msg.length;
    const std::uint64_t k = next_taken_++;
    taken_.emplace(k, std::move(*m));
    id = k;
  });
  return id;
}

Result<RequestPtr> Engine::imrecv(std::uint64_t message, void* buf, std::size_t len, bool releasable) {
  if (buf == nullptr && len > 0) return Status(Code::kInvalidArgument, "null receive buffer with a non-zero count");
  if (must_settle(true)) [[unlikely]] AUGUR_RETURN_IF_ERROR(settle(buf, len));
  auto req = std::make_shared<Request>();
  req->releasable = releasable && release_;
  return receive_taken(message, req, buf, len);
}

Result<RequestPtr> Engine::receive_taken(std::uint64_t message, const RequestPtr& req, void* buf, std::size_t len) {
  Status st;
  call_in_assist([&] {
    auto it = taken_.find(message);
    if (it == taken_.end()) {
      st = Status(Code::kInvalidArgument, "message handle " + std::to_string(message) + " is not a probed, unreceived message");
      return;
    }
    auto m = std::move(it->second);
    taken_.erase(it);
    PostedRecv recv{req, buf, len, m.msg.peer};
    steer_->abstain();  // a receive call, but its message is already here: nothing to predict
    st = match_and_start(recv, m.msg, m.envelope.tag);
    if (!st.ok() && !req->done) finish(*req, Path::kNone, st);
  });
  AUGUR_RETURN_IF_ERROR(st);
  return req;
}

Status Engine::connect_for_test(int peer) {
  AUGUR_RETURN_IF_ERROR(connect_peer(peer));
  return await_ready(peer, peer + 1, std::chrono::seconds(30));
}

Result<bool> Engine::send_raw_message_for_test(int peer, proto::MsgType type, std::uint32_t context, std::int32_t tag,
                                               std::uint32_t length, std::span<const std::byte> body) {
  if (driver_.assisted() || peer == rank_ || peer < 0 || peer >= size_) return Status(Code::kInvalidArgument, "raw message");
  AUGUR_RETURN_IF_ERROR(connect_for_test(peer));
  return peers_[static_cast<std::size_t>(peer)].ch->try_send(type, context, tag, length, body);
}

Status Engine::force_qp_error_for_test(int peer) {
  if (driver_.assisted() || peer == rank_ || peer < 0 || peer >= size_) {
    return Status(Code::kInvalidArgument, "QP error injection");
  }
  AUGUR_RETURN_IF_ERROR(connect_for_test(peer));
  return peers_[static_cast<std::size_t>(peer)].ch->force_error_for_test();
}

}  // namespace augur::host
