// Small string helpers shared by the parsers of flags and specs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace c3::common {

// "a:b::c" split at ':' -> {"a", "b", "", "c"}; an empty string gives {""}.
std::vector<std::string> split(std::string_view s, char sep);

// The whole of `s` as a decimal integer ("-12"); nullopt if anything else is in it, it is empty
// or it does not fit.
std::optional<int64_t> parse_int(std::string_view s);

// Natural order: runs of digits compare by their value ("rank2" before "rank10"), the rest byte
// by byte; names that compare equal so ("a01", "a1") fall back to byte order. A strict weak
// order (for sorting file names).
bool natural_less(std::string_view a, std::string_view b);

}  // namespace c3::common
