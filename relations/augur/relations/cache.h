// A cache of encoded relations bounded by the bytes of their encodings, with LRU eviction and
// hit/miss counters (the paper's closing suggestion). Thread-safe; entries are shared and
// immutable, so an evicted entry stays valid for whoever still holds it.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "augur/relations/encoding.h"
#include "augur/status.h"

namespace augur::relations {

struct CacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::uint64_t bytes = 0;    // sum of size_bytes() of the cached entries
  std::uint64_t entries = 0;
};

class RelationCache {
 public:
  using Entry = std::shared_ptr<const EncodedRelation>;
  using Builder = std::function<Result<EncodedRelation>()>;

  explicit RelationCache(std::uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // The cached relation (a hit, now most recently used) or nullptr (a miss).
  Entry Find(const std::string& key);
  // Inserts or replaces, evicting least recently used entries to stay within the bound.
  // An encoding larger than the whole bound is refused (kResourceExhausted).
  Result<Entry> Insert(const std::string& key, EncodedRelation relation);
  // Find, or build with `build` and insert.
  Result<Entry> FindOrBuild(const std::string& key, const Builder& build);
  bool Erase(const std::string& key);
  void Clear();

  [[nodiscard]] CacheStats stats() const;
  [[nodiscard]] std::uint64_t max_bytes() const noexcept { return max_bytes_; }

 private:
  struct Slot {
    Entry value;
    std::list<std::string>::iterator lru;  // position in lru_ (front: most recent)
  };
  void EraseLocked(std::unordered_map<std::string, Slot>::iterator it);

  const std::uint64_t max_bytes_;
  mutable std::mutex mu_;
  std::list<std::string> lru_;
  std::unordered_map<std::string, Slot> map_;
  CacheStats stats_;
};

}  // namespace augur::relations
