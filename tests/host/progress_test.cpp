// The progress driver against a fake target: when it polls, sleeps, checks the job's liveness,
// and how the assist thread takes commands and wakes waiters. No device, no network: the fake's
// "completion channel" is an eventfd the test writes to.
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "augur/host/progress.h"
#include "augur/unique_fd.h"

namespace augur::host {
namespace {

struct Flag : AssistCommand {
  std::atomic<bool>* set = nullptr;
};

// Completes `req` at round `done_at` (0: never); counts what the driver asks of it.
class FakeTarget final : public ProgressTarget {
 public:
  RequestPtr req = std::make_shared<Request>();
  std::atomic<int> rounds{0};
  std::atomic<int> done_at{0};
  std::atomic<int> arms{0};
  std::atomic<int> background{0};  // run_background calls (the assist thread's)
  int events = 0, checks = 0, commands = 0;
  int off_thread = 0;  // run_commands called off the assist thread
  Status fail_round;           // returned once by the next round
  Status check_result;         // what the keepalive check finds; an error also fails `req`
  bool work = false;           // rounds report work found
  int cap = -1;                // sleep_cap: -1 leaves the timeout as it is
  UniqueFd event{::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)};
  ProgressDriver* driver = nullptr;

  Status progress_once() override {
    const int n = ++rounds;
    if (done_at != 0 && n >= done_at && !req->done) {
      req->done.store(true, std::memory_order_seq_cst);
      if (driver != nullptr) driver->note_completion();
    }
    return std::exchange(fail_round, Status::Ok());
  }
  [[nodiscard]] bool idle() const noexcept override { return !work; }
  Status check_peers() override {
    ++checks;
    if (!check_result.ok() && !req->done) {
      req->status = check_result;
      req->done.store(true, std::memory_order_seq_cst);
    }
    return check_result;
  }
  bool run_commands() override {
    if (!ProgressDriver::on_assist_thread()) ++off_thread;
    bool any = false;
    while (AssistCommand* c = driver->next_command()) {
      auto* f = static_cast<Flag*>(c);
      f->set->store(true, std::memory_order_seq_cst);
      driver->note_completion();
      delete f;
      ++commands;
      any = true;
    }
    return any;
  }
  bool run_background() override {
    ++background;
    return false;
  }
  Result<bool> arm_for_sleep() override {
    ++arms;
    AUGUR_RETURN_IF_ERROR(progress_once());
    return !req->done.load();
  }
  Status take_event() override {
    std::uint64_t n = 0;
    ++events;
    return ::read(event.get(), &n, sizeof n) == sizeof n ? Status::Ok() : errno_status(errno, "read");
  }
  [[nodiscard]] int event_fd() const noexcept override { return event.get(); }
  [[nodiscard]] int sleep_cap(int timeout_ms) const noexcept override { return cap < 0 ? timeout_ms : cap; }
};

void fire(const UniqueFd& fd) {
  const std::uint64_t one = 1;
  ASSERT_EQ(sizeof one, static_cast<std::size_t>(::write(fd.get(), &one, sizeof one)));
}

TEST(Progress, SpinWaitPollsUntilDoneAndNeverSleeps) {
  FakeTarget t;
  t.done_at = 5000;
  ProgressDriver d(t, {.wait = WaitPolicy::kSpin, .spin_us = 0, .keepalive_ms = 60'000});
  ASSERT_TRUE(d.wait(t.req, 60'000).ok());
  EXPECT_EQ(t.rounds.load(), 5000);
  EXPECT_EQ(t.arms.load(), 0);
}

TEST(Progress, AutoWaitSpinsWithCoresToSpareAndSleepsWithout) {
  {
    FakeTarget t;
    t.done_at = 5000;
    ProgressDriver d(t, {.wait = WaitPolicy::kAuto, .spin_us = 0, .keepalive_ms = 60'000});
    d.resolve_auto_wait(true);
    EXPECT_EQ(d.wait_policy(), WaitPolicy::kSpin);
    ASSERT_TRUE(d.wait(t.req, 60'000).ok());
    EXPECT_EQ(t.arms.load(), 0);  // never went to sleep, although spin_us is 0
    EXPECT_EQ(d.sleeps(), 0u);
  }
  FakeTarget t;
  ProgressDriver d(t, {.wait = WaitPolicy::kAuto, .spin_us = 0, .keepalive_ms = 60'000});
  d.resolve_auto_wait(false);
  EXPECT_EQ(d.wait_policy(), WaitPolicy::kHybrid);
  d.resolve_auto_wait(true);  // decided once: a second call changes nothing
  EXPECT_EQ(d.wait_policy(), WaitPolicy::kHybrid);
  std::thread completer([&] {
    while (t.arms == 0) std::this_thread::yield();  // hybrid with no spin: it goes to sleep
    t.done_at = 1;
    fire(t.event);
  });
  ASSERT_TRUE(d.wait(t.req, 60'000).ok());
  completer.join();
  EXPECT_GE(d.sleeps(), 1u);
  // An explicit policy is never replaced.
  ProgressDriver block(t, {.wait = WaitPolicy::kBlock, .spin_us = 0, .keepalive_ms = 60'000});
  block.resolve_auto_wait(true);
  EXPECT_EQ(block.wait_policy(), WaitPolicy::kBlock);
}

TEST(Progress, BlockingWaitSleepsOnTheChannelAndWakesAtAnEvent) {
  FakeTarget t;
  ProgressDriver d(t, {.wait = WaitPolicy::kBlock, .spin_us = 0, .keepalive_ms = 60'000});
  std::thread completer([&] {
    while (t.arms == 0) std::this_thread::yield();  // the waiter is going to sleep (or asleep)
    t.done_at = 1;                                     // the next round completes the request
    fire(t.event);
  });
  ASSERT_TRUE(d.wait(t.req, 60'000).ok());
  completer.join();
  EXPECT_GE(t.arms.load(), 1);
  EXPECT_GE(t.events, 1);  // woken by the event, which it took
}

TEST(Progress, AWaitReportsADeadPeerFoundByTheKeepaliveCheck) {
  FakeTarget t;  // never completes by itself
  t.check_result = Status(Code::kPeerFailure, "rank 1 died");
  ProgressDriver d(t, {.wait = WaitPolicy::kBlock, .spin_us = 0, .keepalive_ms = 5});
  Status st = d.wait(t.req, 60'000);
  EXPECT_EQ(st.code(), Code::kPeerFailure) << st.to_string();
  EXPECT_GE(t.checks, 1);
}

TEST(Progress, AWaitThatRunsOutOfTimeSaysSoWithTheLastError) {
  FakeTarget t;
  t.fail_round = Status(Code::kProtocol, "bad header");
  ProgressDriver d(t, {.wait = WaitPolicy::kBlock, .spin_us = 0, .keepalive_ms = 60'000});
  Status st = d.wait(t.req, 20);
  EXPECT_EQ(st.code(), Code::kTimeout);
  EXPECT_NE(st.to_string().find("bad header"), std::string::npos) << st.to_string();
}

TEST(Progress, ProgressChecksTheJobOnceEvery256CallsAtMost) {
  FakeTarget t;
  ProgressDriver d(t, {.wait = WaitPolicy::kSpin, .spin_us = 0, .keepalive_ms = 0});
  // As Engine::progress: a round, then the driver's half.
  auto progress = [&] {
    Status st = t.progress_once();
    return st.ok() ? d.after_round() : st;
  };
  for (int i = 0; i < 2560; ++i) ASSERT_TRUE(progress().ok());
  EXPECT_EQ(t.rounds.load(), 2560);
  EXPECT_GE(t.checks, 9);  // the clock can stand still between two reads: one may be skipped
  EXPECT_LE(t.checks, 10);
  t.check_result = Status(Code::kPeerFailure, "rank 2 died");
  Status st;
  for (int i = 0; i < 256 && st.ok(); ++i) st = progress();
  EXPECT_EQ(st.code(), Code::kPeerFailure);
}

TEST(Progress, RelaxSpinsWhileBusyAndSleepsWhenIdleAsThePolicySays) {
  FakeTarget t;
  t.cap = 0;  // never really block in this test
  {
    ProgressDriver spin(t, {.wait = WaitPolicy::kSpin, .spin_us = 0, .keepalive_ms = 60'000});
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(spin.relax(1000, !t.work).ok());
    EXPECT_EQ(t.arms.load(), 0);
  }
  ProgressDriver block(t, {.wait = WaitPolicy::kBlock, .spin_us = 0, .keepalive_ms = 60'000});
  t.work = true;
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(block.relax(1000, !t.work).ok());
  EXPECT_EQ(t.arms.load(), 0);  // the last round found work: keep polling
  t.work = false;
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(block.relax(1000, !t.work).ok());
  EXPECT_EQ(t.arms.load(), 100);  // idle: every call sleeps (for at most the cap)
}

TEST(Progress, TheAssistThreadRunsCommandsWakesWaitersAndReportsItsErrors) {
  FakeTarget t;
  ProgressDriver d(t, {.wait = WaitPolicy::kHybrid, .spin_us = 50, .keepalive_ms = 60'000});
  t.driver = &d;
  t.fail_round = Status(Code::kProtocol, "malformed message");
  ASSERT_TRUE(d.start_assist(Placement{.core = 0, .cpus = "0", .device_placed = false, .why = "test"}, 0).ok());
  ASSERT_TRUE(d.assisted());
  for (int i = 0; i < 50; ++i) {  // the assist thread sleeps between commands (hybrid, 50 us)
    std::atomic<bool> set{false};
    auto* f = new Flag;
    f->set = &set;
    d.enqueue(f);
    d.wait_for_flag(set);
    ASSERT_TRUE(set.load());
    if (i % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  t.done_at = t.rounds.load() + 1;  // completed by one of the assist thread's next rounds
  fire(t.event);                    // which may be asleep on the channel
  EXPECT_TRUE(d.wait(t.req, 60'000).ok());
  Status err = d.take_assist_error();  // the first round's error, kept for the application
  EXPECT_EQ(err.code(), Code::kProtocol) << err.to_string();
  EXPECT_TRUE(d.take_assist_error().ok());  // reported once
  d.stop_assist();
  EXPECT_FALSE(d.assisted());
  EXPECT_EQ(t.commands, 50);
  EXPECT_EQ(t.off_thread, 0);
  EXPECT_FALSE(ProgressDriver::on_assist_thread());
  // The layer above's background work runs after every round: at least one per command, each
  // command having been waited for before the next was queued.
  EXPECT_GE(t.background.load(), 50);
}

TEST(Progress, AnAssistedWaiterSpinsAsThePolicySaysThenSleepsUntilTheEpochMoves) {
  FakeTarget t;
  ProgressDriver d(t, {.wait = WaitPolicy::kHybrid, .spin_us = 0, .keepalive_ms = 60'000});
  t.driver = &d;
  ASSERT_TRUE(d.start_assist(Placement{.core = 0, .cpus = "0", .device_placed = false, .why = "test"}, 0).ok());
  // Hybrid with no spin: sleepy once the clock has been read twice (the first read starts it).
  const std::uint64_t seen = d.completion_epoch();
  bool sleepy = false;
  for (int i = 0; i < 1000 && !sleepy; ++i) sleepy = d.relax_assisted(seen);
  EXPECT_TRUE(sleepy);
  // A completion on the assist thread (a command it runs) moves the epoch and wakes the sleeper;
  // were the wake lost, the sleep would last the 60 s keepalive and return false.
  for (int i = 0; i < 20; ++i) {
    const std::uint64_t before = d.completion_epoch();
    std::atomic<bool> set{false};
    auto* f = new Flag;
    f->set = &set;
    d.enqueue(f);
    EXPECT_TRUE(d.sleep_past(before, 60'000));
    EXPECT_NE(d.completion_epoch(), before);
    EXPECT_TRUE(set.load());
  }
  // Nothing completes: the sleep ends at its timeout, the epoch unmoved.
  const std::uint64_t quiet = d.completion_epoch();
  EXPECT_FALSE(d.sleep_past(quiet, 20));
  d.stop_assist();
}

TEST(Progress, AnAssistedSpinWaiterNeverSleepsAndABlockingOneAlways) {
  FakeTarget t;
  ProgressDriver spin(t, {.wait = WaitPolicy::kSpin, .spin_us = 0, .keepalive_ms = 60'000});
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(spin.relax_assisted(0));
  ProgressDriver block(t, {.wait = WaitPolicy::kBlock, .spin_us = 1000, .keepalive_ms = 60'000});
  EXPECT_TRUE(block.relax_assisted(0));
  EXPECT_TRUE(block.relax_assisted(1));
}

}  // namespace
}  // namespace augur::host
