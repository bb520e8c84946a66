SELECT key, value FROM meta WHERE key NOT IN ('c3scope_version', 'created_at') ORDER BY key;
SELECT * FROM process;
SELECT * FROM device;
SELECT * FROM stream;
SELECT * FROM gpu_activity ORDER BY start_ns;
SELECT k.id, s.value AS name, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
       k.launch_type
  FROM kernel k JOIN string s ON s.id = k.name_id ORDER BY k.id;
SELECT * FROM memcpy;
SELECT * FROM collective;
SELECT * FROM external_correlation;
SELECT * FROM collective_gpu;
SELECT a.id, s.value AS name, a.thread_id, a.correlation_id, a.start_ns, a.end_ns
  FROM api_call a JOIN string s ON s.id = a.name_id;
SELECT * FROM nvtx_range;
SELECT * FROM stats;
