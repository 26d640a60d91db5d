// The concrete predictors. Each is one process's predictor; none is thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "augur/predictor/predictor.h"

namespace augur::predictor {

// CallId -> position, open addressing: the initialization phase does one look-up per call, and a
// node-based map costs several times more there (see docs/predictor.md, Cost).
class PositionMap {
 public:
  // The slot of `key`, inserting it with `value` if absent; `*fresh` says which.
  std::uint32_t& find_or_insert(CallId key, std::uint32_t value, bool* fresh);
  void clear() noexcept;

 private:
  void grow();
  std::vector<CallId> keys_;  // kNoCall: empty
  std::vector<std::uint32_t> values_;
  std::size_t size_ = 0;
};

// The cycle discovery of the paper's Sec. 6.1 over any id sequence. Phases: initialization (the
// first cycle spanning >= init_min_length calls; the one that closes first wins), prediction
// (walk the cycle), forming (after a miss: log from the cycle-head until it recurs). With
// `resync`, the call after a miss is first predicted as the broken cycle's next one (augur).
class CycleMachine {
 public:
  explicit CycleMachine(const Options& o);

  [[nodiscard]] CallId predict() const noexcept {
    if (phase_ == Phase::kPredicting) return cycle_[pos_];
    if (phase_ == Phase::kResync) return cycle_[(pos_ + skip_ + 1) % cycle_.size()];
    return offer_previous_ ? prev_ : kNoCall;
  }
  [[nodiscard]] bool predicting() const noexcept { return phase_ == Phase::kPredicting; }
  void observe(CallId c);
  // Tag-bettercycle: resume a remembered cycle whose head (cycle[0]) was just seen.
  void adopt(const std::vector<CallId>& cycle);
  [[nodiscard]] const std::vector<CallId>& cycle() const noexcept { return cycle_; }
  // Longest cycle ever held: the paper's "maximum cycle length".
  [[nodiscard]] std::size_t max_length() const noexcept { return max_len_; }
  // Up to out.size() distinct calls along the cycle from the next one.
  std::size_t next_k(std::span<CallId> out) const noexcept;

 private:
  enum class Phase : std::uint8_t { kStart, kInit, kForming, kResync, kPredicting };
  void start_forming(CallId head);
  void init_step(CallId c);
  void clear_init() noexcept;
  void close(std::vector<CallId> cycle);
  void restart_init(CallId c);
  void repair(CallId actual);
  [[nodiscard]] std::size_t reform_limit() const noexcept;

  Phase phase_ = Phase::kStart;
  bool offer_previous_;
  bool resync_;
  std::uint32_t init_min_;
  std::uint32_t max_cycle_;
  std::uint32_t pos_ = 0;
  static constexpr std::uint32_t kMaxSkip = 3;  // resync: up to this many calls replaced
  std::uint32_t skip_ = 0;
  std::uint32_t last_sub_pos_ = kNoCall;
  CallId last_sub_call_ = kNoCall;
  CallId prev_ = kNoCall;
  std::size_t max_len_ = 0;
  std::vector<CallId> cycle_;
  std::vector<CallId> log_;  // forming: log_[0] is the cycle-head
  // Initialization phase only: the calls so far, each one's previous position, and the last
  // position of every call (one hash look-up per call).
  std::vector<CallId> hist_;
  std::vector<std::uint32_t> prev_same_;
  PositionMap last_pos_;
};

enum class WindowPolicy : std::uint8_t { kLru, kFifo, kLfu };

// LRU/FIFO/LFU: a set of k unique calls; a hit if the next call is in it (Sec. 5.2).
class WindowPredictor final : public Predictor {
 public:
  WindowPredictor(WindowPolicy policy, std::size_t k);
  [[nodiscard]] std::string_view name() const noexcept override;
  [[nodiscard]] CallId predict(SiteId site) const noexcept override;
  [[nodiscard]] bool covers(Event next) const noexcept override {
    return next.call < slot_.size() && slot_[next.call] != 0;
  }
  [[nodiscard]] bool offers(SiteId) const noexcept override { return !ids_.empty(); }
  void observe(Event e) override;
  [[nodiscard]] std::size_t memory_tuples() const noexcept override { return k_; }
  std::size_t predict_k(SiteId site, std::span<CallId> out) const override;

 private:
  [[nodiscard]] std::size_t victim() const noexcept;
  WindowPolicy policy_;
  std::size_t k_;
  std::uint64_t clock_ = 0;
  std::vector<CallId> ids_;            // the set, by slot
  std::vector<std::uint64_t> used_;    // LRU: last use; FIFO and LFU: insertion time
  std::vector<std::uint64_t> freq_;    // LFU: uses while in the set
  std::vector<std::uint32_t> slot_;    // by CallId: slot + 1, 0 if absent
};

// Single-cycle (Sec. 6.1); with top_k > 1 it is augur's top-k: a hit if the next call is among
// the next k distinct calls of the cycle.
class SingleCycle final : public Predictor {
 public:
  SingleCycle(const Options& o, std::size_t top_k = 1);
  [[nodiscard]] std::string_view name() const noexcept override;
  [[nodiscard]] CallId predict(SiteId) const noexcept override { return m_.predict(); }
  [[nodiscard]] bool covers(Event next) const noexcept override;
  void observe(Event e) override { m_.observe(e.call); }
  [[nodiscard]] std::size_t memory_tuples() const noexcept override { return m_.max_length(); }
  std::size_t predict_k(SiteId site, std::span<CallId> out) const override;

 private:
  CycleMachine m_;
  std::size_t top_k_;
};

// Tagging (Sec. 6.2): the call last seen at each site.
class Tagging final : public Predictor {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return "tagging"; }
  [[nodiscard]] CallId predict(SiteId site) const noexcept override {
    return site < last_.size() ? last_[site] : kNoCall;
  }
  void observe(Event e) override;
  [[nodiscard]] std::size_t memory_tuples() const noexcept override { return tags_; }

 private:
  std::vector<CallId> last_;
  std::size_t tags_ = 0;
};

// Tag-cycle (Sec. 6.3) and Tag-bettercycle (Sec. 6.4): a cycle machine per site; the better one
// remembers the last cycle of every cycle-head and resumes it when that head causes a miss.
class TagCycle final : public Predictor {
 public:
  TagCycle(const Options& o, bool better);
  [[nodiscard]] std::string_view name() const noexcept override {
    return better_ ? "tag-bettercycle" : "tag-cycle";
  }
  [[nodiscard]] CallId predict(SiteId site) const noexcept override {
    return site < tags_.size() ? tags_[site].m.predict() : kNoCall;
  }
  void observe(Event e) override;
  [[nodiscard]] std::size_t memory_tuples() const noexcept override;
  std::size_t predict_k(SiteId site, std::span<CallId> out) const override;
  // Most cycle-heads remembered at one site (the paper found at most two).
  [[nodiscard]] std::size_t max_heads() const noexcept { return max_heads_; }

 private:
  struct Tag {
    explicit Tag(const Options& o) : m(o) {}
    CycleMachine m;
    bool used = false;
    std::unordered_map<CallId, std::vector<CallId>> heads;  // better only
  };
  Options opts_;
  bool better_;
  std::size_t ntags_ = 0;
  std::size_t max_heads_ = 1;
  std::vector<Tag> tags_;
};

// Two-level (augur, the paper's Sec. 7 future work): the first level predicts the next call site
// as the site that followed the current call last time (a receive's successor in the program is
// fixed in a loop); Tag-bettercycle is then asked with that site, so no pre-receive hint is needed.
class TwoLevel final : public Predictor {
 public:
  explicit TwoLevel(const Options& o);
  [[nodiscard]] std::string_view name() const noexcept override { return "two-level"; }
  [[nodiscard]] CallId predict(SiteId) const noexcept override;
  void observe(Event e) override;
  [[nodiscard]] std::size_t memory_tuples() const noexcept override;

 private:
  std::vector<SiteId> next_site_;  // by CallId
  std::size_t entries_ = 0;
  CallId last_ = kNoCall;
  TagCycle inner_;
};

// Match (augur): follows the program's own history. When the last `match_min` calls occurred
// before, it predicts the call that followed them then, and keeps following that earlier run
// while the calls agree; a miss drops the match and the next recurring context finds a new one
// (the most recent). Nested loops, phases and cycles of any length need no special case. Until a
// context recurs it offers the call that followed the current one last time.
class Match final : public Predictor {
 public:
  explicit Match(const Options& o);
  [[nodiscard]] std::string_view name() const noexcept override { return "match"; }
  // With a pre-receive hint, a match whose next call was made at another site is about to break:
  // the call last made at the announced site is offered instead (Tagging's reading).
  // Without a run, the successor guess gives way to the announced site's call when that site
  // has made only that call, more than once (LU's receives: one call per site); the weaker
  // guess that a miss replaced the run's call gives way when the site made it once.
  [[nodiscard]] CallId predict(SiteId site) const noexcept override {
    if (site >= at_site_.size() || at_site_[site] == kNoCall) return pred_;
    if (len_ > 0) return sites_hist_[ptr_ & mask_] == site ? pred_ : at_site_[site];
    if (pred_ == kNoCall || site_same_[site] >= (guessed_ ? 1 : 2)) return at_site_[site];
    return pred_;
  }
  void observe(Event e) override;
  [[nodiscard]] std::size_t memory_tuples() const noexcept override;
  std::size_t predict_k(SiteId site, std::span<CallId> out) const override;

 private:
  [[nodiscard]] std::uint64_t context_hash(std::uint32_t k) const noexcept;
  bool vote(std::uint64_t& slot, std::uint8_t& votes, CallId c) const noexcept;
  [[nodiscard]] bool table_beats_run(std::size_t idx) const noexcept;
  static bool keep_or_replace(bool held, bool agrees, std::uint8_t& votes) noexcept;
  static constexpr std::uint8_t kMaxVotes = 2;
  std::uint32_t min_;
  std::uint64_t mask_;          // history ring
  std::vector<CallId> hist_;
  std::vector<SiteId> sites_hist_;  // the site of each call in hist_
  std::uint64_t n_ = 0;         // calls seen
  std::uint64_t ptr_ = 0;       // while matching: the position whose call is predicted
  std::uint32_t len_ = 0;       // current match length (0: none)
  std::uint64_t lost_ = 0;      // after a miss: the position the run expected + 1 (0: none)
  std::uint32_t replaced_ = 0;  // after a miss: further calls that replaced the run's one for one
  static constexpr std::uint32_t kMaxReplaced = 2;  // calls in a row that may replace the run's
  static constexpr std::uint32_t kMaxAgree = 64;    // table_beats_run()
  std::vector<std::uint64_t> table_;  // context hash -> position after it + 1
  std::vector<std::uint8_t> votes_;   // per table_ entry: its support (vote())
  std::vector<std::uint8_t> detour_;  // by position: a call its context's vote kept out
  bool knows_detour_ = false;         // the run has aligned one detour with another
  std::size_t pending_ = 0;           // table_ index + 1 of the latest context, voted on next
  std::vector<CallId> succ_;    // by CallId: the call that usually follows it
  std::vector<std::uint8_t> succ_votes_;
  std::size_t succ_entries_ = 0;
  std::vector<CallId> at_site_;  // by SiteId: the call last made there (used with a site hint)
  // by SiteId: how many times its one call was made there (saturating; 0 once another was)
  std::vector<std::uint8_t> site_same_;
  std::size_t sites_ = 0;
  CallId pred_ = kNoCall;
  bool guessed_ = false;  // pred_ is the call a miss may have replaced, not a successor
  CallId prev_ = kNoCall;
};

// Adaptive (augur): runs the exact predictors side by side, follows the one with the most hits
// over the last `adaptive_history` calls, and abstains while even that one is below threshold.
class Adaptive final : public Predictor {
 public:
  explicit Adaptive(const Options& o);
  [[nodiscard]] std::string_view name() const noexcept override { return "adaptive"; }
  [[nodiscard]] CallId predict(SiteId site) const noexcept override;
  void observe(Event e) override;
  [[nodiscard]] std::size_t memory_tuples() const noexcept override;
  // Index into components() of the one followed now, or -1 while abstaining.
  [[nodiscard]] int followed() const noexcept { return confident_ ? static_cast<int>(best_) : -1; }
  [[nodiscard]] std::span<const std::unique_ptr<Predictor>> components() const noexcept {
    return comps_;
  }

 private:
  std::vector<std::unique_ptr<Predictor>> comps_;
  std::vector<std::uint64_t> outcomes_;  // per component, bit i: hit i calls ago
  std::uint64_t mask_;
  std::uint32_t history_;
  std::uint32_t seen_ = 0;
  double threshold_;
  std::size_t best_ = 0;
  bool confident_ = false;
};

}  // namespace augur::predictor
