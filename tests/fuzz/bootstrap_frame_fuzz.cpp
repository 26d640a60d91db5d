// Bootstrap frames as a rank or the server reads them off its TCP stream (wire::take_frame in
// host/bootstrap_wire.h): each frame re-encodes to the bytes it took (the reserved header bytes
// aside), errors and partial frames take nothing, and chunked delivery changes nothing.
// Input: u8 chunk size, then the stream.
#include <array>

#include "fuzz_util.h"
#include "bootstrap_wire.h"

namespace wire = augur::host::wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  augur::fuzz::Input in(data, size);
  const auto chunk = in.take<std::uint8_t>();
  static constexpr std::array<std::size_t, 3> kReserved = {5, 6, 7};
  augur::fuzz::check_framing(in.rest(), chunk, kReserved, [](wire::Bytes& buf) -> augur::Result<std::optional<wire::Bytes>> {
    wire::Frame f;
    AUGUR_ASSIGN_OR_RETURN(bool got, wire::take_frame(buf, f));
    if (!got) return std::optional<wire::Bytes>();
    AUGUR_FUZZ_CHECK(f.payload.size() <= wire::kMaxPayload);
    AUGUR_FUZZ_CHECK(f.type >= wire::MsgType::kHello && f.type <= wire::MsgType::kBye);
    return std::optional<wire::Bytes>(wire::frame(f.type, f.rank, f.payload));
  });
  return 0;
}
