// Small string helpers shared by the parsers of flags and specs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace c3::common {

// "a:b::c" split at ':' -> {"a", "b", "", "c"}; an empty string gives {""}.
std::vector<std::string> split(std::string_view s, char sep);

}  // namespace c3::common
