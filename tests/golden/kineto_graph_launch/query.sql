SELECT id, op, bytes, external_id, host_start_ns, host_end_ns FROM collective ORDER BY id;
SELECT * FROM external_correlation ORDER BY id;
SELECT * FROM collective_gpu ORDER BY collective_id;
SELECT id, correlation_id, start_ns FROM kernel ORDER BY id;
