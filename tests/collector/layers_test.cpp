// The collector's include layering (docs/collector.md, "Layers"): every file of collector/src
// sits on one floor and includes only files of its own floor or below, so nothing the Recorder
// drives includes recorder.h (or can call Recorder::instance()).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;

// File name without extension -> floor. A new file needs a place here (and in the docs).
const std::map<std::string, int>& floors() {
  static const std::map<std::string, int> f = {
      // 0, the ground floor: data, counters, configuration, clocks, pure decoders.
      {"buffer_pool", 0},
      {"clock", 0},
      {"config", 0},
      {"counters", 0},
      {"cupti_api", 0},
      {"decode", 0},
      {"event", 0},
      {"log", 0},
      {"nccl_names", 0},
      {"nvtx_attributes", 0},
      {"nvtx_tracker", 0},
      {"process_info", 0},
      // 1, what the Recorder drives: given counters and sinks by it, never asking for it.
      {"cupti_session", 1},
      {"event_queue", 1},
      {"trace_writer", 1},
      // 2, the hub.
      {"recorder", 2},
      // 3, entry points and producers: they find the Recorder through Recorder::instance().
      {"entry", 3},
      {"nccl_wrappers", 3},
      {"nvtx_injection", 3},
  };
  return f;
}

TEST(CollectorLayers, NothingIncludesFromAbove) {
  const fs::path src = fs::path(C3_SOURCE_DIR) / "collector" / "src";
  const std::regex include_re(R"(^\s*#\s*include\s*"([^"]+)\")");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(src)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".h" && p.extension() != ".cpp") continue;
    ++files;
    const auto self = floors().find(p.stem().string());
    ASSERT_NE(self, floors().end()) << p.filename() << " has no floor in this test's table";
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const fs::path included = src / m[1].str();
      if (!fs::exists(included)) continue;  // tracedb, the public header, CUDA
      const auto other = floors().find(included.stem().string());
      ASSERT_NE(other, floors().end()) << included.filename() << " has no floor";
      EXPECT_LE(other->second, self->second)
          << p.filename() << " (floor " << self->second << ") includes " << m[1] << " (floor "
          << other->second << ")";
    }
  }
  EXPECT_GT(files, 10);
}

}  // namespace
