// The key-value entries of a FenceDone as TcpBootstrap::fence reads them (wire::parse_fence_done
// in host/bootstrap_wire.h): every entry lies inside the payload and names a rank of the job; an
// accepted payload re-encodes to itself; a refused one still re-encodes the entries before the
// bad one to a prefix of it.
// Input: u32 job size (host order), then the payload.
#include "fuzz_util.h"
#include "bootstrap_wire.h"

namespace wire = augur::host::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  augur::fuzz::Input in(data, size);
  const auto job_size = in.take<std::uint32_t>();
  const std::span<const unsigned char> payload = in.rest();
  wire::Bytes again;
  augur::Status st = wire::parse_fence_done(payload, job_size, [&](wire::Entry&& e) {
    AUGUR_FUZZ_CHECK(e.rank < job_size);
    wire::append_entry(again, e);
    AUGUR_FUZZ_CHECK(again.size() <= payload.size());
  });
  AUGUR_FUZZ_CHECK(std::equal(again.begin(), again.end(), payload.begin()));
  if (st.ok()) {
    AUGUR_FUZZ_CHECK(again.size() == payload.size());
  } else {
    AUGUR_FUZZ_CHECK(st.code() == augur::Code::kProtocol && again.size() < payload.size());
  }
  return 0;
}
