// A receive call as the predictors see it: the 6-tuple that names the message, plus the call site.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace augur::predictor {

enum class CallKind : std::uint8_t { kRecv, kIrecv };

// One MPI_Recv/MPI_Irecv. `kind` and `site` are not part of the identity: two calls are the same
// message when their 6-tuple (source, tag, count, datatype, buffer, comm) is equal.
struct RecvCall {
  CallKind kind = CallKind::kRecv;
  std::int32_t source = 0;     // -1: MPI_ANY_SOURCE
  std::int32_t tag = 0;        // -1: MPI_ANY_TAG
  std::uint64_t count = 0;
  std::uint32_t datatype = 0;  // small integer, stable per handle within a rank
  std::uint64_t buffer = 0;
  std::uint32_t comm = 0;      // small integer, stable per handle within a rank
  std::uint64_t site = 0;      // return address of the MPI call, or a pre-receive tag

  [[nodiscard]] bool same_message(const RecvCall& o) const noexcept {
    return source == o.source && tag == o.tag && count == o.count && datatype == o.datatype &&
           buffer == o.buffer && comm == o.comm;
  }
};

// Predictors work on dense ids so that their tables are arrays, not hash maps: the receive path
// interns a 6-tuple once and every predictor then costs a few loads.
using CallId = std::uint32_t;
using SiteId = std::uint32_t;
inline constexpr CallId kNoCall = std::numeric_limits<CallId>::max();  // abstain / unknown
inline constexpr SiteId kNoSite = std::numeric_limits<SiteId>::max();  // no pre-receive hint

// One observed receive: which message, and at which call site.
struct Event {
  CallId call = kNoCall;
  SiteId site = kNoSite;
};

// Maps 6-tuples and call sites to dense ids, in order of first appearance (one per rank).
class Interner {
 public:
  Event intern(const RecvCall& c);
  [[nodiscard]] std::size_t calls() const noexcept { return calls_.size(); }
  [[nodiscard]] std::size_t sites() const noexcept { return sites_.size(); }

 private:
  struct Key {
    std::uint64_t count, buffer;
    std::int32_t source, tag;
    std::uint32_t datatype, comm;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept;
  };
  std::unordered_map<Key, CallId, KeyHash> calls_;
  std::unordered_map<std::uint64_t, SiteId> sites_;
};

}  // namespace augur::predictor
