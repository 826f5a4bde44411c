-- reads: classified, interval_islands
-- creates: -
-- Per kernel class over the selected occurrences: count, sum of durations, union across
-- all devices ("some GPU ran this class", SEMANTICS §5) and the sum over devices of each
-- device's own union (GPU-seconds of this class, used for per-GPU rates).
-- Unions per occurrence (occurrences do not overlap in time for one process, but ranks'
-- occurrences may touch), by the island rule of interval_islands (views.sql).
WITH scoped AS (
    SELECT {'occurrence': occurrence, 'class': class, 'scope': 'all', 'device_id': CAST(-1 AS BIGINT)} AS grp,
           start_ns, end_ns
    FROM classified
    UNION ALL
    SELECT {'occurrence': occurrence, 'class': class, 'scope': 'device', 'device_id': coalesce(device_id, -1)},
           start_ns, end_ns
    FROM classified
),
merged AS (
    SELECT grp.class AS class, grp.scope AS scope, start_ns, end_ns, sum_ns, interval_count AS kernel_count
    FROM interval_islands('scoped')
)
SELECT
    class,
    CAST(sum(kernel_count) FILTER (WHERE scope = 'all') AS BIGINT) AS kernel_count,
    CAST(sum(sum_ns) FILTER (WHERE scope = 'all') AS BIGINT) AS sum_ns,
    CAST(sum(end_ns - start_ns) FILTER (WHERE scope = 'all') AS BIGINT) AS union_ns,
    CAST(sum(end_ns - start_ns) FILTER (WHERE scope = 'device') AS BIGINT) AS device_union_ns
FROM merged
GROUP BY class
ORDER BY union_ns DESC, class;
