// Caps on untrusted text, in one place for every reader that needs them: the trace readers (a
// c3scope trace, an Nsight Systems export) and the summary reader. A name no real program makes
// (a 50 MB host name in a 70 KB gzip summary) would otherwise be copied into every report,
// export and GUI row (issue 24). docs/analyze.md "Limits" states them.
#pragma once

#include <cstddef>
#include <string_view>

namespace c3::common {

// A name: host, kernel, NVTX range or step, c3bench label, collective op, communicator, device,
// version, signature, class, backend ... (real ones are well under 1 KiB; C++ kernel names with
// templates reach a few hundred bytes).
inline constexpr size_t kNameLimit = 4096;
// A command line (a long launcher line with many flags).
inline constexpr size_t kCommandLineLimit = 65536;

// `s` cut to at most `limit` bytes, not inside a UTF-8 sequence (a cut never makes invalid
// UTF-8 of valid text).
inline std::string_view cut_text(std::string_view s, size_t limit) {
  if (s.size() <= limit) return s;
  size_t n = limit;
  // Back over continuation bytes (10xxxxxx) to the start of the sequence that crosses the cut.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

}  // namespace c3::common
