// Non-contiguous messages (isendv, irecvv, imrecvv): their run lists are normalized and checked against the
// gather/scatter limits here, then handed to the same start_send/start_recv paths as contiguous ones; the READ
// side of a layout is in engine_rendezvous.cpp and the run-list arithmetic in layout.cpp. Separate because it
// is an API entry layer over the protocols, not a protocol.

#include "augur/host/engine.h"

#include <algorithm>
#include <string>
#include <utility>

#include "engine_internal.h"

namespace augur::host {

namespace {

constexpr std::uint64_t kMaxMessage = 0xffffffffu;

// Zero-length runs dropped, adjacent runs merged: the fewest runs for the same message.
Result<std::vector<relations::ByteRun>> normalize(const relations::Layout& layout) {
  if (layout.base == nullptr && relations::RunBytes(layout.runs) > 0) {
    return Status(Code::kInvalidArgument, "null layout base with a non-zero length");
  }
  Result<std::vector<relations::ByteRun>> out = relations::NormalizeRuns(layout.runs, kMaxMessage);
  if (!out.ok()) return out.status().context("message layout (at most 4 GiB - 1 bytes)");
  return out;
}

// A receive layout: normalized, and within the scatter limit when it is not one run.
Result<std::vector<relations::ByteRun>> receive_runs(const relations::Layout& layout, std::uint32_t max_runs) {
  AUGUR_ASSIGN_OR_RETURN(std::vector<relations::ByteRun> norm, normalize(layout));
  if (norm.size() > 1 && norm.size() > max_runs) {
    return Status(Code::kInvalidArgument, std::to_string(norm.size()) + " runs exceed the scatter limit of " +
                                              std::to_string(max_runs) + ": receive packed");
  }
  return norm;
}

}  // namespace

std::uint32_t Engine::max_layout_runs() const noexcept {
  return std::min(cfg_.sge_max_runs, proto::max_remote_runs(cfg_.eager_limit));
}

Result<RequestPtr> Engine::isendv(const relations::Layout& layout, int dest, std::int32_t tag, std::uint32_t context,
                                  bool synchronous) {
  AUGUR_RETURN_IF_ERROR(check_send(dest, tag));
  AUGUR_ASSIGN_OR_RETURN(std::vector<relations::ByteRun> norm, normalize(layout));
  if (norm.size() <= 1) {
    return norm.empty() ? isend(nullptr, 0, dest, tag, context, synchronous)
                        : isend(layout.at(norm[0]), static_cast<std::size_t>(norm[0].length), dest, tag, context,
                                synchronous);
  }
  if (norm.size() > max_layout_runs()) {
    return Status(Code::kInvalidArgument, std::to_string(norm.size()) + " runs exceed the gather limit of " +
                                              std::to_string(max_layout_runs()) + ": pack them");
  }
  const auto len = static_cast<std::size_t>(relations::RunBytes(norm));
  if (must_settle(false)) [[unlikely]] AUGUR_RETURN_IF_ERROR(settle(relations::Layout{layout.base, norm}, false));
  auto req = std::make_shared<Request>();
  req->base = layout.base;
  req->runs = std::move(norm);
  if (driver_.assisted()) {
    enqueue(Command::Kind::kSendV,
            {.req = req, .len = len, .peer = dest, .tag = tag, .context = context, .synchronous = synchronous});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_send(req, nullptr, len, dest, tag, context, synchronous));
  return req;
}

Result<RequestPtr> Engine::irecvv(const relations::Layout& layout, int source, std::int32_t tag, std::uint32_t context) {
  AUGUR_RETURN_IF_ERROR(check_recv(source, tag));
  AUGUR_ASSIGN_OR_RETURN(std::vector<relations::ByteRun> norm, receive_runs(layout, max_layout_runs()));
  if (norm.size() <= 1) {
    return norm.empty() ? irecv(nullptr, 0, source, tag, context)
                        : irecv(layout.at(norm[0]), static_cast<std::size_t>(norm[0].length), source, tag, context);
  }
  if (must_settle(true)) [[unlikely]] AUGUR_RETURN_IF_ERROR(settle(relations::Layout{layout.base, norm}));
  auto req = std::make_shared<Request>();
  req->base = layout.base;
  req->runs = std::move(norm);
  if (driver_.assisted()) {
    enqueue(Command::Kind::kRecvV, {.req = req, .peer = source, .tag = tag, .context = context});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_recv_layout(req, source, tag, context));
  return req;
}

Result<RequestPtr> Engine::imrecvv(std::uint64_t message, const relations::Layout& layout) {
  AUGUR_ASSIGN_OR_RETURN(std::vector<relations::ByteRun> norm, receive_runs(layout, max_layout_runs()));
  if (norm.size() <= 1) {
    return norm.empty() ? imrecv(message, nullptr, 0)
                        : imrecv(message, layout.at(norm[0]), static_cast<std::size_t>(norm[0].length));
  }
  if (must_settle(true)) [[unlikely]] AUGUR_RETURN_IF_ERROR(settle(relations::Layout{layout.base, norm}));
  auto req = std::make_shared<Request>();
  req->base = layout.base;
  req->runs = std::move(norm);
  void* first = layout.at(req->runs[0]);
  const auto total = static_cast<std::size_t>(relations::RunBytes(req->runs));
  return receive_taken(message, req, first, total);
}

Status Engine::start_recv_layout(const RequestPtr& req, int source, std::int32_t tag, std::uint32_t context) {
  if (observe_later_) [[unlikely]] AUGUR_RETURN_IF_ERROR(observe_pending());
  if (source >= 0 && source != rank_ && peers_[static_cast<std::size_t>(source)].dead) {
    finish(*req, Path::kNone, Status(Code::kPeerFailure, "rank " + std::to_string(source) + " is gone"));
    return Status::Ok();
  }
  // Never credited: a direct write targets one remote range.
  PostedRecv recv{req, req->layout().at(req->runs[0]), static_cast<std::size_t>(relations::RunBytes(req->runs)), source};
  if (cfg_.steering == Steering::kSpeculative) {
    // The layout's extent is the receive's: a speculation on its pages must not be scattered
    // over itself, nor guard pages the receive writes.
    auto* lo = static_cast<std::byte*>(recv.buf);
    std::byte* hi = lo;
    for (const relations::ByteRun& r : req->runs) {
      lo = std::min(lo, req->layout().at(r));
      hi = std::max(hi, req->layout().at(r) + r.length);
    }
    bool adopted = false;  // never: a credit names one range
    if (!specs_.empty()) {
      AUGUR_RETURN_IF_ERROR(speculation_at_post(req, lo, static_cast<std::size_t>(hi - lo), source, tag, context, adopted));
    }
    if (hi > lo) busy_.push_back({req.get(), reinterpret_cast<std::uintptr_t>(lo), reinterpret_cast<std::uintptr_t>(hi)});
  }
  if (auto m = match_.post({context, source, tag}, recv)) AUGUR_RETURN_IF_ERROR(match_and_start(recv, m->msg, m->envelope.tag));
  // Seen by the predictor (its cycles include this call) with no size, so nothing is staged for it.
  if (steer_->predicting()) AUGUR_RETURN_IF_ERROR(note_receive(recv.buf, 0, source, tag, context, true));
  return Status::Ok();
}

}  // namespace augur::host
