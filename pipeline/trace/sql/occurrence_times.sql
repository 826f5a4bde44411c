-- reads: selected_ranges, kernel_union
-- creates: -
-- One row per selected occurrence (SEMANTICS §5), integer nanoseconds throughout:
-- cpu range = longest range among processes; wall = envelope of the ranges and the
-- kernels they launched, max(range end, last kernel end) - min(range start).
WITH r AS (
    SELECT occurrence,
           count(*) AS processes,
           min(start_ns) AS start_ns,
           max(end_ns) AS range_end_ns,
           max(end_ns - start_ns) AS cpu_range_ns,
           list(pid ORDER BY pid) AS pids
    FROM selected_ranges
    GROUP BY occurrence
)
SELECT
    r.occurrence,
    r.processes,
    r.pids,
    r.start_ns,
    r.cpu_range_ns,
    greatest(r.range_end_ns, coalesce(u.last_end_ns, r.range_end_ns)) - r.start_ns AS wall_ns,
    coalesce(u.sum_ns, 0) AS kernel_sum_ns,
    coalesce(u.union_ns, 0) AS kernel_union_ns,
    coalesce(u.kernel_count, 0) AS kernel_count
FROM r
LEFT JOIN kernel_union AS u
       ON u.occurrence = r.occurrence AND u.device_id IS NULL
ORDER BY r.occurrence;
