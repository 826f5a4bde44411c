-- reads: stream_unions
-- creates: -
-- Per device and CUDA stream (stream_unions.sql): kernel count, summed duration, and the union (the
-- time at least one of the stream's kernels ran). Busiest stream first; -1 keys are back to NULL.
SELECT nullif(k1, -1) AS device_id, nullif(k2, -1) AS stream_id, CAST(interval_count AS BIGINT) AS kernel_count,
       sum_ns, union_ns
FROM stream_unions
WHERE scope = 'stream'
ORDER BY union_ns DESC, k1, k2;
