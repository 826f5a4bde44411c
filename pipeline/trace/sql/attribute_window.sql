-- reads: selected_ranges, kernels
-- creates: attributed, launched
-- `window` attribution (no runtime table needed): every kernel of the range's process
-- that overlaps the range, clipped to it. Kernels without a process id count for every
-- process's window, since nothing in the export says whose they are.
-- The envelope of the selected ranges is pushed into the kernel scan as a constant filter.
CREATE OR REPLACE TEMP TABLE attributed AS
WITH envelope AS (
    SELECT min(start_ns) AS lo, max(end_ns) AS hi FROM selected_ranges
)
SELECT
    s.occurrence,
    k.global_pid,
    k.device_id,
    k.name_id,
    greatest(k.start_ns, s.start_ns) AS start_ns,
    least(k.end_ns, s.end_ns) AS end_ns,
    k.graph_id,
    k.detail_id
FROM kernels AS k
JOIN selected_ranges AS s
  ON (k.global_pid = s.global_pid OR k.global_pid IS NULL)
 AND k.start_ns < s.end_ns
 AND k.end_ns > s.start_ns
WHERE k.start_ns < (SELECT hi FROM envelope) AND k.end_ns > (SELECT lo FROM envelope);

-- No launch keys in window mode: attribute_memops.sql then uses the window rule too.
CREATE OR REPLACE TEMP TABLE launched AS
SELECT CAST(NULL AS BIGINT) AS occurrence, CAST(NULL AS BIGINT) AS global_pid,
       CAST(NULL AS BIGINT) AS correlation_id
WHERE false;
