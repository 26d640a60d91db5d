#include "augur/status.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace augur {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return Status(Code::kInvalidArgument, "not positive");
  return v;
}

Status twice(int v, int* out) {
  AUGUR_ASSIGN_OR_RETURN(int x, parse_positive(v));
  *out = 2 * x;
  return Status::Ok();
}

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.to_string(), "OK");
}

TEST(Status, ContextPrefixesMessageAndKeepsCode) {
  Status s = Status(Code::kTimeout, "no answer").context("connect QP");
  EXPECT_EQ(s.code(), Code::kTimeout);
  EXPECT_EQ(s.to_string(), "TIMEOUT: connect QP: no answer");
}

TEST(Status, ErrnoMapsToCodes) {
  EXPECT_EQ(errno_status(ENOMEM, "ibv_reg_mr").code(), Code::kResourceExhausted);
  EXPECT_EQ(errno_status(ETIMEDOUT, "x").code(), Code::kTimeout);
  EXPECT_EQ(errno_status(ECONNRESET, "x").code(), Code::kPeerFailure);
  EXPECT_EQ(errno_status(ENODEV, "x").code(), Code::kNotFound);
  EXPECT_EQ(errno_status(0, "x").code(), Code::kInternal);
  EXPECT_NE(errno_status(ENOMEM, "ibv_reg_mr").message().find("ibv_reg_mr: "), std::string::npos);
}

TEST(Result, PropagatesThroughMacros) {
  int out = 0;
  EXPECT_TRUE(twice(21, &out).ok());
  EXPECT_EQ(out, 42);
  Status s = twice(-1, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(out, 42);  // untouched on error
}

}  // namespace
}  // namespace augur
