-- Per kernel class over the selected occurrences: count, sum of durations, union across
-- all devices ("some GPU ran this class", SEMANTICS §5) and the sum over devices of each
-- device's own union (GPU-seconds of this class, used for per-GPU rates).
-- Unions per occurrence (occurrences do not overlap in time for one process, but ranks'
-- occurrences may touch), by the island rule of kernel_union.sql.
WITH scoped AS (
    SELECT occurrence, class, 'all' AS scope, CAST(-1 AS BIGINT) AS device_id, start_ns, end_ns
    FROM classified
    UNION ALL
    SELECT occurrence, class, 'device', coalesce(device_id, -1), start_ns, end_ns
    FROM classified
),
marked AS (
    SELECT *,
           max(end_ns) OVER (PARTITION BY occurrence, class, scope, device_id ORDER BY start_ns, end_ns
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM scoped
),
islands AS (
    SELECT *,
           sum(CASE WHEN prev_end_ns IS NULL OR start_ns > prev_end_ns THEN 1 ELSE 0 END)
               OVER (PARTITION BY occurrence, class, scope, device_id ORDER BY start_ns, end_ns
                     ROWS UNBOUNDED PRECEDING) AS island
    FROM marked
),
merged AS (
    SELECT class, scope, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
           sum(end_ns - start_ns) AS sum_ns, count(*) AS kernel_count
    FROM islands
    GROUP BY occurrence, class, scope, device_id, island
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
