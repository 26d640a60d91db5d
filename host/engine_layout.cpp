// Non-contiguous messages (isendv, irecvv, imrecvv): their run lists are normalized and checked against the
// gather/scatter limits here, then handed to the same start_send/start_recv paths as contiguous ones; the READ
// side of a layout is in engine_rendezvous.cpp and the run-list arithmetic in layout.cpp. Separate because it
// is an API entry layer over the protocols, not a protocol.

#include "augur/host/engine.h"

#include <string>
#include <utility>

#include "engine_internal.h"

namespace augur::host {

namespace {

// Zero-length runs dropped, adjacent runs merged: the fewest runs for the same message.
Result<std::vector<IoRun>> normalize(std::span<const IoRun> runs) {
  std::vector<IoRun> out;
  out.reserve(runs.size());
  std::uint64_t total = 0;
  for (const IoRun& r : runs) {
    if (r.length == 0) continue;
    if (r.addr == nullptr) return Status(Code::kInvalidArgument, "null run address with a non-zero length");
    total += r.length;
    if (total > 0xffffffffu) return Status(Code::kInvalidArgument, "messages are limited to 4 GiB - 1 bytes");
    if (!out.empty() && out.back().addr + out.back().length == r.addr) {
      out.back().length += r.length;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// A receive layout: normalized, and within the scatter limit when it is not one run.
Result<std::vector<IoRun>> receive_runs(std::span<const IoRun> runs, std::uint32_t max_runs) {
  AUGUR_ASSIGN_OR_RETURN(std::vector<IoRun> norm, normalize(runs));
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

Result<RequestPtr> Engine::isendv(std::span<const IoRun> runs, int dest, std::int32_t tag, std::uint32_t context,
                                  bool synchronous) {
  AUGUR_RETURN_IF_ERROR(check_send(dest, tag));
  AUGUR_ASSIGN_OR_RETURN(std::vector<IoRun> norm, normalize(runs));
  if (norm.size() <= 1) {
    return norm.empty() ? isend(nullptr, 0, dest, tag, context, synchronous)
                        : isend(norm[0].addr, norm[0].length, dest, tag, context, synchronous);
  }
  if (norm.size() > max_layout_runs()) {
    return Status(Code::kInvalidArgument, std::to_string(norm.size()) + " runs exceed the gather limit of " +
                                              std::to_string(max_layout_runs()) + ": pack them");
  }
  const std::size_t len = layout_bytes(norm);
  auto req = std::make_shared<Request>();
  req->runs = std::move(norm);
  if (driver_.assisted()) {
    enqueue(Command::Kind::kSendV,
            {.req = req, .len = len, .peer = dest, .tag = tag, .context = context, .synchronous = synchronous});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_send(req, nullptr, len, dest, tag, context, synchronous));
  return req;
}

Result<RequestPtr> Engine::irecvv(std::span<const IoRun> runs, int source, std::int32_t tag, std::uint32_t context) {
  AUGUR_RETURN_IF_ERROR(check_recv(source, tag));
  AUGUR_ASSIGN_OR_RETURN(std::vector<IoRun> norm, receive_runs(runs, max_layout_runs()));
  if (norm.size() <= 1) {
    return norm.empty() ? irecv(nullptr, 0, source, tag, context) : irecv(norm[0].addr, norm[0].length, source, tag, context);
  }
  auto req = std::make_shared<Request>();
  req->runs = std::move(norm);
  if (driver_.assisted()) {
    enqueue(Command::Kind::kRecvV, {.req = req, .peer = source, .tag = tag, .context = context});
    return req;
  }
  AUGUR_RETURN_IF_ERROR(start_recv_layout(req, source, tag, context));
  return req;
}

Result<RequestPtr> Engine::imrecvv(std::uint64_t message, std::span<const IoRun> runs) {
  AUGUR_ASSIGN_OR_RETURN(std::vector<IoRun> norm, receive_runs(runs, max_layout_runs()));
  if (norm.size() <= 1) return norm.empty() ? imrecv(message, nullptr, 0) : imrecv(message, norm[0].addr, norm[0].length);
  auto req = std::make_shared<Request>();
  req->runs = std::move(norm);
  void* first = req->runs[0].addr;
  const std::size_t total = layout_bytes(req->runs);
  return receive_taken(message, req, first, total);
}

Status Engine::start_recv_layout(const RequestPtr& req, int source, std::int32_t tag, std::uint32_t context) {
  if (source >= 0 && source != rank_ && peers_[static_cast<std::size_t>(source)].dead) {
    finish(*req, Path::kNone, Status(Code::kPeerFailure, "rank " + std::to_string(source) + " is gone"));
    return Status::Ok();
  }
  // Never credited: a direct write targets one remote range.
  PostedRecv recv{req, req->runs[0].addr, layout_bytes(req->runs), source};
  if (auto m = match_.post({context, source, tag}, recv)) AUGUR_RETURN_IF_ERROR(match_and_start(recv, m->msg, m->envelope.tag));
  // Seen by the predictor (its cycles include this call) with no size, so nothing is staged for it.
  if (steer_->predicting()) AUGUR_RETURN_IF_ERROR(observe_receive(recv.buf, 0, source, tag, context, true));
  return Status::Ok();
}

}  // namespace augur::host
