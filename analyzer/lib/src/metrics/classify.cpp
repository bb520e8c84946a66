#include "c3/analyzer/metrics/classify.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "c3/tracedb/output_file.h"

namespace c3::analyzer {
namespace {

Rule make_rule(const std::string& pattern, Class cls, const std::string& where) {
  Rule r;
  r.pattern = pattern;
  r.cls = cls;
  r.re = Pattern::compile(pattern, where);
  return r;
}

// HTA's default rules, memory first so that ROCm's hipMemcpy* names are memory, not
// communication (^hip).
const std::vector<std::pair<const char*, Class>>& default_patterns() {
  static const std::vector<std::pair<const char*, Class>> p = {
      {".*Memcpy", Class::memory},
      {".*Memset", Class::memory},
      {"^dma", Class::memory},
      {"^nccl", Class::communication},
      {"^rccl", Class::communication},
      {"^hccl", Class::communication},
      {"^hip", Class::communication},
      {".*ncclKernel.*", Class::communication},
      {"^.*Sync", Class::other},
      {"^Stream Wait Event", Class::other},
      {"cuda.*LaunchKernel", Class::other},
  };
  return p;
}

}  // namespace

bool parse_class(const std::string& s, Class* out) {
  if (s == "compute" || s == "computation") {
    *out = Class::compute;
  } else if (s == "communication" || s == "comm") {
    *out = Class::communication;
  } else if (s == "memory" || s == "mem") {
    *out = Class::memory;
  } else if (s == "other") {
    *out = Class::other;
  } else {
    return false;
  }
  return true;
}

std::string rules_text(const Rules& rules) {
  std::string out;
  for (const Rule& r : rules.rules()) {
    out += class_name(r.cls);
    out += ' ';
    out += r.pattern;
    out += '\n';
  }
  return out;
}

Rules Rules::defaults() {
  Rules r;
  for (const auto& [p, c] : default_patterns())
    r.rules_.push_back(make_rule(p, c, "default rules"));
  return r;
}

Rules Rules::parse(const std::string& text, const std::string& where) {
  Rules r;
  bool use_defaults = true;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string at = where + ":" + std::to_string(n);
    const size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    line = line.substr(b);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    if (line == "default off") {
      use_defaults = false;
      continue;
    }
    const size_t sp = line.find_first_of(" \t");
    if (sp == std::string::npos) {
      throw std::invalid_argument(
          at + ": expected 'CLASS REGEX' (class: compute, communication, memory, other)");
    }
    Class c;
    const std::string cls = line.substr(0, sp);
    if (!parse_class(cls, &c)) {
      std::string msg = at + ": unknown class '";
      msg += cls;
      msg += "' (expected compute, communication, memory or other)";
      throw std::invalid_argument(msg);
    }
    const std::string pattern = line.substr(line.find_first_not_of(" \t", sp));
    r.rules_.push_back(make_rule(pattern, c, at));
  }
  if (use_defaults) {
    for (const auto& [p, c] : default_patterns())
      r.rules_.push_back(make_rule(p, c, "default rules"));
  }
  return r;
}

Rules Rules::from_file(const std::string& path) {
  // Checked before opening: a folder read as empty rules, and a FIFO waited for a writer forever.
  if (const std::string why = tracedb::input_file_problem(path); !why.empty()) {
    const bool there = ::access(path.c_str(), F_OK) == 0;
    throw std::invalid_argument("--rules " + tracedb::printable(path) + ": " +
                                (there ? why : "cannot read the file: " + why));
  }
  std::ifstream in(path);
  if (!in)
    throw std::invalid_argument("--rules " + tracedb::printable(path) + ": cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

Class Rules::classify(const std::string& name, Kind k) const {
  for (const Rule& r : rules_) {
    // Matched from the start of the name (HTA's re.match).
    if (r.re.match_prefix(name)) return r.cls;
  }
  return k == Kind::kernel ? Class::compute : Class::memory;
}

void classify(Trace& t, const Rules& rules) {
  // Memcpy/memset rows are memory unless a rule names them otherwise: classify (name, kind)
  // pairs once each.
  std::unordered_map<int64_t, Class> cache;
  Activities& a = t.activities;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t key = static_cast<int64_t>(a.name[i]) * 4 + static_cast<int64_t>(a.kind[i]);
    auto it = cache.find(key);
    if (it == cache.end()) {
      const std::string& name =
          a.name[i] >= 0 ? t.names[static_cast<size_t>(a.name[i])] : std::string();
      it = cache.emplace(key, rules.classify(name, a.kind[i])).first;
    }
    a.cls[i] = a.collective[i] >= 0 ? Class::communication : it->second;
  }
}

}  // namespace c3::analyzer
