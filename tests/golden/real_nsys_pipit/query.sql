SELECT value AS source FROM meta WHERE key = 'source';
SELECT COUNT(*) AS kernels, SUM(end_ns - start_ns) AS kernel_ns FROM kernel;
SELECT COUNT(*) AS memcpys, SUM(end_ns - start_ns) AS memcpy_ns, SUM(bytes) AS memcpy_bytes FROM memcpy;
SELECT COUNT(*) AS memsets FROM memset;
SELECT value AS nsys_nvtx_events FROM stats WHERE name = 'nsys_nvtx_events';
SELECT name, sm_count FROM device;
SELECT COUNT(*) AS gpu_activities FROM gpu_activity;
