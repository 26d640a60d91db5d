#include "augur/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include <gtest/gtest.h>

namespace augur {
namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(UniqueFd, ClosesWhatItOwnsWhenDropped) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  {
    const UniqueFd r(p[0]);
    EXPECT_TRUE(r.valid());
    EXPECT_EQ(r.get(), p[0]);
  }
  EXPECT_FALSE(is_open(p[0]));
  ::close(p[1]);
}

TEST(UniqueFd, MoveTransfersOwnershipAndAssignmentClosesTheOld) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  UniqueFd a(p[0]);
  UniqueFd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(b.get(), p[0]);
  UniqueFd c(p[1]);
  c = std::move(b);  // closes p[1], takes p[0]
  EXPECT_FALSE(is_open(p[1]));
  EXPECT_TRUE(is_open(p[0]));
  EXPECT_EQ(c.get(), p[0]);
}

TEST(UniqueFd, ReleaseGivesUpWithoutClosingResetCloses) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  UniqueFd a(p[0]);
  const int raw = a.release();
  EXPECT_FALSE(a.valid());
  EXPECT_TRUE(is_open(raw));
  a.reset(raw);
  a.reset();
  EXPECT_FALSE(is_open(raw));
  UniqueFd none;
  none.reset();  // nothing to close
  EXPECT_FALSE(none.valid());
  ::close(p[1]);
}

}  // namespace
}  // namespace augur
