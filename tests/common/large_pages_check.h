// Test helpers for transparent huge pages: whether this system has them, and whether the mapping
// that holds an address was advised to use them (its VmFlags in /proc/self/smaps hold "hg").
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace c3::common::test {

inline bool huge_pages_available() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  return std::getline(f, mode) && mode.find("[never]") == std::string::npos;
}

inline bool advised_huge(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream f("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(f, line)) {
    // A mapping's first line: "start-end perms offset dev inode path" in hexadecimal.
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find(':') > space) {
      const uintptr_t from = std::strtoull(line.substr(0, dash).c_str(), nullptr, 16);
      const uintptr_t to =
          std::strtoull(line.substr(dash + 1, space - dash - 1).c_str(), nullptr, 16);
      inside = from <= at && at < to;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      std::istringstream flags(line.substr(8));
      std::string flag;
      while (flags >> flag)
        if (flag == "hg") return true;
      return false;
    }
  }
  return false;
}

}  // namespace c3::common::test
