// Run lists (the layout of a non-contiguous rendezvous source on the wire): proto::parse_run_list
// with any message length and run bound.
// Input: u64 message length, u32 max runs (host order), then the list's bytes.
#include "wire_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  augur::fuzz::Input in(data, size);
  const auto msg_length = in.take<std::uint64_t>();
  const auto max_runs = in.take<std::uint32_t>();
  const std::span<const std::byte> bytes = in.rest_bytes();
  augur::Result<std::vector<augur::host::proto::RemoteRun>> runs = augur::host::proto::parse_run_list(bytes, msg_length, max_runs);
  if (!runs.ok()) {
    AUGUR_FUZZ_CHECK(runs.status().code() == augur::Code::kProtocol);
    return 0;
  }
  augur::fuzz::check_run_list(bytes, msg_length, max_runs, runs.value());
  return 0;
}
