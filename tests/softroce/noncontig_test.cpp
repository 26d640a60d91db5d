// Non-contiguous point-to-point through the Engine on the device (isendv/irecvv): strided and
// misaligned layouts on either side or both, eager and rendezvous (more runs than one READ's
// scatter list, more READs than may be in flight), truncation into a shorter layout, a 0-byte
// message, the path checked by the counters, and a malformed RTS run list from a faulty peer.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
#include "ranks.h"

#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_options() { return "die_after_fork=0"; }
#endif

namespace augur::host {
namespace {

using namespace std::chrono_literals;
using testing::run_ranks;

constexpr int kWaitMs = 120'000;
constexpr std::uint32_t kEager = 8192;
constexpr std::byte kGuard{0xcc};

// `runs` blocks of `blk` bytes, `gap` bytes apart, starting `misalign` bytes into the memory;
// one run is a contiguous buffer. Everything outside the runs is guard bytes.
struct Strided {
  std::vector<std::byte> mem;
  std::vector<relations::ByteRun> runs;  // offsets into mem
  std::size_t bytes = 0;
  Strided(std::size_t n_runs, std::size_t blk, std::size_t gap, std::size_t misalign)
      : mem(misalign + n_runs * (blk + gap) + 64, kGuard), bytes(n_runs * blk) {
    for (std::size_t i = 0; i < n_runs; ++i) {
      runs.push_back({static_cast<std::int64_t>(misalign + i * (blk + gap)), static_cast<std::int64_t>(blk)});
    }
  }
  [[nodiscard]] bool contiguous() const { return runs.size() == 1; }
  [[nodiscard]] relations::Layout layout() { return {mem.data(), runs}; }
  std::byte* at(const relations::ByteRun& r) { return mem.data() + r.offset; }
  [[nodiscard]] std::size_t length(std::size_t i) const { return static_cast<std::size_t>(runs[i].length); }
};

std::byte byte_of(int from, std::size_t c, std::size_t k) {
  return static_cast<std::byte>((static_cast<std::size_t>(from) * 71 + c * 17 + k * 13 + k / 251) & 0xff);
}

void fill(Strided& s, int from, std::size_t c) {
  std::size_t k = 0;
  for (const relations::ByteRun& r : s.runs) {
    for (std::int64_t i = 0; i < r.length; ++i) s.at(r)[i] = byte_of(from, c, k++);
  }
}

// The first `n` packed bytes are the sender's, the rest of the layout and every gap untouched.
Status check(const Strided& s, int from, std::size_t c, std::size_t n, const std::string& what) {
  std::vector<bool> inside(s.mem.size());
  std::size_t k = 0;
  for (const relations::ByteRun& r : s.runs) {
    for (std::int64_t i = 0; i < r.length; ++i, ++k) {
      const auto at = static_cast<std::size_t>(r.offset + i);
      inside[at] = true;
      const std::byte want = k < n ? byte_of(from, c, k) : kGuard;
      CHECK(s.mem[at] == want, what + ": packed byte " + std::to_string(k) + " wrong");
    }
  }
  for (std::size_t i = 0; i < s.mem.size(); ++i) {
    CHECK(inside[i] || s.mem[i] == kGuard, what + ": byte " + std::to_string(i) + " outside the layout written");
  }
  return Status::Ok();
}

Result<RequestPtr> send(Engine& e, Strided& s, int to, std::int32_t tag, bool sync = false) {
  if (s.contiguous()) return e.isend(s.at(s.runs[0]), s.length(0), to, tag, 3, sync);
  return e.isendv(s.layout(), to, tag, 3, sync);
}
Result<RequestPtr> recv_ctx(Engine& e, Strided& s, int from, std::int32_t tag) {
  if (s.contiguous()) return e.irecv(s.at(s.runs[0]), s.length(0), from, tag, 3);
  return e.irecvv(s.layout(), from, tag, 3);
}

struct Case {
  std::size_t send_runs, send_blk, recv_runs, recv_blk;
  bool sync = false;
  [[nodiscard]] std::size_t bytes() const { return send_runs * send_blk; }
  [[nodiscard]] bool rendezvous() const { return sync || bytes() > kEager; }
};

// Equal sizes on both sides; runs == 1 is a contiguous buffer.
const std::vector<Case> kCases = {
    // eager
    {1, 4000, 40, 100},
    {40, 100, 1, 4000},
    {40, 100, 80, 50},
    {50, 37, 37, 50},        // odd, misaligned runs
    {10, 100, 1, 1000, true},  // synchronous: by run list at any size
    // rendezvous: 48 local runs need two READs per remote run of one contiguous sender
    {1, 144'048, 48, 3001},
    {48, 3001, 1, 144'048},
    {48, 3000, 200, 720},     // 48 remote runs, 200 local: more READs than may be in flight
    {200, 720, 48, 3000},
    {1, 200'000, 200, 1000},  // one remote run into 200 slices: 7 READs of at most 32
    {50, 4000, 200, 1000},
    {40, 20'000, 40, 20'000},
};

Status exchange(Engine& e, int peer) {
  const int me = e.rank();
  std::vector<Strided> out, in;
  std::vector<RequestPtr> sends, recvs;
  out.reserve(kCases.size());
  in.reserve(kCases.size());
  for (std::size_t c = 0; c < kCases.size(); ++c) {
    const Case& k = kCases[c];
    in.emplace_back(k.recv_runs, k.recv_blk, 13, 5);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, recv_ctx(e, in.back(), peer, static_cast<std::int32_t>(c)));
    recvs.push_back(r);
  }
  for (std::size_t c = 0; c < kCases.size(); ++c) {
    const Case& k = kCases[c];
    out.emplace_back(k.send_runs, k.send_blk, 29, 3);
    fill(out.back(), me, c);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, send(e, out.back(), peer, static_cast<std::int32_t>(c), k.sync));
    sends.push_back(s);
  }
  for (auto& s : sends) AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs).context("send"));
  for (std::size_t c = 0; c < kCases.size(); ++c) {
    const Case& k = kCases[c];
    const std::string what = "case " + std::to_string(c) + " (" + std::to_string(k.send_runs) + "x" +
                             std::to_string(k.send_blk) + " into " + std::to_string(k.recv_runs) + "x" +
                             std::to_string(k.recv_blk) + ")";
    AUGUR_RETURN_IF_ERROR(e.wait(recvs[c], kWaitMs).context(what));
    const Request& r = *recvs[c];
    CHECK(r.source == peer && r.length == k.bytes(), what + ": wrong envelope");
    const bool direct_ok = e.config().steering != Steering::kOff && k.recv_runs == 1 && !k.rendezvous() &&
                           k.bytes() >= e.config().direct_min;
    CHECK(r.path == (k.rendezvous() ? Path::kRendezvous : Path::kBounce) || (direct_ok && r.path == Path::kDirect),
          what + ": wrong path");
    AUGUR_RETURN_IF_ERROR(check(in[c], peer, c, k.bytes(), what));
  }
  return Status::Ok();
}

Status data_main(std::uint16_t port, int rank, Steering steering, EngineConfig::Assist assist) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 16, .eager_limit = kEager, .steering = steering,
                                                        .assist = assist, .sge_max_runs = 256}));
  const EngineCounters before = e->counters();
  AUGUR_RETURN_IF_ERROR(exchange(*e, 1 - rank));
  const EngineCounters c = e->counters();
  std::uint64_t sge_sends = 0, sge_recvs = 0, copied = 0, rndv = 0, bounce = 0;
  for (const Case& k : kCases) {
    sge_sends += k.send_runs > 1 ? 1 : 0;
    sge_recvs += k.recv_runs > 1 ? 1 : 0;
    (k.rendezvous() ? rndv : bounce) += 1;
    copied += k.rendezvous() ? 0 : k.bytes();  // READ scatter copies nothing
  }
  const std::string got = e->stats_line();
  CHECK(c.sge_sends - before.sge_sends == sge_sends && c.sge_recvs - before.sge_recvs == sge_recvs,
        "sge counters: " + got + " (want sge_sends=" + std::to_string(sge_sends) + " sge_recvs=" + std::to_string(sge_recvs) + ")");
  CHECK(c.rndv_msgs - before.rndv_msgs == rndv, "rendezvous count: " + got);
  if (steering == Steering::kOff) {
    CHECK(c.bounce_msgs - before.bounce_msgs == bounce, "bounce count: " + got);
    CHECK(c.bytes_copied - before.bytes_copied == copied,
          "bytes copied " + std::to_string(c.bytes_copied - before.bytes_copied) + ", want " + std::to_string(copied));
  }
  CHECK(got.find(" sge_sends=") != std::string::npos && got.find(" sge_recvs=") > got.find(" credit_pauses="),
        "stats line: " + got);
  std::printf("%s\n", got.c_str());
  return Status::Ok();
}

TEST(Noncontig, LayoutsOnEitherSideEagerAndRendezvous) {
  run_ranks(2, [](std::uint16_t port, int rank) { return data_main(port, rank, Steering::kOff, EngineConfig::Assist::kOff); });
}
TEST(Noncontig, LayoutsWithPredictedSteering) {
  run_ranks(2, [](std::uint16_t port, int rank) { return data_main(port, rank, Steering::kPredicted, EngineConfig::Assist::kOff); });
}
TEST(Noncontig, LayoutsWithAssistThread) {
  run_ranks(2, [](std::uint16_t port, int rank) { return data_main(port, rank, Steering::kOff, EngineConfig::Assist::kOn); });
}

// A longer message into a shorter layout: kTruncated with the sent length, and nothing written
// past the layout's total. Also a 0-byte layout message and the run limit.
Status truncation_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 16, .eager_limit = kEager, .steering = Steering::kOff,
                                                        .sge_max_runs = 64}));
  const int peer = 1 - rank;
  const std::vector<Case> cases = {{30, 200, 20, 200}, {60, 5000, 40, 5000}, {1, 6000, 20, 200}, {60, 5000, 1, 200'000}};
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string what = "truncation case " + std::to_string(c);
    const auto tag = static_cast<std::int32_t>(100 + c);
    if (rank == 0) {
      Strided s(k.send_runs, k.send_blk, 7, 1);
      fill(s, 0, c);
      AUGUR_ASSIGN_OR_RETURN(RequestPtr r, send(*e, s, peer, tag));
      AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs).context(what));
    } else {
      Strided s(k.recv_runs, k.recv_blk, 11, 3);
      AUGUR_ASSIGN_OR_RETURN(RequestPtr r, recv_ctx(*e, s, peer, tag));
      const Status st = e->wait(r, kWaitMs);
      CHECK(st.code() == Code::kTruncated, what + ": " + st.to_string());
      CHECK(r->length == k.bytes(), what + ": length " + std::to_string(r->length));
      AUGUR_RETURN_IF_ERROR(check(s, 0, c, s.bytes, what));
    }
  }
  // 0 bytes: no runs, or only empty ones.
  std::byte b{};
  const std::vector<relations::ByteRun> empty = {{0, 0}, {5, 0}};
  const relations::Layout empty_runs{&b, empty};
  if (rank == 0) {
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->isendv({}, peer, 7, 3));
    AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r2, e->isendv(empty_runs, peer, 8, 3, true));
    AUGUR_RETURN_IF_ERROR(e->wait(r2, kWaitMs).context("0-byte synchronous send"));
  } else {
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecvv(empty_runs, peer, 7, 3));
    AUGUR_RETURN_IF_ERROR(e->wait(r, kWaitMs));
    CHECK(r->length == 0 && r->source == peer, "0-byte message");
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r2, e->irecvv({}, peer, 8, 3));
    AUGUR_RETURN_IF_ERROR(e->wait(r2, kWaitMs));
    CHECK(r2->length == 0, "0-byte synchronous message");
  }
  // Over the limit: the caller must pack.
  Strided many(e->max_layout_runs() + 1, 4, 4, 0);
  Result<RequestPtr> over = e->isendv(many.layout(), peer, 9, 3);
  CHECK(!over.ok() && over.status().code() == Code::kInvalidArgument, "a layout over the limit was accepted");
  CHECK(e->max_layout_runs() == 64, "limit " + std::to_string(e->max_layout_runs()));
  const EngineCounters c = e->counters();
  CHECK(c.truncated == (rank == 1 ? cases.size() : 0), "truncated counter");
  // The receiver keeps making progress (its FIN must leave) until the sender is done.
  std::byte done{};
  AUGUR_ASSIGN_OR_RETURN(RequestPtr last, rank == 0 ? e->isend(&done, 1, peer, 10, 3) : e->irecv(&done, 1, peer, 10, 3));
  AUGUR_RETURN_IF_ERROR(e->wait(last, kWaitMs).context("last message"));
  return Status::Ok();
}

TEST(Noncontig, TruncationIntoAShorterLayoutAndEmptyMessages) { run_ranks(2, truncation_main); }

// Rank 1 plays a faulty peer: an RTS run list that lies is rejected without a byte written, and
// the liar is treated as failed: progress reports it (naming the rank and the run list), the
// receives it could have matched end with that reason, and nothing more goes to it.
struct Lie {
  const char* what;
  std::uint32_t length;
  std::vector<std::pair<std::size_t, std::uint32_t>> runs;  // (offset into the target, bytes)
  std::size_t cut = 0;  // bytes cut off the encoded body
};
const std::vector<Lie>& lies() {
  static const std::vector<Lie> all = {
      {"runs summing past the length", 20'000, {{0, 16'000}, {16'000, 16'000}}},
      {"runs short of the length", 40'000, {{0, 16'000}, {16'000, 16'000}}},
      {"zero-length run", 16'000, {{0, 16'000}, {16'000, 0}}},
      {"count past the body", 32'000, {{0, 16'000}, {16'000, 16'000}}, 16},
  };
  return all;
}

Status malformed_main(std::uint16_t port, int rank, const Lie& l) {
  AUGUR_ASSIGN_OR_RETURN(auto boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  AUGUR_ASSIGN_OR_RETURN(auto e, Engine::create(*boot, {.slots = 16, .eager_limit = kEager, .steering = Steering::kOff,
                                                        .sge_max_runs = 64}));
  const int peer = 1 - rank;
  static std::vector<std::byte> target(64 * 1024, std::byte{0x11});  // what a lying run list points at
  const auto addr = reinterpret_cast<std::uintptr_t>(target.data());
  AUGUR_RETURN_IF_ERROR(boot->fence());
  if (rank == 1) {
    std::vector<proto::RemoteRun> runs;
    for (const auto& [off, len] : l.runs) runs.push_back({addr + off, len, 1});
    std::vector<std::byte> body(proto::run_list_bytes(runs.size()));
    proto::encode_run_list(l.length, runs, body);
    body.resize(body.size() - l.cut);
    bool sent = false;
    while (!sent) {
      AUGUR_ASSIGN_OR_RETURN(sent, e->send_raw_message_for_test(peer, proto::MsgType::kRtsRuns, 3, 5, l.length, body));
      AUGUR_RETURN_IF_ERROR(e->progress());
    }
  } else {
    Strided victim(40, 1000, 9, 1);
    AUGUR_ASSIGN_OR_RETURN(RequestPtr r, e->irecvv(victim.layout(), peer, 5, 3));
    std::byte other{};
    AUGUR_ASSIGN_OR_RETURN(RequestPtr o, e->irecv(&other, 1, peer, 6, 3));
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    Status st;
    while (st.ok() && std::chrono::steady_clock::now() < deadline) st = e->progress();
    CHECK(st.code() == Code::kPeerFailure, std::string(l.what) + ": the liar was not failed: " + st.to_string());
    CHECK(st.to_string().find("rank 1 sent a malformed message") != std::string::npos &&
              st.to_string().find("run list") != std::string::npos,
          std::string(l.what) + ": error does not name the peer and the run list: " + st.to_string());
    AUGUR_RETURN_IF_ERROR(check(victim, 0, 0, 0, "receive named by the lie"));
    CHECK(r->done && r->status.code() == Code::kPeerFailure, "the receive the lie named: " + r->status.to_string());
    CHECK(o->done && o->status.code() == Code::kPeerFailure, "another receive from the liar: " + o->status.to_string());
    CHECK(!e->isend(&other, 1, peer, 7, 3).ok(), "a send to the failed liar was accepted");
    CHECK(e->counters().rndv_msgs == 0, "a rejected RTS was counted: " + e->stats_line());
    CHECK(e->progress().ok(), "the failure was reported twice");
  }
  AUGUR_RETURN_IF_ERROR(boot->fence());
  return Status::Ok();
}

class MalformedRunList : public ::testing::TestWithParam<std::size_t> {};
TEST_P(MalformedRunList, IsRejectedNothingIsWrittenAndTheLiarIsFailed) {
  const Lie& l = lies()[GetParam()];
  run_ranks(2, [&l](std::uint16_t port, int rank) { return malformed_main(port, rank, l); });
}
INSTANTIATE_TEST_SUITE_P(Noncontig, MalformedRunList, ::testing::Range<std::size_t>(0, 4));

}  // namespace
}  // namespace augur::host
