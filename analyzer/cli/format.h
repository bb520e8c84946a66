// Human-readable units for CLI output.
#pragma once

#include <cstdint>
#include <string>

namespace c3::cli {

// 950 ns, 12.3 us, 4.56 ms, 7.89 s
std::string format_duration(int64_t ns);
// 512 B, 1.5 KiB, 80.0 GiB
std::string format_bytes(int64_t bytes);

}  // namespace c3::cli
