// The registration cache with a fake registrar: counts registrations and deregistrations.
#include "augur/nic/reg_cache.h"
#include "augur/nic/mem_release.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace augur::nic {
namespace {

struct FakeDevice {
  int registered = 0;
  int live = 0;
  std::size_t live_bytes = 0;
  std::size_t peak_bytes = 0;
  bool fail_next = false;
  RegisterFn fn() {
    return [this](std::uintptr_t a, std::size_t len) -> Result<Registration> {
      if (fail_next) {
        fail_next = false;
        return Status(Code::kResourceExhausted, "ibv_reg_mr: Cannot allocate memory");
      }
      ++registered;
      ++live;
      live_bytes += len;
      peak_bytes = std::max(peak_bytes, live_bytes);
      auto owner = std::shared_ptr<void>(nullptr, [this, len](void*) {
        --live;
        live_bytes -= len;
      });
      return Registration{a, len, static_cast<std::uint32_t>(registered), static_cast<std::uint32_t>(registered) + 1000, owner};
    };
  }
};

alignas(4096) char arena[64 * 4096];

TEST(RegCache, HitWithinARegisteredRangeAndPageAlignment) {
  FakeDevice dev;
  RegCache cache(dev.fn(), {});
  {
    auto h = cache.acquire(arena + 100, 5000);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->reg().addr, reinterpret_cast<std::uintptr_t>(arena));
    EXPECT_EQ(h->reg().length, 2u * 4096);  // [0, 5100) rounded out to pages
    auto inside = cache.acquire(arena + 4096, 4096);
    ASSERT_TRUE(inside.ok());
    EXPECT_EQ(inside->lkey(), h->lkey());
  }
  auto outside = cache.acquire(arena + 3 * 4096, 10);
  ASSERT_TRUE(outside.ok());
  EXPECT_NE(outside->lkey(), 1u);
  EXPECT_EQ(cache.counters().hits, 1u);
  EXPECT_EQ(cache.counters().misses, 2u);
  EXPECT_EQ(dev.registered, 2);
}

TEST(RegCache, NeverPassesTheEntryBoundAndEvictsLeastRecentlyUsed) {
  FakeDevice dev;
  RegCache cache(dev.fn(), {.max_bytes = 1 << 30, .max_entries = 3});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.acquire(arena + i * 4096, 1).ok());
  ASSERT_TRUE(cache.acquire(arena + 0, 1).ok());  // page 0 is now the most recent
  ASSERT_TRUE(cache.acquire(arena + 3 * 4096, 1).ok());  // evicts page 1
  EXPECT_EQ(cache.entries(), 3u);
  EXPECT_EQ(dev.live, 3);
  EXPECT_EQ(cache.counters().evictions, 1u);
  const auto misses = cache.counters().misses;
  ASSERT_TRUE(cache.acquire(arena + 0, 1).ok());
  EXPECT_EQ(cache.counters().misses, misses);  // still cached
  ASSERT_TRUE(cache.acquire(arena + 4096, 1).ok());
  EXPECT_EQ(cache.counters().misses, misses + 1);  // was evicted
}

TEST(RegCache, PinnedRegionsAreNeverEvictedAndAFullCacheRefuses) {
  FakeDevice dev;
  RegCache cache(dev.fn(), {.max_bytes = 4 * 4096, .max_entries = 100});
  auto a = cache.acquire(arena, 2 * 4096);
  auto b = cache.acquire(arena + 8 * 4096, 2 * 4096);
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = cache.acquire(arena + 16 * 4096, 1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kResourceExhausted);
  EXPECT_NE(c.status().message().find("registration cache full"), std::string::npos);
  EXPECT_NE(c.status().message().find("4096 more bytes would pass AUGUR_RCACHE_MAX_BYTES=16384"), std::string::npos)
      << c.status().message();
  EXPECT_EQ(cache.counters().refused, 1u);
  EXPECT_EQ(cache.counters().peak_bytes, 4u * 4096);
  EXPECT_EQ(cache.counters().peak_entries, 2u);
  EXPECT_EQ(dev.live, 2);
  a.value().reset();  // unpinned: may now be evicted
  auto d = cache.acquire(arena + 16 * 4096, 1);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(dev.live, 2);
  EXPECT_LE(cache.bytes(), 4u * 4096);
  auto huge = cache.acquire(arena, 5 * 4096);
  EXPECT_EQ(huge.status().code(), Code::kResourceExhausted);
  EXPECT_NE(huge.status().message().find("a region of 20480 bytes is larger than AUGUR_RCACHE_MAX_BYTES=16384"),
            std::string::npos)
      << huge.status().message();
  EXPECT_LE(cache.counters().peak_bytes, 4u * 4096);
}

TEST(RegCache, AFullEntryBoundRefusesNamingItsSetting) {
  FakeDevice dev;
  RegCache cache(dev.fn(), {.max_bytes = 1 << 30, .max_entries = 2});
  auto a = cache.acquire(arena, 1);
  auto b = cache.acquire(arena + 4 * 4096, 1);
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = cache.acquire(arena + 8 * 4096, 1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kResourceExhausted);
  EXPECT_NE(c.status().message().find("one more region would pass AUGUR_RCACHE_MAX_ENTRIES=2"), std::string::npos)
      << c.status().message();
  b.value().reset();
  ASSERT_TRUE(cache.acquire(arena + 8 * 4096, 1).ok());  // the unpinned one is evicted for it
  EXPECT_EQ(cache.counters().peak_entries, 2u);
  EXPECT_EQ(cache.counters().evictions, 1u);
}

TEST(RegCache, InvalidateDropsOverlappingRegionsAndDefersPinnedOnes) {
  FakeDevice dev;
  RegCache cache(dev.fn(), {});
  auto pinned = cache.acquire(arena, 4096);
  ASSERT_TRUE(pinned.ok());
  ASSERT_TRUE(cache.acquire(arena + 4 * 4096, 4096).ok());
  ASSERT_TRUE(cache.acquire(arena + 10 * 4096, 4096).ok());
  cache.invalidate(arena + 100, 5 * 4096);  // overlaps the first two
  EXPECT_EQ(cache.counters().invalidations, 2u);
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(dev.live, 2);  // the pinned one lives on until released
  EXPECT_EQ(pinned->lkey(), 1u);
  pinned.value().reset();
  EXPECT_EQ(dev.live, 1);
  auto again = cache.acquire(arena, 4096);  // a fresh registration, not the stale one
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->lkey(), 1u);
}

TEST(RegCache, RegistrationFailureIsReturnedAndNothingIsCached) {
  FakeDevice dev;
  RegCache cache(dev.fn(), {});
  dev.fail_next = true;
  auto r = cache.acquire(arena, 10);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Cannot allocate memory"), std::string::npos);
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.acquire(arena, 0).status().code(), Code::kInvalidArgument);
}

// Random acquire/release/invalidate against the bounds: bytes and entries never pass them, and
// the fake device never holds more than the bound plus what is pinned.
TEST(RegCache, RandomizedWorkloadKeepsBothBounds) {
  FakeDevice dev;
  const RegCacheLimits lim{.max_bytes = 12 * 4096, .max_entries = 5};
  RegCache cache(dev.fn(), lim);
  std::mt19937 rng(7);
  std::vector<RegCache::Handle> held;
  for (int i = 0; i < 5000; ++i) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 6) {
      const std::size_t off = rng() % (60 * 4096);
      const std::size_t len = 1 + rng() % (3 * 4096);
      auto h = cache.acquire(arena + off, std::min(len, sizeof arena - off));
      if (h.ok()) {
        EXPECT_LE(h->reg().addr, reinterpret_cast<std::uintptr_t>(arena + off));
        if (held.size() < 3) held.push_back(std::move(h).value());
      }
    } else if (op < 9 && !held.empty()) {
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(rng() % held.size()));
    } else {
      cache.invalidate(arena + rng() % (60 * 4096), 4096);
    }
    ASSERT_LE(cache.bytes(), lim.max_bytes);
    ASSERT_LE(cache.entries(), lim.max_entries);
  }
  held.clear();
  EXPECT_LE(dev.live_bytes, lim.max_bytes);
}


bool tracking_off_by_setting() {
  const char* v = std::getenv("AUGUR_RCACHE_TRACK");
  return v != nullptr && std::strcmp(v, "0") == 0;
}

// A reported release drops every cached region it touches; the next acquire registers again.
TEST(RegCache, ReleasedMemoryIsRegisteredAgain) {
  ASSERT_TRUE(releases_tracked()) << "these cases need release tracking (AUGUR_RCACHE_TRACK=1): " << release_tracking();
  FakeDevice dev;
  RegCache cache(dev.fn(), {});
  char* base = arena + 8 * 4096;
  ASSERT_TRUE(cache.acquire(base, 3 * 4096).ok());
  ASSERT_TRUE(cache.acquire(base + 10 * 4096, 100).ok());
  EXPECT_EQ(dev.live, 2);  // both cached, unpinned
  note_release(base + 4096, 10);  // one byte of a region is enough
  EXPECT_TRUE(cache.acquire(base + 10 * 4096, 100).ok());  // untouched: still a hit
  EXPECT_EQ(cache.counters().hits, 1u);
  EXPECT_EQ(cache.counters().releases, 1u);
  EXPECT_EQ(cache.counters().invalidations, 1u);
  EXPECT_EQ(dev.live, 1);
  ASSERT_TRUE(cache.acquire(base, 3 * 4096).ok());
  EXPECT_EQ(cache.counters().misses, 3u);
  EXPECT_EQ(dev.registered, 3);
  note_release(base + 3 * 4096, 4096);  // right after the first region, not in it
  ASSERT_TRUE(cache.acquire(base, 3 * 4096).ok());
  EXPECT_EQ(cache.counters().hits, 2u);
}

// A region in use when its memory is released: the handle reports it stale, the registration
// lives until the handle goes, and nobody else gets it.
TEST(RegCache, RegionReleasedWhileInUseIsStale) {
  ASSERT_TRUE(releases_tracked()) << "these cases need release tracking (AUGUR_RCACHE_TRACK=1): " << release_tracking();
  FakeDevice dev;
  RegCache cache(dev.fn(), {});
  auto h = cache.acquire(arena + 20 * 4096, 4096);
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE(h->stale());
  note_release(arena + 20 * 4096, 4096);
  EXPECT_TRUE(h->stale());
  EXPECT_EQ(dev.live, 1);
  auto again = cache.acquire(arena + 20 * 4096, 4096);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->lkey(), h->lkey());
  h->reset();
  EXPECT_EQ(dev.live, 1);
  EXPECT_FALSE(again->stale());
}

// Many releases at once (more than a watch keeps): everything is dropped.
TEST(RegCache, ReleaseStormDropsEverything) {
  ASSERT_TRUE(releases_tracked()) << "these cases need release tracking (AUGUR_RCACHE_TRACK=1): " << release_tracking();
  FakeDevice dev;
  RegCache cache(dev.fn(), {});
  ASSERT_TRUE(cache.acquire(arena + 40 * 4096, 4096).ok());
  ASSERT_TRUE(cache.acquire(arena + 50 * 4096, 4096).ok());
  for (std::size_t i = 0; i <= ReleaseWatch::kMaxRanges; ++i) note_release(arena + 40 * 4096 + i, 1);
  cache.drain_releases();
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(dev.live, 0);
}

// The hooks themselves: the program's own calls are seen. Release builds interpose munmap,
// madvise, mremap and MAP_FIXED mmap and keep glibc's heap mapped; sanitizer builds, whose
// allocators unmap internally, see every free() instead.
TEST(RegCache, ProgramReleasesAreSeen) {
  ASSERT_TRUE(releases_tracked()) << "these cases need release tracking (AUGUR_RCACHE_TRACK=1): " << release_tracking();
  FakeDevice dev;
  RegCache cache(dev.fn(), {});
  std::uint64_t releases = 0;
  auto cached_then_released = [&](void* p, std::size_t n, const std::function<void()>& release) {
    ASSERT_TRUE(cache.acquire(p, n).ok());
    const int before = dev.registered;
    ASSERT_TRUE(cache.acquire(p, n).ok());
    ASSERT_EQ(dev.registered, before);  // a hit
    release();
    cache.drain_releases();
    EXPECT_EQ(cache.counters().releases, ++releases);
  };
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  EXPECT_STREQ(release_tracking(), "sanitizer-free-hook");
  void* m = std::malloc(std::size_t{3} << 20);
  ASSERT_NE(m, nullptr);
  cached_then_released(m, std::size_t{3} << 20, [m] { std::free(m); });
  auto* v = new std::vector<char>(5000);
  char* d = v->data();
  cached_then_released(d, 5000, [v] { delete v; });
#else
  EXPECT_STREQ(release_tracking(), "malloc-hooks");
  constexpr std::size_t kLen = 16 * 4096;
  auto* p = static_cast<char*>(::mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  cached_then_released(p, 4096, [p] { ASSERT_EQ(::madvise(p, 4096, MADV_DONTNEED), 0); });
  cached_then_released(p + 4096, 4096, [p] {
    ASSERT_EQ(::mmap(p + 4096, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), p + 4096);
  });
  char* q = nullptr;
  cached_then_released(p + 2 * 4096, 4096, [&] {
    q = static_cast<char*>(::mremap(p, kLen, 2 * kLen, MREMAP_MAYMOVE));
    ASSERT_NE(q, MAP_FAILED);
  });
  ASSERT_EQ(::madvise(q, 4096, MADV_WILLNEED), 0);  // keeps the pages: not a release
  cache.drain_releases();
  EXPECT_EQ(cache.counters().releases, releases);
  cached_then_released(q, 2 * kLen, [q] { ASSERT_EQ(::munmap(q, 2 * kLen), 0); });
  // glibc's free() gives nothing back: large blocks come from the heap, which is never trimmed.
  void* big = std::malloc(std::size_t{64} << 20);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(mallinfo2().hblks, 0u) << "a 64 MiB block was mmap'd: free() would unmap it unseen";
  std::free(big);
#endif
  EXPECT_EQ(dev.live, 0);  // each released region was deregistered
}

// A cache that cannot rely on tracking keeps no region that no handle uses. Under
// AUGUR_RCACHE_TRACK=0 (ctest nic_reg_cache_untracked) that is every cache, and malloc is left
// alone; otherwise keep_unused=false asks for the same.
TEST(RegCache, UntrackedCacheKeepsNothingUnused) {
  RegCacheLimits lim;
  if (tracking_off_by_setting()) {
    EXPECT_FALSE(releases_tracked());
    EXPECT_STREQ(release_tracking(), "off");
  } else {
    lim.keep_unused = false;
  }
  FakeDevice dev;
  RegCache cache(dev.fn(), lim);
  {
    auto h = cache.acquire(arena, 100);
    ASSERT_TRUE(h.ok());
    auto inside = cache.acquire(arena + 50, 10);  // in use: shared
    ASSERT_TRUE(inside.ok());
    EXPECT_EQ(dev.registered, 1);
  }
  EXPECT_EQ(dev.live, 0);
  EXPECT_EQ(cache.entries(), 0u);
  ASSERT_TRUE(cache.acquire(arena, 100).ok());
  EXPECT_EQ(dev.registered, 2);
}

}  // namespace
}  // namespace augur::nic
