SELECT name, start_ns, end_ns FROM gpu_activity;
