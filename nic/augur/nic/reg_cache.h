// Registration cache: registered memory regions looked up by address range, so that a user
// buffer used again (the common case in iterative MPI codes) is not registered again.
// Bounded in bytes and in entries; never grows past either bound: regions in use are pinned and
// never evicted, and when only pinned regions are left a request fails with kResourceExhausted
// (the caller then takes a copy path) instead of registering more. LRU eviction of unpinned
// regions; invalidation of memory the program gave back to the kernel (seen through
// mem_release.h, drained before every lookup) or explicitly. When releases are not tracked
// (AUGUR_RCACHE_TRACK=0) a region is deregistered as soon as no handle uses it: a cached one could
// outlive its pages. Single-threaded: the assist thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>

#include "augur/nic/mem_release.h"
#include "augur/status.h"

namespace augur::nic {

struct Registration {
  std::uintptr_t addr = 0;
  std::size_t length = 0;
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
  std::shared_ptr<void> owner;  // keeps the MR; deregistered when the last reference goes
};

// Registers [addr, addr+length); the cache calls it with page-aligned ranges.
using RegisterFn = std::function<Result<Registration>(std::uintptr_t addr, std::size_t length)>;

struct RegCacheLimits {
  std::size_t max_bytes = std::size_t{1} << 30;
  std::size_t max_entries = 1024;
  bool keep_unused = true;  // keep regions no handle uses (only when releases are tracked)
};

struct RegCacheCounters {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::uint64_t invalidations = 0;
  std::uint64_t refused = 0;  // requests that would have crossed a bound
  std::uint64_t releases = 0;  // ranges the program gave back to the kernel that touched the cache
  std::uint64_t peak_bytes = 0;    // most bytes registered at once (never past max_bytes)
  std::uint64_t peak_entries = 0;  // most regions registered at once (never past max_entries)
};

class RegCache {
  struct Entry;

 public:
  // A pinned registration; unpins when destroyed. Move-only.
  class Handle {
   public:
    Handle() = default;
    Handle(Handle&& o) noexcept : cache_(o.cache_), e_(o.e_) { o.cache_ = nullptr; o.e_ = nullptr; }
    Handle& operator=(Handle&& o) noexcept;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { reset(); }
    void reset();
    [[nodiscard]] const Registration& reg() const;
    [[nodiscard]] std::uint32_t lkey() const { return reg().lkey; }
    [[nodiscard]] std::uint32_t rkey() const { return reg().rkey; }
    // The memory was released since this handle was made: its registration names old pages.
    [[nodiscard]] bool stale() const;
    explicit operator bool() const { return e_ != nullptr; }

   private:
    friend class RegCache;
    Handle(RegCache* c, Entry* e) : cache_(c), e_(e) {}
    RegCache* cache_ = nullptr;
    Entry* e_ = nullptr;
  };

  RegCache(RegisterFn reg, RegCacheLimits limits);
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  // A registration covering [addr, addr+length), from the cache or newly made.
  Result<Handle> acquire(const void* addr, std::size_t length);
  // Drops every cached region overlapping [addr, addr+length) (memory about to be freed).
  // Pinned ones leave the index now and are deregistered when their last handle goes.
  void invalidate(const void* addr, std::size_t length);
  // Applies the releases reported since the last call (acquire does it first).
  void drain_releases();

  [[nodiscard]] const RegCacheCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::size_t entries() const noexcept { return index_.size(); }

 private:
  struct Entry {
    Registration reg;
    int pins = 0;
    bool indexed = true;
    std::list<Entry*>::iterator lru;  // while indexed: its node in lru_ (unpinned) or pinned_
  };
  Entry* find(std::uintptr_t lo, std::uintptr_t hi);
  void unpin(Entry* e);
  void erase(Entry* e);  // from the index, LRU and byte count; frees it if unpinned
  bool evict_for(std::size_t bytes);

  RegisterFn register_;
  RegCacheLimits limits_;
  RegCacheCounters counters_;
  std::multimap<std::uintptr_t, std::unique_ptr<Entry>> index_;  // by start address
  // Indexed entries, each in one list; a pin or unpin moves the node across (splice: a hit
  // allocates nothing).
  std::list<Entry*> lru_;     // unpinned, least recently used first
  std::list<Entry*> pinned_;  // in use
  std::size_t bytes_ = 0;
  std::size_t max_len_ = 0;  // longest indexed region: bounds the backwards search
  std::list<std::unique_ptr<Entry>> orphans_;  // invalidated while pinned
  bool keep_;
  ReleaseWatch watch_;
};

}  // namespace augur::nic

namespace augur::nic {
class ProtectionDomain;
// Registers through `pd` with `access` (Access flags): the RegisterFn for a real device.
RegisterFn pd_registrar(const ProtectionDomain& pd, std::uint32_t access);
// Bounds from AUGUR_RCACHE_MAX_BYTES and AUGUR_RCACHE_MAX_ENTRIES.
Result<RegCacheLimits> reg_cache_limits_from_settings();
}  // namespace augur::nic
