-- reads: window_unions
-- creates: -
-- Per device and CUDA stream (window_unions.sql's `stream` groups of kernels, k1 = 1; k2 the device, k3 the
-- stream): kernel count, summed duration, and the union (the time at least one of the stream's kernels ran).
-- Busiest stream first; -1 keys are back to NULL.
SELECT nullif(k2, -1) AS device_id, nullif(k3, -1) AS stream_id, CAST(interval_count AS BIGINT) AS kernel_count,
       sum_ns, union_ns
FROM window_unions
WHERE scope = 'stream' AND k1 = 1
ORDER BY union_ns DESC, k2, k3;
