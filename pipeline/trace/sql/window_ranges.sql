-- reads: kernels, raw_memcpy, raw_memset
-- creates: gpu_spans, region_ranges
-- A region that is no NVTX range (job region.kind gpu_active or time_window): one synthetic range
-- per process, occurrence 1, so that attribution, unions and every later query read it as they read
-- a selected NVTX range (region_ranges.sql's columns; no thread, no name, no period).
-- GPU work is every kernel row, CUDA graph launch row (views.sql `kernels`) and memory copy or set.
-- $start_ns, $end_ns NULL (gpu_active): the process's GPU-active window, from its first GPU row's start
-- to its last one's end. Given (time_window): that window on the export's clock (ns after the
-- capture's start), for each process with a GPU row overlapping it (start before its end, end after
-- its start: overlapping_ranges' rule, macros.sql, which then pairs the rows with the range).
-- A row without a process id (an export whose tables lack globalPid) is the process's when the
-- trace's rows name exactly one process, and makes process key 0 (pid 0) when they name none; with
-- several, nothing says whose it is and it is in no window, as window attribution leaves it out
-- (attribute_window.sql).
-- gpu_spans: per process, its GPU rows' first start, last end, and how many overlap the window:
-- the last statement gives the trace's span, for the error when no process has work in the window,
-- and the windows of no length (a process whose GPU rows all end at or before the first one's start:
-- the trace lost their GPU timestamps), which no figure can be taken over.
CREATE OR REPLACE TEMP TABLE gpu_spans AS
WITH work AS (
    SELECT global_pid, start_ns, end_ns FROM kernels
    UNION ALL
    SELECT globalPid, start, "end" FROM raw_memcpy
    UNION ALL
    SELECT globalPid, start, "end" FROM raw_memset
),
named AS (
    SELECT count(DISTINCT global_pid) AS processes, min(global_pid) AS only_pid FROM work
),
owned AS (
    SELECT CASE WHEN w.global_pid IS NOT NULL THEN w.global_pid
                WHEN n.processes = 1 THEN n.only_pid
                WHEN n.processes = 0 THEN 0 END AS global_pid,
           w.start_ns, w.end_ns
    FROM work AS w, named AS n
)
SELECT global_pid, min(start_ns) AS first_ns, max(end_ns) AS last_ns, count(*) AS rows,
       count(*) FILTER (WHERE $start_ns IS NULL OR (start_ns < $end_ns AND end_ns > $start_ns)) AS inside
FROM owned
WHERE global_pid IS NOT NULL
GROUP BY global_pid;

CREATE OR REPLACE TEMP TABLE region_ranges AS
SELECT 1 AS occurrence,
       global_pid,
       (global_pid >> 24) & 16777215 AS pid,
       CAST(NULL AS BIGINT) AS global_tid,
       coalesce($start_ns, first_ns) AS start_ns,
       coalesce($end_ns, last_ns) AS end_ns,
       CAST(NULL AS VARCHAR) AS name,
       CAST(NULL AS BIGINT) AS period_ns
FROM gpu_spans
WHERE inside > 0
ORDER BY global_pid;

SELECT min(first_ns) AS first_ns, max(last_ns) AS last_ns, coalesce(sum(rows), 0) AS rows,
       (SELECT count(*) FROM region_ranges WHERE end_ns <= start_ns) AS without_length
FROM gpu_spans;
