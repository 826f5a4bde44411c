-- reads: classified, interval_union
-- creates: -
-- Per kernel class over the selected occurrences: count, sum of durations, union across
-- all devices ("some GPU ran this class", SEMANTICS §5) and the sum over devices of each
-- device's own union (GPU-seconds of this class, used for per-GPU rates). Unions are over
-- all selected occurrences at once (SEMANTICS §6: where occurrences overlap, the time
-- counts once), both groupings in one pass of interval_union (macros.sql).
WITH scoped AS (
    SELECT 'all' AS scope, class AS k1, CAST(-1 AS BIGINT) AS k2, start_ns, end_ns
    FROM classified
    UNION ALL
    SELECT 'device', class, coalesce(device_id, -1), start_ns, end_ns
    FROM classified
)
SELECT
    k1 AS class,
    CAST(sum(interval_count) FILTER (WHERE scope = 'all') AS BIGINT) AS kernel_count,
    CAST(sum(sum_ns) FILTER (WHERE scope = 'all') AS BIGINT) AS sum_ns,
    CAST(sum(union_ns) FILTER (WHERE scope = 'all') AS BIGINT) AS union_ns,
    CAST(sum(union_ns) FILTER (WHERE scope = 'device') AS BIGINT) AS device_union_ns
FROM interval_union('scoped')
GROUP BY k1
ORDER BY union_ns DESC, class;
