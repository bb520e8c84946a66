SELECT key, value FROM meta WHERE key NOT IN ('c3scope_version', 'created_at') ORDER BY key;
SELECT * FROM process;
SELECT * FROM device;
SELECT * FROM stream;
SELECT * FROM gpu_activity ORDER BY start_ns;
SELECT k.id, s.value AS name, m.value AS mangled, k.context_id, k.correlation_id, k.grid_x,
       k.block_x, k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes, k.grid_id
  FROM kernel k JOIN string s ON s.id = k.name_id LEFT JOIN string m ON m.id = k.mangled_name_id
  ORDER BY k.id;
SELECT * FROM memcpy;
SELECT * FROM memset;
SELECT a.id, s.value AS name, a.thread_id, a.correlation_id, a.start_ns, a.end_ns, a.api
  FROM api_call a JOIN string s ON s.id = a.name_id ORDER BY a.id;
SELECT * FROM nvtx_range ORDER BY id;
SELECT * FROM stats ORDER BY name;
