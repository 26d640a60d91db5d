// The messages of augur's protocols (host/augur/host/protocol.h): round trips, byte order, and
// every field a peer must not send rejected with kProtocol.
#include "augur/host/protocol.h"

#include <array>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace augur::host::proto {
namespace {

std::vector<std::byte> eager_slot(const MsgHeader& h, std::size_t payload) {
  std::vector<std::byte> b(sizeof(MsgHeader) + payload, std::byte{0x5a});
  encode(h, std::span<std::byte, sizeof(MsgHeader)>(b.data(), sizeof(MsgHeader)));
  return b;
}

MsgHeader good_header() {
  MsgHeader h;
  h.type = MsgType::kEager;
  h.credits = 3;
  h.src = 2;
  h.context = 9;
  h.tag = 77;
  h.seq = 41;
  h.length = 100;
  return h;
}

constexpr MsgExpect kExpect{.src = 2, .seq = 41, .slot_bytes = 8192};

TEST(MsgHeaderWire, RoundTrip) {
  auto slot = eager_slot(good_header(), 100);
  auto m = parse_message(slot, kExpect);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->header.type, MsgType::kEager);
  EXPECT_EQ(m->header.credits, 3);
  EXPECT_EQ(m->header.context, 9u);
  EXPECT_EQ(m->header.tag, 77);
  EXPECT_EQ(m->header.length, 100u);
  EXPECT_EQ(m->body.data(), slot.data() + sizeof(MsgHeader));
  EXPECT_EQ(m->body.size(), 100u);
}

// What a sender writes: the short form for an eager message whose context and tag fit 16 bits,
// the full form otherwise; both parse back to the same full header.
std::vector<std::byte> sent_slot(const MsgHeader& h, std::size_t payload, std::size_t* header_bytes = nullptr) {
  std::vector<std::byte> b(sizeof(MsgHeader) + payload, std::byte{0x5a});
  const std::size_t hb = encode_msg_header(h, std::span<std::byte, sizeof(MsgHeader)>(b.data(), sizeof(MsgHeader)));
  b.resize(hb + payload);
  if (header_bytes) *header_bytes = hb;
  return b;
}

TEST(MsgHeaderWire, EagerHeaderIsShortWhenContextAndTagFit) {
  struct Case {
    MsgType type;
    std::uint32_t context;
    std::int32_t tag;
    std::size_t bytes;
  };
  const Case cases[] = {
      {MsgType::kEager, 9, 77, 8},          {MsgType::kEager, 0xffff, 0xffff, 8},
      {MsgType::kEager, 0x10000, 77, 24},   {MsgType::kEager, 9, 0x10000, 24},
      {MsgType::kRts, 9, 77, 24},           {MsgType::kFin, 0, 0, 24},
  };
  for (const Case& c : cases) {
    MsgHeader h = good_header();
    h.type = c.type;
    h.context = c.context;
    h.tag = c.tag;
    const std::size_t body = c.type == MsgType::kEager ? 100 : c.type == MsgType::kRts ? sizeof(nic::RemoteBuffer) : 0;
    h.length = c.type == MsgType::kFin ? 3 : static_cast<std::uint32_t>(body);
    std::size_t hb = 0;
    auto slot = sent_slot(h, body, &hb);
    EXPECT_EQ(hb, c.bytes) << c.context << "/" << c.tag;
    EXPECT_EQ(hb, msg_header_bytes(c.type, c.context, c.tag));
    auto m = parse_message(slot, kExpect);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->header.type, c.type);
    EXPECT_EQ(m->header.src, 2u);
    EXPECT_EQ(m->header.seq, 41u);
    EXPECT_EQ(m->header.credits, 3);
    EXPECT_EQ(m->header.context, c.context);
    EXPECT_EQ(m->header.tag, c.tag);
    EXPECT_EQ(m->header.length, h.length);
    EXPECT_EQ(m->body.data(), slot.data() + hb);
    EXPECT_EQ(m->body.size(), body);
  }
  // The short form on the wire, byte by byte: type 8, sequence low byte, then big-endian fields.
  MsgHeader h = good_header();
  h.seq = 0x1234;
  h.credits = 0x0102;
  h.context = 0x0304;
  h.tag = 0x0506;
  auto slot = sent_slot(h, 0);
  const std::vector<std::byte> expect = {std::byte{8}, std::byte{0x34}, std::byte{1}, std::byte{2},
                                         std::byte{3}, std::byte{4},    std::byte{5}, std::byte{6}};
  EXPECT_EQ(slot, expect);
}

// The short form is checked as strictly as the full one: what it leaves out is implied, what it
// carries must agree with what the receiver knows.
TEST(MsgHeaderWire, ShortEagerHeaderRejectsWhatAPeerMustNotSend) {
  auto rejects = [](std::span<const std::byte> slot, const MsgExpect& expect, const char* what) {
    auto m = parse_message(slot, expect);
    ASSERT_FALSE(m.ok()) << what;
    EXPECT_EQ(m.status().code(), Code::kProtocol) << what;
    EXPECT_NE(m.status().message().find(what), std::string::npos) << m.status().message();
  };
  MsgHeader h = good_header();
  auto slot = sent_slot(h, 100);
  ASSERT_EQ(slot.size(), 108u);
  ASSERT_TRUE(parse_message(slot, kExpect).ok());
  // A replayed or skipped message: the low byte of the sequence does not match.
  rejects(slot, MsgExpect{.src = 2, .seq = 42, .slot_bytes = 8192}, "sequence low byte 41, expected 42");
  rejects(slot, MsgExpect{.src = 2, .seq = 41 + 1000, .slot_bytes = 8192}, "sequence low byte");
  // Truncated: fewer bytes than the short header.
  rejects(std::span<const std::byte>(slot).first(7), kExpect, "only 7 bytes");
  // A body beyond the eager limit, although it would fit the slot (sized for a full header).
  const MsgExpect tight{.src = 2, .seq = 41, .slot_bytes = 24 + 100};
  EXPECT_TRUE(parse_message(slot, tight).ok());
  auto longer = sent_slot(h, 101);
  rejects(longer, tight, "larger than the slot's eager limit");
  // Larger than the slot itself.
  rejects(sent_slot(h, 8200), kExpect, "larger than its slot");
}

// Found by tests/fuzz/msg_header_fuzz: with a slot under 16 bytes the eager-limit bound wrapped
// around and a short eager header was accepted in a slot too small for any payload.
TEST(MsgHeaderWire, ShortEagerHeaderInASlotTooSmallForAFullHeaderIsRejected) {
  const std::vector<std::byte> slot = {std::byte{0x08}, std::byte{0x29}, std::byte{0x00}, std::byte{0x05},
                                       std::byte{0x00}, std::byte{0x00}, std::byte{0x00}, std::byte{0x00}};
  for (std::uint32_t slot_bytes : {8u, 15u, 16u, 23u}) {
    auto m = parse_message(slot, MsgExpect{.src = 3, .seq = 41, .slot_bytes = slot_bytes});
    ASSERT_FALSE(m.ok()) << slot_bytes;
    EXPECT_EQ(m.status().code(), Code::kProtocol);
    EXPECT_NE(m.status().message().find("eager limit"), std::string::npos) << m.status().message();
  }
  EXPECT_TRUE(parse_message(slot, MsgExpect{.src = 3, .seq = 41, .slot_bytes = 24}).ok());  // no payload fits
}

// Each corruption a faulty or hostile peer could send is rejected, naming the problem.
TEST(MsgHeaderWire, RejectsWhatAPeerMustNotSend) {
  struct Case {
    const char* what;
    void (*mutate)(MsgHeader&);
    std::size_t payload;
    const char* expect;
  };
  const Case cases[] = {
      {"claims more payload than arrived", [](MsgHeader& h) { h.length = 5000; }, 100, "length 5000 but 100 bytes arrived"},
      {"wrong source", [](MsgHeader& h) { h.src = 3; }, 100, "claims to come from rank 3"},
      {"replayed sequence", [](MsgHeader& h) { h.seq = 40; }, 100, "sequence 40, expected 41"},
      {"negative tag", [](MsgHeader& h) { h.tag = -5; }, 100, "negative tag"},
      {"bad type", [](MsgHeader& h) { h.type = static_cast<MsgType>(9); }, 100, "type 9"},
      {"bad version", [](MsgHeader& h) { h.version = 2; }, 100, "version 2"},
      {"control with payload", [](MsgHeader& h) { h.type = MsgType::kCredit; }, 100, "control message with a payload"},
      {"RTS without buffer", [](MsgHeader& h) { h.type = MsgType::kRts; }, 100, "RTS without a remote buffer"},
      {"revoke with payload", [](MsgHeader& h) { h.type = MsgType::kRevoke; }, 100, "control message with a payload"},
      {"local-only type", [](MsgHeader& h) { h.type = MsgType::kDirect; }, 100, "type 128"},
      {"larger than slot", [](MsgHeader& h) { h.length = 9000; }, 9000, "larger than its slot"},
  };
  for (const Case& c : cases) {
    MsgHeader h = good_header();
    c.mutate(h);
    auto slot = eager_slot(h, c.payload);
    auto r = parse_message(slot, kExpect);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), Code::kProtocol) << c.what;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << c.what << ": " << r.status().message();
  }
  std::vector<std::byte> short_slot(10);
  EXPECT_EQ(parse_message(short_slot, kExpect).status().code(), Code::kProtocol);
}

// A header (either form), an arm block after it, then the body: what a receiver sends when
// arm words ride on its message (Channel::queue_arm).
std::vector<std::byte> slot_with_arms(const MsgHeader& h, const CarriedArms& arms, std::size_t body) {
  std::array<std::byte, sizeof(MsgHeader)> head{};
  const std::size_t hb = encode_msg_header(h, head);
  std::vector<std::byte> b(hb + arm_block_bytes(arms.count) + body, std::byte{0x5a});
  std::memcpy(b.data(), head.data(), hb);
  if (arms.count > 0) encode_arms(b.data(), arms, b.data() + hb);
  return b;
}

CarriedArms two_arms() {
  CarriedArms a;
  a.count = 2;
  a.slot[0] = 3;
  a.slot[1] = 15;
  a.word[0] = encode_arm({CreditState::kArmed, 0x123456, 40});
  a.word[1] = encode_arm({CreditState::kArmed, 7, 41});
  return a;
}

TEST(ArmsWire, ArmWordsRideBetweenHeaderAndBodyInBothHeaderForms) {
  for (std::uint32_t context : {9u, 0x10009u}) {  // short form, then full
    MsgHeader h = good_header();
    h.context = context;
    auto slot = slot_with_arms(h, two_arms(), 100);
    EXPECT_EQ(std::to_integer<std::uint8_t>(slot[0]) & kCarriesArms, kCarriesArms);
    auto m = parse_message(slot, kExpect);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->header.type, MsgType::kEager);
    EXPECT_EQ(m->header.context, context);
    EXPECT_EQ(m->header.length, 100u);
    EXPECT_EQ(m->body.size(), 100u);
    EXPECT_EQ(m->body.data() + m->body.size(), slot.data() + slot.size());
    ASSERT_EQ(m->arms.count, 2u);
    EXPECT_EQ(m->arms.slot[0], 3);
    EXPECT_EQ(m->arms.slot[1], 15);
    EXPECT_EQ(parse_arm(m->arms.word[0])->generation, 0x123456u);
    EXPECT_EQ(parse_arm(m->arms.word[1])->valid_from_seq, 41u);
  }
  // A control message carries them too, and still has no body.
  MsgHeader fin = good_header();
  fin.type = MsgType::kFin;
  auto slot = slot_with_arms(fin, two_arms(), 0);
  auto m = parse_message(slot, kExpect);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->header.type, MsgType::kFin);
  EXPECT_EQ(m->arms.count, 2u);
  // Without the flag nothing is taken for arms.
  auto plain = parse_message(eager_slot(good_header(), 100), kExpect);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->arms.count, 0u);
}

TEST(ArmsWire, RejectsWhatAPeerMustNotSend) {
  auto rejected = [](std::vector<std::byte> slot) {
    auto m = parse_message(slot, kExpect);
    return !m.ok() && m.status().code() == Code::kProtocol;
  };
  const MsgHeader h = good_header();  // short form
  auto count = [&](std::uint8_t n) {
    auto s = slot_with_arms(h, two_arms(), 10);
    s[sizeof(ShortEagerHeader)] = std::byte{n};
    return s;
  };
  EXPECT_TRUE(rejected(count(0)));
  EXPECT_TRUE(rejected(count(kMaxCarriedArms + 1)));
  auto unused = slot_with_arms(h, two_arms(), 10);
  unused[sizeof(ShortEagerHeader) + 1 + 5] = std::byte{1};  // slot entry 5 of 2 used
  EXPECT_TRUE(rejected(unused));
  auto bad_word = slot_with_arms(h, two_arms(), 10);
  bad_word[sizeof(ShortEagerHeader) + sizeof(ArmBlock)] = std::byte{9};  // state 9
  EXPECT_TRUE(rejected(bad_word));
  // The flag with a block cut short: 2 words announced, fewer bytes there.
  auto cut = slot_with_arms(h, two_arms(), 0);
  cut.resize(sizeof(ShortEagerHeader) + sizeof(ArmBlock) + 4);
  EXPECT_TRUE(rejected(cut));
  // The payload after the arms still must fit the slot's eager limit.
  const MsgExpect tight{.src = 2, .seq = 41, .slot_bytes = 24 + 64};
  auto fits = slot_with_arms(h, two_arms(), 64);
  EXPECT_FALSE(parse_message(fits, tight).ok());  // 8 + 24 + 64 > 88: larger than the slot
  auto over = slot_with_arms(h, CarriedArms{}, 0);
  EXPECT_TRUE(parse_message(over, tight).ok());
}

TEST(CreditWire, ArmWordRoundTripsAndIsBigEndian) {
  const CreditArm a{CreditState::kArmed, 0xabcdef, 0x01020304};
  const std::uint64_t raw = encode_arm(a);
  const auto* b = reinterpret_cast<const unsigned char*>(&raw);
  EXPECT_EQ(b[0], 2);  // state first: the byte a reader sees change
  EXPECT_EQ(b[1], 0xab);
  EXPECT_EQ(b[4], 0x01);
  EXPECT_EQ(b[7], 0x04);
  Result<CreditArm> back = parse_arm(raw);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->state, CreditState::kArmed);
  EXPECT_EQ(back->generation, 0xabcdefu);
  EXPECT_EQ(back->valid_from_seq, 0x01020304u);
  std::uint64_t bad = raw;
  reinterpret_cast<unsigned char*>(&bad)[0] = 7;
  EXPECT_EQ(parse_arm(bad).status().code(), Code::kProtocol);
}

TEST(CreditWire, EntryRoundTripsAndRejectsWhatCouldMisdirectAWrite) {
  CreditEntry e;
  e.addr = 0x7f0012345678;
  e.rkey = 0x1234;
  e.capacity = 4096;
  e.context = 9;
  e.tag = 77;
  e.arm = encode_arm({CreditState::kPending, 5, 0});
  std::array<std::byte, sizeof(CreditEntry)> buf{};
  encode(e, buf);
  Result<CreditEntry> back = parse_credit_entry(buf);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->addr, e.addr);
  EXPECT_EQ(back->rkey, e.rkey);
  EXPECT_EQ(back->capacity, e.capacity);
  EXPECT_EQ(back->context, e.context);
  EXPECT_EQ(back->tag, e.tag);
  EXPECT_EQ(0, std::memcmp(buf.data() + kCreditArmOffset, &e.arm, sizeof e.arm));
  struct Case {
    const char* what;
    void (*mutate)(CreditEntry&);
  };
  const Case cases[] = {
      {"ANY_TAG", [](CreditEntry& c) { c.tag = -1; }},
      {"capacity beyond the immediate", [](CreditEntry& c) { c.capacity = kMaxDirectBytes + 1; }},
      {"null buffer", [](CreditEntry& c) { c.addr = 0; }},
      {"wrapping range", [](CreditEntry& c) { c.addr = ~std::uint64_t{0} - 10; }},
  };
  for (const Case& c : cases) {
    CreditEntry m = e;
    c.mutate(m);
    encode(m, buf);
    EXPECT_EQ(parse_credit_entry(buf).status().code(), Code::kProtocol) << c.what;
  }
  EXPECT_EQ(parse_credit_entry(std::span<const std::byte>(buf.data(), 10)).status().code(), Code::kProtocol);
}

TEST(CreditWire, ImmediateCarriesSlotAndLength) {
  const std::uint32_t imm = direct_imm(200, kMaxDirectBytes);
  EXPECT_EQ(direct_imm_slot(imm), 200u);
  EXPECT_EQ(direct_imm_length(imm), kMaxDirectBytes);
  EXPECT_EQ(direct_imm_length(direct_imm(3, 0)), 0u);
}


// ---- Run lists (kRtsRuns bodies) ----

std::vector<std::byte> run_list(std::uint64_t length, const std::vector<RemoteRun>& runs) {
  std::vector<std::byte> out(run_list_bytes(runs.size()));
  encode_run_list(length, runs, out);
  return out;
}

const std::vector<RemoteRun> kRuns = {{0x1000, 100, 7}, {0x3003, 1, 8}, {0xffff'0000'0000'0000ull, 4096, 9}};

TEST(RunListWire, RoundTripsAndIsBigEndian) {
  auto bytes = run_list(4197, kRuns);
  ASSERT_EQ(bytes.size(), 24u + 3 * 16);
  auto r = parse_run_list(bytes, 4197, 3);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), kRuns);
  // "AURL", version 1, count 3, then the first run's address, length and key, most significant byte first.
  EXPECT_EQ(std::to_integer<int>(bytes[0]), 'A');
  EXPECT_EQ(std::to_integer<int>(bytes[3]), 'L');
  EXPECT_EQ(std::to_integer<int>(bytes[5]), 1);
  EXPECT_EQ(std::to_integer<int>(bytes[11]), 3);
  EXPECT_EQ(std::to_integer<int>(bytes[23]), 4197 & 0xff);
  EXPECT_EQ(std::to_integer<int>(bytes[22]), 4197 >> 8);
  EXPECT_EQ(std::to_integer<int>(bytes[24 + 6]), 0x10);
  EXPECT_EQ(std::to_integer<int>(bytes[24 + 11]), 100);
  EXPECT_EQ(std::to_integer<int>(bytes[24 + 15]), 7);
}

TEST(RunListWire, BoundedByTheSlot) {
  EXPECT_EQ(max_remote_runs(8192), (8192u - 24) / 16);
  EXPECT_EQ(max_remote_runs(64), 2u);
  EXPECT_EQ(max_remote_runs(23), 0u);
}

// Each lie a peer could tell about where to read is rejected before anything is read.
TEST(RunListWire, RejectsWhatAPeerMustNotSend) {
  struct Case {
    const char* what;
    std::vector<std::byte> bytes;
    std::uint64_t msg_length;
    std::uint32_t max_runs;
    const char* expect;
  };
  auto with = [](std::vector<std::byte> b, std::size_t at, std::uint8_t v) {
    b[at] = std::byte{v};
    return b;
  };
  const auto good = run_list(4197, kRuns);
  std::vector<Case> cases = {
      {"bad magic", with(good, 0, 'X'), 4197, 10, "bad magic"},
      {"bad version", with(good, 5, 2), 4197, 10, "version 2"},
      {"reserved set", with(good, 7, 1), 4197, 10, "reserved"},
      {"second reserved set", with(good, 15, 1), 4197, 10, "reserved"},
      {"count larger than the body", with(good, 11, 4), 4197, 10, "4 runs in 72 bytes"},
      {"count smaller than the body", with(good, 11, 2), 4197, 10, "2 runs in 72 bytes"},
      {"no runs", with(good, 11, 0), 4197, 10, "0 runs"},
      {"more runs than allowed", good, 4197, 2, "3 runs (1 to 2 allowed)"},
      {"length differs from the header", good, 4196, 10, "length 4197, message of 4196"},
      {"zero-length run", run_list(4196, {{0x1000, 100, 7}, {0x3003, 0, 8}, {0x5000, 4096, 9}}), 4196, 10, "zero-length run"},
      {"null address", run_list(4197, {{0x1000, 100, 7}, {0, 1, 8}, {0x5000, 4096, 9}}), 4197, 10, "null address"},
      {"wrapping run", run_list(4197, {{0x1000, 100, 7}, {0x3003, 1, 8}, {~0ull - 10, 4096, 9}}), 4197, 10, "wraps"},
      {"runs short of the length", run_list(5000, kRuns), 5000, 10, "runs sum to 4197 bytes, message of 5000"},
      {"runs past the length", run_list(100, kRuns), 100, 10, "runs sum to 4197 bytes, message of 100"},
      {"truncated header", std::vector<std::byte>(good.begin(), good.begin() + 20), 4197, 10, "only 20 bytes"},
  };
  for (const Case& c : cases) {
    auto r = parse_run_list(c.bytes, c.msg_length, c.max_runs);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), Code::kProtocol) << c.what;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << c.what << ": " << r.status().message();
  }
}

TEST(RunListWire, HeaderOfARunListRtsNeedsABody) {
  MsgHeader h = good_header();
  h.type = MsgType::kRtsRuns;
  auto ok_slot = eager_slot(h, run_list_bytes(1));
  EXPECT_TRUE(parse_message(ok_slot, kExpect).ok());
  auto short_slot = eager_slot(h, run_list_bytes(1) - 1);
  auto r = parse_message(short_slot, kExpect);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("RTS without a run list"), std::string::npos);
  h.tag = -1;
  EXPECT_FALSE(parse_message(eager_slot(h, run_list_bytes(1)), kExpect).ok());
}

}  // namespace
}  // namespace augur::host::proto
