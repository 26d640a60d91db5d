#include "augur/predictor/predictors.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

namespace augur::predictor {

namespace {

// A cycle that is an exact repetition of a shorter one is kept once: the initialization phase
// accepts "A B C A B C" (span 6) for a period-3 loop, and A B C predicts the same.
void shrink_to_period(std::vector<CallId>& c) {
  const std::size_t n = c.size();
  for (std::size_t d = 1; d < n; ++d) {
    if (n % d != 0) continue;
    bool periodic = true;
    for (std::size_t i = d; i < n && periodic; ++i) periodic = c[i] == c[i - d];
    if (periodic) {
      c.resize(d);
      return;
    }
  }
}

// Writes up to out.size() distinct ids of `cycle` starting at `pos`, wrapping once.
std::size_t distinct_from(const std::vector<CallId>& cycle, std::size_t pos,
                          std::span<CallId> out) noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < cycle.size() && n < out.size(); ++i) {
    const CallId c = cycle[(pos + i) % cycle.size()];
    if (std::find(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n), c) ==
        out.begin() + static_cast<std::ptrdiff_t>(n)) {
      out[n++] = c;
    }
  }
  return n;
}

}  // namespace

std::size_t Predictor::predict_k(SiteId site, std::span<CallId> out) const {
  const CallId c = predict(site);
  if (out.empty() || c == kNoCall) return 0;
  out[0] = c;
  return 1;
}

// ---------------------------------------------------------------------------- PositionMap

std::uint32_t& PositionMap::find_or_insert(CallId key, std::uint32_t value, bool* fresh) {
  if (2 * (size_ + 1) > keys_.size()) grow();  // load factor <= 1/2
  const std::size_t mask = keys_.size() - 1;
  std::size_t i = (key * std::size_t{0x9e3779b97f4a7c15ULL}) >> 32 & mask;
  while (keys_[i] != kNoCall && keys_[i] != key) i = (i + 1) & mask;
  *fresh = keys_[i] == kNoCall;
  if (*fresh) {
    keys_[i] = key;
    values_[i] = value;
    ++size_;
  }
  return values_[i];
}

void PositionMap::grow() {
  std::vector<CallId> old_keys(std::max<std::size_t>(16, 2 * keys_.size()), kNoCall);
  std::vector<std::uint32_t> old_values(old_keys.size());
  old_keys.swap(keys_);
  old_values.swap(values_);
  size_ = 0;
  bool fresh = false;
  for (std::size_t i = 0; i < old_keys.size(); ++i) {
    if (old_keys[i] != kNoCall) find_or_insert(old_keys[i], old_values[i], &fresh);
  }
}

void PositionMap::clear() noexcept {
  if (size_ == 0) return;
  std::fill(keys_.begin(), keys_.end(), kNoCall);
  size_ = 0;
}

// ---------------------------------------------------------------------------- CycleMachine

CycleMachine::CycleMachine(const Options& o)
    : offer_previous_(o.offer_previous_while_forming),
      resync_(o.resync),
      init_min_(o.init_min_length),
      max_cycle_(std::max<std::uint32_t>(o.max_cycle_length, o.init_min_length + 1)) {}

void CycleMachine::observe(CallId c) {
  switch (phase_) {
    case Phase::kStart:
      if (init_min_ == 0) {
        start_forming(c);
      } else {
        phase_ = Phase::kInit;
        init_step(c);
      }
      break;
    case Phase::kInit:
      init_step(c);
      break;
    case Phase::kResync: {
      // The miss at pos_ was noise if the calls since follow the cycle again: `skip_` calls
      // replaced (c is the one after them), or one inserted (c is the expected one).
      const std::size_t n = cycle_.size();
      const auto next = static_cast<std::uint32_t>((pos_ + skip_ + 1) % n);
      if (c == cycle_[next] || (skip_ == 0 && c == cycle_[pos_])) {
        if (skip_ == 0 && c == cycle_[next]) repair(log_[0]);
        const std::uint32_t at = c == cycle_[next] ? next : pos_;
        pos_ = at + 1 == n ? 0 : at + 1;
        phase_ = Phase::kPredicting;
        log_.clear();
        break;
      }
      if (++skip_ < kMaxSkip && skip_ + 1 < n) {
        log_.push_back(c);
        break;
      }
      phase_ = Phase::kForming;  // not noise: form a cycle from the miss as the paper does
      [[fallthrough]];
    }
    case Phase::kForming:
      if (c == log_[0]) {
        close(std::move(log_));
        log_.clear();
      } else if (log_.size() >= reform_limit()) {
        restart_init(c);  // the head is not coming back: look for any cycle again
      } else {
        log_.push_back(c);
      }
      break;
    case Phase::kPredicting:
      if (cycle_[pos_] == c) {
        pos_ = pos_ + 1 == cycle_.size() ? 0 : pos_ + 1;
      } else {
        start_forming(c);  // the call that caused the miss is the new cycle-head
        if (resync_ && cycle_.size() > 1) {
          phase_ = Phase::kResync;  // cycle_ and pos_ kept
          skip_ = 0;
        }
      }
      break;
  }
  prev_ = c;
}

// The same call replacing the same cycle entry twice in a row is the cycle's own error (it was
// formed around a noise call): the entry is corrected.
void CycleMachine::repair(CallId actual) {
  if (last_sub_pos_ == pos_ && last_sub_call_ == actual) {
    cycle_[pos_] = actual;
    last_sub_pos_ = kNoCall;
    return;
  }
  last_sub_pos_ = pos_;
  last_sub_call_ = actual;
}

void CycleMachine::start_forming(CallId head) {
  phase_ = Phase::kForming;
  log_.clear();
  log_.push_back(head);
  prev_ = head;
}

void CycleMachine::adopt(const std::vector<CallId>& cycle) {
  cycle_ = cycle;
  pos_ = cycle_.size() == 1 ? 0 : 1;
  phase_ = Phase::kPredicting;
  prev_ = cycle_[0];
}

// A cycle-head that does not recur (noise, or the tail of an initialization pattern) would stop
// the paper's predictor for good; after twice the longest cycle seen, the calls logged since the
// head go through the initialization phase instead, so any later loop is still found. Before any
// cycle was found (no initialization phase: the paper's ref. [13]) the head is waited for, as
// the paper's Figure 7 discussion says, up to max_cycle_length.
std::size_t CycleMachine::reform_limit() const noexcept {
  if (max_len_ == 0) return max_cycle_;
  return std::min<std::size_t>(max_cycle_, std::max<std::size_t>({2 * max_len_, 2 * init_min_, 16}));
}

void CycleMachine::restart_init(CallId c) {
  std::vector<CallId> logged;
  logged.swap(log_);
  clear_init();
  phase_ = init_min_ == 0 ? Phase::kStart : Phase::kInit;
  // Without the head, the replay is shorter than the limit and cannot come back here.
  for (std::size_t i = 1; i < logged.size(); ++i) observe(logged[i]);
  observe(c);
}

void CycleMachine::clear_init() noexcept {
  hist_.clear();
  prev_same_.clear();
  last_pos_.clear();
}

void CycleMachine::init_step(CallId c) {
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  if (hist_.size() >= max_cycle_) clear_init();  // bounded memory: look again from here
  const auto q = static_cast<std::uint32_t>(hist_.size());
  bool fresh = false;
  std::uint32_t& slot = last_pos_.find_or_insert(c, q, &fresh);
  const std::uint32_t last = fresh ? kNone : slot;
  // The latest earlier occurrence at least init_min_ calls back closes the shortest cycle that
  // is long enough; following the chain back stops within init_min_ steps.
  for (std::uint32_t p = last; p != kNone; p = prev_same_[p]) {
    if (q - p >= init_min_) {
      std::vector<CallId> cycle(hist_.begin() + p, hist_.end());
      clear_init();
      close(std::move(cycle));
      return;
    }
  }
  slot = q;
  hist_.push_back(c);
  prev_same_.push_back(last);
}

void CycleMachine::close(std::vector<CallId> cycle) {
  shrink_to_period(cycle);
  cycle_ = std::move(cycle);
  max_len_ = std::max(max_len_, cycle_.size());
  pos_ = cycle_.size() == 1 ? 0 : 1;  // cycle_[0] was just seen
  phase_ = Phase::kPredicting;
}

std::size_t CycleMachine::next_k(std::span<CallId> out) const noexcept {
  if (phase_ == Phase::kResync) return distinct_from(cycle_, (pos_ + skip_ + 1) % cycle_.size(), out);
  if (phase_ != Phase::kPredicting) {
    if (!offer_previous_ || prev_ == kNoCall || out.empty()) return 0;
    out[0] = prev_;
    return 1;
  }
  return distinct_from(cycle_, pos_, out);
}

// ---------------------------------------------------------------------------- WindowPredictor

WindowPredictor::WindowPredictor(WindowPolicy policy, std::size_t k)
    : policy_(policy), k_(std::max<std::size_t>(k, 1)) {
  ids_.reserve(k_);
  used_.reserve(k_);
  freq_.reserve(k_);
}

std::string_view WindowPredictor::name() const noexcept {
  switch (policy_) {
    case WindowPolicy::kLru: return "lru";
    case WindowPolicy::kFifo: return "fifo";
    case WindowPolicy::kLfu: return "lfu";
  }
  return "window";
}

// The entry to evict: least recent (LRU), oldest (FIFO), least used with ties going to the
// newest entry (LFU; evicting the oldest would make LFU FIFO on a loop, see docs).
std::size_t WindowPredictor::victim() const noexcept {
  std::size_t v = 0;
  for (std::size_t i = 1; i < ids_.size(); ++i) {
    if (policy_ == WindowPolicy::kLfu) {
      if (freq_[i] < freq_[v] || (freq_[i] == freq_[v] && used_[i] > used_[v])) v = i;
    } else if (used_[i] < used_[v]) {
      v = i;
    }
  }
  return v;
}

void WindowPredictor::observe(Event e) {
  if (e.call == kNoCall) return;
  ++clock_;
  if (e.call >= slot_.size()) slot_.resize(std::max<std::size_t>(e.call + 1, slot_.size() * 2), 0);
  if (const std::uint32_t s = slot_[e.call]; s != 0) {  // hit
    if (policy_ == WindowPolicy::kLru) used_[s - 1] = clock_;
    ++freq_[s - 1];
    return;
  }
  std::size_t s = ids_.size();
  if (s < k_) {
    ids_.push_back(e.call);
    used_.push_back(clock_);
    freq_.push_back(1);
  } else {
    s = victim();
    slot_[ids_[s]] = 0;
    ids_[s] = e.call;
    used_[s] = clock_;
    freq_[s] = 1;
  }
  slot_[e.call] = static_cast<std::uint32_t>(s + 1);
}

std::size_t WindowPredictor::predict_k(SiteId, std::span<CallId> out) const {
  // Most worth keeping first: the reverse of eviction order.
  std::vector<std::size_t> order(ids_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
    if (policy_ == WindowPolicy::kLfu && freq_[a] != freq_[b]) return freq_[a] > freq_[b];
    if (policy_ == WindowPolicy::kLfu) return used_[a] < used_[b];
    return used_[a] > used_[b];
  });
  const std::size_t n = std::min(out.size(), order.size());
  for (std::size_t i = 0; i < n; ++i) out[i] = ids_[order[i]];
  return n;
}

CallId WindowPredictor::predict(SiteId) const noexcept {
  if (ids_.empty()) return kNoCall;
  std::size_t b = 0;  // the first of predict_k's order, without allocating
  for (std::size_t i = 1; i < ids_.size(); ++i) {
    if (policy_ == WindowPolicy::kLfu) {
      if (freq_[i] > freq_[b] || (freq_[i] == freq_[b] && used_[i] < used_[b])) b = i;
    } else if (used_[i] > used_[b]) {
      b = i;
    }
  }
  return ids_[b];
}

// ---------------------------------------------------------------------------- Match

Match::Match(const Options& o)
    : min_(std::max<std::uint32_t>(o.match_min, 1)),
      mask_(std::bit_ceil(std::max<std::uint64_t>(o.match_history, 2 * o.match_min)) - 1),
      hist_(mask_ + 1, kNoCall),
      sites_hist_(mask_ + 1, kNoSite),
      table_(2 * (mask_ + 1), 0),
      votes_(table_.size(), 0),
      detour_(mask_ + 1, 0) {}

std::uint64_t Match::context_hash(std::uint32_t k) const noexcept {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL + k;
  for (std::uint64_t i = n_ - k; i < n_; ++i) {
    h = (h ^ hist_[i & mask_]) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
  }
  return h;
}

void Match::observe(Event e) {
  const CallId c = e.call;
  if (len_ > 0 && hist_[ptr_ & mask_] == c) {
    if (detour_[ptr_ & mask_]) knows_detour_ = true;
    ++ptr_;
    ++len_;
  } else if (len_ > 0 && ptr_ + 1 < n_ && hist_[(ptr_ + 1) & mask_] == c) {
    ptr_ += 2;  // the earlier run has one call more here (a noise call then): step over it
  } else if (len_ > 0) {
    len_ = 0;  // a miss: the earlier run is left, but remembered for one call (noise now?)
    lost_ = ptr_ + 1;
    replaced_ = 0;
  } else if (lost_ != 0) {
    // The call after a miss: the miss was noise if this is the run's expected call (one call
    // inserted) or the one after it (one call replaced). Resume without waiting for a context.
    // A run one call back has the miss itself after its expected call: that is a repeat (a
    // new loop starting, LU), not a replacement, hence at + 2 < n_.
    const std::uint64_t at = lost_ - 1;
    lost_ = 0;
    if (replaced_ == 0 && n_ - at < mask_ && hist_[at & mask_] == c) {
      ptr_ = at + 1;
      len_ = 1;
    } else if (n_ - at < mask_ && at + 2 < n_ && hist_[(at + 1) & mask_] == c) {
      ptr_ = at + 2;
      len_ = 1;
      // Replaced: the history keeps the expected call, so that runs which later follow this
      // stretch do not repeat the noise (the cycle predictors' repair, Resync).
      if (replaced_ == 0) {
        hist_[(n_ - 1) & mask_] = hist_[at & mask_];
        sites_hist_[(n_ - 1) & mask_] = sites_hist_[at & mask_];
      }
    } else if (replaced_ + 1 < kMaxReplaced && at + 2 < n_) {
      // This call replaced the run's next one too (MG's `6 7` for `4 5`): stay aligned.
      ++replaced_;
      lost_ = at + 2;
    }
    if (lost_ == 0) replaced_ = 0;
  }
  const bool outvoted = pending_ != 0 && vote(table_[pending_ - 1], votes_[pending_ - 1], c);
  if (prev_ != kNoCall) {
    if (prev_ >= succ_.size()) {
      const std::size_t n = std::max<std::size_t>(prev_ + 1, 2 * succ_.size());
      succ_.resize(n, kNoCall);
      succ_votes_.resize(n, 0);
    }
    CallId& s = succ_[prev_];
    if (s == kNoCall) ++succ_entries_;
    // One other successor does not displace a usual one (MG's extra exchange).
    if (keep_or_replace(s != kNoCall, s == c, succ_votes_[prev_])) s = c;
  }
  prev_ = c;
  if (e.site != kNoSite) {
    if (e.site >= at_site_.size()) {
      const std::size_t n = std::max<std::size_t>(e.site + 1, 2 * at_site_.size());
      at_site_.resize(n, kNoCall);
      site_same_.resize(n, 0);
    }
    std::uint8_t& same = site_same_[e.site];
    if (at_site_[e.site] == kNoCall) {
      ++sites_;
      same = 1;
    } else if (same != 0) {
      same = at_site_[e.site] == c ? static_cast<std::uint8_t>(std::min(same + 1, 255)) : 0;
    }
    at_site_[e.site] = c;
  }
  hist_[n_ & mask_] = c;
  sites_hist_[n_ & mask_] = e.site;
  detour_[n_ & mask_] = outvoted ? 1 : 0;
  ++n_;
  if (n_ >= min_) {
    const std::uint32_t k = min_;
    const std::uint64_t h = context_hash(k);
    const std::size_t idx = h & (table_.size() - 1);
    const std::uint64_t slot = table_[idx];
    const bool live = slot != 0 && n_ - (slot - 1) < mask_;
    if (live && (len_ == 0 || table_beats_run(idx))) {
      // Verify: a table slot is shared by contexts with the same hash bits.
      const std::uint64_t at = slot - 1;
      bool same = true;
      for (std::uint32_t j = 1; j <= k && same; ++j) same = hist_[(at - j) & mask_] == hist_[(n_ - j) & mask_];
      if (same) {
        ptr_ = at;
        len_ = k;
        lost_ = 0;
        // A run whose context holds a detour aligned one detour with another: it may follow
        // the next (a periodic insertion).
        knows_detour_ = false;
        for (std::uint32_t j = 1; j <= k; ++j) knows_detour_ = knows_detour_ || detour_[(at - j) & mask_] != 0;
      }
    }
    pending_ = idx + 1;  // the next call votes on the run this context selects
  }
  if (len_ > 0) {
    pred_ = hist_[ptr_ & mask_];
    guessed_ = false;
  } else {
    pred_ = c < succ_.size() ? succ_[c] : kNoCall;
    // Just after a miss by a call never followed before: guess it replaced the expected one.
    guessed_ = pred_ == kNoCall && lost_ != 0 && lost_ < n_ && n_ - lost_ < mask_;
    if (guessed_) pred_ = hist_[lost_ & mask_];
  }
}

// While a run is followed, the table entry of the latest context (live, `idx`) may select
// another earlier occurrence whose next call differs. The run gives way when that occurrence
// agrees with the recent calls at least as far back as the run has (longest match; a tie goes
// to the voted entry), or when the run is about to follow a detour the entry's vote kept out
// and the run has not seen a detour recur (MG's one-off extra exchange, met again by a run that
// started just before it). Runs of kMaxAgree calls or more are not second-guessed: they carry
// the longer period.
bool Match::table_beats_run(std::size_t idx) const noexcept {
  const std::uint64_t at = table_[idx] - 1;
  if (len_ >= kMaxAgree || hist_[at & mask_] == hist_[ptr_ & mask_]) return false;
  std::uint64_t j = 1;
  while (j <= len_ && j <= at && n_ - (at - j) <= mask_ && hist_[(at - j) & mask_] == hist_[(n_ - j) & mask_]) ++j;
  if (j > len_) return true;
  return votes_[idx] >= kMaxVotes && detour_[ptr_ & mask_] != 0 && !knows_detour_;
}

// The call after a context votes on which earlier occurrence of it the context selects: the
// newest that the program followed, kept against kMaxVotes - 1 calls that went elsewhere.
// Recency alone follows a one-off detour the next time the context recurs. True when the call
// was kept out (a detour).
bool Match::vote(std::uint64_t& slot, std::uint8_t& votes, CallId c) const noexcept {
  const bool live = slot != 0 && n_ - (slot - 1) < mask_;
  // Agreeing, the newest occurrence that went the same way replaces the older one too.
  const bool agrees = live && hist_[(slot - 1) & mask_] == c;
  if (keep_or_replace(live, agrees, votes) || agrees) {
    slot = n_ + 1;
    return false;
  }
  return true;
}

// The voting rule of both: an entry that agrees gains a vote (up to kMaxVotes), one that does not
// loses one, and is replaced (true) when it had only one or held nothing.
bool Match::keep_or_replace(bool held, bool agrees, std::uint8_t& votes) noexcept {
  if (held && agrees) {
    votes = std::min<std::uint8_t>(votes + 1, kMaxVotes);
    return false;
  }
  if (held && votes > 1) {
    --votes;
    return false;
  }
  votes = 1;
  return true;
}

std::size_t Match::predict_k(SiteId site, std::span<CallId> out) const {
  if (len_ == 0) return Predictor::predict_k(site, out);
  // Along the earlier run from the matched position: the calls the program made next then.
  std::size_t k = 0;
  for (std::uint64_t p = ptr_; p < n_ && k < out.size() && p - ptr_ < 4 * out.size() + 8; ++p) {
    const CallId c = hist_[p & mask_];
    if (std::find(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k), c) == out.begin() + static_cast<std::ptrdiff_t>(k)) {
      out[k++] = c;
    }
  }
  return k;
}

std::size_t Match::memory_tuples() const noexcept {
  return std::min<std::uint64_t>(n_, mask_ + 1) + succ_entries_ + sites_;
}

// ---------------------------------------------------------------------------- SingleCycle

SingleCycle::SingleCycle(const Options& o, std::size_t top_k)
    : m_(o),
      top_k_(std::max<std::size_t>(top_k, 1)) {}

std::string_view SingleCycle::name() const noexcept {
  return top_k_ > 1 ? "top-k" : "single-cycle";
}

bool SingleCycle::covers(Event next) const noexcept {
  if (top_k_ == 1) return next.call != kNoCall && m_.predict() == next.call;
  std::array<CallId, 64> buf{};
  const std::size_t n = m_.next_k(std::span<CallId>(buf).first(std::min<std::size_t>(top_k_, 64)));
  return std::find(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n), next.call) !=
         buf.begin() + static_cast<std::ptrdiff_t>(n);
}

std::size_t SingleCycle::predict_k(SiteId, std::span<CallId> out) const {
  return m_.next_k(out);
}

// ---------------------------------------------------------------------------- Tagging

void Tagging::observe(Event e) {
  if (e.site == kNoSite) return;
  if (e.site >= last_.size()) last_.resize(e.site + 1, kNoCall);
  if (last_[e.site] == kNoCall) ++tags_;
  last_[e.site] = e.call;
}

// ---------------------------------------------------------------------------- TagCycle

TagCycle::TagCycle(const Options& o, bool better) : opts_(o), better_(better) {}

void TagCycle::observe(Event e) {
  if (e.site == kNoSite) return;
  while (tags_.size() <= e.site) tags_.emplace_back(opts_);
  Tag& t = tags_[e.site];
  if (!t.used) {
    t.used = true;
    ++ntags_;
  }
  if (!better_ || !t.m.predicting() || t.m.predict() == e.call) {
    t.m.observe(e.call);
    return;
  }
  // Tag-bettercycle miss: keep the broken cycle under its head; resume the new head's old cycle.
  const std::vector<CallId>& broken = t.m.cycle();
  t.heads[broken[0]] = broken;
  max_heads_ = std::max(max_heads_, t.heads.size());
  if (auto it = t.heads.find(e.call); it != t.heads.end()) {
    t.m.adopt(it->second);
  } else {
    t.m.observe(e.call);  // a miss while predicting: forms a cycle from e.call (or resyncs)
  }
}

std::size_t TagCycle::memory_tuples() const noexcept {
  std::size_t longest = 0;
  for (const Tag& t : tags_) longest = std::max(longest, t.m.max_length());
  // Table I, formulas (3) and (4).
  return ntags_ * longest * (better_ ? max_heads_ : 1);
}

std::size_t TagCycle::predict_k(SiteId site, std::span<CallId> out) const {
  return site < tags_.size() ? tags_[site].m.next_k(out) : 0;
}

// ---------------------------------------------------------------------------- TwoLevel

TwoLevel::TwoLevel(const Options& o) : inner_(o, /*better=*/true) {}

CallId TwoLevel::predict(SiteId) const noexcept {
  if (last_ >= next_site_.size()) return kNoCall;
  const SiteId s = next_site_[last_];
  return s == kNoSite ? kNoCall : inner_.predict(s);
}

void TwoLevel::observe(Event e) {
  if (last_ != kNoCall) {
    if (last_ >= next_site_.size()) next_site_.resize(std::max<std::size_t>(last_ + 1, 2 * next_site_.size()), kNoSite);
    if (next_site_[last_] == kNoSite) ++entries_;
    next_site_[last_] = e.site;
  }
  last_ = e.call;
  inner_.observe(e);
}

std::size_t TwoLevel::memory_tuples() const noexcept {
  // The site table holds one (call, site) pair per call: counted as one tuple each.
  return entries_ + inner_.memory_tuples();
}

// ---------------------------------------------------------------------------- Adaptive

Adaptive::Adaptive(const Options& o)
    : mask_(o.adaptive_history >= 64 ? ~std::uint64_t{0}
                                     : (std::uint64_t{1} << std::max<std::uint32_t>(o.adaptive_history, 1)) - 1),
      history_(std::clamp<std::uint32_t>(o.adaptive_history, 1, 64)),
      threshold_(o.adaptive_threshold) {
  comps_.push_back(std::make_unique<SingleCycle>(o));
  comps_.push_back(std::make_unique<TagCycle>(o, /*better=*/true));
  comps_.push_back(std::make_unique<TagCycle>(o, /*better=*/false));
  comps_.push_back(std::make_unique<Tagging>());
  comps_.push_back(std::make_unique<TwoLevel>(o));
  outcomes_.assign(comps_.size(), 0);
}

CallId Adaptive::predict(SiteId site) const noexcept {
  return confident_ ? comps_[best_]->predict(site) : kNoCall;
}

void Adaptive::observe(Event e) {
  int best_hits = -1;
  for (std::size_t i = 0; i < comps_.size(); ++i) {
    const bool hit = comps_[i]->covers(e);
    outcomes_[i] = ((outcomes_[i] << 1) | (hit ? 1U : 0U)) & mask_;
    comps_[i]->observe(e);
    const int hits = std::popcount(outcomes_[i]);
    if (hits > best_hits) {  // ties go to the earlier (cheaper) component
      best_hits = hits;
      best_ = i;
    }
  }
  if (seen_ < history_) ++seen_;
  // Judged over the calls seen so far once there are a few (8), so one early lucky hit does not
  // make it confident and a short trace is not all abstentions.
  confident_ = seen_ >= std::min<std::uint32_t>(history_, 8) &&
               static_cast<double>(best_hits) >= threshold_ * static_cast<double>(seen_);
}

std::size_t Adaptive::memory_tuples() const noexcept {
  std::size_t m = 0;
  for (const auto& c : comps_) m += c->memory_tuples();
  return m;
}

}  // namespace augur::predictor
