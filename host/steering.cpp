// SteeringPolicy (see host/augur/host/steering.h; the rules are in docs/runtime.md, "Direct
// placement and steering").

#include "augur/host/steering.h"

#include <algorithm>
#include <bit>

namespace augur::host {

Result<SteeringPolicy> SteeringPolicy::create(const SteeringConfig& cfg) {
  if (cfg.size < 1 || cfg.rank < 0 || cfg.rank >= cfg.size) {
    return Status(Code::kInvalidArgument, "steering: rank " + std::to_string(cfg.rank) + " of " + std::to_string(cfg.size));
  }
  SteeringPolicy p(cfg);
  p.peers_.resize(static_cast<std::size_t>(cfg.size));
  if (predicts(cfg.mode)) {
    AUGUR_RETURN_IF_ERROR(p.reset_predictor());
    p.predicted_.reserve(std::max<std::uint32_t>(1, cfg.predict_depth));
    p.to_stage_.reserve(std::max<std::uint32_t>(1, cfg.predict_depth));
  }
  return p;
}

Status SteeringPolicy::reset_predictor() {
  predictor::Options o;
  o.window = std::max<std::uint32_t>(1, cfg_.predict_depth);
  AUGUR_ASSIGN_OR_RETURN(predictor_, predictor::make_predictor(cfg_.predictor, o));
  interner_ = predictor::Interner{};
  call_of_id_ = {};  // clear() would keep its capacity
  predicted_.clear();
  return Status::Ok();
}

bool SteeringPolicy::skip_credit(int peer) noexcept {
  if (peer < 0 || peer >= cfg_.size) return false;
  PeerCredits& p = peers_[static_cast<std::size_t>(peer)];
  if (p.pause == 0) return false;
  --p.pause;
  return true;
}

void SteeringPolicy::credit_outcome(int peer, bool used) noexcept {
  if (!predicts(cfg_.mode) || peer < 0 || peer >= cfg_.size) return;
  PeerCredits& p = peers_[static_cast<std::size_t>(peer)];
  p.outcomes = p.outcomes << 1 | (used ? 1u : 0u);
  if (++p.count < kWindow) return;
  p.count = 0;
  if (std::popcount(p.outcomes) >= kMinUsed) {
    p.next_pause = 0;
    return;
  }
  p.pause = p.next_pause == 0 ? kFirstPause : p.next_pause;
  p.next_pause = std::min(kMaxPause, p.pause * 2);
  ++counters_.credit_pauses;
}

void SteeringPolicy::abstain() noexcept {
  if (!predicting()) return;
  ++counters_.pred_abstains;
  // The predictor never sees this call: what it predicted is still for the next call it will
  // see, and is scored there (clearing it scored every receive after a small one as abstained).
}

Result<std::span<const predictor::RecvCall>> SteeringPolicy::on_receive(const predictor::RecvCall& call, bool layout) {
  if (!predicting()) return std::span<const predictor::RecvCall>();
  if (!layout && (!steerable(call.count) || (call.source != cfg_.rank && paused(call.source)))) {
    abstain();
    return std::span<const predictor::RecvCall>();
  }
  return observe(call);
}

Result<std::span<const predictor::RecvCall>> SteeringPolicy::observe(const predictor::RecvCall& call) {
  to_stage_.clear();
  // Buffers that never repeat (fresh allocations) would grow the tables without end: start over.
  if (call_of_id_.size() >= kMaxPredictedCalls) AUGUR_RETURN_IF_ERROR(reset_predictor());
  const predictor::Event ev = interner_.intern(call);
  if (ev.call == call_of_id_.size()) call_of_id_.push_back(call);
  // Score the prediction made before this call.
  if (predicted_.empty()) {
    ++counters_.pred_abstains;
  } else {
    const bool hit = std::find(predicted_.begin(), predicted_.end(), ev.call) != predicted_.end();
    ++(hit ? counters_.pred_hits : counters_.pred_misses);
    outcomes_ = outcomes_ << 1 | (hit ? 1u : 0u);
    if (++outcome_count_ >= 64) {
      // Prediction that stays wrong costs registrations and credits for nothing: pause it.
      if (std::popcount(outcomes_) < kMinHits) {
        suspended_for_ = kSuspendFor;
        ++counters_.pred_suspended;
      }
      outcome_count_ = 0;
    }
  }
  predictor_->observe(ev);
  predicted_.clear();
  if (suspended_for_ > 0) {
    --suspended_for_;
    return std::span<const predictor::RecvCall>();
  }
  predicted_.resize(std::max<std::uint32_t>(1, cfg_.predict_depth));
  predicted_.resize(predictor_->predict_k(predictor::kNoSite, predicted_));
  for (predictor::CallId id : predicted_) {
    if (id >= call_of_id_.size()) continue;
    const predictor::RecvCall& c = call_of_id_[id];
    if ((creditable(c.count, c.source, c.tag) || landable(c.count, c.source, c.tag)) && c.source < cfg_.size &&
        !paused(c.source)) {
      to_stage_.push_back(c);
    }
  }
  return std::span<const predictor::RecvCall>(to_stage_);
}

}  // namespace augur::host
