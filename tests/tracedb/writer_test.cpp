#include "c3/tracedb/writer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "c3/tracedb/reader.h"

namespace fs = std::filesystem;
using namespace c3::tracedb;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("c3scope-test-" + std::to_string(getpid()) + "-" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

KernelRow kernel(int64_t start, int64_t end, int64_t name_id, int64_t corr) {
  KernelRow k;
  k.process_id = 1;
  k.device_id = 0;
  k.stream_id = 7;
  k.correlation_id = corr;
  k.start_ns = start;
  k.end_ns = end;
  k.name_id = name_id;
  k.grid_x = k.grid_y = k.grid_z = 1;
  k.block_x = 128;
  k.block_y = k.block_z = 1;
  k.launch_type = "regular";
  return k;
}

}  // namespace

TEST(Writer, CreatesSchemaMetaAndRows) {
  TempDir dir;
  auto w = Writer::create(dir.file("t.sqlite"));
  ProcessRow p;
  p.id = 1;
  p.pid = 42;
  p.host = "h";
  p.command_line = "a b";
  p.start_ns = 1;
  p.trace_clock = "CLOCK_MONOTONIC";
  w->insert(p);
  int64_t gemm = w->intern("gemm");
  EXPECT_EQ(gemm, w->intern("gemm"));
  w->insert(kernel(100, 200, gemm, 5));
  MemcpyRow m;
  m.process_id = 1;
  m.device_id = 0;
  m.stream_id = 8;
  m.correlation_id = 6;
  m.start_ns = 150;
  m.end_ns = 250;
  m.copy_kind = "H2D";
  m.bytes = 4096;
  m.src_kind = "pinned";
  m.dst_kind = "device";
  w->insert(m);
  w->set_stat(1, "nvtx_events", 3);
  w->set_stat(1, "nvtx_events", 4);  // replaces, never duplicates
  w->close();
  EXPECT_FALSE(fs::exists(dir.file("t.sqlite-wal")));

  auto r = Reader::open(dir.file("t.sqlite"));
  EXPECT_EQ(r->schema_version(), kSchemaVersion);
  EXPECT_EQ(r->meta().at("source"), "collector");
  EXPECT_EQ(r->meta().at("clean_close"), "1");
  EXPECT_EQ(r->count("kernel"), 1);
  auto q =
      r->query("SELECT kind, name, start_ns, end_ns, bytes FROM gpu_activity ORDER BY start_ns");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.text(0), "kernel");
  EXPECT_EQ(q.text(1), "gemm");
  EXPECT_TRUE(q.is_null(4));
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.text(0), "memcpy");
  EXPECT_EQ(q.text(1), "Memcpy H2D");
  EXPECT_EQ(q.i64(4), 4096);
  EXPECT_FALSE(q.step());
  auto s = r->query("SELECT COUNT(*), MAX(value) FROM stats WHERE name = 'nvtx_events'");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.i64(0), 1);
  EXPECT_EQ(s.i64(1), 4);
  auto idx = r->query(
      "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'kernel_by_time'");
  ASSERT_TRUE(idx.step());
  EXPECT_EQ(idx.i64(0), 1);
}

// A scratch conversion (importer::Options::scratch: a file that lives only while it is read):
// the same rows, readable, but no indexes and no journal files beside it.
TEST(Writer, ScratchFilesHaveTheRowsWithoutIndexesOrJournal) {
  TempDir dir;
  WriterOptions o;
  o.scratch = true;
  const std::string path = dir.file("s.sqlite");
  auto w = Writer::create(path, o);
  w->insert(kernel(10, 20, w->intern("gemm"), 1));
  w->insert(kernel(30, 45, w->intern("gemm"), 2));
  w->close();
  EXPECT_FALSE(fs::exists(path + "-wal"));
  EXPECT_FALSE(fs::exists(path + "-journal"));
  auto r = Reader::open(path);
  auto q = r->query("SELECT COUNT(*), SUM(end_ns - start_ns) FROM kernel");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 2);
  EXPECT_EQ(q.i64(1), 25);
  auto idx =
      r->query("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL");
  ASSERT_TRUE(idx.step());
  EXPECT_EQ(idx.i64(0), 0);
}

TEST(Writer, NeverOverwritesAnExistingFile) {
  TempDir dir;
  { auto w = Writer::create(dir.file("x.sqlite")); }
  try {
    Writer::create(dir.file("x.sqlite"));
    FAIL() << "expected WriteError";
  } catch (const WriteError& e) {
    EXPECT_EQ(e.kind(), WriteError::Kind::exists);
    EXPECT_NE(std::string(e.what()).find("x.sqlite"), std::string::npos);
  }
}

TEST(Writer, UnwritableFolderIsAnIoErrorNamingThePath) {
  try {
    Writer::create("/nonexistent-dir-c3/t.sqlite");
    FAIL() << "expected WriteError";
  } catch (const WriteError& e) {
    EXPECT_EQ(e.kind(), WriteError::Kind::io);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir-c3/t.sqlite"), std::string::npos);
  }
}

TEST(Writer, CommittedRowsSurviveWithoutClose) {
  // What a killed job leaves: committed transactions readable, the open one gone.
  TempDir dir;
  const std::string path = dir.file("k.sqlite");
  auto* w = Writer::create(path).release();
  int64_t n = w->intern("k");
  w->insert(kernel(1, 2, n, 1));
  w->commit();
  w->insert(kernel(3, 4, n, 2));  // never committed
  // Simulate the kill: copy the files as they are now, without closing the writer.
  fs::copy_file(path, dir.file("copy.sqlite"));
  if (fs::exists(path + "-wal")) fs::copy_file(path + "-wal", dir.file("copy.sqlite-wal"));
  auto r = Reader::open(dir.file("copy.sqlite"));
  EXPECT_EQ(r->count("kernel"), 1);
  EXPECT_EQ(r->meta().at("clean_close"), "0");
  delete w;
}

TEST(Writer, CollectiveKernelViewLinksThroughExternalCorrelation) {
  TempDir dir;
  auto w = Writer::create(dir.file("c.sqlite"));
  int64_t nm = w->intern("ncclDevKernel_AllReduce");
  int64_t k1 = w->insert(kernel(10, 20, nm, 100));
  w->insert(kernel(30, 40, nm, 101));  // unrelated kernel
  ExternalCorrelationRow e;
  e.process_id = 1;
  e.external_kind = "custom0";
  e.external_id = 9;
  e.correlation_id = 100;
  w->insert(e);
  CollectiveRow c;
  c.process_id = 1;
  c.thread_id = 1;
  c.stream_handle = 0;
  c.comm_handle = 1;
  c.op = "AllReduce";
  c.datatype = "float32";
  c.count = 10;
  c.bytes = 40;
  c.seq = 0;
  c.external_id = 9;
  c.host_start_ns = 1;
  c.host_end_ns = 2;
  int64_t cid = w->insert(c);
  w->close();
  auto r = Reader::open(dir.file("c.sqlite"));
  auto q = r->query("SELECT collective_id, kernel_id FROM collective_kernel");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), cid);
  EXPECT_EQ(q.i64(1), k1);
  EXPECT_FALSE(q.step());
  auto g = r->query("SELECT start_ns, end_ns, kernel_count FROM collective_gpu");
  ASSERT_TRUE(g.step());
  EXPECT_EQ(g.i64(0), 10);
  EXPECT_EQ(g.i64(1), 20);
  EXPECT_EQ(g.i64(2), 1);
}
