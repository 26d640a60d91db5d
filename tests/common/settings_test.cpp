#include "augur/settings.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

#include <gtest/gtest.h>

namespace augur {
namespace {

TEST(Settings, EveryEntryIsNamedDocumentedAndUnique) {
  std::set<std::string_view> seen;
  for (const Setting& s : settings()) {
    EXPECT_EQ(s.name.substr(0, 6), "AUGUR_") << s.name;
    EXPECT_FALSE(s.meaning.empty()) << s.name;
    EXPECT_TRUE(seen.insert(s.name).second) << "duplicate " << s.name;
  }
}

TEST(Settings, DefaultThenEnvironment) {
  unsetenv("AUGUR_PORT");
  EXPECT_EQ(setting_int("AUGUR_PORT", 1, 255).value(), 1);
  setenv("AUGUR_PORT", "2", 1);
  EXPECT_EQ(setting_int("AUGUR_PORT", 1, 255).value(), 2);
  unsetenv("AUGUR_PORT");
}

TEST(Settings, MalformedAndOutOfRangeValuesNameTheVariable) {
  for (const char* bad : {"abc", "3x", "", "999", "-2"}) {
    setenv("AUGUR_QP_RETRY_COUNT", bad, 1);
    Result<std::int64_t> r = setting_int("AUGUR_QP_RETRY_COUNT", 0, 7);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string("AUGUR_QP_RETRY_COUNT=") + bad + ":"), std::string::npos);
  }
  unsetenv("AUGUR_QP_RETRY_COUNT");
}

TEST(Settings, UnknownNameIsABug) {
  EXPECT_EQ(setting_string("AUGUR_NOT_A_SETTING").status().code(), Code::kInternal);
}

TEST(Settings, FormatListsEverySetting) {
  std::string text = format_settings();
  for (const Setting& s : settings()) EXPECT_NE(text.find(s.name), std::string::npos) << s.name;
}

}  // namespace
}  // namespace augur

namespace augur {
namespace {
// The documented table and the code's table must not drift apart.
TEST(Settings, DocsListEverySettingWithItsDefault) {
  std::ifstream in(AUGUR_SETTINGS_DOC);
  ASSERT_TRUE(in) << AUGUR_SETTINGS_DOC;
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const Setting& s : settings()) {
    std::string row = "| `" + std::string(s.name) + "` | ";
    auto at = doc.find(row);
    ASSERT_NE(at, std::string::npos) << s.name << " is missing from docs/settings.md";
    std::string want = s.default_value.empty() ? "(empty)" : "`" + std::string(s.default_value) + "`";
    EXPECT_EQ(doc.compare(at + row.size(), want.size(), want), 0) << s.name << ": default differs from the docs";
  }
}
}  // namespace
}  // namespace augur
