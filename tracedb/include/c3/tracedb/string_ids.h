// Strings numbered 0, 1, 2, ... in the order they are first seen, over a vector the caller owns
// (an importer's names, the analyzer's Trace::names). Lookups take a string_view: nothing is
// copied for a string already there, which is nearly every lookup (a trace repeats a few
// thousand names millions of times).
#pragma once

#include <cstdint>
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
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<int32_t>(names_.size());
    names_.emplace_back(s);
    ids_.emplace(names_.back(), id);
    return id;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string>& names_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
};

}  // namespace c3::tracedb
