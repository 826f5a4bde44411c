-- reads: range_buckets, kernels, overlapping_ranges
-- creates: attributed, launched
-- `window` attribution (no runtime table needed): every kernel of the range's process
-- that overlaps the range, clipped to it. Kernels without a process id count for every
-- process's window, since nothing in the export says whose they are. overlapping_ranges
-- (macros.sql) pairs kernels and ranges through time buckets: linear in ranges.
CREATE OR REPLACE TEMP TABLE attributed AS
SELECT
    occurrence,
    global_pid,
    device_id,
    name_id,
    greatest(start_ns, range_start_ns) AS start_ns,
    least(end_ns, range_end_ns) AS end_ns,
    graph_id,
    detail_id
FROM overlapping_ranges(kernels)
WHERE global_pid = range_pid OR global_pid IS NULL;

-- No launch keys in window mode: attribute_memops.sql then uses the window rule too.
CREATE OR REPLACE TEMP TABLE launched AS
SELECT CAST(NULL AS BIGINT) AS occurrence, CAST(NULL AS BIGINT) AS global_pid,
       CAST(NULL AS BIGINT) AS correlation_id
WHERE false;
