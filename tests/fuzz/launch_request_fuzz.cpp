// augur-hostd's launch request (launch::decode), what a remote launcher asks the daemon to run:
// an accepted request has a program, no NUL inside any string (they become C strings for
// execve), NAME=value environment entries, bounded lists, and re-encodes to the same bytes.
// Input: the payload.
#include "fuzz_util.h"
#include "augur/host/launch.h"

namespace launch = augur::host::launch;

namespace {

bool c_string(const std::string& s) { return s.find('\0') == std::string::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const unsigned char> payload(data, size);
  augur::Result<launch::Request> r = launch::decode(payload);
  if (!r.ok()) {
    AUGUR_FUZZ_CHECK(r.status().code() == augur::Code::kProtocol);
    return 0;
  }
  const launch::Request& req = r.value();
  AUGUR_FUZZ_CHECK(!req.argv.empty() && !req.argv[0].empty());
  AUGUR_FUZZ_CHECK(req.argv.size() <= launch::kMaxStrings && req.env.size() <= launch::kMaxStrings);
  AUGUR_FUZZ_CHECK(c_string(req.token) && c_string(req.cwd));
  for (const std::string& a : req.argv) AUGUR_FUZZ_CHECK(c_string(a));
  for (const std::string& e : req.env) {
    const std::size_t eq = e.find('=');
    AUGUR_FUZZ_CHECK(c_string(e) && eq != std::string::npos && eq > 0);
  }
  AUGUR_FUZZ_CHECK(launch::encode(req) == std::vector<unsigned char>(payload.begin(), payload.end()));
  return 0;
}
