-- reads: pattern_unions
-- creates: -
-- The kernels a user figure names (pattern_unions.sql): count, sum, and the sum over devices
-- of each device's union (GPU-seconds, for per-GPU rates of user figures).
SELECT CAST(coalesce(sum(interval_count), 0) AS BIGINT) AS kernel_count,
       CAST(coalesce(sum(sum_ns), 0) AS BIGINT) AS sum_ns,
       CAST(coalesce(sum(union_ns), 0) AS BIGINT) AS device_union_ns
FROM pattern_unions;
