-- reads: selected_ranges, launches, kernels
-- creates: launched, attributed
-- Kernels whose launch call started inside a selected range (SEMANTICS §4).
-- The launch is the runtime row with the kernel's correlationId AND the same process:
-- correlationIds repeat across processes. DISTINCT on the launch key removes duplicate
-- launch rows (cudaLaunchKernel and cudaLaunchKernel_v7000 with one correlationId).
-- $same_thread = true gives `thread` attribution (launch on the range's own thread).
-- Scale (issue #7): the envelope of the selected ranges is a constant filter DuckDB pushes
-- into the launch scan (row groups outside it are skipped); the few launches found then
-- filter the kernel scan through the join keys. No kernel row outside the join is kept.
-- The launch keys are kept (table `launched`): memory copies and sets are attributed through
-- the same keys (attribute_memops.sql), so the launch table is scanned once per job.
CREATE OR REPLACE TEMP TABLE launched AS
WITH envelope AS (
    SELECT min(start_ns) AS lo, max(end_ns) AS hi FROM selected_ranges
),
envelope_launches AS (
    SELECT * FROM launches
    WHERE start_ns BETWEEN (SELECT lo FROM envelope) AND (SELECT hi FROM envelope)
)
SELECT DISTINCT s.occurrence, l.global_pid, l.correlation_id
FROM envelope_launches AS l
JOIN selected_ranges AS s
  ON l.global_pid = s.global_pid
 AND l.start_ns BETWEEN s.start_ns AND s.end_ns
 AND (NOT $same_thread OR l.global_tid = s.global_tid);

CREATE OR REPLACE TEMP TABLE attributed AS
SELECT
    a.occurrence,
    k.global_pid,
    k.device_id,
    k.stream_id,
    k.name_id,
    k.start_ns,
    k.end_ns
FROM kernels AS k
JOIN launched AS a
  ON k.global_pid = a.global_pid
 AND k.correlation_id = a.correlation_id;
