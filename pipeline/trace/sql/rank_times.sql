-- reads: selected_ranges, window_unions
-- creates: -
-- Per process (rank) and occurrence: its own range, the end of the kernels it launched,
-- and its step period (start of its next matching range minus this one's start). Its kernels'
-- last end and count come with its union (window_unions.sql, scope 'rank').
WITH k AS (
    SELECT k2 AS occurrence, k3 AS global_pid, last_end_ns, interval_count AS kernel_count
    FROM window_unions
    WHERE scope = 'rank' AND k1 = 1
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
