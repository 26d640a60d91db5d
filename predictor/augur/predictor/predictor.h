// The predictor interface and the factory that builds one by its command-line name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "augur/predictor/call.h"
#include "augur/status.h"

namespace augur::predictor {

struct Options {
  // k: the set size of lru/fifo/lfu, and how many calls top-k names.
  std::size_t window = 4;
  // The initialization phase: the first cycle must span at least this many calls (the paper's
  // "length greater than 5"). 0 turns it off: the first call is the cycle-head, as in the paper's
  // earlier predictors (its ref. [13]).
  std::uint32_t init_min_length = 6;
  // While a cycle forms, offer the previous call instead of abstaining (the prose of Sec. 6.1;
  // the default follows Figure 6, where forming shows a dash). See docs/predictor.md.
  bool offer_previous_while_forming = false;
  // augur: after a miss, predict that the miss was noise (one call replaced or inserted) and
  // resume the broken cycle if the next call says so; otherwise form a cycle as the paper does.
  bool resync = false;
  // Bound on any cycle and on the initialization history (memory). A cycle-head is given up
  // sooner: when it has not recurred after twice the longest cycle seen (at least 16 calls).
  std::uint32_t max_cycle_length = 8192;
  // adaptive: outcomes remembered per component (<= 64) and the accuracy below which it abstains.
  std::uint32_t adaptive_history = 32;
  double adaptive_threshold = 0.5;
  // match: how many of the latest calls must recur together before what followed them is
  // followed (6: the paper's "cycle longer than 5"), and the calls of history kept (rounded up to
  // a power of two; 1024 holds the longest loop bodies of the NAS traces, docs/predictor.md).
  std::uint32_t match_min = 6;
  std::uint32_t match_history = 1024;
};

class Predictor {
 public:
  virtual ~Predictor() = default;
  Predictor() = default;
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  // The next call, or kNoCall to abstain. `site` is the pre-receive hint of the next call
  // (kNoSite if none); only the tag-based predictors read it.
  [[nodiscard]] virtual CallId predict(SiteId site) const noexcept = 0;
  // Whether `next` is a hit: inside the predicted set for the window and top-k predictors,
  // equal to predict() for the others.
  [[nodiscard]] virtual bool covers(Event next) const noexcept {
    return next.call != kNoCall && predict(next.site) == next.call;
  }
  // Whether any prediction is offered for the next call (coverage counts these).
  [[nodiscard]] virtual bool offers(SiteId site) const noexcept { return predict(site) != kNoCall; }
  virtual void observe(Event e) = 0;
  // Storage in 6-tuples, counted by the formulas of the paper's Table I.
  [[nodiscard]] virtual std::size_t memory_tuples() const noexcept = 0;
  // Up to out.size() distinct next calls, most likely first (for staging several buffers).
  virtual std::size_t predict_k(SiteId site, std::span<CallId> out) const;
};

// Names accepted by make_predictor: the paper's seven, then augur's additions.
std::span<const std::string_view> predictor_names() noexcept;
// True for the predictors that may abstain (coverage/precision are reported for them).
bool abstains(std::string_view name) noexcept;
Result<std::unique_ptr<Predictor>> make_predictor(std::string_view name, const Options& opts);

}  // namespace augur::predictor
