-- reads: selected_ranges, attributed
-- creates: -
-- Per process (rank) and occurrence: its own range, the end of the kernels it launched,
-- and its step period (start of its next matching range minus this one's start).
WITH k AS (
    SELECT occurrence, global_pid, max(end_ns) AS last_end_ns, count(*) AS kernel_count
    FROM attributed
    GROUP BY occurrence, global_pid
)
SELECT
    r.occurrence,
    r.pid,
    r.global_pid,
    r.start_ns,
    r.end_ns - r.start_ns AS cpu_range_ns,
    greatest(r.end_ns, coalesce(k.last_end_ns, r.end_ns)) - r.start_ns AS wall_ns,
    r.period_ns,
    coalesce(k.kernel_count, 0) AS kernel_count
FROM selected_ranges AS r
LEFT JOIN k ON k.occurrence = r.occurrence AND k.global_pid = r.global_pid
ORDER BY r.occurrence, r.pid, r.global_pid;
