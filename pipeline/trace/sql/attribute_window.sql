-- reads: range_buckets, kernels, overlapping_ranges
-- creates: attributed, launched
-- `window` attribution (no runtime table needed): every kernel of the range's process
-- that overlaps the range, clipped to it. A kernel without a process id is the window's
-- process's only when the window holds one process; with several, nothing says whose it is and
-- giving it to each would count it once per rank, so it is left out (build_window refuses an
-- export whose kernel table has no globalPid column and whose region spans several processes).
-- overlapping_ranges (macros.sql) pairs kernels and ranges through time buckets: linear in ranges.
CREATE OR REPLACE TEMP TABLE attributed AS
SELECT
    occurrence,
    range_pid AS global_pid,
    device_id,
    stream_id,
    correlation_id,
    name_id,
    greatest(start_ns, range_start_ns) AS start_ns,
    least(end_ns, range_end_ns) AS end_ns,
    graph_id,
    detail_id,
    CAST(NULL AS BIGINT) AS launch_ns,      -- no launch placed it (operator_work.sql)
    CAST(NULL AS BIGINT) AS launch_tid,
    CAST(NULL AS UBIGINT) AS comm_key        -- no launch: no NCCL call known to have made it
FROM overlapping_ranges(kernels)
WHERE global_pid = range_pid
   OR (global_pid IS NULL AND (SELECT count(DISTINCT global_pid) FROM range_buckets) = 1);

-- No launch keys in window mode: attribute_memops.sql then uses the window rule too.
CREATE OR REPLACE TEMP TABLE launched AS
SELECT CAST(NULL AS BIGINT) AS occurrence, CAST(NULL AS BIGINT) AS global_pid,
       CAST(NULL AS BIGINT) AS correlation_id
WHERE false;
