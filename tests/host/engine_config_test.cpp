// engine_config_from_settings: with no AUGUR_* set, the table's defaults give exactly the
// defaults EngineConfig has in code (two places that must not drift apart); a value set in the
// environment is taken; a bad one is an error naming the variable.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "augur/host/engine.h"
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

}  // namespace
}  // namespace augur::host
