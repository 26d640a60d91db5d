#include "augur/status.h"

#include <cerrno>
#include <cstring>

namespace augur {

std::string_view code_name(Code code) noexcept {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "INVALID_ARGUMENT";
    case Code::kOutOfRange: return "OUT_OF_RANGE";
    case Code::kNotFound: return "NOT_FOUND";
    case Code::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case Code::kUnavailable: return "UNAVAILABLE";
    case Code::kTimeout: return "TIMEOUT";
    case Code::kTruncated: return "TRUNCATED";
    case Code::kProtocol: return "PROTOCOL";
    case Code::kPeerFailure: return "PEER_FAILURE";
    case Code::kIo: return "IO";
    case Code::kUnsupported: return "UNSUPPORTED";
    case Code::kInternal: return "INTERNAL";
    case Code::kDataLoss: return "DATA_LOSS";
  }
  return "UNKNOWN";
}

const std::string& Status::message() const noexcept {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  std::string s(code_name(rep_->code));
  s += ": ";
  s += rep_->message;
  return s;
}

Status Status::context(std::string_view what) const {
  if (ok()) return {};
  std::string m(what);
  m += ": ";
  m += rep_->message;
  return {rep_->code, std::move(m)};
}

Status errno_status(int err, std::string_view what) {
  Code code = Code::kIo;
  switch (err) {
    case 0: code = Code::kInternal; break;  // the call failed without saying why
    case EINVAL: case EBADF: case EFAULT: code = Code::kInvalidArgument; break;
    case ENOMEM: case ENOSPC: case EMFILE: case ENFILE: case ENOBUFS: code = Code::kResourceExhausted; break;
    case EAGAIN: case EBUSY: case EINTR: code = Code::kUnavailable; break;
    case ETIMEDOUT: code = Code::kTimeout; break;
    case ENOENT: case ENODEV: case ENXIO: code = Code::kNotFound; break;
    case ECONNRESET: case ECONNREFUSED: case EPIPE: case ECONNABORTED: case EHOSTUNREACH: case ENETUNREACH:
      code = Code::kPeerFailure; break;
    case EOPNOTSUPP: case ENOSYS: code = Code::kUnsupported; break;
    case ERANGE: case EOVERFLOW: code = Code::kOutOfRange; break;
    default: break;
  }
  std::string m(what);
  m += ": ";
  m += err == 0 ? "failed (errno not set)" : std::strerror(err);
  return {code, std::move(m)};
}

}  // namespace augur
