SELECT kind, name, start_ns, end_ns FROM gpu_activity ORDER BY start_ns;
SELECT 'api_call' AS tbl, COUNT(*) AS n FROM api_call UNION ALL
SELECT 'nvtx_range', COUNT(*) FROM nvtx_range;
SELECT name, value, detail FROM stats ORDER BY name;
