// StringIds (tracedb/string_ids.h): each string gets the next number once, whatever its length,
// and the table of recent names in front of the map never answers for a different string (names
// that share a length and their first and last 8 bytes, alternating, as kernel names do).
#include "c3/tracedb/string_ids.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace c3::tracedb {
namespace {

TEST(StringIds, EachStringIsNumberedOnceInTheOrderFirstSeen) {
  std::vector<std::string> names = {"already"};
  StringIds ids(names);
  std::vector<std::string> strings = {"", "a", "already", "abcdefgh", "abcdefghi"};
  // An empty view with no data at all (an event's absent name) is the empty string.
  EXPECT_EQ(ids.id(std::string_view{}), ids.id(""));
  EXPECT_EQ(ids.id(std::string_view{}), 1);
  // Same length, same first and last 8 bytes, different middles: the same slot of the table.
  for (char c = 'a'; c <= 'z'; ++c) {
    strings.push_back("void gemm_kernel<" + std::string(1, c) + ">(float const*, float*)");
  }
  std::vector<int32_t> first;
  first.reserve(strings.size());
  for (const std::string& s : strings) first.push_back(ids.id(s));
  EXPECT_EQ(first[0], 1);  // "" after the name already there (asked for above)
  EXPECT_EQ(first[2], 0);  // "already"
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < strings.size(); ++i) {
      const size_t k = round % 2 == 0 ? i : strings.size() - 1 - i;
      EXPECT_EQ(ids.id(strings[k]), first[k]) << strings[k];
      EXPECT_EQ(names[static_cast<size_t>(first[k])], strings[k]);
    }
  }
  EXPECT_EQ(names.size(), strings.size());  // ("already" was there: one of them)
  // A string_view into another buffer, and one that is a prefix of a known name.
  const std::string longer = strings.back() + "x";
  EXPECT_EQ(ids.id(std::string_view(longer).substr(0, strings.back().size())), first.back());
  const size_t n = names.size();
  EXPECT_EQ(ids.id(longer), static_cast<int32_t>(n));
  EXPECT_EQ(names.size(), n + 1);
}

}  // namespace
}  // namespace c3::tracedb
