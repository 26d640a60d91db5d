// The bodies behind a header, as Engine::deliver reads them: an RTS's remote buffer (whose length
// must be the header's), a non-contiguous RTS's run list bounded by the eager limit, and the
// control messages (FIN, credit, revoke, revoke ack), which carry none.
// Input: u32 src, u32 seq, u32 slot_bytes (host order; the eager limit is slot_bytes - 24, as in
// Channel), then the slot's bytes.
#include "wire_checks.h"

namespace nic = augur::nic;
namespace proto = augur::host::proto;
using augur::fuzz::Input;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  const proto::MsgExpect expect = augur::fuzz::take_expect(in);
  if (expect.slot_bytes < sizeof(proto::MsgHeader)) return 0;  // no channel has such slots
  const std::uint32_t eager_limit = expect.slot_bytes - static_cast<std::uint32_t>(sizeof(proto::MsgHeader));
  const std::span<const std::byte> slot = in.rest_bytes();
  augur::Result<proto::Message> m = proto::parse_message(slot, expect);
  if (!m.ok()) return 0;
  augur::fuzz::check_message(slot, expect, m.value());
  const proto::MsgHeader& h = m->header;
  if (h.type == proto::MsgType::kRts) {
    augur::Result<nic::RemoteBuffer> rb = nic::parse_remote_buffer(m->body);
    if (!rb.ok()) {
      AUGUR_FUZZ_CHECK(rb.status().code() == augur::Code::kProtocol);
      return 0;
    }
    AUGUR_FUZZ_CHECK(rb->magic == nic::RemoteBuffer::kMagic);
    AUGUR_FUZZ_CHECK(rb->addr <= UINT64_MAX - rb->length && (rb->addr != 0 || rb->length == 0));
    std::array<std::byte, sizeof(nic::RemoteBuffer)> again{};
    nic::encode(rb.value(), again);
    AUGUR_FUZZ_CHECK(augur::fuzz::same_bytes(std::span<const std::byte>(again), m->body));
  } else if (h.type == proto::MsgType::kRtsRuns) {
    const std::uint32_t max_runs = proto::max_remote_runs(eager_limit);
    augur::Result<std::vector<proto::RemoteRun>> runs = proto::parse_run_list(m->body, h.length, max_runs);
    if (!runs.ok()) {
      AUGUR_FUZZ_CHECK(runs.status().code() == augur::Code::kProtocol);
      return 0;
    }
    augur::fuzz::check_run_list(m->body, h.length, max_runs, runs.value());
    AUGUR_FUZZ_CHECK(m->body.size() <= eager_limit);  // a list that fits the slot
  }
  return 0;
}
