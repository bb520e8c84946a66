// c3bench's launch knobs, named one way wherever they appear: c3bench's flags, labels and JSON,
// the trace's bench_result.priority and launch_order columns, the migration of older labels, and
// the analyzer's typed results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace c3::common {

// The two streams' CUDA priorities: equal, or the communication stream's higher or lower.
enum class StreamPriority : uint8_t { equal, comm_high, comm_low };
// Which of the two operations is launched first.
enum class LaunchOrder : uint8_t { compute_first, comm_first };

// Indexed by the enums.
inline constexpr const char* kStreamPriorityNames[] = {"equal", "comm_high", "comm_low"};
inline constexpr const char* kLaunchOrderNames[] = {"compute_first", "comm_first"};
static_assert(std::size(kStreamPriorityNames) == static_cast<size_t>(StreamPriority::comm_low) + 1);
static_assert(std::size(kLaunchOrderNames) == static_cast<size_t>(LaunchOrder::comm_first) + 1);

constexpr const char* stream_priority_name(StreamPriority p) {
  return kStreamPriorityNames[static_cast<size_t>(p)];
}
constexpr const char* launch_order_name(LaunchOrder o) {
  return kLaunchOrderNames[static_cast<size_t>(o)];
}

// The inverses, for the exact names only; nothing for any other text.
constexpr std::optional<StreamPriority> stream_priority_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kStreamPriorityNames); ++i) {
    if (name == kStreamPriorityNames[i]) return static_cast<StreamPriority>(i);
  }
  return std::nullopt;
}
constexpr std::optional<LaunchOrder> launch_order_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kLaunchOrderNames); ++i) {
    if (name == kLaunchOrderNames[i]) return static_cast<LaunchOrder>(i);
  }
  return std::nullopt;
}

}  // namespace c3::common
