// Configuration and counters: engine_config_from_settings reads the AUGUR_* settings (docs/settings.md) into
// an EngineConfig, and stats_line/counters/rcache_counters report what the engine did (the augur-stats line
// printed with AUGUR_STATS=1). Separate because none of it is on a message's path.

#include "augur/host/engine.h"

#include <unistd.h>

#include <algorithm>
#include <string>

#include "augur/settings.h"

namespace augur::host {

std::string Engine::stats_line() const {
  const nic::RegCacheCounters rc = rcache_counters();
  const EngineCounters c = counters();
  std::string s = "augur-stats rank=" + std::to_string(rank_);
  auto kv = [&s](const char* k, std::uint64_t v) { s.append(" ").append(k).append("=").append(std::to_string(v)); };
  kv("direct_msgs", c.direct_msgs);
  kv("bounce_msgs", c.bounce_msgs);
  kv("rndv_msgs", c.rndv_msgs);
  kv("bytes_copied", c.bytes_copied);
  kv("pred_hits", c.pred_hits);
  kv("pred_misses", c.pred_misses);
  kv("pred_abstains", c.pred_abstains);
  kv("credits_issued", c.credits_issued);
  kv("credits_used", c.credits_used);
  kv("credits_revoked", c.credits_revoked);
  kv("rcache_hits", rc.hits);
  kv("rcache_misses", rc.misses);
  kv("self_msgs", c.self_msgs);
  kv("unexpected_msgs", c.unexpected_msgs);
  kv("truncated", c.truncated);
  kv("direct_sends", c.direct_sends);
  kv("credits_armed_ahead", c.credits_armed_ahead);
  kv("pred_suspended", c.pred_suspended);
  kv("credit_pauses", c.credit_pauses);
  kv("credits_rearmed", c.credits_rearmed);
  kv("sge_sends", c.sge_sends);
  kv("sge_recvs", c.sge_recvs);
  kv("rcache_evictions", rc.evictions);
  kv("rcache_refused", rc.refused);
  kv("rcache_peak_bytes", rc.peak_bytes);
  kv("rcache_peak_entries", rc.peak_entries);
  kv("landing_credits", c.landing_credits);
  kv("landing_msgs", c.landing_msgs);
  kv("landing_early", c.landing_early);
  kv("landing_remapped", c.landing_remapped);
  kv("pages_remapped", c.pages_remapped);
  kv("landing_revoked", c.landing_revoked);
  kv("landing_sends", c.landing_sends);
  kv("spec_armed", c.spec_armed);
  kv("spec_msgs", c.spec_msgs);
  kv("spec_early", c.spec_early);
  kv("spec_placed", c.spec_placed);
  kv("spec_copied", c.spec_copied);
  kv("spec_adopted", c.spec_adopted);
  kv("spec_revoked", c.spec_revoked);
  kv("spec_void", c.spec_void);
  kv("guard_faults", c.guard_faults);
  kv("spec_violations", c.spec_violations);
  kv("release_early", c.release_early);
  kv("release_chunks", c.release_chunks);
  kv("release_waits", c.release_waits);
  kv("release_settles", c.release_settles);
  kv("release_declined", c.release_declined);
  kv("release_sends", c.release_sends);
  kv("release_sends_declined", c.release_sends_declined);
  kv("spec_shared_pages", c.spec_shared_pages);
  kv("arms_carried", c.arms_carried);
  kv("arms_written", c.arms_written);
  kv("rma_puts", c.rma_puts);
  kv("rma_gets", c.rma_gets);
  kv("rma_atomics", c.rma_atomics);
  kv("rma_bytes", c.rma_bytes);
  // Memory: what the process has pinned (every region, user buffers in the caches included),
  // and the part that grows with the peers it is connected to (docs/launch.md, memory).
  std::uint64_t peers = 0, channel_bytes = 0, srq_bytes = 0, srq_slots = 0, window_max = 0, sleeps = 0;
  RecvPoolCounters pc;
  Wireup::Counters wc;
  call_in_assist([&] {  // channels are made on the assist thread, when there is one
    for (int peer : active_) {
      ++peers;
      const Channel& ch = *peers_[static_cast<std::size_t>(peer)].ch;
      channel_bytes += ch.registered_bytes();
      window_max = std::max<std::uint64_t>(window_max, ch.window());
    }
    if (wire_) wc = wire_->counters();
    sleeps = driver_.sleeps();
    if (pool_) {
      srq_bytes = pool_->registered_bytes();
      srq_slots = pool_->slots();
      pc = pool_->counters();
    }
  });
  const nic::PinnedCounters pinned = nic::pinned_counters();
  kv("peers_connected", peers);
  kv("wireup_initiated", wc.initiated);
  kv("wireup_accepted", wc.accepted);
  kv("wireup_rejected", wc.rejected);
  kv("channel_bytes", channel_bytes);
  kv("srq_bytes", srq_bytes);
  kv("srq_slots", srq_slots);
  kv("srq_chunks", pc.chunks);
  kv("srq_windows_grown", pc.windows_grown);
  kv("srq_windows_shrunk", pc.windows_shrunk);
  kv("srq_window_max", window_max);
  kv("pinned_bytes", pinned.bytes);
  kv("pinned_peak_bytes", pinned.peak_bytes);
  kv("pinned_regions", pinned.regions);
  kv("eager_limit", cfg_.eager_limit);
  kv("oversubscribed", oversubscribed_job_ ? 1 : 0);
  kv("local_ranks", static_cast<std::uint64_t>(local_ranks_));
  kv("wait_sleeps", sleeps);
  s.append(" wait=").append(wait_policy_name(driver_.wait_policy()));
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) s.append(" host=").append(host);  // which machine, in multi-host jobs
  return s;
}

EngineCounters Engine::counters() const {
  EngineCounters c;
  call_in_assist([&] {
    c = counters_;
    const SteeringCounters& s = steer_->counters();
    c.pred_hits = s.pred_hits;
    c.pred_misses = s.pred_misses;
    c.pred_abstains = s.pred_abstains;
    c.pred_suspended = s.pred_suspended;
    c.credit_pauses = s.credit_pauses;
    c.credits_issued = credit_counters_.issued;
    c.credits_armed_ahead = credit_counters_.armed_ahead;
    c.credits_rearmed = credit_counters_.rearmed;
    c.credits_used = credit_counters_.used;
    c.credits_revoked = credit_counters_.revoked;
    if (release_ || release_sends_) c.release_waits = guard_->counters().waits;
    c.release_settles += release_settles_sends_.load(std::memory_order_relaxed);
    for (int peer : active_) {
      const ChannelCounters& cc = peers_[static_cast<std::size_t>(peer)].ch->counters();
      c.arms_carried += cc.arms_carried;
      c.arms_written += cc.arms_written;
    }
  });
  return c;
}

bool Engine::quiet() const {
  bool q = true;
  call_in_assist([&] {
    for (int peer : active_) {
      const Peer& p = peers_[static_cast<std::size_t>(peer)];
      if (p.dead) continue;
      if (!p.out.empty() || !p.awaiting_fin.empty() || !p.writing.empty() || !p.read_queue.empty() || p.reads_in_flight != 0 ||
          !p.rma_queue.empty() || p.rma_in_flight != 0) {
        q = false;
        return;
      }
    }
  });
  return q;
}

int Engine::peers_connected() const {
  int n = 0;
  call_in_assist([&] { n = static_cast<int>(active_.size()); });
  return n;
}

Wireup::Counters Engine::wireup_counters() const {
  Wireup::Counters c;
  call_in_assist([&] { c = wire_->counters(); });
  return c;
}

nic::RegCacheCounters Engine::rcache_counters() const {
  nic::RegCacheCounters c;
  call_in_assist([&] { c = rcache_sum(); });
  return c;
}

nic::RegCacheCounters Engine::rcache_sum() const {
  nic::RegCacheCounters c = send_cache_->counters();
  const nic::RegCacheCounters& r = recv_cache_->counters();
  c.hits += r.hits;
  c.misses += r.misses;
  c.evictions += r.evictions;
  c.invalidations += r.invalidations;
  c.releases += r.releases;
  c.refused += r.refused;
  // Each cache has its own bound: the larger peak is what to compare with it.
  c.peak_bytes = std::max(c.peak_bytes, r.peak_bytes);
  c.peak_entries = std::max(c.peak_entries, r.peak_entries);
  return c;
}

Result<EngineConfig> engine_config_from_settings() {
  EngineConfig c;
  AUGUR_ASSIGN_OR_RETURN(std::int64_t slots, setting_int("AUGUR_SLOTS"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t eager, setting_int("AUGUR_EAGER_LIMIT"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t keepalive, setting_int("AUGUR_KEEPALIVE_MS"));
  c.slots = static_cast<std::uint32_t>(slots);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t srq_slots, setting_int("AUGUR_SRQ_SLOTS"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t srq_peer, setting_int("AUGUR_SRQ_PEER_SLOTS"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t srq_max, setting_int("AUGUR_SRQ_MAX_SLOTS"));
  c.srq_slots = static_cast<std::uint32_t>(srq_slots);
  c.srq_peer_slots = static_cast<std::uint32_t>(srq_peer);
  c.srq_max_slots = static_cast<std::uint32_t>(srq_max);
  c.eager_limit = static_cast<std::uint32_t>(eager);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t oversub_eager, setting_int("AUGUR_OVERSUB_EAGER_LIMIT"));
  c.oversub_eager_limit = static_cast<std::uint32_t>(oversub_eager);
  c.keepalive_ms = static_cast<std::uint32_t>(keepalive);
  AUGUR_ASSIGN_OR_RETURN(c.steering, setting_enum<Steering>("AUGUR_STEERING"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t credits, setting_int("AUGUR_CREDITS"));
  c.credit_slots = static_cast<std::uint32_t>(credits);
  AUGUR_ASSIGN_OR_RETURN(std::string_view predictor, setting_choice("AUGUR_PREDICTOR"));
  c.predictor = std::string(predictor);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t depth, setting_int("AUGUR_PREDICT_DEPTH"));
  c.predict_depth = static_cast<std::uint32_t>(depth);
  AUGUR_ASSIGN_OR_RETURN(c.stats, setting_bool("AUGUR_STATS"));
  AUGUR_ASSIGN_OR_RETURN(c.wait, setting_enum<WaitPolicy>("AUGUR_WAIT"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t spin_us, setting_int("AUGUR_SPIN_US"));
  c.spin_us = static_cast<std::uint32_t>(spin_us);
  AUGUR_ASSIGN_OR_RETURN(c.assist, setting_enum<EngineConfig::Assist>("AUGUR_ASSIST"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t core, setting_int("AUGUR_ASSIST_CORE"));
  c.assist_core = static_cast<int>(core);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t sge_runs, setting_int("AUGUR_SGE_MAX_RUNS"));
  c.sge_max_runs = static_cast<std::uint32_t>(sge_runs);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t direct_min, setting_int("AUGUR_DIRECT_MIN"));
  c.direct_min = static_cast<std::uint32_t>(direct_min);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t direct_max, setting_int("AUGUR_DIRECT_MAX"));
  c.direct_max = static_cast<std::uint32_t>(direct_max);
  AUGUR_ASSIGN_OR_RETURN(c.early, setting_enum<EngineConfig::Early>("AUGUR_EARLY"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t landing_max, setting_int("AUGUR_LANDING_MAX"));
  c.landing_max = static_cast<std::uint32_t>(landing_max);
  AUGUR_ASSIGN_OR_RETURN(std::int64_t remap_min, setting_int("AUGUR_REMAP_MIN"));
  c.remap_min = static_cast<std::uint32_t>(std::min<std::int64_t>(remap_min, 0xffffffff));
  AUGUR_ASSIGN_OR_RETURN(c.guard, setting_bool("AUGUR_GUARD"));
  AUGUR_ASSIGN_OR_RETURN(std::string_view connect, setting_choice("AUGUR_CONNECT"));
  c.connect_all = connect == "all";
  AUGUR_ASSIGN_OR_RETURN(c.early_release, setting_bool("AUGUR_EARLY_RELEASE"));
  AUGUR_ASSIGN_OR_RETURN(std::int64_t release_chunk, setting_int("AUGUR_RELEASE_CHUNK"));
  c.release_chunk = static_cast<std::uint32_t>(release_chunk);
  return c;
}

}  // namespace augur::host
