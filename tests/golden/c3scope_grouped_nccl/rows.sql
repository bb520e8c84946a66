-- One process driving two GPUs from one thread, as a single-process multi-GPU job (and c3bench's
-- sim backend) does, written as c3scope rows into the empty trace `c3scope import` made of
-- empty.json. In one step: a grouped AllReduce over both GPUs (GPU 1's kernel starts after
-- GPU 0's), a grouped Send/Recv ring shift (GPU 0's kernel starts after GPU 1's), a lone
-- AllReduce on GPU 0, a call whose stream did not resolve (on GPU 1), and a GEMM per GPU. Every
-- launch has its API call; a group's calls share one external id (custom0), as NCCL's do.
DELETE FROM process;
DELETE FROM stats;
UPDATE meta SET value = 'handmade' WHERE key = 'source';
DELETE FROM meta WHERE key LIKE 'kineto%';
INSERT INTO process (id, pid, host, command_line, start_ns, trace_clock, anchor_start_trace_ns,
                     anchor_start_realtime_ns, anchor_start_monotonic_ns)
  VALUES (1, 777, 'node', 'job', 0, 'CLOCK_MONOTONIC', 0, 0, 0);
INSERT INTO device (process_id, device_id, name, sm_count, cc_major, cc_minor, memory_bytes,
                    warp_size, max_threads_per_sm, max_blocks_per_sm, max_registers_per_sm,
                    max_shared_memory_per_sm, max_threads_per_block, max_registers_per_block,
                    max_shared_memory_per_block)
  VALUES (1, 0, 'GPU', 132, 9, 0, 0, 32, 2048, 32, 65536, 233472, 1024, 65536, 232448),
         (1, 1, 'GPU', 132, 9, 0, 0, 32, 2048, 32, 65536, 233472, 1024, 65536, 232448);
INSERT INTO stream (process_id, device_id, stream_id) VALUES (1, 0, 13), (1, 0, 7), (1, 1, 15), (1, 1, 8);
INSERT INTO string (id, value) VALUES (1, 'cudaLaunchKernel'), (2, 'gemm'),
  (3, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'), (4, 'ncclDevKernel_SendRecv');
-- The launches: (correlation id, host time) -> kernel (device, stream, start, end, name).
INSERT INTO api_call (process_id, thread_id, api, cbid, name_id, correlation_id, start_ns, end_ns, return_value)
  VALUES (1, 4242, 'runtime', 211, 1, 1, 1000100, 1000105, 0),
         (1, 4242, 'runtime', 211, 1, 2, 1000110, 1000115, 0),
         (1, 4242, 'runtime', 211, 1, 3, 1000160, 1000165, 0),
         (1, 4242, 'runtime', 211, 1, 4, 1000170, 1000175, 0),
         (1, 4242, 'runtime', 211, 1, 5, 1000190, 1000195, 0),
         (1, 4242, 'runtime', 211, 1, 6, 1000210, 1000215, 0),
         (1, 4242, 'runtime', 211, 1, 7, 1000220, 1000225, 0),
         (1, 4242, 'runtime', 211, 1, 8, 1000230, 1000235, 0);
INSERT INTO kernel (process_id, device_id, stream_id, correlation_id, start_ns, end_ns, name_id,
                    grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread,
                    static_shared_bytes, dynamic_shared_bytes, launch_type)
  VALUES (1, 0, 13, 1, 10001000, 10009000, 3, 1, 1, 1, 1, 1, 1, 32, 0, 0, 'regular'),
         (1, 1, 15, 2, 10004000, 10009000, 3, 1, 1, 1, 1, 1, 1, 32, 0, 0, 'regular'),
         (1, 0, 13, 3, 10014000, 10020000, 4, 1, 1, 1, 1, 1, 1, 32, 0, 0, 'regular'),
         (1, 1, 15, 4, 10010000, 10020000, 4, 1, 1, 1, 1, 1, 1, 32, 0, 0, 'regular'),
         (1, 0, 13, 5, 10021000, 10022000, 3, 1, 1, 1, 1, 1, 1, 32, 0, 0, 'regular'),
         (1, 1, 8, 6, 10023000, 10024000, 3, 1, 1, 1, 1, 1, 1, 32, 0, 0, 'regular'),
         (1, 0, 7, 7, 10000000, 10030000, 2, 1, 1, 1, 1, 1, 1, 32, 0, 0, 'regular'),
         (1, 1, 8, 8, 10000500, 10002000, 2, 1, 1, 1, 1, 1, 1, 32, 0, 0, 'regular');
INSERT INTO external_correlation (process_id, external_kind, external_id, correlation_id)
  VALUES (1, 'custom0', 1, 1), (1, 'custom0', 1, 2), (1, 'custom0', 2, 3), (1, 'custom0', 2, 4),
         (1, 'custom0', 3, 5), (1, 'custom0', 4, 6);
-- The NCCL calls: the group's calls first, its launches at ncclGroupEnd.
INSERT INTO collective (process_id, thread_id, device_id, stream_id, stream_handle, comm_id,
                        comm_handle, rank, nranks, op, datatype, count, bytes, peer, seq,
                        group_id, external_id, host_start_ns, host_end_ns, result)
  VALUES (1, 4242, 0, 13, 4096, 'comm', 8192, 0, 2, 'AllReduce', 'float32', 1024, 4096, NULL, 0, 0, 1, 1000000, 1000003, 0),
         (1, 4242, 1, 15, 4097, 'comm', 8193, 1, 2, 'AllReduce', 'float32', 1024, 4096, NULL, 0, 0, 1, 1000010, 1000013, 0),
         (1, 4242, 0, 13, 4096, 'comm', 8192, 0, 2, 'Send', 'float32', 1024, 4096, 1, 1, 1, 2, 1000120, 1000123, 0),
         (1, 4242, 0, 13, 4096, 'comm', 8192, 0, 2, 'Recv', 'float32', 1024, 4096, 1, 2, 1, 2, 1000130, 1000133, 0),
         (1, 4242, 1, 15, 4097, 'comm', 8193, 1, 2, 'Send', 'float32', 1024, 4096, 0, 1, 1, 2, 1000140, 1000143, 0),
         (1, 4242, 1, 15, 4097, 'comm', 8193, 1, 2, 'Recv', 'float32', 1024, 4096, 0, 2, 1, 2, 1000150, 1000153, 0),
         (1, 4242, 0, 13, 4096, 'comm', 8192, 0, 2, 'AllReduce', 'float32', 1024, 4096, NULL, 3, NULL, 3, 1000180, 1000183, 0),
         (1, 4242, 1, NULL, 4097, 'comm', 8193, 1, 2, 'AllReduce', 'float32', 1024, 4096, NULL, 3, 2, 4, 1000200, 1000203, 0);
