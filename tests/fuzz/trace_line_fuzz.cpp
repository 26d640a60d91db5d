// One receive-call line of a trace (predictor::parse_call_line): an accepted line's call formats
// to a line that parses back to the same call, and the wildcards are the only negative values.
// Input: the line (no newline).
#include <string_view>

#include "fuzz_util.h"
#include "augur/predictor/trace.h"

namespace predictor = augur::predictor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  augur::Result<predictor::RecvCall> c = predictor::parse_call_line(line);
  if (!c.ok()) {
    AUGUR_FUZZ_CHECK(c.status().code() == augur::Code::kInvalidArgument);
    return 0;
  }
  AUGUR_FUZZ_CHECK(c->source >= -1 && c->tag >= -1);
  const std::string canonical = predictor::format_call_line(c.value());
  AUGUR_FUZZ_CHECK(canonical.size() <= line.size());  // the canonical form only drops zeros, signs of 0, case
  augur::Result<predictor::RecvCall> again = predictor::parse_call_line(canonical);
  AUGUR_FUZZ_CHECK(again.ok());
  AUGUR_FUZZ_CHECK(again->same_message(c.value()) && again->kind == c->kind && again->site == c->site);
  AUGUR_FUZZ_CHECK(predictor::format_call_line(again.value()) == canonical);
  return 0;
}
