#include "augur/host/engine.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "augur/nic/endpoint.h"
#include "augur/settings.h"

namespace augur::host {

namespace {

constexpr std::size_t kAddressBytes = sizeof(nic::QpAddress) + sizeof(nic::RemoteBuffer);

std::string encode_address(const Channel::Address& a) {
  std::string s(kAddressBytes, '\0');
  auto* p = reinterpret_cast<std::byte*>(s.data());
  nic::encode(a.qp, std::span<std::byte, sizeof(nic::QpAddress)>(p, sizeof(nic::QpAddress)));
  nic::encode(a.credit_word, std::span<std::byte, sizeof(nic::RemoteBuffer)>(p + sizeof(nic::QpAddress), sizeof(nic::RemoteBuffer)));
  return s;
}

Result<Channel::Address> decode_address(const std::string& s) {
  if (s.size() != kAddressBytes) return Status(Code::kProtocol, "channel address of the wrong size");
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  Channel::Address a;
  AUGUR_ASSIGN_OR_RETURN(a.qp, nic::parse_qp_address({p, sizeof(nic::QpAddress)}));
  AUGUR_ASSIGN_OR_RETURN(a.credit_word, nic::parse_remote_buffer({p + sizeof(nic::QpAddress), sizeof(nic::RemoteBuffer)}));
  return a;
}

void complete(Request& r, Path path, Status st = Status::Ok()) {
  r.path = path;
  r.status = std::move(st);
  r.done = true;
}

Status truncation(std::size_t length, std::size_t cap) {
  return {Code::kTruncated, "message of " + std::to_string(length) + " bytes, receive buffer of " + std::to_string(cap)};
}

}  // namespace

Engine::Engine(Bootstrap& boot, const EngineConfig& cfg) : boot_(boot), rank_(boot.rank()), size_(boot.size()), cfg_(cfg) {}
Engine::~Engine() = default;

nic::RegCacheCounters Engine::rcache_counters() const noexcept {
  nic::RegCacheCounters c = send_cache_->counters();
  const nic::RegCacheCounters& r = recv_cache_->counters();
  c.hits += r.hits;
  c.misses += r.misses;
  c.evictions += r.evictions;
  c.invalidations += r.invalidations;
  c.refused += r.refused;
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
  AUGUR_ASSIGN_OR_RETURN(nic::CompletionQueue cq, nic::CompletionQueue::create(*e->ctx_, std::max(1, e->size_ - 1) * per_peer, nullptr));
  e->cq_ = std::make_unique<nic::CompletionQueue>(std::move(cq));
  AUGUR_ASSIGN_OR_RETURN(nic::RegCacheLimits lim, nic::reg_cache_limits_from_settings());
  e->send_cache_ = std::make_unique<nic::RegCache>(nic::pd_registrar(*e->pd_, nic::kRemoteRead), lim);
  e->recv_cache_ = std::make_unique<nic::RegCache>(nic::pd_registrar(*e->pd_, nic::kLocalWrite), lim);
  e->peers_.resize(static_cast<std::size_t>(e->size_));
  for (int p = 0; p < e->size_; ++p) {
    if (p == e->rank_) continue;
    const ChannelConfig cc{static_cast<std::uint32_t>(e->rank_), static_cast<std::uint32_t>(p), cfg.slots, cfg.eager_limit};
    AUGUR_ASSIGN_OR_RETURN(auto ch, Channel::create(*e->ctx_, *e->pd_, *e->cq_, cc, opt.connect));
    AUGUR_ASSIGN_OR_RETURN(Channel::Address a, ch->address());
    AUGUR_RETURN_IF_ERROR(boot.put("augur.ch." + std::to_string(p), encode_address(a)));
    e->peer_of_qp_[ch->qp_num()] = p;
    e->peers_[static_cast<std::size_t>(p)].ch = std::move(ch);
  }
  AUGUR_RETURN_IF_ERROR(boot.fence());
  for (int p = 0; p < e->size_; ++p) {
    if (p == e->rank_) continue;
    AUGUR_ASSIGN_OR_RETURN(std::string s, boot.get(p, "augur.ch." + std::to_string(e->rank_)));
    AUGUR_ASSIGN_OR_RETURN(Channel::Address a, decode_address(s));
    AUGUR_RETURN_IF_ERROR(e->peers_[static_cast<std::size_t>(p)].ch->connect(a));
  }
  // Nobody sends before everybody's receives are posted (RNR retry would cover it, slowly).
  AUGUR_RETURN_IF_ERROR(boot.fence());
  return e;
}

Result<RequestPtr> Engine::isend(const void* buf, std::size_t len, int dest, std::int32_t tag, std::uint32_t context) {
  if (dest < 0 || dest >= size_) return Status(Code::kInvalidArgument, "destination rank " + std::to_string(dest));
  if (tag < 0) return Status(Code::kInvalidArgument, "negative tag " + std::to_string(tag));
  if (buf == nullptr && len > 0) return Status(Code::kInvalidArgument, "null send buffer with a non-zero count");
  if (len > 0xffffffffu) return Status(Code::kInvalidArgument, "messages are limited to 4 GiB - 1 bytes");
  auto req = std::make_shared<Request>();
  if (dest == rank_) {  // matched locally, from a copy: the send completes at once
    Incoming in{};
    in.peer = rank_;
    in.type = nic::MsgType::kEager;
    in.length = len;
    in.self_copy.assign(static_cast<const std::byte*>(buf), static_cast<const std::byte*>(buf) + len);
    in.payload = in.self_copy;
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
    }
    complete(*req, Path::kSelf);
    return req;
  }
  Peer& peer = peers_[static_cast<std::size_t>(dest)];
  if (peer.dead) return Status(Code::kPeerFailure, "rank " + std::to_string(dest) + " is gone");
  OutMsg m{};
  m.context = context;
  m.tag = tag;
  m.length = static_cast<std::uint32_t>(len);
  m.req = req;
  if (len <= cfg_.eager_limit) {
    m.type = nic::MsgType::kEager;
    m.user = buf;
  } else {
    m.type = nic::MsgType::kRts;
    AUGUR_ASSIGN_OR_RETURN(m.pin, send_cache_->acquire(buf, len));
    nic::RemoteBuffer rb;
    rb.addr = reinterpret_cast<std::uintptr_t>(buf);
    rb.rkey = m.pin.rkey();
    rb.length = len;
    m.body.resize(sizeof(nic::RemoteBuffer));
    nic::encode(rb, std::span<std::byte, sizeof(nic::RemoteBuffer)>(m.body.data(), m.body.size()));
  }
  peer.out.push_back(std::move(m));
  AUGUR_RETURN_IF_ERROR(push_sends(dest));
  return req;
}

Result<RequestPtr> Engine::irecv(void* buf, std::size_t len, int source, std::int32_t tag, std::uint32_t context) {
  if (source != kAnySource && (source < 0 || source >= size_)) {
    return Status(Code::kInvalidArgument, "source rank " + std::to_string(source));
  }
  if (tag < 0 && tag != kAnyTag) return Status(Code::kInvalidArgument, "tag " + std::to_string(tag));
  if (buf == nullptr && len > 0) return Status(Code::kInvalidArgument, "null receive buffer with a non-zero count");
  if (source >= 0 && source != rank_ && peers_[static_cast<std::size_t>(source)].dead) {
    return Status(Code::kPeerFailure, "rank " + std::to_string(source) + " is gone");
  }
  auto req = std::make_shared<Request>();
  PostedRecv recv{req, buf, len, source};
  if (auto m = match_.post({context, source, tag}, recv)) {
    AUGUR_RETURN_IF_ERROR(match_and_start(recv, m->msg, m->envelope.tag));
  }
  return req;
}

Status Engine::match_and_start(PostedRecv& recv, Incoming& msg, std::int32_t tag) {
  Request& r = *recv.req;
  r.source = msg.peer;
  r.tag = tag;
  r.length = msg.length;
  const std::size_t n = std::min(msg.length, recv.cap);
  const Status st = msg.length > recv.cap ? truncation(msg.length, recv.cap) : Status::Ok();
  if (!st.ok()) ++counters_.truncated;
  if (msg.type == nic::MsgType::kEager) {
    if (n > 0) std::memcpy(recv.buf, msg.payload.data(), n);  // never past the buffer
    counters_.bytes_copied += n;
    const bool self = msg.peer == rank_;
    if (!self) AUGUR_RETURN_IF_ERROR(peers_[static_cast<std::size_t>(msg.peer)].ch->release(msg.slot));
    complete(r, self ? Path::kSelf : Path::kBounce, st);
    return Status::Ok();
  }
  // Rendezvous: read straight into the receive buffer.
  r.status = st;  // kept until the read completes
  Peer& p = peers_[static_cast<std::size_t>(msg.peer)];
  p.read_queue.push_back(PendingRead{recv.req, static_cast<std::byte*>(recv.buf), n, msg.remote, msg.seq});
  return start_reads(msg.peer);
}

Status Engine::start_reads(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  while (!p.read_queue.empty() && p.reads_in_flight < Channel::kMaxReads) {
    PendingRead pr = std::move(p.read_queue.front());
    p.read_queue.pop_front();
    if (pr.n == 0) {  // nothing to move (empty or zero-size buffer): answer at once
      ++counters_.rndv_msgs;
      complete(*pr.req, Path::kRendezvous, pr.req->status);
      queue_fin(peer, pr.rts_seq);
      continue;
    }
    AUGUR_ASSIGN_OR_RETURN(nic::RegCache::Handle pin, recv_cache_->acquire(pr.buf, pr.n));
    auto it = std::find(reads_.begin(), reads_.end(), nullptr);
    const auto cookie = static_cast<std::uint32_t>(it - reads_.begin());
    const nic::Sge sge{reinterpret_cast<std::uintptr_t>(pr.buf), static_cast<std::uint32_t>(pr.n), pin.lkey()};
    AUGUR_RETURN_IF_ERROR(p.ch->post_read(cookie, sge, pr.remote.addr, pr.remote.rkey));
    auto rd = std::make_unique<Read>(Read{pr.req, std::move(pin), peer, pr.rts_seq});
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

Status Engine::push_sends(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  while (!p.out.empty() && !p.dead) {
    OutMsg& m = p.out.front();
    const std::uint32_t seq = p.ch->next_seq();
    std::span<const std::byte> body = m.body;
    if (m.type == nic::MsgType::kEager) body = {static_cast<const std::byte*>(m.user), m.length};
    AUGUR_ASSIGN_OR_RETURN(bool sent, p.ch->try_send(m.type, m.context, m.tag, m.length, body));
    if (!sent) break;  // out of credits: the rest waits, in order
    if (m.type == nic::MsgType::kEager) {
      complete(*m.req, Path::kBounce);  // copied into the send slot: the user buffer is free
    } else if (m.type == nic::MsgType::kRts) {
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
  complete(*it->second.req, Path::kRendezvous);
  p.awaiting_fin.erase(it);  // unpins the send buffer
  return Status::Ok();
}

void Engine::deliver(int peer, const Arrival& a) {
  Channel& ch = *peers_[static_cast<std::size_t>(peer)].ch;
  const nic::MsgHeader& h = a.header;
  Status st;
  switch (h.type) {
    case nic::MsgType::kEager: {
      ++counters_.bounce_msgs;
      Incoming in{};
      in.peer = peer;
      in.type = nic::MsgType::kEager;
      in.slot = a.slot;
      in.payload = a.payload;
      in.length = h.length;
      if (auto r = match_.arrive({h.context, peer, h.tag}, in)) {
        st = match_and_start(*r, in, h.tag);
      } else {
        ++counters_.unexpected_msgs;  // stays in its slot until a receive matches it
      }
      break;
    }
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
      if (auto r = match_.arrive({h.context, peer, h.tag}, in)) {
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
  }
  if (!st.ok() && deferred_.ok()) deferred_ = st.context("from rank " + std::to_string(peer));
}

Status Engine::fail_peer(int peer, const Status& why) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.dead) return why;
  p.dead = true;
  for (OutMsg& m : p.out) {
    if (m.req) complete(*m.req, Path::kNone, why);
  }
  for (auto& [seq, m] : p.awaiting_fin) complete(*m.req, Path::kNone, why);
  for (PendingRead& pr : p.read_queue) complete(*pr.req, Path::kNone, why);
  p.out.clear();
  p.awaiting_fin.clear();
  p.read_queue.clear();
  for (auto& rd : reads_) {
    if (rd && rd->peer == peer) {
      complete(*rd->req, Path::kNone, why);
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
  for (auto& r : doomed) complete(*r, Path::kNone, why);
  return why;
}

Status Engine::progress() {
  nic::Completion wc[16];
  AUGUR_ASSIGN_OR_RETURN(std::size_t n, cq_->poll(wc));
  Status first_error;
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
      if (!rd) continue;  // its peer was already failed
      if (!c.ok()) {
        st = c.status().context("RDMA READ from rank " + std::to_string(peer));
      } else {
        complete(*rd->req, Path::kRendezvous, rd->req->status);
        queue_fin(peer, rd->rts_seq);
        rd.reset();
        st = start_reads(peer);
      }
    } else {
      st = p.ch->on_completion(c, [&](const Arrival& a) { deliver(peer, a); });
    }
    if (!st.ok()) {
      if (st.code() != Code::kProtocol) st = fail_peer(peer, st.context("rank " + std::to_string(peer)));
      if (first_error.ok()) first_error = st;
    }
  }
  for (int peer = 0; peer < size_; ++peer) {
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    if (!p.ch || p.dead) continue;
    Status st = push_sends(peer);
    if (st.ok() && n == 0) st = p.ch->flush_credits();
    if (!st.ok() && first_error.ok()) first_error = fail_peer(peer, st);
  }
  if (!deferred_.ok()) {
    if (first_error.ok()) first_error = deferred_;
    deferred_ = Status::Ok();
  }
  return first_error;
}

Status Engine::wait(const RequestPtr& r, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  Status last;
  while (!r->done) {
    Status st = progress();
    if (!st.ok()) last = st;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_check_ > std::chrono::milliseconds(cfg_.keepalive_ms)) {
      last_check_ = now;
      if (Status alive = check_peers(); !alive.ok()) last = alive;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status(Code::kTimeout, "request not done within " + std::to_string(timeout_ms) + " ms" +
                                        (last.ok() ? "" : " (last error: " + last.to_string() + ")"));
    }
  }
  return r->status;
}

Result<bool> Engine::test(const RequestPtr& r) {
  if (!r->done) {
    Status st = progress();
    if (!st.ok() && !r->done) return st;
  }
  return r->done;
}

bool Engine::cancel(const RequestPtr& r) {
  if (r->done) return false;
  if (!match_.cancel([&](const PostedRecv& p) { return p.req == r; })) return false;
  r->cancelled = true;
  complete(*r, Path::kNone);
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
  AUGUR_RETURN_IF_ERROR(progress());
  const auto* m = match_.probe({context, source, tag});
  if (!m) return false;
  out->source = m->envelope.source;
  out->tag = m->envelope.tag;
  out->length = m->msg.length;
  return true;
}

Result<EngineConfig> engine_config_from_settings() {
  EngineConfig c;
  AUGUR_ASSIGN_OR_RETURN(std::int64_t slots, setting_int("AUGUR_SLOTS", 2, 65535));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t eager, setting_int("AUGUR_EAGER_LIMIT", 64, 1 << 20));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t keepalive, setting_int("AUGUR_KEEPALIVE_MS", 10, 3'600'000));
  c.slots = static_cast<std::uint32_t>(slots);
  c.eager_limit = static_cast<std::uint32_t>(eager);
  c.keepalive_ms = static_cast<std::uint32_t>(keepalive);
  return c;
}

}  // namespace augur::host
