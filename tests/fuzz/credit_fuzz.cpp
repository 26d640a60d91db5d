// Direct-placement credits as a receiver's NIC writes them into the sender's table: the entry's
// fields (nic::parse_credit_entry), its arm word (nic::parse_arm, read as the 8 bytes in memory,
// as Channel::armed_credit does) and the immediate that names slot and length of a direct write.
// Input: a 32-byte CreditEntry as it sits in memory, then a u32 immediate (host order).
#include <array>

#include "fuzz_util.h"
#include "augur/nic/wire.h"

namespace nic = augur::nic;

namespace {

void check_entry(std::span<const std::byte> fields) {
  augur::Result<nic::CreditEntry> e = nic::parse_credit_entry(fields);
  if (!e.ok()) {
    AUGUR_FUZZ_CHECK(e.status().code() == augur::Code::kProtocol);
    return;
  }
  // Nothing that could send a write to a null, wrapping or oversized range, or match ANY_TAG.
  AUGUR_FUZZ_CHECK(e->tag >= 0 && e->capacity <= nic::kMaxDirectBytes);
  AUGUR_FUZZ_CHECK(e->addr != 0 && e->addr <= UINT64_MAX - e->capacity);
  std::array<std::byte, sizeof(nic::CreditEntry)> again{};
  nic::encode(e.value(), again);
  AUGUR_FUZZ_CHECK(augur::fuzz::same_bytes(std::span(again).first(nic::kCreditArmOffset), fields.first(nic::kCreditArmOffset)));
}

void check_arm(std::uint64_t raw) {
  augur::Result<nic::CreditArm> a = nic::parse_arm(raw);
  if (!a.ok()) {
    AUGUR_FUZZ_CHECK(a.status().code() == augur::Code::kProtocol);
    return;
  }
  AUGUR_FUZZ_CHECK(a->state == nic::CreditState::kFree || a->state == nic::CreditState::kPending ||
                   a->state == nic::CreditState::kArmed);
  AUGUR_FUZZ_CHECK(a->generation <= 0xffffff);
  AUGUR_FUZZ_CHECK(nic::encode_arm(a.value()) == raw);  // every field of the word is significant
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  augur::fuzz::Input in(data, size);
  const auto entry = in.take<std::array<std::byte, sizeof(nic::CreditEntry)>>();
  const auto imm = in.take<std::uint32_t>();
  // The parser gets the entry's fields without the arm word; shorter inputs must be refused.
  check_entry(std::span(entry).first(std::min<std::size_t>(size, nic::kCreditArmOffset)));
  std::uint64_t raw = 0;
  std::memcpy(&raw, entry.data() + nic::kCreditArmOffset, sizeof raw);
  check_arm(raw);
  const std::uint32_t slot = nic::direct_imm_slot(imm);
  const std::uint32_t length = nic::direct_imm_length(imm);
  AUGUR_FUZZ_CHECK(slot <= nic::kMaxCreditSlots && length <= nic::kMaxDirectBytes);
  AUGUR_FUZZ_CHECK(nic::direct_imm(slot, length) == imm);
  return 0;
}
