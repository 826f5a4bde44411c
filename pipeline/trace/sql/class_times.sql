-- reads: window_unions, class_ids
-- creates: -
-- Per kernel class over the selected occurrences: count, sum of durations, union across
-- all devices ("some GPU ran this class", docs/figures.md §5) and the sum over devices of each
-- device's own union (GPU-seconds of this class, used for per-GPU rates). Unions are over
-- all selected occurrences at once (docs/figures.md §6: where occurrences overlap, the time
-- counts once); window_unions.sql computes them, memory operations included.
SELECT
    i.class,
    CAST(sum(u.interval_count) FILTER (WHERE u.scope = 'class') AS BIGINT) AS kernel_count,
    CAST(sum(u.sum_ns) FILTER (WHERE u.scope = 'class') AS BIGINT) AS sum_ns,
    CAST(sum(u.union_ns) FILTER (WHERE u.scope = 'class') AS BIGINT) AS union_ns,
    CAST(sum(u.union_ns) FILTER (WHERE u.scope = 'class_device') AS BIGINT) AS device_union_ns
FROM window_unions AS u
JOIN class_ids AS i ON i.class_id = u.k1
WHERE u.scope IN ('class', 'class_device')
GROUP BY i.class
ORDER BY union_ns DESC, i.class;
