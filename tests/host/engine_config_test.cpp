// engine_config_from_settings: with no AUGUR_* set, the table's defaults give exactly the
// defaults EngineConfig has in code (two places that must not drift apart); a value set in the
// environment is taken; a bad one is an error naming the variable. Every name of an enum setting
// gives the enumerator it stands for.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
#include "augur/host/protocol.h"
#include "augur/predictor/predictor.h"
#include "augur/settings.h"

namespace augur::host {
namespace {

void clear_all() {
  for (const Setting& s : settings()) unsetenv(std::string(s.name).c_str());
}

TEST(EngineConfig, TableDefaultsAreTheCodeDefaults) {
  clear_all();
  Result<EngineConfig> c = engine_config_from_settings();
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const EngineConfig d;
  EXPECT_EQ(c->slots, d.slots);
  EXPECT_EQ(c->eager_limit, d.eager_limit);
  EXPECT_EQ(c->keepalive_ms, d.keepalive_ms);
  EXPECT_EQ(c->steering, d.steering);
  EXPECT_EQ(c->credit_slots, d.credit_slots);
  EXPECT_EQ(c->direct_min, d.direct_min);
  EXPECT_EQ(c->direct_min, 1024u);
  EXPECT_EQ(c->predictor, d.predictor);
  EXPECT_EQ(c->predict_depth, d.predict_depth);
  EXPECT_EQ(c->stats, d.stats);
  EXPECT_EQ(c->wait, d.wait);
  EXPECT_EQ(c->spin_us, d.spin_us);
  // Except AUGUR_ASSIST: the table says auto, the struct off, so that embedders and tests get an
  // assist thread only when they ask for one.
  EXPECT_EQ(c->assist, EngineConfig::Assist::kAuto);
  EXPECT_EQ(d.assist, EngineConfig::Assist::kOff);
  EXPECT_EQ(c->assist_core, d.assist_core);
  EXPECT_EQ(c->sge_max_runs, d.sge_max_runs);
}

TEST(EngineConfig, DirectMinFromTheEnvironment) {
  clear_all();
  setenv("AUGUR_DIRECT_MIN", "1", 1);
  Result<EngineConfig> c = engine_config_from_settings();
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->direct_min, 1u);
  for (const char* bad : {"0", "-5", "2097152", "1k"}) {
    setenv("AUGUR_DIRECT_MIN", bad, 1);
    Result<EngineConfig> r = engine_config_from_settings();
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string("AUGUR_DIRECT_MIN=") + bad), std::string::npos) << r.status().to_string();
  }
  unsetenv("AUGUR_DIRECT_MIN");
}

// engine_config_from_settings with one variable set (the others at their defaults).
Result<EngineConfig> config_with(const char* name, const std::string& value) {
  clear_all();
  setenv(name, value.c_str(), 1);
  Result<EngineConfig> c = engine_config_from_settings();
  unsetenv(name);
  return c;
}

TEST(EngineConfig, TheGuardOfSpeculativePlacementIsOnUnlessTurnedOff) {
  Result<EngineConfig> c = engine_config_from_settings();
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_TRUE(c->guard);
  c = config_with("AUGUR_GUARD", "0");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_FALSE(c->guard);
}

TEST(EngineConfig, EarlyReleaseIsOptInAndItsChunkIsBounded) {
  Result<EngineConfig> c = config_with("AUGUR_EARLY_RELEASE", "0");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_FALSE(c->early_release);
  EXPECT_EQ(c->release_chunk, 65536u);
  c = config_with("AUGUR_EARLY_RELEASE", "1");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_TRUE(c->early_release);
  c = config_with("AUGUR_RELEASE_CHUNK", "16384");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->release_chunk, 16384u);
  for (const char* bad : {"4095", "0", "2147483648", "64k"}) {
    c = config_with("AUGUR_RELEASE_CHUNK", bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find(std::string("AUGUR_RELEASE_CHUNK=") + bad), std::string::npos) << c.status().to_string();
  }
}

TEST(EngineConfig, EveryEnumNameGivesItsEnumerator) {
  for (const auto& [name, want] : std::vector<std::pair<std::string, Steering>>{
           {"off", Steering::kOff}, {"posted", Steering::kPosted}, {"predicted", Steering::kPredicted}, {"speculative", Steering::kSpeculative}}) {
    Result<EngineConfig> c = config_with("AUGUR_STEERING", name);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_EQ(c->steering, want) << name;
  }
  for (const auto& [name, want] : std::vector<std::pair<std::string, WaitPolicy>>{
           {"spin", WaitPolicy::kSpin}, {"block", WaitPolicy::kBlock}, {"hybrid", WaitPolicy::kHybrid}, {"auto", WaitPolicy::kAuto}}) {
    Result<EngineConfig> c = config_with("AUGUR_WAIT", name);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_EQ(c->wait, want) << name;
  }
  using Assist = EngineConfig::Assist;
  for (const auto& [name, want] : std::vector<std::pair<std::string, Assist>>{
           {"on", Assist::kOn}, {"off", Assist::kOff}, {"auto", Assist::kAuto}}) {
    Result<EngineConfig> c = config_with("AUGUR_ASSIST", name);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_EQ(c->assist, want) << name;
  }
  for (const char* flag : {"0", "1"}) {
    Result<EngineConfig> c = config_with("AUGUR_STATS", flag);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_EQ(c->stats, std::string(flag) == "1");
  }
}

// The table's predictor names are exactly the predictor library's, and each is taken.
TEST(EngineConfig, PredictorNamesAreThePredictorLibrarys) {
  std::vector<std::string_view> table;
  for (const Setting& s : settings()) {
    if (s.name == "AUGUR_PREDICTOR") table.assign(s.allowed_names().begin(), s.allowed_names().end());
  }
  const auto lib = predictor::predictor_names();
  EXPECT_EQ(table, std::vector<std::string_view>(lib.begin(), lib.end()));
  for (std::string_view name : lib) {
    Result<EngineConfig> c = config_with("AUGUR_PREDICTOR", std::string(name));
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_EQ(c->predictor, name);
  }
}

TEST(EngineConfig, BadEnumNamesAndFlagsNameTheVariable) {
  const std::vector<std::tuple<const char*, const char*, std::string>> cases = {
      {"AUGUR_STEERING", "on", "AUGUR_STEERING=on: expected off, posted, predicted or speculative"},
      {"AUGUR_WAIT", "on", "AUGUR_WAIT=on: expected spin, block, hybrid or auto"},
      {"AUGUR_ASSIST", "yes", "AUGUR_ASSIST=yes: expected off, on or auto"},
      {"AUGUR_STATS", "yes", "AUGUR_STATS=yes: expected 0 or 1"},
  };
  for (const auto& [name, value, message] : cases) {
    Result<EngineConfig> c = config_with(name, value);
    ASSERT_FALSE(c.ok()) << name;
    EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(c.status().message(), message);
  }
  Result<EngineConfig> c = config_with("AUGUR_PREDICTOR", "oracle");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("AUGUR_PREDICTOR=oracle: expected lru, fifo, ", 0), 0u) << c.status().message();
}

// AUGUR_CREDITS's range ends where the protocol's credit slots do.
TEST(EngineConfig, CreditsRangeIsTheProtocols) {
  const auto credits = std::find_if(settings().begin(), settings().end(), [](const Setting& s) { return s.name == "AUGUR_CREDITS"; });
  ASSERT_NE(credits, settings().end());
  EXPECT_EQ(credits->max, proto::kMaxCreditSlots);
  EXPECT_TRUE(config_with("AUGUR_CREDITS", std::to_string(proto::kMaxCreditSlots)).ok());
  EXPECT_FALSE(config_with("AUGUR_CREDITS", std::to_string(proto::kMaxCreditSlots + 1)).ok());
}

}  // namespace
}  // namespace augur::host
