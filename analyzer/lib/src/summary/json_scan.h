// One pass over JSON text that knows whether a byte is inside a string: summary files drop the
// whitespace outside strings as they are read (pipeline.cpp) and bound their nesting before the
// parse (summary_json.cpp).
#pragma once

#include <algorithm>
#include <cstddef>

namespace c3::analyzer {

struct JsonScan {
  bool in_string = false, escaped = false;
  size_t depth = 0, deepest = 0;  // of arrays and objects, outside strings

  // Takes the next byte; false for whitespace outside strings (it means nothing in JSON).
  bool feed(char c) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      return true;
    }
    switch (c) {
      case ' ':
      case '\n':
      case '\r':
      case '\t':
        return false;
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        deepest = std::max(deepest, ++depth);
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
    return true;
  }
};

}  // namespace c3::analyzer
