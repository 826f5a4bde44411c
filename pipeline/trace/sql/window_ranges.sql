-- reads: kernels, raw_memcpy, raw_memset, gpu_work
-- creates: gpu_spans, region_ranges
-- A region that is no NVTX range (job region.kind gpu_active or time_window): one synthetic range
-- per process, occurrence 1, so that attribution, unions and every later query read it as they read
-- a selected NVTX range (region_ranges.sql's columns; no thread, no name, no period).
-- GPU work and whose it is: gpu_work.sql (a row without a process id included by its one rule).
-- gpu_spans: per process, its GPU rows' first start, last end, and how many overlap the window:
-- the last statement gives the trace's span, for the error when no process has work in the window,
-- and the windows of no length (a process whose GPU rows all end at or before the first one's start:
-- the trace lost their GPU timestamps), which no figure can be taken over.
CREATE OR REPLACE TEMP TABLE gpu_spans AS
SELECT global_pid, min(start_ns) AS first_ns, max(end_ns) AS last_ns, count(*) AS rows,
       count(*) FILTER (WHERE $start_ns IS NULL OR (start_ns < $end_ns AND end_ns > $start_ns)) AS inside
FROM gpu_work(kernels)
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
