#include "augur/predictor/send_table.h"

namespace augur::predictor {

std::size_t SendTable::Hash::operator()(const SendKey& k) const noexcept {
  std::uint64_t h = k.recv_buffer * 0x9e3779b97f4a7c15ULL;
  h ^= (std::uint64_t{static_cast<std::uint32_t>(k.tag)} << 32 |
        static_cast<std::uint32_t>(k.source)) + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
  return static_cast<std::size_t>(h);
}

void SendTable::record(const SendKey& key, std::uint64_t send_buffer, std::uint64_t size) {
  SendGuess& g = table_[key];
  if (g.count > 0 && g.send_buffer == send_buffer && g.size == size) {
    ++g.count;
    return;
  }
  g = SendGuess{send_buffer, size, 1};  // a different sender buffer starts the count again
}

std::optional<SendGuess> SendTable::lookup(const SendKey& key) const {
  const auto it = table_.find(key);
  if (it == table_.end() || it->second.count <= trust_) return std::nullopt;
  return it->second;
}

}  // namespace augur::predictor
