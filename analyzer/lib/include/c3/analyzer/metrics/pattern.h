// Regular expressions over trace data (kernel names, NVTX range names): RE2, which matches in
// time linear in the text and without recursion, so a hostile 1 MB name costs a scan, not a
// stack overflow. Syntax: RE2's (Perl-like, without backreferences or lookaround;
// docs/analyze.md "Regular expressions").
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace c3::analyzer {

class Pattern {
 public:
  Pattern() = default;
  // Throws std::invalid_argument "<where>: bad regular expression '<pattern>': <reason>".
  static Pattern compile(const std::string& pattern, const std::string& where);

  // Somewhere in `text` (Python's re.search).
  bool search(std::string_view text) const;
  // From the start of `text` (Python's re.match, as HTA's name rules are applied).
  bool match_prefix(std::string_view text) const;
  const std::string& text() const { return text_; }
  bool empty() const { return re_ == nullptr; }

 private:
  std::string text_;
  std::shared_ptr<const re2::RE2> re_;  // shared: rules are copied with their options
};

}  // namespace c3::analyzer
