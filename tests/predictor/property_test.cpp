// Randomized properties and edge cases of every predictor.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "augur/predictor/predictors.h"
#include "augur/predictor/send_table.h"

namespace augur::predictor {
namespace {

struct Seq {
  std::vector<Event> events;
  std::size_t steady_from = 0;  // index from which the last cycles start
};

// A random prefix of `prefix` calls, then a pure cycle of `len` distinct calls repeated; the
// site of a call is fixed per call (call % sites), like a receive at one line of a loop.
Seq make_cycle(std::mt19937& rng, std::size_t prefix, std::size_t len, std::size_t reps,
               std::size_t sites) {
  Seq s;
  std::uniform_int_distribution<CallId> any(0, 999);
  for (std::size_t i = 0; i < prefix; ++i) {
    const CallId c = any(rng);
    s.events.push_back({c, static_cast<SiteId>(c % sites)});
  }
  std::vector<CallId> cycle(len);
  for (std::size_t i = 0; i < len; ++i) cycle[i] = static_cast<CallId>(1000 + i * 7 + rng() % 7);
  std::shuffle(cycle.begin(), cycle.end(), rng);
  for (std::size_t r = 0; r < reps; ++r) {
    if (r + 5 == reps) s.steady_from = s.events.size();
    for (CallId c : cycle) s.events.push_back({c, static_cast<SiteId>(c % sites)});
  }
  return s;
}

// Hits over the events from `from` on, out of how many.
double tail_ratio(Predictor& p, const Seq& s) {
  std::size_t hits = 0;
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const bool hit = p.covers(s.events[i]);
    if (i >= s.steady_from && hit) ++hits;
    p.observe(s.events[i]);
  }
  return static_cast<double>(hits) / static_cast<double>(s.events.size() - s.steady_from);
}

class PureCycle : public ::testing::TestWithParam<std::string> {};

TEST_P(PureCycle, AnyLengthAfterAnyPrefixIsPredictedExactly) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t len = 1 + rng() % 40;
    const std::size_t prefix = rng() % 30;
    const std::size_t sites = 1 + rng() % 4;
    const std::size_t reps = 30 + 70 / len;  // enough for adaptive's 32-call history to fill
    const Seq s = make_cycle(rng, prefix, len, reps, sites);
    Options o;
    o.window = 1;  // top-k with k = 1 is Single-cycle
    auto p = make_predictor(GetParam(), o);
    ASSERT_TRUE(p.ok());
    EXPECT_DOUBLE_EQ(tail_ratio(**p, s), 1.0)
        << GetParam() << " len=" << len << " prefix=" << prefix << " sites=" << sites;
  }
}

INSTANTIATE_TEST_SUITE_P(Exact, PureCycle,
                         ::testing::Values("single-cycle", "tag-cycle", "tag-bettercycle",
                                           "two-level", "adaptive", "top-k", "match"));

TEST(WindowProperty, LruFifoAreAllOrNothingAroundTheCycleLength) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t len = 2 + rng() % 30;
    const std::size_t prefix = rng() % 20;
    const Seq s = make_cycle(rng, prefix, len, 12, 1);
    for (WindowPolicy pol : {WindowPolicy::kLru, WindowPolicy::kFifo}) {
      WindowPredictor below(pol, len - 1);
      EXPECT_EQ(tail_ratio(below, s), 0.0) << len;
      WindowPredictor at(pol, len);
      EXPECT_EQ(tail_ratio(at, s), 1.0) << len;
    }
    // LFU keeps the prefix's calls (ties evict the newest), so it needs room for them too.
    WindowPredictor lfu(WindowPolicy::kLfu, len + prefix);
    EXPECT_EQ(tail_ratio(lfu, s), 1.0) << len;
  }
}

TEST(WindowProperty, LfuBeatsLruBelowTheCycleLength) {
  std::mt19937 rng(9);
  const Seq s = make_cycle(rng, 0, 10, 50, 1);
  WindowPredictor lru(WindowPolicy::kLru, 5);
  WindowPredictor lfu(WindowPolicy::kLfu, 5);
  const double r_lru = tail_ratio(lru, s);
  const double r_lfu = tail_ratio(lfu, s);
  EXPECT_EQ(r_lru, 0.0);
  EXPECT_GT(r_lfu, 0.3);  // k-1 entries settle and hit every loop: 4/10
}

TEST(TopK, CoversTheNextKDistinctCallsOfTheCycle) {
  Options o;
  o.init_min_length = 0;
  o.window = 2;
  SingleCycle p(o, 2);
  for (CallId c : {0U, 1U, 2U, 0U}) p.observe({c, 0});  // cycle [0 1 2], next is 1
  std::vector<CallId> out(3);
  ASSERT_EQ(p.predict_k(0, out), 3U);
  EXPECT_EQ(out, (std::vector<CallId>{1, 2, 0}));
  EXPECT_TRUE(p.covers({1, 0}));
  EXPECT_TRUE(p.covers({2, 0}));   // the one after next: a top-2 hit
  EXPECT_FALSE(p.covers({0, 0}));
}

TEST(TopK, EverySingleCycleHitIsATopKHitOnNoisyLoops) {
  std::mt19937 rng(5);
  for (bool resync : {false, true}) {
    Options o;
    o.resync = resync;
    SingleCycle one(o);
    SingleCycle four(o, 4);
    int one_hits = 0, four_hits = 0;
    for (int i = 0; i < 20000; ++i) {
      const CallId c = rng() % 50 == 0 ? static_cast<CallId>(100 + rng() % 20) : static_cast<CallId>(i % 37);
      const bool h1 = one.covers({c, 0});
      const bool h4 = four.covers({c, 0});
      ASSERT_TRUE(!h1 || h4) << i;
      one_hits += h1 ? 1 : 0;
      four_hits += h4 ? 1 : 0;
      one.observe({c, 0});
      four.observe({c, 0});
    }
    EXPECT_GE(four_hits, one_hits);
    if (resync) {
      EXPECT_GT(one_hits, 20000 * 9 / 10);
    }
  }
}

TEST(PositionMapTest, FindsInsertsGrowsAndClears) {
  PositionMap m;
  bool fresh = false;
  for (CallId k = 0; k < 3000; k += 3) {
    m.find_or_insert(k * 7919U, k, &fresh);
    ASSERT_TRUE(fresh) << k;
  }
  for (CallId k = 0; k < 3000; k += 3) {
    EXPECT_EQ(m.find_or_insert(k * 7919U, 0, &fresh), k);
    EXPECT_FALSE(fresh);
  }
  m.find_or_insert(1, 5, &fresh) = 9;  // the slot is writable
  EXPECT_EQ(m.find_or_insert(1, 0, &fresh), 9U);
  m.clear();
  EXPECT_EQ(m.find_or_insert(0, 42, &fresh), 42U);
  EXPECT_TRUE(fresh);
}

// ------------------------------------------------------------------------------- edge cases

std::vector<std::string> all_names() {
  std::vector<std::string> v;
  for (auto n : predictor_names()) v.emplace_back(n);
  return v;
}

TEST(Edge, SingleCallIsAMissAndCostsNothing) {
  for (const auto& n : all_names()) {
    auto p = make_predictor(n, Options{});
    ASSERT_TRUE(p.ok()) << n;
    EXPECT_FALSE((*p)->covers({5, 0})) << n;
    (*p)->observe({5, 0});
    if (n == "lru" || n == "fifo" || n == "lfu") {
      EXPECT_TRUE((*p)->covers({5, 0})) << n;  // now in the set
    } else if (n != "tagging" && n != "match") {  // match reads a hint as Tagging does
      EXPECT_EQ((*p)->predict(0), kNoCall) << n;  // a cycle needs a recurrence
    } else {
      EXPECT_EQ((*p)->predict(kNoSite), kNoCall) << n;  // and without one, needs a recurrence
    }
  }
}

TEST(Edge, NoRepetitionNeverHits) {
  for (const auto& n : all_names()) {
    Options o;
    o.max_cycle_length = 100;  // exercised: the give-up path keeps memory bounded
    auto p = make_predictor(n, o);
    ASSERT_TRUE(p.ok());
    int hits = 0;
    for (CallId c = 0; c < 1000; ++c) {
      hits += (*p)->covers({c, c % 3}) ? 1 : 0;
      (*p)->observe({c, c % 3});
    }
    EXPECT_EQ(hits, 0) << n;
  }
}

TEST(Edge, CycleHeadThatNeverRecursIsGivenUp) {
  for (std::uint32_t init : {0U, 6U}) {
    Options o;
    o.init_min_length = init;
    SingleCycle p(o);
    // A first cycle [7 8 9 ... 14] (span 8), broken by 999, which never recurs again.
    std::size_t hits = 0;
    for (int r = 0; r < 3; ++r) {
      for (CallId c = 7; c < 15; ++c) p.observe({c, 0});
    }
    p.observe({999, 0});
    for (int r = 0; r < 40; ++r) {
      for (CallId c = 0; c < 5; ++c) {
        hits += p.covers({c, 0}) ? 1U : 0U;
        p.observe({c, 0});
      }
    }
    // The paper's rule would wait for 999 for ever (0 hits). Given up after 2 x 8 calls, the
    // logged calls are searched again and the loop 0..4 is found within them.
    EXPECT_EQ(hits, 200U - 16U) << init;
    EXPECT_EQ(p.memory_tuples(), 8U) << init;
  }
}

TEST(Edge, RepeatedSingleCallIsACycleOfOne) {
  SingleCycle p(Options{});
  int hits = 0;
  for (int i = 0; i < 20; ++i) {
    hits += p.covers({3, 0}) ? 1 : 0;
    p.observe({3, 0});
  }
  EXPECT_EQ(hits, 20 - 7);  // the first cycle spans 6 calls: calls 1-7 are misses
  EXPECT_EQ(p.memory_tuples(), 1U);
}

TEST(Edge, TagPredictorsAbstainWithoutAHint) {
  for (const char* n : {"tagging", "tag-cycle", "tag-bettercycle"}) {
    auto p = make_predictor(n, Options{});
    ASSERT_TRUE(p.ok());
    for (int i = 0; i < 20; ++i) (*p)->observe({1, 0});
    EXPECT_EQ((*p)->predict(kNoSite), kNoCall) << n;
    EXPECT_EQ((*p)->predict(7), kNoCall) << n;  // a site never seen
    EXPECT_EQ((*p)->predict(0), 1U) << n;
  }
}

TEST(Edge, UnknownPredictorNameIsAnError) {
  auto p = make_predictor("lru2", Options{});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  EXPECT_NE(p.status().message().find("tag-bettercycle"), std::string::npos);
}

TEST(AdaptiveProperty, AbstainsOnNoiseAndFollowsWhenConfident) {
  Adaptive a(Options{});
  std::mt19937 rng(3);
  std::uniform_int_distribution<CallId> any(0, 1U << 20);
  std::size_t offered = 0;
  for (int i = 0; i < 500; ++i) {
    const Event e{any(rng), 0};
    offered += a.offers(0) ? 1U : 0U;
    a.observe(e);
  }
  EXPECT_EQ(offered, 0U);  // never confident on random calls
  EXPECT_EQ(a.followed(), -1);
  for (int r = 0; r < 30; ++r) {
    for (CallId c = 0; c < 8; ++c) a.observe({c, 0});
  }
  EXPECT_GE(a.followed(), 0);
  EXPECT_EQ(a.predict(0), 0U);
}

TEST(TwoLevelProperty, PredictsWithoutHintsWhereTaggingNeedsThem) {
  // Two sites alternate; each site cycles through two calls: per-site cycles of length 2.
  TwoLevel p(Options{});
  int hits = 0;
  for (int r = 0; r < 50; ++r) {
    for (CallId c : {0U, 10U, 1U, 11U}) {
      const Event e{c, c / 10};
      hits += p.predict(kNoSite) == c ? 1 : 0;  // no hint given
      p.observe(e);
    }
  }
  EXPECT_GT(hits, 180);
}

// ------------------------------------------------------------------------------ send table

TEST(SendTable, TrustsAPairOnlyAfterMoreThanTwoSightings) {
  SendTable t;
  const SendKey k{0x1000, 5, 2};
  EXPECT_FALSE(t.lookup(k).has_value());
  t.record(k, 0xbeef, 64);
  t.record(k, 0xbeef, 64);
  EXPECT_FALSE(t.lookup(k).has_value());  // count 2 is not > 2
  t.record(k, 0xbeef, 64);
  auto g = t.lookup(k);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->send_buffer, 0xbeefU);
  EXPECT_EQ(g->size, 64U);
  EXPECT_EQ(g->count, 3U);
  t.record(k, 0xbeef, 128);  // a different size restarts the count
  EXPECT_FALSE(t.lookup(k).has_value());
  EXPECT_FALSE(t.lookup({0x1000, 5, 3}).has_value());  // other source, other key
  EXPECT_EQ(t.size(), 1U);
}

}  // namespace
}  // namespace augur::predictor

namespace augur::predictor {
namespace {

// Counts misses of a resync Single-cycle over 5 laps of 0..9 with `edit` applied to lap 3.
int resync_misses(const std::function<void(std::vector<CallId>&)>& edit) {
  Options o;
  o.resync = true;
  SingleCycle p(o);
  std::vector<CallId> seq;
  for (int lap = 0; lap < 5; ++lap) {
    std::vector<CallId> l = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    if (lap == 3) edit(l);
    seq.insert(seq.end(), l.begin(), l.end());
  }
  int misses = 0;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    if (i >= 11 && !p.covers({seq[i], 0})) ++misses;  // after the first cycle is found
    p.observe({seq[i], 0});
  }
  return misses;
}

TEST(Resync, OneNoiseCallCostsOneMiss) {
  EXPECT_EQ(resync_misses([](auto&) {}), 0);
  EXPECT_EQ(resync_misses([](auto& l) { l[4] = 77; }), 1);                      // replaced
  // Inserted: the call after a miss is guessed as a replacement (5), so 4 is a second miss.
  EXPECT_EQ(resync_misses([](auto& l) { l.insert(l.begin() + 4, 77); }), 2);
  EXPECT_EQ(resync_misses([](auto& l) { l[4] = 77; l[5] = 78; }), 2);          // two replaced
  // Not noise (a new loop 20..24): the paper's cycle formation takes over.
  EXPECT_GT(resync_misses([](auto& l) { l = {20, 21, 22, 23, 24, 20, 21, 22, 23, 24}; }), 5);
}

TEST(Resync, WithoutItTheNoiseHeadStallsThePredictor) {
  Options o;  // the paper's rule: 77 becomes the cycle-head and never recurs
  SingleCycle p(o);
  int hits = 0;
  for (int lap = 0; lap < 8; ++lap) {
    for (CallId c = 0; c < 10; ++c) {
      const CallId call = lap == 2 && c == 4 ? 77 : c;
      hits += p.covers({call, 0}) ? 1 : 0;
      p.observe({call, 0});
    }
  }
  // Laps 0-1: 11 misses to find the cycle; then 77 stalls it for 2 x 10 calls before the
  // logged calls are searched again (the cycle is found again in them).
  EXPECT_EQ(hits, 80 - 11 - 1 - 20);
}

TEST(Resync, RepairsACycleFormedAroundNoise) {
  Options o;
  o.resync = true;
  o.init_min_length = 0;
  SingleCycle p(o);
  // The first lap has noise 77 in place of 4: the cycle is formed with it.
  std::vector<CallId> seq = {0, 1, 2, 3, 77, 5, 6, 7, 8, 9};
  for (int lap = 0; lap < 6; ++lap) {
    for (CallId c = 0; c < 10; ++c) seq.push_back(c);
  }
  std::vector<int> misses_per_lap(7, 0);
  for (std::size_t i = 0; i < seq.size(); ++i) {
    if (!p.covers({seq[i], 0})) ++misses_per_lap[i / 10];
    p.observe({seq[i], 0});
  }
  // Lap 1 closes the cycle (a miss) and misses at 4 (the cycle says 77); lap 2 misses at 4 the
  // same way, and the entry is repaired: no more misses.
  EXPECT_EQ(misses_per_lap[1], 2);
  EXPECT_EQ(misses_per_lap[2], 1);
  EXPECT_EQ(misses_per_lap[3], 0);
  EXPECT_EQ(misses_per_lap[6], 0);
}

}  // namespace
}  // namespace augur::predictor
