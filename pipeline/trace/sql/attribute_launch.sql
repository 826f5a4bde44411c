-- reads: selected_ranges, range_buckets, launches, kernels, overlapping_ranges, nccl_ranges
-- creates: launched, comm_launches, attributed, unlaunched, negative_kernels
-- Kernels whose launch call started inside a selected range (docs/figures.md §4).
-- The launch is the runtime row with the kernel's correlationId AND the same process:
-- correlationIds repeat across processes. DISTINCT on the launch key removes duplicate
-- launch rows (cudaLaunchKernel and cudaLaunchKernel_v7000 with one correlationId).
-- $same_thread = true gives `thread` attribution (launch on the range's own thread).
-- Scale (issue #7): the envelope of the selected ranges filters the launches. Through the
-- Parquet cache (--cache) the filter reaches the scan, which skips row groups outside it; the
-- SQLite scanner takes no filter, so without the cache every launch and kernel row is read
-- once (the same reads as the benchmark's floor, bench/floor.sql).
-- Linear in ranges too (issue #10: 20,000 occurrences): a launch meets only the ranges of its
-- process listed under its own time bucket (range_buckets, select_occurrences.sql) and keeps
-- those it lies in: all ranges holding it, partly overlapping ones included (ends inclusive).
-- The launch keys are kept (table `launched`): memory copies and sets are attributed through
-- the same keys (attribute_memops.sql), so the launch table is scanned once per job. With each key, the
-- launch call's start and thread (the first row's, when one launch is recorded twice): counted FLOPs place
-- a kernel in the operator range that launched it (operator_work.sql).
CREATE OR REPLACE TEMP TABLE launched AS
WITH envelope AS (
    SELECT min(start_ns) AS lo, max(end_ns) AS hi, any_value(width_ns) AS width_ns FROM range_buckets
),
envelope_launches AS (
    SELECT l.global_pid, l.global_tid, l.correlation_id, l.start_ns, l.start_ns // e.width_ns AS bucket
    FROM launches AS l, envelope AS e
    WHERE l.start_ns BETWEEN e.lo AND e.hi
)
SELECT r.occurrence, l.global_pid, l.correlation_id, min(l.start_ns) AS launch_ns,
       arg_min(l.global_tid, l.start_ns) AS launch_tid
FROM envelope_launches AS l
JOIN range_buckets AS r
  ON r.global_pid = l.global_pid
 AND r.bucket = l.bucket
 AND l.start_ns BETWEEN r.start_ns AND r.end_ns
WHERE NOT $same_thread OR l.global_tid = r.global_tid
GROUP BY r.occurrence, l.global_pid, l.correlation_id;

-- The communicator of each launch made inside an NCCL call (nccl_ranges.sql): the last NCCL range that began on
-- the launch's own thread at or before it, when the launch lies inside it (NCCL's ranges do not nest; a launch
-- in ncclGroupEnd, which names no communicator, gets none). Only launches on a thread with such ranges are
-- looked at, one ASOF join, so a trace without NCCL ranges costs a scan of `launched`.
CREATE OR REPLACE TEMP TABLE comm_launches AS
WITH candidates AS (
    SELECT DISTINCT global_pid, correlation_id, launch_ns, launch_tid
    FROM launched
    WHERE launch_tid IN (SELECT global_tid FROM nccl_ranges WHERE comm_key IS NOT NULL)
)
SELECT c.global_pid, c.correlation_id, r.comm_key
FROM candidates AS c
ASOF JOIN nccl_ranges AS r
  ON r.global_tid = c.launch_tid AND c.launch_ns >= r.start_ns
WHERE c.launch_ns <= r.end_ns AND r.comm_key IS NOT NULL;

-- The kernel table is read once (issue #10): the kernels the selected launches started (wherever
-- they ran) and the kernels overlapping the envelope of the ranges. The first are `attributed`;
-- those of the second that lie inside a range of their own process but were launched by no
-- selected launch are `unlaunched`, the only candidates unattributed.sql looks up in the launch
-- table again (a kernel launched just before its range has a launch row and is not missed).
CREATE OR REPLACE TEMP TABLE window_kernels AS
WITH envelope AS (
    SELECT min(start_ns) AS lo, max(end_ns) AS hi FROM selected_ranges
)
SELECT a.occurrence, k.global_pid, k.device_id, k.stream_id, k.name_id, k.correlation_id, k.start_ns, k.end_ns,
       k.graph_id, k.detail_id, a.launch_ns, a.launch_tid, m.comm_key
FROM kernels AS k
LEFT JOIN launched AS a
  ON k.global_pid = a.global_pid
 AND k.correlation_id = a.correlation_id
LEFT JOIN comm_launches AS m
  ON m.global_pid = a.global_pid
 AND m.correlation_id = a.correlation_id
WHERE a.occurrence IS NOT NULL
   OR (k.start_ns < (SELECT hi FROM envelope) AND k.end_ns > (SELECT lo FROM envelope));

-- Each of those kernels with the ranges of its own process it overlaps (overlapping_ranges, macros.sql:
-- linear in ranges).
CREATE OR REPLACE TEMP TABLE unlaunched AS
WITH candidates AS (
    SELECT global_pid, correlation_id, start_ns, end_ns FROM window_kernels WHERE occurrence IS NULL
)
SELECT occurrence, global_pid, correlation_id,
       least(end_ns, range_end_ns) - greatest(start_ns, range_start_ns) AS inside_ns
FROM overlapping_ranges(candidates)
WHERE global_pid = range_pid;

-- A kernel whose process id is negative has no process (an id packs host and pid, docs/figures.md §2): no launch
-- row can match it and no range is its process's, so it would be dropped here without a word. The window's
-- kernels are in memory already; the first such row is kept for measure.build_window's refusal (exit 4).
CREATE OR REPLACE TEMP TABLE negative_kernels AS
SELECT start_ns, device_id, correlation_id, global_pid, graph_id
FROM window_kernels
WHERE global_pid < 0
ORDER BY start_ns, device_id
LIMIT 1;

-- What is left is `attributed`: the table is renamed, not copied (at 8 M kernels a copy held 3.2 M
-- rows twice, beyond DuckDB's memory limit). It keeps the kernels' correlation_id and stream_id
-- (duplicate_kernels.sql tells a row recorded twice from two kernels of one launch by them), and comm_key,
-- its launch's communicator (NULL: none known).
DELETE FROM window_kernels WHERE occurrence IS NULL;
DROP TABLE IF EXISTS attributed;
ALTER TABLE window_kernels RENAME TO attributed;

SELECT (SELECT count(*) FROM unlaunched) AS unlaunched, n.start_ns AS negative_start_ns,
       n.device_id AS negative_device_id, n.correlation_id AS negative_correlation_id,
       n.global_pid AS negative_global_pid, n.graph_id IS NOT NULL AS negative_is_graph
FROM (SELECT 1) AS one
LEFT JOIN negative_kernels AS n ON true;
