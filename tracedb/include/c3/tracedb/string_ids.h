// Strings numbered 0, 1, 2, ... in the order they are first seen, over a vector the caller owns
// (an importer's names, the analyzer's Trace::names). Lookups take a string_view: nothing is
// copied for a string already there, which is nearly every lookup (a trace repeats a few
// thousand names millions of times).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace c3::tracedb {

class StringIds {
 public:
  // Numbers the strings already in `names` by their position.
  explicit StringIds(std::vector<std::string>& names) : names_(names) {
    for (size_t i = 0; i < names_.size(); ++i) ids_.emplace(names_[i], static_cast<int32_t>(i));
  }
  int32_t id(std::string_view s) {
    // The few names a stretch of a trace repeats are found in a small table first, by their
    // length and first and last bytes, and checked whole: hashing a 100-byte kernel name for the
    // map cost more than the rest of an event's lookup.
    Recent& r = recent_[slot(s)];
    if (r.id >= 0 && static_cast<size_t>(r.id) < names_.size()) {
      // (compared as string_views: an empty one may have no data, which memcmp must not get)
      if (std::string_view(names_[static_cast<size_t>(r.id)]) == s) return r.id;
    }
    auto it = ids_.find(s);
    if (it != ids_.end()) {
      r.id = it->second;
      return it->second;
    }
    const auto id = static_cast<int32_t>(names_.size());
    names_.emplace_back(s);
    ids_.emplace(names_.back(), id);
    r.id = id;
    return id;
  }

 private:
  struct Recent {
    int32_t id = -1;
  };
  static size_t slot(std::string_view s) {
    uint64_t head = 0, tail = 0;
    const size_t n = s.size() < 8 ? s.size() : 8;
    if (n > 0) {
      std::memcpy(&head, s.data(), n);
      std::memcpy(&tail, s.data() + s.size() - n, n);
    }
    const uint64_t x = (head ^ (tail * 0x9E3779B97F4A7C15ULL) ^ s.size()) * 0xBF58476D1CE4E5B9ULL;
    return static_cast<size_t>(x >> 58);  // 64 slots
  }
  std::array<Recent, 64> recent_{};
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string>& names_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
};

}  // namespace c3::tracedb
