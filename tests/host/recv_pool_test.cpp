// The shared receive pool on the loopback device: windows are taken and given back so that the
// windows never hold more slots than the pool has (no receiver-not-ready wait is possible), the
// pool grows a chunk only when a new peer's first window does not fit, a busy window grows while
// a new peer's window is kept in reserve and shrinks back when it is not, and a full pool at its
// bound refuses a peer with a clear error.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/recv_pool.h"

namespace augur::host {
namespace {

struct RecvPoolTest : ::testing::Test {
  nic::Context ctx = nic::Context::open("loopback").value();
  nic::ProtectionDomain pd = nic::ProtectionDomain::create(ctx).value();
};

TEST_F(RecvPoolTest, PeersAreAdmittedWithoutGrowingUntilTheirFirstWindowsDoNotFit) {
  auto pool = RecvPool::create(ctx, pd, {.slot_bytes = 100, .chunk_slots = 8, .peer_window = 3, .max_window = 6, .max_slots = 16})
                  .value();
  EXPECT_EQ(pool->slots(), 8u);
  EXPECT_EQ(pool->registered_bytes(), 800u);
  EXPECT_EQ(pool->admit().value(), 3u);
  EXPECT_EQ(pool->admit().value(), 3u);
  EXPECT_EQ(pool->counters().chunks, 1u);
  EXPECT_EQ(pool->unassigned(), 2u);
  EXPECT_EQ(pool->admit().value(), 3u);  // 2 left: one more chunk first
  EXPECT_EQ(pool->slots(), 16u);
  EXPECT_EQ(pool->unassigned(), 7u);
  EXPECT_EQ(pool->admit().value(), 3u);
  EXPECT_EQ(pool->admit().value(), 3u);
  EXPECT_EQ(pool->unassigned(), 1u);
  EXPECT_EQ(pool->admit().value(), 1u);  // at the bound: what is left
  Result<std::uint32_t> none = pool->admit();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::kResourceExhausted);
  EXPECT_NE(none.status().message().find("AUGUR_SRQ_MAX_SLOTS"), std::string::npos);
  pool->retire(3);  // a channel gone: its window comes back
  EXPECT_EQ(pool->admit().value(), 3u);
}

TEST_F(RecvPoolTest, ABusyWindowGrowsWhileAFirstWindowIsSpareAndShrinksBackWhenNot) {
  auto pool = RecvPool::create(ctx, pd, {.slot_bytes = 64, .chunk_slots = 10, .peer_window = 2, .max_window = 5, .max_slots = 10})
                  .value();
  std::uint32_t w = pool->admit().value();  // 8 unassigned
  ASSERT_EQ(w, 2u);
  std::uint32_t total = w + pool->unassigned();
  // Each slot given back: the window grows by one while more than 2 stay unassigned, to at most 5.
  for (int i = 0; i < 10; ++i) {
    const std::uint32_t g = pool->regrant(w);
    w = w - 1 + g;
    EXPECT_EQ(w + pool->unassigned(), total) << "slots lost or made up at step " << i;
  }
  EXPECT_EQ(w, 5u);
  EXPECT_EQ(pool->unassigned(), 5u);
  EXPECT_EQ(pool->counters().windows_grown, 3u);
  std::uint32_t w2 = pool->admit().value();  // a new peer: 3 unassigned then
  std::uint32_t w3 = pool->admit().value();  // and another: 1 left, below a first window
  EXPECT_EQ(w2 + w3, 4u);
  EXPECT_EQ(pool->unassigned(), 1u);
  // The busy window gives back one slot per release until a first window is spare again.
  EXPECT_EQ(pool->regrant(w), 0u);
  --w;
  EXPECT_EQ(pool->unassigned(), 2u);
  EXPECT_EQ(pool->regrant(w), 1u);  // 2 unassigned: neither lend nor take
  EXPECT_EQ(pool->counters().windows_shrunk, 1u);
  EXPECT_EQ(w + w2 + w3 + pool->unassigned(), pool->slots());
  // A window never shrinks below the first one.
  auto tight = RecvPool::create(ctx, pd, {.slot_bytes = 64, .chunk_slots = 4, .peer_window = 2, .max_window = 5, .max_slots = 4})
                   .value();
  const std::uint32_t a = tight->admit().value(), b = tight->admit().value();
  EXPECT_EQ(a + b, 4u);
  EXPECT_EQ(tight->regrant(a), 1u);
}

TEST_F(RecvPoolTest, ConfigurationsThatCouldNotWorkAreRefused) {
  EXPECT_FALSE(RecvPool::create(ctx, pd, {.slot_bytes = 64, .chunk_slots = 8, .peer_window = 0}).ok());
  EXPECT_FALSE(RecvPool::create(ctx, pd, {.slot_bytes = 64, .chunk_slots = 8, .peer_window = 9, .max_window = 8}).ok());
  EXPECT_FALSE(RecvPool::create(ctx, pd, {.slot_bytes = 64, .chunk_slots = 8, .peer_window = 2, .max_window = 8, .max_slots = 4}).ok());
  auto pool = RecvPool::create(ctx, pd, {.slot_bytes = 64, .chunk_slots = 4, .peer_window = 2, .max_window = 4, .max_slots = 8}).value();
  EXPECT_FALSE(pool->repost(4).ok());  // no such slot
  EXPECT_FALSE(pool->valid(4));
  EXPECT_TRUE(pool->valid(3));
}

}  // namespace
}  // namespace augur::host
