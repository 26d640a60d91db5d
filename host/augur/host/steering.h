// SteeringPolicy: what the engine steers, decided without touching the network.
//
// It answers three questions for the engine's credit code (host/engine_credits.cpp and the
// peers' CreditBooks, which do the writing): may this receive be credited (size, source, tag),
// which receives to stage credits for ahead of their posting (the predictor's top-k next calls,
// while its hit ratio holds), and whether crediting a peer should pause because its credits go
// unused (its messages outrun our receives, as in a ping-pong). One thread calls it: the one
// that runs the protocols.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "augur/predictor/predictor.h"
#include "augur/status.h"

namespace augur::host {

// How receives steer eager messages (AUGUR_STEERING).
enum class Steering : std::uint8_t {
  kOff,        // bounce and rendezvous only
  kPosted,     // a posted receive gives its sender a credit: the next matching message is written
               // straight into the receive buffer
  kPredicted,  // as kPosted, and the predicted next receives are registered and credited ahead
               // (pending), so that posting the receive only arms the credit
  kSpeculative,  // as kPredicted, and a predicted receive's buffer gets an armed credit before
                 // the receive is posted, guarded (docs/early.md, "Speculative placement")
};

// Whether the mode predicts receives (kPredicted and kSpeculative).
constexpr bool predicts(Steering m) noexcept { return m == Steering::kPredicted || m == Steering::kSpeculative; }

struct SteeringConfig {
  Steering mode = Steering::kPredicted;
  int rank = 0;
  int size = 1;
  std::uint32_t direct_min = 1024;   // smallest receive credited (AUGUR_DIRECT_MIN)
  std::uint32_t eager_limit = 8192;  // above it, landing zones instead of credits (landing_max)
  std::uint32_t direct_max = 8192;   // largest receive credited (AUGUR_DIRECT_MAX)
  std::uint32_t landing_max = 0;     // predicted receives above the eager limit up to this get a landing zone (0: none)
  std::uint32_t predict_depth = 2;   // predicted receives staged ahead (top-k)
  std::string predictor = "match";
};

struct SteeringCounters {
  std::uint64_t pred_hits = 0;       // receive calls among the calls predicted just before
  std::uint64_t pred_misses = 0;
  std::uint64_t pred_abstains = 0;   // no prediction offered (or prediction suspended)
  std::uint64_t pred_suspended = 0;  // times prediction was turned off for a low hit ratio
  std::uint64_t credit_pauses = 0;   // times crediting a peer was paused for void credits
};

class SteeringPolicy {
 public:
  static Result<SteeringPolicy> create(const SteeringConfig& cfg);

  // Worth a credit by size alone: below direct_min a bounce copy costs less than the credit.
  [[nodiscard]] bool steerable(std::size_t len) const noexcept { return len > 0 && len >= cfg_.direct_min; }
  // A receive the mode credits when posted (the caller also checks that no earlier posted
  // receive could take its message).
  [[nodiscard]] bool creditable(std::size_t len, int source, std::int32_t tag) const noexcept {
    return cfg_.mode != Steering::kOff && steerable(len) && source >= 0 && source != cfg_.rank && tag >= 0 &&
           len <= cfg_.direct_max;
  }
  // A predicted receive that gets a landing zone instead of a credit (docs/early.md).
  [[nodiscard]] bool landable(std::size_t len, int source, std::int32_t tag) const noexcept {
    return predicts(cfg_.mode) && len > cfg_.eager_limit && len <= cfg_.landing_max && source >= 0 &&
           source != cfg_.rank && tag >= 0;
  }
  [[nodiscard]] bool paused(int peer) const noexcept { return pause_of(peer) > 0; }
  // A creditable receive from `peer` is posted: true if it goes uncredited (crediting is
  // paused), which uses up one receive of the pause.
  bool skip_credit(int peer) noexcept;
  // A credit given to `peer` was settled: used by a direct write, or void. Predicted mode only
  // (the posted mode credits every receive it can): checked every kWindow settled credits,
  // fewer than kMinUsed used among the last 64 pauses crediting the peer, for twice as long each
  // time in a row.
  void credit_outcome(int peer, bool used) noexcept;

  [[nodiscard]] bool predicting() const noexcept { return predictor_ != nullptr; }
  // A receive call posted (predicted mode): scores the last prediction against it and returns
  // the calls to stage credits for now, each creditable and from a peer not paused (valid until
  // the next call). A call too small to steer, or from a paused peer, is an abstention instead:
  // a prediction could not be used, so none is paid for. `layout` (a non-contiguous receive,
  // never credited): the call joins the predictor's history, with no size.
  Result<std::span<const predictor::RecvCall>> on_receive(const predictor::RecvCall& call, bool layout = false);
  // A receive call whose message is already here (MPI_Imrecv): nothing to predict.
  void abstain() noexcept;

  [[nodiscard]] const SteeringCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] const SteeringConfig& config() const noexcept { return cfg_; }
  // Distinct calls the predictor's tables hold before they start over (a program whose buffers
  // or counts never repeat would otherwise grow them by ~150 bytes a call).
  static constexpr std::size_t kMaxPredictedCalls = 4096;
  // Credit usefulness per peer (credit_outcome): a pause lasts kFirstPause receives, doubling up
  // to kMaxPause.
  static constexpr std::uint32_t kWindow = 16;
  static constexpr int kMinUsed = 4;
  static constexpr std::uint32_t kFirstPause = 256;
  static constexpr std::uint32_t kMaxPause = 1 << 16;
  // Prediction is suspended for kSuspendFor receives when fewer than kMinHits of the last 64 hit.
  static constexpr int kMinHits = 16;
  static constexpr std::uint32_t kSuspendFor = 1024;

 private:
  struct PeerCredits {
    std::uint64_t outcomes = 0;  // last credits settled, 1 = used
    std::uint32_t count = 0;
    std::uint32_t pause = 0;     // receives left uncredited
    std::uint32_t next_pause = 0;
  };
  explicit SteeringPolicy(const SteeringConfig& cfg) : cfg_(cfg) {}
  [[nodiscard]] std::uint32_t pause_of(int peer) const noexcept {
    return peer >= 0 && peer < cfg_.size ? peers_[static_cast<std::size_t>(peer)].pause : 0;
  }
  Status reset_predictor();
  Result<std::span<const predictor::RecvCall>> observe(const predictor::RecvCall& call);

  SteeringConfig cfg_;
  std::vector<PeerCredits> peers_;
  SteeringCounters counters_;
  std::unique_ptr<predictor::Predictor> predictor_;
  predictor::Interner interner_;
  std::vector<predictor::RecvCall> call_of_id_;
  std::vector<predictor::CallId> predicted_;  // the calls predicted for the next receive
  std::vector<predictor::RecvCall> to_stage_;
  std::uint64_t outcomes_ = 0;                // last 64 predictions, 1 = hit
  std::uint32_t outcome_count_ = 0;
  std::uint32_t suspended_for_ = 0;           // receives left before predicting again
};

}  // namespace augur::host
