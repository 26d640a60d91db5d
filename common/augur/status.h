// Errors as values: every fallible augur function returns Status or Result<T>.
// No exceptions cross a library boundary; errno is converted here, ibv_wc_status in nic/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace augur {

enum class Code : std::uint8_t {
  kOk = 0,
  kInvalidArgument,   // caller passed something wrong
  kOutOfRange,        // index/offset/length outside a valid range
  kNotFound,          // device, key or entry does not exist
  kResourceExhausted, // memory, credits, registrations, queue slots
  kUnavailable,       // transiently unavailable: retry may succeed
  kTimeout,           // a bound on time was hit
  kTruncated,         // message longer than the receive buffer
  kProtocol,          // a peer sent something malformed
  kPeerFailure,       // a peer died or its connection broke
  kIo,                // operating-system I/O error
  kUnsupported,       // feature not available on this device/build
  kInternal,          // a bug in augur
  kDataLoss,          // the program's data may be wrong: the run must stop, whatever its error handler
};

std::string_view code_name(Code code) noexcept;

// One pointer: an OK status is null, so creating, moving and testing it costs a word (the hot
// paths return OK millions of times); an error owns its code and message on the heap.
class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message)
      : rep_(code == Code::kOk ? nullptr : std::make_unique<Rep>(Rep{code, std::move(message)})) {}
  Status(const Status& o) : rep_(o.rep_ ? std::make_unique<Rep>(*o.rep_) : nullptr) {}
  Status& operator=(const Status& o) {
    if (this != &o) rep_ = o.rep_ ? std::make_unique<Rep>(*o.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status Ok() { return {}; }
  [[nodiscard]] bool ok() const noexcept { return rep_ == nullptr; }
  [[nodiscard]] Code code() const noexcept { return rep_ ? rep_->code : Code::kOk; }
  [[nodiscard]] const std::string& message() const noexcept;
  // "CODE: message", or "OK".
  [[nodiscard]] std::string to_string() const;
  // Prefixes the message with what the caller was doing ("connect QP: ...").
  [[nodiscard]] Status context(std::string_view what) const;

 private:
  struct Rep {
    Code code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};
static_assert(sizeof(Status) == sizeof(void*));

// Converts an errno value into a Status; `what` names the failed call ("ibv_reg_mr").
Status errno_status(int err, std::string_view what);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}    // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const noexcept { return std::holds_alternative<T>(v_); }
  [[nodiscard]] Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace augur

#define AUGUR_CONCAT_INNER_(a, b) a##b
#define AUGUR_CONCAT_(a, b) AUGUR_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function if `expr` failed.
#define AUGUR_RETURN_IF_ERROR(expr)                 \
  do {                                              \
    ::augur::Status augur_status_ = (expr);         \
    if (!augur_status_.ok()) return augur_status_;  \
  } while (0)

// `lhs = value of expr`, or return its Status.
#define AUGUR_ASSIGN_OR_RETURN(lhs, expr) \
  AUGUR_ASSIGN_OR_RETURN_IMPL_(AUGUR_CONCAT_(augur_result_, __LINE__), lhs, expr)
#define AUGUR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
