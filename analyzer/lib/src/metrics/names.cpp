#include "c3/analyzer/metrics/names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <set>

namespace c3::analyzer {

namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";
// Template arguments are folded only after a name at least this long.
constexpr size_t kFoldFrom = 8;

bool ends_with_operator(std::string_view s) {
  return s.size() >= 8 && s.substr(s.size() - 8) == "operator";
}

// A mangled name demangled, or empty.
std::string demangled(std::string_view name) {
  if (name.substr(0, 2) != "_Z") return {};
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> d(
      abi::__cxa_demangle(std::string(name).c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : std::string();
}

// The qualified function name of a C++ signature: "void a::f<int>(int)" -> "a::f<int>"; empty
// when `name` is not a signature (no parameter list after a name).
std::string_view qualified_name(std::string_view name) {
  int angle = 0, paren = 0;
  size_t word = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '(') {
      if (angle == 0 && paren == 0) {
        if (name.substr(i, kAnonymous.size()) == kAnonymous) {
          i += kAnonymous.size() - 1;
          continue;
        }
        if (ends_with_operator(name.substr(0, i)) && name.substr(i, 2) == "()") {
          ++i;  // operator(): its own "()" is part of the name
          continue;
        }
        if (i > word) return name.substr(word, i - word);
      }
      ++paren;
    } else if (c == ')') {
      if (paren > 0) --paren;
    } else if (paren == 0) {
      if (c == '<' && !ends_with_operator(name.substr(0, i)) &&
          !(i > 0 && name[i - 1] == '<' && ends_with_operator(name.substr(0, i - 1)))) {
        ++angle;
      } else if (c == '>' && angle > 0 && !(i > 0 && name[i - 1] == '-')) {
        --angle;
      } else if (c == ' ' && angle == 0) {
        word = i + 1;
      }
    }
  }
  return {};
}

// "a::b<x::y>::f<int>" -> "f<int>": the part after the last "::" outside brackets.
std::string_view unqualified(std::string_view q) {
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    const char c = q[i];
    if (q.substr(i, kAnonymous.size()) == kAnonymous && depth == 0) {
      i += kAnonymous.size() - 1;
      continue;
    }
    if (c == '<' || c == '(' || c == '{' || c == '[') {
      ++depth;
    } else if ((c == '>' || c == ')' || c == '}' || c == ']') && depth > 0) {
      --depth;
    } else if (c == ':' && depth == 0 && i + 1 < q.size() && q[i + 1] == ':') {
      from = i + 2;
      ++i;
    }
  }
  return q.substr(from);
}

}  // namespace

std::string short_kernel_name(std::string_view name, NameDetail detail) {
  const std::string d = demangled(name);
  const std::string_view full = d.empty() ? name : std::string_view(d);
  const std::string_view q = qualified_name(full);
  if (q.empty()) return std::string(full);
  const std::string_view base = unqualified(q);
  if (base.empty()) return std::string(full);
  if (detail == NameDetail::templates) return std::string(base);
  const size_t lt = base.find('<');
  // A short generic name ("Kernel<cutlass_80_tensorop_...>", CUTLASS's) says little without
  // its template arguments: those stay.
  if (lt == std::string_view::npos || lt < kFoldFrom || ends_with_operator(base.substr(0, lt)))
    return std::string(base);
  return std::string(base.substr(0, lt)) + "<...>";
}

std::vector<std::string> distinct_short_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  std::map<std::string, std::set<std::string_view>> originals;  // folded -> full names
  for (const std::string& n : names) {
    out.push_back(short_kernel_name(n));
    originals[out.back()].insert(n);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (originals[out[i]].size() > 1) {
      std::string t = short_kernel_name(names[i], NameDetail::templates);
      out[i] = std::move(t);
    }
  }
  return out;
}

std::vector<std::string> short_signatures(const std::vector<std::string>& signatures) {
  std::vector<std::string> names, shapes, out;
  for (const std::string& s : signatures) {
    const size_t shape = s.size() >= 3 && s.compare(s.size() - 3, 3, ">>>") == 0
                             ? s.rfind(" <<<")
                             : std::string::npos;
    names.push_back(shape == std::string::npos ? s : s.substr(0, shape));
    shapes.push_back(shape == std::string::npos ? std::string() : s.substr(shape));
  }
  std::map<std::string, std::set<std::string>> seen;  // folded name + shape -> full names
  for (size_t i = 0; i < names.size(); ++i) {
    out.push_back(short_kernel_name(names[i]));
    seen[out[i] + shapes[i]].insert(names[i]);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (seen[out[i] + shapes[i]].size() > 1)
      out[i] = short_kernel_name(names[i], NameDetail::templates);
    out[i] += shapes[i];
  }
  return out;
}

std::string elide_middle(std::string_view text, size_t width) {
  // Code point starts (UTF-8 continuation bytes are 10xxxxxx).
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) starts.push_back(i);
  }
  if (starts.size() <= width) return std::string(text);
  if (width <= 4) return std::string(text.substr(0, starts[width]));  // no room for "..."
  const size_t keep = width - 3, head = (keep + 1) / 2, tail = keep - head;
  return std::string(text.substr(0, starts[head])) + "..." +
         std::string(text.substr(starts[starts.size() - tail]));
}

}  // namespace c3::analyzer
