// MPI message matching: the posted-receive queue and the unexpected-message queue.
//
// Rules (MPI-3.1 §3.5): a receive pattern (context, source or ANY_SOURCE, tag or ANY_TAG) matches
// a message envelope (context, source, tag). An arriving message takes the *earliest posted*
// matching receive; a newly posted receive takes the *earliest arrived* matching message. With
// messages fed in the order each sender sent them (RC is in order per peer), this gives
// non-overtaking per (source, communicator), and receives complete in the order posted.
//
// Queues are binned per context and per source, with one ANY_SOURCE bin per context; sequence
// numbers decide between bins, so wildcards cost a comparison, not a scan of every receive.
// RecvT and MsgT are the engine's handles (request pointers, bounce-slot indices...).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <utility>

namespace augur::host {

inline constexpr std::int32_t kAnySource = -1;
inline constexpr std::int32_t kAnyTag = -1;

struct Envelope {  // of a message: concrete source and tag
  std::uint32_t context = 0;
  std::int32_t source = 0;
  std::int32_t tag = 0;
};

struct Pattern {  // of a receive: source and tag may be wildcards
  std::uint32_t context = 0;
  std::int32_t source = kAnySource;
  std::int32_t tag = kAnyTag;
  [[nodiscard]] bool tag_matches(std::int32_t t) const noexcept { return tag == kAnyTag || tag == t; }
  [[nodiscard]] bool matches(const Envelope& e) const noexcept {
    return context == e.context && (source == kAnySource || source == e.source) && tag_matches(e.tag);
  }
};

template <typename RecvT, typename MsgT>
class MatchQueues {
 public:
  MatchQueues() = default;
  MatchQueues(const MatchQueues&) = delete;  // the context cache points into this object's map
  MatchQueues& operator=(const MatchQueues&) = delete;

  struct Matched {
    Envelope envelope;
    MsgT msg;
  };

  // Posts a receive. Returns the earliest-arrived matching unexpected message (removed from the
  // queue), or queues the receive and returns nothing.
  std::optional<Matched> post(const Pattern& p, RecvT recv) {
    if (unexpected_count_ > 0) {
      if (auto m = take_unexpected(p)) return m;
    }
    Ctx& c = ctx(p.context);
    auto& bin = p.source == kAnySource ? c.posted_any : c.posted[p.source];
    bin.push_back(Posted{next_post_++, p, std::move(recv)});
    ++posted_count_;
    return std::nullopt;
  }

  // A message arrived. Returns the earliest-posted matching receive (removed), or queues the
  // message as unexpected and returns nothing. `msg` is moved from only when it is queued: a
  // matched message stays with the caller, uncopied.
  std::optional<RecvT> arrive(const Envelope& e, const MsgT& msg) { return arrive(e, MsgT(msg)); }
  std::optional<RecvT> arrive(const Envelope& e, MsgT&& msg) {
    Ctx& c = ctx(e.context);
    if (posted_count_ == 0) return queue_unexpected(c, e, std::move(msg));
    auto src_it = c.posted.find(e.source);
    auto* by_src = src_it == c.posted.end() ? nullptr : &src_it->second;
    auto a = by_src ? first_posted(*by_src, e.tag) : typename std::deque<Posted>::iterator{};
    auto b = first_posted(c.posted_any, e.tag);
    const bool have_a = by_src && a != by_src->end();
    const bool have_b = b != c.posted_any.end();
    if (have_a || have_b) {
      auto& bin = (have_a && (!have_b || a->seq < b->seq)) ? *by_src : c.posted_any;
      auto it = (&bin == by_src) ? a : b;
      RecvT r = std::move(it->recv);
      bin.erase(it);
      --posted_count_;
      return r;
    }
    return queue_unexpected(c, e, std::move(msg));
  }

  // MPI_Iprobe: the earliest-arrived matching message, left in the queue.
  [[nodiscard]] const Matched* probe(const Pattern& p) const {
    auto cit = ctx_.find(p.context);
    if (cit == ctx_.end()) return nullptr;
    const Unexp* best = nullptr;
    auto consider = [&](const std::deque<Unexp>& bin) {
      for (const Unexp& u : bin) {
        if (!p.tag_matches(u.m.envelope.tag)) continue;
        if (!best || u.seq < best->seq) best = &u;
        break;  // the first match in a bin is its earliest
      }
    };
    if (p.source == kAnySource) {
      for (const auto& [src, bin] : cit->second.unexpected) consider(bin);
    } else if (auto it = cit->second.unexpected.find(p.source); it != cit->second.unexpected.end()) {
      consider(it->second);
    }
    return best ? &best->m : nullptr;
  }

  // MPI_Improbe: the earliest-arrived matching message, taken out of the queue (MPI_Mrecv then
  // receives it; no later receive can match it).
  std::optional<Matched> take(const Pattern& p) { return take_unexpected(p); }

  // MPI_Cancel of a posted receive: true if it was still queued (and now is not).
  template <typename Eq>
  bool cancel(Eq&& is_it) {
    for (auto& [context, c] : ctx_) {
      if (erase_first(c.posted_any, is_it)) return true;
      for (auto& [src, bin] : c.posted) {
        if (erase_first(bin, is_it)) return true;
      }
    }
    return false;
  }

  // Whether a posted receive could take a message (context, source, tag) before a receive
  // posted now: one for that source or ANY_SOURCE whose tag is that tag or ANY_TAG. (Direct
  // placement credits a new receive only when none could.)
  [[nodiscard]] bool posted_conflicts(std::uint32_t context, std::int32_t source, std::int32_t tag) const {
    if (posted_count_ == 0) return false;
    auto c = ctx_.find(context);
    if (c == ctx_.end()) return false;
    auto overlaps = [&](const std::deque<Posted>& bin) {
      return std::any_of(bin.begin(), bin.end(), [&](const Posted& x) { return x.p.tag_matches(tag) || tag == kAnyTag; });
    };
    if (overlaps(c->second.posted_any)) return true;
    auto b = c->second.posted.find(source);
    return b != c->second.posted.end() && overlaps(b->second);
  }

  // Visits the receives posted for `source`, in every communicator, each bin earliest first, as
  // f(context, tag, recv, earlier): `earlier` says whether a receive posted before it (for that
  // source or ANY_SOURCE, same communicator) could take a message meant for it, which is when
  // posted_conflicts would have refused it a credit at its post.
  template <typename F>
  void for_each_posted_from(std::int32_t source, F&& f) {
    if (posted_count_ == 0) return;
    for (auto& [id, c] : ctx_) {
      auto b = c.posted.find(source);
      if (b == c.posted.end()) continue;
      std::deque<Posted>& bin = b->second;
      for (std::size_t i = 0; i < bin.size(); ++i) {
        const Posted& r = bin[i];
        auto takes = [&](const Posted& x) { return x.seq < r.seq && (x.p.tag_matches(r.p.tag) || r.p.tag == kAnyTag); };
        const bool earlier = std::any_of(bin.begin(), bin.begin() + static_cast<std::ptrdiff_t>(i), takes) ||
                             std::any_of(c.posted_any.begin(), c.posted_any.end(), takes);
        f(id, r.p.tag, bin[i].recv, earlier);
      }
    }
  }

  // Visits every unexpected message, f(msg), which may change what the message holds (not its
  // envelope or place in the queue).
  template <typename F>
  void for_each_unexpected(F&& f) {
    if (unexpected_count_ == 0) return;
    for (auto& [id, c] : ctx_) {
      for (auto& [src, bin] : c.unexpected) {
        for (Unexp& u : bin) f(u.m.msg);
      }
    }
  }

  [[nodiscard]] std::size_t posted_count() const noexcept { return posted_count_; }
  [[nodiscard]] std::size_t unexpected_count() const noexcept { return unexpected_count_; }

 private:
  struct Posted {
    std::uint64_t seq;
    Pattern p;
    RecvT recv;
  };
  struct Unexp {
    std::uint64_t seq;
    Matched m;
  };
  struct Ctx {
    std::unordered_map<std::int32_t, std::deque<Posted>> posted;  // by source
    std::deque<Posted> posted_any;                                // ANY_SOURCE receives
    std::unordered_map<std::int32_t, std::deque<Unexp>> unexpected;
  };

  // The queues of one communicator. The last one used is remembered: a program talks on one
  // communicator at a time, and map nodes never move (contexts are never erased).
  Ctx& ctx(std::uint32_t id) {
    if (last_ctx_ == nullptr || last_ctx_id_ != id) {
      last_ctx_ = &ctx_[id];
      last_ctx_id_ = id;
    }
    return *last_ctx_;
  }

  std::optional<RecvT> queue_unexpected(Ctx& c, const Envelope& e, MsgT&& msg) {
    c.unexpected[e.source].push_back(Unexp{next_arrival_++, e, std::move(msg)});
    ++unexpected_count_;
    return std::nullopt;
  }

  static typename std::deque<Posted>::iterator first_posted(std::deque<Posted>& bin, std::int32_t tag) {
    auto it = bin.begin();
    while (it != bin.end() && !it->p.tag_matches(tag)) ++it;
    return it;
  }

  std::optional<Matched> take_unexpected(const Pattern& p) {
    const Matched* m = probe(p);
    if (!m) return std::nullopt;
    auto& bin = ctx(p.context).unexpected[m->envelope.source];
    for (auto it = bin.begin(); it != bin.end(); ++it) {
      if (&it->m == m) {
        Matched out = std::move(it->m);
        bin.erase(it);
        --unexpected_count_;
        return out;
      }
    }
    return std::nullopt;  // unreachable: probe returned an element of this bin
  }

  template <typename Eq>
  bool erase_first(std::deque<Posted>& bin, Eq& is_it) {
    for (auto it = bin.begin(); it != bin.end(); ++it) {
      if (is_it(it->recv)) {
        bin.erase(it);
        --posted_count_;
        return true;
      }
    }
    return false;
  }

  std::unordered_map<std::uint32_t, Ctx> ctx_;
  Ctx* last_ctx_ = nullptr;
  std::uint32_t last_ctx_id_ = 0;
  std::uint64_t next_post_ = 0;
  std::uint64_t next_arrival_ = 0;
  std::size_t posted_count_ = 0;
  std::size_t unexpected_count_ = 0;
};

}  // namespace augur::host
