// A peer's channel address as it comes through the bootstrap (Engine's decode_address): its QP
// address (nic::parse_qp_address) and two remote buffers (nic::parse_remote_buffer), the credit
// word and the credit table, then the first window (any 4 bytes: Channel::connect bounds it). Input: the bytes, any length; each parser also sees all of them.
#include <array>

#include "fuzz_util.h"
#include "augur/nic/wire.h"

namespace nic = augur::nic;

namespace {

void check_qp(std::span<const std::byte> b) {
  augur::Result<nic::QpAddress> a = nic::parse_qp_address(b);
  if (!a.ok()) {
    AUGUR_FUZZ_CHECK(a.status().code() == augur::Code::kProtocol);
    return;
  }
  AUGUR_FUZZ_CHECK(a->qp_num >= 1 && a->qp_num <= 0xffffff && a->psn <= 0xffffff);
  AUGUR_FUZZ_CHECK(a->mtu >= 1 && a->mtu <= 5 && a->link_layer <= 1);
  std::array<std::byte, sizeof(nic::QpAddress)> again{};
  nic::encode(a.value(), again);
  AUGUR_FUZZ_CHECK(augur::fuzz::same_bytes(std::span<const std::byte>(again), b));
}

void check_buffer(std::span<const std::byte> b) {
  augur::Result<nic::RemoteBuffer> r = nic::parse_remote_buffer(b);
  if (!r.ok()) {
    AUGUR_FUZZ_CHECK(r.status().code() == augur::Code::kProtocol);
    return;
  }
  AUGUR_FUZZ_CHECK(r->addr <= UINT64_MAX - r->length && (r->addr != 0 || r->length == 0));
  std::array<std::byte, sizeof(nic::RemoteBuffer)> again{};
  nic::encode(r.value(), again);
  AUGUR_FUZZ_CHECK(augur::fuzz::same_bytes(std::span<const std::byte>(again), b));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  check_qp(bytes);
  check_buffer(bytes);
  constexpr std::size_t kQp = sizeof(nic::QpAddress), kRb = sizeof(nic::RemoteBuffer);
  if (size == kQp + 2 * kRb + 4) {  // the engine's layout
    check_qp(bytes.first(kQp));
    check_buffer(bytes.subspan(kQp, kRb));
    check_buffer(bytes.subspan(kQp + kRb, kRb));
  }
  return 0;
}
