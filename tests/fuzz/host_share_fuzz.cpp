// A peer's host entry as it comes through the bootstrap ("hostname cores", Engine::create):
// host::parse_host_share. Input: the value's bytes, any length.
#include <string_view>

#include "fuzz_util.h"
#include "augur/host/job_hosts.h"

namespace host = augur::host;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  augur::Result<host::HostShare> s = host::parse_host_share(in, 7);
  if (!s.ok()) {
    AUGUR_FUZZ_CHECK(s.status().code() == augur::Code::kProtocol);
    AUGUR_FUZZ_CHECK(s.status().message().find("rank 7") != std::string::npos);
    return 0;
  }
  AUGUR_FUZZ_CHECK(!s->host.empty() && s->cores >= 1);
  AUGUR_FUZZ_CHECK(s->host.size() < size);  // the count and its space came after it
  // Leading zeros parse; the canonical form must parse back to the same entry.
  augur::Result<host::HostShare> again = host::parse_host_share(host::encode_host_share(s.value()), 7);
  AUGUR_FUZZ_CHECK(again.ok() && again->host == s->host && again->cores == s->cores);
  return 0;
}
