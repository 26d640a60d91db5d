// augur-nic-pingpong: two processes on one RDMA device ping-pong through augur's nic/ layer with
// SEND/RECV, RDMA WRITE with immediate and RDMA READ, and print perftest-style latency tables
// (half round trip for ping-pong, full round trip for READ, in microseconds). Every received
// message is checked byte for byte. Usage: augur-nic-pingpong [--iters N] [--max-size BYTES]
// [--device NAME]; without --device the AUGUR_* settings choose (AUGUR_DEVICE, AUGUR_PORT, ...).
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "augur/nic/endpoint.h"

namespace {

using augur::Code;
using augur::Result;
using augur::Status;
using namespace augur::nic;

constexpr int kTimeoutMs = 60'000;

struct Options {
  int iters = 1000;
  std::size_t max_size = 65536;
  std::string device;
};

enum class Test { kSend, kWriteImm, kRead };
const char* name(Test t) {
  switch (t) {
    case Test::kSend: return "send/recv";
    case Test::kWriteImm: return "write_imm";
    case Test::kRead: return "read";
  }
  return "?";
}

struct Link {
  Endpoint ep;
  std::vector<std::uint8_t> buf;  // [0, max): outgoing; [max, 2*max): incoming
  MemoryRegion mr;
  RemoteBuffer peer;
  std::size_t max;
};

Result<Link> make_link(int fd, const Options& opt) {
  AUGUR_ASSIGN_OR_RETURN(EndpointOptions eo, endpoint_options_from_settings());
  if (!opt.device.empty()) eo.device = opt.device;
  eo.caps.max_send_wr = 64;
  eo.caps.max_recv_wr = 64;
  AUGUR_ASSIGN_OR_RETURN(Endpoint ep, Endpoint::create(eo));
  std::vector<std::uint8_t> buf(2 * opt.max_size, 0);
  AUGUR_ASSIGN_OR_RETURN(MemoryRegion mr, ep.register_memory(buf.data(), buf.size(), kRemoteWrite | kRemoteRead));
  AUGUR_ASSIGN_OR_RETURN(QpAddress mine, ep.address());
  AUGUR_ASSIGN_OR_RETURN(QpAddress theirs, exchange(fd, mine, kTimeoutMs));
  AUGUR_RETURN_IF_ERROR(ep.connect(theirs));
  RemoteBuffer rb;
  rb.addr = reinterpret_cast<std::uintptr_t>(buf.data());
  rb.rkey = mr.rkey();
  rb.length = buf.size();
  AUGUR_ASSIGN_OR_RETURN(RemoteBuffer peer, exchange(fd, rb, kTimeoutMs));
  return Link{std::move(ep), std::move(buf), std::move(mr), peer, opt.max_size};
}

std::uint8_t pattern(std::size_t i, std::size_t seed) { return static_cast<std::uint8_t>((i * 29 + seed) & 0xff); }

Sge out_sge(const Link& l, std::size_t n) {
  return Sge{reinterpret_cast<std::uintptr_t>(l.buf.data()), static_cast<std::uint32_t>(n), l.mr.lkey()};
}
Sge in_sge(const Link& l, std::size_t n) {
  return Sge{reinterpret_cast<std::uintptr_t>(l.buf.data()) + l.max, static_cast<std::uint32_t>(n), l.mr.lkey()};
}

Status post_inbound(Link& l, Test t, std::size_t n) {
  Sge s = in_sge(l, n);
  return l.ep.qp().post_recv(1, t == Test::kSend ? std::span<const Sge>(&s, 1) : std::span<const Sge>());
}

Status send_one(Link& l, Test t, std::size_t n) {
  Sge s = out_sge(l, n);
  SendRequest wr{.wr_id = 2, .sges = {&s, 1}};
  if (t == Test::kSend) {
    wr.op = SendOp::kSend;
  } else {
    wr.op = SendOp::kRdmaWriteWithImm;
    wr.remote_addr = l.peer.addr + l.max;  // the peer's incoming half
    wr.rkey = l.peer.rkey;
    wr.imm = static_cast<std::uint32_t>(n);
  }
  return l.ep.qp().post_send(wr);
}

// Waits for one receive and one send completion (in either order).
Status wait_both(Link& l, std::size_t n) {
  bool got_recv = false;
  bool got_send = false;
  while (!got_recv || !got_send) {
    AUGUR_ASSIGN_OR_RETURN(Completion c, l.ep.wait_completion(kTimeoutMs));
    AUGUR_RETURN_IF_ERROR(c.status());
    if (c.opcode == WcOpcode::kRecv || c.opcode == WcOpcode::kRecvRdmaWithImm) {
      if (c.byte_len != n) return Status(Code::kInternal, "received " + std::to_string(c.byte_len) + " bytes, sent " + std::to_string(n));
      got_recv = true;
    } else {
      got_send = true;
    }
  }
  return Status::Ok();
}

Status verify_inbound(const Link& l, std::size_t n, std::size_t seed) {
  for (std::size_t i = 0; i < n; ++i) {
    if (l.buf[l.max + i] != pattern(i, seed)) return Status(Code::kInternal, "data mismatch at byte " + std::to_string(i));
  }
  return Status::Ok();
}

struct Stats {
  double t_min, t_max, t_typical, t_avg, t_stdev, p99, p999;
};

Stats summarize(std::vector<double> us) {
  Stats s{};
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  const double n = static_cast<double>(us.size());
  s.t_min = us.front();
  s.t_max = us.back();
  s.t_typical = us[us.size() / 2];
  double sum = 0, sq = 0;
  for (double v : us) sum += v;
  s.t_avg = sum / n;
  for (double v : us) sq += (v - s.t_avg) * (v - s.t_avg);
  s.t_stdev = std::sqrt(sq / n);
  s.p99 = us[static_cast<std::size_t>(0.99 * (n - 1))];
  s.p999 = us[static_cast<std::size_t>(0.999 * (n - 1))];
  return s;
}

// Ping-pong: the initiator sends, the responder answers; half the round trip is the latency.
// READ is one-sided: only the initiator works; the responder waits on the socket.
Status run(int fd, bool initiator, const Options& opt) {
  AUGUR_ASSIGN_OR_RETURN(Link l, make_link(fd, opt));
  if (initiator) {
    std::printf("%-10s %8s %11s %8s %8s %10s %8s %8s %8s %8s\n", "test", "#bytes", "#iterations", "t_min",
                "t_max", "t_typical", "t_avg", "t_stdev", "99%", "99.9%");
  }
  for (Test t : {Test::kSend, Test::kWriteImm, Test::kRead}) {
    for (std::size_t n = 2; n <= opt.max_size; n *= 4) {
      std::vector<double> samples;
      samples.reserve(static_cast<std::size_t>(opt.iters));
      for (std::size_t i = 0; i < n; ++i) l.buf[i] = pattern(i, n);
      char sync = 0;
      AUGUR_RETURN_IF_ERROR(send_all(fd, &sync, 1));  // both sides at the same size
      AUGUR_RETURN_IF_ERROR(recv_all(fd, &sync, 1, kTimeoutMs));
      if (t == Test::kRead) {
        if (initiator) {
          for (int it = 0; it < opt.iters; ++it) {
            Sge s = in_sge(l, n);
            auto t0 = std::chrono::steady_clock::now();
            AUGUR_RETURN_IF_ERROR(l.ep.qp().post_send(
                {.wr_id = 3, .op = SendOp::kRdmaRead, .sges = {&s, 1}, .remote_addr = l.peer.addr, .rkey = l.peer.rkey}));
            AUGUR_ASSIGN_OR_RETURN(Completion c, l.ep.wait_completion(kTimeoutMs));
            AUGUR_RETURN_IF_ERROR(c.status());
            samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
          }
          AUGUR_RETURN_IF_ERROR(verify_inbound(l, n, n));
        }
        AUGUR_RETURN_IF_ERROR(send_all(fd, &sync, 1));
        AUGUR_RETURN_IF_ERROR(recv_all(fd, &sync, 1, kTimeoutMs));
      } else {
        AUGUR_RETURN_IF_ERROR(post_inbound(l, t, n));
        AUGUR_RETURN_IF_ERROR(send_all(fd, &sync, 1));  // receive posted on both sides
        AUGUR_RETURN_IF_ERROR(recv_all(fd, &sync, 1, kTimeoutMs));
        for (int it = 0; it < opt.iters; ++it) {
          const bool last = it + 1 == opt.iters;
          auto t0 = std::chrono::steady_clock::now();
          if (initiator) {
            AUGUR_RETURN_IF_ERROR(send_one(l, t, n));
            AUGUR_RETURN_IF_ERROR(wait_both(l, n));
            // Re-arm before the next send: the reply to it cannot arrive earlier.
            if (!last) AUGUR_RETURN_IF_ERROR(post_inbound(l, t, n));
          } else {
            AUGUR_ASSIGN_OR_RETURN(Completion c, l.ep.wait_completion(kTimeoutMs));
            AUGUR_RETURN_IF_ERROR(c.status());
            // Re-arm before replying, so the next ping never meets an empty receive queue.
            if (!last) AUGUR_RETURN_IF_ERROR(post_inbound(l, t, n));
            AUGUR_RETURN_IF_ERROR(send_one(l, t, n));
            AUGUR_ASSIGN_OR_RETURN(Completion d, l.ep.wait_completion(kTimeoutMs));
            AUGUR_RETURN_IF_ERROR(d.status());
          }
          samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 2);
        }
        AUGUR_RETURN_IF_ERROR(verify_inbound(l, n, n));
      }
      if (initiator) {
        Stats s = summarize(samples);
        std::printf("%-10s %8zu %11d %8.2f %8.2f %10.2f %8.2f %8.2f %8.2f %8.2f\n", name(t), n, opt.iters, s.t_min,
                    s.t_max, s.t_typical, s.t_avg, s.t_stdev, s.p99, s.p999);
        std::fflush(stdout);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--iters" && i + 1 < argc) {
      opt.iters = std::atoi(argv[++i]);
    } else if (a == "--max-size" && i + 1 < argc) {
      opt.max_size = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--device" && i + 1 < argc) {
      opt.device = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--iters N] [--max-size BYTES] [--device NAME]\n", argv[0]);
      return 2;
    }
  }
  if (opt.iters < 1 || opt.max_size < 2 || opt.max_size > (1u << 30)) {
    std::fprintf(stderr, "augur-nic-pingpong: --iters must be >= 1 and --max-size in [2, 1 GiB]\n");
    return 2;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    std::perror("socketpair");
    return 1;
  }
  // Fork without exec is safe: the process has one thread (augur_nic starts none, nor does
  // libibverbs; checked with strace -f: no clone before the fork).
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return 1;
  }
  const bool initiator = pid != 0;
  close(sv[initiator ? 1 : 0]);
  Status s = run(sv[initiator ? 0 : 1], initiator, opt);
  close(sv[initiator ? 0 : 1]);
  if (!s.ok()) std::fprintf(stderr, "augur-nic-pingpong (%s): %s\n", initiator ? "initiator" : "responder", s.to_string().c_str());
  if (!initiator) _exit(s.ok() ? 0 : 1);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  const bool peer_ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
  return s.ok() && peer_ok ? 0 : 1;
}
