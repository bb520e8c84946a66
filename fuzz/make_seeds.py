#!/usr/bin/env python3
"""Writes the seed corpora of fuzz/corpus/ (docs/fuzzing.md). Run from the repository root after
building the dev preset (c3scope, c3bench) and the fuzz preset (c3_fuzz_make_snapshot):

    python3 fuzz/make_seeds.py

Seeds are small on purpose (the repository keeps them): cuts of ../shared/traces, a tiny
simulated recording, and hand-made inputs for the binary and text grammars."""

import gzip
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
TRACES = os.path.join(ROOT, "..", "shared", "traces")
C3SCOPE = os.path.join(ROOT, "build", "bin", "c3scope")
C3BENCH = os.path.join(ROOT, "build", "bin", "c3bench")
MAKE_SNAPSHOT = os.path.join(ROOT, "build-fuzz", "bin", "c3_fuzz_make_snapshot")


# Seeds in formats that no tool writes any more, which the readers still take (docs/fuzzing.md).
KEPT = [("snapshot", "kineto_nccl-format2.c3cache"),   # NVTX ranges without kind and colour
        ("snapshot", "c3bench_sim-format3.c3cache"),   # c3bench cases configured by label only
        ("trace", "c3bench_sim-schema2.sqlite")]       # bench_result without typed columns


def out(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def dumps(doc):
    return json.dumps(doc, separators=(",", ":"))


# ---- Kineto: a window of each real trace around a NCCL kernel ---------------------------------
def kineto_cut(path, events):
    doc = json.load(gzip.open(path))
    ev = doc["traceEvents"]
    timed = sorted((e for e in ev if "ts" in e and e.get("ph") != "M"), key=lambda e: float(e["ts"]))
    nccl = next((i for i, e in enumerate(timed) if e.get("cat") == "kernel" and "nccl" in e.get("name", "")), len(timed) // 2)
    lo = max(0, nccl - events // 2)
    window = timed[lo:lo + events]
    t0, t1 = float(window[0]["ts"]), float(window[-1]["ts"])
    # The step ranges around the window, so that steps are found.
    steps = [e for e in timed if e.get("name", "").startswith("ProfilerStep") and float(e["ts"]) <= t1
             and float(e["ts"]) + float(e.get("dur", 0)) >= t0]
    keep = [e for e in ev if e.get("ph") == "M"] + steps[:2] + [e for e in window if e not in steps]
    doc["traceEvents"] = keep
    doc.pop("INFO", None)
    return dumps(doc)


def kineto():
    for name, events in [("hta_sampled_rank-0", 70), ("hta_nccl_data", 70),
                         ("hta_trace_diff_control", 60), ("hta_negative_queue_rank0", 50)]:
        text = kineto_cut(os.path.join(TRACES, "kineto", name + ".json.gz"), events)
        out("kineto", name + ".json", text)
    # One gzip file, so that the plain harness starts from the gzip container too.
    small = kineto_cut(os.path.join(TRACES, "kineto", "hta_sampled_rank-1.json.gz"), 30)
    out("kineto", "hta_sampled_rank-1.json.gz", gzip.compress(small.encode(), mtime=0))
    out("kineto", "empty.json", '{"traceEvents":[]}')
    # A collective kernel with its arguments, a memcpy, a step; the fields kineto.cpp reads.
    out("kineto", "handmade.json", dumps({
        "schemaVersion": 1,
        "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2, "nccl_version": "2.18.1"},
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85e9, "computeMajor": 9,
                              "computeMinor": 0, "numSms": 132, "warpSize": 32}],
        "baseTimeNanoseconds": 1700000000000000000,
        "traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 100, "dur": 900},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5,
             "args": {"correlation": 7, "cbid": 211}},
            {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0, "tid": 7,
             "ts": 120.5, "dur": 300.25, "args": {"device": 0, "stream": 7, "correlation": 7, "grid": [2, 1, 1],
             "block": [640, 1, 1], "registers per thread": 96, "shared memory": 0,
             "Collective name": "allreduce", "In msg nelems": 1048576, "dtype": "BFloat16", "Group size": 2,
             "Process Group Name": "0"}},
            {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 9, "ts": 130, "dur": 500,
             "args": {"device": 0, "stream": 9, "correlation": 8}},
            {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 9,
             "ts": 700, "dur": 20, "args": {"device": 0, "stream": 9, "correlation": 9, "bytes": 4096}},
            {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 9,
             "ts": 730, "dur": 2, "args": {"device": 0, "stream": 9, "correlation": 10, "bytes": 64}},
            {"ph": "s", "id": 7, "pid": 1, "tid": 1, "ts": 110, "cat": "ac2g", "name": "ac2g"},
            {"ph": "f", "id": 7, "pid": 0, "tid": 7, "ts": 120.5, "cat": "ac2g", "name": "ac2g", "bp": "e"},
        ]}))


# ---- SQLite inputs: cut small, with small pages ------------------------------------------------
def shrink(path, keep_tables, rows):
    db = sqlite3.connect(path)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for t in tables:
        if keep_tables is not None and t not in keep_tables:
            db.execute(f'DROP TABLE "{t}"')
        elif t not in ("meta", "process", "device", "context", "string", "StringIds", "TARGET_INFO_GPU",
                       "TARGET_INFO_SESSION_START_TIME"):
            db.execute(f'DELETE FROM "{t}" WHERE rowid > {rows}')
    db.commit()
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("PRAGMA page_size=1024")
    db.execute("VACUUM")
    db.close()
    with open(path, "rb") as f:
        return f.read()


def nsys(work):
    src = os.path.join(work, "nsys.sqlite")
    shutil.copy(os.path.join(TRACES, "nsys", "pipit_saxpy_nsys.sqlite"), src)
    os.chmod(src, 0o644)
    db = sqlite3.connect(src)
    pids = db.execute("SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    db.execute("DELETE FROM PROCESSES WHERE globalPid NOT IN (%s)" % ",".join(str(p[0]) for p in pids))
    used = set()
    for t, cols in [("CUPTI_ACTIVITY_KIND_KERNEL", ("shortName", "demangledName", "mangledName")),
                    ("CUPTI_ACTIVITY_KIND_RUNTIME", ("nameId",)), ("NVTX_EVENTS", ("textId",))]:
        have = {r[1] for r in db.execute(f"PRAGMA table_info({t})")}
        for c in cols:
            if c in have:
                used |= {r[0] for r in db.execute(f"SELECT {c} FROM {t} WHERE {c} IS NOT NULL")}
    db.execute("DELETE FROM StringIds WHERE id NOT IN (%s)" % ",".join(str(i) for i in used))
    db.commit()
    db.close()
    keep = {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
            "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "PROCESSES", "TARGET_INFO_CUDA_STREAM", "TARGET_INFO_GPU",
            "TARGET_INFO_SESSION_START_TIME"}
    out("nsys", "pipit_saxpy.sqlite", shrink(src, keep, 40))
    return src


def run(*cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)


def traces(work, nsys_src):
    made = []
    rec = os.path.join(work, "rec")
    os.makedirs(rec)
    run(C3SCOPE, "record", "-o", rec + "/", "--", C3BENCH, "--backend", "sim", "--gpus", "2",
        "--comm", "allreduce:1M", "--compute", "gemm:512x512x512:bf16")
    recorded = os.path.join(rec, os.listdir(rec)[0])
    made.append(("c3bench_sim.sqlite", shrink(recorded, None, 24)))
    imported = os.path.join(work, "kineto.sqlite")
    run(C3SCOPE, "import", os.path.join(CORPUS, "kineto", "hta_nccl_data.json"), "-o", imported)
    made.append(("kineto_nccl.sqlite", shrink(imported, None, 60)))
    from_nsys = os.path.join(work, "nsys_import.sqlite")
    run(C3SCOPE, "import", nsys_src, "-o", from_nsys)
    made.append(("nsys_saxpy.sqlite", shrink(from_nsys, None, 30)))
    for name, data in made:
        out("trace", name, data)
    return made


# ---- Hostile SQLite (issue 24): views and computed columns where tables belong, triggers, the
# file's own versions of c3scope's views, text in integer columns, strings past the caps. Made
# from the seeds above; each must be refused in one line or read with its damage counted.
KERNEL_VIEW = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS id, 1 AS "
               "process_id, 0 AS device_id, 0 AS stream_id, x AS start_ns, x + 1 AS end_ns, 1 AS name_id, "
               "x AS correlation_id, 1 AS grid_x, 1 AS grid_y, 1 AS grid_z, 1 AS block_x, 1 AS block_y, "
               "1 AS block_z, 0 AS registers_per_thread, 0 AS static_shared_bytes, 0 AS dynamic_shared_bytes, "
               "NULL AS submitted_ns FROM c")
HOSTILE_TRACES = [
    ("hostile-kernel-view.sqlite", "ALTER TABLE kernel RENAME TO k; CREATE VIEW kernel AS " + KERNEL_VIEW),
    ("hostile-string-cross-join.sqlite",
     "ALTER TABLE string RENAME TO s; CREATE VIEW STRING AS SELECT a.id + 1000 * b.id AS id, a.value AS "
     "value FROM s a, s b, s c, s d, s e"),
    ("hostile-computed-column.sqlite",
     "ALTER TABLE meta RENAME TO m; CREATE TABLE meta (key TEXT, v TEXT, value TEXT AS (v || "
     "hex(zeroblob(100000)))); INSERT INTO meta (key, v) SELECT key, value FROM m; DROP TABLE m"),
    ("hostile-own-views-trigger.sqlite",
     "DROP VIEW gpu_activity; CREATE VIEW gpu_activity AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
     "SELECT x + 1 FROM c) SELECT x AS kind FROM c; CREATE TRIGGER t BEFORE DELETE ON meta BEGIN "
     "SELECT 1; END"),
    ("hostile-wrong-types.sqlite",
     "UPDATE kernel SET start_ns = 'soon' WHERE rowid % 3 = 0; UPDATE kernel SET name_id = x'00ff' "
     "WHERE rowid % 5 = 0; UPDATE collective SET bytes = 'many'; UPDATE nvtx_range SET depth = 'deep'"),
    ("hostile-long-strings.sqlite",  # past the 4 KiB cap on names (docs/outputs.md)
     "UPDATE string SET value = value || replace(hex(zeroblob(2100)), '0', 'n') WHERE rowid <= 2; "
     "UPDATE process SET host = replace(hex(zeroblob(2100)), '0', 'h')"),
]
HOSTILE_NSYS = [
    ("hostile-kernel-view.sqlite",
     "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k; CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS "
     "SELECT a.* FROM k a, StringIds b, StringIds c, StringIds d, StringIds e"),
    ("hostile-dropped-view.sqlite",
     "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k; CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS "
     "SELECT * FROM k; DROP TABLE k"),
    ("hostile-strings-view.sqlite",
     "DROP TABLE StringIds; CREATE VIEW StringIds AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
     "SELECT x + 1 FROM c) SELECT x AS id, 'n' AS value FROM c"),
    ("hostile-wrong-types.sqlite",
     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = 'later' WHERE rowid % 3 = 0; UPDATE "
     "CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = x'01' WHERE rowid % 4 = 0; UPDATE "
     "CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 'name' WHERE rowid % 5 = 0; UPDATE NVTX_EVENTS SET start = 'x' WHERE rowid % 2 = 0"),
    ("hostile-long-strings.sqlite",
     "UPDATE StringIds SET value = value || replace(hex(zeroblob(2100)), '0', 'k') WHERE rowid IN "
     "(SELECT rowid FROM StringIds LIMIT 2); "
     "UPDATE PROCESSES SET name = replace(hex(zeroblob(2100)), '0', 'p')"),
]


def hostile(work):
    for harness, base, cases in [("trace", "kineto_nccl.sqlite", HOSTILE_TRACES),
                                 ("nsys", "pipit_saxpy.sqlite", HOSTILE_NSYS)]:
        for name, sql in cases:
            path = os.path.join(work, harness + "-" + name)
            shutil.copy(os.path.join(CORPUS, harness, base), path)
            db = sqlite3.connect(path)
            db.executescript(sql)
            db.commit()
            db.close()
            out(harness, name, shrink(path, None, 1 << 30))


def snapshots(work, made):
    for name, data in made:
        trace = os.path.join(work, "snap-" + name)
        with open(trace, "wb") as f:
            f.write(data)
        snap = os.path.join(work, name + ".c3cache")
        run(MAKE_SNAPSHOT, trace, snap)
        with open(snap, "rb") as f:
            out("snapshot", name.replace(".sqlite", ".c3cache"), f.read())


def summaries(work):
    for name in ["c3bench_sim.sqlite", "kineto_nccl.sqlite"]:
        s = os.path.join(work, name + ".summary.json")
        run(C3SCOPE, "analyze", os.path.join(CORPUS, "trace", name), "--summary", s)
        with open(s, "rb") as f:
            out("summary", name.replace(".sqlite", ".summary.json"), f.read())
    shutil.copy(os.path.join(ROOT, "tests", "data", "compare", "c3bench-sim.summary.json"),
                os.path.join(CORPUS, "summary", "compare_c3bench.summary.json"))


# ---- Exact boundary values (issue 24) ------------------------------------------------------------
# A collective of exactly 2^62 bytes crashed analyze in its size bucket, and sums over 8,193 ranks
# at the per-rank bound wrapped: the mutations never reached these values, so they are seeds.
def boundary_kineto():
    def kernel(op, ts, corr, nelems, dtype, group):
        return {"ph": "X", "cat": "kernel", "name": f"ncclDevKernel_{op}_Sum_f32_RING_LL(x)", "pid": 0,
                "tid": 8, "ts": ts, "dur": 100, "args": {"device": 0, "stream": 8, "correlation": corr,
                "Collective name": op.lower(), "In msg nelems": nelems, "Group size": group,
                "dtype": dtype, "Process Group Name": "0"}}
    out("kineto", "boundary_2p62_bytes.json", dumps({"traceEvents": [
        kernel("AllReduce", 1050, 12, 1 << 60, "Float", 2)]}))
    out("kineto", "boundary_values.json", dumps({
        "distributedInfo": {"rank": 8192, "world_size": 8193},
        "traceEvents": [
            kernel("AllReduce", 1000, 1, (1 << 63) - 1, "Byte", 8193),
            kernel("AllGather", 1200, 2, 1 << 62, "Byte", 8193),
            kernel("ReduceScatter", 1400, 3, (1 << 62) - 1, "Byte", 2),
            kernel("AllReduce", 1600, 4, -1, "Float", -1),
            kernel("Broadcast", 1800, 5, (1 << 61) + 1, "Half", 8193),
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#9223372036854775807", "pid": 1,
             "tid": 1, "ts": 900, "dur": 1200}]}))


def boundary_summaries(work):
    # The summary of the 2^62-byte collective (its bucket is the top one, 2^62).
    trace = os.path.join(CORPUS, "kineto", "boundary_2p62_bytes.json")
    s = os.path.join(work, "boundary.summary.json")
    run(C3SCOPE, "analyze", trace, "--summary", s)
    with open(s, "rb") as f:
        doc = json.load(f)
    out("summary", "boundary_2p62_bucket.summary.json", dumps(doc))
    # 8,193 ranks with every duration and count at the per-rank bound 2^50: the reduce's sums pass
    # int64 (refused). gzip: the ranks are the same, so the file stays small. 10 MB of JSON take
    # seconds under ASan: not a seed (libFuzzer's 10 s timeout), a regression that every build
    # replays (fuzz_replay_summary).
    bound = 1 << 50
    rank = doc["ranks"][0]

    def at_bound(b):
        for k in ("activities", "span", "busy", "overlap", "exposed_comm", "non_compute"):
            b[k] = bound
        b["time"] = [bound] * len(b["time"])
    at_bound(rank["total"])
    rank["counts"]["kernels"] = bound
    # Only what reaches the sums, so that the seed runs fast (one collective group at the bound).
    for k in ("devices", "per_device", "kernels", "interference", "contention"):
        rank[k] = []
    rank["process"].update({"source": "", "host": "", "command_line": "", "versions": []})
    rank["steps"]["samples"] = []
    rank["comms"], rank["ops"] = [], []
    rank["records"] = {k: [] for k in rank["records"]}
    rank["collectives"] = rank["collectives"][:1]
    for c in rank["collectives"]:
        c["count"] = bound
        c["total_ns"] = bound
        c["overlap_pct_sum"] = 0
        c["algbw"] = c["busbw"] = c["duration_ns"] = {"values": []}
    doc["ranks"] = [rank] * 8193
    text = json.dumps(doc, separators=(",", ":")).encode()
    with open(os.path.join(ROOT, "fuzz", "regressions", "summary",
                           "reduce-sums-8193-ranks-at-bound.summary.json.gz"), "wb") as f:
        f.write(gzip.compress(text, mtime=0))


def boundary_snapshot(work, make_snapshot):
    snap = os.path.join(work, "boundary.c3cache")
    run(make_snapshot, os.path.join(CORPUS, "kineto", "boundary_2p62_bytes.json"), snap)
    with open(snap, "rb") as f:
        out("snapshot", "boundary_2p62_bytes.c3cache", f.read())


def boundaries(work, make_snapshot=MAKE_SNAPSHOT):
    boundary_kineto()
    boundary_summaries(work)
    boundary_snapshot(work, make_snapshot)


# ---- CUPTI records, with the real struct layouts ----------------------------------------------
CUPTI_GEN = r"""
#include <cupti_activity.h>
#include <cstdio>
#include <cstring>
#include <cstdint>
// Seeds for cupti_decode_fuzz: [clock offset][selector][size][record]...
static FILE* f;
template <class T> void rec(int sel, T& r) {
  unsigned char s = (unsigned char)sel; fwrite(&s, 1, 1, f);
  unsigned short n = sizeof r; fwrite(&n, 2, 1, f); fwrite(&r, sizeof r, 1, f);
}
template <class T> T zero() { T t; memset(&t, 0, sizeof t); return t; }
int main(int, char** argv) {
  f = fopen(argv[1], "wb");
  long long offset = 1000; fwrite(&offset, 8, 1, f);
  auto c = zero<CUpti_ActivityContext3>(); c.kind = CUPTI_ACTIVITY_KIND_CONTEXT; c.contextId = 1; c.deviceId = 0;
  c.nullStreamId = 7; rec(7, c);
  auto d = zero<CUpti_ActivityDevice5>(); d.kind = CUPTI_ACTIVITY_KIND_DEVICE; d.numMultiprocessors = 132;
  d.globalMemoryBandwidth = 3352000000; d.numThreadsPerWarp = 32; d.maxWarpsPerMultiprocessor = 64; rec(6 | 0x10, d);
  auto s = zero<CUpti_ActivityStream>(); s.kind = CUPTI_ACTIVITY_KIND_STREAM; s.contextId = 1; s.streamId = 13;
  s.flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING; rec(8, s);
  auto k = zero<CUpti_ActivityKernel10>(); k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL; k.start = 1000000;
  k.end = 1005000; k.contextId = 1; k.streamId = 13; k.gridX = 132; k.blockX = 256; k.correlationId = 77;
  k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE; k.clusterX = 2; rec(1 | 0x10, k);
  auto m = zero<CUpti_ActivityMemcpy6>(); m.kind = CUPTI_ACTIVITY_KIND_MEMCPY; m.start = 1006000; m.end = 1007000;
  m.bytes = 1 << 20; m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD; m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.streamId = 13; m.copyCount = 2; rec(2, m);
  auto p = zero<CUpti_ActivityMemcpyPtoP4>(); p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2; p.start = 1008000; p.end = 1009000;
  p.srcDeviceId = 0; p.dstDeviceId = 1; p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP; rec(3, p);
  auto ms = zero<CUpti_ActivityMemset4>(); ms.kind = CUPTI_ACTIVITY_KIND_MEMSET; ms.start = 1010000; ms.end = 1010500;
  ms.bytes = 64; rec(4, ms);
  auto sy = zero<CUpti_ActivitySynchronization2>(); sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION; sy.start = 1011000;
  sy.end = 1012000; sy.contextId = 1; sy.streamId = 13; sy.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE; rec(5, sy);
  auto e = zero<CUpti_ActivityExternalCorrelation>(); e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0; e.externalId = 5; e.correlationId = 77; rec(9, e);
  auto a = zero<CUpti_ActivityAPI>(); a.kind = CUPTI_ACTIVITY_KIND_RUNTIME; a.start = 999000; a.end = 999500;
  a.cbid = 211; a.correlationId = 77; rec(10, a);
  // An older, shorter kernel record (CUPTI 12's prefix), and an unknown kind.
  unsigned char sel = 0x10; fwrite(&sel, 1, 1, f); unsigned short n = 120; fwrite(&n, 2, 1, f);
  fwrite(&k, 120, 1, f);
  sel = 0x0f; fwrite(&sel, 1, 1, f); n = 16; fwrite(&n, 2, 1, f);
  unsigned char unknown[16] = {99}; fwrite(unknown, 16, 1, f);
  fclose(f);
}
"""


def cupti(work):
    src = os.path.join(work, "cupti_gen.cpp")
    with open(src, "w") as f:
        f.write(CUPTI_GEN)
    exe = os.path.join(work, "cupti_gen")
    run("g++", "-std=c++17", "-I/usr/local/cuda/include", "-I/usr/local/cuda/extras/CUPTI/include", src, "-o", exe)
    path = os.path.join(CORPUS, "cupti_decode", "all_kinds.bin")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    run(exe, path)


# ---- NVTX operations (fuzz/nvtx_fuzz.cpp's encoding) ------------------------------------------
def nvtx():
    def text(s):
        b = s.encode()
        return bytes([len(b)]) + b

    def wide(s):
        return bytes([len(s)]) + b"".join(struct.pack("<I", ord(c)) for c in s)

    def attrs(msg_type, msg, payload_type=4, payload=42, size_byte=0):
        # how, version, size, category, colorType, color, payloadType, payload, messageType, message
        return (bytes([0]) + struct.pack("<H", 3) + bytes([size_byte]) + struct.pack("<I", 2) + bytes([1])
                + struct.pack("<I", 0xff00ff00) + bytes([payload_type]) + struct.pack("<Q", payload)
                + bytes([msg_type]) + msg)

    def ts(v):
        return struct.pack("<Q", v)

    ops = b""
    ops += bytes([5, 1]) + text("NCCL")                        # create_domain "NCCL" -> domain 1
    ops += bytes([7, 1, 1]) + text("AllReduce")                # register_string in it -> string 1
    ops += bytes([8, 1]) + struct.pack("<I", 2) + text("comm")  # name_category 2
    ops += bytes([1, 1, 0]) + ts(100) + attrs(3, bytes([1]))   # push (registered message)
    ops += bytes([1, 0, 0]) + ts(110) + attrs(1, text("ProfilerStep#1"), 6)
    ops += bytes([3, 0, 1]) + ts(120) + attrs(2, wide("\u00e9t\u00e9 \U0001f600"), 2)
    ops += bytes([0, 0, 2]) + ts(125) + attrs(1, text("mark"), 0, 0, 0x90)
    ops += bytes([4, 1, 3]) + ts(130)                          # end range 1 on another thread
    ops += bytes([2, 0, 0]) + ts(140) + bytes([2, 1, 0]) + ts(150)
    ops += bytes([2, 0, 0]) + ts(160)                          # unmatched pop
    ops += bytes([11, 1, 12, 6, 1, 10, 9]) + ts(200)
    out("nvtx", "ranges.bin", ops)
    out("nvtx", "wide.bin", bytes([5, 0]) + wide("\ud800x\udfff\U0010ffff") + bytes([1, 0, 0]) + ts(5)
        + bytes([0xfe]) + wide("push\u0000w") + bytes([9]) + ts(1))


# ---- Text grammars (fuzz/rules_fuzz.cpp: a selector byte, then the text) ----------------------
def rules():
    out("rules", "rules.txt", "\x00# classes\ncommunication ^nccl\nmemory ^(hip)?Memcpy\nother .*Sync\n"
        "compute ^sm90_.*gemm\ndefault off\n")
    out("rules", "budgets.txt", "\x01" + open(os.path.join(ROOT, "docs", "compare.md")).read()
        .split("## Budgets")[1].split("```")[1].strip("\n") + "\n")
    out("rules", "pattern.txt", "\x02ProfilerStep#(\\d+)|^c3bench:.*\nProfilerStep#12")
    out("rules", "env.txt", "\x03C3SCOPE_OUTPUT=runs/%h/%q{SLURM_JOB_ID}-rank%r-%p.sqlite\n"
        "C3SCOPE_FLUSH_MS=250\nC3SCOPE_BUFFER_MB=abc\nC3SCOPE_LOG=debug\nC3SCOPE_CUDA_API=1\n"
        "RANK=3\nLOCAL_RANK=1\nWORLD_SIZE=8\nSLURM_JOB_ID=4711\nOMPI_COMM_WORLD_RANK=x\n")


def main():
    for tool in (C3SCOPE, C3BENCH, MAKE_SNAPSHOT):
        if not os.access(tool, os.X_OK):
            sys.exit(f"make_seeds: {tool} is missing: build the dev and fuzz presets first")
    # Seeds in older formats cannot be written again: they are kept across a rewrite.
    kept = {}
    for harness, name in KEPT:
        with open(os.path.join(CORPUS, harness, name), "rb") as f:
            kept[(harness, name)] = f.read()
    with tempfile.TemporaryDirectory() as work:
        shutil.rmtree(CORPUS, ignore_errors=True)
        for (harness, name), data in kept.items():
            out(harness, name, data)
        kineto()
        nsys_src = nsys(work)
        made = traces(work, nsys_src)
        snapshots(work, made)
        hostile(work)
        summaries(work)
        boundaries(work)
        cupti(work)
        nvtx()
        rules()
    for h in sorted(os.listdir(CORPUS)):
        d = os.path.join(CORPUS, h)
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print(f"{h:14} {len(os.listdir(d)):3} seeds {size / 1024:8.1f} KiB")


if __name__ == "__main__":
    main()
