// Native tests of the transport wire formats and status conversion: no RDMA device needed.
#include "augur/nic/wire.h"

#include <array>
#include <cstring>
#include <ostream>
#include <vector>

#include <gtest/gtest.h>

#include "augur/nic/verbs.h"

namespace augur::nic {
namespace {

QpAddress sample() {
  QpAddress a;
  a.lid = 0x1234;
  a.qp_num = 0x00abcdef;
  a.psn = 0x00123456;
  for (std::size_t i = 0; i < sizeof a.gid; ++i) a.gid[i] = static_cast<std::uint8_t>(i * 7 + 1);
  a.mtu = 3;
  a.link_layer = 1;
  return a;
}

std::array<std::byte, sizeof(QpAddress)> bytes_of(const QpAddress& a) {
  std::array<std::byte, sizeof(QpAddress)> buf{};
  encode(a, buf);
  return buf;
}

TEST(QpAddressWire, RoundTripsEveryField) {
  QpAddress a = sample();
  Result<QpAddress> b = parse_qp_address(bytes_of(a));
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->lid, a.lid);
  EXPECT_EQ(b->qp_num, a.qp_num);
  EXPECT_EQ(b->psn, a.psn);
  EXPECT_EQ(0, std::memcmp(b->gid, a.gid, sizeof a.gid));
  EXPECT_EQ(b->mtu, a.mtu);
  EXPECT_EQ(b->link_layer, a.link_layer);
}

TEST(QpAddressWire, IsBigEndianOnTheWire) {
  auto buf = bytes_of(sample());
  EXPECT_EQ(buf[0], std::byte{0x41});  // 'A' of "AUQP"
  EXPECT_EQ(buf[8], std::byte{0x00});  // qp_num 0x00abcdef, most significant byte first
  EXPECT_EQ(buf[9], std::byte{0xab});
  EXPECT_EQ(buf[11], std::byte{0xef});
}

struct Corruption {
  const char* name;
  std::size_t offset;
  std::byte value;
  const char* expect_in_message;
};

void PrintTo(const Corruption& c, std::ostream* os) { *os << c.name; }

class QpAddressCorrupt : public ::testing::TestWithParam<Corruption> {};

TEST_P(QpAddressCorrupt, IsRejectedAsProtocolError) {
  auto buf = bytes_of(sample());
  buf[GetParam().offset] = GetParam().value;
  Result<QpAddress> r = parse_qp_address(buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kProtocol);
  EXPECT_NE(r.status().message().find(GetParam().expect_in_message), std::string::npos) << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, QpAddressCorrupt,
    ::testing::Values(Corruption{"magic", 0, std::byte{0}, "magic"}, Corruption{"version", 5, std::byte{9}, "version"},
                      Corruption{"qpn_over_24_bits", 8, std::byte{1}, "QP number"},
                      Corruption{"psn_over_24_bits", 12, std::byte{0x80}, "PSN"},
                      Corruption{"mtu_zero", 32, std::byte{0}, "MTU"}, Corruption{"mtu_big", 32, std::byte{6}, "MTU"},
                      Corruption{"link_layer", 33, std::byte{7}, "link layer"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(QpAddressWire, RejectsWrongSize) {
  auto buf = bytes_of(sample());
  Result<QpAddress> r = parse_qp_address(std::span<const std::byte>(buf).first(20));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kProtocol);
}

TEST(RemoteBufferWire, RoundTripAndRejectsWrap) {
  RemoteBuffer b;
  b.rkey = 0xdeadbeef;
  b.addr = 0x7f0000001000;
  b.length = 1 << 20;
  std::array<std::byte, sizeof(RemoteBuffer)> buf{};
  encode(b, buf);
  Result<RemoteBuffer> r = parse_remote_buffer(buf);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rkey, b.rkey);
  EXPECT_EQ(r->addr, b.addr);
  EXPECT_EQ(r->length, b.length);

  b.addr = ~0ull - 10;
  encode(b, buf);
  EXPECT_EQ(parse_remote_buffer(buf).status().code(), Code::kProtocol);
}

TEST(WcStatus, ConvertsInOnePlaceWithNames) {
  EXPECT_TRUE(wc_status_to_status(0).ok());
  // Values are ibv_wc_status's, which are part of the verbs ABI.
  Status retry = wc_status_to_status(12);  // IBV_WC_RETRY_EXC_ERR
  EXPECT_EQ(retry.code(), Code::kPeerFailure);
  EXPECT_NE(retry.message().find("transport retry counter exceeded"), std::string::npos) << retry.message();
  EXPECT_EQ(wc_status_to_status(1).code(), Code::kTruncated);        // IBV_WC_LOC_LEN_ERR
  EXPECT_EQ(wc_status_to_status(10).code(), Code::kInvalidArgument); // IBV_WC_REM_ACCESS_ERR
  EXPECT_EQ(wc_status_to_status(5).code(), Code::kUnavailable);      // IBV_WC_WR_FLUSH_ERR
}

TEST(Device, OpenReportsMissingDeviceByName) {
  Result<Context> ctx = Context::open("augur-no-such-device");
  ASSERT_FALSE(ctx.ok());
  EXPECT_EQ(ctx.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace augur::nic
