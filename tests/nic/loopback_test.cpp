// The loopback device keeps the verbs rules the protocols above rely on (nic/loopback.h): these
// tests pin each one through the public nic:: API, as an RDMA device would behave.
#include <poll.h>

#include <cstring>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "augur/nic/verbs.h"
#include "augur/nic/wire.h"

namespace augur::nic {
namespace {

constexpr ConnectOptions kOpt{};

struct Loopback : ::testing::Test {
  Context ctx = Context::open("loopback").value();
  ProtectionDomain pd = ProtectionDomain::create(ctx).value();
  CompletionChannel events = CompletionChannel::create(ctx).value();
  CompletionQueue cq_a = CompletionQueue::create(ctx, 64, nullptr).value();
  CompletionQueue cq_b = CompletionQueue::create(ctx, 64, &events).value();
  QpCaps caps{.max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 4, .max_recv_sge = 4, .max_inline_data = 64};
  std::optional<QueuePair> a, b;

  void SetUp() override {
    a.emplace(QueuePair::create_rc(pd, cq_a, cq_a, caps).value());
    b.emplace(QueuePair::create_rc(pd, cq_b, cq_b, caps).value());
    const QpAddress aa = a->local_address(ctx, kOpt, 1).value();
    const QpAddress ba = b->local_address(ctx, kOpt, 2).value();
    ASSERT_TRUE(a->connect(ctx, kOpt, aa, ba).ok());
    ASSERT_TRUE(b->connect(ctx, kOpt, ba, aa).ok());
  }

  MemoryRegion reg(std::vector<std::byte>& v, std::uint32_t access) {
    return MemoryRegion::register_memory(pd, v.data(), v.size(), access).value();
  }
  static Sge sge(const MemoryRegion& mr, std::size_t off, std::size_t len) {
    return {reinterpret_cast<std::uint64_t>(mr.addr()) + off, static_cast<std::uint32_t>(len), mr.lkey()};
  }
  static std::vector<Completion> drain(CompletionQueue& cq) {
    std::vector<Completion> out(64);
    out.resize(cq.poll(out).value());
    return out;
  }
};

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 13 + static_cast<std::size_t>(seed)) & 0xff);
  return v;
}

TEST_F(Loopback, SendWaitsForAReceiveThenArrivesIntactWithItsImmediate) {
  std::vector<std::byte> src = pattern(300, 1), dst(512);
  MemoryRegion smr = reg(src, 0), dmr = reg(dst, kLocalWrite);
  const Sge s[] = {sge(smr, 0, 100), sge(smr, 100, 200)};
  ASSERT_TRUE(a->post_send({.wr_id = 7, .op = SendOp::kSendWithImm, .sges = s, .imm = 0xabcd}).ok());
  EXPECT_TRUE(drain(cq_a).empty());  // no receive posted yet: the send waits (rnr_retry = 7)
  EXPECT_TRUE(drain(cq_b).empty());
  const Sge r[] = {sge(dmr, 0, 256), sge(dmr, 256, 256)};
  ASSERT_TRUE(b->post_recv(9, r).ok());
  auto rc = drain(cq_b);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_TRUE(rc[0].ok());
  EXPECT_EQ(rc[0].wr_id, 9u);
  EXPECT_EQ(rc[0].opcode, WcOpcode::kRecv);
  EXPECT_EQ(rc[0].byte_len, 300u);
  EXPECT_TRUE(rc[0].has_imm);
  EXPECT_EQ(rc[0].imm, 0xabcdu);
  EXPECT_EQ(rc[0].qp_num, b->qp_num());
  EXPECT_EQ(0, std::memcmp(dst.data(), src.data(), 300));
  auto sc = drain(cq_a);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].wr_id, 7u);
  EXPECT_EQ(sc[0].opcode, WcOpcode::kSend);
}

TEST_F(Loopback, DataIsTakenAtExecutionExceptInlineDataWhichIsTakenAtPost) {
  std::vector<std::byte> src = pattern(32, 2), dst(64);
  MemoryRegion smr = reg(src, 0), dmr = reg(dst, kLocalWrite);
  const Sge s[] = {sge(smr, 0, 32)};
  ASSERT_TRUE(a->post_send({.wr_id = 1, .sges = s}).ok());
  ASSERT_TRUE(a->post_send({.wr_id = 2, .sges = s, .inline_data = true}).ok());
  const std::vector<std::byte> at_post = src;
  src.assign(src.size(), std::byte{0x5a});  // reused before completion: a caller's bug made visible
  const Sge r0[] = {sge(dmr, 0, 32)}, r1[] = {sge(dmr, 32, 32)};
  ASSERT_TRUE(b->post_recv(1, r0).ok());
  ASSERT_TRUE(b->post_recv(2, r1).ok());
  EXPECT_EQ(drain(cq_b).size(), 2u);
  EXPECT_EQ(dst[0], std::byte{0x5a});
  EXPECT_EQ(0, std::memcmp(dst.data() + 32, at_post.data(), 32));
}

TEST_F(Loopback, WriteWithImmediateConsumesAReceiveAndReadFillsAScatterList) {
  std::vector<std::byte> src = pattern(1000, 3), target(1000), back(1000);
  MemoryRegion smr = reg(src, kRemoteRead), tmr = reg(target, kRemoteWrite), bmr = reg(back, kLocalWrite);
  const Sge s[] = {sge(smr, 0, 1000)};
  ASSERT_TRUE(a->post_send({.wr_id = 3, .op = SendOp::kRdmaWriteWithImm, .sges = s,
                            .remote_addr = reinterpret_cast<std::uint64_t>(target.data()), .rkey = tmr.rkey(), .imm = 5})
                  .ok());
  EXPECT_TRUE(drain(cq_b).empty());  // waits for a receive to consume
  ASSERT_TRUE(b->post_recv(4, {}).ok());
  auto rc = drain(cq_b);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].opcode, WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(rc[0].byte_len, 1000u);
  EXPECT_EQ(rc[0].imm, 5u);
  EXPECT_EQ(target, src);
  // b reads a's source back into three pieces of its own buffer.
  const Sge r[] = {sge(bmr, 0, 1), sge(bmr, 1, 499), sge(bmr, 500, 500)};
  ASSERT_TRUE(b->post_send({.wr_id = 8, .op = SendOp::kRdmaRead, .sges = r,
                            .remote_addr = reinterpret_cast<std::uint64_t>(src.data()), .rkey = smr.rkey()})
                  .ok());
  auto bc = drain(cq_b);
  ASSERT_EQ(bc.size(), 1u);
  EXPECT_EQ(bc[0].opcode, WcOpcode::kRdmaRead);
  EXPECT_EQ(bc[0].byte_len, 1000u);
  EXPECT_EQ(back, src);
}

TEST_F(Loopback, MessageLongerThanTheReceiveFailsBothEndsAndFlushesTheRest) {
  std::vector<std::byte> src = pattern(100, 4), dst(64, std::byte{0x11});
  MemoryRegion smr = reg(src, 0), dmr = reg(dst, kLocalWrite);
  const Sge r[] = {sge(dmr, 0, 64)};
  ASSERT_TRUE(b->post_recv(1, r).ok());
  ASSERT_TRUE(b->post_recv(2, r).ok());
  const Sge s[] = {sge(smr, 0, 100)};
  ASSERT_TRUE(a->post_send({.wr_id = 1, .sges = s}).ok());
  auto rc = drain(cq_b);
  ASSERT_EQ(rc.size(), 2u);
  EXPECT_EQ(rc[0].status().code(), Code::kTruncated);    // LOC_LEN_ERR
  EXPECT_EQ(rc[1].status().code(), Code::kUnavailable);  // flushed: the QP is in error
  EXPECT_EQ(dst, std::vector<std::byte>(64, std::byte{0x11}));  // nothing written
  auto sc = drain(cq_a);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status().code(), Code::kTruncated);  // REM_INV_REQ_ERR
}

TEST_F(Loopback, RemoteAccessIsCheckedByKeyRangeAndRightAndTouchesNothing) {
  std::vector<std::byte> src = pattern(64, 5), ro(64, std::byte{0x22});
  MemoryRegion smr = reg(src, 0), romr = reg(ro, kRemoteRead);
  const Sge s[] = {sge(smr, 0, 64)};
  const auto addr = reinterpret_cast<std::uint64_t>(ro.data());
  struct Case {
    std::uint64_t addr;
    std::uint32_t rkey;
  };
  for (const Case c : {Case{addr, romr.rkey()},          // no remote-write right
                       Case{addr, romr.rkey() + 1000},   // no such key
                       Case{addr + 1, romr.rkey()}}) {   // one byte past the region
    QueuePair q = QueuePair::create_rc(pd, cq_a, cq_a, caps).value();
    QueuePair p = QueuePair::create_rc(pd, cq_b, cq_b, caps).value();
    const QpAddress qa = q.local_address(ctx, kOpt, 1).value(), pa = p.local_address(ctx, kOpt, 1).value();
    ASSERT_TRUE(q.connect(ctx, kOpt, qa, pa).ok());
    ASSERT_TRUE(p.connect(ctx, kOpt, pa, qa).ok());
    ASSERT_TRUE(q.post_send({.wr_id = 1, .op = SendOp::kRdmaWrite, .sges = s, .remote_addr = c.addr, .rkey = c.rkey}).ok());
    auto sc = drain(cq_a);
    ASSERT_EQ(sc.size(), 1u);
    EXPECT_EQ(sc[0].status().code(), Code::kInvalidArgument);  // REM_ACCESS_ERR
  }
  EXPECT_EQ(ro, std::vector<std::byte>(64, std::byte{0x22}));
  // A local buffer outside every region is a protection error.
  std::vector<std::byte> stray(8);
  const Sge bad[] = {{reinterpret_cast<std::uint64_t>(stray.data()), 8, smr.lkey()}};
  ASSERT_TRUE(b->post_recv(1, {}).ok());
  ASSERT_TRUE(a->post_send({.wr_id = 2, .sges = bad}).ok());
  auto sc = drain(cq_a);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status().code(), Code::kInvalidArgument);  // LOC_PROT_ERR
}

TEST_F(Loopback, ErrorStateFlushesEveryRequestAndAGonePeerFailsItsSender) {
  ASSERT_TRUE(b->post_recv(1, {}).ok());
  ASSERT_TRUE(b->post_recv(2, {}).ok());
  ASSERT_TRUE(b->to_error().ok());
  auto rc = drain(cq_b);
  ASSERT_EQ(rc.size(), 2u);
  for (const Completion& c : rc) EXPECT_EQ(c.status().code(), Code::kUnavailable);
  ASSERT_TRUE(a->post_send({.wr_id = 3, .sges = {}, .signaled = false}).ok());  // to a broken peer: failed, signaled or not
  auto sc = drain(cq_a);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status().code(), Code::kPeerFailure);  // RETRY_EXC_ERR
  // A peer QP destroyed (its process ended) fails the sender the same way.
  QueuePair q = QueuePair::create_rc(pd, cq_a, cq_a, caps).value();
  auto p = std::make_optional(QueuePair::create_rc(pd, cq_b, cq_b, caps).value());
  const QpAddress qa = q.local_address(ctx, kOpt, 1).value(), pa = p->local_address(ctx, kOpt, 1).value();
  ASSERT_TRUE(q.connect(ctx, kOpt, qa, pa).ok());
  p.reset();
  ASSERT_TRUE(q.post_send({.wr_id = 4, .sges = {}}).ok());
  sc = drain(cq_a);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].wr_id, 4u);
  EXPECT_EQ(sc[0].status().code(), Code::kPeerFailure);
}

// Two senders into one SRQ: receives are taken oldest first whichever QP the SEND came through,
// a send waits while the SRQ is empty and goes when it is posted to, a QP whose peer connects
// late sends its queued work at the connection, the SRQ's depth is enforced, post_recv on an
// attached QP is refused, and a broken attached QP flushes none of the SRQ's receives.
TEST_F(Loopback, SharedReceiveQueueServesEveryAttachedQpInPostingOrder) {
  SharedReceiveQueue srq = SharedReceiveQueue::create(pd, 2).value();
  QueuePair r1 = QueuePair::create_rc(pd, cq_b, cq_b, caps, &srq).value();
  QueuePair r2 = QueuePair::create_rc(pd, cq_b, cq_b, caps, &srq).value();
  QueuePair s1 = QueuePair::create_rc(pd, cq_a, cq_a, caps).value();
  QueuePair s2 = QueuePair::create_rc(pd, cq_a, cq_a, caps).value();
  const QpAddress r1a = r1.local_address(ctx, kOpt, 1).value(), r2a = r2.local_address(ctx, kOpt, 1).value();
  const QpAddress s1a = s1.local_address(ctx, kOpt, 1).value(), s2a = s2.local_address(ctx, kOpt, 1).value();
  ASSERT_TRUE(s1.connect(ctx, kOpt, s1a, r1a).ok());
  ASSERT_TRUE(s2.connect(ctx, kOpt, s2a, r2a).ok());
  ASSERT_TRUE(r1.connect(ctx, kOpt, r1a, s1a).ok());
  std::vector<std::byte> src = pattern(64, 3), dst(3 * 64);
  MemoryRegion smr = reg(src, 0), dmr = reg(dst, kLocalWrite);
  const Sge one[] = {sge(dmr, 0, 64)}, two[] = {sge(dmr, 64, 64)}, three[] = {sge(dmr, 128, 64)};
  EXPECT_FALSE(r1.post_recv(1, one).ok());  // its receives are the SRQ's
  ASSERT_TRUE(srq.post_recv(10, one).ok());
  ASSERT_TRUE(srq.post_recv(11, two).ok());
  EXPECT_FALSE(srq.post_recv(12, three).ok());  // depth 2
  // s2's peer r2 is not connected yet: its SEND waits, s1's takes the oldest receive.
  const Sge out[] = {sge(smr, 0, 40)};
  ASSERT_TRUE(s2.post_send({.wr_id = 2, .sges = out}).ok());
  ASSERT_TRUE(s1.post_send({.wr_id = 1, .sges = out}).ok());
  auto rc = drain(cq_b);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].wr_id, 10u);
  EXPECT_EQ(rc[0].qp_num, r1.qp_num());
  ASSERT_TRUE(r2.connect(ctx, kOpt, r2a, s2a).ok());  // s2's queued SEND goes now, into the next receive
  rc = drain(cq_b);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].wr_id, 11u);
  EXPECT_EQ(rc[0].qp_num, r2.qp_num());
  EXPECT_EQ(rc[0].byte_len, 40u);
  EXPECT_EQ(0, std::memcmp(dst.data() + 64, src.data(), 40));
  // The SRQ is empty: a SEND waits, and goes when a receive is posted to the SRQ.
  ASSERT_TRUE(s1.post_send({.wr_id = 3, .sges = out}).ok());
  EXPECT_TRUE(drain(cq_b).empty());
  ASSERT_TRUE(srq.post_recv(12, three).ok());
  rc = drain(cq_b);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].wr_id, 12u);
  EXPECT_EQ(drain(cq_a).size(), 3u);
  // A broken QP flushes none of the SRQ's receives: the other QP still gets it.
  ASSERT_TRUE(srq.post_recv(13, one).ok());
  ASSERT_TRUE(r1.to_error().ok());
  EXPECT_TRUE(r1.in_error().value());
  EXPECT_FALSE(r2.in_error().value());
  EXPECT_TRUE(drain(cq_b).empty());
  ASSERT_TRUE(s2.post_send({.wr_id = 4, .sges = out}).ok());
  rc = drain(cq_b);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].wr_id, 13u);
  EXPECT_EQ(rc[0].qp_num, r2.qp_num());
}

TEST_F(Loopback, CompletionEventComesOnlyAfterRequestNotify) {
  pollfd pfd{events.fd(), POLLIN, 0};
  ASSERT_TRUE(b->post_recv(1, {}).ok());
  ASSERT_TRUE(a->post_send({.wr_id = 1, .sges = {}}).ok());
  EXPECT_EQ(0, ::poll(&pfd, 1, 0));  // not armed: no event
  EXPECT_EQ(drain(cq_b).size(), 1u);
  ASSERT_TRUE(cq_b.request_notify().ok());
  ASSERT_TRUE(b->post_recv(2, {}).ok());
  ASSERT_TRUE(a->post_send({.wr_id = 2, .sges = {}}).ok());
  ASSERT_EQ(1, ::poll(&pfd, 1, 0));
  EXPECT_TRUE(cq_b.consume_event(events).ok());
  EXPECT_EQ(0, ::poll(&pfd, 1, 0));  // one event per arming
  EXPECT_EQ(drain(cq_b).size(), 1u);
}

TEST_F(Loopback, QueueDepthsAndTheCqSizeAreEnforced) {
  for (std::uint64_t i = 0; i < caps.max_recv_wr; ++i) ASSERT_TRUE(b->post_recv(i, {}).ok());
  EXPECT_FALSE(b->post_recv(99, {}).ok());
  CompletionQueue tiny = CompletionQueue::create(ctx, 1, nullptr).value();
  QueuePair q = QueuePair::create_rc(pd, tiny, tiny, caps).value();
  QueuePair p = QueuePair::create_rc(pd, cq_b, cq_b, caps).value();
  const QpAddress qa = q.local_address(ctx, kOpt, 1).value(), pa = p.local_address(ctx, kOpt, 1).value();
  ASSERT_TRUE(q.connect(ctx, kOpt, qa, pa).ok());
  ASSERT_TRUE(p.connect(ctx, kOpt, pa, qa).ok());
  ASSERT_TRUE(p.post_recv(1, {}).ok());
  ASSERT_TRUE(p.post_recv(2, {}).ok());
  ASSERT_TRUE(q.post_send({.wr_id = 1, .sges = {}}).ok());
  ASSERT_TRUE(q.post_send({.wr_id = 2, .sges = {}}).ok());  // its completion finds the CQ full
  Completion c[4];
  EXPECT_FALSE(tiny.poll(c).ok());  // an overrun is reported, not lost silently
}

TEST_F(Loopback, AQpOfAnotherProcessIsRefusedWithAClearError) {
  QueuePair q = QueuePair::create_rc(pd, cq_a, cq_a, caps).value();
  const QpAddress qa = q.local_address(ctx, kOpt, 1).value();
  QpAddress other = qa;
  other.gid[0] ^= 1;  // another process's device
  Status st = q.connect(ctx, kOpt, qa, other);
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_NE(st.to_string().find("not in this process"), std::string::npos) << st.to_string();
}

}  // namespace
}  // namespace augur::nic
