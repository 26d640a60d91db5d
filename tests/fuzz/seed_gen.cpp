// Writes the seed corpora of the fuzz harnesses (tests/fuzz/corpus/<harness>/) from the real
// encoders, so that every seed is a valid input and the fuzzer starts past the magic numbers.
// Usage: augur_fuzz_seed_gen DIR (scripts/fuzz --seeds). The input layouts are the harnesses'.
#include <zlib.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "augur/host/job_hosts.h"
#include "augur/host/launch.h"
#include "augur/host/protocol.h"
#include "augur/nic/wire.h"
#include "augur/predictor/trace.h"
#include "bootstrap_wire.h"
#include "wireup_wire.h"

namespace nic = augur::nic;
namespace proto = augur::host::proto;
namespace wire = augur::host::wire;
namespace launch = augur::host::launch;
namespace predictor = augur::predictor;
using Bytes = std::vector<unsigned char>;

namespace {

std::filesystem::path g_root;

void write_seed(const std::string& harness, const std::string& name, const Bytes& b) {
  const auto dir = g_root / harness;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

template <typename T>
void put_host(Bytes& out, T v) {  // the harnesses' own parameters are in host order
  const auto* p = reinterpret_cast<const unsigned char*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

template <typename B>
void append(Bytes& out, const B& bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  out.insert(out.end(), p, p + bytes.size());
}

constexpr std::uint32_t kSrc = 3, kSeq = 41, kEagerLimit = 8192;

// One slot as a peer writes it, after the receiver's expectation (src, seq, slot_bytes).
Bytes message(const proto::MsgHeader& h, const Bytes& body) {
  Bytes out;
  put_host(out, kSrc);
  put_host(out, kSeq);
  put_host(out, kEagerLimit + static_cast<std::uint32_t>(sizeof(proto::MsgHeader)));
  std::array<std::byte, sizeof(proto::MsgHeader)> hdr{};
  const std::size_t n = proto::encode_msg_header(h, hdr);
  append(out, std::span(hdr).first(n));
  append(out, body);
  return out;
}

// The same with two arm words riding between header and body (Channel::queue_arm).
Bytes message_with_arms(const proto::MsgHeader& h, const Bytes& body) {
  proto::CarriedArms arms;
  arms.count = 2;
  arms.slot[0] = 1;
  arms.slot[1] = 4;
  arms.word[0] = proto::encode_arm({proto::CreditState::kArmed, 5, 40});
  arms.word[1] = proto::encode_arm({proto::CreditState::kArmed, 0xfffffe, 41});
  std::array<std::byte, sizeof(proto::MsgHeader) + proto::arm_block_bytes(proto::kMaxCarriedArms)> hdr{};
  const std::size_t n = proto::encode_msg_header(h, std::span<std::byte, sizeof(proto::MsgHeader)>(hdr.data(), sizeof(proto::MsgHeader)));
  proto::encode_arms(hdr.data(), arms, hdr.data() + n);
  Bytes out;
  put_host(out, kSrc);
  put_host(out, kSeq);
  put_host(out, kEagerLimit + static_cast<std::uint32_t>(sizeof(proto::MsgHeader)));
  append(out, std::span(hdr).first(n + proto::arm_block_bytes(arms.count)));
  append(out, body);
  return out;
}

proto::MsgHeader header(proto::MsgType type, std::uint32_t context, std::int32_t tag, std::uint32_t length) {
  proto::MsgHeader h;
  h.type = type;
  h.credits = 5;
  h.src = kSrc;
  h.context = context;
  h.tag = tag;
  h.seq = kSeq;
  h.length = length;
  return h;
}

const std::vector<proto::RemoteRun> kRuns = {{0x7f0000001000, 4096, 0x1234}, {0x7f0000003000, 1000, 0x1234}, {0x7f0000010000, 8, 0x99}};

Bytes run_list_bytes(const std::vector<proto::RemoteRun>& runs, std::uint64_t length) {
  Bytes b(proto::run_list_bytes(runs.size()));
  proto::encode_run_list(length, runs, std::as_writable_bytes(std::span(b)));
  return b;
}

Bytes remote_buffer(std::uint64_t addr, std::uint64_t length) {
  nic::RemoteBuffer rb;
  rb.rkey = 0xabcd;
  rb.addr = addr;
  rb.length = length;
  std::array<std::byte, sizeof(nic::RemoteBuffer)> b{};
  nic::encode(rb, b);
  Bytes out;
  append(out, b);
  return out;
}

void wire_seeds() {
  const Bytes payload = {'h', 'e', 'l', 'l', 'o'};
  write_seed("msg_header", "eager_short", message(header(proto::MsgType::kEager, 1, 7, 5), payload));
  write_seed("msg_header", "eager_short_empty", message(header(proto::MsgType::kEager, 0, 0, 0), {}));
  write_seed("msg_header", "eager_full", message(header(proto::MsgType::kEager, 0x10001, 70000, 5), payload));
  write_seed("msg_header", "credit", message(header(proto::MsgType::kCredit, 0, 0, 0), {}));
  write_seed("msg_header", "eager_short_arms", message_with_arms(header(proto::MsgType::kEager, 1, 7, 5), payload));
  write_seed("msg_header", "fin_arms", message_with_arms(header(proto::MsgType::kFin, 0, 0, 40), {}));
  for (const char* h : {"msg_header", "rts"}) {
    write_seed(h, "rts", message(header(proto::MsgType::kRts, 2, 9, 65536), remote_buffer(0x7f0000100000, 65536)));
    write_seed(h, "rts_runs", message(header(proto::MsgType::kRtsRuns, 2, 9, 5104), run_list_bytes(kRuns, 5104)));
    write_seed(h, "fin", message(header(proto::MsgType::kFin, 0, 0, 40), {}));
    write_seed(h, "revoke", message(header(proto::MsgType::kRevoke, 3, 0, 17), {}));
    write_seed(h, "revoke_ack", message(header(proto::MsgType::kRevokeAck, 3, 0, 17), {}));
  }
  for (std::size_t n : {std::size_t{1}, std::size_t{3}}) {
    const std::vector<proto::RemoteRun> runs(kRuns.begin(), kRuns.begin() + static_cast<std::ptrdiff_t>(n));
    std::uint64_t length = 0;
    for (const auto& r : runs) length += r.length;
    Bytes b;
    put_host(b, length);
    put_host(b, proto::max_remote_runs(kEagerLimit));
    append(b, run_list_bytes(runs, length));
    write_seed("run_list", "runs" + std::to_string(n), b);
  }
  for (auto state : {proto::CreditState::kPending, proto::CreditState::kArmed, proto::CreditState::kLanding}) {
    proto::CreditEntry e;
    e.addr = 0x7f0000200000;
    e.rkey = 0x4321;
    e.capacity = 4096;
    e.context = 2;
    e.tag = 11;
    e.arm = proto::encode_arm({state, 0x012345, 100});
    std::array<std::byte, sizeof(proto::CreditEntry)> b{};
    proto::encode(e, b);
    Bytes out;
    append(out, b);
    put_host(out, proto::direct_imm(7, 4096));
    const char* name = state == proto::CreditState::kArmed ? "armed" : state == proto::CreditState::kLanding ? "landing" : "pending";
    write_seed("credit", name, out);
  }
  nic::QpAddress qp;
  qp.lid = 1;
  qp.qp_num = 0x11;
  qp.psn = 0x123456;
  qp.gid[10] = 0xff;
  qp.gid[11] = 0xff;
  qp.gid[15] = 1;
  qp.mtu = 3;
  qp.link_layer = 1;
  std::array<std::byte, sizeof(nic::QpAddress)> qb{};
  nic::encode(qp, qb);
  Bytes addr;
  append(addr, qb);
  write_seed("channel_address", "qp", addr);
  append(addr, remote_buffer(0x7f0000300000, 8));
  append(addr, remote_buffer(0x7f0000400000, 32 * 255));
  for (int i = 0; i < 4; ++i) addr.push_back(i == 0 ? std::uint8_t{8} : std::uint8_t{0});  // the first window
  write_seed("channel_address", "engine_address", addr);
  write_seed("channel_address", "buffer", remote_buffer(0x1000, 0));
}

void bootstrap_seeds() {
  Bytes entries;
  wire::append_entry(entries, {0, "ep", "0123456789"});
  wire::append_entry(entries, {1, "ep", std::string(84, 'x')});
  wire::append_entry(entries, {1, "k", ""});
  Bytes f;
  put_host(f, std::uint32_t{2});
  append(f, entries);
  write_seed("fence_done", "two_ranks", f);
  for (const auto& [name, share] : {std::pair<const char*, augur::host::HostShare>{"guest", {"augur-h1", 2}},
                                    {"cluster", {"node-7.cluster", 64}}}) {
    const std::string e = augur::host::encode_host_share(share);
    write_seed("host_share", name, Bytes(e.begin(), e.end()));
  }

  // Wire-up: an entry (selector 1), and REQ / RTU headers for rank 1 of 4, nonce 0x0102..08,
  // from rank 0 (selector 0, then self, size, nonce, from in host order as the harness reads).
  const std::string entry = augur::host::wireup::encode_listen({"10.0.2.15", 40123, 0x0123456789abcdefULL});
  Bytes eb = {1};
  eb.insert(eb.end(), entry.begin(), entry.end());
  write_seed("wireup", "entry", eb);
  for (auto type : {augur::host::wireup::Type::kReq, augur::host::wireup::Type::kRtu}) {
    Bytes w = {0};
    put_host(w, std::uint32_t{1});
    put_host(w, std::uint32_t{4});
    put_host(w, std::uint64_t{0x0102030405060708ULL});
    w.push_back(0);
    const std::vector<std::byte> a(type == augur::host::wireup::Type::kRtu ? 0 : 88, std::byte{7});
    append(w, augur::host::wireup::encode(type, 0, 1, 0x0102030405060708ULL, a));
    write_seed("wireup", type == augur::host::wireup::Type::kRtu ? "rtu" : "req", w);
  }

  Bytes hello(4), put;
  wire::put_u32(hello.data(), 2);
  put = {0, 2, 'e', 'p', 'v', 'a', 'l'};
  for (int chunk : {0, 1, 7}) {
    Bytes stream = {static_cast<unsigned char>(chunk)};
    append(stream, wire::frame(wire::MsgType::kHello, 1, hello));
    append(stream, wire::frame(wire::MsgType::kPut, 1, put));
    append(stream, wire::frame(wire::MsgType::kFence, 1, {}));
    append(stream, wire::frame(wire::MsgType::kFenceDone, 0, entries));
    const std::string why = "rank 1 died";
    append(stream, wire::frame(wire::MsgType::kAbort, 1, Bytes(why.begin(), why.end())));
    append(stream, wire::frame(wire::MsgType::kBye, 1, {}));
    write_seed("bootstrap_frame", "session_chunk" + std::to_string(chunk), stream);
  }
}

void launch_seeds() {
  const launch::Request req{"secret", "/tmp", {"/bin/sh", "-c", "echo hi"}, {"AUGUR_RANK=1", "EMPTY="}};
  const Bytes payload = launch::encode(req);
  write_seed("launch_request", "request", payload);
  write_seed("launch_request", "minimal", launch::encode({"", "", {"true"}, {}}));
  unsigned char sig[4], status[4];
  wire::put_u32(sig, 15);
  wire::put_u32(status, 0x100);
  const std::string out = "hi\n";
  for (int chunk : {0, 5}) {
    Bytes stream = {static_cast<unsigned char>(chunk)};
    append(stream, launch::encode_frame(launch::FrameType::kLaunch, payload));
    append(stream, launch::encode_frame(launch::FrameType::kSignal, sig));
    append(stream, launch::encode_frame(launch::FrameType::kStdout, Bytes(out.begin(), out.end())));
    append(stream, launch::encode_frame(launch::FrameType::kStderr, {}));
    append(stream, launch::encode_frame(launch::FrameType::kExit, status));
    write_seed("launch_frame", "session_chunk" + std::to_string(chunk), stream);
  }
  const std::string why = "AUGUR_HOSTD_TOKEN does not match";
  Bytes refused = {0};
  append(refused, launch::encode_frame(launch::FrameType::kError, Bytes(why.begin(), why.end())));
  write_seed("launch_frame", "refused", refused);
}

void trace_seeds() {
  const predictor::RecvCall calls[] = {
      {predictor::CallKind::kIrecv, 1, 1, 64, 0, 0x56528ccd0c50, 0, 0x56525c95c2e7},
      {predictor::CallKind::kRecv, -1, -1, 16, 1, 0x7ffdbc551a50, 2, 0x401300},
      {predictor::CallKind::kRecv, 0, 2147483647, 18446744073709551615ull, 4294967295u, 0xffffffffffffffff, 7, 0x0},
  };
  std::string file = predictor::format_header(2, 4);
  file.insert(file.size() - 1, " pid=10672 mpi=Open");
  file += "# a comment\n";
  int i = 0;
  for (const auto& c : calls) {
    const std::string line = predictor::format_call_line(c);
    write_seed("trace_line", "call" + std::to_string(i++), Bytes(line.begin(), line.end()));
    file += line + "\n";
  }
  write_seed("trace_file", "plain", Bytes(file.begin(), file.end()));
  // The same file gzip-compressed, as the recorder may leave it.
  const auto gz = g_root / "trace_file" / "gzip";
  gzFile g = gzopen(gz.c_str(), "wb");
  gzwrite(g, file.data(), static_cast<unsigned>(file.size()));
  gzclose(g);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  wire_seeds();
  bootstrap_seeds();
  launch_seeds();
  trace_seeds();
  return 0;
}
