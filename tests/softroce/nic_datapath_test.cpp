// Two processes connect RC QPs through augur's nic/ layer and move data by SEND/RECV, RDMA WRITE
// with immediate and RDMA READ; every byte and every completion status is checked. Runs where a
// verbs device exists (scripts/softroce): AUGUR_DEVICE names it.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "augur/nic/endpoint.h"

namespace augur::nic {
namespace {

constexpr int kTimeoutMs = 60'000;  // emulated RoCE under TCG is slow, but never this slow
constexpr std::size_t kGuard = 4096;
constexpr std::size_t kMaxMsg = (1u << 20) + 17;
constexpr std::size_t kBufLen = kMaxMsg + 2 * kGuard;
constexpr std::size_t kSizes[] = {1, 63, 1024, 4096, 65537, kMaxMsg};
constexpr std::size_t kWriteOffset = 64 + 3;  // misaligned target inside the peer's buffer

std::uint8_t pattern(std::size_t i, std::size_t seed) { return static_cast<std::uint8_t>((i * 131 + seed * 7 + 11) & 0xff); }

void fill(std::vector<std::uint8_t>& buf, std::size_t off, std::size_t n, std::size_t seed) {
  for (std::size_t i = 0; i < n; ++i) buf[off + i] = pattern(i, seed);
}

// Checks [off, off+n) holds the pattern and every other byte of buf is still `fill_byte`.
Status check(const std::vector<std::uint8_t>& buf, std::size_t off, std::size_t n, std::size_t seed,
             std::uint8_t fill_byte, const char* what) {
  for (std::size_t i = 0; i < buf.size(); ++i) {
    const bool inside = i >= off && i < off + n;
    const std::uint8_t want = inside ? pattern(i - off, seed) : fill_byte;
    if (buf[i] != want) {
      return {Code::kInternal, std::string(what) + ": byte " + std::to_string(i) + " is " + std::to_string(buf[i]) +
                                   ", expected " + std::to_string(want) + (inside ? "" : " (outside the message)")};
    }
  }
  return Status::Ok();
}

Status expect_completion(Endpoint& ep, WcOpcode op, std::uint64_t wr_id, std::size_t len, const char* what) {
  AUGUR_ASSIGN_OR_RETURN(Completion c, ep.wait_completion(kTimeoutMs));
  AUGUR_RETURN_IF_ERROR(c.status().context(what));
  if (c.opcode != op || c.wr_id != wr_id) {
    return {Code::kInternal, std::string(what) + ": unexpected completion opcode/wr_id"};
  }
  if ((op == WcOpcode::kRecv || op == WcOpcode::kRecvRdmaWithImm || op == WcOpcode::kRdmaRead) && c.byte_len != len) {
    return {Code::kInternal, std::string(what) + ": byte_len " + std::to_string(c.byte_len) + ", expected " +
                                 std::to_string(len)};
  }
  return Status::Ok();
}

// Single-byte synchronisation between the two processes over the out-of-band socket.
Status signal(int fd) { return send_all(fd, "x", 1); }
Status await(int fd) {
  char b;
  return recv_all(fd, &b, 1, kTimeoutMs);
}

struct Side {
  Endpoint ep;
  std::vector<std::uint8_t> buf;
  MemoryRegion mr;
  RemoteBuffer peer;
};

Result<Side> setup(int fd) {
  AUGUR_ASSIGN_OR_RETURN(EndpointOptions opt, endpoint_options_from_settings());
  AUGUR_ASSIGN_OR_RETURN(Endpoint ep, Endpoint::create(opt));
  std::vector<std::uint8_t> buf(kBufLen, 0);
  AUGUR_ASSIGN_OR_RETURN(MemoryRegion mr, ep.register_memory(buf.data(), buf.size(), kRemoteWrite | kRemoteRead));
  AUGUR_ASSIGN_OR_RETURN(QpAddress mine, ep.address());
  AUGUR_ASSIGN_OR_RETURN(QpAddress theirs, exchange(fd, mine, kTimeoutMs));
  AUGUR_RETURN_IF_ERROR(ep.connect(theirs));
  RemoteBuffer rb;
  rb.addr = reinterpret_cast<std::uintptr_t>(buf.data());
  rb.rkey = mr.rkey();
  rb.length = buf.size();
  AUGUR_ASSIGN_OR_RETURN(RemoteBuffer peer, exchange(fd, rb, kTimeoutMs));
  if (peer.length != kBufLen) return Status(Code::kProtocol, "peer buffer has the wrong length");
  return Side{std::move(ep), std::move(buf), std::move(mr), peer};
}

Sge sge_of(const Side& s, std::size_t off, std::size_t len) {
  return Sge{reinterpret_cast<std::uintptr_t>(s.buf.data()) + off, static_cast<std::uint32_t>(len), s.mr.lkey()};
}

// The passive side: receives SENDs and WRITE-with-immediate, serves READs.
Status run_server(int fd) {
  AUGUR_ASSIGN_OR_RETURN(Side s, setup(fd));
  for (std::size_t n : kSizes) {
    std::fill(s.buf.begin(), s.buf.end(), 0);
    Sge r = sge_of(s, kGuard, n);
    AUGUR_RETURN_IF_ERROR(s.ep.qp().post_recv(1, {&r, 1}));
    AUGUR_RETURN_IF_ERROR(signal(fd));
    AUGUR_RETURN_IF_ERROR(expect_completion(s.ep, WcOpcode::kRecv, 1, n, "SEND/RECV receive"));
    AUGUR_RETURN_IF_ERROR(check(s.buf, kGuard, n, n, 0, "SEND/RECV data"));

    std::fill(s.buf.begin(), s.buf.end(), 0xee);
    AUGUR_RETURN_IF_ERROR(s.ep.qp().post_recv(2, {}));  // consumes the immediate
    AUGUR_RETURN_IF_ERROR(signal(fd));
    AUGUR_ASSIGN_OR_RETURN(Completion c, s.ep.wait_completion(kTimeoutMs));
    AUGUR_RETURN_IF_ERROR(c.status().context("WRITE_WITH_IMM receive"));
    if (c.opcode != WcOpcode::kRecvRdmaWithImm || !c.has_imm || c.imm != (n ^ 0xa5a5a5u) || c.byte_len != n) {
      return Status(Code::kInternal, "WRITE_WITH_IMM: wrong opcode, immediate or length");
    }
    AUGUR_RETURN_IF_ERROR(check(s.buf, kWriteOffset, n, n + 1, 0xee, "WRITE_WITH_IMM data"));

    std::fill(s.buf.begin(), s.buf.end(), 0);
    fill(s.buf, kGuard + 5, n, n + 2);
    AUGUR_RETURN_IF_ERROR(signal(fd));
    AUGUR_RETURN_IF_ERROR(await(fd));  // the client has read
  }
  AUGUR_RETURN_IF_ERROR(signal(fd));
  return await(fd);  // the client has checked the bad-rkey error
}

Status run_client(int fd) {
  AUGUR_ASSIGN_OR_RETURN(Side s, setup(fd));
  for (std::size_t n : kSizes) {
    fill(s.buf, 0, n, n);
    AUGUR_RETURN_IF_ERROR(await(fd));
    Sge g = sge_of(s, 0, n);
    AUGUR_RETURN_IF_ERROR(s.ep.qp().post_send({.wr_id = 10, .op = SendOp::kSend, .sges = {&g, 1}}));
    AUGUR_RETURN_IF_ERROR(expect_completion(s.ep, WcOpcode::kSend, 10, n, "SEND"));

    fill(s.buf, 0, n, n + 1);
    AUGUR_RETURN_IF_ERROR(await(fd));
    AUGUR_RETURN_IF_ERROR(s.ep.qp().post_send({.wr_id = 11,
                                               .op = SendOp::kRdmaWriteWithImm,
                                               .sges = {&g, 1},
                                               .remote_addr = s.peer.addr + kWriteOffset,
                                               .rkey = s.peer.rkey,
                                               .imm = static_cast<std::uint32_t>(n ^ 0xa5a5a5u)}));
    AUGUR_RETURN_IF_ERROR(expect_completion(s.ep, WcOpcode::kRdmaWrite, 11, n, "RDMA WRITE_WITH_IMM"));

    std::fill(s.buf.begin(), s.buf.end(), 0x5a);
    AUGUR_RETURN_IF_ERROR(await(fd));
    Sge rd = sge_of(s, kGuard, n);
    AUGUR_RETURN_IF_ERROR(s.ep.qp().post_send({.wr_id = 12,
                                               .op = SendOp::kRdmaRead,
                                               .sges = {&rd, 1},
                                               .remote_addr = s.peer.addr + kGuard + 5,
                                               .rkey = s.peer.rkey}));
    AUGUR_RETURN_IF_ERROR(expect_completion(s.ep, WcOpcode::kRdmaRead, 12, n, "RDMA READ"));
    AUGUR_RETURN_IF_ERROR(check(s.buf, kGuard, n, n + 2, 0x5a, "RDMA READ data"));
    AUGUR_RETURN_IF_ERROR(signal(fd));
  }
  // A wrong rkey must come back as a completion error converted to a Status, not a hang.
  AUGUR_RETURN_IF_ERROR(await(fd));
  Sge g = sge_of(s, 0, 8);
  AUGUR_RETURN_IF_ERROR(s.ep.qp().post_send(
      {.wr_id = 13, .op = SendOp::kRdmaWrite, .sges = {&g, 1}, .remote_addr = s.peer.addr, .rkey = s.peer.rkey ^ 0x80u}));
  AUGUR_ASSIGN_OR_RETURN(Completion c, s.ep.wait_completion(kTimeoutMs));
  Status st = c.status();
  if (st.ok() || st.code() != Code::kInvalidArgument || st.message().find("remote access error") == std::string::npos) {
    return Status(Code::kInternal, "bad rkey: expected a remote access error, got " + st.to_string());
  }
  return signal(fd);
}

// The client runs in a child process: two processes, one device (AUGUR_DEVICE). Fork without
// exec is safe: the process has one thread (this binary links only augur_nic, which starts none,
// nor do gtest or libibverbs; checked with strace -f: no clone before the fork).
TEST(NicDatapath, TwoProcessesOneDevice) {
  int sv[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  std::fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    Status s = run_client(sv[1]);
    if (!s.ok()) std::fprintf(stderr, "client: %s\n", s.to_string().c_str());
    std::fflush(nullptr);
    _exit(s.ok() ? 0 : 1);
  }
  close(sv[1]);
  Status s = run_server(sv[0]);
  close(sv[0]);  // a failed server unblocks the client instead of leaving it waiting
  int wstatus = 0;
  ASSERT_EQ(pid, waitpid(pid, &wstatus, 0));
  EXPECT_TRUE(s.ok()) << "server: " << s.to_string();
  ASSERT_TRUE(WIFEXITED(wstatus)) << "client died by signal";
  EXPECT_EQ(0, WEXITSTATUS(wstatus)) << "client failed (its message is above)";
}

}  // namespace
}  // namespace augur::nic
