-- reads: classified, interval_islands
-- creates: -
-- Attributed kernels whose name matches the RE2 pattern $pattern: count, sum, and the sum
-- over devices of each device's union (GPU-seconds, for per-GPU rates of user figures).
WITH hit AS (
    SELECT {'occurrence': occurrence, 'device_id': device_id} AS grp, start_ns, end_ns
    FROM classified
    WHERE regexp_matches(name, $pattern)
)
SELECT CAST(coalesce(sum(interval_count), 0) AS BIGINT) AS kernel_count,
       CAST(coalesce(sum(sum_ns), 0) AS BIGINT) AS sum_ns,
       CAST(coalesce(sum(end_ns - start_ns), 0) AS BIGINT) AS device_union_ns
FROM interval_islands('hit');
