#include "augur/host/protocol.h"

#include <cstring>
#include <string>

#include "augur/wire_codec.h"

namespace augur::host::proto {

using wire_codec::bad;
using wire_codec::Reader;
using wire_codec::Writer;

void encode_run_list(std::uint64_t length, std::span<const RemoteRun> runs, std::span<std::byte> out) noexcept {
  Writer w(out.data());
  const RunListHeader h;
  w.put(h.magic);
  w.put(h.version);
  w.put(h.reserved);
  w.put(static_cast<std::uint32_t>(runs.size()));
  w.put(h.reserved2);
  w.put(length);
  for (const RemoteRun& r : runs) {
    w.put(r.addr);
    w.put(r.length);
    w.put(r.rkey);
  }
}

Result<std::vector<RemoteRun>> parse_run_list(std::span<const std::byte> in, std::uint64_t msg_length,
                                              std::uint32_t max_runs) {
  if (in.size() < sizeof(RunListHeader)) return bad("run list", "only " + std::to_string(in.size()) + " bytes");
  Reader r(in.data());
  RunListHeader h;
  h.magic = r.get<std::uint32_t>();
  h.version = r.get<std::uint16_t>();
  h.reserved = r.get<std::uint16_t>();
  h.count = r.get<std::uint32_t>();
  h.reserved2 = r.get<std::uint32_t>();
  h.length = r.get<std::uint64_t>();
  if (h.magic != RunListHeader::kMagic) return bad("run list", "bad magic");
  if (h.version != RunListHeader::kVersion) return bad("run list", "version " + std::to_string(h.version));
  if (h.reserved != 0 || h.reserved2 != 0) return bad("run list", "reserved fields set");
  if (h.count == 0 || h.count > max_runs) {
    return bad("run list", std::to_string(h.count) + " runs (1 to " + std::to_string(max_runs) + " allowed)");
  }
  if (in.size() != run_list_bytes(h.count)) {
    return bad("run list", std::to_string(h.count) + " runs in " + std::to_string(in.size()) + " bytes");
  }
  if (h.length != msg_length) {
    return bad("run list", "length " + std::to_string(h.length) + ", message of " + std::to_string(msg_length));
  }
  std::vector<RemoteRun> runs(h.count);
  std::uint64_t sum = 0;
  for (RemoteRun& run : runs) {
    run.addr = r.get<std::uint64_t>();
    run.length = r.get<std::uint32_t>();
    run.rkey = r.get<std::uint32_t>();
    if (run.length == 0) return bad("run list", "zero-length run");
    if (run.addr == 0) return bad("run list", "null address");
    if (run.addr + run.length < run.addr) return bad("run list", "address range wraps around");
    sum += run.length;  // at most 2^32 runs of < 2^32 bytes: no overflow
  }
  if (sum != msg_length) {
    return bad("run list", "runs sum to " + std::to_string(sum) + " bytes, message of " + std::to_string(msg_length));
  }
  return runs;
}

void encode(const MsgHeader& in, std::span<std::byte, sizeof(MsgHeader)> out) noexcept {
  Writer w(out.data());
  w.put(static_cast<std::uint8_t>(in.type));
  w.put(in.version);
  w.put(in.credits);
  w.put(in.src);
  w.put(in.context);
  w.put(static_cast<std::uint32_t>(in.tag));
  w.put(in.seq);
  w.put(in.length);
}

std::size_t encode_msg_header(const MsgHeader& in, std::span<std::byte, sizeof(MsgHeader)> out) noexcept {
  const std::size_t bytes = msg_header_bytes(in.type, in.context, in.tag);
  if (bytes == sizeof(MsgHeader)) {
    encode(in, out);
    return bytes;
  }
  Writer w(out.data());
  w.put(static_cast<std::uint8_t>(MsgType::kEagerShort));
  w.put(static_cast<std::uint8_t>(in.seq & 0xff));
  w.put(in.credits);
  w.put(static_cast<std::uint16_t>(in.context));
  w.put(static_cast<std::uint16_t>(in.tag));
  return bytes;
}

namespace {

// The arm block at `in` (after a header whose type byte had kCarriesArms): its bytes.
Result<std::size_t> parse_arms(std::span<const std::byte> in, CarriedArms& out) {
  if (in.size() < sizeof(ArmBlock)) return bad("arm block", "only " + std::to_string(in.size()) + " bytes");
  Reader r(in.data());
  out.count = r.get<std::uint8_t>();
  if (out.count < 1 || out.count > kMaxCarriedArms) return bad("arm block", std::to_string(out.count) + " arm words");
  const std::size_t bytes = arm_block_bytes(out.count);
  if (in.size() < bytes) return bad("arm block", std::to_string(out.count) + " arm words in " + std::to_string(in.size()) + " bytes");
  for (std::uint32_t k = 0; k < kMaxCarriedArms; ++k) {
    out.slot[k] = r.get<std::uint8_t>();
    if (k >= out.count && out.slot[k] != 0) return bad("arm block", "unused slot entry set");
  }
  for (std::uint32_t k = 0; k < out.count; ++k) {
    std::memcpy(&out.word[k], in.data() + sizeof(ArmBlock) + k * sizeof(std::uint64_t), sizeof(std::uint64_t));
    AUGUR_RETURN_IF_ERROR(parse_arm(out.word[k]).status());
  }
  return bytes;
}

Result<Message> parse_short_eager(std::span<const std::byte> in, const MsgExpect& expect, bool carries_arms) {
  if (in.size() < sizeof(ShortEagerHeader)) return bad("message header", "only " + std::to_string(in.size()) + " bytes");
  Reader r(in.data());
  r.get<std::uint8_t>();  // the type, already read
  const auto seq_low = r.get<std::uint8_t>();
  MsgHeader h;
  h.type = MsgType::kEager;
  h.credits = r.get<std::uint16_t>();
  h.context = r.get<std::uint16_t>();
  h.tag = r.get<std::uint16_t>();
  if (seq_low != (expect.seq & 0xff)) {
    return bad("message header", "sequence low byte " + std::to_string(seq_low) + ", expected " +
                                     std::to_string(expect.seq & 0xff));
  }
  Message m{h, {}, {}};
  std::size_t head = sizeof(ShortEagerHeader);
  if (carries_arms) {
    AUGUR_ASSIGN_OR_RETURN(std::size_t arms, parse_arms(in.subspan(head), m.arms));
    head += arms;
  }
  // The slot fits a full header: the eager limit is slot_bytes - 24 (added, not subtracted, so
  // that a slot under 24 bytes admits no payload instead of wrapping around; found by fuzzing).
  if (in.size() - head + sizeof(MsgHeader) > expect.slot_bytes) {
    return bad("message header", "eager payload larger than the slot's eager limit");
  }
  m.header.src = expect.src;
  m.header.seq = expect.seq;
  m.header.length = static_cast<std::uint32_t>(in.size() - head);
  m.body = in.subspan(head);
  return m;
}

}  // namespace

Result<Message> parse_message(std::span<const std::byte> in, const MsgExpect& expect) {
  if (in.size() > expect.slot_bytes) return bad("message header", "message larger than its slot");
  const auto first = in.empty() ? std::uint8_t{0} : std::to_integer<std::uint8_t>(in[0]);
  const bool carries_arms = (first & kCarriesArms) != 0;
  const auto type = static_cast<std::uint8_t>(first & ~kCarriesArms);
  if (type == static_cast<std::uint8_t>(MsgType::kEagerShort)) return parse_short_eager(in, expect, carries_arms);
  if (in.size() < sizeof(MsgHeader)) return bad("message header", "only " + std::to_string(in.size()) + " bytes");
  Reader r(in.data());
  MsgHeader h;
  r.get<std::uint8_t>();  // the type, read above
  h.version = r.get<std::uint8_t>();
  h.credits = r.get<std::uint16_t>();
  h.src = r.get<std::uint32_t>();
  h.context = r.get<std::uint32_t>();
  h.tag = static_cast<std::int32_t>(r.get<std::uint32_t>());
  h.seq = r.get<std::uint32_t>();
  h.length = r.get<std::uint32_t>();
  if (type < 1 || type > 7) return bad("message header", "type " + std::to_string(type));
  h.type = static_cast<MsgType>(type);
  if (h.version != MsgHeader::kVersion) return bad("message header", "version " + std::to_string(h.version));
  if (h.src != expect.src) {
    return bad("message header", "claims to come from rank " + std::to_string(h.src) + " on the QP of rank " +
                                     std::to_string(expect.src));
  }
  if (h.seq != expect.seq) {
    return bad("message header", "sequence " + std::to_string(h.seq) + ", expected " + std::to_string(expect.seq));
  }
  Message m{h, {}, {}};
  std::size_t head = sizeof(MsgHeader);
  if (carries_arms) {
    AUGUR_ASSIGN_OR_RETURN(std::size_t arms, parse_arms(in.subspan(head), m.arms));
    head += arms;
  }
  const std::size_t body = in.size() - head;
  switch (h.type) {
    case MsgType::kEager:
      if (h.tag < 0) return bad("message header", "negative tag " + std::to_string(h.tag));
      if (h.length != body) {
        return bad("message header", "length " + std::to_string(h.length) + " but " + std::to_string(body) + " bytes arrived");
      }
      break;
    case MsgType::kRts:
      if (h.tag < 0) return bad("message header", "negative tag " + std::to_string(h.tag));
      if (body != sizeof(nic::RemoteBuffer)) return bad("message header", "RTS without a remote buffer");
      break;
    case MsgType::kRtsRuns:  // the run list itself is checked by parse_run_list
      if (h.tag < 0) return bad("message header", "negative tag " + std::to_string(h.tag));
      if (body < run_list_bytes(1)) return bad("message header", "RTS without a run list");
      break;
    case MsgType::kFin:  // length names the RTS answered; checked by the engine
    case MsgType::kCredit:
    case MsgType::kRevoke:  // slot and generation are checked by the engine
    case MsgType::kRevokeAck:
      if (body != 0) return bad("message header", "control message with a payload");
      break;
    case MsgType::kDirect:
    case MsgType::kEagerShort:  // handled above: a full header never carries it
      return bad("message header", "type " + std::to_string(type) + " in a full header");
  }
  m.body = in.subspan(head);
  return m;
}

void encode_arms(std::byte* header, const CarriedArms& arms, std::byte* out) noexcept {
  header[0] |= std::byte{kCarriesArms};
  Writer w(out);
  w.put(static_cast<std::uint8_t>(arms.count));
  for (std::uint32_t k = 0; k < kMaxCarriedArms; ++k) w.put(k < arms.count ? arms.slot[k] : std::uint8_t{0});
  std::memcpy(out + sizeof(ArmBlock), arms.word, arms.count * sizeof(std::uint64_t));  // already encoded
}

std::uint64_t encode_arm(const CreditArm& a) noexcept {
  std::uint64_t raw = 0;
  Writer w(reinterpret_cast<std::byte*>(&raw));
  w.put(static_cast<std::uint8_t>(a.state));
  w.put(static_cast<std::uint8_t>(a.generation >> 16));
  w.put(static_cast<std::uint16_t>(a.generation & 0xffff));
  w.put(a.valid_from_seq);
  return raw;
}

Result<CreditArm> parse_arm(std::uint64_t raw) {
  Reader r(reinterpret_cast<const std::byte*>(&raw));
  const auto state = r.get<std::uint8_t>();
  if (state > static_cast<std::uint8_t>(CreditState::kLanding)) return bad("credit", "state " + std::to_string(state));
  CreditArm a;
  a.state = static_cast<CreditState>(state);
  a.generation = std::uint32_t{r.get<std::uint8_t>()} << 16;
  a.generation |= r.get<std::uint16_t>();
  a.valid_from_seq = r.get<std::uint32_t>();
  return a;
}

void encode(const CreditEntry& in, std::span<std::byte, sizeof(CreditEntry)> out) noexcept {
  Writer w(out.data());
  w.put(in.addr);
  w.put(in.rkey);
  w.put(in.capacity);
  w.put(in.context);
  w.put(static_cast<std::uint32_t>(in.tag));
  std::memcpy(out.data() + kCreditArmOffset, &in.arm, sizeof(in.arm));  // already encoded
}

Result<CreditEntry> parse_credit_entry(std::span<const std::byte> in) {
  if (in.size() < kCreditArmOffset) return bad("credit", "only " + std::to_string(in.size()) + " bytes");
  Reader r(in.data());
  CreditEntry e;
  e.addr = r.get<std::uint64_t>();
  e.rkey = r.get<std::uint32_t>();
  e.capacity = r.get<std::uint32_t>();
  e.context = r.get<std::uint32_t>();
  e.tag = static_cast<std::int32_t>(r.get<std::uint32_t>());
  if (e.tag < 0) return bad("credit", "tag " + std::to_string(e.tag));
  if (e.capacity > kMaxDirectBytes) return bad("credit", "capacity " + std::to_string(e.capacity));
  if (e.addr == 0 || e.addr + e.capacity < e.addr) return bad("credit", "buffer address");
  return e;
}

}  // namespace augur::host::proto
