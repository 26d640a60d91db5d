// Connections on first use. Each rank listens on a TCP port and publishes "host port nonce" once
// through the bootstrap (one key per rank, instead of one channel address per peer); the first
// send to a peer (or a credit for it, or a one-sided operation) connects the pair's RC channel
// through a short exchange on a TCP connection to the peer's listener:
//
//   initiator                               acceptor
//   create channel, REQ(its address) ---->  create channel if none, connect it, REP(its address)
//   connect, ready, RTU ---------------->   ready
//
// Each side has at most one channel per peer, so two ranks that start at once (both send REQ)
// still connect the same two QPs: each answers the other's REQ with REP and is ready at the REP
// it receives. A side sends on the channel only when it is ready (it connected, and the peer
// said it connected), so nothing reaches a QP that cannot receive. The TCP connection is closed
// once the exchange is over; a rank holds no socket per peer.
//
// The owner (the engine) calls poll() from its progress loop, and sleeps on fd() too. Nothing
// here knows verbs: addresses are opaque bytes that the Handler makes and connects.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "augur/status.h"
#include "augur/unique_fd.h"

namespace augur::host {

class Wireup {
 public:
  class Handler {
   public:
    // This side's channel address for `peer`, creating the channel if there is none yet.
    virtual Result<std::vector<std::byte>> local_address(int peer) = 0;
    // Connects this side's channel to the peer's address (called once per peer).
    virtual Status remote_address(int peer, std::span<const std::byte> address) = 0;
    // Both sides are connected: the channel may carry messages.
    virtual void ready(int peer) = 0;
    // The exchange with `peer` failed (its listener refused or it closed before answering).
    virtual void failed(int peer, const Status& why) = 0;

   protected:
    ~Handler() = default;
  };

  struct Counters {
    std::uint64_t initiated = 0;  // REQ sent
    std::uint64_t accepted = 0;   // REQ answered
    std::uint64_t rejected = 0;   // connections dropped for a malformed or foreign message
  };

  // Listens on all IPv4 interfaces; `host` is what peers are told to connect to.
  static Result<std::unique_ptr<Wireup>> create(int rank, int size, std::uint32_t address_bytes, const std::string& host);
  ~Wireup();
  Wireup(const Wireup&) = delete;
  Wireup& operator=(const Wireup&) = delete;

  // The bootstrap entry to publish (wireup_wire.h's encode_listen).
  [[nodiscard]] const std::string& entry() const noexcept { return entry_; }
  // Starts connecting to `peer`, whose bootstrap entry is `peer_entry` (blocks only for the TCP
  // connect and a write of under 200 bytes). Nothing happens if an exchange with it has begun.
  Status start(int peer, const std::string& peer_entry, Handler& h);
  // A message came from `peer` over the channel: it is connected, which stands in for an RTU
  // not read yet (the acceptor would otherwise hold its replies until it next polls).
  void peer_spoke(int peer, Handler& h) {
    if (state_[static_cast<std::size_t>(peer)] == State::kConnected) become_ready(peer, h);
  }
  // Accepts, reads and answers whatever is waiting; never blocks.
  Status poll(Handler& h);
  // Readable when poll() has something to do.
  [[nodiscard]] int fd() const noexcept { return epoll_.get(); }
  [[nodiscard]] bool begun(int peer) const noexcept { return state_[static_cast<std::size_t>(peer)] != State::kIdle; }
  [[nodiscard]] const Counters& counters() const noexcept { return counters_; }

 private:
  enum class State : std::uint8_t {
    kIdle,       // no exchange
    kRequested,  // REQ sent, not connected
    kConnected,  // connected here, waiting to hear that the peer is
    kReady,
  };
  struct Conn;
  Wireup(int rank, int size, std::uint32_t address_bytes);
  Status on_message(Conn& c, Handler& h);
  Status connect_once(int peer, std::span<const std::byte> address, Handler& h);
  void become_ready(int peer, Handler& h);
  void drop(Conn& c);

  int rank_;
  int size_;
  std::uint32_t address_bytes_;
  std::uint64_t nonce_ = 0;
  std::string entry_;
  UniqueFd listener_;
  UniqueFd epoll_;
  std::vector<State> state_;
  std::vector<std::uint64_t> peer_nonce_;  // learnt from the entry at start(): what REQ must carry
  std::vector<std::unique_ptr<Conn>> conns_;
  Counters counters_;
};

}  // namespace augur::host
