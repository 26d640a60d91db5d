// augur-hostd's frames, read by the daemon and by augurrun (launch::take_frame): the framing
// invariants of bootstrap_frame_fuzz, plus the payload bound of each type (1 MiB for a launch
// request, 64 KiB for the rest).
// Input: u8 chunk size, then the stream.
#include <array>

#include "fuzz_util.h"
#include "augur/host/launch.h"

namespace launch = augur::host::launch;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  augur::fuzz::Input in(data, size);
  const auto chunk = in.take<std::uint8_t>();
  static constexpr std::array<std::size_t, 3> kReserved = {5, 6, 7};
  augur::fuzz::check_framing(in.rest(), chunk, kReserved, [](augur::fuzz::Bytes& buf) -> augur::Result<std::optional<augur::fuzz::Bytes>> {
    AUGUR_ASSIGN_OR_RETURN(std::optional<launch::Frame> f, launch::take_frame(buf));
    if (!f) return std::optional<augur::fuzz::Bytes>();
    AUGUR_FUZZ_CHECK(f->type >= launch::FrameType::kLaunch && f->type <= launch::FrameType::kError);
    AUGUR_FUZZ_CHECK(f->payload.size() <= (f->type == launch::FrameType::kLaunch ? launch::kMaxRequestBytes : launch::kMaxDataBytes));
    return std::optional<augur::fuzz::Bytes>(launch::encode_frame(f->type, f->payload));
  });
  return 0;
}
