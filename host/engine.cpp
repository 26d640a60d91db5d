#include "augur/host/engine.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <bit>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <string>

#include "augur/compiler.h"
#include "augur/nic/endpoint.h"
#include "augur/settings.h"

namespace augur::host {

namespace {

constexpr std::size_t kAddressBytes = sizeof(nic::QpAddress) + 2 * sizeof(nic::RemoteBuffer);
constexpr std::size_t kRb = sizeof(nic::RemoteBuffer);

// What a peer that broke the protocol is failed with: the program sees a failed process, and why.
Status malformed(int peer, const Status& st) {
  return Status(Code::kPeerFailure,
                "rank " + std::to_string(peer) + " sent a malformed message (" + st.message() + "); it is treated as failed");
}

// What a peer whose connection failed (a completion error, a QP that cannot be posted to) is
// failed with: whatever the verbs error, the program sees a process it can no longer reach.
Status unreachable(int peer, const Status& st) {
  return Status(Code::kPeerFailure, "connection to rank " + std::to_string(peer) + " failed: " + st.to_string());
}

std::string encode_address(const Channel::Address& a) {
  std::string s(kAddressBytes, '\0');
  auto* p = reinterpret_cast<std::byte*>(s.data());
  nic::encode(a.qp, std::span<std::byte, sizeof(nic::QpAddress)>(p, sizeof(nic::QpAddress)));
  p += sizeof(nic::QpAddress);
  nic::encode(a.credit_word, std::span<std::byte, kRb>(p, kRb));
  nic::encode(a.credit_table, std::span<std::byte, kRb>(p + kRb, kRb));
  return s;
}

Result<Channel::Address> decode_address(const std::string& s) {
  if (s.size() != kAddressBytes) return Status(Code::kProtocol, "channel address of the wrong size");
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  Channel::Address a;
  AUGUR_ASSIGN_OR_RETURN(a.qp, nic::parse_qp_address({p, sizeof(nic::QpAddress)}));
  p += sizeof(nic::QpAddress);
  AUGUR_ASSIGN_OR_RETURN(a.credit_word, nic::parse_remote_buffer({p, kRb}));
  AUGUR_ASSIGN_OR_RETURN(a.credit_table, nic::parse_remote_buffer({p + kRb, kRb}));
  return a;
}

std::uint64_t envelope_key(std::uint32_t context, std::int32_t tag) {
  return std::uint64_t{context} << 32 | static_cast<std::uint32_t>(tag);
}

constexpr std::size_t kMaxPredictedCalls = 1 << 16;
constexpr std::uint32_t kIdlePollsBeforeCreditFlush = 64;
// Credit usefulness per peer (predicted mode): out of the last kWindow credits resolved, fewer
// than kMinUsed used means the peer's messages outrun our receives; crediting then only costs.
constexpr std::uint32_t kWindow = 16;
constexpr int kMinUsed = 4;
constexpr std::uint32_t kFirstPause = 256;
constexpr std::uint32_t kMaxPause = 1 << 16;

predictor::Options predictor_options(const EngineConfig& cfg) {
  predictor::Options o;
  o.window = std::max<std::uint32_t>(1, cfg.predict_depth);
  return o;
}

// Sequence numbers wrap: a is at or after b within half the space.
bool seq_at_or_after(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) >= 0; }


Status truncation(std::size_t length, std::size_t cap) {
  return {Code::kTruncated, "message of " + std::to_string(length) + " bytes, receive buffer of " + std::to_string(cap)};
}

}  // namespace

Engine::Engine(Bootstrap& boot, const EngineConfig& cfg) : boot_(boot), rank_(boot.rank()), size_(boot.size()), cfg_(cfg) {}
Engine::~Engine() {
  if (assist_thread_.joinable()) {
    stop_.store(true, std::memory_order_seq_cst);
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
    assist_thread_.join();
  }
  assist_ = false;  // from here on everything runs on this thread
  if (wake_fd_ >= 0) ::close(wake_fd_);
  Command* c = nullptr;
  while ((c = commands_.pop()) != nullptr) delete c;  // never ran: the engine is going away
  if (cfg_.stats) std::fprintf(stderr, "%s\n", stats_line().c_str());
}

void Engine::finish(Request& r, Path path, Status st) {
  r.path = path;
  r.status = std::move(st);
  r.done.store(true, std::memory_order_seq_cst);  // seq_cst: see wake_waiters
  ++completions_;
}

// ---- The communication-assist thread ----

Status Engine::start_assist() {
  AUGUR_ASSIGN_OR_RETURN(placement_, choose_assist_core(ctx_->name(), cfg_.assist_core));
  static std::once_flag said;  // once per process, as every engine would say the same
  std::call_once(said, [&] {
    std::fprintf(stderr, "augur: rank %d: assist thread on core %d (CPUs %s): %s\n", rank_, placement_.core,
                 placement_.cpus.c_str(), placement_.why.c_str());
  });
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return errno_status(errno, "eventfd");
  assist_ = true;
  assist_thread_ = std::thread([this] { assist_main(); });
  return Status::Ok();
}

void Engine::enqueue(Command* c) const {
  // Dekker with assist_sleep, all seq_cst: push (an exchange), then look; it marks itself
  // asleep, then looks at the queue. One of the two sees the other.
  commands_.push(c);
  if (assist_sleeping_.load(std::memory_order_seq_cst)) {
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
}

void Engine::call_in_assist(const std::function<void()>& f) const {
  if (!assist_) {
    f();
    return;
  }
  std::atomic<bool> done{false};
  auto* c = new Command;
  c->kind = Command::Kind::kCall;
  c->call = f;
  c->call_done = &done;
  enqueue(c);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);  // Dekker with wake_waiters, all seq_cst
  {
    std::unique_lock lock(sleep_mu_);
    sleep_cv_.wait(lock, [&] { return done.load(std::memory_order_seq_cst); });
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

bool Engine::run_commands() {
  bool any = false;
  while (Command* c = commands_.pop()) {
    any = true;
    switch (c->kind) {
      case Command::Kind::kSend:
        if (Status st = start_send(c->req, c->sbuf, c->len, c->peer, c->tag, c->context, c->synchronous);
            !st.ok() && !c->req->done) {
          finish(*c->req, Path::kNone, st);
        }
        break;
      case Command::Kind::kRecv:
        if (Status st = start_recv(c->req, c->rbuf, c->len, c->peer, c->tag, c->context); !st.ok() && !c->req->done) {
          finish(*c->req, Path::kNone, st);
        }
        break;
      case Command::Kind::kSendV:
        if (Status st = start_send(c->req, nullptr, c->len, c->peer, c->tag, c->context, c->synchronous);
            !st.ok() && !c->req->done) {
          finish(*c->req, Path::kNone, st);
        }
        break;
      case Command::Kind::kRecvV:
        if (Status st = start_recv_layout(c->req, c->peer, c->tag, c->context); !st.ok() && !c->req->done) {
          finish(*c->req, Path::kNone, st);
        }
        break;
      case Command::Kind::kCall:
        c->call();
        c->call_done->store(true, std::memory_order_seq_cst);
        ++completions_;  // wakes the caller
        break;
    }
    delete c;
  }
  return any;
}

void Engine::wake_waiters() {
  if (completions_ == notified_) return;
  notified_ = completions_;
  // Done flags were stored seq_cst: a waiter that registered too late to be seen here sees them.
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
  std::lock_guard lock(sleep_mu_);  // so that no waiter checks its flag and sleeps in between
  sleep_cv_.notify_all();
}

void Engine::assist_main() {
  if (Status st = bind_this_thread(placement_); !st.ok()) {
    std::fprintf(stderr, "augur: rank %d: assist thread not bound: %s\n", rank_, st.to_string().c_str());
  }
  using std::chrono::steady_clock;
  auto idle_since = steady_clock::now();
  const auto spin = std::chrono::microseconds(cfg_.wait == WaitPolicy::kBlock ? 0 : cfg_.spin_us);
  for (std::uint32_t loops = 1; !stop_.load(std::memory_order_acquire); ++loops) {
    const bool commands = run_commands();
    // Errors are delivered to the requests they concern, and kept for the next progress() call:
    // an error that concerns no request (a malformed message, a failed peer) must still reach
    // the program.
    if (Status st = progress_once(); !st.ok()) keep_assist_error(st);
    wake_waiters();
    const bool busy = commands || idle_polls_ == 0;
    if (busy) {
      idle_since = steady_clock::time_point{};
      continue;
    }
    if (loops % 16 != 0) continue;
    const auto now = steady_clock::now();
    if (idle_since == steady_clock::time_point{}) idle_since = now;
    if (now - last_check_ > std::chrono::milliseconds(cfg_.keepalive_ms)) {
      last_check_ = now;
      if (Status st = check_peers(); !st.ok()) keep_assist_error(st);
      wake_waiters();
    }
    if (cfg_.wait != WaitPolicy::kSpin && now - idle_since >= spin) {
      assist_sleep(static_cast<int>(cfg_.keepalive_ms));
      idle_since = steady_clock::time_point{};
    }
  }
}

void Engine::assist_sleep(int timeout_ms) {
  // Dekker with enqueue: say so, then look at the queue; a producer that missed the flag has
  // already pushed, and the look sees it.
  assist_sleeping_.store(true, std::memory_order_seq_cst);
  if (commands_.empty()) (void)sleep_for_completion(timeout_ms);
  assist_sleeping_.store(false, std::memory_order_seq_cst);
}

Status Engine::wait_assisted(const RequestPtr& r, int timeout_ms) {
  using std::chrono::steady_clock;
  const auto start = steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  const auto spin = std::chrono::microseconds(cfg_.wait == WaitPolicy::kBlock ? 0 : cfg_.spin_us);
  for (std::uint32_t spins = 1; !r->done.load(std::memory_order_acquire); ++spins) {
    if (spins % 16 != 0) continue;
    const auto now = steady_clock::now();
    if (now > deadline) return Status(Code::kTimeout, "request not done within " + std::to_string(timeout_ms) + " ms");
    if (cfg_.wait == WaitPolicy::kSpin || now - start < spin) continue;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);  // Dekker with wake_waiters, all seq_cst
    {
      std::unique_lock lock(sleep_mu_);
      sleep_cv_.wait_until(lock, deadline, [&] { return r->done.load(std::memory_order_seq_cst); });
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
  return r->status;
}

std::string Engine::stats_line() const {
  const nic::RegCacheCounters rc = rcache_counters();
  const EngineCounters c = counters();
  std::string s = "augur-stats rank=" + std::to_string(rank_);
  auto kv = [&s](const char* k, std::uint64_t v) { s.append(" ").append(k).append("=").append(std::to_string(v)); };
  kv("direct_msgs", c.direct_msgs);
  kv("bounce_msgs", c.bounce_msgs);
  kv("rndv_msgs", c.rndv_msgs);
  kv("bytes_copied", c.bytes_copied);
  kv("pred_hits", c.pred_hits);
  kv("pred_misses", c.pred_misses);
  kv("pred_abstains", c.pred_abstains);
  kv("credits_issued", c.credits_issued);
  kv("credits_used", c.credits_used);
  kv("credits_revoked", c.credits_revoked);
  kv("rcache_hits", rc.hits);
  kv("rcache_misses", rc.misses);
  kv("self_msgs", c.self_msgs);
  kv("unexpected_msgs", c.unexpected_msgs);
  kv("truncated", c.truncated);
  kv("direct_sends", c.direct_sends);
  kv("credits_armed_ahead", c.credits_armed_ahead);
  kv("pred_suspended", c.pred_suspended);
  kv("credit_pauses", c.credit_pauses);
  kv("credits_rearmed", c.credits_rearmed);
  kv("sge_sends", c.sge_sends);
  kv("sge_recvs", c.sge_recvs);
  kv("rcache_evictions", rc.evictions);
  kv("rcache_refused", rc.refused);
  kv("rcache_peak_bytes", rc.peak_bytes);
  kv("rcache_peak_entries", rc.peak_entries);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) s.append(" host=").append(host);  // which machine, in multi-host jobs
  return s;
}

EngineCounters Engine::counters() const {
  EngineCounters c;
  call_in_assist([&] { c = counters_; });
  return c;
}

nic::RegCacheCounters Engine::rcache_counters() const {
  nic::RegCacheCounters c;
  call_in_assist([&] { c = rcache_sum(); });
  return c;
}

nic::RegCacheCounters Engine::rcache_sum() const {
  nic::RegCacheCounters c = send_cache_->counters();
  const nic::RegCacheCounters& r = recv_cache_->counters();
  c.hits += r.hits;
  c.misses += r.misses;
  c.evictions += r.evictions;
  c.invalidations += r.invalidations;
  c.releases += r.releases;
  c.refused += r.refused;
  // Each cache has its own bound: the larger peak is what to compare with it.
  c.peak_bytes = std::max(c.peak_bytes, r.peak_bytes);
  c.peak_entries = std::max(c.peak_entries, r.peak_entries);
  return c;
}

Result<std::unique_ptr<Engine>> Engine::create(Bootstrap& boot, const EngineConfig& cfg) {
  std::unique_ptr<Engine> e(new Engine(boot, cfg));
  AUGUR_ASSIGN_OR_RETURN(nic::EndpointOptions opt, nic::endpoint_options_from_settings());
  AUGUR_ASSIGN_OR_RETURN(nic::Context ctx, nic::Context::open(opt.device));
  e->ctx_ = std::make_unique<nic::Context>(std::move(ctx));
  AUGUR_ASSIGN_OR_RETURN(nic::ProtectionDomain pd, nic::ProtectionDomain::create(*e->ctx_));
  e->pd_ = std::make_unique<nic::ProtectionDomain>(std::move(pd));
  const int per_peer = static_cast<int>(3 * cfg.slots + Channel::kMaxReads + 8);
  AUGUR_ASSIGN_OR_RETURN(nic::CompletionChannel events, nic::CompletionChannel::create(*e->ctx_));
  e->events_ = std::make_unique<nic::CompletionChannel>(std::move(events));
  AUGUR_ASSIGN_OR_RETURN(nic::CompletionQueue cq,
                         nic::CompletionQueue::create(*e->ctx_, std::max(1, e->size_ - 1) * per_peer, e->events_.get()));
  e->cq_ = std::make_unique<nic::CompletionQueue>(std::move(cq));
  AUGUR_ASSIGN_OR_RETURN(nic::RegCacheLimits lim, nic::reg_cache_limits_from_settings());
  e->send_cache_ = std::make_unique<nic::RegCache>(nic::pd_registrar(*e->pd_, nic::kRemoteRead), lim);
  // Receive buffers are written by RDMA READ (rendezvous) and by the peer's direct writes.
  e->recv_cache_ = std::make_unique<nic::RegCache>(nic::pd_registrar(*e->pd_, nic::kLocalWrite | nic::kRemoteWrite), lim);
  if (cfg.steering == Steering::kPredicted) {
    AUGUR_ASSIGN_OR_RETURN(e->predictor_, predictor::make_predictor(cfg.predictor, predictor_options(cfg)));
    e->predicted_.reserve(cfg.predict_depth);
  }
  e->peers_.resize(static_cast<std::size_t>(e->size_));
  e->repost_peers_.reserve(static_cast<std::size_t>(e->size_));  // no allocation on the receive path
  e->dead_ = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(e->size_));
  for (int p = 0; p < e->size_; ++p) {
    if (p == e->rank_) continue;
    const ChannelConfig cc{static_cast<std::uint32_t>(e->rank_), static_cast<std::uint32_t>(p), cfg.slots, cfg.eager_limit,
                           cfg.credit_slots};
    AUGUR_ASSIGN_OR_RETURN(auto ch, Channel::create(*e->ctx_, *e->pd_, *e->cq_, cc, opt.connect));
    AUGUR_ASSIGN_OR_RETURN(Channel::Address a, ch->address());
    AUGUR_RETURN_IF_ERROR(boot.put("augur.ch." + std::to_string(p), encode_address(a)));
    e->peer_of_qp_[ch->qp_num()] = p;
    Peer& peer = e->peers_[static_cast<std::size_t>(p)];
    peer.ch = std::move(ch);
    peer.given.resize(cfg.credit_slots);
    peer.revoked.assign(cfg.credit_slots, 0);
    peer.dead_arm.assign(cfg.credit_slots, 0);  // 0 is a free slot's word, never a dead credit's
  }
  char host[256] = {};
  (void)gethostname(host, sizeof host - 1);
  AUGUR_RETURN_IF_ERROR(boot.put("augur.host", host));
  AUGUR_RETURN_IF_ERROR(boot.fence());
  int local_ranks = 0;
  for (int p = 0; p < e->size_; ++p) {
    AUGUR_ASSIGN_OR_RETURN(std::string h, boot.get(p, "augur.host"));
    local_ranks += h == host ? 1 : 0;
  }
  for (int p = 0; p < e->size_; ++p) {
    if (p == e->rank_) continue;
    AUGUR_ASSIGN_OR_RETURN(std::string s, boot.get(p, "augur.ch." + std::to_string(e->rank_)));
    AUGUR_ASSIGN_OR_RETURN(Channel::Address a, decode_address(s));
    AUGUR_RETURN_IF_ERROR(e->peers_[static_cast<std::size_t>(p)].ch->connect(a));
  }
  // Nobody sends before everybody's receives are posted (RNR retry would cover it, slowly).
  AUGUR_RETURN_IF_ERROR(boot.fence());
  // auto: only with cores to spare. On a 2-core host even a single rank's application thread
  // shares the assist thread's core (the OS places an unbound thread anywhere), and every
  // hand-off then waits for the scheduler: measured 3x slower on the p2p suite.
  const unsigned cores = std::thread::hardware_concurrency();
  const bool assist = cfg.assist == EngineConfig::Assist::kOn ||
                      (cfg.assist == EngineConfig::Assist::kAuto && cores >= 4 &&
                       cores >= 2u * static_cast<unsigned>(std::max(1, local_ranks)));
  if (assist) AUGUR_RETURN_IF_ERROR(e->start_assist());
  return e;
}

Result<RequestPtr> Engine::isend(const void* buf, std::size_t len, int dest, std::int32_t tag, std::uint32_t context,
                                 bool synchronous) {
  AUGUR_RETURN_IF_ERROR(check_send(dest, tag));
  if (buf == nullptr && len > 0) return Status(Code::kInvalidArgument, "null send buffer with a non-zero count");
  if (len > 0xffffffffu) return Status(Code::kInvalidArgument, "messages are limited to 4 GiB - 1 bytes");
  auto req = std::make_shared<Request>();
  if (assist_) {
    enqueue(new Command{{}, Command::Kind::kSend, req, buf, nullptr, len, dest, tag, context, {}, nullptr, synchronous});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_send(req, buf, len, dest, tag, context, synchronous));
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
                          std::uint32_t context, bool synchronous) {
  if (!req->runs.empty()) {  // a layout (isendv): buf is null, len its total
    ++counters_.sge_sends;
    if (dest == rank_) {  // matched locally from a packed copy, as a contiguous send to oneself
      std::vector<std::byte> packed(len);
      gather(req->runs, packed.data(), len);
      req->runs.clear();  // from here on a contiguous send of the packed copy
      return start_send(req, packed.data(), len, dest, tag, context, synchronous);
    }
  }
  if (dest == rank_) {  // matched locally, from a copy: the send completes at once
    Incoming in{};
    in.peer = rank_;
    in.type = nic::MsgType::kEager;
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
      again.type = nic::MsgType::kEager;
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
  const bool eager = len <= cfg_.eager_limit && !synchronous;
  if (eager && peer.out.empty()) {  // nothing queued ahead of it: send now, no queue entry
    AUGUR_ASSIGN_OR_RETURN(Path path, send_eager(peer, context, tag, buf, static_cast<std::uint32_t>(len), req->runs));
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
  if (eager) {
    m.type = nic::MsgType::kEager;
    m.user = buf;
    m.gather = !req->runs.empty();  // straight from the runs into the send slot
  } else if (!req->runs.empty()) {
    AUGUR_ASSIGN_OR_RETURN(m.body, run_list_rts(req->runs, len, m.pins));
    m.type = nic::MsgType::kRtsRuns;
  } else {
    m.type = nic::MsgType::kRts;
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
  return push_sends(dest);
}

Result<RequestPtr> Engine::irecv(void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context) {
  AUGUR_RETURN_IF_ERROR(check_recv(source, tag));
  if (buf == nullptr && len > 0) return Status(Code::kInvalidArgument, "null receive buffer with a non-zero count");
  auto req = std::make_shared<Request>();
  if (assist_) {
    enqueue(new Command{{}, Command::Kind::kRecv, req, nullptr, buf, len, source, tag, context, {}, nullptr});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_recv(req, buf, len, source, tag, context));
  return req;
}

Status Engine::start_recv(const RequestPtr& req, void* buf, std::size_t len, int source, std::int32_t tag,
                          std::uint32_t context) {
  if (source >= 0 && source != rank_ && peers_[static_cast<std::size_t>(source)].dead) {
    finish(*req, Path::kNone, Status(Code::kPeerFailure, "rank " + std::to_string(source) + " is gone"));
    return Status::Ok();
  }
  PostedRecv recv{req, buf, len, source};
  // A credit is only safe when no earlier receive could take the message it names.
  const bool steerable = len >= cfg_.direct_min && len > 0;  // else a bounce copy is cheaper
  const bool creditable = cfg_.steering != Steering::kOff && steerable && source >= 0 && source != rank_ && tag >= 0 &&
                          len <= cfg_.eager_limit && !match_.posted_conflicts(context, source, tag);
  if (auto m = match_.post({context, source, tag}, recv)) {
    AUGUR_RETURN_IF_ERROR(match_and_start(recv, m->msg, m->envelope.tag));
  } else if (creditable) {
    Peer& p = peers_[static_cast<std::size_t>(source)];
    if (p.credit_pause > 0) {
      --p.credit_pause;
    } else {
      AUGUR_RETURN_IF_ERROR(give_credit(source, req, buf, len, context, tag));
    }
  }
  if (predictor_) {
    // Crediting this peer is paused (its messages outrun our receives, as in a ping-pong), or
    // the receive is too small to steer: a prediction could not be used, so do not pay for one;
    // counted as an abstention.
    if (!steerable || (source >= 0 && source != rank_ && peers_[static_cast<std::size_t>(source)].credit_pause > 0)) {
      ++counters_.pred_abstains;
      predicted_.clear();
      return Status::Ok();
    }
    AUGUR_RETURN_IF_ERROR(observe_receive(buf, len, source, tag, context));
  }
  return Status::Ok();
}

Engine::GivenCredit* Engine::slot_for_new_entry(Peer& p) {
  using State = GivenCredit::State;
  // A slot never written comes first (age 0), then by last use.
  auto age = [](const GivenCredit& g) { return g.at_peer ? g.stamp + 1 : 0; };
  for (State st : {State::kFree, State::kPending}) {
    GivenCredit* best = nullptr;
    for (GivenCredit& g : p.given) {
      if (g.state == st && (best == nullptr || age(g) < age(*best))) best = &g;
    }
    if (best != nullptr) return best;
  }
  return nullptr;
}

Status Engine::give_credit(int peer, const RequestPtr& req, void* buf, std::size_t len, std::uint32_t context,
                           std::int32_t tag) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  using State = GivenCredit::State;
  const nic::CreditArm armed{nic::CreditState::kArmed, 0, p.ch->next_seq_in()};
  auto take = [&](GivenCredit& g, std::uint32_t k) {
    g.state = State::kArmed;
    g.req = req;
    g.stamp = ++credit_clock_;
    req->credit_peer = peer;
    req->credit_slot = static_cast<std::int32_t>(k);
  };
  // Staged by prediction for exactly this receive: only the arm word travels.
  for (std::uint32_t k = 0; k < p.given.size(); ++k) {
    GivenCredit& g = p.given[k];
    if (g.state != State::kPending || g.buf != buf || g.cap != len || g.context != context || g.tag != tag) continue;
    // Staged before the program released that memory: the credit names the old pages.
    if (g.pin.stale()) break;
    nic::CreditArm a = armed;
    a.generation = g.generation;
    AUGUR_ASSIGN_OR_RETURN(bool written, p.ch->write_arm(k, a));
    if (!written) return Status::Ok();  // no room in the send queue: this one goes by bounce
    take(g, k);
    ++counters_.credits_armed_ahead;
    return Status::Ok();
  }
  // Re-arming and a new entry both need a free (or staged) slot: with all credits out, bounce
  // without a registration-cache lookup.
  GivenCredit* slot = slot_for_new_entry(p);
  if (slot == nullptr) return Status::Ok();
  Result<nic::RegCache::Handle> pin = recv_cache_->acquire(buf, len);
  if (!pin.ok()) return Status::Ok();  // cannot register (cache full): bounce
  // The sender still holds this buffer's entry from an earlier receive, under the rkey it is
  // registered with now (an rkey names one live region, so the old entry writes where a new
  // one would): re-arm it with a new generation.
  for (std::uint32_t k = 0; k < p.given.size(); ++k) {
    GivenCredit& g = p.given[k];
    if (g.state != State::kFree || !g.at_peer || g.buf != buf || g.cap != len || g.context != context ||
        g.tag != tag || g.rkey != pin->rkey()) {
      continue;
    }
    nic::CreditArm a = armed;
    a.generation = (g.generation + 1) & 0xffffff;
    AUGUR_ASSIGN_OR_RETURN(bool written, p.ch->write_arm(k, a));
    if (!written) return Status::Ok();
    g.generation = a.generation;
    g.pin = std::move(pin.value());
    take(g, k);
    ++counters_.credits_issued;
    ++counters_.credits_rearmed;
    return Status::Ok();
  }
  const auto k = static_cast<std::uint32_t>(slot - p.given.data());
  GivenCredit& g = *slot;
  const std::uint32_t generation = (g.generation + 1) & 0xffffff;
  nic::CreditEntry e;
  e.addr = reinterpret_cast<std::uintptr_t>(buf);
  e.rkey = pin->rkey();
  e.capacity = static_cast<std::uint32_t>(len);
  e.context = context;
  e.tag = tag;
  nic::CreditArm a = armed;
  a.generation = generation;
  e.arm = nic::encode_arm(a);
  AUGUR_ASSIGN_OR_RETURN(bool written, p.ch->write_credit(k, e));
  if (!written) return Status::Ok();
  if (g.state == State::kPending) ++counters_.credits_revoked;  // the staged one it replaces
  ++counters_.credits_issued;
  g = GivenCredit{State::kArmed, generation, req, buf, e.capacity, context, tag, std::move(pin.value()), e.rkey, true, 0};
  take(g, k);
  return Status::Ok();
}

Status Engine::stage_credit(const predictor::RecvCall& call) {
  if (call.source < 0 || call.source == rank_ || call.source >= size_ || call.tag < 0 || call.count == 0 ||
      call.count < cfg_.direct_min || call.count > cfg_.eager_limit) {
    return Status::Ok();
  }
  Peer& p = peers_[static_cast<std::size_t>(call.source)];
  if (p.dead || p.credit_pause > 0) return Status::Ok();
  using State = GivenCredit::State;
  const void* buf = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(call.buffer));
  auto same = [&](const GivenCredit& g) {
    return g.buf == buf && g.cap == call.count && g.context == call.comm && g.tag == call.tag;
  };
  std::uint32_t staged = 0;
  GivenCredit* retained = nullptr;
  for (GivenCredit& g : p.given) {
    // An armed credit for the same buffer belongs to the receive posted now, not the next one.
    if (g.state == State::kPending && same(g) && !g.pin.stale()) return Status::Ok();  // already staged
    if (g.state == State::kPending) ++staged;
    if (g.state == State::kFree && g.at_peer && same(g)) retained = &g;
  }
  if (retained == nullptr && staged >= cfg_.predict_depth) return Status::Ok();
  // A predicted buffer may no longer be mapped: then registration fails and nothing is staged.
  Result<nic::RegCache::Handle> pin = recv_cache_->acquire(buf, call.count);
  if (!pin.ok()) return Status::Ok();
  if (retained != nullptr && retained->rkey == pin->rkey()) {
    retained->stamp = ++credit_clock_;  // the post re-arms it; keep it from being replaced
    return Status::Ok();
  }
  GivenCredit* slot = slot_for_new_entry(p);
  if (slot == nullptr || slot->state != State::kFree || staged >= cfg_.predict_depth) return Status::Ok();
  const auto k = static_cast<std::uint32_t>(slot - p.given.data());
  const std::uint32_t generation = (slot->generation + 1) & 0xffffff;
  nic::CreditEntry e;
  e.addr = call.buffer;
  e.rkey = pin->rkey();
  e.capacity = static_cast<std::uint32_t>(call.count);
  e.context = call.comm;
  e.tag = call.tag;
  e.arm = nic::encode_arm({nic::CreditState::kPending, generation, 0});
  AUGUR_ASSIGN_OR_RETURN(bool written, p.ch->write_credit(k, e));
  if (!written) return Status::Ok();
  ++counters_.credits_issued;
  *slot = GivenCredit{State::kPending, generation, nullptr, buf, e.capacity, call.comm, call.tag, std::move(pin.value()),
                      e.rkey, true, ++credit_clock_};
  return Status::Ok();
}

Status Engine::observe_receive(const void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context) {
  predictor::RecvCall c;
  c.kind = predictor::CallKind::kIrecv;
  c.source = source;
  c.tag = tag;
  c.count = len;
  c.buffer = reinterpret_cast<std::uintptr_t>(buf);
  c.comm = context;
  if (call_of_id_.size() >= kMaxPredictedCalls) {
    // Buffers that never repeat (fresh allocations) would grow the tables without end: start over.
    AUGUR_ASSIGN_OR_RETURN(predictor_, predictor::make_predictor(cfg_.predictor, predictor_options(cfg_)));
    interner_ = predictor::Interner{};
    call_of_id_.clear();
    predicted_.clear();
  }
  const predictor::Event ev = interner_.intern(c);
  if (ev.call == call_of_id_.size()) call_of_id_.push_back(c);
  // Score the prediction made before this call.
  if (predicted_.empty()) {
    ++counters_.pred_abstains;
  } else {
    const bool hit = std::find(predicted_.begin(), predicted_.end(), ev.call) != predicted_.end();
    ++(hit ? counters_.pred_hits : counters_.pred_misses);
    outcomes_ = outcomes_ << 1 | (hit ? 1u : 0u);
    if (++outcome_count_ >= 64) {
      // Prediction that stays wrong costs registrations and credits for nothing: pause it.
      if (std::popcount(outcomes_) < 16) {
        suspended_for_ = 1024;
        ++counters_.pred_suspended;
      }
      outcome_count_ = 0;
    }
  }
  predictor_->observe(ev);
  predicted_.clear();
  if (suspended_for_ > 0) {
    --suspended_for_;
    return Status::Ok();
  }
  predicted_.resize(std::max<std::uint32_t>(1, cfg_.predict_depth));
  predicted_.resize(predictor_->predict_k(predictor::kNoSite, predicted_));
  for (predictor::CallId id : predicted_) {
    if (id < call_of_id_.size()) AUGUR_RETURN_IF_ERROR(stage_credit(call_of_id_[id]));
  }
  return Status::Ok();
}

void Engine::credit_outcome(Peer& p, bool used) {
  if (cfg_.steering != Steering::kPredicted) return;  // posted mode credits every receive it can
  p.credit_outcomes = p.credit_outcomes << 1 | (used ? 1u : 0u);
  if (++p.credit_outcome_count < kWindow) return;
  p.credit_outcome_count = 0;
  if (std::popcount(p.credit_outcomes) >= kMinUsed) {
    p.next_pause = 0;
    return;
  }
  p.credit_pause = p.next_pause == 0 ? kFirstPause : p.next_pause;
  p.next_pause = std::min(kMaxPause, p.credit_pause * 2);
  ++counters_.credit_pauses;
}

void Engine::drop_credit(Request& r) {
  if (r.credit_slot < 0) return;
  Peer& peer = peers_[static_cast<std::size_t>(r.credit_peer)];
  GivenCredit& g = peer.given[static_cast<std::size_t>(r.credit_slot)];
  credit_outcome(peer, false);
  r.credit_peer = r.credit_slot = -1;
  // The message that took the receive was sent after valid_from_seq with the credit's envelope,
  // so the sender holds the credit void: the slot can be given again at once.
  ++counters_.credits_revoked;
  g.state = g.state == GivenCredit::State::kRevoking ? GivenCredit::State::kAwaitAck : GivenCredit::State::kFree;
  g.req.reset();
  g.pin = {};
}

Status Engine::on_direct(int peer, std::uint32_t slot, std::uint32_t length) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  using State = GivenCredit::State;
  if (slot >= p.given.size() || (p.given[slot].state != State::kArmed && p.given[slot].state != State::kRevoking) ||
      length > p.given[slot].cap) {
    return Status(Code::kProtocol, "direct write of " + std::to_string(length) + " bytes for credit " +
                                       std::to_string(slot) + ", which is not armed for that size");
  }
  GivenCredit& g = p.given[slot];
  RequestPtr r = g.req;
  if (!match_.cancel([&](const PostedRecv& pr) { return pr.req == r; })) {
    return Status(Code::kInternal, "direct write for a receive that is no longer posted");
  }
  r->credit_peer = r->credit_slot = -1;
  r->source = peer;
  r->tag = g.tag;
  r->length = length;
  credit_outcome(p, true);
  ++counters_.direct_msgs;
  ++counters_.credits_used;
  finish(*r, Path::kDirect);
  g.state = g.state == State::kRevoking ? State::kAwaitAck : State::kFree;
  g.req.reset();
  g.pin = {};
  return Status::Ok();
}

Status Engine::on_revoke_ack(int peer, std::uint32_t slot, std::uint32_t generation) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  using State = GivenCredit::State;
  if (slot >= p.given.size()) return Status(Code::kProtocol, "revoke ack for credit " + std::to_string(slot));
  GivenCredit& g = p.given[slot];
  if (g.generation != generation || (g.state != State::kRevoking && g.state != State::kAwaitAck)) {
    return Status(Code::kProtocol, "revoke ack for a credit that was not revoked");
  }
  if (g.state == State::kRevoking) {  // nothing came through the credit: the cancel succeeds
    RequestPtr r = g.req;
    if (match_.cancel([&](const PostedRecv& pr) { return pr.req == r; })) {
      r->credit_peer = r->credit_slot = -1;
      r->cancelled = true;
      finish(*r, Path::kNone);
    }
    ++counters_.credits_revoked;
  }
  g.state = State::kFree;
  g.req.reset();
  g.pin = {};
  return Status::Ok();
}

std::optional<std::pair<std::uint32_t, nic::CreditEntry>> Engine::usable_credit(Peer& p, std::uint32_t context,
                                                                                 std::int32_t tag, std::size_t length) const {
  const auto last = p.last_sent.find(envelope_key(context, tag));
  for (std::uint32_t k = 0; k < p.ch->credit_slots(); ++k) {
    if (p.ch->arm_word(k) == p.dead_arm[k]) continue;  // free (0), or known void
    std::optional<Channel::Credit> c = p.ch->armed_credit(k);
    if (!c) continue;
    if (p.revoked[k] == c->arm.generation + 1) {
      p.dead_arm[k] = c->arm_word;
      continue;
    }
    if (c->entry.context != context || c->entry.tag != tag || c->entry.capacity < length) continue;
    // Void when a message with this envelope went out since the receive was posted: that
    // message takes the receive. For good: the envelope's last sequence number only grows.
    if (last != p.last_sent.end() && seq_at_or_after(last->second, c->arm.valid_from_seq)) {
      p.dead_arm[k] = c->arm_word;
      continue;
    }
    return std::make_pair(k, c->entry);
  }
  return std::nullopt;
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
  if (msg.type == nic::MsgType::kEager) {
    if (layout) {
      scatter(msg.payload.data(), n, r.runs);  // never past the layout
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
  p.read_queue.push_back(PendingRead{recv.req, layout ? nullptr : static_cast<std::byte*>(recv.buf), n, msg.remote, msg.seq,
                                     std::move(msg.remote_runs)});
  return start_reads(msg.peer);
}

AUGUR_COLD_PATH Status Engine::start_reads(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.posting >= 0) {  // a layout read's READs first: they hold registrations until the FIN
    const auto cookie = static_cast<std::uint32_t>(p.posting);
    AUGUR_RETURN_IF_ERROR(post_layout_reads(peer, *reads_[cookie], cookie));
    if (p.posting >= 0) return Status::Ok();  // no room yet
  }
  while (!p.read_queue.empty() && p.reads_in_flight < Channel::kMaxReads) {
    PendingRead pr = std::move(p.read_queue.front());
    p.read_queue.pop_front();
    if (pr.n == 0) {  // nothing to move (empty or zero-size buffer): answer at once
      ++counters_.rndv_msgs;
      finish(*pr.req, Path::kRendezvous, pr.req->status);
      queue_fin(peer, pr.rts_seq);
      continue;
    }
    if (!pr.remote_runs.empty() || !pr.req->runs.empty()) {
      AUGUR_RETURN_IF_ERROR(start_layout_read(peer, pr));
      if (p.posting >= 0) break;  // the rest of its READs when room frees
      continue;
    }
    Result<nic::RegCache::Handle> got = recv_cache_->acquire(pr.buf, pr.n);
    if (!got.ok()) {  // e.g. the cache's bound: this receive fails, the sender is released, the job goes on
      finish(*pr.req, Path::kNone, got.status().context("registering the receive buffer for a rendezvous READ"));
      queue_fin(peer, pr.rts_seq);
      continue;
    }
    nic::RegCache::Handle pin = std::move(got.value());
    auto it = std::find(reads_.begin(), reads_.end(), nullptr);
    const auto cookie = static_cast<std::uint32_t>(it - reads_.begin());
    const nic::Sge sge{reinterpret_cast<std::uintptr_t>(pr.buf), static_cast<std::uint32_t>(pr.n), pin.lkey()};
    AUGUR_RETURN_IF_ERROR(p.ch->post_read(cookie, sge, pr.remote.addr, pr.remote.rkey));
    auto rd = std::make_unique<Read>(Read{pr.req, std::move(pin), peer, pr.rts_seq, {}, {}, 0, 1});
    if (it == reads_.end()) {
      reads_.push_back(std::move(rd));
    } else {
      *it = std::move(rd);
    }
    ++p.reads_in_flight;
  }
  return Status::Ok();
}

void Engine::queue_fin(int peer, std::uint32_t rts_seq) {
  OutMsg fin{};
  fin.type = nic::MsgType::kFin;
  fin.length = rts_seq;
  peers_[static_cast<std::size_t>(peer)].out.push_front(std::move(fin));  // not matched: may pass data
}

void Engine::queue_control(int peer, nic::MsgType type, std::uint32_t slot, std::uint32_t generation) {
  OutMsg c{};
  c.type = type;
  c.context = slot;
  c.length = generation;
  peers_[static_cast<std::size_t>(peer)].out.push_front(std::move(c));  // not matched: may pass data
}

AUGUR_HOT_PATH Result<Path> Engine::send_eager(Peer& p, std::uint32_t context, std::int32_t tag, const void* user,
                                std::uint32_t length, std::span<const IoRun> runs) {
  const std::uint32_t seq = p.ch->next_seq();
  const std::span<const std::byte> body(static_cast<const std::byte*>(user), runs.empty() ? length : 0);
  auto bounce = [&]() -> Result<bool> {
    return runs.empty() ? p.ch->try_send(nic::MsgType::kEager, context, tag, length, body)
                        : p.ch->try_send_gather(context, tag, length, runs);
  };
  // Only a sender that may use credits needs to know what it sent last per envelope.
  if (cfg_.steering == Steering::kOff) {
    AUGUR_ASSIGN_OR_RETURN(bool sent, bounce());
    return sent ? Path::kBounce : Path::kNone;
  }
  Path path = Path::kNone;
  // Below direct_min the copy is cheaper than a direct write; bouncing is always safe (the
  // receiver then holds any credit for this envelope void).
  if (auto credit = length >= cfg_.direct_min ? usable_credit(p, context, tag, length) : std::nullopt) {
    AUGUR_ASSIGN_OR_RETURN(bool sent, runs.empty() ? p.ch->try_send_direct(credit->first, credit->second, body)
                                                   : p.ch->try_send_direct_gather(credit->first, credit->second, length, runs));
    if (!sent) return Path::kNone;
    ++counters_.direct_sends;
    path = Path::kDirect;
  } else {
    AUGUR_ASSIGN_OR_RETURN(bool sent, bounce());
    if (!sent) return Path::kNone;
    path = Path::kBounce;
  }
  p.last_sent[envelope_key(context, tag)] = seq;
  return path;
}

Status Engine::push_sends(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  while (!p.out.empty() && !p.dead) {
    OutMsg& m = p.out.front();
    if (m.type == nic::MsgType::kEager) {
      AUGUR_ASSIGN_OR_RETURN(Path path, send_eager(p, m.context, m.tag, m.user, m.length,
                                                   m.gather ? std::span<const IoRun>(m.req->runs) : std::span<const IoRun>()));
      if (path == Path::kNone) break;  // out of credits: the rest waits, in order
      finish(*m.req, path);            // copied into the send slot: the user buffer is free
      p.out.pop_front();
      continue;
    }
    const std::uint32_t seq = p.ch->next_seq();
    AUGUR_ASSIGN_OR_RETURN(bool sent, p.ch->try_send(m.type, m.context, m.tag, m.length, m.body));
    if (!sent) break;
    if (m.type == nic::MsgType::kRts || m.type == nic::MsgType::kRtsRuns) {
      if (cfg_.steering != Steering::kOff) p.last_sent[envelope_key(m.context, m.tag)] = seq;
      p.awaiting_fin.emplace_back(seq, std::move(m));
    }
    p.out.pop_front();
  }
  return Status::Ok();
}

Status Engine::on_fin(int peer, std::uint32_t rts_seq) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  auto it = std::find_if(p.awaiting_fin.begin(), p.awaiting_fin.end(), [&](const auto& e) { return e.first == rts_seq; });
  if (it == p.awaiting_fin.end()) {
    return Status(Code::kProtocol, "FIN from rank " + std::to_string(peer) + " for unknown RTS " + std::to_string(rts_seq));
  }
  finish(*it->second.req, Path::kRendezvous);
  p.awaiting_fin.erase(it);  // unpins the send buffer
  return Status::Ok();
}

AUGUR_HOT_PATH void Engine::deliver_eager(int peer, const Arrival& a) {
  const nic::MsgHeader& h = a.header;
  ++counters_.bounce_msgs;
  Incoming in{};
  in.peer = peer;
  in.type = nic::MsgType::kEager;
  in.slot = a.slot;
  in.payload = a.payload;
  in.length = h.length;
  if (auto r = match_.arrive({h.context, peer, h.tag}, std::move(in))) {  // moved only when queued
    Status st = match_and_start(*r, in, h.tag);
    if (!st.ok() && deferred_.ok()) deferred_ = st.context("from rank " + std::to_string(peer));
  } else {
    ++counters_.unexpected_msgs;  // stays in its slot until a receive matches it
  }
}

void Engine::deliver(int peer, const Arrival& a) {
  Channel& ch = *peers_[static_cast<std::size_t>(peer)].ch;
  const nic::MsgHeader& h = a.header;
  Status st;
  switch (h.type) {
    case nic::MsgType::kEager:  // progress_once calls deliver_eager itself; here for completeness
      deliver_eager(peer, a);
      break;
    case nic::MsgType::kRts: {
      Result<nic::RemoteBuffer> rb = nic::parse_remote_buffer(a.payload);
      st = ch.release(a.slot);  // everything needed is copied out of the slot
      if (!rb.ok() || rb->length != h.length) {
        st = rb.ok() ? Status(Code::kProtocol, "RTS length differs from its buffer") : rb.status();
        break;
      }
      ++counters_.rndv_msgs;
      Incoming in{};
      in.peer = peer;
      in.type = nic::MsgType::kRts;
      in.remote = rb.value();
      in.seq = h.seq;
      in.length = h.length;
      if (auto r = match_.arrive({h.context, peer, h.tag}, std::move(in))) {  // moved only when queued
        st = match_and_start(*r, in, h.tag);
      } else {
        ++counters_.unexpected_msgs;
      }
      break;
    }
    case nic::MsgType::kRtsRuns: {
      // Validated whole before anything is matched: a bad list writes nothing.
      Result<std::vector<nic::RemoteRun>> runs =
          nic::parse_run_list(a.payload, h.length, nic::max_remote_runs(cfg_.eager_limit));
      st = ch.release(a.slot);
      if (!runs.ok()) {
        st = runs.status();
        break;
      }
      ++counters_.rndv_msgs;
      Incoming in{};
      in.peer = peer;
      in.type = nic::MsgType::kRtsRuns;
      in.remote_runs = std::move(runs.value());
      in.remote.length = h.length;
      in.seq = h.seq;
      in.length = h.length;
      if (auto r = match_.arrive({h.context, peer, h.tag}, in)) {  // a copy: `in` is used if it matches
        st = match_and_start(*r, in, h.tag);
      } else {
        ++counters_.unexpected_msgs;
      }
      break;
    }
    case nic::MsgType::kFin:
      st = ch.release(a.slot);
      if (st.ok()) st = on_fin(peer, h.length);
      break;
    case nic::MsgType::kCredit:
      st = ch.release(a.slot);
      break;
    case nic::MsgType::kDirect:
      st = ch.release(a.slot);
      if (st.ok()) st = on_direct(peer, h.context, h.length);
      break;
    case nic::MsgType::kRevoke:  // from now on the credit is not ours to use; any write through it is already queued
      st = ch.release(a.slot);
      if (h.context >= peers_[static_cast<std::size_t>(peer)].revoked.size()) {
        st = Status(Code::kProtocol, "revoke of credit " + std::to_string(h.context));
        break;
      }
      peers_[static_cast<std::size_t>(peer)].revoked[h.context] = h.length + 1;
      queue_control(peer, nic::MsgType::kRevokeAck, h.context, h.length);
      break;
    case nic::MsgType::kRevokeAck:
      st = ch.release(a.slot);
      if (st.ok()) st = on_revoke_ack(peer, h.context, h.length);
      break;
    case nic::MsgType::kEagerShort:  // wire only: parse_message hands it over as kEager
      st = ch.release(a.slot);
      if (st.ok()) st = Status(Code::kInternal, "a short eager header reached delivery");
      break;
  }
  if (st.ok()) return;
  if (st.code() == Code::kProtocol) {
    // A peer that breaks the protocol cannot be trusted with anything further: fail it, so that
    // every request that involves it ends with the reason and the program is told.
    st = fail_peer(peer, malformed(peer, st));
  }
  if (deferred_.ok()) deferred_ = st.context("from rank " + std::to_string(peer));
}

Status Engine::fail_peer(int peer, const Status& why) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.dead) return why;
  p.dead = true;
  dead_[static_cast<std::size_t>(peer)].store(true, std::memory_order_release);
  for (OutMsg& m : p.out) {
    if (m.req) finish(*m.req, Path::kNone, why);
  }
  for (auto& [seq, m] : p.awaiting_fin) finish(*m.req, Path::kNone, why);
  for (PendingRead& pr : p.read_queue) finish(*pr.req, Path::kNone, why);
  p.out.clear();
  p.awaiting_fin.clear();
  p.read_queue.clear();
  p.posting = -1;
  for (auto& rd : reads_) {
    if (rd && rd->peer == peer) {
      finish(*rd->req, Path::kNone, why);
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
  for (GivenCredit& g : p.given) g = GivenCredit{GivenCredit::State::kFree, g.generation, nullptr, nullptr, 0, 0, 0, {}, 0, false, 0};
  return why;
}

Status Engine::progress() {
  if (assist_) {  // the assist thread makes progress; report what it found since the last call
    std::lock_guard lock(assist_error_mu_);
    return std::exchange(assist_error_, Status::Ok());
  }
  return progress_once();
}

void Engine::keep_assist_error(const Status& st) {
  std::lock_guard lock(assist_error_mu_);
  if (assist_error_.ok()) assist_error_ = st;  // the first is the cause; the rest follow from it
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
  std::span<nic::Completion> wc(wc_);  // a member: no per-poll initialisation on the hot path
  AUGUR_ASSIGN_OR_RETURN(std::size_t n, cq_->poll(wc));
  idle_polls_ = n == 0 ? idle_polls_ + 1 : 0;
  for (std::size_t i = 0; i < n; ++i) {
    const nic::Completion& c = wc[i];
    auto pit = peer_of_qp_.find(c.qp_num);
    if (pit == peer_of_qp_.end()) return Status(Code::kInternal, "completion for an unknown QP");
    const int peer = pit->second;
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    Status st;
    if ((c.wr_id >> 32) == Channel::kReadKind) {
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
    } else {
      Result<std::optional<Arrival>> a = p.ch->on_completion(c);
      if (!a.ok()) {
        st = a.status();
      } else if (a->has_value() && p.dead) {
        st = p.ch->release((*a)->slot);  // nothing from a failed peer is delivered
      } else if (a->has_value()) {
        if ((*a)->header.type == nic::MsgType::kEager) {
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
  for (int peer = 0; peer < size_; ++peer) {
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    if (!p.ch || p.dead) continue;
    Status st = push_sends(peer);
    // Credits ride on our messages; only a receiver that stays quiet writes them out.
    if (st.ok() && idle_polls_ >= kIdlePollsBeforeCreditFlush) st = p.ch->flush_credits();
    if (!st.ok() && first_error.ok()) first_error = fail_peer(peer, unreachable(peer, st));
  }
  if (!deferred_.ok()) {
    if (first_error.ok()) first_error = deferred_;
    deferred_ = Status::Ok();
  }
  return first_error;
}

Status Engine::wait(const RequestPtr& r, int timeout_ms) {
  if (assist_) return wait_assisted(r, timeout_ms);
  // Done already (an eager send), or by the first poll: no clock read, which is a system call
  // on some clock sources (hpet under qemu: 1 us) and would delay the caller's next message.
  if (r->done.load(std::memory_order_acquire)) return r->status;
  Status last = progress_once();
  if (r->done.load(std::memory_order_acquire)) return r->status;
  using std::chrono::steady_clock;
  const auto start = steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  const auto spin = std::chrono::microseconds(cfg_.wait == WaitPolicy::kBlock ? 0 : cfg_.spin_us);
  auto last_progress = start;
  const bool sleepy = cfg_.wait != WaitPolicy::kSpin;
  // The clock is read every `check_every` polls, not every poll: a read can be a system call
  // (hpet under qemu: ~1 us), and a completion that lands during one waits for it. An idle poll
  // takes well under 1 us, so spin_us/4 polls overshoot the spin by less than a quarter.
  const std::uint32_t check_every =
      cfg_.wait == WaitPolicy::kBlock ? 8 : std::clamp<std::uint32_t>(sleepy ? cfg_.spin_us / 4 : 256, 8, 256);
  for (std::uint32_t spins = 1; !r->done; ++spins) {
    Status st = progress_once();
    if (!st.ok()) last = st;
    if (r->done) break;
    if (idle_polls_ == 0) last_progress = steady_clock::time_point{};  // found work: restart the spin
    if (spins % check_every != 0) continue;
    const auto now = steady_clock::now();
    if (last_progress == steady_clock::time_point{}) last_progress = now;
    if (now - last_check_ > std::chrono::milliseconds(cfg_.keepalive_ms)) {
      last_check_ = now;
      if (Status alive = check_peers(); !alive.ok()) last = alive;
    }
    if (now > deadline) {
      return Status(Code::kTimeout, "request not done within " + std::to_string(timeout_ms) + " ms" +
                                        (last.ok() ? "" : " (last error: " + last.to_string() + ")"));
    }
    if (sleepy && now - last_progress >= spin) {
      // Sleeping also lets a soft device (rxe) do its work in the kernel, which busy polling
      // on every CPU would starve. Wake at least at the next liveness check.
      const auto until = std::min(deadline, last_check_ + std::chrono::milliseconds(cfg_.keepalive_ms));
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
      if (Status sl = sleep_for_completion(static_cast<int>(ms)); !sl.ok()) last = sl;
      last_progress = steady_clock::time_point{};
    }
  }
  return r->status;
}

Status Engine::relax(int max_ms) {
  using std::chrono::steady_clock;
  const bool busy = idle_polls_ == 0;  // the last poll found work: keep polling
  if (busy) relax_idle_since_ = steady_clock::time_point{};
  if (assist_ || cfg_.wait == WaitPolicy::kSpin || busy) {
    if ((++relax_calls_ & 15) == 0) sched_yield();  // oversubscribed ranks share cores
    return Status::Ok();
  }
  const auto now = steady_clock::now();
  if (relax_idle_since_ == steady_clock::time_point{}) relax_idle_since_ = now;
  if (cfg_.wait == WaitPolicy::kHybrid && now - relax_idle_since_ < std::chrono::microseconds(cfg_.spin_us)) {
    if ((++relax_calls_ & 15) == 0) sched_yield();
    return Status::Ok();
  }
  relax_idle_since_ = steady_clock::time_point{};
  return sleep_for_completion(std::max(1, std::min(max_ms, static_cast<int>(cfg_.keepalive_ms))));
}

Status Engine::sleep_for_completion(int timeout_ms) {
  for (const Peer& p : peers_) {
    // Queued sends wait for credits, which a peer may return by RDMA WRITE alone: no completion
    // would wake us, so sleep briefly (rare: a flood against a holding receiver).
    if (!p.out.empty() && !p.dead) timeout_ms = std::min(timeout_ms, 1);
  }
  AUGUR_RETURN_IF_ERROR(cq_->request_notify());
  // A completion that arrived before the request raised no event: look once more.
  AUGUR_RETURN_IF_ERROR(progress_once());
  if (idle_polls_ == 0) return Status::Ok();
  // The assist thread is also woken by commands (wake_fd_); an application thread only by the CQ.
  pollfd fds[2] = {{events_->fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  const int rc = ::poll(fds, assist_ ? 2 : 1, timeout_ms);
  if (rc < 0 && errno != EINTR) return errno_status(errno, "poll(completion channel)");
  if (rc > 0 && (fds[0].revents & POLLIN) != 0) AUGUR_RETURN_IF_ERROR(cq_->consume_event(*events_));
  if (rc > 0 && assist_ && (fds[1].revents & POLLIN) != 0) {
    std::uint64_t n = 0;
    (void)!::read(wake_fd_, &n, sizeof n);
  }
  return Status::Ok();
}

Result<bool> Engine::test(const RequestPtr& r) {
  if (assist_) return r->done.load(std::memory_order_acquire);
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
    GivenCredit& g = peers_[static_cast<std::size_t>(r->credit_peer)].given[static_cast<std::size_t>(r->credit_slot)];
    if (g.state == GivenCredit::State::kArmed) {
      g.state = GivenCredit::State::kRevoking;
      OutMsg c{};
      c.type = nic::MsgType::kRevoke;
      c.context = static_cast<std::uint32_t>(r->credit_slot);
      c.length = g.generation;
      peers_[static_cast<std::size_t>(r->credit_peer)].out.push_back(std::move(c));
      (void)push_sends(r->credit_peer);
    }
    return true;
  }
  if (!match_.cancel([&](const PostedRecv& p) { return p.req == r; })) return false;
  r->cancelled = true;
  finish(*r, Path::kNone);
  return true;
}

Status Engine::check_peers() {
  // A dying process closes its bootstrap connection; the server tells everyone which rank it
  // was. (RC retries cannot be relied on: rxe never times out a send to a vanished QP.)
  int dead = -1;
  Status st = boot_.check_alive(&dead);
  if (st.ok()) return st;
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_ || (dead >= 0 && peer != dead)) continue;
    (void)fail_peer(peer, st);
  }
  return st;
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

Result<RequestPtr> Engine::imrecv(std::uint64_t message, void* buf, std::size_t len) {
  if (buf == nullptr && len > 0) return Status(Code::kInvalidArgument, "null receive buffer with a non-zero count");
  return receive_taken(message, std::make_shared<Request>(), buf, len);
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
    if (predictor_) {  // a receive call, but its message is already here: nothing to predict
      ++counters_.pred_abstains;
      predicted_.clear();
    }
    st = match_and_start(recv, m.msg, m.envelope.tag);
    if (!st.ok() && !req->done) finish(*req, Path::kNone, st);
  });
  AUGUR_RETURN_IF_ERROR(st);
  return req;
}

// ---- Non-contiguous layouts (isendv/irecvv; docs/runtime.md) ----

namespace {

// Zero-length runs dropped, adjacent runs merged: the fewest runs for the same message.
Result<std::vector<IoRun>> normalize(std::span<const IoRun> runs) {
  std::vector<IoRun> out;
  out.reserve(runs.size());
  std::uint64_t total = 0;
  for (const IoRun& r : runs) {
    if (r.length == 0) continue;
    if (r.addr == nullptr) return Status(Code::kInvalidArgument, "null run address with a non-zero length");
    total += r.length;
    if (total > 0xffffffffu) return Status(Code::kInvalidArgument, "messages are limited to 4 GiB - 1 bytes");
    if (!out.empty() && out.back().addr + out.back().length == r.addr) {
      out.back().length += r.length;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// A receive layout: normalized, and within the scatter limit when it is not one run.
Result<std::vector<IoRun>> receive_runs(std::span<const IoRun> runs, std::uint32_t max_runs) {
  AUGUR_ASSIGN_OR_RETURN(std::vector<IoRun> norm, normalize(runs));
  if (norm.size() > 1 && norm.size() > max_runs) {
    return Status(Code::kInvalidArgument, std::to_string(norm.size()) + " runs exceed the scatter limit of " +
                                              std::to_string(max_runs) + ": receive packed");
  }
  return norm;
}

struct PinnedLayout {
  std::vector<nic::RegCache::Handle> pins;
  std::vector<std::uint32_t> keys;  // per run: lkey or rkey
};

// Registers a layout: its covering range in one region when that range is not much more than
// the data (one key, one cache entry), else run by run (gaps may be unmapped or huge).
Result<PinnedLayout> pin_layout(nic::RegCache& cache, std::span<const IoRun> runs, bool remote) {
  PinnedLayout out;
  std::byte* lo = runs[0].addr;
  std::byte* hi = runs[0].addr + runs[0].length;
  std::size_t total = 0;
  for (const IoRun& r : runs) {
    lo = std::min(lo, r.addr);
    hi = std::max(hi, r.addr + r.length);
    total += r.length;
  }
  const auto span = static_cast<std::size_t>(hi - lo);
  if (span <= std::max<std::size_t>(4 * total, std::size_t{1} << 20)) {
    if (Result<nic::RegCache::Handle> h = cache.acquire(lo, span); h.ok()) {
      out.keys.assign(runs.size(), remote ? h->rkey() : h->lkey());
      out.pins.push_back(std::move(h.value()));
      return out;
    }
  }
  for (const IoRun& r : runs) {
    AUGUR_ASSIGN_OR_RETURN(nic::RegCache::Handle h, cache.acquire(r.addr, r.length));
    out.keys.push_back(remote ? h.rkey() : h.lkey());
    out.pins.push_back(std::move(h));
  }
  return out;
}

}  // namespace

Result<std::vector<std::byte>> Engine::run_list_rts(std::span<const IoRun> runs, std::size_t len,
                                                    std::vector<nic::RegCache::Handle>& pins) {
  AUGUR_ASSIGN_OR_RETURN(PinnedLayout pinned, pin_layout(*send_cache_, runs, true));
  std::vector<nic::RemoteRun> remote(runs.size());
  for (std::size_t i = 0; i < remote.size(); ++i) {
    remote[i] = {reinterpret_cast<std::uintptr_t>(runs[i].addr), static_cast<std::uint32_t>(runs[i].length), pinned.keys[i]};
  }
  std::vector<std::byte> body(nic::run_list_bytes(remote.size()));
  nic::encode_run_list(len, remote, body);
  pins = std::move(pinned.pins);
  return body;
}

std::uint32_t Engine::max_layout_runs() const noexcept {
  return std::min(cfg_.sge_max_runs, nic::max_remote_runs(cfg_.eager_limit));
}

Result<RequestPtr> Engine::isendv(std::span<const IoRun> runs, int dest, std::int32_t tag, std::uint32_t context,
                                  bool synchronous) {
  AUGUR_RETURN_IF_ERROR(check_send(dest, tag));
  AUGUR_ASSIGN_OR_RETURN(std::vector<IoRun> norm, normalize(runs));
  if (norm.size() <= 1) {
    return norm.empty() ? isend(nullptr, 0, dest, tag, context, synchronous)
                        : isend(norm[0].addr, norm[0].length, dest, tag, context, synchronous);
  }
  if (norm.size() > max_layout_runs()) {
    return Status(Code::kInvalidArgument, std::to_string(norm.size()) + " runs exceed the gather limit of " +
                                              std::to_string(max_layout_runs()) + ": pack them");
  }
  const std::size_t len = layout_bytes(norm);
  auto req = std::make_shared<Request>();
  req->runs = std::move(norm);
  if (assist_) {
    enqueue(new Command{{}, Command::Kind::kSendV, req, nullptr, nullptr, len, dest, tag, context, {}, nullptr, synchronous});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_send(req, nullptr, len, dest, tag, context, synchronous));
  return req;
}

Result<RequestPtr> Engine::irecvv(std::span<const IoRun> runs, int source, std::int32_t tag, std::uint32_t context) {
  AUGUR_RETURN_IF_ERROR(check_recv(source, tag));
  AUGUR_ASSIGN_OR_RETURN(std::vector<IoRun> norm, receive_runs(runs, max_layout_runs()));
  if (norm.size() <= 1) {
    return norm.empty() ? irecv(nullptr, 0, source, tag, context) : irecv(norm[0].addr, norm[0].length, source, tag, context);
  }
  auto req = std::make_shared<Request>();
  req->runs = std::move(norm);
  if (assist_) {
    enqueue(new Command{{}, Command::Kind::kRecvV, req, nullptr, nullptr, 0, source, tag, context, {}, nullptr});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_recv_layout(req, source, tag, context));
  return req;
}

Result<RequestPtr> Engine::imrecvv(std::uint64_t message, std::span<const IoRun> runs) {
  AUGUR_ASSIGN_OR_RETURN(std::vector<IoRun> norm, receive_runs(runs, max_layout_runs()));
  if (norm.size() <= 1) return norm.empty() ? imrecv(message, nullptr, 0) : imrecv(message, norm[0].addr, norm[0].length);
  auto req = std::make_shared<Request>();
  req->runs = std::move(norm);
  void* first = req->runs[0].addr;
  const std::size_t total = layout_bytes(req->runs);
  return receive_taken(message, req, first, total);
}

Status Engine::start_recv_layout(const RequestPtr& req, int source, std::int32_t tag, std::uint32_t context) {
  if (source >= 0 && source != rank_ && peers_[static_cast<std::size_t>(source)].dead) {
    finish(*req, Path::kNone, Status(Code::kPeerFailure, "rank " + std::to_string(source) + " is gone"));
    return Status::Ok();
  }
  // Never credited: a direct write targets one remote range.
  PostedRecv recv{req, req->runs[0].addr, layout_bytes(req->runs), source};
  if (auto m = match_.post({context, source, tag}, recv)) AUGUR_RETURN_IF_ERROR(match_and_start(recv, m->msg, m->envelope.tag));
  // Seen by the predictor (its cycles include this call) with no size, so nothing is staged for it.
  if (predictor_) AUGUR_RETURN_IF_ERROR(observe_receive(recv.buf, 0, source, tag, context));
  return Status::Ok();
}

Status Engine::start_layout_read(int peer, PendingRead& pr) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  std::vector<nic::RemoteRun> remote = std::move(pr.remote_runs);
  if (remote.empty()) remote.push_back({pr.remote.addr, static_cast<std::uint32_t>(pr.remote.length), pr.remote.rkey});
  const std::vector<IoRun> one{{pr.buf, pr.n}};
  const std::span<const IoRun> local = pr.req->runs.empty() ? std::span<const IoRun>(one) : std::span<const IoRun>(pr.req->runs);
  Result<PinnedLayout> pinned = pin_layout(*recv_cache_, local, false);
  if (!pinned.ok()) {  // this receive fails (nothing read); the sender is released
    finish(*pr.req, Path::kNone, pinned.status().context("registering the receive layout"));
    queue_fin(peer, pr.rts_seq);
    return Status::Ok();
  }
  auto rd = std::make_unique<Read>(Read{pr.req, {}, peer, pr.rts_seq, {}, {}, 0, 1});
  rd->plan = plan_reads(remote, local, pinned->keys, pr.n, p.ch->max_sge());
  std::size_t planned = 0;
  for (const nic::Sge& s : rd->plan.sges) planned += s.length;
  if (planned != pr.n) {
    return Status(Code::kInternal, "read plan covers " + std::to_string(planned) + " of " + std::to_string(pr.n) + " bytes");
  }
  rd->pins = std::move(pinned->pins);
  rd->left = static_cast<std::uint32_t>(rd->plan.wrs.size());
  auto it = std::find(reads_.begin(), reads_.end(), nullptr);
  const auto cookie = static_cast<std::uint32_t>(it - reads_.begin());
  if (it == reads_.end()) {
    reads_.push_back(std::move(rd));
  } else {
    *it = std::move(rd);
  }
  p.posting = cookie;
  return post_layout_reads(peer, *reads_[cookie], cookie);
}

Status Engine::post_layout_reads(int peer, Read& rd, std::uint32_t cookie) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  while (rd.posted < rd.plan.wrs.size() && p.reads_in_flight < Channel::kMaxReads) {
    const ReadWr& w = rd.plan.wrs[rd.posted];
    AUGUR_RETURN_IF_ERROR(p.ch->post_read(cookie, std::span<const nic::Sge>(rd.plan.sges).subspan(w.first, w.count),
                                          w.remote_addr, w.rkey));
    ++rd.posted;
    ++p.reads_in_flight;
  }
  if (rd.posted == rd.plan.wrs.size()) p.posting = -1;
  return Status::Ok();
}

Result<bool> Engine::send_raw_message_for_test(int peer, nic::MsgType type, std::uint32_t context, std::int32_t tag,
                                               std::uint32_t length, std::span<const std::byte> body) {
  if (assist_ || peer == rank_ || peer < 0 || peer >= size_) return Status(Code::kInvalidArgument, "raw message");
  return peers_[static_cast<std::size_t>(peer)].ch->try_send(type, context, tag, length, body);
}

Status Engine::force_qp_error_for_test(int peer) {
  if (assist_ || peer == rank_ || peer < 0 || peer >= size_) return Status(Code::kInvalidArgument, "QP error injection");
  return peers_[static_cast<std::size_t>(peer)].ch->force_error_for_test();
}

Result<EngineConfig> engine_config_from_settings() {
  EngineConfig c;
  AUGUR_ASSIGN_OR_RETURN(std::int64_t slots, setting_int("AUGUR_SLOTS", 2, 32767));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t eager, setting_int("AUGUR_EAGER_LIMIT", 64, 1 << 20));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t keepalive, setting_int("AUGUR_KEEPALIVE_MS", 10, 3'600'000));
  c.slots = static_cast<std::uint32_t>(slots);
  c.eager_limit = static_cast<std::uint32_t>(eager);
  c.keepalive_ms = static_cast<std::uint32_t>(keepalive);
  AUGUR_ASSIGN_OR_RETURN(std::string steering, setting_string("AUGUR_STEERING"));
  if (steering == "off") {
    c.steering = Steering::kOff;
  } else if (steering == "posted") {
    c.steering = Steering::kPosted;
  } else if (steering == "predicted") {
    c.steering = Steering::kPredicted;
  } else {
    return Status(Code::kInvalidArgument, "AUGUR_STEERING=" + steering + ": expected off, posted or predicted");
  }
  AUGUR_ASSIGN_OR_RETURN(std::int64_t credits, setting_int("AUGUR_CREDITS", 1, nic::kMaxCreditSlots));
  c.credit_slots = static_cast<std::uint32_t>(credits);
  AUGUR_ASSIGN_OR_RETURN(c.predictor, setting_string("AUGUR_PREDICTOR"));
  const auto names = predictor::predictor_names();
  if (std::find(names.begin(), names.end(), c.predictor) == names.end()) {
    return Status(Code::kInvalidArgument, "AUGUR_PREDICTOR=" + c.predictor + ": not a predictor name (see docs/predictor.md)");
  }
  AUGUR_ASSIGN_OR_RETURN(std::int64_t depth, setting_int("AUGUR_PREDICT_DEPTH", 1, 16));
  c.predict_depth = static_cast<std::uint32_t>(depth);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t stats, setting_int("AUGUR_STATS", 0, 1));
  c.stats = stats == 1;
  AUGUR_ASSIGN_OR_RETURN(std::string wait, setting_string("AUGUR_WAIT"));
  if (wait == "spin") {
    c.wait = WaitPolicy::kSpin;
  } else if (wait == "block") {
    c.wait = WaitPolicy::kBlock;
  } else if (wait == "hybrid") {
    c.wait = WaitPolicy::kHybrid;
  } else {
    return Status(Code::kInvalidArgument, "AUGUR_WAIT=" + wait + ": expected spin, block or hybrid");
  }
  AUGUR_ASSIGN_OR_RETURN(std::int64_t spin_us, setting_int("AUGUR_SPIN_US", 0, 10'000'000));
  c.spin_us = static_cast<std::uint32_t>(spin_us);
  AUGUR_ASSIGN_OR_RETURN(std::string assist, setting_string("AUGUR_ASSIST"));
  if (assist == "on") {
    c.assist = EngineConfig::Assist::kOn;
  } else if (assist == "off") {
    c.assist = EngineConfig::Assist::kOff;
  } else if (assist == "auto") {
    c.assist = EngineConfig::Assist::kAuto;
  } else {
    return Status(Code::kInvalidArgument, "AUGUR_ASSIST=" + assist + ": expected on, off or auto");
  }
  AUGUR_ASSIGN_OR_RETURN(std::int64_t core, setting_int("AUGUR_ASSIST_CORE", -1, 65535));
  c.assist_core = static_cast<int>(core);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t sge_runs, setting_int("AUGUR_SGE_MAX_RUNS", 0, 65536));
  c.sge_max_runs = static_cast<std::uint32_t>(sge_runs);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t direct_min, setting_int("AUGUR_DIRECT_MIN", 1, 1 << 20));
  c.direct_min = static_cast<std::uint32_t>(direct_min);
  return c;
}

}  // namespace augur::host
