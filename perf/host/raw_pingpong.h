// The raw-verbs ping-pong the latency benchmarks measure augur against: what perftest's
// ib_send_lat does (RC SEND/RECV, inline up to kInline bytes, busy polling of the CQ), set up
// through nic::Endpoint. Shared by augur-perf-lat (engine API) and augur-perf-mpi-lat (MPI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "augur/nic/endpoint.h"
#include "augur/status.h"
#include "stopwatch.h"

namespace augur::perf {

inline constexpr std::uint32_t kRawInline = 128;
inline constexpr int kRawTimeoutMs = 60'000;

struct Raw {
  nic::Endpoint ep;
  std::vector<std::byte> buf;
  nic::MemoryRegion mr;
  std::uint32_t sends_unreaped = 0;
};

// `exchange` trades this side's QP address for the peer's (a socket, or MPI).
inline Result<Raw> raw_setup(std::size_t max, const std::function<Result<nic::QpAddress>(const nic::QpAddress&)>& exchange) {
  AUGUR_ASSIGN_OR_RETURN(nic::EndpointOptions opt, nic::endpoint_options_from_settings());
  opt.caps.max_inline_data = kRawInline;
  AUGUR_ASSIGN_OR_RETURN(nic::Endpoint ep, nic::Endpoint::create(opt));
  std::vector<std::byte> buf(2 * max);
  AUGUR_ASSIGN_OR_RETURN(nic::MemoryRegion mr, ep.register_memory(buf.data(), buf.size(), nic::kLocalWrite));
  AUGUR_ASSIGN_OR_RETURN(nic::QpAddress mine, ep.address());
  AUGUR_ASSIGN_OR_RETURN(nic::QpAddress theirs, exchange(mine));
  AUGUR_RETURN_IF_ERROR(ep.connect(theirs));
  return Raw{std::move(ep), std::move(buf), std::move(mr)};
}

// Polls until a receive completes; send completions met on the way are reaped (the peer's next
// message may complete our receive before our own send's completion is polled).
inline Status raw_await_recv(Raw& r) {
  for (;;) {
    AUGUR_ASSIGN_OR_RETURN(nic::Completion c, r.ep.wait_completion(kRawTimeoutMs));
    AUGUR_RETURN_IF_ERROR(c.status());
    if (c.opcode == nic::WcOpcode::kRecv) return Status::Ok();
    if (c.opcode != nic::WcOpcode::kSend || r.sends_unreaped == 0) return Status(Code::kInternal, "stray completion");
    --r.sends_unreaped;
  }
}

// `iters` half round trips of `n` bytes, appended to `us` (microseconds). The initiator sends
// first; the other side receives, then sends.
inline Status raw_round(Raw& r, bool initiator, std::size_t n, int iters, const Stopwatch& clock, std::vector<double>& us) {
  const nic::Sge rx{reinterpret_cast<std::uintptr_t>(r.buf.data()) + r.buf.size() / 2, static_cast<std::uint32_t>(n), r.mr.lkey()};
  const nic::Sge tx{reinterpret_cast<std::uintptr_t>(r.buf.data()), static_cast<std::uint32_t>(n), r.mr.lkey()};
  auto send = [&]() -> Status {
    ++r.sends_unreaped;
    return r.ep.qp().post_send({.wr_id = 2, .op = nic::SendOp::kSend, .sges = {&tx, 1}, .inline_data = n <= kRawInline});
  };
  AUGUR_RETURN_IF_ERROR(r.ep.qp().post_recv(1, {&rx, 1}));
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t t0 = Stopwatch::now();
    if (initiator) {
      AUGUR_RETURN_IF_ERROR(send());
      AUGUR_RETURN_IF_ERROR(raw_await_recv(r));
      if (i + 1 < iters) AUGUR_RETURN_IF_ERROR(r.ep.qp().post_recv(1, {&rx, 1}));
    } else {
      AUGUR_RETURN_IF_ERROR(raw_await_recv(r));
      if (i + 1 < iters) AUGUR_RETURN_IF_ERROR(r.ep.qp().post_recv(1, {&rx, 1}));
      AUGUR_RETURN_IF_ERROR(send());
    }
    us.push_back(clock.us(Stopwatch::now() - t0) / 2);
  }
  while (r.sends_unreaped > 0) {  // leave the CQ empty for the next round
    AUGUR_ASSIGN_OR_RETURN(nic::Completion c, r.ep.wait_completion(kRawTimeoutMs));
    AUGUR_RETURN_IF_ERROR(c.status());
    --r.sends_unreaped;
  }
  return Status::Ok();
}

}  // namespace augur::perf
