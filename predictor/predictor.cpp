#include "augur/predictor/predictor.h"

#include <array>
#include <string>

#include "augur/predictor/predictors.h"

namespace augur::predictor {

namespace {
constexpr std::array<std::string_view, 11> kNames = {
    "lru",       "fifo",      "lfu",      "single-cycle", "tagging",
    "tag-cycle", "tag-bettercycle", "two-level", "adaptive", "top-k", "match"};
}  // namespace

std::span<const std::string_view> predictor_names() noexcept { return kNames; }

bool abstains(std::string_view name) noexcept {
  return name != "lru" && name != "fifo" && name != "lfu";
}

Result<std::unique_ptr<Predictor>> make_predictor(std::string_view name, const Options& o) {
  std::unique_ptr<Predictor> p;
  if (name == "lru") p = std::make_unique<WindowPredictor>(WindowPolicy::kLru, o.window);
  else if (name == "fifo") p = std::make_unique<WindowPredictor>(WindowPolicy::kFifo, o.window);
  else if (name == "lfu") p = std::make_unique<WindowPredictor>(WindowPolicy::kLfu, o.window);
  else if (name == "single-cycle") p = std::make_unique<SingleCycle>(o);
  else if (name == "tagging") p = std::make_unique<Tagging>();
  else if (name == "tag-cycle") p = std::make_unique<TagCycle>(o, false);
  else if (name == "tag-bettercycle") p = std::make_unique<TagCycle>(o, true);
  else if (name == "two-level") p = std::make_unique<TwoLevel>(o);
  else if (name == "adaptive") p = std::make_unique<Adaptive>(o);
  else if (name == "top-k") p = std::make_unique<SingleCycle>(o, o.window);
  else if (name == "match") p = std::make_unique<Match>(o);
  if (!p) {
    std::string all;
    for (std::string_view n : kNames) {
      if (!all.empty()) all += ", ";
      all += n;
    }
    return Status(Code::kInvalidArgument,
                  "unknown predictor '" + std::string(name) + "' (known: " + all + ")");
  }
  return p;
}

// ---------------------------------------------------------------------------- Interner

std::size_t Interner::KeyHash::operator()(const Key& k) const noexcept {
  // splitmix-style mixing: buffer addresses differ only in a few middle bits.
  auto mix = [](std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  std::uint64_t h = mix(k.buffer) ^ mix(k.count + 0x9e3779b97f4a7c15ULL);
  h ^= mix((std::uint64_t{static_cast<std::uint32_t>(k.source)} << 32) |
           static_cast<std::uint32_t>(k.tag)) +
       (h << 6);
  h ^= mix((std::uint64_t{k.datatype} << 32) | k.comm) + (h >> 2);
  return static_cast<std::size_t>(h);
}

Event Interner::intern(const RecvCall& c) {
  const Key key{c.count, c.buffer, c.source, c.tag, c.datatype, c.comm};
  const auto call = calls_.try_emplace(key, static_cast<CallId>(calls_.size())).first->second;
  const auto site = sites_.try_emplace(c.site, static_cast<SiteId>(sites_.size())).first->second;
  return {call, site};
}

}  // namespace augur::predictor
