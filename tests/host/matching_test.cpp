// MPI matching: hand-worked cases, and a randomized comparison (posts, arrivals, cancels, takes)
// against a naive reference that applies the rules literally (one list of receives in posting
// order, one of messages in arrival order, linear search).
#include "augur/host/matching.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace augur::host {
namespace {

using Q = MatchQueues<int, std::string>;

Envelope env(std::int32_t src, std::int32_t tag, std::uint32_t ctx = 0) { return {ctx, src, tag}; }
Pattern pat(std::int32_t src, std::int32_t tag, std::uint32_t ctx = 0) { return {ctx, src, tag}; }

TEST(Matching, ArrivalTakesEarliestPostedMatchingReceive) {
  Q q;
  EXPECT_FALSE(q.post(pat(1, 5), 10));
  EXPECT_FALSE(q.post(pat(kAnySource, 5), 11));
  EXPECT_FALSE(q.post(pat(1, kAnyTag), 12));
  EXPECT_EQ(q.arrive(env(1, 5), "a"), 10);  // specific receive posted first
  EXPECT_EQ(q.arrive(env(1, 5), "b"), 11);  // then the ANY_SOURCE one, posted before 12
  EXPECT_EQ(q.arrive(env(1, 7), "c"), 12);
  EXPECT_EQ(q.posted_count(), 0u);
}

TEST(Matching, PostTakesEarliestArrivedMatchingMessage) {
  Q q;
  EXPECT_FALSE(q.arrive(env(2, 1), "first-from-2"));
  EXPECT_FALSE(q.arrive(env(3, 1), "first-from-3"));
  EXPECT_FALSE(q.arrive(env(2, 1), "second-from-2"));
  auto m = q.post(pat(kAnySource, 1), 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->msg, "first-from-2");
  EXPECT_EQ(m->envelope.source, 2);
  EXPECT_EQ(q.post(pat(2, kAnyTag), 0)->msg, "second-from-2");  // non-overtaking per source
  EXPECT_EQ(q.post(pat(kAnySource, kAnyTag), 0)->msg, "first-from-3");
  EXPECT_EQ(q.unexpected_count(), 0u);
}

TEST(Matching, TagsAndContextsSeparateMessages) {
  Q q;
  EXPECT_FALSE(q.arrive(env(0, 1, /*ctx=*/7), "ctx7"));
  EXPECT_FALSE(q.post(pat(0, 1, /*ctx=*/8), 1));  // another communicator: no match
  EXPECT_FALSE(q.post(pat(0, 2, 7), 2));          // another tag: no match
  EXPECT_EQ(q.post(pat(0, 1, 7), 3)->msg, "ctx7");
  EXPECT_EQ(q.arrive(env(0, 2, 7), "t2"), 2);
  EXPECT_EQ(q.arrive(env(0, 1, 8), "ctx8"), 1);
}

TEST(Matching, ProbeLeavesTheMessageAndCancelRemovesAReceive) {
  Q q;
  EXPECT_EQ(q.probe(pat(kAnySource, kAnyTag)), nullptr);
  EXPECT_FALSE(q.arrive(env(4, 9), "m"));
  const auto* p = q.probe(pat(kAnySource, 9));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->envelope.source, 4);
  EXPECT_EQ(q.unexpected_count(), 1u);
  EXPECT_EQ(q.post(pat(4, 9), 1)->msg, "m");

  EXPECT_FALSE(q.post(pat(5, 0), 42));
  EXPECT_TRUE(q.cancel([](int r) { return r == 42; }));
  EXPECT_FALSE(q.cancel([](int r) { return r == 42; }));  // already gone
  EXPECT_FALSE(q.arrive(env(5, 0), "after-cancel"));      // nobody takes it now
  EXPECT_EQ(q.unexpected_count(), 1u);
}

TEST(Matching, TakeRemovesTheEarliestMatchingMessage) {  // MPI_Improbe
  Q q;
  EXPECT_FALSE(q.take(pat(kAnySource, kAnyTag)));
  EXPECT_FALSE(q.arrive(env(4, 9), "first"));
  EXPECT_FALSE(q.arrive(env(3, 9), "second"));
  EXPECT_FALSE(q.arrive(env(4, 9), "third"));
  auto t = q.take(pat(kAnySource, 9));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->msg, "first");
  EXPECT_EQ(t->envelope.source, 4);
  EXPECT_EQ(q.unexpected_count(), 2u);
  EXPECT_EQ(q.probe(pat(4, 9))->msg, "third");  // the taken one is out of reach
  EXPECT_EQ(q.take(pat(4, kAnyTag))->msg, "third");
  EXPECT_FALSE(q.take(pat(4, 9)));
  EXPECT_EQ(q.post(pat(kAnySource, 9), 1)->msg, "second");
  EXPECT_EQ(q.unexpected_count(), 0u);
}

// The naive reference: MPI's rules applied literally.
struct Reference {
  struct P { Pattern p; int id; };
  struct M { Envelope e; int id; };
  std::vector<P> posted;
  std::vector<M> unexpected;
  int post(const Pattern& p, int id) {  // returns message id or -1
    for (auto it = unexpected.begin(); it != unexpected.end(); ++it) {
      if (p.matches(it->e)) {
        int m = it->id;
        unexpected.erase(it);
        return m;
      }
    }
    posted.push_back({p, id});
    return -1;
  }
  int take(const Pattern& p) {  // MPI_Improbe: returns message id or -1
    for (auto it = unexpected.begin(); it != unexpected.end(); ++it) {
      if (p.matches(it->e)) {
        int m = it->id;
        unexpected.erase(it);
        return m;
      }
    }
    return -1;
  }
  int arrive(const Envelope& e, int id) {  // returns receive id or -1
    for (auto it = posted.begin(); it != posted.end(); ++it) {
      if (it->p.matches(e)) {
        int r = it->id;
        posted.erase(it);
        return r;
      }
    }
    unexpected.push_back({e, id});
    return -1;
  }
};

class MatchingRandom : public ::testing::TestWithParam<int> {};

TEST_P(MatchingRandom, AgreesWithTheReferenceOnEveryStep) {
  std::mt19937 rng(static_cast<unsigned>(GetParam()));
  MatchQueues<int, int> q;
  Reference ref;
  const int sources = 1 + static_cast<int>(rng() % 4);
  const int tags = 1 + static_cast<int>(rng() % 3);
  const auto contexts = static_cast<unsigned>(1 + rng() % 3);
  for (int step = 0; step < 3000; ++step) {
    const auto ctx = static_cast<std::uint32_t>(rng() % contexts);
    const int op = static_cast<int>(rng() % 12);
    if (op < 5 || op == 11) {
      Pattern p{ctx, rng() % 4 == 0 ? kAnySource : static_cast<std::int32_t>(rng() % static_cast<unsigned>(sources)),
                rng() % 4 == 0 ? kAnyTag : static_cast<std::int32_t>(rng() % static_cast<unsigned>(tags))};
      if (op == 11) {
        auto got = q.take(p);
        ASSERT_EQ(got ? got->msg : -1, ref.take(p)) << "step " << step;
      } else {
        auto got = q.post(p, step);
        const int want = ref.post(p, step);
        ASSERT_EQ(got ? got->msg : -1, want) << "step " << step;
      }
    } else if (op < 10) {
      Envelope e{ctx, static_cast<std::int32_t>(rng() % static_cast<unsigned>(sources)),
                 static_cast<std::int32_t>(rng() % static_cast<unsigned>(tags))};
      auto got = q.arrive(e, step);
      const int want = ref.arrive(e, step);
      ASSERT_EQ(got ? *got : -1, want) << "step " << step;
    } else if (!ref.posted.empty()) {
      const int id = ref.posted[rng() % ref.posted.size()].id;
      ASSERT_TRUE(q.cancel([id](int r) { return r == id; }));
      ref.posted.erase(std::find_if(ref.posted.begin(), ref.posted.end(), [id](const auto& p) { return p.id == id; }));
    }
    ASSERT_EQ(q.posted_count(), ref.posted.size());
    ASSERT_EQ(q.unexpected_count(), ref.unexpected.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, MatchingRandom, ::testing::Range(1, 21));

}  // namespace
}  // namespace augur::host
