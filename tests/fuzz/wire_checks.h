// Invariants of proto::parse_message shared by the header and RTS/control-body harnesses.
#pragma once

#include <array>

#include "augur/host/protocol.h"
#include "augur/nic/wire.h"
#include "fuzz_util.h"

namespace augur::fuzz {
namespace proto = augur::host::proto;

// The receiver's side of parse_message, from the front of the input.
inline proto::MsgExpect take_expect(Input& in) {
  proto::MsgExpect e{};
  e.src = in.take<std::uint32_t>();
  e.seq = in.take<std::uint32_t>();
  e.slot_bytes = in.take<std::uint32_t>();
  return e;
}

// What any accepted message satisfies, whatever its type: the body is the tail of the slot, the
// header is one of the two forms and re-encodes to the bytes that arrived (both forms are
// canonical), and nothing claims more than the slot holds.
inline void check_message(std::span<const std::byte> slot, const proto::MsgExpect& expect, const proto::Message& m) {
  const proto::MsgHeader& h = m.header;
  AUGUR_FUZZ_CHECK(slot.size() <= expect.slot_bytes);
  AUGUR_FUZZ_CHECK(inside(m.body, slot));
  AUGUR_FUZZ_CHECK(m.body.data() + m.body.size() == slot.data() + slot.size());
  const std::size_t head_bytes = slot.size() - m.body.size();  // header and arm block
  const auto first = std::to_integer<std::uint8_t>(slot[0]);
  const bool carries_arms = (first & proto::kCarriesArms) != 0;
  const bool short_form = (first & ~proto::kCarriesArms) == static_cast<std::uint8_t>(proto::MsgType::kEagerShort);
  const std::size_t header_bytes = short_form ? sizeof(proto::ShortEagerHeader) : sizeof(proto::MsgHeader);
  AUGUR_FUZZ_CHECK(carries_arms == (m.arms.count > 0));
  AUGUR_FUZZ_CHECK(m.arms.count <= proto::kMaxCarriedArms);
  AUGUR_FUZZ_CHECK(head_bytes == header_bytes + proto::arm_block_bytes(m.arms.count));
  for (std::uint32_t k = 0; k < m.arms.count; ++k) AUGUR_FUZZ_CHECK(proto::parse_arm(m.arms.word[k]).ok());
  AUGUR_FUZZ_CHECK(h.src == expect.src && h.seq == expect.seq && h.version == proto::MsgHeader::kVersion);
  std::array<std::byte, sizeof(proto::MsgHeader)> again{};
  if (short_form) {
    AUGUR_FUZZ_CHECK(h.type == proto::MsgType::kEager);
    AUGUR_FUZZ_CHECK(proto::encode_msg_header(h, again) == sizeof(proto::ShortEagerHeader));
  } else {
    proto::encode(h, again);
  }
  if (carries_arms) again[0] |= std::byte{proto::kCarriesArms};
  AUGUR_FUZZ_CHECK(same_bytes(std::span(again).first(header_bytes), slot.first(header_bytes)));
  if (carries_arms) {  // the block re-encodes to the bytes that came
    std::array<std::byte, proto::arm_block_bytes(proto::kMaxCarriedArms)> block{};
    std::byte scratch[1] = {};
    proto::encode_arms(scratch, m.arms, block.data());
    AUGUR_FUZZ_CHECK(same_bytes(std::span(block).first(head_bytes - header_bytes),
                                slot.subspan(header_bytes, head_bytes - header_bytes)));
  }
  switch (h.type) {
    case proto::MsgType::kEager:
      AUGUR_FUZZ_CHECK(h.tag >= 0 && h.length == m.body.size());
      // The payload fits the slot's eager limit, whichever header form carried it.
      AUGUR_FUZZ_CHECK(m.body.size() + sizeof(proto::MsgHeader) <= expect.slot_bytes);
      break;
    case proto::MsgType::kRts:
      AUGUR_FUZZ_CHECK(h.tag >= 0 && m.body.size() == sizeof(nic::RemoteBuffer));
      break;
    case proto::MsgType::kRtsRuns:
      AUGUR_FUZZ_CHECK(h.tag >= 0 && m.body.size() >= proto::run_list_bytes(1));
      break;
    case proto::MsgType::kFin:
    case proto::MsgType::kCredit:
    case proto::MsgType::kRevoke:
    case proto::MsgType::kRevokeAck:
      AUGUR_FUZZ_CHECK(m.body.empty());
      break;
    case proto::MsgType::kDirect:
    case proto::MsgType::kEagerShort:
      fail("a wire-only or receiver-only type came out of parse_message", __FILE__, __LINE__);
  }
}

// An accepted run list: as many runs as allowed, exactly the bytes they need, each run a real
// range, and together exactly the message: in packed order no run reaches past msg_length.
inline void check_run_list(std::span<const std::byte> bytes, std::uint64_t msg_length, std::uint32_t max_runs,
                           const std::vector<proto::RemoteRun>& runs) {
  AUGUR_FUZZ_CHECK(!runs.empty() && runs.size() <= max_runs);
  AUGUR_FUZZ_CHECK(bytes.size() == proto::run_list_bytes(runs.size()));
  std::uint64_t offset = 0;
  for (const proto::RemoteRun& r : runs) {
    AUGUR_FUZZ_CHECK(r.length > 0 && r.addr != 0 && r.addr <= UINT64_MAX - r.length);
    AUGUR_FUZZ_CHECK(r.length <= msg_length - offset);
    offset += r.length;
  }
  AUGUR_FUZZ_CHECK(offset == msg_length);
  std::vector<std::byte> again(bytes.size());
  proto::encode_run_list(msg_length, runs, again);
  AUGUR_FUZZ_CHECK(same_bytes(std::span<const std::byte>(again), bytes));
}

}  // namespace augur::fuzz
