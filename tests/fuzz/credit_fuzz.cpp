// Direct-placement credits as a receiver's NIC writes them into the sender's table: the entry's
// fields (proto::parse_credit_entry), its arm word (proto::parse_arm, read as the 8 bytes in memory,
// as Channel::armed_credit does) and the immediate that names slot and length of a direct write.
// Input: a 32-byte CreditEntry as it sits in memory, then a u32 immediate (host order).
#include <array>

#include "fuzz_util.h"
#include "augur/host/protocol.h"
#include "augur/nic/wire.h"

namespace nic = augur::nic;
namespace proto = augur::host::proto;

namespace {

void check_entry(std::span<const std::byte> fields) {
  augur::Result<proto::CreditEntry> e = proto::parse_credit_entry(fields);
  if (!e.ok()) {
    AUGUR_FUZZ_CHECK(e.status().code() == augur::Code::kProtocol);
    return;
  }
  // Nothing that could send a write to a null, wrapping or oversized range, or match ANY_TAG.
  AUGUR_FUZZ_CHECK(e->tag >= 0 && e->capacity <= proto::kMaxDirectBytes);
  AUGUR_FUZZ_CHECK(e->addr != 0 && e->addr <= UINT64_MAX - e->capacity);
  std::array<std::byte, sizeof(proto::CreditEntry)> again{};
  proto::encode(e.value(), again);
  AUGUR_FUZZ_CHECK(augur::fuzz::same_bytes(std::span(again).first(proto::kCreditArmOffset), fields.first(proto::kCreditArmOffset)));
}

void check_arm(std::uint64_t raw) {
  augur::Result<proto::CreditArm> a = proto::parse_arm(raw);
  if (!a.ok()) {
    AUGUR_FUZZ_CHECK(a.status().code() == augur::Code::kProtocol);
    return;
  }
  AUGUR_FUZZ_CHECK(a->state == proto::CreditState::kFree || a->state == proto::CreditState::kPending ||
                   a->state == proto::CreditState::kArmed || a->state == proto::CreditState::kLanding);
  AUGUR_FUZZ_CHECK(a->generation <= 0xffffff);
  AUGUR_FUZZ_CHECK(proto::encode_arm(a.value()) == raw);  // every field of the word is significant
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  augur::fuzz::Input in(data, size);
  const auto entry = in.take<std::array<std::byte, sizeof(proto::CreditEntry)>>();
  const auto imm = in.take<std::uint32_t>();
  // The parser gets the entry's fields without the arm word; shorter inputs must be refused.
  check_entry(std::span(entry).first(std::min<std::size_t>(size, proto::kCreditArmOffset)));
  std::uint64_t raw = 0;
  std::memcpy(&raw, entry.data() + proto::kCreditArmOffset, sizeof raw);
  check_arm(raw);
  const std::uint32_t slot = proto::direct_imm_slot(imm);
  const std::uint32_t length = proto::direct_imm_length(imm);
  AUGUR_FUZZ_CHECK(slot <= proto::kMaxCreditSlots && length <= proto::kMaxDirectBytes);
  AUGUR_FUZZ_CHECK(proto::direct_imm(slot, length) == imm);
  return 0;
}
