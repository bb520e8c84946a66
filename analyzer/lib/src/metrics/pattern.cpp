#include "c3/analyzer/metrics/pattern.h"

#include <re2/re2.h>

#include <stdexcept>

namespace c3::analyzer {

Pattern Pattern::compile(const std::string& pattern, const std::string& where) {
  RE2::Options o;
  o.set_log_errors(false);  // the error goes into the exception, not to stderr
  auto re = std::make_shared<const RE2>(pattern, o);
  if (!re->ok()) {
    throw std::invalid_argument(where + ": bad regular expression '" + pattern +
                                "': " + re->error());
  }
  Pattern p;
  p.text_ = pattern;
  p.re_ = std::move(re);
  return p;
}

bool Pattern::search(std::string_view text) const {
  return re_ != nullptr && re_->Match(text, 0, text.size(), RE2::UNANCHORED, nullptr, 0);
}

bool Pattern::match_prefix(std::string_view text) const {
  return re_ != nullptr && re_->Match(text, 0, text.size(), RE2::ANCHOR_START, nullptr, 0);
}

}  // namespace c3::analyzer
