// A binary snapshot of a loaded Trace, so that reopening millions of activities skips SQLite
// decoding (the floor of load(): about 0.3 us per row per core). A snapshot is valid for the
// exact same files (canonical path, size, modification time), the same classification rules and
// this loader version; anything else (stale, damaged, truncated, another version) is ignored and
// the traces are loaded again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

// What a snapshot must match: the files' identities and `rules_tag` (e.g. "default").
// Throws std::invalid_argument naming a file that cannot be examined.
std::string cache_key(const std::vector<std::string>& files, const std::string& rules_tag);

// The snapshot file for `key` in `dir` (a hash of the key; the key itself is stored inside).
std::string cache_path(const std::string& dir, const std::string& key);

// Writes `t` atomically (temporary name, then rename). False, with nothing left behind, on an
// I/O error, or for a trace whose kernel shapes are still pending (Trace::pending_shapes). Keeps at
// most `keep` snapshots in the folder (the least recently used go).
bool save_cache(const Trace& t, const std::string& key, const std::string& path, int keep = 4);

// The trace of a snapshot, or nullopt when it is absent, for another key, or unreadable.
std::optional<Trace> load_cache(const std::string& path, const std::string& key);

}  // namespace c3::analyzer
