// Durations as the reports print them: one formatter, so that a value reads the same in every
// table and line ("950 ns", "12.3 us", "4.56 ms", "1.20 s": three significant digits in the
// largest unit that keeps the number at least 1; never an exponent).
#pragma once

#include <string>

namespace c3::analyzer {

std::string format_duration(double ns);

}  // namespace c3::analyzer
