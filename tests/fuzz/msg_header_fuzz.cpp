// Both eager header forms (8-byte short, 24-byte full) and every other full header, as they
// arrive in a bounce slot: proto::parse_message against any receiver expectation.
// Input: u32 src, u32 seq, u32 slot_bytes (host order), then the slot's bytes.
#include "wire_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  augur::fuzz::Input in(data, size);
  const augur::host::proto::MsgExpect expect = augur::fuzz::take_expect(in);
  const std::span<const std::byte> slot = in.rest_bytes();
  augur::Result<augur::host::proto::Message> m = augur::host::proto::parse_message(slot, expect);
  if (!m.ok()) {
    AUGUR_FUZZ_CHECK(m.status().code() == augur::Code::kProtocol);
    return 0;
  }
  augur::fuzz::check_message(slot, expect, m.value());
  return 0;
}
