// Helpers shared by the engine's .cpp files (host/engine*.cpp), which split one class, Engine, by
// concern. Internal to libaugur_host: not under host/augur/, not installed. Inline because they
// are on every message's path and each file must be able to inline them without LTO's help.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "augur/host/engine.h"

namespace augur::host {

// The channel as the credit book's writer.
class ChannelWriter final : public CreditWriter {
 public:
  explicit ChannelWriter(Channel& ch) : ch_(ch) {}
  Result<bool> write_credit(std::uint32_t slot, const proto::CreditEntry& e) override { return ch_.write_credit(slot, e); }
  Result<bool> write_arm(std::uint32_t slot, const proto::CreditArm& a) override { return ch_.write_arm(slot, a); }
  Result<bool> queue_arm(std::uint32_t slot, const proto::CreditArm& a) override { return ch_.queue_arm(slot, a); }
  [[nodiscard]] std::uint32_t next_seq_in() const override { return ch_.next_seq_in(); }

 private:
  Channel& ch_;
};


// Set while this thread runs the engine's progress with early release on: a guarded touch that
// faults inside it (the engine itself touching released memory) is a bug reported as such, not
// a wait that would poll the CQ from within its own poll.
inline thread_local bool t_in_engine = false;
struct InEngine {
  explicit InEngine(bool on) noexcept : on_(on) {
    if (on_) t_in_engine = true;
  }
  ~InEngine() {
    if (on_) t_in_engine = false;
  }
  InEngine(const InEngine&) = delete;
  InEngine& operator=(const InEngine&) = delete;

 private:
  bool on_;
};

// What a peer whose connection failed (a completion error, a QP that cannot be posted to, one
// found broken) is failed with: whatever the verbs error, the program sees a process it can no
// longer reach.
Status unreachable(int peer, const Status& st);

// Inline here, not in engine.cpp: with one definition out of line, LTO's inliner kept calls to
// it in start_send and on_direct (augur-perf-lat) that the single-file engine had inlined.
inline void Engine::finish(Request& r, Path path, Status st) {
  if (!busy_.empty()) [[unlikely]] unbusy(&r);
  r.path = path;
  r.status = std::move(st);
  r.done.store(true, std::memory_order_seq_cst);  // seq_cst: see ProgressDriver::wake_waiters
  driver_.note_completion();
}

}  // namespace augur::host
