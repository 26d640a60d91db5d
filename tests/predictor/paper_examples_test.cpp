// The paper's worked examples, hits and misses counted by hand (docs/predictor.md lists them).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "augur/predictor/predictors.h"

namespace augur::predictor {
namespace {

// Runs `p` over `seq` (one site unless `sites` given) and returns the predicted trace as the
// paper draws it: the predicted id, or '-' when no prediction is offered; hits counted.
struct Outcome {
  std::vector<CallId> predicted;
  int hits = 0;
};

Outcome run(Predictor& p, const std::vector<CallId>& seq, const std::vector<SiteId>& sites = {}) {
  Outcome o;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const Event e{seq[i], sites.empty() ? 0U : sites[i]};
    o.predicted.push_back(p.predict(e.site));
    if (p.covers(e)) ++o.hits;
    p.observe(e);
  }
  return o;
}

constexpr CallId X = kNoCall;  // the dash: no prediction (a miss)
enum : CallId { A, B, C, D };

Options no_init() {
  Options o;
  o.init_min_length = 0;
  return o;
}

// Figure 6 (the sequence is ours: the figure is an image; the rules are Sec. 6.1's prose).
// A B C form a cycle, it is predicted, D breaks it and becomes the new cycle-head.
TEST(PaperFigure6, SingleCycleFormsPredictsBreaksAndReforms) {
  SingleCycle p(no_init());
  const std::vector<CallId> seq = {A, B, C, A, B, C, A, B, D, A, B, D, A, B};
  const Outcome o = run(p, seq);
  //                                  A  B  C  A  B  C  A  B  D  A  B  D  A  B
  const std::vector<CallId> want = {X, X, X, X, B, C, A, B, C, X, X, X, A, B};
  EXPECT_EQ(o.predicted, want);
  EXPECT_EQ(o.hits, 6);  // calls 5-8 and 13-14
  EXPECT_EQ(p.memory_tuples(), 3U);
}

// The same sequence with the initialization phase (first cycle must span > 5 calls): the
// first A B C is not enough, the first cycle closes at the third A (span 6 = "A B C A B C",
// kept as its period A B C).
TEST(PaperFigure6, SingleCycleWithInitializationPhase) {
  SingleCycle p(Options{});
  const std::vector<CallId> seq = {A, B, C, A, B, C, A, B, D, A, B, D, A, B};
  const Outcome o = run(p, seq);
  const std::vector<CallId> want = {X, X, X, X, X, X, X, B, C, X, X, X, A, B};
  EXPECT_EQ(o.predicted, want);
  EXPECT_EQ(o.hits, 3);
}

// The prose variant of Sec. 6.1: "during cycle formation, the previously requested message
// destination is offered as the predicted message destination".
TEST(PaperFigure6, OfferPreviousWhileForming) {
  Options opt = no_init();
  opt.offer_previous_while_forming = true;
  SingleCycle p(opt);
  const std::vector<CallId> seq = {A, A, B, A, B};
  const Outcome o = run(p, seq);
  // A: nothing seen yet. A: previous A offered -> hit (and A recurs: cycle [A]).
  // B: cycle predicts A -> miss, head B. A: previous B offered -> miss. B: closes [B A]; previous A offered -> miss.
  const std::vector<CallId> want = {X, A, A, B, A};
  EXPECT_EQ(o.predicted, want);
  EXPECT_EQ(o.hits, 1);
}

// Figure 7: "no cycle will be formed with the message cycle-heads 1, 3, and 5 ... a cycle is
// formed with the message cycle-head 4. This cycle consists of message calls 4, 6, 7, 8, 9, and
// 10. The first three message reception calls 1, 3, and 5, are ... the initialization pattern."
const std::vector<CallId> kFigure7 = {1, 3, 5, 4, 6, 7, 8, 9, 10,  // init pattern + first cycle
                                      4, 6, 7, 8, 9, 10, 4, 6, 7, 8, 9, 10};

TEST(PaperFigure7, InitializationPhaseSkipsToCycleHead4) {
  SingleCycle p(Options{});
  const Outcome o = run(p, kFigure7);
  // Misses until the first cycle is formed: 1 3 5 4 6 7 8 9 10 and the 4 that closes it.
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(o.predicted[i], X) << i;
  EXPECT_EQ(o.predicted[10], 6U);
  EXPECT_EQ(o.hits, 11);  // every call after the 10th
  EXPECT_EQ(p.memory_tuples(), 6U);
}

TEST(PaperFigure7, WithoutInitializationPhaseHead1NeverRecurs) {
  SingleCycle p(no_init());
  const Outcome o = run(p, kFigure7);
  EXPECT_EQ(o.hits, 0);  // "the predictor fails with a zero prediction hit ratio"
  EXPECT_EQ(p.memory_tuples(), 0U);
}

TEST(PaperFigure7, TagCycleAndBettercycleOnOneSiteBehaveLikeSingleCycle) {
  TagCycle tc(Options{}, false);
  TagCycle tb(Options{}, true);
  EXPECT_EQ(run(tc, kFigure7).hits, 11);
  EXPECT_EQ(run(tb, kFigure7).hits, 11);
}

// Tagging (Sec. 6.2): a hit when the site's call is the one last seen at that site.
TEST(PaperTagging, HitsWhenTheSiteRepeatsItsCall) {
  Tagging p;
  const std::vector<CallId> seq = {A, B, A, C, A, B};
  const std::vector<SiteId> sites = {0, 1, 0, 1, 0, 1};
  const Outcome o = run(p, seq, sites);
  const std::vector<CallId> want = {X, X, A, B, A, C};
  EXPECT_EQ(o.predicted, want);
  EXPECT_EQ(o.hits, 2);
  EXPECT_EQ(p.memory_tuples(), 2U);  // formula (2): number of tags
}

// Tag-cycle forgets a broken cycle; Tag-bettercycle keeps it under its head (Sec. 6.4).
const std::vector<CallId> kTwoPhases = {A, B, A, B, C, D, C, D, A, B, A, B};

TEST(PaperTagCycle, ForgetsTheBrokenCycle) {
  TagCycle p(no_init(), false);
  const Outcome o = run(p, kTwoPhases);
  const std::vector<CallId> want = {X, X, X, B, A, X, X, D, C, X, X, B};
  EXPECT_EQ(o.predicted, want);
  EXPECT_EQ(o.hits, 3);
  EXPECT_EQ(p.memory_tuples(), 2U);  // formula (3): 1 tag x cycle length 2
}

TEST(PaperTagBettercycle, ResumesTheRememberedCycleOfHeadA) {
  TagCycle p(no_init(), true);
  const Outcome o = run(p, kTwoPhases);
  // At the second A the cycle [C D] breaks; head A has the cycle [A B] from before: predict B.
  const std::vector<CallId> want = {X, X, X, B, A, X, X, D, C, B, A, B};
  EXPECT_EQ(o.predicted, want);
  EXPECT_EQ(o.hits, 5);
  EXPECT_EQ(p.max_heads(), 2U);
  EXPECT_EQ(p.memory_tuples(), 4U);  // formula (4): 1 tag x length 2 x 2 heads
}

// Sec. 5.2: LRU and FIFO are zero below the cycle length; LFU is not.
TEST(PaperWindows, LruFifoZeroBelowCycleLength) {
  std::vector<CallId> seq;
  for (int r = 0; r < 3; ++r) seq.insert(seq.end(), {A, B, C});
  for (WindowPolicy pol : {WindowPolicy::kLru, WindowPolicy::kFifo}) {
    WindowPredictor k2(pol, 2);
    EXPECT_EQ(run(k2, seq).hits, 0);
    WindowPredictor k3(pol, 3);
    EXPECT_EQ(run(k3, seq).hits, 6);  // all but the first three
  }
  // LFU, k = 2: A stays (it gains a hit), B and C evict each other: A hits once per loop.
  WindowPredictor lfu(WindowPolicy::kLfu, 2);
  EXPECT_EQ(run(lfu, seq).hits, 2);
}

TEST(PaperWindows, LruAndFifoDifferWhenAHitRefreshes) {
  // k = 2: A B A C A. LRU keeps A (refreshed at call 3) -> the last A hits; FIFO evicts A for C.
  const std::vector<CallId> seq = {A, B, A, C, A};
  WindowPredictor lru(WindowPolicy::kLru, 2);
  WindowPredictor fifo(WindowPolicy::kFifo, 2);
  EXPECT_EQ(run(lru, seq).hits, 2);
  EXPECT_EQ(run(fifo, seq).hits, 1);
  EXPECT_EQ(lru.memory_tuples(), 2U);
}

}  // namespace
}  // namespace augur::predictor
