#include "augur/nic/reg_cache.h"

#include "augur/nic/verbs.h"
#include "augur/settings.h"

#include <algorithm>
#include <string>
#include <vector>

namespace augur::nic {

namespace {
constexpr std::uintptr_t kPage = 4096;
std::uintptr_t page_down(std::uintptr_t a) { return a & ~(kPage - 1); }
std::uintptr_t page_up(std::uintptr_t a) { return (a + kPage - 1) & ~(kPage - 1); }
}  // namespace

RegCache::Handle& RegCache::Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    cache_ = o.cache_;
    e_ = o.e_;
    o.cache_ = nullptr;
    o.e_ = nullptr;
  }
  return *this;
}

void RegCache::Handle::reset() {
  if (e_ != nullptr) cache_->unpin(e_);
  cache_ = nullptr;
  e_ = nullptr;
}

const Registration& RegCache::Handle::reg() const { return e_->reg; }

bool RegCache::Handle::stale() const {
  if (e_ == nullptr) return true;
  cache_->drain_releases();
  return !e_->indexed;
}

RegCache::RegCache(RegisterFn reg, RegCacheLimits limits)
    : register_(std::move(reg)), limits_(limits), keep_(limits.keep_unused && releases_tracked()) {}

RegCache::~RegCache() = default;  // handles must not outlive the cache

RegCache::Entry* RegCache::find(std::uintptr_t lo, std::uintptr_t hi) {
  // Candidates start at or before lo, and no earlier than lo - max_len_.
  auto it = index_.upper_bound(lo);
  while (it != index_.begin()) {
    --it;
    const Registration& r = it->second->reg;
    if (lo - r.addr > max_len_) break;
    if (r.addr <= lo && hi <= r.addr + r.length) return it->second.get();
  }
  return nullptr;
}

Result<RegCache::Handle> RegCache::acquire(const void* addr, std::size_t length) {
  const auto lo = reinterpret_cast<std::uintptr_t>(addr);
  if (length == 0 || lo + length < lo) {
    return Status(Code::kInvalidArgument, "registration of " + std::to_string(length) + " bytes at " + std::to_string(lo));
  }
  drain_releases();
  if (Entry* e = find(lo, lo + length)) {
    ++counters_.hits;
    if (e->pins++ == 0) pinned_.splice(pinned_.end(), lru_, e->lru);
    return Handle(this, e);
  }
  ++counters_.misses;
  const std::uintptr_t a = page_down(lo);
  const std::size_t len = page_up(lo + length) - a;
  if (len > limits_.max_bytes || !evict_for(len)) {
    ++counters_.refused;
    // Names the bound that refused and its setting, so the message says what to raise.
    const std::string in_use = " (" + std::to_string(bytes_) + " bytes in " + std::to_string(index_.size()) +
                               " regions are registered, all in use)";
    std::string why;
    if (len > limits_.max_bytes) {
      why = "a region of " + std::to_string(len) + " bytes is larger than AUGUR_RCACHE_MAX_BYTES=" +
            std::to_string(limits_.max_bytes);
    } else if (bytes_ + len > limits_.max_bytes) {
      why = std::to_string(len) + " more bytes would pass AUGUR_RCACHE_MAX_BYTES=" + std::to_string(limits_.max_bytes) +
            in_use;
    } else {
      why = "one more region would pass AUGUR_RCACHE_MAX_ENTRIES=" + std::to_string(limits_.max_entries) + in_use;
    }
    return Status(Code::kResourceExhausted, "registration cache full: " + why);
  }
  watch_.watch(a, a + len);  // before registering: a release from now on is seen
  AUGUR_ASSIGN_OR_RETURN(Registration reg, register_(a, len));
  auto owned = std::make_unique<Entry>();
  owned->reg = std::move(reg);
  owned->pins = 1;
  Entry* e = owned.get();
  e->lru = pinned_.insert(pinned_.end(), e);
  index_.emplace(a, std::move(owned));
  bytes_ += len;
  max_len_ = std::max(max_len_, len);
  counters_.peak_bytes = std::max<std::uint64_t>(counters_.peak_bytes, bytes_);
  counters_.peak_entries = std::max<std::uint64_t>(counters_.peak_entries, index_.size());
  return Handle(this, e);
}

bool RegCache::evict_for(std::size_t len) {
  while (bytes_ + len > limits_.max_bytes || index_.size() + 1 > limits_.max_entries) {
    if (lru_.empty()) return false;  // everything left is in use
    ++counters_.evictions;
    erase(lru_.front());
  }
  return true;
}

void RegCache::unpin(Entry* e) {
  if (--e->pins > 0) return;
  if (!e->indexed) {  // invalidated while in use: deregister now
    orphans_.remove_if([e](const std::unique_ptr<Entry>& o) { return o.get() == e; });
    return;
  }
  lru_.splice(lru_.end(), pinned_, e->lru);
  if (!keep_) erase(e);
}

void RegCache::erase(Entry* e) {
  auto [first, last] = index_.equal_range(e->reg.addr);
  for (auto it = first; it != last; ++it) {
    if (it->second.get() != e) continue;
    bytes_ -= e->reg.length;
    e->indexed = false;
    if (e->pins == 0) {
      lru_.erase(e->lru);
      index_.erase(it);  // frees the entry and its registration
    } else {
      pinned_.erase(e->lru);
      orphans_.push_back(std::move(it->second));
      index_.erase(it);
    }
    return;
  }
}

void RegCache::invalidate(const void* addr, std::size_t length) {
  const auto lo = reinterpret_cast<std::uintptr_t>(addr);
  const std::uintptr_t hi = length > UINTPTR_MAX - lo ? UINTPTR_MAX : lo + length;
  std::vector<Entry*> doomed;
  // Overlapping regions start before hi and no earlier than lo - max_len_ (as in find).
  for (auto it = index_.lower_bound(lo > max_len_ ? lo - max_len_ : 0); it != index_.end() && it->first < hi; ++it) {
    if (lo < it->first + it->second->reg.length) doomed.push_back(it->second.get());
  }
  for (Entry* e : doomed) {
    ++counters_.invalidations;
    erase(e);
  }
}

void RegCache::drain_releases() {
  if (!watch_.pending()) return;
  const ReleaseWatch::Released r = watch_.take();
  if (r.all) {
    ++counters_.releases;
    invalidate(nullptr, UINTPTR_MAX);
    return;
  }
  for (std::size_t i = 0; i < r.count; ++i) {
    ++counters_.releases;
    invalidate(reinterpret_cast<const void*>(r.ranges[i].lo), r.ranges[i].hi - r.ranges[i].lo);
  }
}

}  // namespace augur::nic

namespace augur::nic {

RegisterFn pd_registrar(const ProtectionDomain& pd, std::uint32_t access) {
  return [&pd, access](std::uintptr_t a, std::size_t len) -> Result<Registration> {
    AUGUR_ASSIGN_OR_RETURN(MemoryRegion mr, MemoryRegion::register_memory(pd, reinterpret_cast<void*>(a), len, access));
    auto owner = std::make_shared<MemoryRegion>(std::move(mr));
    return Registration{a, len, owner->lkey(), owner->rkey(), owner};
  };
}

Result<RegCacheLimits> reg_cache_limits_from_settings() {
  RegCacheLimits l;
  AUGUR_ASSIGN_OR_RETURN(std::int64_t bytes, setting_int("AUGUR_RCACHE_MAX_BYTES"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t entries, setting_int("AUGUR_RCACHE_MAX_ENTRIES"));
  l.max_bytes = static_cast<std::size_t>(bytes);
  l.max_entries = static_cast<std::size_t>(entries);
  // Read (as "not 0") before main by mem_release.cpp's constructor; validated here.
  AUGUR_ASSIGN_OR_RETURN(l.keep_unused, setting_bool("AUGUR_RCACHE_TRACK"));
  return l;
}

}  // namespace augur::nic
