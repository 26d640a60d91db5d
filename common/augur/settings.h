// The one table of AUGUR_* settings: name, type, range or allowed names, default, meaning. Every
// setting augur reads is here, parsed and validated only by these functions, and printed by
// `augur-config` and `augurrun --print-config`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "augur/status.h"

namespace augur {

enum class SettingKind : std::uint8_t {
  kString,  // any text (callers that need a format, e.g. host:port, check it)
  kInt,     // an integer in [min, max]
  kBool,    // 0 or 1
  kEnum,    // one of `names`
};

struct Setting {
  // Enough for the predictor names, the longest list.
  static constexpr std::size_t kMaxNames = 12;

  std::string_view name;
  SettingKind kind = SettingKind::kString;
  std::string_view default_value;
  std::int64_t min = 0;  // kInt: the allowed range
  std::int64_t max = 0;
  // kEnum: the allowed names; setting_enum<E> maps the i-th to E's i-th enumerator. Unused: empty.
  std::array<std::string_view, kMaxNames> names{};
  std::string_view meaning;
  bool secret = false;  // kString: its value is never printed (format_settings shows "(hidden)")

  // The used part of `names`.
  [[nodiscard]] constexpr std::span<const std::string_view> allowed_names() const {
    std::size_t n = 0;
    while (n < names.size() && !names[n].empty()) ++n;
    return {names.data(), n};
  }
};

// All settings, in documentation order.
std::span<const Setting> settings();

// The value of a kString setting from the environment, else its default.
// Unknown names, and reading a setting as another kind than declared, are bugs: kInternal.
Result<std::string> setting_string(std::string_view name);
// A kInt setting in its declared range; a malformed or out-of-range value is kInvalidArgument
// naming the variable, the value and the range.
Result<std::int64_t> setting_int(std::string_view name);
// A kBool setting: "0" or "1", else kInvalidArgument as above.
Result<bool> setting_bool(std::string_view name);
// A kEnum setting: the index of its value in the declared names, else kInvalidArgument as above.
Result<std::size_t> setting_index(std::string_view name);
// A kEnum setting's value, as the declared name.
Result<std::string_view> setting_choice(std::string_view name);
// A kEnum setting as E: the declared names map, in order, to E's enumerators 0, 1, 2, ...
template <typename E>
Result<E> setting_enum(std::string_view name) {
  AUGUR_ASSIGN_OR_RETURN(std::size_t i, setting_index(name));
  return static_cast<E>(i);
}

// What a setting accepts, as printed in the table: "[1, 255]", "0 or 1", "off, posted or predicted", "any".
std::string setting_allowed(const Setting& s);

// The table as aligned text (name, current value, default, allowed values, meaning), for --print-config.
std::string format_settings();

}  // namespace augur
