// The output policy's units (tracedb/output_file.h): several outputs of one command as one unit,
// pipes named through links, and the signal cleanup of a temporary folder.
#include "c3/tracedb/output_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using c3::tracedb::OutputError;
using c3::tracedb::OutputRules;
using c3::tracedb::OutputSet;

namespace {

struct Scratch {
  fs::path dir;
  Scratch() {
    std::string t = (fs::temp_directory_path() / "c3-output-test-XXXXXX").string();
    dir = ::mkdtemp(t.data());
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Nothing but the named files in the folder (no temporary, no backup link left).
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

// `--json X --summary X --force` (or X and a link to it): one output silently replaced the other.
TEST(OutputSet, RefusesTwoFlagsNamingOneFile) {
  Scratch s;
  for (bool exists : {false, true}) {
    if (exists) std::ofstream(s / "x.json") << "old";
    fs::remove(s / "link.json");
    fs::create_symlink(s / "x.json", s / "link.json");
    std::vector<std::string> others = {s / "x.json", s.dir.string() + "/./x.json"};
    if (exists) others.push_back(s / "link.json");  // (a link to nothing is refused anyway)
    for (const std::string& other : others) {
      try {
        OutputSet set({{"--json", s / "x.json"}, {"--summary", other}}, OutputRules{true, {}});
        ADD_FAILURE() << "accepted " << other;
      } catch (const OutputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("--json"), std::string::npos) << what;
        EXPECT_NE(what.find("--summary"), std::string::npos) << what;
        EXPECT_NE(what.find("name the same file"), std::string::npos) << what;
      }
    }
    if (exists) {
      EXPECT_EQ(read(s / "x.json"), "old");
    }
  }
  // A character device loses nothing when named twice.
  EXPECT_NO_THROW(OutputSet({{"--json", "/dev/null"}, {"--csv", "/dev/null"}}, OutputRules{}));
}

// A later output that fails left the earlier ones in place although the command failed: now
// every path is left as it was, the replaced file put back.
TEST(OutputSet, AFailedOutputLeavesEveryPathAsItWas) {
  Scratch s;
  std::ofstream(s / "a.json") << "old a";
  {
    OutputSet set({{"--json", s / "a.json"}, {"--md", s / "b.md"}, {"--csv", s / "c.csv"}},
                  OutputRules{true, {}});
    set.file("--json")->write("new a");
    set.file("--md")->write("new b");
    set.file("--csv")->write("new c");
    // c.csv appears while the command runs: its move fails (never replaced without --force...
    // created meanwhile), after a.json and b.md were moved.
    std::ofstream(s / "c.csv") << "someone else's";
    EXPECT_THROW(set.commit(), OutputError);
  }
  EXPECT_EQ(read(s / "a.json"), "old a");
  EXPECT_FALSE(fs::exists(s / "b.md"));
  EXPECT_EQ(read(s / "c.csv"), "someone else's");
  EXPECT_EQ(listing(s.dir), (std::vector<std::string>{"a.json", "c.csv"}));
  // All complete: all moved, no backup link left.
  fs::remove(s / "c.csv");
  {
    OutputSet set({{"--json", s / "a.json"}, {"--md", s / "b.md"}}, OutputRules{true, {}});
    set.file("--json")->write("new a");
    set.file("--md")->write("new b");
    set.commit();
  }
  EXPECT_EQ(read(s / "a.json"), "new a");
  EXPECT_EQ(read(s / "b.md"), "new b");
  EXPECT_EQ(listing(s.dir), (std::vector<std::string>{"a.json", "b.md"}));
}

// A write error in one output (a full disk) moves none of them.
TEST(OutputSet, AWriteErrorMovesNone) {
  Scratch s;
  OutputSet set({{"--json", s / "a.json"}, {"--csv", "/dev/full"}}, OutputRules{});
  set.file("--json")->write("a");
  set.file("--csv")->write(std::string(1 << 16, 'x'));
  try {
    set.commit();
    ADD_FAILURE() << "no error";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("--csv /dev/full"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(listing(s.dir).empty());
}

// /dev/stdout, /dev/fd/N and >(...) are links to "pipe:[N]", which no path names: they were
// refused as "a symbolic link to nothing".
TEST(OutputFile, WritesAPipeNamedThroughDevFd) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string name = "/dev/fd/" + std::to_string(fds[1]);
  {
    c3::tracedb::OutputFile out("--json", name, OutputRules{});
    EXPECT_EQ(out.kind(), c3::tracedb::OutputKind::in_place);
    out.write("{}\n");
    out.commit();
  }
  ::close(fds[1]);
  char buf[16] = {};
  EXPECT_EQ(::read(fds[0], buf, sizeof buf), 3);
  EXPECT_STREQ(buf, "{}\n");
  ::close(fds[0]);
}

// A signal removes a registered temporary folder and the files in it (the conversions of
// analyzer/open.h's TempDir), files still being created included.
TEST(OutputCleanup, ASignalRemovesATemporaryFolder) {
  Scratch s;
  const std::string folder = s / "c3scope-open-test";
  fs::create_directories(folder);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    c3::tracedb::install_output_cleanup();
    c3::tracedb::register_temporary(folder, /*folder=*/true);
    for (int i = 0; i < 200; ++i)
      std::ofstream(folder + "/import-" + std::to_string(i) + ".sqlite") << i;
    std::ofstream(s / "ready") << 1;
    for (;;) ::pause();
  }
  for (int i = 0; i < 2000 && !fs::exists(s / "ready"); ++i) ::usleep(10000);
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_FALSE(fs::exists(folder));
}
