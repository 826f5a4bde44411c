-- reads: selected_ranges, launches, kernels
-- creates: launched, attributed, unlaunched
-- Kernels whose launch call started inside a selected range (SEMANTICS §4).
-- The launch is the runtime row with the kernel's correlationId AND the same process:
-- correlationIds repeat across processes. DISTINCT on the launch key removes duplicate
-- launch rows (cudaLaunchKernel and cudaLaunchKernel_v7000 with one correlationId).
-- $same_thread = true gives `thread` attribution (launch on the range's own thread).
-- Scale (issue #7): the envelope of the selected ranges filters the launches. Through the
-- Parquet cache (--cache) the filter reaches the scan, which skips row groups outside it; the
-- SQLite scanner takes no filter, so without the cache every launch and kernel row is read
-- once (the same reads as the benchmark's floor, bench/floor.sql).
-- Linear in ranges too (issue #10: 20,000 occurrences): after nested ranges are folded
-- (region_ranges.sql), a process's selected ranges have increasing starts AND ends, so the
-- ranges holding a launch at t are a run ending at the last range starting at or before t
-- (an ASOF join finds it); the run's other members are the earlier ranges that still reach
-- that range's start (`reach`, empty unless ranges partly overlap). No join on the process
-- alone, which would pair every launch with every range of its process.
-- The launch keys are kept (table `launched`): memory copies and sets are attributed through
-- the same keys (attribute_memops.sql), so the launch table is scanned once per job.
CREATE OR REPLACE TEMP TABLE launched AS
WITH envelope AS (
    SELECT min(start_ns) AS lo, max(end_ns) AS hi FROM selected_ranges
),
envelope_launches AS (
    SELECT * FROM launches
    WHERE start_ns BETWEEN (SELECT lo FROM envelope) AND (SELECT hi FROM envelope)
),
reach AS (
    SELECT s.global_pid, s.occurrence, unnest(range(p.occurrence, s.occurrence + 1)) AS member
    FROM selected_ranges AS s
    ASOF JOIN selected_ranges AS p
      ON p.global_pid = s.global_pid
     AND s.start_ns <= p.end_ns
),
latest AS (
    SELECT l.global_pid, l.global_tid, l.correlation_id, l.start_ns, s.occurrence
    FROM envelope_launches AS l
    ASOF JOIN selected_ranges AS s
      ON l.global_pid = s.global_pid
     AND l.start_ns >= s.start_ns
)
SELECT DISTINCT r.member AS occurrence, l.global_pid, l.correlation_id
FROM latest AS l
JOIN reach AS r ON r.global_pid = l.global_pid AND r.occurrence = l.occurrence
JOIN selected_ranges AS m ON m.global_pid = l.global_pid AND m.occurrence = r.member
WHERE l.start_ns <= m.end_ns
  AND (NOT $same_thread OR l.global_tid = m.global_tid);

-- The kernel table is read once (issue #10): the kernels the selected launches started (wherever
-- they ran) and the kernels overlapping the envelope of the ranges. The first are `attributed`;
-- those of the second that lie inside a range of their own process but were launched by no
-- selected launch are `unlaunched`, the only candidates unattributed.sql looks up in the launch
-- table again (a kernel launched just before its range has a launch row and is not missed).
CREATE OR REPLACE TEMP TABLE window_kernels AS
WITH envelope AS (
    SELECT min(start_ns) AS lo, max(end_ns) AS hi FROM selected_ranges
)
SELECT a.occurrence, k.global_pid, k.device_id, k.name_id, k.correlation_id, k.start_ns, k.end_ns,
       k.graph_id, k.detail_id
FROM kernels AS k
LEFT JOIN launched AS a
  ON k.global_pid = a.global_pid
 AND k.correlation_id = a.correlation_id
WHERE a.occurrence IS NOT NULL
   OR (k.start_ns < (SELECT hi FROM envelope) AND k.end_ns > (SELECT lo FROM envelope));

CREATE OR REPLACE TEMP TABLE unlaunched AS
SELECT s.occurrence, k.global_pid, k.correlation_id,
       least(k.end_ns, s.end_ns) - greatest(k.start_ns, s.start_ns) AS inside_ns
FROM window_kernels AS k
JOIN selected_ranges AS s
  ON k.global_pid = s.global_pid
 AND k.start_ns < s.end_ns
 AND k.end_ns > s.start_ns
WHERE k.occurrence IS NULL;

-- What is left is `attributed`: the table is renamed, not copied (at 8 M kernels a copy held 3.2 M
-- rows twice, beyond DuckDB's memory limit). It keeps the kernels' correlation_id.
DELETE FROM window_kernels WHERE occurrence IS NULL;
DROP TABLE IF EXISTS attributed;
ALTER TABLE window_kernels RENAME TO attributed;

SELECT count(*) AS unlaunched FROM unlaunched;
