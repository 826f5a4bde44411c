-- reads: kernel_rows, ranges, raw_processes
-- creates: -
-- Processes that launched kernels or emitted NVTX ranges, with their names when exported
-- (kernel_rows: inspect_read.sql).
WITH active AS (
    SELECT global_pid, count(*) AS kernels, 0 AS ranges FROM kernel_rows GROUP BY global_pid
    UNION ALL
    SELECT global_pid, 0, count(*) FROM ranges GROUP BY global_pid
)
SELECT
    a.global_pid,
    (a.global_pid >> 24) & 16777215 AS pid,
    any_value(p.name) AS name,
    sum(a.kernels) AS kernels,
    sum(a.ranges) AS ranges
FROM active AS a
LEFT JOIN raw_processes AS p ON p.globalPid = a.global_pid
WHERE a.global_pid IS NOT NULL
GROUP BY a.global_pid
ORDER BY pid, a.global_pid;
