#include "augur/settings.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

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

const Setting& entry(std::string_view name) {
  for (const Setting& s : settings()) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << name << " is not in the table";
  return settings().front();
}

// The error for a bad value: kInvalidArgument, naming the variable, the value and what was expected.
template <typename T>
void expect_rejected(const Result<T>& r, const std::string& name, const std::string& value, const std::string& expected) {
  ASSERT_FALSE(r.ok()) << name << "=" << value;
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), name + "=" + value + ": expected " + expected);
}

TEST(Settings, DefaultThenEnvironment) {
  unsetenv("AUGUR_PORT");
  EXPECT_EQ(setting_int("AUGUR_PORT").value(), 1);
  setenv("AUGUR_PORT", "2", 1);
  EXPECT_EQ(setting_int("AUGUR_PORT").value(), 2);
  setenv("AUGUR_PORT", "+3", 1);
  EXPECT_EQ(setting_int("AUGUR_PORT").value(), 3);
  unsetenv("AUGUR_PORT");
  setenv("AUGUR_GID_INDEX", "-1", 1);
  EXPECT_EQ(setting_int("AUGUR_GID_INDEX").value(), -1);
  unsetenv("AUGUR_GID_INDEX");
}

TEST(Settings, MalformedAndOutOfRangeValuesNameTheVariable) {
  for (const char* bad : {"abc", "3x", "", "999", "-2", " 5", "5 ", "0x5", "-", "99999999999999999999"}) {
    setenv("AUGUR_QP_RETRY_COUNT", bad, 1);
    expect_rejected(setting_int("AUGUR_QP_RETRY_COUNT"), "AUGUR_QP_RETRY_COUNT", bad, "an integer in [0, 7]");
  }
  unsetenv("AUGUR_QP_RETRY_COUNT");
  // The range is the table's, at either end.
  setenv("AUGUR_RCACHE_MAX_BYTES", "4095", 1);
  expect_rejected(setting_int("AUGUR_RCACHE_MAX_BYTES"), "AUGUR_RCACHE_MAX_BYTES", "4095", "an integer in [4096, 1125899906842624]");
  setenv("AUGUR_RCACHE_MAX_BYTES", "1125899906842625", 1);
  EXPECT_FALSE(setting_int("AUGUR_RCACHE_MAX_BYTES").ok());
  setenv("AUGUR_RCACHE_MAX_BYTES", "1125899906842624", 1);
  EXPECT_EQ(setting_int("AUGUR_RCACHE_MAX_BYTES").value(), std::int64_t{1} << 50);
  unsetenv("AUGUR_RCACHE_MAX_BYTES");
}

TEST(Settings, BadBoolNamesTheVariable) {
  for (const char* bad : {"2", "yes", "true", "", "01"}) {
    setenv("AUGUR_STATS", bad, 1);
    expect_rejected(setting_bool("AUGUR_STATS"), "AUGUR_STATS", bad, "0 or 1");
  }
  setenv("AUGUR_STATS", "1", 1);
  EXPECT_TRUE(setting_bool("AUGUR_STATS").value());
  setenv("AUGUR_STATS", "0", 1);
  EXPECT_FALSE(setting_bool("AUGUR_STATS").value());
  unsetenv("AUGUR_STATS");
}

TEST(Settings, BadEnumNameNamesTheVariable) {
  for (const char* bad : {"sleepy", "", "Spin", "spin "}) {
    setenv("AUGUR_WAIT", bad, 1);
    expect_rejected(setting_index("AUGUR_WAIT"), "AUGUR_WAIT", bad, "spin, block, hybrid or auto");
    expect_rejected(setting_choice("AUGUR_WAIT"), "AUGUR_WAIT", bad, "spin, block, hybrid or auto");
  }
  unsetenv("AUGUR_WAIT");
}

TEST(Settings, EveryEnumNameParsesToItsIndex) {
  int enums = 0;
  for (const Setting& s : settings()) {
    if (s.kind != SettingKind::kEnum) continue;
    ++enums;
    const std::string name(s.name);
    ASSERT_GE(s.allowed_names().size(), 2u) << name;
    for (std::size_t i = 0; i < s.allowed_names().size(); ++i) {
      setenv(name.c_str(), std::string(s.allowed_names()[i]).c_str(), 1);
      EXPECT_EQ(setting_index(name).value(), i) << name << "=" << s.allowed_names()[i];
      EXPECT_EQ(setting_choice(name).value(), s.allowed_names()[i]);
    }
    unsetenv(name.c_str());
  }
  EXPECT_EQ(enums, 7);  // AUGUR_STEERING, AUGUR_EARLY, AUGUR_PREDICTOR, AUGUR_WAIT, AUGUR_ASSIST, AUGUR_CONNECT, AUGUR_PMIX
}

TEST(Settings, EveryDefaultParses) {
  for (const Setting& s : settings()) {
    const std::string name(s.name);
    unsetenv(name.c_str());
    switch (s.kind) {
      case SettingKind::kString:
        EXPECT_EQ(setting_string(name).value(), s.default_value) << name;
        break;
      case SettingKind::kInt: {
        Result<std::int64_t> v = setting_int(name);
        ASSERT_TRUE(v.ok()) << v.status().to_string();
        EXPECT_EQ(std::to_string(v.value()), s.default_value) << name;
        EXPECT_LE(s.min, v.value()) << name;
        EXPECT_LE(v.value(), s.max) << name;
        break;
      }
      case SettingKind::kBool:
        EXPECT_EQ(setting_bool(name).value(), s.default_value == "1") << name;
        break;
      case SettingKind::kEnum:
        EXPECT_EQ(setting_choice(name).value(), s.default_value) << name;
        break;
    }
  }
}

TEST(Settings, UnknownNameIsABug) {
  EXPECT_EQ(setting_string("AUGUR_NOT_A_SETTING").status().code(), Code::kInternal);
  EXPECT_EQ(setting_int("AUGUR_NOT_A_SETTING").status().code(), Code::kInternal);
  EXPECT_EQ(setting_bool("AUGUR_NOT_A_SETTING").status().code(), Code::kInternal);
  EXPECT_EQ(setting_index("AUGUR_NOT_A_SETTING").status().code(), Code::kInternal);
}

TEST(Settings, ReadingAsAnotherTypeIsABug) {
  EXPECT_EQ(setting_string("AUGUR_PORT").status().code(), Code::kInternal);
  EXPECT_EQ(setting_int("AUGUR_STEERING").status().code(), Code::kInternal);
  EXPECT_EQ(setting_bool("AUGUR_PORT").status().code(), Code::kInternal);
  EXPECT_EQ(setting_index("AUGUR_STATS").status().code(), Code::kInternal);
  EXPECT_EQ(setting_enum<int>("AUGUR_DEVICE").status().code(), Code::kInternal);
}

TEST(Settings, AllowedValues) {
  EXPECT_EQ(setting_allowed(entry("AUGUR_GID_INDEX")), "[-1, 255]");
  EXPECT_EQ(setting_allowed(entry("AUGUR_STATS")), "0 or 1");
  EXPECT_EQ(setting_allowed(entry("AUGUR_STEERING")), "off, posted, predicted or speculative");
  EXPECT_EQ(setting_allowed(entry("AUGUR_DEVICE")), "any");
}

TEST(Settings, FormatListsEverySettingWithWhatItAllows) {
  setenv("AUGUR_SLOTS", "99", 1);
  const std::string text = format_settings();
  unsetenv("AUGUR_SLOTS");
  EXPECT_EQ(text.substr(0, 4), "name");
  for (const Setting& s : settings()) {
    const auto at = text.find(std::string(s.name) + " ");
    ASSERT_NE(at, std::string::npos) << s.name;
    // Long lists of names wrap onto the following lines; every name is printed.
    const std::string allowed = setting_allowed(s);
    for (std::size_t from = 0; from < allowed.size();) {
      const std::size_t space = std::min(allowed.find(' ', from), allowed.size());
      EXPECT_NE(text.find(allowed.substr(from, space - from), at), std::string::npos) << s.name << ": " << allowed;
      from = space + 1;
    }
  }
  const std::string line = text.substr(text.find("AUGUR_SLOTS "), text.find('\n', text.find("AUGUR_SLOTS ")) - text.find("AUGUR_SLOTS "));
  EXPECT_NE(line.find(" 99 "), std::string::npos) << line;
  EXPECT_NE(line.find("\"64\""), std::string::npos) << line;
  EXPECT_NE(line.find("[2, 32767]"), std::string::npos) << line;
}

TEST(Settings, ASecretIsUsableButNeverPrinted) {
  setenv("AUGUR_HOSTD_TOKEN", "tok-7f3a9", 1);
  const std::string text = format_settings();
  Result<std::string> v = setting_string("AUGUR_HOSTD_TOKEN");
  unsetenv("AUGUR_HOSTD_TOKEN");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ("tok-7f3a9", v.value());
  EXPECT_EQ(text.find("tok-7f3a9"), std::string::npos) << text;
  const std::size_t at = text.find("AUGUR_HOSTD_TOKEN ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(text.substr(at, text.find('\n', at) - at).find("(hidden)"), std::string::npos);
}

}  // namespace
}  // namespace augur

namespace augur {
namespace {
// The documented table and the code's table must not drift apart.
TEST(Settings, DocsListEverySettingWithItsDefaultAndAllowedValues) {
  std::ifstream in(AUGUR_SETTINGS_DOC);
  ASSERT_TRUE(in) << AUGUR_SETTINGS_DOC;
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const Setting& s : settings()) {
    std::string row = "| `" + std::string(s.name) + "` | ";
    auto at = doc.find(row);
    ASSERT_NE(at, std::string::npos) << s.name << " is missing from docs/settings.md";
    std::string want = s.default_value.empty() ? "(empty)" : "`" + std::string(s.default_value) + "`";
    want += " | " + setting_allowed(s) + " | ";
    EXPECT_EQ(doc.compare(at + row.size(), want.size(), want), 0)
        << s.name << ": default or allowed values differ from the docs (want " << want << ")";
  }
}
}  // namespace
}  // namespace augur
