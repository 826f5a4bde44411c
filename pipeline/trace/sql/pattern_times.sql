-- reads: classified, interval_union
-- creates: -
-- Attributed kernels whose name matches the RE2 pattern $pattern: count, sum, and the sum
-- over devices of each device's union over all selected occurrences (GPU-seconds, for
-- per-GPU rates of user figures; overlapping occurrences count once, SEMANTICS §6).
WITH hit AS (
    SELECT 'device' AS scope, device_id AS k1, CAST(NULL AS BIGINT) AS k2, start_ns, end_ns
    FROM classified
    WHERE regexp_matches(name, $pattern)
)
SELECT CAST(coalesce(sum(interval_count), 0) AS BIGINT) AS kernel_count,
       CAST(coalesce(sum(sum_ns), 0) AS BIGINT) AS sum_ns,
       CAST(coalesce(sum(union_ns), 0) AS BIGINT) AS device_union_ns
FROM interval_union('hit');
