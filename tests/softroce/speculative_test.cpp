// Speculative placement (AUGUR_STEERING=speculative, docs/early.md) between two ranks on the
// device.
//
// The receiver takes messages into three page-sized buffers in turn; the sender runs ahead: in
// each round it sends the round's message and then a "go" on the same connection, so that when
// the receiver has the go the message has arrived (RC keeps the order) and its receive is posted
// only then. After each receive the receiver sends an ack: the credit armed ahead for the next
// buffer was written before the ack, so the sender, holding the ack, holds the credit. Each case
// checks the data, the path, and that the counters add up.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
#include "augur/host/page_guard.h"
#include "augur/nic/mem_release.h"
#include "ranks.h"
#include "run_ahead.h"

namespace augur::host {
namespace {

using namespace std::chrono_literals;
using testing::run_ranks;
using namespace testing;  // Job, Pages, signal, await_signal (run_ahead.h)

constexpr std::uint32_t kCtx = 7;
constexpr std::int32_t kTag = 5;
constexpr std::size_t kBufs = 3;
constexpr std::size_t kBytes = 4096;  // each message, unless a case says otherwise
constexpr std::size_t kWarm = 6;  // rounds before the predictor has seen the cycle (twice)

std::byte pattern(std::size_t round, std::size_t k) { return static_cast<std::byte>((round * 37 + k * 11 + 1) & 0xff); }

Result<Job> start(std::uint16_t port, int rank, bool guard = true) {
  Job j;
  AUGUR_ASSIGN_OR_RETURN(j.boot, TcpBootstrap::connect(testing::bootstrap_host(), port, rank, 2, 120s));
  EngineConfig cfg{.slots = 16, .eager_limit = 8192, .steering = Steering::kSpeculative, .credit_slots = 8};
  cfg.guard = guard;
  AUGUR_ASSIGN_OR_RETURN(j.e, Engine::create(*j.boot, cfg));
  return j;
}

// What the receiver does in one round, after the round's message has arrived (the go).
enum class Twist : std::uint8_t {
  kNone,
  kOtherBuffer,  // the receive goes into a buffer the predictor did not name
  kWildcard,     // an ANY_SOURCE/ANY_TAG receive into another buffer
  kLayout,       // a layout receive over the predicted buffer: its two halves swapped
};

struct Receiver {
  Engine& e;
  std::size_t bytes;
  std::vector<std::unique_ptr<Pages>> bufs;
  Pages other;
  // Whole pages of its own for each buffer: a guard covers pages.
  explicit Receiver(Engine& eng, std::size_t n) : e(eng), bytes(n), other(n) {
    for (std::size_t i = 0; i < kBufs; ++i) bufs.push_back(std::make_unique<Pages>(n));
    for (auto& b : bufs) std::memset(b->p, 0xcc, b->n);
    std::memset(other.p, 0xcc, other.n);
  }
  // Speculations armed before this round's receive call, when it returned, and after the ack.
  std::uint64_t armed_before = 0, armed_at_post = 0, armed_after_ack = 0;
  // One round: the message is here; receive it, check it, ack. The path it took.
  Result<Path> round(std::size_t r, Twist twist = Twist::kNone) {
    AUGUR_RETURN_IF_ERROR(await_signal(e, 1));
    const bool mine = twist == Twist::kNone || twist == Twist::kLayout;
    std::byte* buf = mine ? bufs[r % kBufs]->p : other.p;
    const bool wild = twist == Twist::kWildcard;
    const auto half = static_cast<std::int64_t>(bytes / 2);
    const relations::ByteRun swapped[] = {{half, half}, {0, half}};  // the message's first half lands second
    RequestPtr q;
    armed_before = e.counters().spec_armed;
    if (twist == Twist::kLayout) {
      AUGUR_ASSIGN_OR_RETURN(q, e.irecvv(relations::Layout{buf, swapped}, 1, kTag, kCtx));
    } else {
      AUGUR_ASSIGN_OR_RETURN(q, e.irecv(buf, bytes, wild ? kAnySource : 1, wild ? kAnyTag : kTag, kCtx));
    }
    armed_at_post = e.counters().spec_armed;
    AUGUR_RETURN_IF_ERROR(e.wait(q, kWaitMs));
    const std::string what = "round " + std::to_string(r);
    CHECK(q->length == bytes && q->source == 1 && q->tag == kTag, what + ": envelope");
    const std::size_t shift = twist == Twist::kLayout ? bytes / 2 : 0;
    for (std::size_t k = 0; k < bytes; ++k) {
      CHECK(buf[(k + shift) % bytes] == pattern(r, k), what + ": byte " + std::to_string(k));
    }
    AUGUR_RETURN_IF_ERROR(signal(e, 1));
    armed_after_ack = e.counters().spec_armed;
    return q->path;
  }
};

Status send_round(Engine& e, std::size_t r, std::size_t bytes) {
  std::vector<std::byte> out(bytes);
  for (std::size_t k = 0; k < bytes; ++k) out[k] = pattern(r, k);
  AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(out.data(), bytes, 0, kTag, kCtx));
  AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
  AUGUR_RETURN_IF_ERROR(signal(e, 0));
  return await_signal(e, 0);
}

Status send_rounds(Engine& e, std::size_t from, std::size_t to, std::size_t bytes) {
  for (std::size_t r = from; r < to; ++r) AUGUR_RETURN_IF_ERROR(send_round(e, r, bytes));
  return Status::Ok();
}

// Every message after the warm-up arrives before its receive and is written straight into the
// buffer that receive names: no copy at all.
Status cyclic_main(std::uint16_t port, int rank, bool guard) {
  constexpr std::size_t kRounds = 30;
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, guard));
  Engine& e = *j.e;
  if (rank == 1) {
    AUGUR_RETURN_IF_ERROR(send_rounds(e, 0, kRounds, kBytes));
    CHECK(e.counters().direct_sends >= kRounds - kWarm - 1, "sender: direct sends " + e.stats_line());
    return j.boot->fence();
  }
  Receiver rx(e, kBytes);
  EngineCounters before{};
  for (std::size_t r = 0; r < kRounds; ++r) {
    if (r == kWarm) before = e.counters();
    AUGUR_ASSIGN_OR_RETURN(Path path, rx.round(r));
    if (r < kWarm) continue;
    CHECK(path == Path::kDirect, "round " + std::to_string(r) + ": path " + std::to_string(int(path)) + " " + e.stats_line());
    // The next buffer is predicted and armed after the post, not inside it (the receive's own
    // post-to-completion time), and before the ack that carries its arm word.
    CHECK(rx.armed_at_post == rx.armed_before, "round " + std::to_string(r) + ": armed inside the post " + e.stats_line());
    CHECK(rx.armed_after_ack == rx.armed_before + 1, "round " + std::to_string(r) + ": armed by the ack " + e.stats_line());
  }
  const EngineCounters a = e.counters();
  const std::uint64_t n = kRounds - kWarm;
  CHECK(a.spec_msgs - before.spec_msgs == n, "spec_msgs: " + e.stats_line());
  CHECK(a.spec_early - before.spec_early == n, "every one early: " + e.stats_line());
  CHECK(a.spec_placed - before.spec_placed == n, "every one in place: " + e.stats_line());
  CHECK(a.bytes_copied == before.bytes_copied, "nothing copied: " + e.stats_line());
  CHECK(a.guard_faults == 0 && a.spec_violations == 0 && a.spec_copied == 0, "no touch: " + e.stats_line());
  CHECK(a.unexpected_msgs - before.unexpected_msgs == n, "unexpected_msgs: " + e.stats_line());
  // Each round's arm word for the next buffer rides on the round's ack to the sender.
  CHECK(a.arms_carried - before.arms_carried >= n - 1, "arm words carried: " + e.stats_line());
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Speculative, EarlyMessagesAreWrittenIntoThePredictedBufferWithNoCopy) {
  run_ranks(2, [](std::uint16_t port, int rank) { return cyclic_main(port, rank, true); });
}

TEST(Speculative, WithoutTheGuardTooWhenTheProgramLeavesTheBuffersAlone) {
  run_ranks(2, [](std::uint16_t port, int rank) { return cyclic_main(port, rank, false); });
}

// Under the guard a buffer must be whole pages of its own: a 3000-byte one shares its last page
// with whatever follows it, so it is not speculated on (counted), and its messages come by the
// other paths, intact. Without the guard the program has promised not to touch it: speculated.
Status shared_pages_main(std::uint16_t port, int rank, bool guard) {
  constexpr std::size_t kOdd = 3000;
  constexpr std::size_t kRounds = 16;
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank, guard));
  Engine& e = *j.e;
  if (rank == 1) {
    AUGUR_RETURN_IF_ERROR(send_rounds(e, 0, kRounds, kOdd));
    return j.boot->fence();
  }
  Receiver rx(e, kOdd);
  for (std::size_t r = 0; r < kRounds; ++r) AUGUR_RETURN_IF_ERROR(rx.round(r).status());
  const EngineCounters a = e.counters();
  if (guard) {
    CHECK(a.spec_armed == 0 && a.spec_shared_pages >= kRounds - kWarm && a.guard_faults == 0, "guarded: " + e.stats_line());
  } else {
    CHECK(a.spec_armed > 0 && a.spec_placed >= kRounds - kWarm - 1 && a.spec_shared_pages == 0, "unguarded: " + e.stats_line());
  }
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Speculative, UnderTheGuardABufferSharingItsPagesIsNotSpeculatedOn) {
  run_ranks(2, [](std::uint16_t port, int rank) { return shared_pages_main(port, rank, true); });
}

TEST(Speculative, WithoutTheGuardABufferSharingItsPagesIsSpeculatedOn) {
  run_ranks(2, [](std::uint16_t port, int rank) { return shared_pages_main(port, rank, false); });
}

// Mispredicted buffers: a round's receive goes into a buffer the predictor did not name, by
// name or by wildcard. The message was written into the predicted buffer already: it is copied
// out, and that buffer, which now holds what the program must not see, stays guarded until its
// own next receive is posted (which overwrites it). The program never touches it in between, so
// the run goes on with every message intact.
Status mispredicted_main(std::uint16_t port, int rank) {
  constexpr std::size_t kBig = 8192;  // the eager limit
  constexpr std::size_t kRounds = 24;
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank));
  Engine& e = *j.e;
  if (rank == 1) {
    AUGUR_RETURN_IF_ERROR(send_rounds(e, 0, kRounds, kBig));
    return j.boot->fence();
  }
  Receiver rx(e, kBig);
  std::size_t copied = 0;
  for (std::size_t r = 0; r < kRounds; ++r) {
    const Twist t = r == 10 ? Twist::kOtherBuffer : r == 17 ? Twist::kWildcard : Twist::kNone;
    const EngineCounters b = e.counters();
    AUGUR_ASSIGN_OR_RETURN(Path path, rx.round(r, t));
    const EngineCounters a = e.counters();
    if (t != Twist::kNone) {
      CHECK(path == Path::kLanding && a.spec_copied == b.spec_copied + 1 && a.bytes_copied == b.bytes_copied + kBig,
            "round " + std::to_string(r) + " (mispredicted): path " + std::to_string(int(path)) + " " + e.stats_line());
      ++copied;
    }
  }
  const EngineCounters a = e.counters();
  CHECK(a.spec_copied == copied && a.spec_violations == 0 && a.guard_faults == 0, "counters: " + e.stats_line());
  CHECK(a.spec_placed >= kRounds - kWarm - 2 * 3, "the others in place: " + e.stats_line());
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Speculative, AMispredictedBufferIsCopiedFromAndKeptGuarded) { run_ranks(2, mispredicted_main); }

// The same misprediction, then the next receive into that buffer (round kAgain):
// - layout = false: posted for half of what the misplaced message wrote there. The other half
//   was the program's (MPI leaves bytes past a receive alone) and is gone: the run stops, saying so;
// - layout = true: a layout receive (two halves swapped) whose runs together write all the
//   misplaced message wrote: the run goes on, every message intact.
Status clobbered_main(std::uint16_t port, int rank, bool layout) {
  constexpr std::size_t kBig = 8192;
  constexpr std::size_t kOther = 10, kAgain = kOther + kBufs, kRounds = kAgain + 4;
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank));
  Engine& e = *j.e;
  if (rank == 1) {
    if (layout) {
      AUGUR_RETURN_IF_ERROR(send_rounds(e, 0, kRounds, kBig));
    } else {
      AUGUR_RETURN_IF_ERROR(send_rounds(e, 0, kAgain, kBig));
      AUGUR_RETURN_IF_ERROR(send_round(e, kAgain, kBig / 2));
    }
    return j.boot->fence();
  }
  Receiver rx(e, kBig);
  for (std::size_t r = 0; r < kAgain; ++r) AUGUR_RETURN_IF_ERROR(rx.round(r, r == kOther ? Twist::kOtherBuffer : Twist::kNone).status());
  CHECK(e.counters().spec_copied == 1, "not mispredicted: " + e.stats_line());
  if (layout) {
    for (std::size_t r = kAgain; r < kRounds; ++r) AUGUR_RETURN_IF_ERROR(rx.round(r, r == kAgain ? Twist::kLayout : Twist::kNone).status());
    CHECK(e.counters().spec_copied == 1 && e.counters().spec_violations == 0, "counters: " + e.stats_line());
    return j.boot->fence();
  }
  AUGUR_RETURN_IF_ERROR(await_signal(e, 1));
  Result<RequestPtr> q = e.irecv(rx.bufs[kAgain % kBufs]->p, kBig / 2, 1, kTag, kCtx);
  Status st = q.ok() ? e.wait(q.value(), kWaitMs) : q.status();
  CHECK(st.code() == Code::kDataLoss && st.to_string().find("does not cover all that message wrote") != std::string::npos,
        "no report: " + st.to_string());
  AUGUR_RETURN_IF_ERROR(signal(e, 1));
  return j.boot->fence();
}

TEST(Speculative, AReceiveThatDoesNotCoverAMisplacedMessageStopsTheRun) {
  run_ranks(2, [](std::uint16_t port, int rank) { return clobbered_main(port, rank, false); });
}

TEST(Speculative, ALayoutReceiveCoveringAMisplacedMessageGoesOn) {
  run_ranks(2, [](std::uint16_t port, int rank) { return clobbered_main(port, rank, true); });
}

// A layout receive over the predicted buffer whose message was written there already (the soak's
// vector receive into a buffer last received into whole): the message is copied out before it is
// scattered over its own pages, and arrives intact; the run goes on.
Status layout_main(std::uint16_t port, int rank) {
  constexpr std::size_t kRounds = 18;
  constexpr std::size_t kAt = 12;
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank));
  Engine& e = *j.e;
  if (rank == 1) {
    AUGUR_RETURN_IF_ERROR(send_rounds(e, 0, kRounds, kBytes));
    return j.boot->fence();
  }
  Receiver rx(e, kBytes);
  for (std::size_t r = 0; r < kRounds; ++r) {
    const EngineCounters b = e.counters();
    AUGUR_ASSIGN_OR_RETURN(Path path, rx.round(r, r == kAt ? Twist::kLayout : Twist::kNone));
    const EngineCounters a = e.counters();
    if (r == kAt) {
      CHECK(b.spec_early < a.spec_early || b.spec_msgs < a.spec_msgs, "not written ahead: " + e.stats_line());
      CHECK(path == Path::kLanding && a.spec_copied == b.spec_copied + 1 && a.bytes_copied == b.bytes_copied + kBytes,
            "layout round: path " + std::to_string(int(path)) + " " + e.stats_line());
    }
  }
  CHECK(e.counters().spec_violations == 0 && e.counters().guard_faults == 0, "counters: " + e.stats_line());
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Speculative, ALayoutReceiveOverTheBufferTakesItsMessageIntact) { run_ranks(2, layout_main); }

// The program touches the next predicted buffer before its message was sent: the guard lifts,
// the program reads what the buffer held, the credit is revoked, and the message comes by
// bounce instead. The sender sends only once the receiver says the revoke is out (the revoke
// travels before that word on the same connection).
constexpr std::size_t kTouched = 8;  // rounds before the touch

// The rounds before a touch: after them the receiver's next buffer has a speculation out.
Status before_the_touch(Engine& e, int rank, Receiver* rx) {
  if (rank == 1) return send_rounds(e, 0, kTouched, kBytes);
  for (std::size_t r = 0; r < kTouched; ++r) AUGUR_RETURN_IF_ERROR(rx->round(r).status());
  CHECK(e.counters().spec_armed > 0, "no speculation armed: " + e.stats_line());
  return Status::Ok();
}

// Before the message comes, the program touches the next predicted buffer (release = false) or
// gives it back (release = true: reported as the release hooks report a free or munmap; the
// buffer stays allocated here, the report is what is tested). Either way the credit is revoked,
// nothing is reported, and the message comes by bounce.
Status withdrawn_main(std::uint16_t port, int rank, bool release) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank));
  Engine& e = *j.e;
  Receiver rx(e, kBytes);
  AUGUR_RETURN_IF_ERROR(before_the_touch(e, rank, &rx));
  if (rank == 1) {
    AUGUR_RETURN_IF_ERROR(await_signal(e, 0));  // the revoke is here
    AUGUR_RETURN_IF_ERROR(send_rounds(e, kTouched, kTouched + 6, kBytes));
    return j.boot->fence();
  }
  const EngineCounters b = e.counters();
  std::byte* next = rx.bufs[kTouched % kBufs]->p;
  if (release) {
    nic::note_release(next, kBytes);
  } else {
    volatile std::byte seen = next[100];  // a touch: the guard's fault, lifted at once
    CHECK(seen == pattern(kTouched - kBufs, 100), "the program saw what its buffer held");
  }
  for (int i = 0; i < 1000 && e.counters().spec_revoked == b.spec_revoked; ++i) AUGUR_RETURN_IF_ERROR(e.progress());
  CHECK(e.counters().spec_revoked == b.spec_revoked + 1 && e.counters().guard_faults == b.guard_faults + (release ? 0 : 1),
        "not seen: " + e.stats_line());
  AUGUR_RETURN_IF_ERROR(signal(e, 1));
  AUGUR_ASSIGN_OR_RETURN(Path path, rx.round(kTouched));
  CHECK(path == Path::kBounce, "after the revoke: path " + std::to_string(int(path)) + " " + e.stats_line());
  for (std::size_t r = kTouched + 1; r < kTouched + 6; ++r) AUGUR_RETURN_IF_ERROR(rx.round(r).status());
  CHECK(e.counters().spec_violations == 0, "violation: " + e.stats_line());
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  std::printf("%s\n", e.stats_line().c_str());
  return Status::Ok();
}

TEST(Speculative, ATouchBeforeTheMessageRevokesTheCreditAndTheProgramGoesOn) {
  run_ranks(2, [](std::uint16_t port, int rank) { return withdrawn_main(port, rank, false); });
}

TEST(Speculative, ABufferGivenBackBeforeItsMessageRevokesTheCredit) {
  run_ranks(2, [](std::uint16_t port, int rank) { return withdrawn_main(port, rank, true); });
}

// A touch, then at once a message to the sender (no progress between), which sends only when it
// has that message: the revoke leaves ahead of the message, so nothing is written into the
// touched buffer and the program goes on. (Checked through MPI first: mpi_test_early's touch
// round stopped with a report, the peer's message crossing a revoke still unsent.)
Status touch_then_send_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank));
  Engine& e = *j.e;
  Receiver rx(e, kBytes);
  AUGUR_RETURN_IF_ERROR(before_the_touch(e, rank, &rx));
  if (rank == 1) {
    AUGUR_RETURN_IF_ERROR(await_signal(e, 0));
    AUGUR_RETURN_IF_ERROR(send_rounds(e, kTouched, kTouched + 4, kBytes));
    return j.boot->fence();
  }
  const EngineCounters b = e.counters();
  std::byte* next = rx.bufs[kTouched % kBufs]->p;
  next[100] = std::byte{0x5a};  // the program's own write: legal, its receive is not posted
  AUGUR_RETURN_IF_ERROR(signal(e, 1));
  CHECK(e.counters().spec_revoked == b.spec_revoked + 1, "not revoked by the send: " + e.stats_line());
  AUGUR_ASSIGN_OR_RETURN(Path path, rx.round(kTouched));
  CHECK(path == Path::kBounce, "after the touch: path " + std::to_string(int(path)) + " " + e.stats_line());
  for (std::size_t r = kTouched + 1; r < kTouched + 4; ++r) AUGUR_RETURN_IF_ERROR(rx.round(r).status());
  CHECK(e.counters().spec_violations == 0, "violation: " + e.stats_line());
  AUGUR_RETURN_IF_ERROR(j.boot->fence());
  return Status::Ok();
}

TEST(Speculative, ATouchIsRevokedAheadOfTheNextSendToThePeer) { run_ranks(2, touch_then_send_main); }

// The "after" cases: rank 1 sends one message into rank 0's next predicted buffer; rank 0 waits
// until it is there (the go) and returns that buffer.
Result<std::byte*> message_held(Job& j, int rank, Receiver& rx) {
  Engine& e = *j.e;
  AUGUR_RETURN_IF_ERROR(before_the_touch(e, rank, &rx));
  if (rank == 1) {
    std::vector<std::byte> out(kBytes, std::byte{1});
    AUGUR_ASSIGN_OR_RETURN(RequestPtr s, e.isend(out.data(), kBytes, 0, kTag, kCtx));
    AUGUR_RETURN_IF_ERROR(e.wait(s, kWaitMs));
    AUGUR_RETURN_IF_ERROR(signal(e, 0));
    return nullptr;
  }
  AUGUR_RETURN_IF_ERROR(await_signal(e, 1));  // the message is in the predicted buffer
  CHECK(e.counters().spec_early > 0, "not written ahead: " + e.stats_line());
  return rx.bufs[kTouched % kBufs]->p;
}

// Progress stops the run: DATA_LOSS, a report saying `what` to the buffer and giving the advice.
Status expect_stop(Engine& e, const std::byte* buf, const std::string& what) {
  Status st = Status::Ok();
  for (int i = 0; i < 1000 && st.ok(); ++i) st = e.progress();
  char addr[32];
  std::snprintf(addr, sizeof addr, "%p", static_cast<const void*>(buf));
  CHECK(!st.ok() && st.code() == Code::kDataLoss && st.to_string().find(what + " buffer " + std::string(addr)) != std::string::npos &&
            st.to_string().find("AUGUR_STEERING=predicted") != std::string::npos,
        "no report: " + st.to_string());
  CHECK(e.counters().spec_violations == 1, "violations: " + e.stats_line());
  std::printf("reported: %s\n", st.to_string().c_str());
  return Status::Ok();
}

// The program touches a predicted buffer after the message was written into it, before posting
// its receive: the run cannot go on silently. The engine reports it, naming the buffer.
Status touch_after_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank));
  Receiver rx(*j.e, kBytes);
  AUGUR_ASSIGN_OR_RETURN(std::byte* next, message_held(j, rank, rx));
  if (next != nullptr) {
    volatile std::byte seen = next[0];
    (void)seen;
    AUGUR_RETURN_IF_ERROR(expect_stop(*j.e, next, "touched"));
  }
  return j.boot->fence();
}

TEST(Speculative, ATouchAfterTheMessageCameIsReportedNamingTheBuffer) { run_ranks(2, touch_after_main); }

// The predicted receive posted 1000 bytes short of the message already written into its buffer:
// the message's last bytes stand in memory the receive does not own. The run stops, saying so.
Status truncated_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank));
  Receiver rx(*j.e, kBytes);
  AUGUR_ASSIGN_OR_RETURN(std::byte* next, message_held(j, rank, rx));
  if (next != nullptr) {
    Engine& e = *j.e;
    const std::uint64_t placed = e.counters().spec_placed;
    // The message is there: the post itself may match it and report.
    Result<RequestPtr> r = e.irecv(next, kBytes - 1000, 1, kTag, kCtx);
    Status st = r.ok() ? e.wait(r.value(), kWaitMs) : r.status();
    CHECK(st.code() == Code::kDataLoss && st.to_string().find("took a message of 4096 bytes ahead of its receive, and the "
                                                              "receive posted for it holds 3096") != std::string::npos,
          "no report: " + st.to_string());
    CHECK(e.counters().spec_violations == 1 && e.counters().spec_placed == placed, "counters: " + e.stats_line());
  }
  return j.boot->fence();
}

TEST(Speculative, ATruncatedReceiveOfAMessageWrittenAheadStopsTheRun) { run_ranks(2, truncated_main); }

}  // namespace
}  // namespace augur::host

namespace augur::host {
namespace {


// Given back after its message was written there: that message has nowhere to go, the run stops.
Status release_after_main(std::uint16_t port, int rank) {
  AUGUR_ASSIGN_OR_RETURN(Job j, start(port, rank));
  Receiver rx(*j.e, kBytes);
  AUGUR_ASSIGN_OR_RETURN(std::byte* next, message_held(j, rank, rx));
  if (next != nullptr) {
    nic::note_release(next, kBytes);
    AUGUR_RETURN_IF_ERROR(expect_stop(*j.e, next, "gave back"));
  }
  return j.boot->fence();
}

TEST(Speculative, ABufferGivenBackAfterItsMessageCameIsReported) { run_ranks(2, release_after_main); }

}  // namespace
}  // namespace augur::host
