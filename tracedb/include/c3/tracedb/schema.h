// The c3scope trace schema, declared once.
//
// Every table is one X-macro list of (column, C++ type, SQL type, doc). From that single list we
// generate the row struct the writer takes, the CREATE TABLE statement, the INSERT binding and
// docs/schema.md (Schema.DocMatchesDeclaration in tests/tracedb/schema_test.cpp fails when the doc
// and this file disagree).
// Table and column names are a contract with the analyzer, the GUI, importers and users' SQL:
// change them only with a schema version bump and a migration of older files (kMigrations).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace c3::tracedb {

// Version of the schema this build writes. Bump on any change to tables, columns or views.
//   1: first release (issue 1: collector).
//   2: c3bench result tables bench_run, bench_result.
//   3: typed configuration columns of bench_result (C3_BENCH_CONFIG_COLUMNS; issue 14).
//   4: cuda_event, the stream of each cudaEventRecord (issue 25: cross-stream event waits).
inline constexpr int kSchemaVersion = 4;
// Oldest schema version this build can read (older files get a "too old" error naming both).
inline constexpr int kOldestReadableVersion = 1;

using I64 = int64_t;
using OptI64 = std::optional<int64_t>;
using Real = double;
using OptReal = std::optional<double>;
using Text = std::string;
using OptText = std::optional<std::string>;

// ---------------------------------------------------------------------------------------------
// Tables. Timestamps are integer nanoseconds in the recording process's trace clock (see the
// process table's clock anchors); intervals are half-open [start_ns, end_ns).
// ---------------------------------------------------------------------------------------------

#define C3_TABLE_META(X)                                                                        \
  X(key, Text, "TEXT PRIMARY KEY",                                                              \
    "Property name: schema_version, c3scope_version, created_at (UTC, ISO 8601), source "       \
    "('collector' or 'importer:<format>'), source_file (importers), clean_close ('1' once the " \
    "writer finished normally)")                                                                \
  X(value, Text, "TEXT NOT NULL", "Property value, as text")

#define C3_TABLE_PROCESS(X)                                                                      \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Process id within this trace; other tables' process_id") \
  X(pid, I64, "INTEGER NOT NULL", "Operating-system process id")                                 \
  X(ppid, OptI64, "INTEGER", "Parent process id")                                                \
  X(host, Text, "TEXT NOT NULL", "Host name")                                                    \
  X(rank, OptI64, "INTEGER",                                                                     \
    "Global rank from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or SLURM_PROCID")          \
  X(local_rank, OptI64, "INTEGER",                                                               \
    "Rank on this host from LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or "         \
    "SLURM_LOCALID")                                                                             \
  X(world_size, OptI64, "INTEGER",                                                               \
    "Number of ranks from WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_NTASKS")           \
  X(command_line, Text, "TEXT NOT NULL", "Command line, arguments separated by single spaces")   \
  X(executable, OptText, "TEXT", "Path of the executable (/proc/self/exe)")                      \
  X(start_ns, I64, "INTEGER NOT NULL", "When tracing of this process started (trace clock)")     \
  X(end_ns, OptI64, "INTEGER",                                                                   \
    "When tracing ended (trace clock); NULL if the process was killed before a clean close")     \
  X(trace_clock, Text, "TEXT NOT NULL",                                                          \
    "Clock the *_ns columns use, e.g. CLOCK_MONOTONIC (CUPTI timestamps are put on it)")         \
  X(anchor_start_trace_ns, I64, "INTEGER NOT NULL", "Trace clock at the start anchor")           \
  X(anchor_start_realtime_ns, I64, "INTEGER NOT NULL",                                           \
    "CLOCK_REALTIME (ns since the Unix epoch) at the start anchor")                              \
  X(anchor_start_monotonic_ns, I64, "INTEGER NOT NULL", "CLOCK_MONOTONIC at the start anchor")   \
  X(anchor_end_trace_ns, OptI64, "INTEGER", "Trace clock at the end anchor (clean close only)")  \
  X(anchor_end_realtime_ns, OptI64, "INTEGER", "CLOCK_REALTIME at the end anchor")               \
  X(anchor_end_monotonic_ns, OptI64, "INTEGER", "CLOCK_MONOTONIC at the end anchor")

#define C3_TABLE_DEVICE(X)                                                                        \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                  \
  X(process_id, I64, "INTEGER NOT NULL", "process.id of the process that saw this device")        \
  X(device_id, I64, "INTEGER NOT NULL",                                                           \
    "Device ordinal as CUDA/CUPTI numbers it in that process; activity tables' device_id")        \
  X(name, Text, "TEXT NOT NULL", "Device name, e.g. NVIDIA H200")                                 \
  X(uuid, OptText, "TEXT", "GPU UUID, GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")                  \
  X(pci_bus_id, OptText, "TEXT", "PCI bus id, domain:bus:device.function")                        \
  X(sm_count, I64, "INTEGER NOT NULL", "Number of streaming multiprocessors")                     \
  X(cc_major, I64, "INTEGER NOT NULL", "Compute capability, major")                               \
  X(cc_minor, I64, "INTEGER NOT NULL", "Compute capability, minor")                               \
  X(memory_bytes, I64, "INTEGER NOT NULL", "Global memory size in bytes")                         \
  X(memory_bandwidth_bytes_per_s, OptI64, "INTEGER",                                              \
    "Peak global memory bandwidth in bytes/s as the driver reports it")                           \
  X(l2_bytes, OptI64, "INTEGER", "L2 cache size in bytes")                                        \
  X(core_clock_khz, OptI64, "INTEGER", "Core clock rate in kHz")                                  \
  X(copy_engines, OptI64, "INTEGER", "Number of memcpy (copy) engines")                           \
  X(warp_size, I64, "INTEGER NOT NULL", "Threads per warp")                                       \
  X(max_threads_per_sm, I64, "INTEGER NOT NULL", "Resident threads per SM (warps per SM * warp)") \
  X(max_blocks_per_sm, I64, "INTEGER NOT NULL", "Resident thread blocks per SM")                  \
  X(max_registers_per_sm, I64, "INTEGER NOT NULL", "32-bit registers per SM")                     \
  X(max_shared_memory_per_sm, I64, "INTEGER NOT NULL", "Shared memory per SM in bytes")           \
  X(max_threads_per_block, I64, "INTEGER NOT NULL", "Threads per block")                          \
  X(max_registers_per_block, I64, "INTEGER NOT NULL", "32-bit registers per block")               \
  X(max_shared_memory_per_block, I64, "INTEGER NOT NULL", "Shared memory per block in bytes")

#define C3_TABLE_CONTEXT(X)                                                                \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                           \
  X(process_id, I64, "INTEGER NOT NULL", "process.id")                                     \
  X(context_id, I64, "INTEGER NOT NULL", "CUDA context id as CUPTI numbers it")            \
  X(device_id, I64, "INTEGER NOT NULL", "Device of the context")                           \
  X(null_stream_id, OptI64, "INTEGER", "Stream id of the context's legacy default stream") \
  X(green_context, I64, "INTEGER NOT NULL DEFAULT 0", "1 for a CUDA green context")        \
  X(sm_count, OptI64, "INTEGER", "SMs available to the context (green contexts may have fewer)")

#define C3_TABLE_STREAM(X)                                                                      \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                \
  X(process_id, I64, "INTEGER NOT NULL", "process.id")                                          \
  X(device_id, OptI64, "INTEGER", "Device of the stream; NULL when only its name is known")     \
  X(context_id, OptI64, "INTEGER", "CUDA context id")                                           \
  X(stream_id, I64, "INTEGER NOT NULL",                                                         \
    "Stream id as CUPTI numbers it; activity tables' stream_id")                                \
  X(priority, OptI64, "INTEGER", "Stream priority (lower numbers are higher priority in CUDA)") \
  X(flags, OptText, "TEXT", "'default' (blocking) or 'non_blocking'")                           \
  X(name, OptText, "TEXT", "Name given with nvtxNameCudaStream/nvtxNameCuStream")

#define C3_TABLE_STRING(X)                                                      \
  X(id, OptI64, "INTEGER PRIMARY KEY", "String id, referenced by *_id columns") \
  X(value, Text, "TEXT NOT NULL UNIQUE", "The string")

// Columns every GPU activity table starts with.
#define C3_ACTIVITY_COLUMNS(X)                                                                    \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                  \
  X(process_id, I64, "INTEGER NOT NULL", "process.id")                                            \
  X(device_id, I64, "INTEGER NOT NULL", "Device ordinal (device.device_id)")                      \
  X(context_id, OptI64, "INTEGER", "CUDA context id")                                             \
  X(stream_id, OptI64, "INTEGER", "Stream id (stream.stream_id); NULL when not tied to a stream") \
  X(correlation_id, OptI64, "INTEGER",                                                            \
    "CUPTI correlation id, equal to the launching API call's (api_call.correlation_id)")          \
  X(start_ns, I64, "INTEGER NOT NULL", "Start on the GPU (trace clock)")                          \
  X(end_ns, I64, "INTEGER NOT NULL", "End on the GPU (trace clock)")

#define C3_TABLE_KERNEL(X)                                                                        \
  C3_ACTIVITY_COLUMNS(X)                                                                          \
  X(name_id, I64, "INTEGER NOT NULL", "string.id of the demangled kernel name")                   \
  X(mangled_name_id, OptI64, "INTEGER", "string.id of the mangled name when it differs")          \
  X(grid_x, I64, "INTEGER NOT NULL", "Grid size, x")                                              \
  X(grid_y, I64, "INTEGER NOT NULL", "Grid size, y")                                              \
  X(grid_z, I64, "INTEGER NOT NULL", "Grid size, z")                                              \
  X(block_x, I64, "INTEGER NOT NULL", "Block size, x")                                            \
  X(block_y, I64, "INTEGER NOT NULL", "Block size, y")                                            \
  X(block_z, I64, "INTEGER NOT NULL", "Block size, z")                                            \
  X(registers_per_thread, I64, "INTEGER NOT NULL", "Registers per thread")                        \
  X(static_shared_bytes, I64, "INTEGER NOT NULL", "Static shared memory per block in bytes")      \
  X(dynamic_shared_bytes, I64, "INTEGER NOT NULL", "Dynamic shared memory per block in bytes")    \
  X(local_bytes_per_thread, OptI64, "INTEGER", "Local memory per thread in bytes")                \
  X(shared_executed_bytes, OptI64, "INTEGER", "Shared memory the SM was configured with (bytes)") \
  X(cluster_x, OptI64, "INTEGER", "Thread block cluster size, x (0 or NULL: no clusters)")        \
  X(cluster_y, OptI64, "INTEGER", "Thread block cluster size, y")                                 \
  X(cluster_z, OptI64, "INTEGER", "Thread block cluster size, z")                                 \
  X(launch_type, Text, "TEXT NOT NULL",                                                           \
    "regular, cooperative_single_device, cooperative_multi_device, command_list or unknown")      \
  X(graph_id, OptI64, "INTEGER", "CUDA graph id when launched by a graph, else NULL")             \
  X(graph_node_id, OptI64, "INTEGER", "CUDA graph node id when launched by a graph, else NULL")   \
  X(grid_id, OptI64, "INTEGER", "Unique grid id CUPTI assigns to the launch")                     \
  X(queued_ns, OptI64, "INTEGER",                                                                 \
    "When the launch was queued (trace clock); only with C3SCOPE_LAUNCH_LATENCY=1")               \
  X(submitted_ns, OptI64, "INTEGER",                                                              \
    "When the launch was submitted to the GPU; only with C3SCOPE_LAUNCH_LATENCY=1")               \
  X(channel_id, OptI64, "INTEGER", "Hardware channel the kernel ran on, if reported")             \
  X(device_launched, I64, "INTEGER NOT NULL DEFAULT 0", "1 when launched from the device")

#define C3_TABLE_MEMCPY(X)                                                                         \
  C3_ACTIVITY_COLUMNS(X)                                                                           \
  X(copy_kind, Text, "TEXT NOT NULL",                                                              \
    "H2D, D2H, D2D, H2H, P2P, H2A, A2H, A2A, A2D, D2A or unknown (A: CUDA array)")                 \
  X(bytes, I64, "INTEGER NOT NULL", "Bytes copied")                                                \
  X(src_kind, Text, "TEXT NOT NULL",                                                               \
    "Source memory: pageable, pinned, device, array, managed, device_static, "                     \
    "managed_static or unknown")                                                                   \
  X(dst_kind, Text, "TEXT NOT NULL", "Destination memory, same values as src_kind")                \
  X(src_device_id, OptI64, "INTEGER", "Source device for P2P copies (and device-side sources)")    \
  X(dst_device_id, OptI64, "INTEGER", "Destination device for P2P copies (and device-side dests)") \
  X(async, I64, "INTEGER NOT NULL", "1 for an asynchronous copy")                                  \
  X(channel_id, OptI64, "INTEGER", "Hardware (copy-engine) channel, if reported")                  \
  X(channel_type, OptText, "TEXT", "compute or async_memcpy, if reported")                         \
  X(copy_count, I64, "INTEGER NOT NULL DEFAULT 1",                                                 \
    "Copies batched in this record (cudaMemcpyBatchAsync)")                                        \
  X(graph_id, OptI64, "INTEGER", "CUDA graph id when run by a graph")                              \
  X(graph_node_id, OptI64, "INTEGER", "CUDA graph node id when run by a graph")

#define C3_TABLE_MEMSET(X)                                                 \
  C3_ACTIVITY_COLUMNS(X)                                                   \
  X(bytes, I64, "INTEGER NOT NULL", "Bytes set")                           \
  X(value, I64, "INTEGER NOT NULL", "Value written")                       \
  X(memory_kind, Text, "TEXT NOT NULL", "Memory kind, as memcpy.src_kind") \
  X(async, I64, "INTEGER NOT NULL", "1 for an asynchronous memset")        \
  X(channel_id, OptI64, "INTEGER", "Hardware channel, if reported")        \
  X(graph_id, OptI64, "INTEGER", "CUDA graph id when run by a graph")      \
  X(graph_node_id, OptI64, "INTEGER", "CUDA graph node id when run by a graph")

#define C3_TABLE_SYNC(X)                                                                        \
  C3_ACTIVITY_COLUMNS(X)                                                                        \
  X(type, Text, "TEXT NOT NULL",                                                                \
    "event_synchronize, stream_wait_event, stream_synchronize, context_synchronize or unknown") \
  X(cuda_event_id, OptI64, "INTEGER", "CUDA event involved, for event synchronization")

// cudaEventRecord calls (CUPTI's CUDA event activity; PyTorch traces: the record that a
// "Stream Wait Event" names): the stream each event was recorded on, so that a stream's wait on
// the event (sync rows of type stream_wait_event) is an edge from that stream's work.
#define C3_TABLE_CUDA_EVENT(X)                                                                   \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                 \
  X(process_id, I64, "INTEGER NOT NULL", "process.id")                                           \
  X(device_id, I64, "INTEGER NOT NULL", "Device ordinal (device.device_id)")                     \
  X(context_id, OptI64, "INTEGER", "CUDA context id")                                            \
  X(stream_id, I64, "INTEGER NOT NULL", "Stream the event was recorded on (stream.stream_id)")   \
  X(correlation_id, I64, "INTEGER NOT NULL",                                                     \
    "Correlation id of the cudaEventRecord call (api_call.correlation_id)")                      \
  X(cuda_event_id, I64, "INTEGER NOT NULL",                                                      \
    "CUDA event recorded (sync.cuda_event_id of the waits on it); imported PyTorch traces: the " \
    "record call's correlation id")

#define C3_TABLE_COMMUNICATOR(X)                                                                 \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                 \
  X(process_id, I64, "INTEGER NOT NULL", "process.id")                                           \
  X(comm_id, Text, "TEXT NOT NULL",                                                              \
    "Communicator id, equal on every rank of one communicator: a hash of the ncclUniqueId; for " \
    "split/shrunk communicators a hash of the parent's id, the call's order on the parent and "  \
    "the color")                                                                                 \
  X(comm_handle, I64, "INTEGER NOT NULL", "ncclComm_t pointer value in this process")            \
  X(parent_comm_id, OptText, "TEXT", "comm_id of the parent for split/shrunk communicators")     \
  X(init_call, Text, "TEXT NOT NULL",                                                            \
    "CommInitRank, CommInitRankConfig, CommInitAll, CommInitRankScalable, CommSplit or "         \
    "CommShrink")                                                                                \
  X(rank, I64, "INTEGER NOT NULL", "This process's rank in the communicator")                    \
  X(nranks, I64, "INTEGER NOT NULL", "Communicator size")                                        \
  X(device_id, OptI64, "INTEGER", "CUDA device the communicator uses (ncclCommCuDevice)")        \
  X(config, OptText, "TEXT", "ncclConfig_t fields that were set, as key=value pairs")            \
  X(created_ns, I64, "INTEGER NOT NULL", "When the init call returned (trace clock)")            \
  X(ended_ns, OptI64, "INTEGER", "When CommFinalize/Destroy/Abort was called")                   \
  X(end_call, OptText, "TEXT", "CommFinalize, CommDestroy or CommAbort")                         \
  X(result, I64, "INTEGER NOT NULL", "ncclResult_t of the init call (0: success)")

#define C3_TABLE_COLLECTIVE(X)                                                                    \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                  \
  X(process_id, I64, "INTEGER NOT NULL", "process.id")                                            \
  X(thread_id, I64, "INTEGER NOT NULL", "OS thread id of the calling thread")                     \
  X(device_id, OptI64, "INTEGER", "CUDA device of the communicator")                              \
  X(stream_id, OptI64, "INTEGER", "CUPTI stream id of the stream argument, when it resolved")     \
  X(stream_handle, I64, "INTEGER NOT NULL", "cudaStream_t pointer value passed to NCCL")          \
  X(comm_id, OptText, "TEXT", "communicator.comm_id (NULL for an unknown communicator)")          \
  X(comm_handle, I64, "INTEGER NOT NULL", "ncclComm_t pointer value")                             \
  X(rank, OptI64, "INTEGER", "This process's rank in the communicator")                           \
  X(nranks, OptI64, "INTEGER", "Communicator size")                                               \
  X(op, Text, "TEXT NOT NULL",                                                                    \
    "AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll, Gather, Scatter, Send, "   \
    "Recv")                                                                                       \
  X(datatype, Text, "TEXT NOT NULL",                                                              \
    "int8, uint8, int32, uint32, int64, uint64, float16, float32, float64, bfloat16, "            \
    "float8e4m3, float8e5m2 or unknown")                                                          \
  X(count, I64, "INTEGER NOT NULL",                                                               \
    "Element count as passed: AllGather and Gather the per-rank send count, ReduceScatter the "   \
    "per-rank receive count, AlltoAll the count exchanged with each peer, else the buffer count") \
  X(bytes, I64, "INTEGER NOT NULL", "count times the datatype's size")                            \
  X(reduce_op, OptText, "TEXT", "sum, prod, max, min, avg or premulsum (reductions only)")        \
  X(root, OptI64, "INTEGER", "Root rank (Broadcast, Reduce, Gather, Scatter)")                    \
  X(peer, OptI64, "INTEGER", "Peer rank (Send, Recv)")                                            \
  X(seq, I64, "INTEGER NOT NULL",                                                                 \
    "Sequence number on the communicator, from 0: collectives count all collectives on it in "    \
    "call order (equal on every rank for the same collective); Send/Recv count the sends (or "    \
    "receives) to that peer, so send k on one rank matches receive k on the peer")                \
  X(group_id, OptI64, "INTEGER",                                                                  \
    "Outermost ncclGroupStart/End this call was made in (numbered per process), else NULL")       \
  X(external_id, I64, "INTEGER NOT NULL",                                                         \
    "CUPTI external correlation id pushed around the launch (the group's id for grouped calls); " \
    "external_correlation maps it to the kernels' correlation ids")                               \
  X(host_start_ns, I64, "INTEGER NOT NULL", "Host time the NCCL call was entered (trace clock)")  \
  X(host_end_ns, I64, "INTEGER NOT NULL", "Host time it returned (enqueue end)")                  \
  X(result, I64, "INTEGER NOT NULL", "ncclResult_t returned (0: success)")

#define C3_TABLE_EXTERNAL_CORRELATION(X)                                                        \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                \
  X(process_id, I64, "INTEGER NOT NULL", "process.id")                                          \
  X(external_kind, Text, "TEXT NOT NULL",                                                       \
    "CUPTI external correlation kind: custom0 is c3scope's NCCL calls; others come from other " \
    "tools in the process (e.g. custom1 from the PyTorch profiler)")                            \
  X(external_id, I64, "INTEGER NOT NULL", "External id (collective.external_id for custom0)")   \
  X(correlation_id, I64, "INTEGER NOT NULL", "CUPTI correlation id of the API call it covered")

#define C3_TABLE_NVTX_RANGE(X)                                                                    \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                  \
  X(process_id, I64, "INTEGER NOT NULL", "process.id")                                            \
  X(thread_id, I64, "INTEGER NOT NULL", "OS thread id that started the range (or the mark)")      \
  X(end_thread_id, OptI64, "INTEGER", "OS thread id that ended a start/end range")                \
  X(kind, Text, "TEXT NOT NULL", "push_pop, start_end or mark")                                   \
  X(domain, Text, "TEXT NOT NULL", "NVTX domain name; 'default' for the default domain")          \
  X(name, Text, "TEXT NOT NULL", "Message (ASCII, wide or registered string)")                    \
  X(category, OptI64, "INTEGER", "Category number, if set")                                       \
  X(category_name, OptText, "TEXT", "Category name from nvtxNameCategory/nvtxDomainNameCategory") \
  X(color, OptI64, "INTEGER", "ARGB color, if set")                                               \
  X(payload_int, OptI64, "INTEGER", "Integer payload (int32/int64/uint32/uint64), if set")        \
  X(payload_double, OptReal, "REAL", "Floating-point payload (float/double), if set")             \
  X(start_ns, I64, "INTEGER NOT NULL", "Start (trace clock)")                                     \
  X(end_ns, I64, "INTEGER NOT NULL",                                                              \
    "End (trace clock); equal to start_ns for marks; for a range still open when the process "    \
    "ended, the process end")                                                                     \
  X(depth, OptI64, "INTEGER",                                                                     \
    "Push/pop nesting depth on its thread and domain, from 0; NULL "                              \
    "for start/end ranges and marks")                                                             \
  X(closed, I64, "INTEGER NOT NULL DEFAULT 1", "0 when the range was never ended")

#define C3_TABLE_API_CALL(X)                                                                   \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                               \
  X(process_id, I64, "INTEGER NOT NULL", "process.id")                                         \
  X(thread_id, I64, "INTEGER NOT NULL", "OS thread id")                                        \
  X(api, Text, "TEXT NOT NULL", "runtime or driver")                                           \
  X(cbid, I64, "INTEGER NOT NULL", "CUPTI callback id of the function")                        \
  X(name_id, I64, "INTEGER NOT NULL", "string.id of the function name, e.g. cudaLaunchKernel") \
  X(correlation_id, I64, "INTEGER NOT NULL",                                                   \
    "Correlation id shared with the activity it launched")                                     \
  X(start_ns, I64, "INTEGER NOT NULL", "Entry (trace clock)")                                  \
  X(end_ns, I64, "INTEGER NOT NULL", "Exit (trace clock)")                                     \
  X(return_value, I64, "INTEGER NOT NULL", "cudaError_t or CUresult returned")

#define C3_TABLE_STATS(X)                                                                        \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                 \
  X(process_id, OptI64, "INTEGER", "process.id, or NULL for the whole file")                     \
  X(name, Text, "TEXT NOT NULL", "Counter name (docs/schema.md lists the collector's counters)") \
  X(value, I64, "INTEGER NOT NULL", "Counter value")                                             \
  X(detail, OptText, "TEXT", "First error message or offending position, when there is one")

// Microbenchmark results (c3bench): one row per run, one per case of the run.
#define C3_TABLE_BENCH_RUN(X)                                                                      \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Run id")                                                   \
  X(started_at, Text, "TEXT NOT NULL", "When the run started (UTC, ISO 8601)")                     \
  X(host, Text, "TEXT NOT NULL", "Host name")                                                      \
  X(pid, I64, "INTEGER NOT NULL", "c3bench's process id (matches process.pid of its trace)")       \
  X(rank, I64, "INTEGER NOT NULL", "Rank of this process (0 in single-process mode)")              \
  X(command_line, Text, "TEXT NOT NULL", "The c3bench command line")                               \
  X(backend, Text, "TEXT NOT NULL", "cuda or sim")                                                 \
  X(simulated, I64, "INTEGER NOT NULL",                                                            \
    "1 when the results are predictions of the simulated node, 0 for measurements")                \
  X(description, Text, "TEXT NOT NULL", "GPUs, driver and NCCL versions, or the simulated preset") \
  X(gpus, I64, "INTEGER NOT NULL", "GPUs in the experiment")                                       \
  X(warmup, I64, "INTEGER NOT NULL", "Warm-up iterations per phase")                               \
  X(iterations, I64, "INTEGER NOT NULL", "Timed iterations per phase")                             \
  X(timing_overhead, Text, "TEXT NOT NULL", "What the backend's timing itself costs")              \
  X(options_json, Text, "TEXT NOT NULL", "Every option of the run, as JSON")

#define C3_TIME_STATS(X, prefix, what)                         \
  X(prefix##_ns, OptReal, "REAL", "Median " what " (ns)")      \
  X(prefix##_min_ns, OptReal, "REAL", "Minimum " what " (ns)") \
  X(prefix##_max_ns, OptReal, "REAL", "Maximum " what " (ns)")

// The configuration of a c3bench case, typed (schema v3). c3bench writes them; in a v2 file
// they are read from the case's label when the file is opened (tracedb/src/migrate.cpp). NULL
// where they do not apply, and all of them in a migrated row whose label could not be read.
#define C3_BENCH_CONFIG_COLUMNS(X)                                                                \
  X(compute_kind, OptText, "TEXT", "gemm, triad or fma; NULL without a compute operation")        \
  X(gemm_m, OptI64, "INTEGER", "GEMM M (rows of A and C); NULL for other compute kinds")          \
  X(gemm_n, OptI64, "INTEGER", "GEMM N (columns of B and C)")                                     \
  X(gemm_k, OptI64, "INTEGER", "GEMM K (the reduced dimension)")                                  \
  X(compute_dtype, OptText, "TEXT", "Element type of the compute: fp32, fp16 or bf16")            \
  X(compute_bytes, OptI64, "INTEGER", "triad: bytes per array")                                   \
  X(compute_target_ns, OptI64, "INTEGER", "fma: the time alone it is sized to take (ns)")         \
  X(comm_kind, OptText, "TEXT",                                                                   \
    "allreduce, allgather, reducescatter, alltoall, sendrecv, dma_d2d, dma_p2p or sm_copy; NULL " \
    "without communication")                                                                      \
  X(comm_dtype, OptText, "TEXT",                                                                  \
    "Element type of the communication: fp32, fp16 or bf16 (NULL in a migrated v2 row: labels "   \
    "do not carry it)")                                                                           \
  X(comm_peer, OptI64, "INTEGER",                                                                 \
    "1 for an sm_copy into the next GPU (sm_copy:SIZE:peer), else 0 (dma_p2p always copies to "   \
    "the next GPU)")                                                                              \
  X(priority, OptText, "TEXT",                                                                    \
    "Stream priorities: equal, comm_high (the communication stream's is higher) or comm_low")     \
  X(launch_order, OptText, "TEXT",                                                                \
    "Which operation is launched first: compute_first or "                                        \
    "comm_first")                                                                                 \
  X(nchannels, OptI64, "INTEGER", "NCCL channels (NCCL_MIN/MAX_NCHANNELS); 0: NCCL's choice")     \
  X(min_ctas, OptI64, "INTEGER", "NCCL minCTAs (ncclConfig_t); 0: default")                       \
  X(max_ctas, OptI64, "INTEGER", "NCCL maxCTAs; 0: default")                                      \
  X(sm_partition_pct, OptI64, "INTEGER",                                                          \
    "Green contexts: % of the SMs for the compute (the rest for the communication); 0: off")      \
  X(pipelined, OptI64, "INTEGER",                                                                 \
    "1: compute and communication split into `chunks` pieces and pipelined (FiCCO-style); 0: "    \
    "independent streams")                                                                        \
  X(chunks, OptI64, "INTEGER",                                                                    \
    "Pieces of a pipelined schedule (1: its unsplit baseline); 1 when "                           \
    "independent")

#define C3_TABLE_BENCH_RESULT(X)                                                                \
  X(id, OptI64, "INTEGER PRIMARY KEY", "Row id")                                                \
  X(run_id, I64, "INTEGER NOT NULL", "bench_run.id")                                            \
  X(case_id, I64, "INTEGER NOT NULL", "Case number within the run (NVTX payload of its range)") \
  X(label, Text, "TEXT NOT NULL",                                                               \
    "The case as c3bench names it: compute + communication [knobs] (for display and for "       \
    "matching results; the typed columns hold its configuration)")                              \
  X(compute, OptText, "TEXT", "Compute operation, e.g. gemm:8192x8192x8192:bf16")               \
  X(comm, OptText, "TEXT", "Communication operation, e.g. allreduce:64M")                       \
  X(comm_bytes, OptI64, "INTEGER", "Message size S as nccl-tests counts it")                    \
  X(knobs, Text, "TEXT NOT NULL",                                                               \
    "Non-default knobs as c3bench spells them: prio, order, nch, ctas, smpart, chunks")         \
  C3_BENCH_CONFIG_COLUMNS(X)                                                                    \
  X(status, Text, "TEXT NOT NULL", "ok, or skipped when the backend cannot run the case")       \
  X(skip_reason, OptText, "TEXT", "Why the case was skipped")                                   \
  C3_TIME_STATS(X, t_comp, "compute time alone")                                                \
  C3_TIME_STATS(X, t_comm, "communication time alone")                                          \
  C3_TIME_STATS(X, t_comp_c3, "compute time while concurrent")                                  \
  C3_TIME_STATS(X, t_comm_c3, "communication time while concurrent")                            \
  C3_TIME_STATS(X, t_c3, "concurrent wall time, first launch to last completion")               \
  C3_TIME_STATS(X, t_serial, "sequential wall time")                                            \
  X(compute_slowdown, OptReal, "REAL", "T_comp,concurrent / T_comp - 1 (docs/metrics.md)")      \
  X(comm_slowdown, OptReal, "REAL", "T_comm,concurrent / T_comm - 1")                           \
  X(ideal_speedup, OptReal, "REAL", "(T_comp + T_comm) / max(T_comp, T_comm)")                  \
  X(realized_speedup, OptReal, "REAL", "(T_comp + T_comm) / T_c3")                              \
  X(fraction_of_ideal, OptReal, "REAL", "(realized - 1) / (ideal - 1)")                         \
  X(realized_over_ideal, OptReal, "REAL", "realized / ideal")                                   \
  X(scenario, OptText, "TEXT", "compute-long, comm-long or balanced")                           \
  X(decomposition_loss_comp, OptReal, "REAL",                                                   \
    "Chunked schedules: sum of the k compute chunks alone / unsplit compute alone - 1")         \
  X(decomposition_loss_comm, OptReal, "REAL", "The same for the communication chunks")          \
  X(schedule_speedup, OptReal, "REAL",                                                          \
    "Pipelined schedules, k > 1: T_c3 of the k = 1 schedule / this T_c3 (FiCCO's speedup)")     \
  X(algbw, OptReal, "REAL", "Collectives and copies: S / T_comm alone (bytes/s)")               \
  X(busbw, OptReal, "REAL", "algbw times the nccl-tests bus factor (bytes/s)")                  \
  X(iterations, I64, "INTEGER NOT NULL", "Timed iterations behind each statistic")

// All tables in creation order: (sql name, C++ row type, columns macro, doc).
#define C3_TABLES(T)                                                                               \
  T(meta, MetaRow, C3_TABLE_META,                                                                  \
    "Properties of the file: schema and c3scope version, creation time, where the data came from") \
  T(process, ProcessRow, C3_TABLE_PROCESS,                                                         \
    "Traced processes, with clock anchors to align processes and hosts")                           \
  T(device, DeviceRow, C3_TABLE_DEVICE, "GPUs a process used, with the limits occupancy needs")    \
  T(context, ContextRow, C3_TABLE_CONTEXT, "CUDA contexts")                                        \
  T(stream, StreamRow, C3_TABLE_STREAM, "CUDA streams: priority, flags and NVTX names")            \
  T(string, StringRow, C3_TABLE_STRING, "Interned strings (kernel and API names)")                 \
  T(kernel, KernelRow, C3_TABLE_KERNEL, "GPU kernel executions")                                   \
  T(memcpy, MemcpyRow, C3_TABLE_MEMCPY, "Memory copies, including peer-to-peer")                   \
  T(memset, MemsetRow, C3_TABLE_MEMSET, "Memory sets")                                             \
  T(sync, SyncRow, C3_TABLE_SYNC,                                                                  \
    "Host synchronization with the GPU (event, stream, context synchronize, stream wait event)")   \
  T(cuda_event, CudaEventRow, C3_TABLE_CUDA_EVENT,                                                 \
    "CUDA event records (cudaEventRecord): the stream each was recorded on (schema 4 on)")         \
  T(communicator, CommunicatorRow, C3_TABLE_COMMUNICATOR, "NCCL communicators")                    \
  T(collective, CollectiveRow, C3_TABLE_COLLECTIVE,                                                \
    "NCCL collective and point-to-point calls, with their arguments")                              \
  T(external_correlation, ExternalCorrelationRow, C3_TABLE_EXTERNAL_CORRELATION,                   \
    "CUPTI external correlation records: which API calls (and so which kernels) an external id "   \
    "such as an NCCL call covered")                                                                \
  T(nvtx_range, NvtxRangeRow, C3_TABLE_NVTX_RANGE, "NVTX ranges and marks")                        \
  T(api_call, ApiCallRow, C3_TABLE_API_CALL,                                                       \
    "CUDA runtime and driver API calls (recorded with --cuda-api / C3SCOPE_CUDA_API=1)")           \
  T(stats, StatsRow, C3_TABLE_STATS,                                                               \
    "Named counters: dropped records, buffers, errors, collector overhead, malformed input")       \
  T(bench_run, BenchRunRow, C3_TABLE_BENCH_RUN,                                                    \
    "c3bench runs: backend, devices (or the simulated preset), options")                           \
  T(bench_result, BenchResultRow, C3_TABLE_BENCH_RESULT,                                           \
    "c3bench results, one row per case: its configuration, times alone, concurrent and serial, "   \
    "and the C3 metrics")

// ---------------------------------------------------------------------------------------------
// Generated row structs.
// ---------------------------------------------------------------------------------------------
#define C3_ROW_FIELD(name, type, sql, doc) type name{};
#define C3_ROW_STRUCT(sqlname, Row, COLS, doc) \
  struct Row {                                 \
    COLS(C3_ROW_FIELD)                         \
  };
C3_TABLES(C3_ROW_STRUCT)
#undef C3_ROW_STRUCT
#undef C3_ROW_FIELD

// ---------------------------------------------------------------------------------------------
// Schema description, for DDL, docs and validation.
// ---------------------------------------------------------------------------------------------
struct ColumnDesc {
  std::string_view name;
  std::string_view sql_type;  // includes constraints, e.g. "INTEGER NOT NULL"
  std::string_view doc;
};

struct TableDesc {
  std::string_view name;
  std::string_view doc;
  std::span<const ColumnDesc> columns;
};

struct ViewDesc {
  std::string_view name;
  std::string_view doc;
  std::string_view select_sql;
  std::span<const ColumnDesc> columns;  // sql_type is the type the view yields
};

struct IndexDesc {
  std::string_view name;
  std::string_view table;
  std::string_view columns;
};

std::span<const TableDesc> tables();
std::span<const ViewDesc> views();
std::span<const IndexDesc> indexes();

// CREATE TABLE IF NOT EXISTS statement for one table (a TEMP table when `temp`).
std::string create_table_sql(const TableDesc& t, bool temp);
// CREATE statements for every table and view (indexes come separately; the writer creates them
// when it closes so that inserts stay fast).
std::string create_tables_sql();

// What each schema version added. Readers migrate older files on open (the file itself is never
// modified), on their read-only connection:
//  - tables added after the file's version appear as empty TEMP tables, so every query of this
//    build runs on it unchanged;
//  - tables whose columns changed (`rebuilt_tables`) appear as TEMP tables of this build's
//    columns that shadow the file's (SQLite looks in temp first): the file's rows are copied and
//    the new columns filled from what the older version stored (migrate.h).
struct Migration {
  int to_version;
  std::string_view what;
  std::span<const std::string_view> new_tables;
  std::span<const std::string_view> rebuilt_tables = {};
};
std::span<const Migration> migrations();
// SQL creating the tables a version-`from` file lacks (TEMP tables when `temp`).
std::string migration_sql(int from_version, bool temp);
std::string create_views_sql();
std::string create_indexes_sql();

// docs/schema.md, generated from the declarations above and the collector's counter list.
std::string schema_markdown();

// Table descriptor for a row type, used by the writer to build its INSERT statements.
template <class Row>
const TableDesc& table_of();

#define C3_DECLARE_TABLE_OF(sqlname, Row, COLS, doc) \
  template <>                                        \
  const TableDesc& table_of<Row>();
C3_TABLES(C3_DECLARE_TABLE_OF)
#undef C3_DECLARE_TABLE_OF

// Counters the collector writes into `stats`, with their meaning (documented in schema.md).
struct CounterDesc {
  std::string_view name;
  std::string_view doc;
};
std::span<const CounterDesc> known_counters();

}  // namespace c3::tracedb
