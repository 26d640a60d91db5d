#include "augur/relations/cache.h"

#include <string>
#include <utility>

namespace augur::relations {

RelationCache::Entry RelationCache::Find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(key);
  if (it == map_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.value;
}

void RelationCache::EraseLocked(std::unordered_map<std::string, Slot>::iterator it) {
  stats_.bytes -= it->second.value->size_bytes();
  --stats_.entries;
  lru_.erase(it->second.lru);
  map_.erase(it);
}

Result<RelationCache::Entry> RelationCache::Insert(const std::string& key,
                                                   EncodedRelation relation) {
  const std::uint64_t size = relation.size_bytes();
  if (size > max_bytes_) {
    return Status(Code::kResourceExhausted, "relation cache: encoding of " + std::to_string(size) +
                                                " bytes exceeds the bound of " +
                                                std::to_string(max_bytes_));
  }
  auto value = std::make_shared<const EncodedRelation>(std::move(relation));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = map_.find(key); it != map_.end()) EraseLocked(it);
  while (stats_.bytes + size > max_bytes_ && !lru_.empty()) {
    EraseLocked(map_.find(lru_.back()));
    ++stats_.evictions;
  }
  lru_.push_front(key);
  map_.emplace(key, Slot{value, lru_.begin()});
  stats_.bytes += size;
  ++stats_.entries;
  return Entry(value);
}

Result<RelationCache::Entry> RelationCache::FindOrBuild(const std::string& key,
                                                        const Builder& build) {
  if (Entry e = Find(key)) return e;
  AUGUR_ASSIGN_OR_RETURN(EncodedRelation built, build());
  return Insert(key, std::move(built));
}

bool RelationCache::Erase(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(key);
  if (it == map_.end()) return false;
  EraseLocked(it);
  return true;
}

void RelationCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  map_.clear();
  lru_.clear();
  stats_.bytes = 0;
  stats_.entries = 0;
}

CacheStats RelationCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace augur::relations
