// The one table of AUGUR_* settings: name, default, meaning. Every setting augur reads is here,
// read through these functions, and printed by `augur-config` (and later `augurrun --print-config`).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "augur/status.h"

namespace augur {

struct Setting {
  std::string_view name;
  std::string_view default_value;
  std::string_view meaning;
};

// All settings, in documentation order.
std::span<const Setting> settings();

// The value from the environment, else the default. Unknown names are a bug: kInternal.
Result<std::string> setting_string(std::string_view name);
// The value as an integer in [min, max]; a malformed or out-of-range value is kInvalidArgument
// naming the variable, the value and the range.
Result<std::int64_t> setting_int(std::string_view name, std::int64_t min, std::int64_t max);

// The table as aligned text (name, current value, default, meaning), for --print-config.
std::string format_settings();

}  // namespace augur
