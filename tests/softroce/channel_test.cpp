// The eager bounce path between two processes: a flood against a receiver that holds on to its
// slots (as it would to unexpected messages) must slow the sender through credits, never lose,
// reorder or corrupt a message, and a malformed header from the peer must be rejected. The
// receiver's window starts at 2 slots of its shared pool and must grow to kSlots, never beyond. Tags
// alternate between ones that fit the 8-byte eager header and ones that need the full one.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/channel.h"
#include "augur/nic/endpoint.h"

namespace augur::host {
namespace {

constexpr int kTimeoutMs = 60'000;
constexpr std::uint32_t kSlots = 8;
constexpr std::uint32_t kFirstWindow = 2;
constexpr std::uint32_t kEager = 4096;
constexpr int kMessages = 1500;

std::size_t size_of(int i) { return static_cast<std::size_t>(i) * 7919 % (kEager + 1); }
// Every fifth tag needs the full header (above 16 bits).
std::int32_t tag_of(int i) { return i % 5 == 0 ? 70'000 + i : i % 1000; }
constexpr std::uint64_t kShortForm = kMessages - (kMessages + 4) / 5 + 1;  // ... and the last message, tag 999
std::byte byte_of(int i, std::size_t k) { return static_cast<std::byte>((static_cast<std::size_t>(i) * 31 + k * 7) & 0xff); }

struct Side {
  nic::Context ctx;
  nic::ProtectionDomain pd;
  nic::CompletionQueue cq;
  std::unique_ptr<RecvPool> pool;
  std::unique_ptr<Channel> ch;
};

Result<Side> setup(int fd, std::uint32_t me, std::uint32_t peer) {
  AUGUR_ASSIGN_OR_RETURN(nic::EndpointOptions opt, nic::endpoint_options_from_settings());
  AUGUR_ASSIGN_OR_RETURN(nic::Context ctx, nic::Context::open(opt.device));
  AUGUR_ASSIGN_OR_RETURN(nic::ProtectionDomain pd, nic::ProtectionDomain::create(ctx));
  AUGUR_ASSIGN_OR_RETURN(nic::CompletionQueue cq, nic::CompletionQueue::create(ctx, 4 * kSlots + 64, nullptr));
  Side s{std::move(ctx), std::move(pd), std::move(cq), nullptr, nullptr};
  AUGUR_ASSIGN_OR_RETURN(s.pool, RecvPool::create(s.ctx, s.pd, {.slot_bytes = kEager + sizeof(proto::MsgHeader),
                                                                .chunk_slots = 4 * kSlots,
                                                                .peer_window = kFirstWindow,
                                                                .max_window = kSlots,
                                                                .max_slots = 4 * kSlots}));
  AUGUR_ASSIGN_OR_RETURN(s.ch, Channel::create(s.ctx, s.pd, s.cq, *s.pool, {.my_rank = me, .peer_rank = peer, .slots = kSlots, .eager_limit = kEager},
                                               opt.connect));
  AUGUR_ASSIGN_OR_RETURN(Channel::Address mine, s.ch->address());
  Channel::Address theirs;
  AUGUR_ASSIGN_OR_RETURN(theirs.qp, nic::exchange(fd, mine.qp, kTimeoutMs));
  AUGUR_ASSIGN_OR_RETURN(theirs.credit_word, nic::exchange(fd, mine.credit_word, kTimeoutMs));
  AUGUR_ASSIGN_OR_RETURN(theirs.credit_table, nic::exchange(fd, mine.credit_table, kTimeoutMs));
  AUGUR_RETURN_IF_ERROR(nic::send_all(fd, &mine.window, sizeof mine.window));
  AUGUR_RETURN_IF_ERROR(nic::recv_all(fd, &theirs.window, sizeof theirs.window, kTimeoutMs));
  if (theirs.window != kFirstWindow) return Status(Code::kInternal, "the peer's first window is not the pool's");
  AUGUR_RETURN_IF_ERROR(s.ch->connect(theirs));
  return s;
}

// Polls the CQ once; hands completions to the channel.
Status progress(Side& s, const std::function<void(const Arrival&)>& deliver, Status* protocol_error = nullptr) {
  nic::Completion c[16];
  AUGUR_ASSIGN_OR_RETURN(std::size_t n, s.cq.poll(c));
  for (std::size_t i = 0; i < n; ++i) {
    Result<std::optional<Arrival>> a = s.ch->on_completion(c[i]);
    if (!a.ok() && a.status().code() == Code::kProtocol && protocol_error) {
      *protocol_error = a.status();
      continue;
    }
    AUGUR_RETURN_IF_ERROR(a.status());
    if (a->has_value()) deliver(**a);
  }
  if (n == 0) AUGUR_RETURN_IF_ERROR(s.ch->flush_credits());
  return Status::Ok();
}

Status sync(int fd) {
  char b = 'x';
  AUGUR_RETURN_IF_ERROR(nic::send_all(fd, &b, 1));
  return nic::recv_all(fd, &b, 1, kTimeoutMs);
}

Status run_sender(int fd) {
  AUGUR_ASSIGN_OR_RETURN(Side s, setup(fd, 0, 1));
  auto ignore = [](const Arrival&) {};
  std::vector<std::byte> buf(kEager);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  for (int i = 0; i < kMessages; ++i) {
    const std::size_t n = size_of(i);
    for (std::size_t k = 0; k < n; ++k) buf[k] = byte_of(i, k);
    for (;;) {
      AUGUR_ASSIGN_OR_RETURN(bool sent, s.ch->try_send(5, tag_of(i), {buf.data(), n}));
      if (sent) break;
      AUGUR_RETURN_IF_ERROR(progress(s, ignore));
      if (std::chrono::steady_clock::now() > deadline) return Status(Code::kTimeout, "sender starved of credits");
    }
  }
  // A header that lies about its source, then one good message after it.
  std::vector<std::byte> bad(sizeof(proto::MsgHeader));
  proto::MsgHeader h;
  h.src = 7;
  h.seq = kMessages;
  proto::encode(h, std::span<std::byte, sizeof(proto::MsgHeader)>(bad.data(), bad.size()));
  while (true) {
    AUGUR_ASSIGN_OR_RETURN(bool sent, s.ch->try_send_raw_for_test(bad));
    if (sent) break;
    AUGUR_RETURN_IF_ERROR(progress(s, ignore));
  }
  const std::byte last[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
  while (true) {
    AUGUR_ASSIGN_OR_RETURN(bool sent, s.ch->try_send(5, 999, last));
    if (sent) break;
    AUGUR_RETURN_IF_ERROR(progress(s, ignore));
  }
  AUGUR_RETURN_IF_ERROR(sync(fd));  // the receiver has everything
  if (s.ch->counters().sent != kMessages + 1) return Status(Code::kInternal, "sent counter wrong");
  if (s.ch->counters().short_headers != kShortForm) {
    return Status(Code::kInternal, std::to_string(s.ch->counters().short_headers) + " short headers, expected " +
                                       std::to_string(kShortForm));
  }
  if (s.ch->counters().credit_stalls == 0) return Status(Code::kInternal, "the sender never waited for a credit");
  std::printf("sender: %llu sent (%llu with the short header), %llu credit stalls\n",
              static_cast<unsigned long long>(s.ch->counters().sent),
              static_cast<unsigned long long>(s.ch->counters().short_headers),
              static_cast<unsigned long long>(s.ch->counters().credit_stalls));
  return Status::Ok();
}

// Gives the held slots back, at once or (as the engine does) through release_later, which must
// repost them only on repost_released().
Status give_back(Side& s, std::vector<std::uint32_t>& held, bool deferred) {
  if (!deferred) {
    for (std::uint32_t slot : held) AUGUR_RETURN_IF_ERROR(s.ch->release(slot));
  } else {
    for (std::size_t i = 0; i < held.size(); ++i) {
      // Only the first slot held since the last repost says so: the engine notes the peer once.
      if (s.ch->release_later(held[i]) != (i == 0)) return Status(Code::kInternal, "release_later() misreported the first slot");
    }
    AUGUR_ASSIGN_OR_RETURN(bool any, s.ch->repost_released());
    if (any != !held.empty()) return Status(Code::kInternal, "repost_released() saw the wrong number of slots");
    AUGUR_ASSIGN_OR_RETURN(bool again, s.ch->repost_released());
    if (again) return Status(Code::kInternal, "repost_released() reposted a slot twice");
  }
  held.clear();
  return Status::Ok();
}

Status run_receiver(int fd, bool deferred) {
  AUGUR_ASSIGN_OR_RETURN(Side s, setup(fd, 1, 0));
  int next = 0;
  Status bad_data;
  std::vector<std::uint32_t> held;  // slots kept like unexpected messages
  bool got_last = false;
  auto deliver = [&](const Arrival& a) {
    if (next == kMessages) {  // the message after the rejected one
      got_last = a.header.tag == 999 && a.payload.size() == 3 && a.payload[2] == std::byte{3};
      held.push_back(a.slot);
      return;
    }
    const std::size_t n = size_of(next);
    if (a.header.context != 5 || a.header.tag != tag_of(next) || a.payload.size() != n) {
      bad_data = Status(Code::kInternal, "message " + std::to_string(next) + ": wrong envelope or length");
    }
    for (std::size_t k = 0; k < n && bad_data.ok(); ++k) {
      if (a.payload[k] != byte_of(next, k)) bad_data = Status(Code::kInternal, "message " + std::to_string(next) + " corrupted at byte " + std::to_string(k));
    }
    ++next;
    held.push_back(a.slot);
  };
  Status rejected;
  std::uint32_t widest = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (!got_last) {
    AUGUR_RETURN_IF_ERROR(progress(s, deliver, &rejected));
    AUGUR_RETURN_IF_ERROR(bad_data);
    widest = std::max(widest, s.ch->window());
    if (s.ch->window() > kSlots || s.ch->window() < kFirstWindow) {
      return Status(Code::kInternal, "window of " + std::to_string(s.ch->window()) + " slots");
    }
    if (held.size() >= s.ch->window()) {  // every slot of the window taken: the sender must be waiting now
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      AUGUR_RETURN_IF_ERROR(give_back(s, held, deferred));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status(Code::kTimeout, "received " + std::to_string(next) + " of " + std::to_string(kMessages));
    }
  }
  AUGUR_RETURN_IF_ERROR(give_back(s, held, deferred));
  AUGUR_RETURN_IF_ERROR(s.ch->flush_credits());
  if (rejected.code() != Code::kProtocol || rejected.message().find("claims to come from rank 7") == std::string::npos) {
    return Status(Code::kInternal, "malformed header not rejected: " + rejected.to_string());
  }
  const ChannelCounters& c = s.ch->counters();
  if (c.received != kMessages + 1 || c.rejected != 1) return Status(Code::kInternal, "receive counters do not add up");
  // The only peer of a pool of 4 windows borrows up to the largest, and gives nothing back.
  if (widest != kSlots || s.pool->counters().windows_grown != kSlots - kFirstWindow || s.pool->counters().windows_shrunk != 0) {
    return Status(Code::kInternal, "window grew to " + std::to_string(widest) + " in " +
                                       std::to_string(s.pool->counters().windows_grown) + " steps");
  }
  if (s.pool->unassigned() + s.ch->window() != s.pool->slots()) return Status(Code::kInternal, "pool slots lost");
  std::printf("receiver: %llu received, %llu bytes, %llu credit writes, %llu rejected\n",
              static_cast<unsigned long long>(c.received), static_cast<unsigned long long>(c.bytes_received),
              static_cast<unsigned long long>(c.credit_writes), static_cast<unsigned long long>(c.rejected));
  return sync(fd);
}

// Fork without exec is safe here: the process has one thread. augur starts threads only in
// BootstrapServer and the engine's assist thread, and this binary uses neither (nor do gtest or
// libibverbs start any; checked with strace -f: no clone before the fork).
void pair(const std::function<Status(int)>& sender_main, const std::function<Status(int)>& receiver_main) {
  int sv[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  const char* device = std::getenv("AUGUR_DEVICE");
  if (device != nullptr && std::string(device) == "loopback") {  // it connects threads of one process
    Status sent;
    std::thread sender([&] { sent = sender_main(sv[1]); });
    Status s = receiver_main(sv[0]);
    sender.join();
    close(sv[0]);
    close(sv[1]);
    EXPECT_TRUE(s.ok()) << "receiver: " << s.to_string();
    EXPECT_TRUE(sent.ok()) << "sender: " << sent.to_string();
    return;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    Status s = sender_main(sv[1]);
    if (!s.ok()) std::fprintf(stderr, "sender: %s\n", s.to_string().c_str());
    std::fflush(nullptr);
    _exit(s.ok() ? 0 : 1);
  }
  close(sv[1]);
  Status s = receiver_main(sv[0]);
  close(sv[0]);
  int st = 0;
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  EXPECT_TRUE(s.ok()) << "receiver: " << s.to_string();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "sender failed (see above)";
}

void flood(bool deferred) {
  pair(run_sender, [deferred](int fd) { return run_receiver(fd, deferred); });
}

TEST(Channel, FloodAgainstAHoldingReceiverIsFlowControlledAndIntact) { flood(false); }

// The engine gives bounce slots back through release_later: the credits must flow just the same.
TEST(Channel, FloodWithDeferredRepostsIsFlowControlledAndIntact) { flood(true); }

// A peer that sends beyond its grant would take a slot of another peer's window in the shared
// pool: the receiver rejects that message (and the engine fails the peer), after delivering the
// ones the grant covered intact.
TEST(Channel, ASenderBeyondItsGrantIsRejected) {
  pair(
      [](int fd) -> Status {
        AUGUR_ASSIGN_OR_RETURN(Side s, setup(fd, 0, 1));
        const std::byte msg[4] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
        for (std::uint32_t i = 0; i < kFirstWindow; ++i) {
          AUGUR_ASSIGN_OR_RETURN(bool sent, s.ch->try_send(5, 7, msg));
          if (!sent) return Status(Code::kInternal, "no credit within the first window");
        }
        AUGUR_ASSIGN_OR_RETURN(bool more, s.ch->try_send(5, 7, msg));
        if (more) return Status(Code::kInternal, "a credit beyond the first window");
        std::vector<std::byte> raw(sizeof(proto::MsgHeader) + 4);  // its content never matters
        AUGUR_ASSIGN_OR_RETURN(bool forced, s.ch->try_send_ungranted_for_test(raw));
        if (!forced) return Status(Code::kInternal, "the ungranted send was not posted");
        return sync(fd);
      },
      [](int fd) -> Status {
        AUGUR_ASSIGN_OR_RETURN(Side s, setup(fd, 1, 0));
        std::uint32_t got = 0;
        Status rejected;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
        while (rejected.ok()) {  // the slots are held: nothing is granted again
          AUGUR_RETURN_IF_ERROR(progress(s, [&](const Arrival& a) { got += a.payload.size() == 4 && a.payload[3] == std::byte{4}; }, &rejected));
          if (std::chrono::steady_clock::now() > deadline) return Status(Code::kTimeout, "no rejection");
        }
        if (got != kFirstWindow) return Status(Code::kInternal, std::to_string(got) + " messages delivered before the rejection");
        if (rejected.message().find("beyond the 2 granted") == std::string::npos) {
          return Status(Code::kInternal, "wrong rejection: " + rejected.to_string());
        }
        if (s.ch->counters().rejected != 1) return Status(Code::kInternal, "rejection not counted");
        return sync(fd);
      });
}

// Arm words queued by the receiving side of credits ride on its next message (no RDMA WRITE of
// their own), are applied by the peer when it handles that message, never over a later
// generation of the slot, and are written alone by the idle flush when no message takes them.
TEST(Channel, QueuedArmWordsRideOnTheNextMessageOrTheIdleFlush) {
  using proto::CreditArm;
  using proto::CreditState;
  constexpr std::uint32_t kSlot = 2, kOvertaken = 6;
  auto entry = [](std::uint32_t gen) {
    proto::CreditEntry e;
    e.addr = 0x10000;  // the sender never writes through it here
    e.rkey = 1;
    e.capacity = 64;
    e.context = 5;
    e.tag = 7;
    e.arm = proto::encode_arm({CreditState::kPending, gen, 0});
    return e;
  };
  auto gen_at = [](const Side& s, std::uint32_t slot) -> std::optional<std::pair<CreditState, std::uint32_t>> {
    Result<CreditArm> a = proto::parse_arm(s.ch->arm_word(slot));
    if (!a.ok()) return std::nullopt;
    return std::pair(a->state, a->generation);
  };
  pair(
      [&](int fd) -> Status {  // rank 0: holds the credit table
        AUGUR_ASSIGN_OR_RETURN(Side s, setup(fd, 0, 1));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
        std::vector<std::vector<std::byte>> got;
        auto deliver = [&](const Arrival& a) {
          got.emplace_back(a.payload.begin(), a.payload.end());
          (void)s.ch->release(a.slot);
        };
        auto wait_for = [&](const std::function<bool()>& done, const char* what) -> Status {
          while (!done()) {
            AUGUR_RETURN_IF_ERROR(progress(s, deliver));
            if (std::chrono::steady_clock::now() > deadline) return Status(Code::kTimeout, what);
          }
          return Status::Ok();
        };
        AUGUR_RETURN_IF_ERROR(sync(fd));  // the entries are written
        AUGUR_RETURN_IF_ERROR(wait_for([&] { return gen_at(s, kSlot) == std::pair(CreditState::kPending, 1u) &&
                                                    gen_at(s, kOvertaken) == std::pair(CreditState::kPending, 4u); },
                                       "the entries never landed"));
        AUGUR_RETURN_IF_ERROR(sync(fd));  // the message with two arm words is sent
        AUGUR_RETURN_IF_ERROR(wait_for([&] { return got.size() == 1; }, "no message"));
        if (got[0].size() != 4 || got[0][3] != std::byte{4}) return Status(Code::kInternal, "payload changed by the arms");
        const std::optional<Channel::Credit> c = s.ch->armed_credit(kSlot);
        if (!c || c->arm.generation != 1 || c->arm.valid_from_seq != 0 || c->entry.tag != 7) {
          return Status(Code::kInternal, "the carried arm word was not applied over its entry");
        }
        if (gen_at(s, kOvertaken) != std::pair(CreditState::kPending, 4u)) {
          return Status(Code::kInternal, "an earlier generation was applied over a later one");
        }
        if (s.ch->counters().arms_applied != 1 || s.ch->counters().arms_stale != 1) {
          return Status(Code::kInternal, "applied " + std::to_string(s.ch->counters().arms_applied) + ", stale " +
                                             std::to_string(s.ch->counters().arms_stale) + "; expected 1 and 1");
        }
        AUGUR_RETURN_IF_ERROR(sync(fd));  // the third arm word is flushed alone
        AUGUR_RETURN_IF_ERROR(wait_for([&] { return gen_at(s, kSlot) == std::pair(CreditState::kArmed, 9u); },
                                       "the flushed arm word never landed"));
        if (got.size() != 1) return Status(Code::kInternal, "a message from the flush");
        return sync(fd);
      },
      [&](int fd) -> Status {  // rank 1: gives the credits
        AUGUR_ASSIGN_OR_RETURN(Side s, setup(fd, 1, 0));
        AUGUR_ASSIGN_OR_RETURN(bool w1, s.ch->write_credit(kSlot, entry(1)));
        AUGUR_ASSIGN_OR_RETURN(bool w2, s.ch->write_credit(kOvertaken, entry(4)));
        if (!w1 || !w2) return Status(Code::kInternal, "no room for two credit writes");
        AUGUR_RETURN_IF_ERROR(sync(fd));
        AUGUR_RETURN_IF_ERROR(sync(fd));  // rank 0 holds both entries
        AUGUR_RETURN_IF_ERROR(s.ch->queue_arm(kSlot, {CreditState::kArmed, 1, 0}).status());
        // Generation 3 after 4 is in place: as if the write of 4 had overtaken this message.
        AUGUR_RETURN_IF_ERROR(s.ch->queue_arm(kOvertaken, {CreditState::kArmed, 3, 0}).status());
        if (s.ch->queued_arms() != 2) return Status(Code::kInternal, "two arm words not queued");
        const std::byte msg[4] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
        AUGUR_ASSIGN_OR_RETURN(bool sent, s.ch->try_send(5, 7, msg));
        if (!sent) return Status(Code::kInternal, "no credit for one message");
        if (s.ch->queued_arms() != 0 || s.ch->counters().arms_carried != 2 || s.ch->counters().arms_written != 0) {
          return Status(Code::kInternal, "the arm words did not ride on the message");
        }
        AUGUR_RETURN_IF_ERROR(sync(fd));
        AUGUR_RETURN_IF_ERROR(s.ch->queue_arm(kSlot, {CreditState::kArmed, 8, 0}).status());
        AUGUR_RETURN_IF_ERROR(s.ch->queue_arm(kSlot, {CreditState::kArmed, 9, 0}).status());  // replaces 8
        if (s.ch->queued_arms() != 1) return Status(Code::kInternal, "a later issue of a slot did not replace the earlier");
        AUGUR_RETURN_IF_ERROR(s.ch->flush_credits());
        if (s.ch->queued_arms() != 0 || s.ch->counters().arms_written != 1) {
          return Status(Code::kInternal, "the idle flush did not write the queued arm word");
        }
        return sync(fd);  // rank 0 saw the write: the QP may go
      });
}

}  // namespace
}  // namespace augur::host
