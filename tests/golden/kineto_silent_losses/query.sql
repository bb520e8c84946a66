SELECT name, start_ns, end_ns FROM gpu_activity ORDER BY start_ns;
SELECT name, value, detail FROM stats ORDER BY name;
