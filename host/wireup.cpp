// Connections on first use: the exchange over TCP (host/augur/host/wireup.h, docs/runtime.md
// "Connections").

#include "augur/host/wireup.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <utility>

#include "tcp.h"
#include "wireup_wire.h"

namespace augur::host {

namespace {

// A peer's listener exists from before the bootstrap's fence: refused means it is gone. The
// retry only covers a listen backlog that overflowed under a burst of connects.
constexpr std::chrono::milliseconds kConnectTimeout{5000};

}  // namespace

struct Wireup::Conn {
  UniqueFd fd;
  int peer = -1;           // accepted: known after REQ
  bool initiated = false;  // we connected (and wait for REP); else we accepted (REQ, then RTU)
  bool finished = false;   // initiated: REP came (RTU sent); accepted: RTU came
  tcp::Bytes in;
};

Wireup::Wireup(int rank, int size, std::uint32_t address_bytes)
    : rank_(rank),
      size_(size),
      address_bytes_(address_bytes),
      state_(static_cast<std::size_t>(size), State::kIdle),
      peer_nonce_(static_cast<std::size_t>(size), 0) {}

Wireup::~Wireup() = default;

Result<std::unique_ptr<Wireup>> Wireup::create(int rank, int size, std::uint32_t address_bytes, const std::string& host) {
  std::unique_ptr<Wireup> w(new Wireup(rank, size, address_bytes));
  // Many ranks may ask at once (a gather to one root): the largest backlog the kernel allows,
  // as a connect that finds it full waits for the kernel's SYN retry.
  AUGUR_ASSIGN_OR_RETURN(tcp::Listener l, tcp::listen("0.0.0.0", 0, "wire-up", SOMAXCONN));
  const int flags = ::fcntl(l.fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(l.fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) return errno_status(errno, "fcntl(wire-up listener)");
  w->listener_ = std::move(l.fd);
  w->epoll_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
  if (!w->epoll_.valid()) return errno_status(errno, "epoll_create1");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // the listener
  if (::epoll_ctl(w->epoll_.get(), EPOLL_CTL_ADD, w->listener_.get(), &ev) != 0) return errno_status(errno, "epoll_ctl");
  std::random_device rd;
  w->nonce_ = (std::uint64_t{rd()} << 32) | rd();
  w->entry_ = wireup::encode_listen({host, l.port, w->nonce_});
  return w;
}

Status Wireup::start(int peer, const std::string& peer_entry, Handler& h) {
  if (state_[static_cast<std::size_t>(peer)] != State::kIdle) return Status::Ok();
  AUGUR_ASSIGN_OR_RETURN(wireup::Listen l, wireup::parse_listen(peer_entry, peer));
  peer_nonce_[static_cast<std::size_t>(peer)] = l.nonce;
  AUGUR_ASSIGN_OR_RETURN(std::vector<std::byte> mine, h.local_address(peer));
  AUGUR_ASSIGN_OR_RETURN(UniqueFd fd, tcp::connect(l.host, l.port, kConnectTimeout, "wire-up with rank " + std::to_string(peer)));
  const tcp::Bytes req = wireup::encode(wireup::Type::kReq, static_cast<std::uint32_t>(rank_), static_cast<std::uint32_t>(peer),
                                        l.nonce, mine);
  AUGUR_RETURN_IF_ERROR(tcp::write_all(fd.get(), req, "wire-up REQ"));
  auto c = std::make_unique<Conn>();
  c->fd = std::move(fd);
  c->peer = peer;
  c->initiated = true;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = c.get();
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c->fd.get(), &ev) != 0) return errno_status(errno, "epoll_ctl");
  conns_.push_back(std::move(c));
  state_[static_cast<std::size_t>(peer)] = State::kRequested;
  ++counters_.initiated;
  return Status::Ok();
}

Status Wireup::poll(Handler& h) {
  epoll_event evs[16];
  const int n = ::epoll_wait(epoll_.get(), evs, 16, 0);
  if (n < 0) return errno == EINTR ? Status::Ok() : errno_status(errno, "epoll_wait(wire-up)");
  std::vector<Conn*> done;
  for (int i = 0; i < n; ++i) {
    if (evs[i].data.ptr == nullptr) {  // the listener: take every waiting connection
      for (;;) {
        UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!fd.valid()) break;  // EAGAIN, or a connection that died in the backlog
        auto c = std::make_unique<Conn>();
        c->fd = std::move(fd);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.ptr = c.get();
        if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c->fd.get(), &ev) != 0) return errno_status(errno, "epoll_ctl");
        conns_.push_back(std::move(c));
      }
      continue;
    }
    auto* c = static_cast<Conn*>(evs[i].data.ptr);
    Result<std::size_t> got = tcp::read_some(c->fd.get(), c->in, "wire-up");
    if (!got.ok() || *got == 0) {  // closed
      if (c->initiated && state_[static_cast<std::size_t>(c->peer)] == State::kRequested) {
        h.failed(c->peer, got.ok() ? Status(Code::kPeerFailure, "closed the wire-up connection before answering") : got.status());
      }
      done.push_back(c);
      continue;
    }
    Status st = on_message(*c, h);
    if (!st.ok()) {
      if (st.code() == Code::kProtocol) {
        ++counters_.rejected;
        if (c->initiated) h.failed(c->peer, st);  // our peer answered nonsense
        done.push_back(c);
        continue;
      }
      return st;
    }
    if (c->finished) done.push_back(c);
  }
  for (Conn* c : done) drop(*c);
  return Status::Ok();
}

// Handles every whole message in c.in.
Status Wireup::on_message(Conn& c, Handler& h) {
  for (;;) {
    if (c.in.size() < wireup::kHeaderBytes) return Status::Ok();
    const bool accepted = !c.initiated;
    const wireup::Expect e{.self = static_cast<std::uint32_t>(rank_),
                           .size = static_cast<std::uint32_t>(size_),
                           .nonce = accepted ? nonce_ : peer_nonce_[static_cast<std::size_t>(c.peer)],
                           .address_bytes = address_bytes_,
                           .from = c.peer};
    AUGUR_ASSIGN_OR_RETURN(wireup::Header hd, wireup::parse_header(c.in, e));
    const std::size_t total = wireup::kHeaderBytes + hd.address_bytes;
    if (c.in.size() < total) return Status::Ok();
    const int peer = static_cast<int>(hd.from);
    const auto type = static_cast<wireup::Type>(hd.type);
    const std::span<const std::byte> address(reinterpret_cast<const std::byte*>(c.in.data()) + wireup::kHeaderBytes,
                                             hd.address_bytes);
    if (type == wireup::Type::kReq && accepted && c.peer < 0) {
      c.peer = peer;
      AUGUR_ASSIGN_OR_RETURN(std::vector<std::byte> mine, h.local_address(peer));
      AUGUR_RETURN_IF_ERROR(connect_once(peer, address, h));
      const tcp::Bytes rep = wireup::encode(wireup::Type::kRep, static_cast<std::uint32_t>(rank_),
                                            static_cast<std::uint32_t>(peer), nonce_, mine);
      AUGUR_RETURN_IF_ERROR(tcp::write_all(c.fd.get(), rep, "wire-up REP"));
      ++counters_.accepted;
    } else if (type == wireup::Type::kRep && c.initiated) {
      AUGUR_RETURN_IF_ERROR(connect_once(peer, address, h));
      const tcp::Bytes rtu = wireup::encode(wireup::Type::kRtu, static_cast<std::uint32_t>(rank_),
                                            static_cast<std::uint32_t>(peer), peer_nonce_[static_cast<std::size_t>(peer)], {});
      // A write that fails means the peer is gone, which the bootstrap reports.
      (void)tcp::write_all(c.fd.get(), rtu, "wire-up RTU");
      c.finished = true;
      become_ready(peer, h);
    } else if (type == wireup::Type::kRtu && accepted && c.peer == peer) {
      c.finished = true;
      become_ready(peer, h);  // already, if it asked us at the same time and we heard its REP
    } else {
      return Status(Code::kProtocol, "wire-up message: type " + std::to_string(hd.type) + " out of turn");
    }
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(total));
    if (c.finished) return Status::Ok();  // nothing may follow
  }
}

Status Wireup::connect_once(int peer, std::span<const std::byte> address, Handler& h) {
  auto& state = state_[static_cast<std::size_t>(peer)];
  if (state == State::kConnected || state == State::kReady) return Status::Ok();
  AUGUR_RETURN_IF_ERROR(h.remote_address(peer, address));
  state = State::kConnected;
  return Status::Ok();
}

void Wireup::become_ready(int peer, Handler& h) {
  auto& state = state_[static_cast<std::size_t>(peer)];
  if (state == State::kReady) return;
  state = State::kReady;
  h.ready(peer);
}

void Wireup::drop(Conn& c) {
  (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
  for (auto it = conns_.begin(); it != conns_.end(); ++it) {
    if (it->get() == &c) {
      conns_.erase(it);
      return;
    }
  }
}

}  // namespace augur::host
