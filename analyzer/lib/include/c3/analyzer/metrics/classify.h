// Classification of GPU activities into compute / communication / memory / other
// (docs/metrics.md "Classes of GPU activity"). Rules are regular expressions on the activity's
// name, tried in order, first match wins; the default rules are HTA's. A kernel that the collector
// linked to an NCCL call is communication whatever its name, and memcpy/memset activities are
// memory unless a rule says otherwise.
#pragma once

#include <string>
#include <vector>

#include "c3/analyzer/metrics/pattern.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

struct Rule {
  std::string pattern;  // RE2 regular expression (pattern.h), matched from the start of the name
  Class cls = Class::compute;
  Pattern re;
};

class Rules {
 public:
  // HTA's rules (hta/common/types.py): communication ^nccl|^hip|^hccl|.*ncclKernel.*; memory
  // ^(hip)?Memcpy|^(hip)?Memset|^dma; other ^.*Sync|^Stream Wait Event|cuda.*LaunchKernel;
  // everything else compute.
  static Rules defaults();
  // A rules file: one rule per line, "CLASS REGEX" (class: compute, communication, memory,
  // other), '#' comments and blank lines ignored. Its rules come before the defaults (so they
  // override them); a line "default off" drops the defaults. Throws std::invalid_argument with
  // "FILE:LINE: ..." for a bad line.
  static Rules from_file(const std::string& path);
  static Rules parse(const std::string& text, const std::string& where);

  // The class of an activity named `name` of kind `k`.
  Class classify(const std::string& name, Kind k) const;
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  std::vector<Rule> rules_;
};

// Sets Activities::cls for every row (names classified once each), then marks kernels linked to
// a collective as communication.
void classify(Trace& t, const Rules& rules);

bool parse_class(const std::string& s, Class* out);

// The rules as text, one "CLASS PATTERN" line each, in order (what a summary records).
std::string rules_text(const Rules& rules);

}  // namespace c3::analyzer
