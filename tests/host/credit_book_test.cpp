// CreditBook without a device: a fake writer records what would go to the peer's credit table,
// a registration cache over a fake register function hands out rkeys, and a fake table plays the
// credits a peer wrote into ours.
#include "augur/host/credit_book.h"

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/channel.h"

namespace augur::host {
namespace {

using State = CreditBook::Given::State;

struct FakeWriter final : CreditWriter {
  struct Write {
    std::uint32_t slot;
    bool whole;  // entry and arm word; else the arm word alone
    proto::CreditEntry entry;
    proto::CreditArm arm;
  };
  std::vector<Write> writes;
  bool room = true;
  std::uint32_t seq_in = 7;

  Result<bool> write_credit(std::uint32_t slot, const proto::CreditEntry& e) override {
    if (!room) return false;
    Result<proto::CreditArm> a = proto::parse_arm(e.arm);
    EXPECT_TRUE(a.ok());
    writes.push_back({slot, true, e, a.value()});
    return true;
  }
  Result<bool> write_arm(std::uint32_t slot, const proto::CreditArm& a) override {
    if (!room) return false;
    writes.push_back({slot, false, {}, a});
    return true;
  }
  [[nodiscard]] std::uint32_t next_seq_in() const override { return seq_in; }
};

class CreditBookTest : public ::testing::Test {
 protected:
  static constexpr std::uint32_t kSlots = 4;
  CreditCounters counters;
  FakeWriter w;
  std::uint32_t next_rkey = 100;
  nic::RegCache pins{[this](std::uintptr_t addr, std::size_t length) -> Result<nic::Registration> {
                       return nic::Registration{addr, length, 1, next_rkey++, nullptr};
                     },
                     nic::RegCacheLimits{}};
  CreditBook book{kSlots, counters};  // after `pins`: its credits' handles go first (as in Engine)
  alignas(4096) std::array<std::byte, 4 * 4096> mem{};
  void* buf(int i) { return mem.data() + 4096 * i; }

  RequestPtr give(void* b, std::size_t len = 256, std::uint32_t context = 1, std::int32_t tag = 5) {
    auto r = std::make_shared<Request>();
    EXPECT_TRUE(book.give(w, pins, r, b, len, context, tag).ok());
    return r;
  }
};

TEST_F(CreditBookTest, ANewEntryCarriesTheBufferAndIsArmedFromTheNextMessage) {
  RequestPtr r = give(buf(0), 256, 3, 9);
  ASSERT_EQ(1u, w.writes.size());
  const FakeWriter::Write& wr = w.writes[0];
  EXPECT_TRUE(wr.whole);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf(0)), wr.entry.addr);
  EXPECT_EQ(256u, wr.entry.capacity);
  EXPECT_EQ(3u, wr.entry.context);
  EXPECT_EQ(9, wr.entry.tag);
  EXPECT_EQ(100u, wr.entry.rkey);
  EXPECT_EQ(proto::CreditState::kArmed, wr.arm.state);
  EXPECT_EQ(7u, wr.arm.valid_from_seq);
  EXPECT_EQ(1u, wr.arm.generation);
  EXPECT_EQ(static_cast<std::int32_t>(wr.slot), r->credit_slot);
  EXPECT_EQ(State::kArmed, book.given()[wr.slot].state);
  EXPECT_EQ(1u, counters.issued);
}

TEST_F(CreditBookTest, AUsedCreditFreesItsSlotAndTheSameBufferIsReArmedByTheArmWordAlone) {
  RequestPtr r = give(buf(0));
  const auto slot = static_cast<std::uint32_t>(r->credit_slot);
  Result<CreditBook::Direct> d = book.on_direct(slot, 200);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(r, d->req);
  EXPECT_EQ(5, d->tag);
  EXPECT_EQ(State::kFree, book.given()[slot].state);
  EXPECT_EQ(1u, counters.used);

  w.seq_in = 12;
  RequestPtr again = give(buf(0));
  ASSERT_EQ(2u, w.writes.size());
  EXPECT_FALSE(w.writes[1].whole) << "the sender still holds the entry: only the arm word travels";
  EXPECT_EQ(slot, w.writes[1].slot);
  EXPECT_EQ(2u, w.writes[1].arm.generation) << "a new generation: the old arm word cannot be mistaken for it";
  EXPECT_EQ(12u, w.writes[1].arm.valid_from_seq);
  EXPECT_EQ(static_cast<std::int32_t>(slot), again->credit_slot);
  EXPECT_EQ(2u, counters.issued);
  EXPECT_EQ(1u, counters.rearmed);
}

TEST_F(CreditBookTest, AStagedCreditIsArmedByItsReceiveWithTheArmWordAlone) {
  ASSERT_TRUE(book.stage(w, pins, buf(1), 512, 1, 5, 2).ok());
  ASSERT_EQ(1u, w.writes.size());
  EXPECT_TRUE(w.writes[0].whole);
  EXPECT_EQ(proto::CreditState::kPending, w.writes[0].arm.state);
  EXPECT_EQ(State::kPending, book.given()[w.writes[0].slot].state);
  // Staging it again writes nothing.
  ASSERT_TRUE(book.stage(w, pins, buf(1), 512, 1, 5, 2).ok());
  EXPECT_EQ(1u, w.writes.size());

  RequestPtr r = give(buf(1), 512);
  ASSERT_EQ(2u, w.writes.size());
  EXPECT_FALSE(w.writes[1].whole);
  EXPECT_EQ(w.writes[0].slot, w.writes[1].slot);
  EXPECT_EQ(proto::CreditState::kArmed, w.writes[1].arm.state);
  EXPECT_EQ(w.writes[0].arm.generation, w.writes[1].arm.generation);
  EXPECT_EQ(1u, counters.armed_ahead);
  EXPECT_EQ(1u, counters.issued);
}

TEST_F(CreditBookTest, StagingStopsAtTheDepth) {
  ASSERT_TRUE(book.stage(w, pins, buf(0), 64, 1, 1, 2).ok());
  ASSERT_TRUE(book.stage(w, pins, buf(1), 64, 1, 2, 2).ok());
  ASSERT_TRUE(book.stage(w, pins, buf(2), 64, 1, 3, 2).ok());
  EXPECT_EQ(2u, w.writes.size());
  int pending = 0;
  for (const auto& g : book.given()) pending += g.state == State::kPending;
  EXPECT_EQ(2, pending);
}

TEST_F(CreditBookTest, WithEveryCreditOutAReceiveGoesByBounce) {
  std::vector<RequestPtr> held;
  for (std::uint32_t i = 0; i < kSlots; ++i) held.push_back(give(buf(0), 64, 1, static_cast<std::int32_t>(i)));
  for (const RequestPtr& r : held) EXPECT_GE(r->credit_slot, 0);
  RequestPtr extra = give(buf(1));
  EXPECT_EQ(-1, extra->credit_slot);
  EXPECT_EQ(kSlots, w.writes.size());
  const std::uint64_t misses = pins.counters().misses + pins.counters().hits;
  (void)give(buf(2));
  EXPECT_EQ(misses, pins.counters().misses + pins.counters().hits) << "no registration lookup with every credit out";
}

TEST_F(CreditBookTest, NoRoomToWriteLeavesTheSlotAsItWas) {
  w.room = false;
  RequestPtr r = give(buf(0));
  EXPECT_EQ(-1, r->credit_slot);
  for (const auto& g : book.given()) EXPECT_EQ(State::kFree, g.state);
  EXPECT_EQ(0u, counters.issued);
  w.room = true;
  RequestPtr later = give(buf(0));
  EXPECT_GE(later->credit_slot, 0);
}

TEST_F(CreditBookTest, ANewEntryTakesANeverWrittenSlotThenTheLeastRecentlyUsed) {
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < kSlots; ++i) {
    RequestPtr r = give(buf(0), 64, 1, static_cast<std::int32_t>(10 + i));
    order.push_back(static_cast<std::uint32_t>(r->credit_slot));
    book.settle_void(order.back());
  }
  // Four distinct slots, each written once.
  EXPECT_EQ(kSlots, std::set<std::uint32_t>(order.begin(), order.end()).size());
  // All free and at the peer: a new envelope replaces the one armed longest ago.
  RequestPtr r = give(buf(0), 64, 1, 99);
  EXPECT_EQ(order[0], static_cast<std::uint32_t>(r->credit_slot));
  EXPECT_TRUE(w.writes.back().whole);
}

TEST_F(CreditBookTest, ACancelRevokesAndTheAnswerCancelsTheReceive) {
  RequestPtr r = give(buf(0));
  const auto slot = static_cast<std::uint32_t>(r->credit_slot);
  std::optional<std::uint32_t> gen = book.revoke(slot);
  ASSERT_TRUE(gen.has_value());
  EXPECT_EQ(State::kRevoking, book.given()[slot].state);
  EXPECT_FALSE(book.revoke(slot).has_value()) << "one revocation per credit";
  Result<RequestPtr> cancelled = book.on_revoke_ack(slot, *gen);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(r, cancelled.value());
  EXPECT_EQ(State::kFree, book.given()[slot].state);
  EXPECT_EQ(1u, counters.revoked);
}

TEST_F(CreditBookTest, AMessageThatCameThroughBeforeTheRevocationWinsOverTheCancel) {
  RequestPtr r = give(buf(0));
  const auto slot = static_cast<std::uint32_t>(r->credit_slot);
  const std::uint32_t gen = book.revoke(slot).value();
  Result<CreditBook::Direct> d = book.on_direct(slot, 100);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(r, d->req);
  EXPECT_EQ(State::kAwaitAck, book.given()[slot].state) << "the slot waits for the answer before reuse";
  Result<RequestPtr> ack = book.on_revoke_ack(slot, gen);
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(nullptr, ack.value()) << "nothing to cancel: the receive completed with the message";
  EXPECT_EQ(State::kFree, book.given()[slot].state);
  EXPECT_EQ(0u, counters.revoked);
}

TEST_F(CreditBookTest, APeerThatBreaksTheRulesIsAProtocolError) {
  EXPECT_EQ(Code::kProtocol, book.on_direct(0, 10).status().code()) << "a free slot";
  EXPECT_EQ(Code::kProtocol, book.on_direct(kSlots, 10).status().code()) << "out of range";
  RequestPtr r = give(buf(0), 256);
  const auto slot = static_cast<std::uint32_t>(r->credit_slot);
  EXPECT_EQ(Code::kProtocol, book.on_direct(slot, 257).status().code()) << "longer than the buffer";
  EXPECT_EQ(State::kArmed, book.given()[slot].state) << "a rejected write changes nothing";
  EXPECT_EQ(Code::kProtocol, book.on_revoke_ack(slot, book.given()[slot].generation).status().code())
      << "an answer to no revocation";
  const std::uint32_t gen = book.revoke(slot).value();
  EXPECT_EQ(Code::kProtocol, book.on_revoke_ack(slot, gen + 1).status().code()) << "wrong generation";
  EXPECT_EQ(Code::kProtocol, book.on_revoke_ack(kSlots, gen).status().code());
  EXPECT_EQ(Code::kProtocol, book.on_revoked(kSlots, 1).code());
}

TEST_F(CreditBookTest, ResetFreesEverySlotAndNewEntriesTakeNewGenerations) {
  RequestPtr r = give(buf(0));
  const auto slot = static_cast<std::uint32_t>(r->credit_slot);
  const std::uint32_t gen = book.given()[slot].generation;
  book.reset();
  for (const auto& g : book.given()) {
    EXPECT_EQ(State::kFree, g.state);
    EXPECT_FALSE(g.at_peer);
    EXPECT_EQ(nullptr, g.req);
  }
  EXPECT_EQ(gen, book.given()[slot].generation);
}

// The peer's side of the table, as Channel::armed_credit reads it.
struct FakeTable {
  std::array<std::optional<Channel::Credit>, 4> slots;
  [[nodiscard]] std::uint32_t credit_slots() const { return 4; }
  [[nodiscard]] std::uint64_t arm_word(std::uint32_t k) const { return slots[k] ? slots[k]->arm_word : 0; }
  [[nodiscard]] std::optional<Channel::Credit> armed_credit(std::uint32_t k) const { return slots[k]; }
  void put(std::uint32_t k, std::uint32_t context, std::int32_t tag, std::uint32_t cap, std::uint32_t gen, std::uint32_t from,
           proto::CreditState state = proto::CreditState::kArmed) {
    Channel::Credit c;
    c.entry.addr = 0x1000 * (k + 1);
    c.entry.rkey = 50 + k;
    c.entry.capacity = cap;
    c.entry.context = context;
    c.entry.tag = tag;
    c.arm = {state, gen, from};
    c.arm_word = proto::encode_arm(c.arm);
    slots[k] = c;
  }
};

TEST_F(CreditBookTest, SenderUsesACreditOfTheSameEnvelopeAndSize) {
  FakeTable t;
  t.put(0, 1, 5, 100, 1, 0);   // too small
  t.put(1, 2, 5, 4096, 1, 0);  // other context
  t.put(2, 1, 6, 4096, 1, 0);  // other tag
  t.put(3, 1, 5, 4096, 1, 0);
  auto c = book.usable(t, 1, 5, 200);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(3u, c->slot);
  EXPECT_EQ(0x4000u, c->entry.addr);
  EXPECT_FALSE(c->landing);
  EXPECT_FALSE(book.usable(t, 1, 7, 10).has_value());
}

TEST_F(CreditBookTest, ACreditIsVoidOnceItsEnvelopeWasSentSinceItsReceiveWasPosted) {
  FakeTable t;
  t.put(0, 1, 5, 4096, 1, 10);  // posted when the 10th message was next
  book.note_sent(1, 5, 9);      // before the post: the receive is still waiting
  EXPECT_TRUE(book.usable(t, 1, 5, 8).has_value());
  book.note_sent(1, 5, 10);     // that message takes the receive
  EXPECT_FALSE(book.usable(t, 1, 5, 8).has_value());
  // A new issue of the credit (new arm word) is good again.
  t.put(0, 1, 5, 4096, 2, 11);
  EXPECT_TRUE(book.usable(t, 1, 5, 8).has_value());
}

TEST_F(CreditBookTest, ARevokedCreditIsNeverWrittenThrough) {
  FakeTable t;
  t.put(2, 1, 5, 4096, 3, 0);
  ASSERT_TRUE(book.on_revoked(2, 3).ok());
  EXPECT_FALSE(book.usable(t, 1, 5, 8).has_value());
  t.put(2, 1, 5, 4096, 4, 0);  // re-armed with a new generation
  EXPECT_TRUE(book.usable(t, 1, 5, 8).has_value());
}

TEST_F(CreditBookTest, TheEnvelopeTableIsBoundedAndForgettingOnlyVoidsCredits) {
  FakeTable t;
  t.put(0, 1, 5, 4096, 1, 100);  // posted before message 100
  book.note_sent(1, 5, 99);
  for (std::uint32_t i = 0; i < CreditBook::kMaxEnvelopes; ++i) book.note_sent(2, static_cast<std::int32_t>(i), 50);
  // Past the bound the table was cleared at a message numbered 50: still before the post.
  EXPECT_TRUE(book.usable(t, 1, 5, 8).has_value());
  for (std::uint32_t i = 0; i < CreditBook::kMaxEnvelopes; ++i) book.note_sent(3, static_cast<std::int32_t>(i), 200);
  // Cleared again at message 200, after the post: (1, 5) is taken as sent then, so its credit is
  // held void (a bounce), the safe side.
  EXPECT_FALSE(book.usable(t, 1, 5, 8).has_value());
}

// Landing credits (docs/early.md): armed at once for runtime memory, never void by the
// envelope rule, used once, second to a receive's own credit.
TEST_F(CreditBookTest, ALandingCreditIsWrittenArmedForItsZoneAndItsWriteIsALandingArrival) {
  Result<std::optional<std::uint32_t>> staged = book.stage_landing(w, 0x7000, 65536, 77, 1, 5);
  ASSERT_TRUE(staged.ok() && staged->has_value());
  ASSERT_EQ(1u, w.writes.size());
  const FakeWriter::Write wr = w.writes[0];  // a copy: give() below writes more
  EXPECT_EQ(**staged, wr.slot);
  EXPECT_TRUE(wr.whole);
  EXPECT_EQ(proto::CreditState::kLanding, wr.arm.state);
  EXPECT_EQ(0x7000u, wr.entry.addr);
  EXPECT_EQ(77u, wr.entry.rkey);
  EXPECT_EQ(65536u, wr.entry.capacity);
  EXPECT_EQ(State::kLanding, book.given()[wr.slot].state);
  // A receive posted now takes another slot: the landing credit is not a receive.
  RequestPtr r = give(buf(0), 256, 1, 5);
  EXPECT_NE(static_cast<std::int32_t>(wr.slot), r->credit_slot);
  Result<CreditBook::Direct> d = book.on_direct(wr.slot, 40000);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_TRUE(d->landing);
  EXPECT_EQ(nullptr, d->req);
  EXPECT_EQ(1u, d->context);
  EXPECT_EQ(5, d->tag);
  EXPECT_EQ(State::kFree, book.given()[wr.slot].state);
  // Over its capacity, or a second write through the same issue: a protocol error.
  ASSERT_TRUE(book.stage_landing(w, 0x7000, 100, 77, 1, 5).value().has_value());
  const std::uint32_t again = w.writes.back().slot;
  EXPECT_EQ(Code::kProtocol, book.on_direct(again, 101).status().code());
  ASSERT_TRUE(book.on_direct(again, 100).ok());
  EXPECT_EQ(Code::kProtocol, book.on_direct(again, 100).status().code());
}

TEST_F(CreditBookTest, ALandingCreditIsRevokedLikeAReceivesAndItsLateWriteStillArrives) {
  ASSERT_TRUE(book.stage_landing(w, 0x7000, 4096, 77, 1, 5).value().has_value());
  const std::uint32_t slot = w.writes.back().slot;
  const std::optional<std::uint32_t> gen = book.revoke_landing(slot);
  ASSERT_TRUE(gen.has_value());
  EXPECT_FALSE(book.revoke_landing(slot).has_value()) << "already being revoked";
  // The sender had written through it before it saw the revocation: the data is there.
  Result<CreditBook::Direct> d = book.on_direct(slot, 10);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->landing);
  EXPECT_EQ(State::kAwaitAck, book.given()[slot].state);
  Result<RequestPtr> ack = book.on_revoke_ack(slot, *gen);
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(nullptr, *ack);
  EXPECT_EQ(State::kFree, book.given()[slot].state);
  // A staged or re-armable slot is never a landing one: a receive into the zone's address gets
  // a whole new entry.
  RequestPtr r = give(reinterpret_cast<void*>(0x7000), 4096, 1, 5);
  EXPECT_TRUE(w.writes.back().whole);
}

// Speculative placement: an armed credit for a predicted buffer, no receive yet. On the wire it
// is a receive's armed credit (the envelope rule voids it at the sender); its write names no
// receive; the receive posted into it adopts it; it is revoked like a receive's; and a message
// that came otherwise settles it.
TEST_F(CreditBookTest, ASpeculativeCreditIsArmedWithoutAReceiveAndAdoptedByItsPost) {
  Result<nic::RegCache::Handle> pin = pins.acquire(buf(1), 4096);
  ASSERT_TRUE(pin.ok());
  Result<std::optional<std::uint32_t>> slot = book.speculate(w, std::move(pin.value()), buf(1), 4096, 1, 5);
  ASSERT_TRUE(slot.ok() && slot->has_value());
  const FakeWriter::Write wr = w.writes.back();
  EXPECT_TRUE(wr.whole);
  EXPECT_EQ(proto::CreditState::kArmed, wr.arm.state);
  EXPECT_EQ(7u, wr.arm.valid_from_seq);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf(1)), wr.entry.addr);
  EXPECT_EQ(State::kSpeculative, book.given()[**slot].state);
  // Its write: the data is in the buffer, no receive to complete.
  Result<CreditBook::Direct> d = book.on_direct(**slot, 4096);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->speculative);
  EXPECT_FALSE(d->landing);
  EXPECT_EQ(nullptr, d->req);
  EXPECT_EQ(State::kFree, book.given()[**slot].state);
  EXPECT_FALSE(book.given()[**slot].speculative);
  // Again (the arm word alone now: the sender holds the entry), then adopted by its receive.
  pin = pins.acquire(buf(1), 4096);
  slot = book.speculate(w, std::move(pin.value()), buf(1), 4096, 1, 5);
  ASSERT_TRUE(slot.ok() && slot->has_value());
  EXPECT_FALSE(w.writes.back().whole);
  auto r = std::make_shared<Request>();
  ASSERT_TRUE(book.adopt(**slot, r));
  EXPECT_EQ(State::kArmed, book.given()[**slot].state);
  EXPECT_EQ(static_cast<std::int32_t>(**slot), r->credit_slot);
  EXPECT_FALSE(book.adopt(**slot, r)) << "adopted twice";
  d = book.on_direct(**slot, 100);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->speculative);
  EXPECT_EQ(r, d->req);
}

TEST_F(CreditBookTest, ASpeculativeCreditIsRevokedOrSettledByAMessageThatCameOtherwise) {
  Result<nic::RegCache::Handle> pin = pins.acquire(buf(2), 512);
  const std::uint32_t slot = book.speculate(w, std::move(pin.value()), buf(2), 512, 1, 5).value().value();
  EXPECT_FALSE(book.revoke(slot).has_value()) << "revoke() is for a receive's credit";
  const std::optional<std::uint32_t> gen = book.revoke_speculative(slot);
  ASSERT_TRUE(gen.has_value());
  EXPECT_FALSE(book.revoke_speculative(slot).has_value());
  // Written through before the sender saw the revocation: still a speculative arrival.
  Result<CreditBook::Direct> d = book.on_direct(slot, 512);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->speculative);
  EXPECT_EQ(State::kAwaitAck, book.given()[slot].state);
  ASSERT_TRUE(book.on_revoke_ack(slot, *gen).ok());
  EXPECT_EQ(State::kFree, book.given()[slot].state);
  // Void: a message with its envelope came by bounce.
  pin = pins.acquire(buf(2), 512);
  const std::uint32_t again = book.speculate(w, std::move(pin.value()), buf(2), 512, 1, 5).value().value();
  book.settle_speculative(again);
  EXPECT_EQ(State::kFree, book.given()[again].state);
  EXPECT_EQ(Code::kProtocol, book.on_direct(again, 1).status().code());
  // No room to write: nothing changes.
  w.room = false;
  pin = pins.acquire(buf(3), 512);
  Result<std::optional<std::uint32_t>> none = book.speculate(w, std::move(pin.value()), buf(3), 512, 1, 6);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_F(CreditBookTest, TheSenderPrefersAReceivesCreditAndUsesALandingCreditOnceWhateverWasSent) {
  FakeTable t;
  t.put(0, 1, 5, 65536, 1, 0, proto::CreditState::kLanding);
  t.put(2, 1, 5, 4096, 1, 3);  // a posted receive's credit, valid from message 3
  auto c = book.usable(t, 1, 5, 2000);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(2u, c->slot) << "the receive's own buffer needs no copy";
  EXPECT_FALSE(c->landing);
  book.consumed(*c);
  book.note_sent(1, 5, 3);
  // The receive's credit is used; the landing one is not void for it (no receive behind it).
  c = book.usable(t, 1, 5, 60000);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(0u, c->slot);
  EXPECT_TRUE(c->landing);
  book.consumed(*c);
  book.note_sent(1, 5, 4);
  EXPECT_FALSE(book.usable(t, 1, 5, 10).has_value()) << "a landing credit carries one message";
  t.put(0, 1, 5, 65536, 2, 0, proto::CreditState::kLanding);  // a new issue
  EXPECT_TRUE(book.usable(t, 1, 5, 10).has_value());
  EXPECT_FALSE(book.usable(t, 1, 5, 65537).has_value()) << "over the zone's capacity";
}

}  // namespace
}  // namespace augur::host
