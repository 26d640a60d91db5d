// The send-side prediction table of the prefetching paper (Sec. 2): for each receive
// <receive buffer, tag, source>, the send buffer and size that matched it last, and how many
// times in a row that same pair was seen. A prediction is made only when count > trust (2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>

namespace augur::predictor {

struct SendKey {
  std::uint64_t recv_buffer = 0;
  std::int32_t tag = 0;
  std::int32_t source = 0;
  bool operator==(const SendKey&) const = default;
};

struct SendGuess {
  std::uint64_t send_buffer = 0;
  std::uint64_t size = 0;
  std::uint32_t count = 0;  // times this (buffer, size) was seen for the key
};

class SendTable {
 public:
  explicit SendTable(std::uint32_t trust = 2) : trust_(trust) {}
  // A receive completed, matched by a send from `send_buffer` of `size` bytes.
  void record(const SendKey& key, std::uint64_t send_buffer, std::uint64_t size);
  // The send buffer to prefetch for this receive, if it has been seen more than `trust` times.
  [[nodiscard]] std::optional<SendGuess> lookup(const SendKey& key) const;
  [[nodiscard]] std::size_t size() const noexcept { return table_.size(); }

 private:
  struct Hash {
    std::size_t operator()(const SendKey& k) const noexcept;
  };
  std::uint32_t trust_;
  std::unordered_map<SendKey, SendGuess, Hash> table_;
};

}  // namespace augur::predictor
